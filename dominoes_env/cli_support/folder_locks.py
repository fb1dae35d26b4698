"""The locks that keep two processes out of one run folder (``fcntl.flock`` on the folder).

:func:`lock_run_folder` takes one as a run starts there (:func:`start_run_folder`), and
:func:`written_by_another` tells whether another process holds one (:func:`being_written` is
the refusal that says so); :func:`run_locks_held` and :func:`release_run_locks` release, when
a command returns (:func:`run_command`), those it took, and :func:`run_folder_locks` does the
same for a function that starts a run of its own. A file system without locks is not locked."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

from ..core.atomic_files import unwatch_folder, watch_folder
from .errors import RefusedError

#: the run folders this process writes into, locked (realpath -> the folder's open fd)
_RUN_LOCKS: dict[str, int] = {}


def being_written(path: str) -> str:
    """The refusal of the run folder ``path``, which another process is writing now
    (:func:`written_by_another`)."""
    return (f"the run folder {path!r} is being written by another run (a process still "
            "running); wait for it to end, or name another folder")


def written_by_another(real: str) -> bool:
    """Whether another process holds the run folder ``real`` locked (:func:`lock_run_folder`):
    its run is being written now. The lock is tried shared and let go at once."""
    if real in _RUN_LOCKS:  # this process's own run
        return False
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not on POSIX
        return False
    try:
        fd = os.open(real, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:  # pragma: no cover - no locks on this file system
        return False
    finally:
        os.close(fd)  # closing lets the shared lock go
    return False


def lock_run_folder(path: str) -> None:
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
        raise RefusedError(being_written(path)) from None
    except OSError:  # pragma: no cover - no locks on this file system
        os.close(fd)
        return
    _RUN_LOCKS[real] = fd
    watch_folder(path, fd)  # each write checks the folder is still there (removed: it stops)


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
        unwatch_folder(real)
        with contextlib.suppress(OSError):
            os.close(_RUN_LOCKS.pop(real))
