"""What every command line of the project shares: one-line errors and clean exits.

:func:`run_command` runs a command's body and turns the ways a command can end badly into one
line on stderr and an exit status, never a traceback:

- ``Ctrl-C`` (``KeyboardInterrupt``): ``interrupted`` and status 130; SIGTERM and SIGHUP (a
  closed terminal) are raised as :class:`Stopped` where the command is, so what saves work on a
  Ctrl-C saves it on them too: ``stopped by SIGTERM`` (143), ``stopped by SIGHUP`` (129);
- standard output closed early (``| head``) or full (``> /dev/full``): the command does its
  work to the end (a trainer trains on), then one line, status 2, and no second complaint
  when Python flushes its streams on exit;
- :class:`CommandError` (and the exception types a command lists): ``error: <message>``,
  status 2.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import errno
import importlib.abc
import math
import os
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from ..core.atomic_files import NO_ROOM_ERRNOS
from ..core.validation import as_float, as_int, as_seed, float_text, int_text, short_repr
from ..import_hooks import LoaderAround, spec_found_by_others


class OneLineParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose usage errors are one ``error:`` line (status 2), pointing to
    ``--help`` instead of printing the whole usage."""

    def error(self, message: str):
        print_error(f"{self.prog}: {message} (see {self.prog} --help)")
        raise SystemExit(2)

    def _print_message(self, message: str, file=None) -> None:
        """``--help`` and ``--version`` written and flushed, or one line and status 2: argparse
        drops a failed write, and ``--help > /dev/full`` ended with status 0 and no help."""
        if not message:
            return
        stream = file or sys.stderr
        try:
            stream.write(message)
            stream.flush()
            if getattr(stream, "failed", False):  # a QuietStream dropped it: said the same way
                raise stream.error
        except (OSError, ValueError) as err:  # ValueError: a closed stream
            if stream is sys.stdout:
                silence_stdout()
            if isinstance(err, OSError):
                print_error(output_error_message(err))
            else:
                print_error("standard output was closed before the output was written")
            raise SystemExit(2) from None


#: the shortest time :func:`positive_seconds` takes: a timed loop runs at least one round in it
MIN_SECONDS = 0.001
#: the largest --seed of the trainers built on stable-baselines3 and RLlib: both seed numpy's
#: legacy generator, which takes 32 bits (--seed 4294967296 ended train_ppo in a traceback)
MAX_TRAINER_SEED = 2**32 - 1
#: the most matches an evaluation flag (a trainer's --eval-matches) may ask for: more would not
#: end (10**11 evaluation matches at step 0 of train_jax ran with no output until killed)
MAX_MATCHES = 10**7


def ascii_int(text: str) -> int:
    """The ``argparse`` type of an integer flag: ``int`` for ASCII text only
    (:func:`~dominoes_env.core.validation.int_text`; ``--matches ١`` ran one match)."""
    return int_text(text)


def ascii_float(text: str) -> float:
    """The ``argparse`` type of a number flag: ``float`` for ASCII text only."""
    return float_text(text)


ascii_int.__name__, ascii_float.__name__ = "int", "float"  # argparse names them in messages


def positive_seconds(text: str) -> float:
    """An ``argparse`` type: a time in seconds, a finite number of at least
    :data:`MIN_SECONDS` (``nan`` or ``inf`` would make a timed loop run forever; a time too short
    for one round, ``1e-300``, timed nothing: the benchmarks divided by zero).

    >>> positive_seconds("0.5")
    0.5
    >>> positive_seconds("inf")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be a finite number of seconds >= 0.001, not 'inf'
    """
    try:
        value = float_text(text)
    except ValueError:
        value = None
    if value is None or not MIN_SECONDS <= value < math.inf:
        raise argparse.ArgumentTypeError(
            f"must be a finite number of seconds >= {MIN_SECONDS:g}, not {text!r}")
    return value


def config_field(default: Any, help: str, *, choices: Sequence[Any] | None = None,
                 low: float | None = None, high: float | None = None, low_open: bool = False,
                 high_open: bool = False) -> Any:
    """A field of a program's configuration dataclass: its default, its ``--help`` text and the
    values it allows, which :func:`config_parser` (the command line) and :func:`check_config`
    (the dataclass itself) both enforce: one of ``choices``, or a number within ``low`` ..
    ``high`` (inclusive, unless ``low_open`` / ``high_open``; ``None``: unbounded). A callable
    default (a ``list`` factory) is called for each instance.

    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class Run:
    ...     lr: float = config_field(3e-4, "learning rate", low=0, high=1, low_open=True)
    ...     mode: str = config_field("fast", "how", choices=("fast", "slow"))
    ...     def __post_init__(self):
    ...         check_config(self)
    >>> Run(lr=0.1).lr
    0.1
    >>> Run(lr=0)
    Traceback (most recent call last):
    ...
    ValueError: lr=0.0 is out of range; allowed: > 0 and <= 1
    >>> config_parser(Run, "train", "Train.").parse_args(["--lr", "0"])
    Traceback (most recent call last):
    ...
    SystemExit: 2
    """
    if not isinstance(help, str) or not help.strip():
        raise ValueError(f"a config field needs a help text, got {help!r}")
    metadata: dict[str, Any] = {"help": help}
    if choices is not None:
        metadata["choices"] = tuple(choices)
        if not metadata["choices"]:
            raise ValueError("choices is empty; give the allowed values or None")
    for name, bound in (("low", low), ("high", high)):
        if bound is not None:
            as_float(name, bound)
            metadata[name] = bound
    if low is not None and high is not None and not low <= high:
        raise ValueError(f"low={low!r} is above high={high!r}")
    if low_open:
        metadata["low_open"] = True
    if high_open:
        metadata["high_open"] = True
    if callable(default) and not isinstance(default, str):
        return dataclasses.field(default_factory=default, metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def _field_kind(f: dataclasses.Field) -> str:
    """``"int"``, ``"float"``, ``"bool"``, ``"list"``, ``"str"``...: what a field holds (its
    annotation, a string under ``from __future__ import annotations``, without ``| None``)."""
    kind = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))
    return kind.split(" | ")[0].split("[")[0].strip()


def _item_kind(f: dataclasses.Field) -> str:
    """What one item of a ``list`` field holds (``"str"`` when the annotation does not say)."""
    kind = f.type if isinstance(f.type, str) else str(f.type)
    return kind.split("[", 1)[1].split("]")[0].strip() if "[" in kind else "str"


def _check_value(f: dataclasses.Field, value: Any, kind: str) -> Any:
    """``value`` (of the type ``kind``) checked against the field's type, ``choices`` and range
    (coerced: a numpy integer becomes an ``int``); ``ValueError``/``TypeError`` naming the
    field."""
    meta = f.metadata
    low, high = meta.get("low"), meta.get("high")
    if kind == "int":
        if low is not None:
            low = math.floor(low) + 1 if meta.get("low_open") else math.ceil(low)
        if high is not None:
            high = math.ceil(high) - 1 if meta.get("high_open") else math.floor(high)
        value = as_int(f.name, value, low, high)
    elif kind == "float" or low is not None or high is not None:
        value = as_float(f.name, value, low, high, low_open=meta.get("low_open", False),
                         high_open=meta.get("high_open", False))
    choices = meta.get("choices")
    if choices is not None and value not in choices:
        raise ValueError(f"{f.name}={short_repr(value)} is not allowed; allowed: "
                         f"{', '.join(map(repr, choices))}")
    return value


def check_config(config: Any) -> None:
    """Check every field of a configuration dataclass against what its :func:`config_field`
    allows (``choices``, ``low`` .. ``high``; a list field item by item; ``None`` where the
    default is ``None``), and store the coerced values. Call it from ``__post_init__``, so a
    configuration built in Python is held to the same rules as the command line; the first
    bad field raises ``ValueError`` (``TypeError`` for a wrong type) naming it."""
    for f in dataclasses.fields(config):
        if not any(k in f.metadata for k in ("choices", "low", "high")):
            continue
        value = getattr(config, f.name)
        if value is None and f.default is None:
            continue
        if _field_kind(f) == "list":
            if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
                raise TypeError(f"{f.name}={short_repr(value)} must be a list")
            checked: Any = [_check_value(f, item, _item_kind(f)) for item in value]
        else:
            checked = _check_value(f, value, _field_kind(f))
        object.__setattr__(config, f.name, checked)


def _range_text(meta: Mapping[str, Any]) -> str:
    """``"> 0 and <= 1"``: a field's range in words (empty when it has none)."""
    low, high = meta.get("low"), meta.get("high")
    parts = []
    if low is not None:
        parts.append(f"{'>' if meta.get('low_open') else '>='} {low}")
    if high is not None:
        parts.append(f"{'<' if meta.get('high_open') else '<='} {high}")
    return " and ".join(parts)


def _flag_type(f: dataclasses.Field, kind: str) -> Callable[[str], Any]:
    """The ``argparse`` type of a field's flag: the text as the field's type, refused (one
    ``error:`` line, exit status 2) when it is not a finite number or out of the field's range."""
    cast = {"int": int_text, "float": float_text}.get(kind, str)
    bounded = kind in ("int", "float") and ("low" in f.metadata or "high" in f.metadata)

    def parse(text: str) -> Any:
        try:
            value = cast(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"invalid {kind} value: {text!r}") from None
        if kind == "float" or bounded:
            try:
                value = _check_value(f, value, kind)
            except ValueError as err:
                raise argparse.ArgumentTypeError(str(err)) from None
        return value

    parse.__name__ = kind  # argparse names the type in its messages
    return parse


