"""What every command line of the project shares: one-line errors and clean exits.

:func:`run_command` runs a command's body and turns the ways a command can end badly into one
line on stderr and an exit status, never a traceback:

- ``Ctrl-C`` (``KeyboardInterrupt``): ``interrupted`` and status 130;
- standard output closed early (``| head``) or full (``> /dev/full``): one line, status 2, and
  no second complaint when Python flushes its streams on exit;
- :class:`CommandError` (and the exception types a command lists): ``error: <message>``,
  status 2.
"""

from __future__ import annotations

import argparse
import dataclasses
import errno
import math
import os
import sys
from collections.abc import Callable, Mapping


class OneLineParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose usage errors are one ``error:`` line (status 2), pointing to
    ``--help`` instead of printing the whole usage."""

    def error(self, message: str):
        print_error(f"{self.prog}: {message} (see {self.prog} --help)")
        raise SystemExit(2)


def positive_seconds(text: str) -> float:
    """An ``argparse`` type: a time in seconds, a finite number > 0 (``nan`` or ``inf`` would
    make a timed loop run forever).

    >>> positive_seconds("0.5")
    0.5
    >>> positive_seconds("inf")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be a finite number of seconds > 0, not 'inf'
    """
    try:
        value = float(text)
    except ValueError:
        value = None
    if value is None or not 0 < value < math.inf:
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds > 0, not {text!r}")
    return value


def config_parser(cls: type, prog: str, description: str, epilog: str | None = None,
                  helps: Mapping[str, str] | None = None) -> OneLineParser:
    """A parser with one ``--flag`` per field of the dataclass ``cls`` (a training run's
    configuration), its default shown: the help text is ``helps[name]`` or the field's
    ``metadata["help"]``; ``bool`` fields get ``--flag / --no-flag``, ``list`` fields take one
    or more values, ``metadata["choices"]`` limits a field's values.

    >>> from dataclasses import dataclass, field
    >>> @dataclass
    ... class Run:
    ...     steps: int = field(default=10, metadata={"help": "steps to train"})
    ...     fast: bool = field(default=False, metadata={"help": "go fast"})
    >>> vars(config_parser(Run, "train", "Train.").parse_args(["--steps", "5", "--fast"]))
    {'steps': 5, 'fast': True}
    """
    parser = OneLineParser(prog=prog, description=description, epilog=epilog,
                           formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    for f in dataclasses.fields(cls):
        flag = "--" + f.name.replace("_", "-")
        default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
        text = (helps or {}).get(f.name) or f.metadata.get("help") or f.name.replace("_", " ")
        kind = str(f.type).split(" | ")[0]
        if kind == "bool":
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=default,
                                help=text)
        elif kind.startswith("list"):
            parser.add_argument(flag, nargs="+", default=default, help=text)
        else:
            parser.add_argument(flag, type={"int": int, "float": float}.get(kind, str),
                                default=default, help=text, choices=f.metadata.get("choices"))
    return parser


def add_position_options(parser: argparse.ArgumentParser, positions: int, seed: int,
                         seed_help: str) -> None:
    """The flags that choose benchmark positions (``--players``, ``--positions``, ``--seed``),
    shared by the commands that decide positions (``python -m experiments.bench_agents``,
    ``python -m experiments.decision_quality``); :func:`agents.positions.table_positions`
    reads them."""
    parser.add_argument("--players", type=int, choices=(2, 3, 4), default=2,
                        help="seats at the table of the positions (2)")
    parser.add_argument("--positions", type=int, default=positions,
                        help=f"positions, drawn from greedy-vs-greedy matches ({positions})")
    parser.add_argument("--seed", type=int, default=seed, help=f"{seed_help} ({seed})")


class CommandError(Exception):
    """A command cannot go on: its message is printed as ``error: <message>`` (status 2)."""


def silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # pragma: no cover - no real stdout
        pass


def print_error(message: str) -> None:
    """``error: <message>`` on stderr, on one line."""
    text = " ".join(str(message).split()) or "unknown error"
    try:
        print(f"error: {text}", file=sys.stderr, flush=True)
    except (OSError, ValueError):  # pragma: no cover - stderr closed too
        pass


def output_error_message(err: OSError) -> str:
    if isinstance(err, BrokenPipeError) or err.errno == errno.EPIPE:
        return "standard output was closed before the output was written"
    return f"cannot write the output: {err.strerror or err}"


def quiet_teardown() -> None:
    """After an interruption, objects left half-built (a progress bar caught in its
    constructor) may complain while the interpreter tears them down; the run already said how it
    ended, so such complaints are dropped instead of printed as tracebacks."""
    import gc

    sys.unraisablehook = lambda unraisable: None
    gc.collect()


class Stopped(KeyboardInterrupt):
    """SIGTERM or SIGHUP (a closed terminal) while a command runs: raised where the command
    is, as Ctrl-C is, so that everything that saves work on Ctrl-C saves it here too; the
    command then exits with 128 + the signal's number (143, 129)."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def _stop_on_signals() -> Callable[[], None]:
    """Turn SIGTERM and SIGHUP into :class:`Stopped` in this process (not in processes it
    forks: they keep the default, to die). Returns the function that restores the handlers."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    owner = os.getpid()

    def handler(signum, frame):
        if os.getpid() != owner:  # a forked worker: die as the default action would
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        raise Stopped(signum)

    wanted = [getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)]
    before = {signum: signal.signal(signum, handler) for signum in wanted}
    return lambda: [signal.signal(signum, old) for signum, old in before.items()] and None


def run_command(body: Callable[[], int], errors: tuple[type[BaseException], ...] = ()) -> int:
    """Run ``body()`` (returning an exit status) with the shared handling described above."""
    restore = _stop_on_signals()
    try:
        status = body()
        sys.stdout.flush()
        return status
    except Stopped as err:
        quiet_teardown()
        import signal

        print_error(f"stopped by {signal.Signals(err.signum).name}")
        return 128 + err.signum
    except KeyboardInterrupt:
        quiet_teardown()
        print_error("interrupted")
        return 130
    except CommandError as err:
        print_error(str(err))
        return 2
    except OSError as err:
        if is_stdout_error(err):
            silence_stdout()
            print_error(output_error_message(err))
            return 2
        if errors and isinstance(err, errors):
            print_error(str(err))
            return 2
        raise
    except errors as err:
        print_error(str(err))
        return 2
    finally:
        restore()


def is_stdout_error(err: OSError) -> bool:
    if isinstance(err, BrokenPipeError):
        return True
    if err.errno in (errno.ENOSPC, errno.EPIPE, errno.EIO, errno.EDQUOT) and err.filename is None:
        return True
    return False


def check_output_file(path: str | os.PathLike, flag: str, *, overwrite: bool = False,
                      inputs: tuple[str | os.PathLike, ...] = ()) -> None:
    """The output policy for a file a command writes, checked before it starts: never one of
    its ``inputs`` (a file, or anything inside an input folder) or a file they resolve to, never
    a symbolic link, a device or a folder, an existing file only with ``overwrite``, and a
    folder that exists. :class:`CommandError` naming ``flag`` and the reason.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     record = os.path.join(d, "r.json")
    ...     _ = open(record, "w").write("{}")
    ...     check_output_file(os.path.join(d, "page.html"), "--html", inputs=(record,))
    ...     check_output_file(record, "--html", overwrite=True, inputs=(record,))
    Traceback (most recent call last):
    ...
    dominoes_env.cli_support.CommandError: --html '...r.json' is an input of this command; write elsewhere
    """
    text = os.fspath(path)
    if not text.strip():
        raise CommandError(f"{flag} is empty; name a file")
    real = os.path.realpath(text)
    for source in inputs:
        source_real = os.path.realpath(source)
        if real == source_real or real.startswith(source_real.rstrip(os.sep) + os.sep):
            raise CommandError(f"{flag} {text!r} is an input of this command; write elsewhere")
    if os.path.islink(text):
        raise CommandError(f"{flag} {text!r} is a symbolic link; name the file itself")
    if os.path.isdir(text):
        raise CommandError(f"{flag} {text!r} is a directory; name a file")
    if os.path.lexists(text):
        if not os.path.isfile(text):
            raise CommandError(f"{flag} {text!r} exists and is not a regular file")
        if not overwrite:
            raise CommandError(f"{flag} {text!r} exists; pass --overwrite to replace it, or name "
                               "a new file")
    folder = os.path.dirname(os.path.abspath(text))
    if not os.path.isdir(folder):
        why = "is not a directory" if os.path.exists(folder) else "does not exist"
        raise CommandError(f"{flag} {text!r}: the folder {folder!r} {why}")
