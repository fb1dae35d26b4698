"""What a ``python -m`` program of the project does before its own imports run.

A program's imports take a second or two (numpy, JAX, torch); a Ctrl-C in that time raised a
``KeyboardInterrupt`` no command had caught yet, and Python printed its traceback.
:func:`quiet_interrupt_at_startup` makes it one line (status 130, as the shared runner
ends an interrupted command: :func:`dominoes_env.cli_support.run_command`). It is installed
when the package is imported while Python looks for the module ``-m`` names (``sys.argv[0]``
is ``"-m"`` then), so never in a program that only imports the package.
"""

from __future__ import annotations

import sys


def quiet_interrupt_at_startup() -> None:
    """An uncaught ``KeyboardInterrupt`` is printed as ``error: interrupted`` instead of a
    traceback (Python then ends the process by SIGINT, status 130); every other uncaught
    exception is printed as before."""
    previous = sys.excepthook

    def hook(kind, value, traceback) -> None:
        if isinstance(kind, type) and issubclass(kind, KeyboardInterrupt):
            try:
                print("error: interrupted", file=sys.stderr, flush=True)
            except (OSError, ValueError):  # pragma: no cover - stderr closed
                pass
            return
        previous(kind, value, traceback)

    hook.quiet_interrupt = True  # type: ignore[attr-defined]
    if not getattr(sys.excepthook, "quiet_interrupt", False):
        sys.excepthook = hook


def started_by_python_m() -> bool:
    """Whether this import happens while ``python -m`` looks for the module it runs."""
    return sys.argv[:1] == ["-m"]
