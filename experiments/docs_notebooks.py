"""``make docs-notebooks`` / ``python -m experiments.docs_notebooks``: run the notebooks of
``notebooks/`` on a fresh kernel and store the executed copies, outputs included, in
``docs/notebooks/`` for the documentation site, which shows them as they are (the site build
never runs a notebook, so it takes seconds).

The notebooks in ``notebooks/`` stay committed without outputs; ``tests/test_docs.py`` checks
that every executed copy has the same code as its source, so an edited notebook without a fresh
copy fails the tests (and the message says to run this). Files a notebook writes go to a
temporary directory. Cells tagged ``widget`` (interactive ipywidgets) are kept but not run:
a static page cannot run them.

A cell that fails ends the run with one line naming the notebook, the cell (counting every cell
of the notebook from 1) and the error's last line, exit status 1; its executed copy is not
written (the copies of the notebooks run before it are).
"""

from __future__ import annotations

import os
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path

from dominoes_env.cli_support import (
    OneLineParser,
    end_program,
    print_error,
    run_command,
    stop_status,
)
from dominoes_env.core.atomic_files import atomic_write
from dominoes_env.optional import require

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "notebooks"
TARGET = ROOT / "docs" / "notebooks"
WIDGET_TAG = "widget"
#: the Jupyter kernel the notebooks run on (ipykernel's, installed with the notebooks extra)
KERNEL = "python3"
CELL_TIMEOUT = 3600
#: how long a stopped run waits for the thread running a notebook to end once its kernel is
#: killed (the kernel is killed again meanwhile: it may have been starting)
KERNEL_STOP_S = 30.0


class NotebookFailed(Exception):
    """A cell of a notebook failed (raised, ran past ``CELL_TIMEOUT``, or its kernel died);
    the message says which cell and how, on one line."""


def error_line(ename: str, evalue: str) -> str:
    r"""The line a Python traceback ends with, for an error ``ename`` with the message
    ``evalue`` (its last line, when the message has several).

    >>> error_line("ValueError", "first line\n  the last line ")
    'ValueError: the last line'
    >>> error_line("KeyboardInterrupt", "")
    'KeyboardInterrupt'
    """
    lines = [line.strip() for line in str(evalue).splitlines() if line.strip()]
    return f"{ename}: {lines[-1]}" if lines else str(ename)


def execute(name: str, quick: bool) -> Path | None:
    """Run ``notebooks/<name>.ipynb`` and write the executed copy; returns its path.
    :class:`NotebookFailed` when a cell fails (nothing is written then). ``quick`` runs the
    notebook at its small sizes as a check and writes nothing (``None``): the copies in
    ``docs/notebooks/`` are the documentation's, and a quick run stored over them made the site
    show the small sizes' figures (today's timestamps and all) as the notebook's results."""
    nbformat = require("nbformat", "notebooks", "executing the notebooks")
    nbclient = require("nbclient", "notebooks", "executing the notebooks")
    from jupyter_client.kernelspec import NoSuchKernel
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

    try:
        nb = nbformat.read(SOURCE / f"{name}.ipynb", as_version=4)
    except (OSError, ValueError, nbformat.ValidationError) as err:  # NotJSONError: ValueError
        raise NotebookFailed(f"cannot be read ({error_line(type(err).__name__, str(err))})"
                             ) from None
    cells = list(nb.cells)
    run = [i for i, c in enumerate(cells) if WIDGET_TAG not in c.metadata.get("tags", [])]
    nb.cells = [cells[i] for i in run]
    current = {"cell": 0}  # the cell running (its place among the cells of the notebook, from 0)

    def on_cell_start(cell, cell_index: int) -> None:
        current["cell"] = run[cell_index]

    with tempfile.TemporaryDirectory() as out:
        os.environ["DOMINOES_NB_OUT"] = out
        os.environ["DOMINOES_NB_QUICK"] = "1" if quick else "0"
        os.environ.setdefault("MPLBACKEND", "module://matplotlib_inline.backend_inline")
        os.environ["TQDM_DISABLE"] = "1"
        client = nbclient.NotebookClient(
            nb, timeout=CELL_TIMEOUT, kernel_name=KERNEL, shutdown_kernel="immediate",
            resources={"metadata": {"path": str(SOURCE)}}, on_cell_start=on_cell_start,
        )
        try:
            run_client(client)
        except CellTimeoutError:
            raise NotebookFailed(f"cell {current['cell'] + 1} ran longer than {CELL_TIMEOUT} s"
                                 ) from None
        except CellExecutionError as err:
            raise NotebookFailed(f"cell {current['cell'] + 1} raised "
                                 f"{error_line(err.ename, err.evalue)}") from None
        except DeadKernelError:
            raise NotebookFailed(f"the kernel died while running cell {current['cell'] + 1}"
                                 ) from None
        except (NoSuchKernel, RuntimeError, TimeoutError) as err:  # e.g. not installed, or no reply
            raise NotebookFailed(f"its kernel {KERNEL!r} failed "
                                 f"({error_line(type(err).__name__, str(err))})") from None
    if quick:
        return None
    executed = iter(nb.cells)
    nb.cells = [c if WIDGET_TAG in c.metadata.get("tags", []) else next(executed) for c in cells]
    TARGET.mkdir(parents=True, exist_ok=True)
    path = TARGET / f"{name}.ipynb"
    with atomic_write(path) as fh:  # never a half-written notebook, nor a temporary file left
        nbformat.write(nb, fh)
    return path


