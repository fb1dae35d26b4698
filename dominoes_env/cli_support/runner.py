"""The command runner: one-line errors and clean exits, what every command line shares.

:func:`run_command` runs a command's body and turns the ways a command can end badly into one
line on stderr and an exit status, never a traceback:

- ``Ctrl-C`` (``KeyboardInterrupt``): ``interrupted`` and status 130; SIGTERM and SIGHUP (a
  closed terminal) are raised as :class:`Stopped` where the command is, so what saves work on a
  Ctrl-C saves it on them too: ``stopped by SIGTERM`` (143), ``stopped by SIGHUP`` (129); a
  stop that a library turned into another exception (XLA's compiler, C code calling back into
  Python) ends the same way;
- standard output closed early (``| head``) or full (``> /dev/full``): the command does its
  work to the end (a trainer trains on), then one line, status 2, and no second complaint
  when Python flushes its streams on exit;
- :class:`CommandError` (and the exception types a command lists): ``error: <message>``,
  status 2.

Beside it is what running a command takes: the standard streams for the length of a command
(:class:`QuietStream`) and :func:`print_error`; the stop signals (:class:`Stopped`,
:func:`stop_on_signals`, :func:`stop_status` and :func:`stop_note` for a command that saves its
work on a stop, :class:`TrainingStopped` and :func:`end_stopped_training` for a trainer's;
:func:`signals_held` holds them while a checkpoint is written;
:func:`say_finished` ignores them after a command's last line); and :func:`end_program`, how a
``python -m`` program ends. The run folders' locks that the runner releases and the JAX
start-up check it installs belong to their own modules (:mod:`.run_folders`,
:mod:`.jax_start`), which do not import the runner.
"""

from __future__ import annotations

import errno
import os
import re
import sys
from collections.abc import Callable
from typing import Any

from ..core.atomic_files import NO_ROOM_ERRNOS, FolderReplacedError
from .errors import CommandError
from .jax_start import check_jax_start, jax_cannot_start
from .run_folders import release_run_locks, run_locks_held


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
    Standard error carries progress bars and notes, never the work, so a progress bar's failed
    write stops no training, no tournament, and no finished run's last line. A trainer's
    standard output carries its progress lines: under ``train_jax ... | head -c1`` the training
    goes on to its checkpoint; the runner lets the command end its work and then says, on one
    line, that the output was lost. Everything else is the wrapped stream's (``isatty``,
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
    if isinstance(err, UnicodeEncodeError):  # a ValueError, but the output is not closed
        return (f"standard output's encoding ({err.encoding}) cannot write "
                f"{err.object[err.start:err.end]!r}; the output was not written in full")
    if isinstance(err, OSError):
        return output_error_message(err)
    return "standard output was closed before the output was written"


#: the longest word (a run of characters without a space) an error line shows whole: a
#: value the line quotes (``--agents X``, ``--players X``, ``replay X``) is cut to its first
#: and last characters past it (so a 100,000-character value never makes a 100 KB line)
WORD_LIMIT = 500


def cut_long_words(text: str, limit: int = WORD_LIMIT) -> str:
    """``text`` with each word longer than ``limit`` characters cut to its first and last
    characters, saying how many were cut.

    >>> cut_long_words("bad value '" + "x" * 50 + "'", limit=20)
    "bad value 'xxxxxxxxxxxxx...(34 characters cut)...xxx'"
    """
    def cut(match: Any) -> str:
        word = match.group(0)
        head, tail = limit * 3 // 4 - 1, limit // 4 - 1
        return f"{word[:head]}...({len(word) - head - tail:,} characters cut)...{word[-tail:]}"

    return re.sub(rf"\S{{{limit + 1},}}", cut, text)


def print_error(message: str) -> None:
    """``error: <message>`` on stderr, on one line, its over-long words cut
    (:func:`cut_long_words`)."""
    text = cut_long_words(" ".join(str(message).split())) or "unknown error"
    if not text.isprintable():  # a name's escape sequence would reach the terminal as is
        text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    try:
        print(f"error: {text}", file=sys.stderr, flush=True)
    except (OSError, ValueError):  # pragma: no cover - stderr closed too
        pass


def output_error_message(err: OSError) -> str:
    if isinstance(err, BrokenPipeError) or err.errno == errno.EPIPE:
        return "standard output was closed before the output was written"
    if err.errno == errno.EBADF:  # >&-: closed before the program started
        return "standard output is closed; the output was not written"
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


