"""What a ``python -m`` program of the project does before its own imports run.

A program's imports take a second or two (numpy, JAX, torch), before any command can catch a
``KeyboardInterrupt``. A Ctrl-C in that time ends the program with one line and status 130, as
the shared runner ends an interrupted command (:func:`dominoes_env.cli_support.run_command`),
not with Python's traceback: the package's ``sys.excepthook`` does that. It is installed when the
package is imported while Python looks for the module ``-m`` names (``sys.argv[0]`` is
``"-m"`` then) and that module is one of the project's programs (:func:`started_by_python_m`:
a module of ``dominoes_env``, ``agents`` or ``experiments``, read from ``sys.orig_argv``), so
never in a program that only imports the package, nor in another package's ``python -m``
program that imports it, and first of all, in
``dominoes_env/__init__.py`` itself: until then a Ctrl-C is Python's traceback, a window kept
as short as can be (Python's own start, then loading ``experiments/__init__.py`` and
``dominoes_env/__init__.py``). :func:`quiet_interrupt_at_startup` adds
:func:`redeliver_lost_interrupts`, so that a Ctrl-C that lands in a finalizer is not lost,
and :func:`defer_interrupts_in_imports`, so that one that lands in a library's import code is
not swallowed there.

This module is the package's first import and imports nothing but ``sys`` itself (whatever
else it uses is imported inside the function that uses it): ``importlib.abc`` alone takes
about 8 ms to import (typing, tempfile, shutil).
"""

from __future__ import annotations

import sys  # and nothing else here: see the module's docstring

TYPE_CHECKING = False  # typing itself is an import of a few milliseconds
if TYPE_CHECKING:
    from typing import Any


def quiet_interrupt_at_startup() -> None:
    """What comes with the package's one-line ``KeyboardInterrupt`` (its ``sys.excepthook``,
    installed before this module is loaded): a Ctrl-C is neither lost in a finalizer
    (:func:`redeliver_lost_interrupts`) nor swallowed by a library's import code
    (:func:`defer_interrupts_in_imports`)."""
    defer_interrupts_in_imports()
    if not getattr(sys.unraisablehook, "redelivers", False):
        sys.unraisablehook = redeliver_lost_interrupts(sys.unraisablehook)


def redeliver_lost_interrupts(previous):
    """An unraisable-exception hook (``sys.unraisablehook``) that does not lose a Ctrl-C.

    A ``KeyboardInterrupt`` that SIGINT's handler raises while Python runs a finalizer or a gc
    callback (JAX's ``_xla_gc_callback``, often, while XLA compiles) cannot propagate: Python
    would print "Exception ignored in ..." and run on to its end (status 0). This hook
    sends the signal again from a thread once the hook has returned (sent while the hook still
    runs, its handler would raise inside the hook and be lost again: the thread waits for the
    hook to end, however slowly a busy machine runs it, then a moment more), so that it lands
    after the callback, or comes back here. A ``KeyboardInterrupt`` with a ``signum`` (the
    shared runner's ``Stopped``: SIGTERM, SIGHUP) is sent as that signal. Other exceptions go
    to ``previous``.

    The hook's ``retire()`` drops the signals it has not sent yet: the shared runner retires its
    hook when the command returns, so that a Ctrl-C lost in the command's last milliseconds
    does not reach whatever runs next in the process (in a test session, the next test and the
    session itself, which a SIGINT sent then would stop)."""
    import os
    import signal
    import threading
    import time

    owner = os.getpid()
    running = threading.Event()  # set while the hook runs in the main thread
    retired = threading.Event()

    def send_again(signum: int) -> None:
        while running.is_set():
            time.sleep(0.001)
        time.sleep(0.01)
        if not retired.is_set():
            os.kill(owner, signum)

    def hook(info) -> None:
        if isinstance(info.exc_value, KeyboardInterrupt) and os.getpid() == owner:
            running.set()
            try:
                signum = getattr(info.exc_value, "signum", signal.SIGINT)
                # daemon: never holds the interpreter's exit
                threading.Thread(target=send_again, args=(signum,), daemon=True).start()
            except RuntimeError:  # pragma: no cover - no new thread at interpreter shutdown
                pass
            finally:
                running.clear()
            return
        previous(info)

    hook.redelivers = True  # type: ignore[attr-defined]
    hook.retire = retired.set  # type: ignore[attr-defined]
    return hook


def defer_interrupts_in_imports() -> Any:
    """Install :func:`interrupts_outside_imports` for SIGINT where Python's own handler is
    set (not where SIGINT is ignored, or handled by someone else); returns the handler it
    installed, or ``None``."""
    import signal

    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        return None
    handler = interrupts_outside_imports()
    signal.signal(signal.SIGINT, handler)
    return handler