def config_parser(cls: type, prog: str, description: str, epilog: str | None = None,
                  helps: Mapping[str, str] | None = None) -> OneLineParser:
    """A parser with one ``--flag`` per field of the dataclass ``cls`` (a training run's
    configuration), its default shown: the help text is ``helps[name]`` or the field's
    ``metadata["help"]``; ``bool`` fields get ``--flag / --no-flag``, ``list`` fields take one
    or more values; a value outside the field's ``choices`` or its ``low`` .. ``high`` range
    (:func:`config_field`), or a number that is not finite, is one ``error:`` line naming the
    flag, exit status 2.

    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class Run:
    ...     steps: int = config_field(10, "steps to train", low=1)
    ...     fast: bool = config_field(False, "go fast")
    >>> vars(config_parser(Run, "train", "Train.").parse_args(["--steps", "5", "--fast"]))
    {'steps': 5, 'fast': True}
    """
    parser = OneLineParser(prog=prog, description=description, epilog=epilog,
                           formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    for f in dataclasses.fields(cls):
        flag = "--" + f.name.replace("_", "-")
        default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
        text = (helps or {}).get(f.name) or f.metadata.get("help") or f.name.replace("_", " ")
        kind = _field_kind(f)
        allowed = _range_text(f.metadata)
        if allowed:
            text += f" ({allowed})"
        if kind == "bool":
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=default,
                                help=text)
        elif kind == "list":
            parser.add_argument(flag, nargs="+", default=default, help=text,
                                type=_flag_type(f, _item_kind(f)),
                                choices=f.metadata.get("choices"))
        else:
            parser.add_argument(flag, type=_flag_type(f, kind), default=default, help=text,
                                choices=f.metadata.get("choices"))
    return parser