class TrainingStopped(Exception):
    """A Ctrl-C, SIGTERM or SIGHUP (``stop``: the ``KeyboardInterrupt`` or :class:`Stopped`)
    ended a trainer's training (``train_jax``, ``train_ppo``, ``train_rllib``) after it saved
    the run in the folder ``out`` and exported its policy (``policy.npz`` + ``policy.json``,
    which says ``"stopped"``); the trainer's ``main`` then ends with the stop's status (130,
    143 or 129) and one line saying what was kept (:func:`end_stopped_training`).

    ``export_error``: why the policy could not be exported (its weights are not finite: the
    run is saved, its policy not written), else ``None``. ``nothing_saved``: the stop came
    before there was anything to save (``train_rllib`` before its first iteration ended), so
    nothing was saved or exported.

    >>> stopped = TrainingStopped("runs/a", KeyboardInterrupt())
    >>> str(stopped.out), stopped.export_error, stopped.nothing_saved
    ('runs/a', None, False)
    >>> str(stopped)
    "interrupted; the run in 'runs/a' is saved and its policy exported"
    """

    def __init__(self, out: str | os.PathLike, stop: KeyboardInterrupt,
                 export_error: str | None = None, nothing_saved: bool = False) -> None:
        super().__init__(out, stop, export_error, nothing_saved)  # a copy (pickle) rebuilds it
        from pathlib import Path

        self.out = Path(out)
        self.stop = stop
        self.export_error = export_error
        self.nothing_saved = nothing_saved

    def __str__(self) -> str:
        words = stop_status(self.stop)[1]
        if self.nothing_saved:
            return f"{words}; nothing of the run in {str(self.out)!r} was saved"
        policy = (f"its policy not exported ({self.export_error})" if self.export_error
                  else "its policy exported")
        return f"{words}; the run in {str(self.out)!r} is saved and {policy}"


def _say_stopped(stop: KeyboardInterrupt, kept: str | None) -> int:
    """One line for a command that ``stop`` ended, ``error: <how it stopped>; <kept>`` (only
    the first part without ``kept``), what the stop left half-built kept quiet
    (:func:`quiet_teardown`); returns the stop's status (:func:`stop_status`)."""
    quiet_teardown()
    status, words = stop_status(stop)
    print_error(f"{words}; {kept}" if kept else words)
    return status


def end_stopped_training(stopped: TrainingStopped, kept: str) -> int:
    """How a trainer's ``main`` ends on :class:`TrainingStopped`: one line on stderr, ``error:
    interrupted; <kept>`` (``stopped by SIGTERM``, ``stopped by SIGHUP``), ``kept`` being the
    trainer's words for what it kept and how to go on (each trainer says it its own way, from
    ``stopped``'s fields); returns the exit status, 130, 143 or 129. It is the line
    :func:`run_command` prints for a stop marked by :func:`stop_note`."""
    return _say_stopped(stopped.stop, kept)


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


#: error modes that already write something for every character (``surrogateescape`` does not:
#: it writes back only the undecodable bytes of a file name, and fails on the pictures' ``·``)
_TOLERANT_ERRORS = frozenset({"replace", "backslashreplace", "xmlcharrefreplace", "namereplace",
                              "ignore"})


def _or_replace(mode: str) -> str:
    """The name of an error handler that does what ``mode`` does where it can and writes ``?``
    where it cannot (registered on first use): in the C locale Python writes standard output
    with ``surrogateescape``, which keeps a file name's undecodable bytes as they were but
    fails on the pictures' ``·``; switching it to plain ``replace`` would turn those bytes
    into ``?`` too. ``strict`` is plain ``replace``."""
    import codecs

    if mode == "strict":
        return "replace"
    name = f"dominoes_env.{mode}_or_replace"
    try:
        codecs.lookup_error(name)
    except LookupError:
        first = codecs.lookup_error(mode)

        def handler(err: UnicodeError) -> tuple[str | bytes, int]:
            if not isinstance(err, UnicodeEncodeError):
                raise err
            try:  # one character at a time: the next one may be one ``mode`` writes
                return first(UnicodeEncodeError(err.encoding, err.object, err.start,
                                                 err.start + 1, err.reason))[0], err.start + 1
            except UnicodeError:
                return "?", err.start + 1

        codecs.register_error(name, handler)
    return name