def interrupts_outside_imports():
    """A SIGINT handler that raises ``KeyboardInterrupt`` as Python's own does, except while the
    main thread is importing a module: there the Ctrl-C waits until the import has ended.

    Code run by an import is not ours, and some of it swallows any exception: every Cython
    module with typed memoryviews (``numpy.random``, which numpy imports on first use, and many
    more) registers its types with ``collections.abc.Sequence`` in a bare ``try/except: pass``,
    so a Ctrl-C that lands there in the first 10 ms of ``np.random.default_rng`` would vanish
    and the program would run on to its end (measured: 1 of 40 timed tries). Where the main
    thread is importing, the handler starts a thread that sends the signal again once no
    import is left on the main thread's stack; a second Ctrl-C while it waits is raised at
    once (an import that never ends cannot hold the program).

    The handler's ``retire()`` drops a Ctrl-C still waiting: the shared runner retires it when
    its command returns, so that the signal does not reach whatever the process runs next."""
    import os
    import threading
    import time

    lock = threading.RLock()  # RLock: a second Ctrl-C may run the handler inside the first
    waiting = []  # the process id that has a Ctrl-C waiting for an import to end

    def importing(frame) -> bool:
        while frame is not None:
            if frame.f_code.co_filename.startswith("<frozen importlib."):
                return True
            frame = frame.f_back
        return False

    def send_after_import(signum: int, owner: int) -> None:
        main = threading.main_thread().ident
        while importing(sys._current_frames().get(main)):
            time.sleep(0.005)
            if waiting != [owner]:  # raised at once by a second Ctrl-C
                return
        with lock:
            if waiting == [owner]:
                waiting.clear()
                os.kill(owner, signum)

    def handler(signum, frame):
        with lock:
            if importing(frame) and waiting != [os.getpid()]:
                waiting[:] = [os.getpid()]
                threading.Thread(target=send_after_import, args=(signum, os.getpid()),
                                 daemon=True).start()  # daemon: never holds the exit
                return
            waiting.clear()
        raise KeyboardInterrupt

    def retire() -> None:
        with lock:
            waiting.clear()

    handler.retire = retire  # type: ignore[attr-defined]
    return handler


#: the stop signals (SIGINT, SIGTERM, SIGHUP) delivered since a command began watching them
#: (:func:`watch_stop_signals`); ``None`` while no command watches
_STOPS_CAME: list[int] | None = None


def watch_stop_signals() -> Any:
    """Note every Ctrl-C that reaches this process from now on (SIGINT's handler, if it is a
    Python function, is wrapped; SIGTERM and SIGHUP are noted by the shared runner's own
    handler: :func:`note_stop_signal`), for :func:`stop_signal_came`. Returns the function
    that ends the watch and puts the handler back. The shared runner watches while a command
    runs."""
    import signal
    import threading

    global _STOPS_CAME
    before_came = _STOPS_CAME
    _STOPS_CAME = []
    if threading.current_thread() is not threading.main_thread():
        handler = None
    else:
        old = signal.getsignal(signal.SIGINT)

        def handler(signum, frame):
            note_stop_signal(signum)
            return old(signum, frame)

        if callable(old):
            signal.signal(signal.SIGINT, handler)
        else:  # ignored, or the default (the process dies of it): no Ctrl-C is raised
            handler = None

    def stop_watching() -> None:
        global _STOPS_CAME
        if handler is not None and signal.getsignal(signal.SIGINT) is handler:
            signal.signal(signal.SIGINT, old)
        _STOPS_CAME = before_came

    return stop_watching


def note_stop_signal(signum: int) -> None:
    """Note that the stop signal ``signum`` came (where a command watches)."""
    if _STOPS_CAME is not None:
        _STOPS_CAME.append(signum)


def first_stop_signal() -> int | None:
    """The first stop signal (SIGINT, SIGTERM, SIGHUP) that came since the running command began
    watching (:func:`watch_stop_signals`); ``None`` where none came or none watches."""
    return _STOPS_CAME[0] if _STOPS_CAME else None


def stop_signal_came() -> bool:
    """Whether a ``KeyboardInterrupt`` caught now may be a real stop: a stop signal came since
    the running command began watching (:func:`watch_stop_signals`), or none watches (a
    library's caller: every ``KeyboardInterrupt`` is then taken for a Ctrl-C). An agent whose
    ``act()`` raises ``KeyboardInterrupt`` itself, with no signal, is the agent's error, not a
    Ctrl-C."""
    return _STOPS_CAME is None or bool(_STOPS_CAME)