def run_client(client) -> None:
    """``client.execute()`` (an ``nbclient.NotebookClient``) on a thread of its own, this one
    waiting: nbclient, on the main thread, puts its own SIGINT and SIGTERM handlers in place of
    the command's (its SIGTERM handler raises a traceback, and removing them leaves the
    default, so the next SIGTERM kills the program) and leaves the kernel, in a session of its
    own, running when SIGHUP ends the program. Here any of them stops the command as it stops
    the others (:func:`run_command`) and the kernel is killed first."""
    failed: list[BaseException] = []

    def work() -> None:
        try:
            client.execute()
        except BaseException as err:  # raised again on the command's thread
            failed.append(err)

    worker = threading.Thread(target=work, name="notebook", daemon=True)
    worker.start()
    try:
        while worker.is_alive():
            worker.join(0.5)
    except KeyboardInterrupt:  # Ctrl-C, SIGTERM, SIGHUP: no kernel left behind
        deadline = time.monotonic() + KERNEL_STOP_S
        while worker.is_alive() and time.monotonic() < deadline:
            kill_kernel(client)
            worker.join(0.2)
        raise
    if failed:
        raise failed[0]


def kill_kernel(client) -> None:
    """Kill ``client``'s kernel and what it started (its process group), if it runs."""
    provisioner = getattr(getattr(client, "km", None), "provisioner", None)
    pgid, process = getattr(provisioner, "pgid", None), getattr(provisioner, "process", None)
    try:
        if pgid:
            os.killpg(pgid, signal.SIGKILL)
        elif process is not None:
            process.kill()
    except (ProcessLookupError, PermissionError):  # already gone
        pass


def main(argv: list[str] | None = None) -> int:
    p = OneLineParser(prog="python -m experiments.docs_notebooks",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("names", nargs="*", metavar="NAME",
                   help="notebooks to run, e.g. 01_game_and_environment (default: all)")
    p.add_argument("--quick", action="store_true",
                   help="the notebooks' small sizes (DOMINOES_NB_QUICK=1), for a fast check: "
                        "nothing is stored")
    args = p.parse_args(argv)
    return run_command(lambda: _main(p, args))


def _main(p: OneLineParser, args) -> int:
    available = sorted(q.stem for q in SOURCE.glob("*.ipynb"))
    unknown = sorted(set(args.names) - set(available))
    if unknown:
        # quoted: an empty name or one with spaces was a blank in the list
        p.error(f"unknown notebook(s) {', '.join(map(repr, unknown))}; available: "
                f"{', '.join(available)}")
    twice = sorted({n for n in args.names if args.names.count(n) > 1})
    if twice:  # it was run twice
        p.error(f"notebook(s) given twice: {', '.join(twice)}; list each once")
    names = args.names or available
    kept = "checked" if args.quick else "stored"
    for done, name in enumerate(names):
        start = time.perf_counter()
        print(f"running {name}", file=sys.stderr, flush=True)
        try:
            path = execute(name, args.quick)
        except KeyboardInterrupt as stop:  # Ctrl-C, SIGTERM, SIGHUP: say what is left to run
            status, words = stop_status(stop)
            left = " ".join(names[done:])
            print_error(f"{words} while running {name}; {done} of {len(names)} notebooks were "
                        f"{kept}; to finish: python -m experiments.docs_notebooks {left}"
                        f"{' --quick' if args.quick else ''}")
            return status
        except NotebookFailed as err:  # a failed run, not bad input: status 1
            print_error(f"notebook {name}: {err}; {done} of {len(names)} notebooks were {kept} "
                        f"({name}'s copy was left as it was)")
            return 1
        seconds = f"{time.perf_counter() - start:.0f} s"
        if path is None:
            print(f"{name}: {seconds} (--quick: checked, not stored)", file=sys.stderr)
            continue
        shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        print(f"{shown}: {seconds}", file=sys.stderr)
    return 0


if __name__ == "__main__":  # pragma: no cover
    end_program(main())