def _tolerant_output() -> None:
    """A standard output (or error) whose encoding cannot write every character
    (``PYTHONIOENCODING=ascii``, an ASCII or cp1252 terminal, the C locale) shows ``?`` for the
    pictures' ``·`` and the tables' ``±`` instead of stopping the command with a
    ``UnicodeEncodeError`` traceback. Every error mode that is not already tolerant is
    switched, the C locale's ``surrogateescape`` too (it fails on ``·`` as ``strict`` does), so
    ``play``, ``replay`` and the tournament write their whole output."""
    import codecs

    for stream in (sys.stdout, sys.stderr):
        try:
            if codecs.lookup(stream.encoding).name != "utf-8" \
                    and stream.errors not in _TOLERANT_ERRORS:
                stream.reconfigure(errors=_or_replace(stream.errors))
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
    handlers back), so a Ctrl-C that lands just after the line (the demo's "demo finished ...;
    results in X") leaves the finished run's status as it is; one that lands before this line
    is printed still stops the command, saying so."""
    _ignore_signals("SIGINT", "SIGTERM", "SIGHUP")
    print(line, file=sys.stdout if file is None else file)


class HeldSignals:
    """Ctrl-C, SIGTERM and SIGHUP held while the ``with`` block runs, and delivered where the
    program chooses: at :meth:`deliver` (a safe point of a loop), or when the block ends.
    Delivered means passed to the handler the signal would have met, so a Ctrl-C raises
    ``KeyboardInterrupt`` and the runner's SIGTERM / SIGHUP raise :class:`Stopped` there, as
    they would have where the signal came. Once a stop is delivered, later signals are dropped
    until the block ends (the runner drops a second SIGTERM the same way, and a second Ctrl-C
    never cuts short the save that follows a stop). :func:`signals_held` makes one.

    Unheld, Python raises a signal's exception wherever the main thread happens to be: inside
    torch's zip writer (which then raises its own ``RuntimeError``, "unexpected pos", in place
    of the interruption: a traceback, status 1, half a checkpoint), or inside JAX's or
    TensorBoard's Python code while they hold a lock that the save after the stop needs again
    (``train_jax`` sent SIGTERM would then never end: nothing printed after 300 s). Held, it
    is raised only in the program's own code. Outside the main thread (where handlers cannot
    be set) nothing is held."""

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
        try:
            status = body()
        except Exception as err:  # re-raised below unless a stop caused it
            stop = _stop_behind(err, errors)
            if stop is None:
                raise
            raise stop from err
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
        return _say_stopped(stop, getattr(stop, "kept", None))
    except CommandError as err:
        print_error(str(err))
        return 2
    except OSError as err:
        if isinstance(err, FolderReplacedError):  # its own line names the folder
            print_error(str(err))
            return 2
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
            # (train_jax's --out removed mid-run): one line, not a traceback
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


def _stop_behind(err: Exception,
                 errors: tuple[type[BaseException], ...]) -> KeyboardInterrupt | None:
    """The stop that ``err`` is the consequence of, or ``None``: where a stop signal came while
    the command ran, an exception other than a command's own one-line errors (``CommandError``,
    ``errors``, ``OSError``, which say what they say) is how the stop surfaced in someone else's
    code. A Ctrl-C raised inside a library's C++ (XLA compiling: a JAX-filtered traceback and
    status 1, once in a fresh clone's suite) or inside a Python callback that C code calls comes
    back as another exception, often with the ``KeyboardInterrupt`` as its cause; the command
    ends as the stop would have: one line, the stop's status."""
    from ..startup import first_stop_signal

    if isinstance(err, (CommandError, OSError, *errors)):
        return None
    signum = first_stop_signal()
    if signum is None:
        return None
    link: BaseException | None = err
    visited = set()
    while link is not None and id(link) not in visited:  # the interruption, where it was kept
        if isinstance(link, KeyboardInterrupt):
            return link
        visited.add(id(link))
        link = link.__cause__ or link.__context__
    import signal

    return KeyboardInterrupt() if signum == signal.SIGINT else Stopped(signum)


def _file_named(err: OSError) -> str | None:
    """The name of the file ``err`` is about, or ``None`` where it names none. An error of a
    file opened by its descriptor carries the descriptor (an ``int``) as its file name (a run
    folder whose ``run.json`` is a folder): it is named as the descriptor,
    ``<file descriptor N>``, never decoded as a path."""
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


def end_program(status: int) -> None:
    """End a ``python -m`` program with ``status`` (its ``if __name__ == "__main__"`` line).

    A program stopped by a signal (status 129, 130, 143) after JAX has started ends at once,
    its output flushed, without the interpreter's teardown: a Ctrl-C that lands while XLA
    compiles leaves XLA's threads at work, and a teardown beside them ends in a segmentation
    fault (status -11 after ``error: interrupted``) in about a third of such ``bench_jax`` runs
    (measured). Every other ending is ``sys.exit(status)``.

    A stopped program ignores further Ctrl-C, SIGTERM and SIGHUP while it ends: a second
    Ctrl-C 20 ms after the first (a terminal sends it to the workers too) would land in the
    teardown and kill the program (status -2) after it said how it had stopped. So does a
    program that ended otherwise: it has said how it ended too, and a Ctrl-C in its teardown
    (Python puts the signals' default actions back as it starts tearing down: only an ignored
    signal stays ignored) would kill it (status 130 in the shell) after its last line (the
    demo's "demo finished")."""
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
    from ..startup import stdout_closed_by_caller

    if isinstance(err, BrokenPipeError):
        return True
    if err.errno == errno.EBADF and err.filename is None and stdout_closed_by_caller():
        return True
    if (err.errno == errno.EPIPE or err.errno in NO_ROOM_ERRNOS) and err.filename is None:
        return True
    return False