def fill_closed_standard_streams() -> None:
    """Standard input, output or error closed by the caller (``<&-``, ``>&-``, ``2>&-``): their
    file descriptor (0, 1, 2) gets ``/dev/null``, so that no file the program opens takes it (a
    file on descriptor 1 received what a child process printed). ``sys.stdin`` and
    ``sys.stderr`` (``None`` then) get a stream on it: the program reads the end of its input,
    and its messages are dropped. ``sys.stdout`` gets :func:`closed_output`, whose writes fail
    as a closed descriptor's do (``EBADF``), so a program whose output is lost says so (one line,
    status 2, as with ``| head -c1``) instead of ending with status 0 and nothing written; and
    an error line with stderr closed is dropped, never written to stdout (``print(file=None)``
    writes there)."""
    import os

    for fd, flags in ((0, os.O_RDONLY), (1, os.O_WRONLY), (2, os.O_WRONLY)):
        try:
            os.fstat(fd)
        except OSError:  # closed: the lowest free descriptor is this one
            try:
                new = os.open(os.devnull, flags)
            except OSError:  # pragma: no cover - no /dev/null
                continue
            if new != fd:  # pragma: no cover - a lower one is closed and failed to open
                os.dup2(new, fd)
                os.close(new)
    for fd, name, mode in ((0, "stdin", "r"), (1, "stdout", "w"), (2, "stderr", "w")):
        if getattr(sys, name) is None:
            if name == "stdout":
                global _STDOUT_CLOSED
                _STDOUT_CLOSED = True
                sys.stdout = closed_output()
                continue
            try:
                setattr(sys, name, open(fd, mode, encoding="utf-8", closefd=False))
            except OSError:  # pragma: no cover - the descriptor could not be filled
                pass


_STDOUT_CLOSED = False


def stdout_closed_by_caller() -> bool:
    """Whether the program was started with its standard output closed (``>&-``)."""
    return _STDOUT_CLOSED


def closed_output() -> Any:
    """A text stream for a standard output the caller closed (``>&-``): every write raises
    ``OSError(EBADF)``, as writing to a closed descriptor does; flushing it (at exit) is quiet,
    as nothing is ever held."""
    import errno
    import io

    class ClosedOutput(io.TextIOBase):
        encoding = "utf-8"
        errors = "strict"

        def writable(self) -> bool:
            return True

        def write(self, text: str) -> int:
            raise OSError(errno.EBADF, "standard output is closed")

        def fileno(self) -> int:
            return 1

    return ClosedOutput()


def refuse_a_removed_working_directory() -> None:
    """End the program with one line and status 2 when its working directory no longer exists
    (removed while a shell stood in it): its relative paths lead nowhere, and importing torch
    there killed the process with "Intel oneMKL FATAL ERROR: Cannot load libtorch_cpu.so"
    (status 2, no error line), before any command could say why."""
    import os

    try:
        os.getcwd()
    except FileNotFoundError:
        try:
            print("error: the working directory no longer exists (it was removed); cd to a "
                  "folder that exists", file=sys.stderr, flush=True)
        except (OSError, ValueError, AttributeError):  # pragma: no cover - no stderr
            pass
        raise SystemExit(2) from None


#: the packages whose modules are the project's ``python -m`` programs (``python -m
#: dominoes_env``, ``python -m experiments.tournament``, ...)
PROGRAM_PACKAGES = ("dominoes_env", "agents", "experiments")


def program_run_by_python_m() -> str | None:
    """The module ``python -m`` is looking for, while this import happens inside that search
    (``sys.argv`` is ``["-m", *args]`` then), read from the command line Python was started
    with (``sys.orig_argv``: ``-m NAME``, ``-mNAME``, ``-um NAME``, after any other option);
    ``None`` at any other time."""
    argv, orig = sys.argv, getattr(sys, "orig_argv", None)
    if argv[:1] != ["-m"] or not orig:
        return None
    at = len(orig) - len(argv)  # the word that names the module: NAME, or -mNAME / -umNAME
    if at < 1 or orig[at + 1:] != argv[1:]:
        return None  # sys.argv was changed (not Python's own -m search)
    word = orig[at]
    if word.startswith("-"):  # the name glued to its option: -mNAME, -umNAME
        if word.startswith("--") or "m" not in word:
            return None
        name = word[word.index("m") + 1:]
    else:  # -m NAME (or -um NAME): the option is the word before
        before = orig[at - 1]
        if not (before.startswith("-") and not before.startswith("--") and before.endswith("m")):
            return None
        name = word
    return name if name and all(part.isidentifier() for part in name.split(".")) else None


def started_by_python_m() -> bool:
    """Whether this import happens while ``python -m`` looks for one of the project's own
    programs (a module of :data:`PROGRAM_PACKAGES`: :func:`program_run_by_python_m`). A user's
    ``python -m mylab.train``, whose ``mylab/__init__.py`` imports the package while Python
    looks for ``mylab.train``, is not one: its hooks, handlers and streams are left alone; nor
    is a user's own top-level package that happens to be called ``experiments`` or ``agents``
    (the package must lie beside this one, where the project's packages are installed)."""
    name = program_run_by_python_m()
    if name is None:
        return False
    top = name.partition(".")[0]
    if top not in PROGRAM_PACKAGES:
        return False
    if top == __name__.partition(".")[0]:
        return True
    package = getattr(sys.modules.get(top), "__file__", None)  # being imported: __file__ is set
    return isinstance(package, str) and _folder_above(package) == _folder_above(__file__)


def _folder_above(path: str) -> str:
    """The folder that holds the package of the module file ``path`` (``/x/pkg/mod.py`` ->
    ``/x``), with either separator (``os`` is not imported here)."""
    for _ in range(2):
        path = path[:max(path.rfind("/"), path.rfind("\\"), 0)]
    return path