def seed_value(text: str) -> int:
    """The ``argparse`` type of every ``--seed``: an integer 0..2**64 - 1
    (:data:`~dominoes_env.core.validation.MAX_SEED`), the one rule for seeds; out of range, one
    ``error:`` line naming the range (a negative seed ran in some programs and was refused by
    others, and one past 2**63 ended train_jax in a traceback)."""
    try:
        value = int_text(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
    try:
        return as_seed(value)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


seed_value.__name__ = "int"  # argparse names the type in its messages


def add_position_options(parser: argparse.ArgumentParser, positions: int, seed: int,
                         seed_help: str) -> None:
    """The flags that choose benchmark positions (``--players``, ``--partnerships``,
    ``--positions``, ``--seed``), shared by the commands that decide positions
    (``python -m experiments.bench_agents``, ``python -m experiments.decision_quality``);
    :func:`agents.positions.table_positions` reads them."""
    parser.add_argument("--players", type=ascii_int, choices=(2, 3, 4), default=2,
                        help="seats at the table of the positions (2)")
    parser.add_argument("--partnerships", action=argparse.BooleanOptionalAction, default=None,
                        help="4 players in two partnerships (default: on with 4 players; "
                             "--no-partnerships: 4 players without)")
    parser.add_argument("--positions", type=ascii_int, default=positions,
                        help=f"positions, drawn from greedy-vs-greedy matches ({positions})")
    parser.add_argument("--seed", type=seed_value, default=seed, help=f"{seed_help} ({seed})")


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


class QuietStream:
    """Standard error or standard output for the length of a command (:func:`run_command` puts
    one in ``sys.stderr`` and ``sys.stdout``): what it is given is written to the stream it
    wraps until a write or a flush fails (``2>/dev/full``, ``| head -c1``, a pipe whose reader
    went away), and dropped quietly from then on; ``error`` keeps the first failure.
    Standard error carries progress bars and notes, never the work: a progress bar's failed
    write ended ``train_jax`` after its first evaluation with no checkpoint, a tournament before
    its first match, and a finished one with status 2 for its last line. A trainer's standard
    output carries its progress lines: ``train_jax ... | head -c1`` stopped the training at its
    first line with no checkpoint; the runner lets the command end its work and then says, on
    one line, that the output was lost. Everything else is the wrapped stream's (``isatty``,
    ``encoding``, ``fileno``...)."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.failed = False
        self.error: BaseException | None = None

    def write(self, text: str) -> int:
        if not self.failed:
            try:
                return self.stream.write(text)
            except (OSError, ValueError) as err:  # no room, a broken pipe, a closed file
                self._give_up(err)
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if not self.failed:
            try:
                self.stream.flush()
            except (OSError, ValueError) as err:
                self._give_up(err)

    def _give_up(self, err: BaseException) -> None:
        """Drop the stream from now on: its descriptor, where the stream writes to it, goes
        to /dev/null, so that what the stream still holds and what libraries write there
        themselves (a final flush at exit) cannot fail again."""
        self.failed = True
        self.error = err
        try:
            fd = self.stream.fileno()
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, fd)
            os.close(devnull)
        except (OSError, ValueError, AttributeError):  # not a real file (a test's capture)
            pass

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def _quiet(name: str) -> tuple[QuietStream | None, Callable[[], None]]:
    """Put a :class:`QuietStream` in ``sys.<name>`` (unless one is there); returns it (``None``
    where none was put) and the function that puts the stream before it back."""
    before = getattr(sys, name)
    if before is None or isinstance(before, QuietStream):
        return None, lambda: None
    quiet = QuietStream(before)
    setattr(sys, name, quiet)

    def restore() -> None:
        if getattr(sys, name) is quiet:
            setattr(sys, name, before)

    return quiet, restore


def lost_output_message(stream: QuietStream) -> str:
    """The line for a standard output whose writes failed (``stream.error``)."""
    err = stream.error
    if isinstance(err, OSError):
        return output_error_message(err)
    return "standard output was closed before the output was written"


def print_error(message: str) -> None:
    """``error: <message>`` on stderr, on one line."""
    text = " ".join(str(message).split()) or "unknown error"
    if not text.isprintable():  # a name's escape sequence would reach the terminal as is
        text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    try:
        print(f"error: {text}", file=sys.stderr, flush=True)
    except (OSError, ValueError):  # pragma: no cover - stderr closed too
        pass


def output_error_message(err: OSError) -> str:
    if isinstance(err, BrokenPipeError) or err.errno == errno.EPIPE:
        return "standard output was closed before the output was written"
    return f"cannot write the output: {err.strerror or err}"


def _drop_unraisable(unraisable) -> None:
    """An unraisable-exception hook that drops everything (:func:`quiet_teardown`)."""


def quiet_teardown() -> None:
    """After an interruption, objects left half-built (a progress bar caught in its
    constructor) may complain while the interpreter tears them down; the run already said how it
    ended, so such complaints are dropped instead of printed as tracebacks. The command's
    runner puts the hook before it back when the command returns (a caller of ``main()`` in a
    notebook or a test keeps its own), and :func:`end_program` drops them again for the
    interpreter's teardown."""
    import gc

    sys.unraisablehook = _drop_unraisable
    gc.collect()


class Stopped(KeyboardInterrupt):
    """SIGTERM or SIGHUP (a closed terminal) while a command runs: raised where the command
    is, as Ctrl-C is, so that everything that saves work on Ctrl-C saves it here too; the
    command then exits with 128 + the signal's number (143, 129)."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def stop_status(stop: KeyboardInterrupt) -> tuple[int, str]:
    """How a command stopped by ``stop`` ends, for one that saves its work and then says what
    it kept on the same line: ``(143, "stopped by SIGTERM")`` or ``(129, "stopped by SIGHUP")``
    for :class:`Stopped`, ``(130, "interrupted")`` for a Ctrl-C; the words :func:`run_command`
    prints when the interruption reaches it.

    >>> stop_status(KeyboardInterrupt())
    (130, 'interrupted')
    """
    if isinstance(stop, Stopped):
        import signal

        return 128 + stop.signum, f"stopped by {signal.Signals(stop.signum).name}"
    return 130, "interrupted"


def stop_note(stop: KeyboardInterrupt, kept: str) -> KeyboardInterrupt:
    """``stop`` (a Ctrl-C, or :class:`Stopped`) marked with what the stopped command kept and
    how to go on (``kept``), for a command to raise again: :func:`run_command` says it on the
    stop's one line, ``error: stopped by SIGTERM; <kept>``, with the stop's status. Commands
    printed it on lines of their own (a blank line, theirs, then the runner's: three lines).

    >>> str(getattr(stop_note(KeyboardInterrupt(), "the run is saved in x"), "kept"))
    'the run is saved in x'
    """
    stop.kept = kept  # type: ignore[attr-defined]
    return stop


def stop_on_signals() -> Callable[[], None]:
    """Turn SIGTERM and SIGHUP into :class:`Stopped` in this process (not in processes it
    forks: they keep the default, to die), as :func:`run_command` does for the length of a
    command (a test that drives the handlers without a command calls it itself). Returns the
    function that restores the handlers."""
    import signal
    import threading

    from ..startup import (
        defer_interrupts_in_imports,
        note_stop_signal,
        redeliver_lost_interrupts,
        watch_stop_signals,
    )

    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    owner = os.getpid()
    stopping = []  # the signal being handled: a second one (SIGTERM twice, a closed terminal
    # after a SIGTERM) raised again inside the first one's saving or its report, a traceback

    def handler(signum, frame):
        if os.getpid() != owner:  # a forked worker: die as the default action would
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        note_stop_signal(signum)
        if stopping:  # already stopping: the first signal's save and line go on
            return
        stopping.append(signum)
        raise Stopped(signum)

    wanted = [getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)]
    before = {signum: signal.signal(signum, handler) for signum in wanted}
    before[signal.SIGINT] = signal.getsignal(signal.SIGINT)
    deferring = defer_interrupts_in_imports()  # a Ctrl-C in an import: raised after it
    stop_watching = watch_stop_signals()  # a KeyboardInterrupt that no signal sent: a bug's

    previous_hook = sys.unraisablehook
    redeliver = redeliver_lost_interrupts(previous_hook)

    def unraisable(info) -> None:
        if isinstance(info.exc_value, Stopped):  # lost in a finalizer: sent again, not ignored
            stopping.clear()
        redeliver(info)

    unraisable.redelivers = True  # type: ignore[attr-defined]
    sys.unraisablehook = unraisable

    def restore() -> None:
        redeliver.retire()  # a lost Ctrl-C not yet sent again stays with this command
        if deferring is not None:
            deferring.retire()  # and one that waits for an import to end
        stop_watching()
        for signum, old in before.items():
            if old is not None:  # None: a handler not set from Python, left alone
                signal.signal(signum, old)
        if sys.unraisablehook in (unraisable, _drop_unraisable):
            sys.unraisablehook = previous_hook

    return restore


def _tolerant_output() -> None:
    """A standard output whose encoding cannot write every character (``PYTHONIOENCODING=
    ascii``, an ASCII or cp1252 terminal) shows ``?`` for the pictures' ``·`` and the tables'
    ``±`` instead of stopping the command with a ``UnicodeEncodeError`` traceback."""
    import codecs

    stream = sys.stdout
    try:
        if codecs.lookup(stream.encoding).name != "utf-8" and stream.errors == "strict":
            stream.reconfigure(errors="replace")
    except (AttributeError, LookupError, TypeError, ValueError, OSError):  # not a text file
        pass


def _ignore_signals(*names: str) -> None:
    """The signals ``names`` (those this platform has) ignored, from the main thread (the only
    one that may set handlers): Ctrl-C while a stopped command reports how it ended (the
    handlers are restored when :func:`run_command` returns), and every stop signal while a
    stopped program ends (:func:`end_program`)."""
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():
        for name in names:
            if hasattr(signal, name):
                signal.signal(getattr(signal, name), signal.SIG_IGN)


def say_finished(line: str, file=None) -> None:
    """Print a command's last line (``"results: X"``), after which it has ended: Ctrl-C,
    SIGTERM and SIGHUP are ignored from here until :func:`run_command` returns (it puts the
    handlers back). A Ctrl-C that landed just after the demo's "demo finished ...; results in
    X" ended the finished run with status 130; one that lands before this line is printed
    still stops the command, saying so."""
    _ignore_signals("SIGINT", "SIGTERM", "SIGHUP")
    print(line, file=sys.stdout if file is None else file)


class HeldSignals:
    """Ctrl-C, SIGTERM and SIGHUP held while the ``with`` block runs, and delivered where the
    program chooses: at :meth:`deliver` (a safe point of a loop), or when the block ends.
    Delivered means passed to the handler the signal would have met, so a Ctrl-C raises
    ``KeyboardInterrupt`` and the runner's SIGTERM / SIGHUP raise :class:`Stopped` there, as
    they would have where the signal came. Once a stop is delivered, later signals are dropped
    until the block ends (the runner drops a second SIGTERM the same way; a second Ctrl-C no
    longer cuts short the save that follows a stop). :func:`signals_held` makes one.

    Python raises a signal's exception wherever the main thread happens to be: inside torch's
    zip writer (which then raised its own ``RuntimeError``, "unexpected pos", in place of the
    interruption: a traceback, status 1, half a checkpoint), or inside JAX's or TensorBoard's
    Python code while they hold a lock that the save after the stop needs again (``train_jax``
    sent SIGTERM then never ended: nothing printed after 300 s). Held, it is raised only in
    the program's own code. Outside the main thread (where handlers cannot be set) nothing is
    held."""

    def __init__(self) -> None:
        self.came: list[int] = []
        self._before: dict[int, Any] = {}
        self._delivered = False  # a stop is under way: later signals are dropped

    def __enter__(self) -> HeldSignals:
        import signal
        import threading

        if threading.current_thread() is threading.main_thread():
            for name in ("SIGINT", "SIGTERM", "SIGHUP"):
                signum = getattr(signal, name, None)
                if signum is not None and signal.getsignal(signum) is not None:  # None: set in C
                    self._before[signum] = signal.signal(signum, self._hold)
        return self

    def _hold(self, signum: int, frame: Any) -> None:
        if not self._delivered:
            self.came.append(signum)

    def deliver(self) -> None:
        """Raise now what the first signal that came would have raised (nothing if none came,
        or if its handler ignores it)."""
        import signal

        if not self.came:
            return
        signum = self.came[0]
        self.came.clear()
        self._delivered = True
        old = self._before.get(signum)
        if callable(old):
            old(signum, None)
        elif old == signal.SIG_DFL:  # as the system would: SIGTERM, SIGHUP end the process
            signal.signal(signum, signal.SIG_DFL)
            signal.raise_signal(signum)

    def __exit__(self, *exc: Any) -> None:
        import signal

        for signum, old in self._before.items():
            signal.signal(signum, old)
        self._before = {}
        if self.came:
            signal.raise_signal(self.came[0])


def signals_held() -> HeldSignals:
    """Hold Ctrl-C, SIGTERM and SIGHUP for the ``with`` block (:class:`HeldSignals`): the
    first that came is delivered at ``deliver()`` or when the block ends."""
    return HeldSignals()


def run_command(body: Callable[[], int], errors: tuple[type[BaseException], ...] = (), *,
                quiet_stdout: bool = True) -> int:
    """Run ``body()`` (returning an exit status) with the shared handling described above.

    A failing standard output (closed, full) does not stop the body: its writes are dropped
    and, once it has ended, one line says the output was lost (status 2). ``quiet_stdout=False``
    is for a command whose output is all it does (the interactive game): the failed write
    raises where it happens."""
    from ..startup import fill_closed_standard_streams

    fill_closed_standard_streams()  # a closed stdin, stdout or stderr: /dev/null
    _tolerant_output()
    _, loud = _quiet("stderr")  # a failing stderr: dropped, the work goes on
    out, unquiet = _quiet("stdout") if quiet_stdout else (None, lambda: None)
    restore = stop_on_signals()
    held = run_locks_held()
    background = _BackgroundFileErrors()
    unhook = check_jax_start()
    try:
        status = body()
        # the command has ended and said how: a stop now would end a finished run with
        # "interrupted", status 130, after its last line (restore() puts the handlers back)
        _ignore_signals("SIGINT", "SIGTERM", "SIGHUP")
        sys.stdout.flush()
        if status == 0 and out is not None and out.failed:  # the work is done, its output lost
            print_error(lost_output_message(out))
            return 2
        if status == 0 and background.first is not None:  # the command went on without it
            err = background.first
            print_error(f"{_file_named(err)!r}: {err.strerror or os.strerror(err.errno)}")
            return 2
        return status
    except KeyboardInterrupt as stop:  # Ctrl-C, or Stopped (SIGTERM, SIGHUP)
        _ignore_signals("SIGINT")  # a second Ctrl-C now would cut this line with a traceback
        quiet_teardown()
        status, words = stop_status(stop)
        note = getattr(stop, "kept", None)
        print_error(f"{words}; {note}" if note else words)
        return status
    except CommandError as err:
        print_error(str(err))
        return 2
    except OSError as err:
        if is_stdout_error(err):
            silence_stdout()
            print_error(output_error_message(err))
            return 2
        if err.errno in NO_ROOM_ERRNOS and _file_named(err) is not None:  # a file: name it
            # (a failing device, EIO, fails reads too: that line does not say which it was)
            verb = "" if err.errno == errno.EIO else "cannot write "
            print_error(f"{verb}{_file_named(err)!r}: "
                        f"{err.strerror or os.strerror(err.errno)}")
            return 2
        if errors and isinstance(err, errors):
            print_error(str(err))
            return 2
        if _file_named(err) is not None and err.errno is not None:
            # a file or folder removed, made read-only or replaced under a running command
            # (train_jax's --out removed mid-run ended in a FileNotFoundError traceback)
            print_error(f"{_file_named(err)!r}: {err.strerror or os.strerror(err.errno)}")
            return 2
        raise
    except errors as err:
        print_error(str(err))
        return 2
    except (RuntimeError, AssertionError) as err:
        why = jax_cannot_start(err)  # JAX_PLATFORMS=tpu or cuda where there is none
        if why is None:
            raise
        print_error(f"JAX cannot start: {why}")
        return 2
    finally:
        unhook()
        background.restore()
        release_run_locks(held)
        restore()
        unquiet()
        loud()


def _file_named(err: OSError) -> str | None:
    """The name of the file ``err`` is about, or ``None`` where it names none. An error of a
    file opened by its descriptor carries the descriptor (an ``int``) as its file name: the
    runner's own handler ended in a ``TypeError`` traceback decoding it (a run folder whose
    ``run.json`` was a folder); it is named as the descriptor."""
    name = err.filename
    if isinstance(name, int) and not isinstance(name, bool):
        return f"<file descriptor {name}>"
    if isinstance(name, (str, bytes, os.PathLike)):
        return os.fsdecode(name)
    return None


class _BackgroundFileErrors:
    """While a command runs, a thread of a library that dies of a named file's error
    (TensorBoard's event writer when the run's folder is removed) prints no traceback: the
    first such error is kept, and :func:`run_command` reports it in its one line if the
    command itself ended well (when it failed, its own line says why). Other exceptions of
    threads go to the hook there was."""

    def __init__(self) -> None:
        import threading

        self.first: OSError | None = None
        self.previous = threading.excepthook

        def hook(args) -> None:
            err = args.exc_value
            if isinstance(err, OSError) and _file_named(err) is not None \
                    and err.errno is not None:
                if self.first is None:
                    self.first = err
                return
            self.previous(args)

        threading.excepthook = hook
        self.hook = hook

    def restore(self) -> None:
        import threading

        if threading.excepthook is self.hook:
            threading.excepthook = self.previous


def jax_cannot_start(err: BaseException) -> str | None:
    """Why JAX could not start the backend the environment asks for, if ``err`` is that
    (``None`` otherwise): ``JAX_PLATFORMS=tpu`` on a machine without one raises "Unable to
    initialize backend 'tpu': ...", and ``JAX_PLATFORMS=cuda`` without CUDA a bare
    ``AssertionError`` (JAX finds no default backend). Both ended train_jax, the JAX benchmarks
    and ``replay --backend jax`` in a traceback: the user's setting, not a fault of the
    program."""
    if type(err) is RuntimeError and str(err).startswith("Unable to initialize backend"):
        return str(err)
    platforms = os.environ.get("JAX_PLATFORMS")
    bridge = sys.modules.get("jax._src.xla_bridge")
    if isinstance(err, AssertionError) and platforms and bridge is not None \
            and getattr(bridge, "_default_backend", "unknown") is None:
        return (f"no backend that JAX_PLATFORMS={platforms!r} names is available here (set "
                "JAX_PLATFORMS='' to let JAX choose)")
    return None


#: run in a child where XLA_FLAGS is set: XLA parses the flags when it first builds its
#: compile options (as a backend starts), and ends the process if it refuses one; a jaxlib
#: without them exits 0 (nothing checked)
_PARSE_XLA_FLAGS = """
try:
    from jaxlib.xla_client import CompileOptions
except Exception:
    raise SystemExit(0)
CompileOptions()
"""
#: a line of XLA's log: severity, date, time, thread, source line, then the message
_XLA_LOG_LINE = r"^([FEW])\d{4} [\d:.]+ +\d+ [\w.]+:\d+\] (.*)$"
_XLA_FLAGS_CHECKED: dict[str, str | None] = {}


def xla_flags_problem(flags: str) -> str | None:
    """What XLA refuses in ``flags`` (an ``XLA_FLAGS`` value), or ``None``.

    XLA reads ``XLA_FLAGS`` when JAX starts its backend and ends the process on a flag it
    does not know, a value it cannot read or a file it cannot open (a value not starting with
    ``--`` names a file of flags): "Unknown flag in XLA_FLAGS" in a C++ log line, status 1 or
    SIGABRT, from train_jax, the JAX benchmarks, ``replay --backend jax``. Which flags XLA
    knows is not written anywhere Python can read, so a child process builds XLA's compile
    options with ``flags`` (about 0.2 s) and its log line says what was refused. A child that
    fails any other way (no jaxlib, a jaxlib without them) is not a refusal."""
    if flags not in _XLA_FLAGS_CHECKED:
        import re
        import subprocess

        env = {**os.environ, "XLA_FLAGS": flags, "TF_CPP_MIN_LOG_LEVEL": "0"}
        try:
            child = subprocess.run([sys.executable, "-c", _PARSE_XLA_FLAGS], env=env,
                                   capture_output=True, text=True, errors="replace",
                                   timeout=120)
        except (OSError, subprocess.TimeoutExpired):
            return None  # not checked: the backend's start says what it says
        logged = [m.groups() for m in re.finditer(_XLA_LOG_LINE, child.stderr, re.MULTILINE)]
        fatal = [text for severity, text in logged if severity == "F"]
        errors = [text for severity, text in logged if severity == "E"]
        refused = child.returncode != 0 and fatal
        _XLA_FLAGS_CHECKED[flags] = (errors or fatal)[0].strip().rstrip(".") if refused else None
    return _XLA_FLAGS_CHECKED[flags]


def jax_setting_problem(err: ValueError) -> str | None:
    """The one line for ``err``, a ``ValueError`` raised while ``jax`` is first imported, where
    a ``JAX_*`` environment variable is set (``None`` where none is: not the user's setting).

    JAX reads its ``JAX_*`` variables as it is imported and raises on a value it cannot take
    (``JAX_ENABLE_X64=banana``: "invalid truth value ..."; ``JAX_DEFAULT_MATMUL_PRECISION=bogus``:
    "Invalid value ... for JAX flag jax_default_matmul_precision"): train_jax, the JAX
    benchmarks and ``replay --backend jax`` ended in a traceback of 30 to 40 lines. The
    variable is the one the message names (by its own name or its flag's, the lower-case
    name); where the message names none, every ``JAX_*`` variable set is listed."""
    import re

    settings = {name: value for name, value in os.environ.items() if name.startswith("JAX_")}
    if not settings:
        return None
    message = " ".join(str(err).split())
    named = [name for name in sorted(settings)
             if re.search(rf"\b({re.escape(name)}|{re.escape(name.lower())})\b", message)]
    shown = ", ".join(f"{name}={settings[name]!r}" for name in named or sorted(settings))
    if named:
        return f"JAX refused {shown}: {message} (unset it or correct it)"
    return f"JAX cannot start: {message} (check the JAX settings in the environment: {shown})"


class _StartJaxLoader(LoaderAround):
    """``jax``'s own loader, whose ``ValueError`` from a bad ``JAX_*`` setting is raised as a
    :class:`CommandError` (:func:`jax_setting_problem`)."""

    def __init__(self, loader, finder) -> None:
        super().__init__(loader)
        self.finder = finder

    def run(self, module) -> None:
        try:
            self.loader.exec_module(module)
        except ValueError as err:
            problem = jax_setting_problem(err)
            if problem is None:
                raise
            raise CommandError(problem) from None
        self.finder.remove()


class _CheckJaxStart(importlib.abc.MetaPathFinder):
    """An import finder that finds nothing itself: the first import of ``jax`` or ``jaxlib``
    first checks ``XLA_FLAGS`` (:func:`xla_flags_problem`) and raises :class:`CommandError` on a
    value XLA refuses, and ``jax`` is loaded by a loader that makes a bad ``JAX_*`` setting a
    :class:`CommandError` (:class:`_StartJaxLoader`). The import is checked again on every try
    until ``jax`` has loaded (an ``except Exception`` that swallowed the error must not let the
    next try reach XLA, or print JAX's traceback). The message names ``XLA_FLAGS`` as the user
    gave it (``given``): train_jax adds flags of its own before it imports JAX."""

    def __init__(self, given: str | None) -> None:
        self.given = given

    def find_spec(self, fullname, path, target=None):
        if fullname not in ("jax", "jaxlib") or fullname in sys.modules:
            return None
        # only a value the user set is checked (a child process, about 0.2 s): where they set
        # none, the flags are the program's own, which the suite checks
        flags = os.environ.get("XLA_FLAGS", "") if self.given else ""
        problem = xla_flags_problem(flags) if flags else None
        if problem is not None:
            raise CommandError(f"XLA refused XLA_FLAGS={self.given!r}: {problem} (unset "
                               "XLA_FLAGS or correct it)")
        if fullname != "jax":
            return None
        spec = spec_found_by_others(self, fullname, path, target)
        if spec is None or spec.loader is None:
            return None
        spec.loader = _StartJaxLoader(spec.loader, self)
        return spec

    def remove(self) -> None:
        with contextlib.suppress(ValueError):  # removed already
            sys.meta_path.remove(self)


def check_jax_start() -> Callable[[], None]:
    """While a command runs, a bad ``XLA_FLAGS`` or ``JAX_*`` setting is one line and status 2
    as JAX starts (see :func:`xla_flags_problem`, :func:`jax_setting_problem`): every JAX
    program imports ``jax`` before its backend starts, so the check waits for that import, and
    costs nothing where JAX is not imported or is imported already. Returns what removes the
    check."""
    if "jax" in sys.modules:
        return lambda: None
    finder = _CheckJaxStart(os.environ.get("XLA_FLAGS"))
    sys.meta_path.insert(0, finder)
    return finder.remove


def nothing_to_train(resume: str, steps: int, total: int) -> str | None:
    """What to say when ``--resume`` is at ``--total-steps`` or past it: nothing is trained,
    and the run's last line says it trained the checkpoint's steps ("trained 300,000 steps"
    for --total-steps 200000, in silence)."""
    if steps < total:
        return None
    return (f"note: --resume {resume} is at step {steps:,}, not below --total-steps {total:,}: "
            "nothing is trained (give a larger --total-steps to train on)")


def run_of_checkpoint(checkpoint: str) -> str:
    """The run folder of a trainer's checkpoint: ``X`` for ``X/checkpoint.npz`` (train_jax)
    and for ``X/checkpoints/last.zip`` (train_ppo), where ``--resume`` without ``--out``
    continues the run (a stopped run says "continue with --resume X/checkpoint.npz"; without
    ``--out`` the run went on in the trainer's default folder, in silence).

    >>> run_of_checkpoint("runs/a/checkpoint.npz"), run_of_checkpoint("r/checkpoints/last.zip")
    ('runs/a', 'r')
    >>> run_of_checkpoint("checkpoint.npz")
    '.'
    """
    folder = os.path.dirname(checkpoint) or "."
    if os.path.basename(os.path.normpath(folder)) == "checkpoints":
        folder = os.path.dirname(os.path.normpath(folder)) or "."
    return folder


def jax_in_32_bits(program: str) -> None:
    """Switch JAX's 64-bit mode off, with a one-line note, where ``JAX_ENABLE_X64`` turned it
    on: for the programs whose results depend on it (a training run's random draws and
    learning rate), so that a seed gives the same run either way. The JAX game itself is
    exact in both modes. Call it before the program's first JAX computation."""
    import jax

    if jax.config.jax_enable_x64:
        jax.config.update("jax_enable_x64", False)
        print(f"note: JAX_ENABLE_X64 is ignored: {program} computes in 32 bits, so that a "
              "seed gives the same run", file=sys.stderr)


def end_program(status: int) -> None:
    """End a ``python -m`` program with ``status`` (its ``if __name__ == "__main__"`` line).

    A program stopped by a signal (status 129, 130, 143) after JAX has started ends at once,
    its output flushed, without the interpreter's teardown: a Ctrl-C that lands while XLA
    compiles leaves XLA's threads at work, and the teardown beside them ended in a
    segmentation fault (status -11 after ``error: interrupted``) in about a third of such
    ``bench_jax`` runs. Every other ending is ``sys.exit(status)``.

    A stopped program ignores further Ctrl-C, SIGTERM and SIGHUP while it ends: a second
    Ctrl-C 20 ms after the first (a terminal sends it to the workers too) landed in the
    teardown, and the program died of it (status -2) after saying how it had stopped. So does
    a program that ended otherwise: it has said how it ended too, and a Ctrl-C in its teardown
    (Python puts the signals' default actions back as it starts tearing down: only an
    ignored signal stays ignored) killed the demo (status 130 in the shell) after its last
    line said "demo finished"."""
    _ignore_signals("SIGINT", "SIGTERM", "SIGHUP")
    if status in (129, 130, 143):
        sys.unraisablehook = _drop_unraisable  # what was left half-built stays quiet
        if "jax" in sys.modules:
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except (OSError, ValueError, AttributeError):  # pragma: no cover - closed
                    pass
            os._exit(status)
    sys.exit(status)


def is_stdout_error(err: OSError) -> bool:
    """Whether ``err`` is a failed write to standard output: a closed pipe, or a write that
    found no room and names no file (a file written through
    :func:`~dominoes_env.core.atomic_files.atomic_write` is named in its error)."""
    if isinstance(err, BrokenPipeError):
        return True
    if (err.errno == errno.EPIPE or err.errno in NO_ROOM_ERRNOS) and err.filename is None:
        return True
    return False


#: the most characters of a path an error line quotes (an 8,000-character --html path made one
#: error line of 8,383 characters)
QUOTE_LIMIT = 200


def shown_path(path: str | os.PathLike) -> str:
    r"""``path`` as a program's result line shows it: as it is where every character prints, else
    quoted with Python's escapes (``--out $'esc\x1b[31mRED\nx'`` was shown raw: the terminal
    turned red and the line split in two).

    >>> shown_path("runs/a b"), shown_path("esc\x1b[31m\nx")
    ('runs/a b', "'esc\\x1b[31m\\nx'")
    """
    text = os.fsdecode(path)
    return text if text.isprintable() else repr(text)


def quoted_path(path: str | os.PathLike) -> str:
    """``path`` as an error line quotes it: ``repr``, cut to :data:`QUOTE_LIMIT` characters."""
    return short_repr(os.fsdecode(path), QUOTE_LIMIT)


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
    dominoes_env.cli_support.CommandError: --html '...r.json' is an input of this command; ...
    """
    text = os.fspath(path)
    if not text.strip():
        raise CommandError(f"{flag} is empty; name a file")
    if text == "-":  # not standard output, as in many commands: a file named '-' in the cwd
        raise CommandError(f"{flag} '-': this command writes a file, not standard output; "
                           "name the file (./- for a file named '-')")
    try:
        real = os.path.realpath(text)
        reals = [os.path.realpath(source) for source in inputs]
    except OSError as err:  # a relative path, and the working directory was removed
        raise CommandError(f"{flag} {quoted_path(text)}: {err.strerror or err}"
                           f"{_cwd_gone(text)}") from None
    for source_real in reals:
        if real == source_real or real.startswith(source_real.rstrip(os.sep) + os.sep):
            raise CommandError(f"{flag} {quoted_path(text)} is an input of this command; "
                               "write elsewhere")
    if os.path.islink(text):
        raise CommandError(f"{flag} {quoted_path(text)} is a symbolic link; name the file "
                           "itself")
    if os.path.isdir(text):
        raise CommandError(f"{flag} {quoted_path(text)} is a directory; name a file")
    if os.path.lexists(text):
        if not os.path.isfile(text):
            raise CommandError(f"{flag} {quoted_path(text)} exists and is not a regular file")
        if not overwrite:
            raise CommandError(f"{flag} {quoted_path(text)} exists; pass --overwrite to replace "
                               "it, or name a new file")
    folder = os.path.dirname(os.path.abspath(text))
    if not os.path.isdir(folder):
        why = "is not a directory" if os.path.exists(folder) else "does not exist"
        raise CommandError(f"{flag} {quoted_path(text)}: the folder {quoted_path(folder)} "
                           f"{why}")  # each cut: an 8,000-character path made a line of 8,383
    name = os.path.basename(os.path.abspath(text)).encode("utf-8", "surrogateescape")
    try:  # found now, not after a match played by hand that then cannot be saved
        most = os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError):  # pragma: no cover - a system that does not say
        most = 255
    if len(name) > most:
        raise CommandError(f"{flag} {quoted_path(text)}: its name is {len(name)} bytes; this "
                           f"file system allows {most}")


class RefusedError(CommandError, ValueError):
    """A flag refused before the command starts: both a :class:`CommandError` (one line from
    :func:`run_command`) and a ``ValueError`` (for the code that checks its arguments)."""


def machine_memory() -> int:
    """The memory this process may use, in bytes: this machine's physical memory, or less
    where the process's address space is limited (``ulimit -v``: a run that fits the machine
    but not the limit would end in a ``MemoryError`` hours in)."""
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    try:
        import resource

        limit = resource.getrlimit(resource.RLIMIT_AS)[0]
    except (ImportError, OSError, ValueError):  # pragma: no cover - not on POSIX
        return memory
    return memory if limit == resource.RLIM_INFINITY or limit <= 0 else min(memory, limit)


def check_fits_in_memory(what: str, count: int, bytes_each: int, detail: str = "") -> None:
    """:class:`RefusedError` unless ``count`` things of ``bytes_each`` bytes fit in this
    machine's memory; the one-line message names ``what`` (the flag and its value), what it
    needs (``detail`` says of what, in parentheses) and what the machine has.

    >>> check_fits_in_memory("--positions 10", 10, 8192)
    >>> check_fits_in_memory("--positions 10**20", 10**20, 8192)
    Traceback (most recent call last):
    ...
    dominoes_env.cli_support.RefusedError: --positions 10**20 needs about ... GiB of memory; ...
    """
    memory = machine_memory()
    need = count * bytes_each
    if need > memory:
        raise RefusedError(f"{what} needs about {need / 2**30:,.0f} GiB of memory"
                           f"{f' ({detail})' if detail else ''}; this machine has "
                           f"{memory / 2**30:,.0f} GiB")


def _cwd_gone(text: str) -> str:
    """What to add to an error about the relative path ``text`` when the working directory no
    longer exists (removed while a shell stood in it): ``play --save s.json`` there ended in a
    FileNotFoundError traceback with no file name."""
    if os.path.isabs(text):
        return ""
    try:
        os.getcwd()
    except OSError:
        return " (the working directory no longer exists: give an absolute path, or cd to a " \
               "folder that exists)"
    return ""


def check_out_dir(out: str | os.PathLike, flag: str = "--out") -> None:
    """:class:`RefusedError` unless ``out`` names a folder that exists or can be made: not
    empty, not a file, not inside a file, inside a folder this process can write into (tried
    with a file made and removed). Nothing is left written.

    >>> check_out_dir("", "--out")
    Traceback (most recent call last):
    ...
    dominoes_env.cli_support.RefusedError: --out is empty; name the run's folder
    """
    import tempfile
    from pathlib import Path

    text = os.fspath(out)
    if not text.strip():
        raise RefusedError(f"{flag} is empty; name the run's folder")
    try:  # a name too long, a loop of links: one line naming the reason
        path = Path(text).absolute()
        if path.exists() and not path.is_dir():
            raise RefusedError(f"{flag} {text!r} is a file, not a folder")
        ancestor = path
        while not ancestor.exists():
            ancestor = ancestor.parent
        if not ancestor.is_dir():
            raise RefusedError(f"{flag} {text!r}: {str(ancestor)!r} is a file, not a folder")
        if path.exists():
            os.listdir(path)  # a folder that cannot be read cannot be checked for another run
    except OSError as err:
        raise RefusedError(f"{flag} {short_repr(text)}: {err.strerror or err}"
                           f"{_cwd_gone(text)}") from None
    try:
        fd, probe = tempfile.mkstemp(prefix=".probe-", dir=ancestor)
        os.close(fd)
        os.unlink(probe)
    except OSError as err:
        raise RefusedError(f"{flag} {text!r}: cannot write into {str(ancestor)!r} "
                           f"({err.strerror or err})") from None


# -- the output policy of run folders -------------------------------------------------------------
#: the file that marks a folder as one run's: the program and the settings it was started with
RUN_MARKER = "run.json"
#: the largest run marker read (one is a few kilobytes)
MAX_MARKER_BYTES = 1 << 20
_TOURNAMENT_OUTPUTS = ("config.json", "matches.jsonl", "summary.json", "winrate_heatmap.png",
                       "ratings.png", "records")
#: what each program writes into its run folder (names or ``fnmatch`` patterns): all that
#: ``--overwrite`` removes of a run of that program, held here in the code and never read from
#: the run's marker, whose ``"outputs"`` anyone can edit to name the user's own files (each
#: program passes the same list to :func:`check_run_folder`; a test holds them equal)
PROGRAM_OUTPUTS: dict[str, tuple[str, ...]] = {
    "experiments.tournament": _TOURNAMENT_OUTPUTS,
    "experiments.demo": _TOURNAMENT_OUTPUTS,
    "experiments.make_dataset": (*_TOURNAMENT_OUTPUTS, "decisions", "dataset.json"),
    "experiments.benchmark": ("benchmark.json", "card.json", "card.png", "matches"),
    "experiments.train_ppo": ("pool", "config.json", "tb", "eval.csv", "eval.csv.damaged*",
                              "eval_policy.npz", "throughput.json", "checkpoints", "bc.json",
                              "policy.npz", "policy.json"),
    "experiments.train_jax": ("config.json", "tb", "eval.csv", "eval.csv.damaged*",
                              "eval_policy.npz", "checkpoint.npz", "throughput.json",
                              "policy.npz", "policy.json"),
    "experiments.train_rllib": ("progress.csv", "tb", "checkpoint", "policy.npz", "policy.json"),
    "experiments.expert_iteration": ("demos.npz", "policy.npz", "policy.json",
                                     "iteration[0-9]*"),
}  # fmt: skip


@dataclasses.dataclass(frozen=True)
class RunFolder:
    """A checked ``--out`` folder (:func:`check_run_folder`): where the run goes, and whether it
    continues the run there (``resumes``) or replaces it (``replaces``, ``--overwrite``)."""

    path: str
    program: str
    settings: Any
    resumes: bool = False
    replaces: bool = False
    #: the names (``fnmatch`` patterns) of the program's outputs, listed in its run marker
    #: (empty: everything in the folder is the run's)
    outputs: tuple[str, ...] = ()
    #: what replacing the run removes: the program's outputs and those of the run it replaces
    #: (``None``: ``outputs``; empty: everything in the folder)
    removes: tuple[str, ...] | None = None
    #: the run marker the check saw (:func:`_marker_print`; ``None``: none), which must be
    #: there still when the run starts
    seen: str | None = None
    #: what replacing the run keeps although the replaced run's marker lists it as the run's
    #: (no output of that program: the user's own, named in an edited marker), said on stderr
    kept: tuple[str, ...] = ()


def read_run_marker(folder: str | os.PathLike) -> dict[str, Any] | None:
    """The run marker of ``folder`` (``None`` when it has none), read as untrusted input: a
    marker that is not a small JSON object naming its program is ``{}``
    (:func:`marker_damage` says what is wrong with it)."""
    return _read_marker(folder)[0]


def marker_damage(folder: str | os.PathLike) -> str:
    """What is wrong with the run marker of ``folder`` (``"it is empty"``, ``"the key
    'program' appears twice in one object"``...), or ``""`` when it is whole or there is
    none."""
    return _read_marker(folder)[1]


def _read_marker(folder: str | os.PathLike) -> tuple[dict[str, Any] | None, str]:
    """``(marker, what is wrong with it)``: see :func:`read_run_marker`. Strict as the other
    readers of untrusted JSON are: UTF-8 (a byte order mark allowed), no key twice in an
    object; UTF-16 was taken (``json.loads`` of bytes guesses the encoding) and a second
    ``"program"`` won without a word."""
    import stat

    from ..core.atomic_files import entry_kind
    from ..core.validation import DuplicateKeyError, parse_json

    path = os.path.join(os.fspath(folder), RUN_MARKER)
    try:
        mode = os.lstat(path).st_mode
        if not stat.S_ISREG(mode):  # a folder, a link, a FIFO: not opened, not read
            return {}, f"it is {entry_kind(mode)}, not a file"
        flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None, ""
    except OSError as err:
        return {}, f"it cannot be read: {err.strerror or err}"
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # replaced since: opened, but not read
            return {}, "it is not a regular file"
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(MAX_MARKER_BYTES + 1)
    except OSError as err:
        return {}, f"it cannot be read: {err.strerror or err}"
    finally:
        os.close(fd)
    if len(data) > MAX_MARKER_BYTES:
        return {}, f"it is larger than {MAX_MARKER_BYTES >> 20} MiB"
    if not data.strip():
        return {}, "it is empty"
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        return {}, f"it is not UTF-8 text: byte {data[err.start]:#04x} at offset {err.start}"
    try:
        marker = parse_json(text)
    except RecursionError:
        return {}, "it is nested too deeply"
    except DuplicateKeyError as err:
        return {}, str(err)
    except ValueError as err:
        why = " ".join(str(err).split())
        if "integer string conversion" in why:
            why = "a number too long to read"
        return {}, f"it is not valid JSON: {why[:117] + '...' if len(why) > 120 else why}"
    if not isinstance(marker, dict):
        return {}, f"it holds a JSON {_json_kind(marker)}, not an object"
    if "program" not in marker:
        return {}, "it names no 'program'"
    if not isinstance(marker["program"], str):
        return {}, f"its 'program' is {short_repr(marker['program'])}, not a program's name"
    return marker, ""


def _json_kind(value: Any) -> str:
    """``"list"``, ``"number"``...: what a JSON value is, in JSON's words."""
    if isinstance(value, list):
        return "list"
    if isinstance(value, str):
        return "string"
    if value is None or isinstance(value, bool):
        return "literal"
    return "number"


def _marker_print(folder: str | os.PathLike) -> str | None:
    """A fingerprint of the run marker of ``folder`` as it is now (the SHA-256 of its bytes, or
    what it is where it is no file; ``None``: there is none), for :func:`start_run_folder` to
    tell whether another run started there since the folder was checked."""
    import hashlib
    import stat

    from ..core.atomic_files import entry_kind

    path = os.path.join(os.fspath(folder), RUN_MARKER)
    try:
        mode = os.lstat(path).st_mode
        if not stat.S_ISREG(mode):
            return entry_kind(mode)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
                     | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return None
    except OSError as err:
        return f"unreadable: {err.strerror}"
    try:
        with os.fdopen(fd, "rb", closefd=False) as f:
            return hashlib.sha256(f.read(MAX_MARKER_BYTES + 1)).hexdigest()
    except OSError as err:
        return f"unreadable: {err.strerror}"
    finally:
        os.close(fd)


def settings_difference(old: Any, new: Any) -> str:
    """``"lr: 0.1 there, 0.2 now; rules.target_score: 40 there, 50 now"``: what differs between
    the settings a run was started with and this command's (dicts, nested ones one level), as
    a refusal to continue a run says it (:func:`check_run_folder`, and programs that compare a
    run's settings themselves: ``experiments.best_response``)."""
    if not (isinstance(old, dict) and isinstance(new, dict)):
        return "its settings are unreadable"
    diffs = []
    for key in sorted(set(old) | set(new), key=str):
        a, b = old.get(key), new.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            diffs += [f"{key}.{k}: {short_repr(a.get(k))} there, {short_repr(b.get(k))} now"
                      for k in sorted(set(a) | set(b), key=str) if a.get(k) != b.get(k)]
        elif a != b:
            diffs.append(f"{key}: {short_repr(a)} there, {short_repr(b)} now")
    return "; ".join(diffs[:4]) + (f" and {len(diffs) - 4} more" if len(diffs) > 4 else "")


#: the agent specs' parameters that name a policy file, by the spec's name: ``ppo:PATH`` (the
#: first parameter, or ``path=``) and ``guided:policy=PATH`` (see :mod:`agents.specs`)
POLICY_FILE_PARAMETERS = {"ppo": ("", "path"), "guided": ("policy",)}


def paths_in_specs(specs: Sequence[str]) -> list[str]:
    """The files and folders that agent specs name (``ppo:runs/a/policy.npz``,
    ``guided:policy=p.npz``): the inputs a command that plays them reads. A folder where a
    policy file goes (``ppo:.``) is a :class:`RefusedError` saying so, before an output is
    compared with it: it was refused as the input that ``--out`` lies in.

    >>> paths_in_specs(["greedy", f"ppo:{os.devnull}"])
    ['/dev/null']
    """
    import re

    found = []
    for spec in specs:
        _check_policy_files(str(spec))
        for token in re.split(r"[:,=]", str(spec))[1:]:
            if token.strip() and os.path.exists(token) and token not in found:
                found.append(token)
    return found


def _check_policy_files(spec: str) -> None:
    """:class:`RefusedError` if a parameter of ``spec`` that names a policy file
    (:data:`POLICY_FILE_PARAMETERS`) names a folder."""
    head, _, rest = spec.strip().partition(":")
    keys = POLICY_FILE_PARAMETERS.get(head, ())
    for i, item in enumerate(rest.split(",")):
        key, sep, value = item.partition("=")
        if not sep:  # a bare first parameter: ppo:PATH
            key, value = ("", item) if i == 0 else (None, "")
        if key in keys and value.strip() and os.path.isdir(value):
            raise RefusedError(f"agent spec {spec!r}: {value!r} is a folder, not a policy file "
                               "(an .npz file is)")


#: the most entries :func:`_odd_entry` looks at below a run folder's outputs
MAX_ENTRIES_CHECKED = 1_000_000


def _odd_entry(folder: str, names: Sequence[str], outputs: Sequence[str]) -> tuple[str, str]:
    """``(relative path, its kind)`` of the first entry of ``folder`` that is not a regular
    file or a folder itself (a link, a FIFO, a device...): among ``names``, and at every depth
    below those that are the program's ``outputs`` (all of them when it names none), where the
    program writes; ``("", "")`` when there is none. A link anywhere below wrote the resumed
    run through it: a benchmark card's ``matches/2p`` linked elsewhere got its ``config.json``
    and ``matches.jsonl`` written outside ``--out``."""
    import fnmatch
    import stat

    from ..core.atomic_files import entry_kind

    stack = [(name, os.path.join(folder, name), not outputs or any(
        fnmatch.fnmatchcase(name, pattern) for pattern in outputs))
        for name in reversed(sorted(names))]
    seen = 0
    while stack and seen < MAX_ENTRIES_CHECKED:
        relative, path, deep = stack.pop()
        seen += 1
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            continue  # gone since it was listed: nothing there to write through
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            return relative, entry_kind(mode)
        if deep and stat.S_ISDIR(mode):
            try:
                inside = sorted(os.listdir(path))
            except OSError:
                continue  # unreadable: the program's own error names it when it gets there
            stack += [(os.path.join(relative, name), os.path.join(path, name), True)
                      for name in reversed(inside)]
    return "", ""


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def check_run_folder(out: str | os.PathLike, program: str, settings: Any, *,
                     resume: str | os.PathLike | None = None, overwrite: bool = False,
                     rerun_resumes: bool = False, outputs: Sequence[str] = (),
                     resume_hint: str = "", resumable: bool = True,
                     inputs: Sequence[str | os.PathLike | None] = (),
                     flag: str = "--out") -> RunFolder:
    """The output policy of a run's folder, checked before anything is written
    (:class:`RefusedError`, one line naming the folder and the flag to pass):

    ``flag`` names the folder in refusals: a command's ``--out``, or a function's argument
    (``out``: then replacing the run is ``overwrite=True``, not ``--overwrite``).

    - what :func:`check_out_dir` refuses (empty, a file, inside a file, unwritable), a symbolic
      link, and an input of the command (``inputs``: the folder is one, or inside one; with
      ``overwrite`` also an input inside the folder, which replacing the run would remove);
    - a folder that holds another run: a fresh run goes only into a new or empty folder. The
      run there continues only as the same run: ``resume`` (the file the run continues from)
      inside the folder, or any rerun of a program whose repeated command resumes
      (``rerun_resumes``: a tournament), and the same ``program`` and ``settings`` as its run
      marker (:data:`RUN_MARKER`) holds. ``overwrite`` replaces it (:func:`start_run_folder`
      removes the marker, the program's ``outputs`` and, for another program's run, that
      program's (:data:`PROGRAM_OUTPUTS`; never what the marker lists); other files stay). A
      folder without a run marker (or whose ``run.json`` is no run's: another tool's, or damaged)
      that holds names other than the program's ``outputs`` (names or ``fnmatch`` patterns)
      is not a run's folder: refused, and never emptied. ``resume_hint`` is the checkpoint a
      refusal names; ``resumable=False``: the program's runs never continue. A run of another
      program is never offered to be continued (only replaced), nor one of this program
      without the checkpoint ``resume_hint`` names (stopped before it saved one).

    The returned :class:`RunFolder` goes to :func:`start_run_folder` when the run starts.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     run = start_run_folder(check_run_folder(d, "demo", {"seed": 1}))
    ...     check_run_folder(d, "demo", {"seed": 1})
    Traceback (most recent call last):
    ...
    dominoes_env.cli_support.RefusedError: --out '...' holds another run (of demo); pass ...
    """
    import fnmatch
    import json

    settings = json.loads(json.dumps(settings, sort_keys=True, default=str))  # as stored
    replace = f"pass {_overwrite_word(flag)} to replace"  # a function's out: overwrite=True
    check_out_dir(out, flag)
    text = os.fspath(out)
    if os.path.islink(text):
        raise RefusedError(f"{flag} {text!r} is a symbolic link; name the folder itself")
    real = os.path.realpath(text)
    for source in inputs:
        if source is None or not os.fspath(source).strip():
            continue
        source_real = os.path.realpath(source)
        if _inside(real, source_real) or (overwrite and _inside(source_real, real)):
            raise RefusedError(f"{flag} {text!r} is, holds or lies in an input of this command "
                               f"({os.fspath(source)!r}); write elsewhere")
    entries = sorted(os.listdir(text)) if os.path.isdir(text) else []
    if not entries:
        return RunFolder(text, program, settings, outputs=tuple(outputs))
    seen = _marker_print(text)
    marker, damage = _read_marker(text)
    held = f"another run (of {marker['program']})" if marker else "another run"
    foreign = [name for name in entries if name != RUN_MARKER
               and not any(fnmatch.fnmatchcase(name, pattern) for pattern in outputs)]
    if not marker and foreign:  # no marker, or a run.json that is no run's (another tool's)
        raise RefusedError(f"{flag} {text!r} holds files that are not a run's "
                           f"({', '.join(map(repr, foreign[:3]))}"
                           f"{f'; its {RUN_MARKER} is damaged: {damage}' if damage else ''}); "
                           "name a new folder (a run goes into a new or empty one)")
    if overwrite:
        removes = _replaced_outputs(text, entries, marker, program, tuple(outputs), flag)
        _refuse_removing_the_working_directory(text, real, removes, flag)
        return RunFolder(text, program, settings, replaces=True, outputs=tuple(outputs),
                         removes=removes, seen=seen,
                         kept=_listed_but_kept(entries, marker, removes))
    odd, kind = _odd_entry(text, entries, outputs)
    if odd:  # a FIFO blocks the run that reads it, /dev/zero fills memory, a link writes elsewhere
        raise RefusedError(f"{flag} {text!r} holds {odd!r}, which is {kind}, not a regular "
                           f"file or folder; remove it, {replace} the run, or "
                           "name a new folder")
    if damage:  # a run's folder (nothing else there) whose marker cannot say whose run it is
        raise RefusedError(f"{flag} {text!r} holds a damaged {RUN_MARKER} ({damage}), so which "
                           f"run is there is unknown; {replace} that run, or "
                           "name a new folder")
    if marker and marker["program"] != program:  # not this program's run to continue
        raise RefusedError(f"{flag} {text!r} holds a run of {short_repr(marker['program'])}, "
                           f"which {program} cannot continue; {replace} it, "
                           "or name a new folder")
    same = (rerun_resumes or (resume is not None
                              and _inside(os.path.realpath(resume), real)))
    unsaved = (resumable and not rerun_resumes and bool(resume_hint)  # a checkpoint of the
               and _inside(os.path.realpath(resume_hint), real)  # run, not there: stopped
               and not os.path.lexists(resume_hint))  # before its first
    if not same:  # (an unsaved run is not started again by itself: its checkpoint may be gone
        # while its policy is there, which only --overwrite may remove)
        how = ("repeat its command to resume it, " if rerun_resumes
               else f"it has no checkpoint to continue from ({resume_hint!r} is not there: it "
                    "stopped before saving one); " if unsaved
               else f"pass --resume {resume_hint or 'with its checkpoint'} to continue it, "
               if resumable else "")
        raise RefusedError(f"{flag} {text!r} holds {held}; {how}{replace} it, or name a new "
                           "folder")
    if marker is not None and marker.get("settings") != settings:
        why = settings_difference(marker.get("settings"), settings)
        raise RefusedError(f"{flag} {text!r} holds {held} with different arguments ({why}); "
                           f"repeat its arguments to continue it, {replace} it, or choose "
                           f"another {flag if flag.startswith('-') else 'folder'}")
    return RunFolder(text, program, settings, resumes=True, outputs=tuple(outputs),
                     seen=seen)


def _marker_outputs(marker: dict[str, Any]) -> tuple[str, ...] | None:
    """The outputs a run marker lists (``fnmatch`` patterns of names in its folder), or
    ``None`` when it lists none it can be held to (a marker written before markers listed
    them, or one whose list is not short plain names)."""
    listed = marker.get("outputs")
    if not isinstance(listed, list) or len(listed) > 256 or not all(
            isinstance(p, str) and p.strip() and "/" not in p and os.sep not in p
            and p not in (".", "..") for p in listed):
        return None
    return tuple(listed)


def _replaced_outputs(text: str, entries: Sequence[str], marker: dict[str, Any] | None,
                      program: str, outputs: tuple[str, ...], flag: str) -> tuple[str, ...]:
    """What ``--overwrite`` removes from the run folder ``text`` (beside the marker): this
    program's ``outputs`` and, for a run of another program, that program's
    (:data:`PROGRAM_OUTPUTS`), so that the folder afterwards holds the new run alone (a
    tournament over a dataset left ``dataset.json`` and ``decisions/`` beside its matches).
    Empty: everything there. The outputs the marker lists are never taken: an edited
    ``run.json`` listing ``notes.txt`` had the user's notes removed with the run. A run of a
    program whose outputs are unknown here is refused where the folder holds anything else,
    since which of those files are the run's is unknown (the user's own files stay)."""
    import fnmatch

    if not outputs or not marker or marker.get("program") == program:
        return outputs  # everything is the run's; or the folder holds nothing but this
        # program's outputs (no marker, or a damaged one); or it is this program's run
    theirs = PROGRAM_OUTPUTS.get(marker["program"])
    if theirs is not None:
        return tuple(dict.fromkeys([*outputs, *theirs]))
    unknown = [name for name in entries if name != RUN_MARKER and not any(
        fnmatch.fnmatchcase(name, pattern) for pattern in outputs)]
    if unknown:
        raise RefusedError(f"{flag} {text!r} holds a run of {short_repr(marker['program'])}, "
                           f"whose files {_overwrite_word(flag)} cannot tell from yours "
                           f"({', '.join(map(repr, unknown[:3]))}); remove that run's files, "
                           "or name a new folder")
    return outputs


def _listed_but_kept(entries: Sequence[str], marker: dict[str, Any] | None,
                     removes: tuple[str, ...]) -> tuple[str, ...]:
    """The names in the folder that the replaced run's marker lists as its outputs but that
    replacing it keeps (``removes``, empty: it keeps nothing)."""
    import fnmatch

    listed = _marker_outputs(marker) if marker else None
    if not listed or not removes:
        return ()
    return tuple(name for name in entries if name != RUN_MARKER
                 and any(fnmatch.fnmatchcase(name, pattern) for pattern in listed)
                 and not any(fnmatch.fnmatchcase(name, pattern) for pattern in removes))


def _overwrite_word(flag: str) -> str:
    """How a refusal names replacing the run: ``--overwrite`` for a command's ``--out``,
    ``overwrite=True`` for a function's argument (``out``), which has no flags."""
    return "--overwrite" if flag.startswith("-") else "overwrite=True"


def _refuse_removing_the_working_directory(text: str, real: str, outputs: Sequence[str],
                                           flag: str) -> None:
    """:class:`RefusedError` if replacing the run in ``real`` (:func:`start_run_folder`) would
    remove the working directory: ``--out .. --overwrite`` run from inside the run's
    ``records/`` removed the old run, working directory and all, then could not write the new
    one (``..`` no longer led anywhere) and said the finished matches were kept."""
    import fnmatch

    try:
        cwd = os.path.realpath(os.getcwd())
    except OSError:  # the working directory is gone already: nothing more to lose
        return
    if cwd == real or not _inside(cwd, real):
        return
    name = os.path.relpath(cwd, real).split(os.sep)[0]
    if not outputs or name == RUN_MARKER or any(fnmatch.fnmatchcase(name, pattern)
                                                for pattern in outputs):
        raise RefusedError(f"{flag} {text!r} holds the working directory ({cwd!r}), which "
                           f"{_overwrite_word(flag)} would remove with the run; work from "
                           "outside it")


#: the run folders this process writes into, locked (realpath -> the folder's open fd)
_RUN_LOCKS: dict[str, int] = {}


def _lock_run_folder(path: str) -> None:
    """Hold an exclusive lock on the run folder ``path`` while this process writes into it
    (until :func:`run_command` returns, or the process ends): a second process starting a run
    there (the same ``--resume`` twice, an ``--overwrite`` of a run still going) is refused,
    where both wrote the same checkpoint and results, or the second emptied the first's folder
    under it. A file system without locks is not locked."""
    real = os.path.realpath(path)
    if real in _RUN_LOCKS:
        return
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not on POSIX
        return
    try:
        fd = os.open(real, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise RefusedError(f"the run folder {path!r} is being written by another run (a "
                           "process still running); wait for it to end, or name another "
                           "folder") from None
    except OSError:  # pragma: no cover - no locks on this file system
        os.close(fd)
        return
    _RUN_LOCKS[real] = fd


@contextlib.contextmanager
def run_folder_locks() -> Iterator[None]:
    """Release, on leaving, the run folders' locks that :func:`start_run_folder` took inside
    (as :func:`run_command` does for a command): a function that starts its own run folder
    (:func:`agents.tournament.run_tournament` called from Python) leaves it unlocked when it
    returns, not locked for the rest of the process."""
    held = run_locks_held()
    try:
        yield
    finally:
        release_run_locks(held)


def run_locks_held() -> set[str]:
    """The run folders this process holds locked now (their real paths): noted before a command
    runs (:func:`run_command`, :func:`run_folder_locks`), so that :func:`release_run_locks`
    releases those it took, and no one else's."""
    return set(_RUN_LOCKS)


def release_run_locks(keep: set[str]) -> None:
    """Release the run folders' locks taken since ``keep`` (:func:`run_locks_held`, those held
    before) was noted."""
    for real in [r for r in _RUN_LOCKS if r not in keep]:
        with contextlib.suppress(OSError):
            os.close(_RUN_LOCKS.pop(real))


def start_run_folder(folder: RunFolder) -> str:
    """Start the run checked by :func:`check_run_folder`: remove the run it replaces
    (``--overwrite``: the program's outputs and the run marker; other files there stay), make
    the folder, and write its run marker (atomically; a resumed run keeps its own), which lists
    the program's outputs for the run that may one day replace this one. Returns the folder's
    path.

    The folder is locked first, and its run marker must be the one the check saw: a program
    that starts its run seconds after the check (train_jax, once JAX has started) found
    another program's run started and finished there in the meantime, and wrote its own run
    over it, without --overwrite (:class:`RefusedError` now)."""
    import json
    import shutil
    from datetime import datetime, timezone

    from ..core.atomic_files import atomic_write

    path = folder.path
    os.makedirs(path, exist_ok=True)
    _lock_run_folder(path)  # before anything there is removed or written
    if _marker_print(path) != folder.seen:  # another run started there since the check
        other = read_run_marker(path)
        who = f" ({short_repr(other['program'])})" if other else ""
        raise RefusedError(f"another run{who} started in {path!r} after this command checked "
                           "it; run the command again to check the folder anew, or name "
                           "another folder")
    if folder.replaces and os.path.isdir(path):
        import fnmatch

        removes = folder.outputs if folder.removes is None else folder.removes
        if folder.kept:
            print(f"warning: {quoted_path(path)}: kept {', '.join(map(repr, folder.kept[:3]))}"
                  f"{f' and {len(folder.kept) - 3} more' if len(folder.kept) > 3 else ''}, "
                  f"which its {RUN_MARKER} lists as the replaced run's but no run writes; "
                  "remove it yourself if it is not yours", file=sys.stderr)
        # the marker last: a removal that fails leaves the old run named as such, for
        # --overwrite to clear once it can
        for name in sorted(os.listdir(path), key=lambda name: name == RUN_MARKER):
            if removes and name != RUN_MARKER and not any(
                    fnmatch.fnmatchcase(name, pattern) for pattern in removes):
                continue  # the user's own file beside the run (notes.txt): not the run's
            entry = os.path.join(path, name)
            try:
                if os.path.isdir(entry) and not os.path.islink(entry):
                    shutil.rmtree(entry)
                else:
                    os.unlink(entry)
            except OSError as err:  # read-only, immutable: it was said to be a write of the
                # new run's, "matches already finished there are kept", with none played
                where = os.fsdecode(err.filename) if err.filename is not None else entry
                raise RefusedError(
                    f"--overwrite cannot remove the run in {quoted_path(path)} "
                    f"({quoted_path(where)}: {err.strerror or err}); part of it may be "
                    "removed already and nothing of this run was written: make it removable "
                    "and run the command again, or use another folder") from None
    os.makedirs(path, exist_ok=True)
    if folder.resumes and read_run_marker(path) is not None:
        return path
    marker = {"program": folder.program, "settings": folder.settings,
              "outputs": list(folder.outputs),
              "started": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    with atomic_write(os.path.join(path, RUN_MARKER)) as f:
        f.write(json.dumps(marker, indent=2, sort_keys=True, default=str) + "\n")
    return path


def clear_run(out: str | os.PathLike, programs: Sequence[str], *,
              proof: Callable[[str], str | None], only: Sequence[str] | None = None,
              flag: str = "out") -> list[str]:
    """Remove the run of one of ``programs`` from the folder ``out``, for a function that
    starts a run afresh (``clear_results``, ``clear_card``): the names (or ``fnmatch``
    patterns) :data:`PROGRAM_OUTPUTS` lists for the run's program (``only``: those of them;
    ``None``: all, and the run marker last), as ``--overwrite`` does; the user's other files
    stay. Returns the names removed. A link among them is removed as a link: nothing outside
    the folder is ever removed (a ``records`` link to the user's shards had them deleted).

    The folder must be such a run's: its run marker names one of ``programs``; or it has none
    (a run written before markers, or by a function that writes none) and ``proof(out)`` finds
    nothing wrong (it returns what is missing: ``"no benchmark.json"``). Anything else is a
    :class:`RefusedError` (a ``ValueError``) naming the folder, and nothing is removed: a
    symbolic link, a damaged marker, another program's run (a dataset's ``config.json`` and
    ``matches.jsonl`` went with a tournament's clear), a folder of the user's files. A folder
    that is missing or holds none of those names is left as it is."""
    import fnmatch
    import shutil
    import stat

    text = os.fspath(out)
    if not text.strip():
        raise RefusedError(f"{flag} is empty; name the run's folder")
    try:
        mode = os.lstat(text).st_mode
    except FileNotFoundError:
        return []
    if stat.S_ISLNK(mode):
        raise RefusedError(f"{flag} {text!r} is a symbolic link; name the folder itself")
    if not stat.S_ISDIR(mode):
        from ..core.atomic_files import entry_kind

        raise RefusedError(f"{flag} {text!r} is {entry_kind(mode)}, not a run's folder")
    marker, damage = _read_marker(text)
    program = marker["program"] if marker else programs[0]
    patterns = PROGRAM_OUTPUTS.get(program, ())
    ours = [name for name in sorted(os.listdir(text))
            if any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)]
    whose = " or ".join(programs)
    if damage:
        raise RefusedError(f"{flag} {text!r} holds a damaged {RUN_MARKER} ({damage}), so whose "
                           "run is there is unknown; nothing was removed")
    if marker and program not in programs:
        raise RefusedError(f"{flag} {text!r} holds a run of {short_repr(program)}, not of "
                           f"{whose}; nothing was removed")
    if not marker:
        if not ours:
            return []
        problem = proof(text)
        if problem:
            raise RefusedError(f"{flag} {text!r} is not the folder of a run of {whose} "
                               f"({problem}); nothing was removed")
    if only is not None:
        ours = [name for name in ours
                if any(fnmatch.fnmatchcase(name, pattern) for pattern in only)]
    elif marker:
        ours.append(RUN_MARKER)  # the marker last: a failed removal leaves the run named
    for name in ours:
        entry = os.path.join(text, name)
        if stat.S_ISDIR(os.lstat(entry).st_mode):
            shutil.rmtree(entry)
        else:
            os.unlink(entry)
    return ours


def keep_numeric_rows(path: str | os.PathLike) -> str | None:
    """Keep in the CSV log ``path`` (a trainer's ``eval.csv``, appended to as a run goes on)
    its header and the rows of finite numbers under it, one per column; returns the warning
    line to print where rows were dropped or the file set aside (``None``: the file is sound,
    or not there). A resume appended its rows after lines of garbage (a line cut by a kill
    mid-append, text put there, a row of NaN or infinities), and the file stayed mixed; such
    lines are dropped and the file written again from its good rows. A file whose first line
    is no header of column names cannot say which column a number is: it is kept whole beside
    (``eval.csv.damaged``) rather than cut, and the log starts again."""
    import csv

    from ..core.atomic_files import atomic_write

    if not os.path.isfile(path) or os.path.islink(path):
        return None
    with open(path, "rb") as f:
        raw = f.read()
    lines = raw.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    if not lines:  # empty: the next row starts it again, with its header
        os.remove(path)
        return None

    def fields(line: bytes) -> list[str] | None:
        try:
            return next(csv.reader([line.decode("utf-8").rstrip("\r")]))
        except (UnicodeDecodeError, csv.Error, StopIteration):
            return None

    header = fields(lines[0]) if lines else None
    if not header or not all(name.isidentifier() for name in header):  # steps, wall_s...
        return _set_aside(path, len(lines) - 1)
    bad, good = [], [lines[0]]
    for number, line in enumerate(lines[1:], 2):
        row = fields(line)
        cut = number == len(lines) and not raw.endswith(b"\n")
        if cut or row is None or len(row) != len(header) or not all(map(_is_finite, row)):
            bad.append(number)
        else:
            good.append(line)
    if not bad:
        return None
    rows = len(good) - 1
    with atomic_write(path, "wb") as f:
        f.write(b"".join(line + b"\n" for line in good))
    more = f" and {len(bad) - 1} more" if len(bad) > 1 else ""
    return (f"warning: {shown_path(path)}: line {bad[0]}{more} held no row of this run's "
            f"numbers; written again from its {rows} good row{'s' if rows != 1 else ''}")


def _set_aside(path: str | os.PathLike, lines: int) -> str:
    """Move the log ``path`` whose header is damaged to a free ``NAME.damaged`` (``.damaged.2``
    ...) beside it, whole, and say so: the rows under such a header are numbers of unknown
    columns, which neither a reader of the log nor the next appended row can place."""
    base = os.fspath(path) + ".damaged"
    aside, n = base, 1
    while os.path.lexists(aside):
        n += 1
        aside = f"{base}.{n}"
    os.rename(path, aside)
    rows = f" with the {lines} line{'s' if lines != 1 else ''} under it" if lines > 0 else ""
    return (f"warning: {shown_path(path)}: its first line is no header of column names, so "
            f"its rows cannot be read; the file is kept as {shown_path(aside)}{rows}, and the "
            "log starts again")


def _is_finite(text: str) -> bool:
    """A number a log's reader can plot: NaN, infinities and 1e400 (read as one) are not."""
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False
