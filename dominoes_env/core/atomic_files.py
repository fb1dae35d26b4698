"""Writing a file so that no reader ever sees half of it: :func:`atomic_write`.

Every file the package and its experiments write (records, replay pages, policies, checkpoints,
tournament state, datasets) goes through it: the content goes to a temporary file beside the
target, which is flushed to disk and then renamed over the target in one step (the folder's
entry flushed too). An error or an interrupt while writing leaves the old file (or none) and no
temporary file behind; the temporary file of a process killed outright (SIGKILL) is removed by
the next write of the same file (:func:`remove_stale_temporaries`).

>>> import pathlib, tempfile
>>> path = pathlib.Path(tempfile.mkdtemp()) / "note.txt"
>>> with atomic_write(path) as f:
...     _ = f.write("whole")
>>> path.read_text(), sorted(p.name for p in path.parent.iterdir())
('whole', ['note.txt'])
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import tempfile
from collections.abc import Iterator
from typing import IO, Any


def _new_file_mode() -> int:
    """The permissions a new file gets here (``0o666`` less the umask), not mkstemp's 0600."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


#: the longest file name (in bytes) a temporary file's name begins with: with the 26 bytes
#: around it (``.``, ``-tmp-``, a process id, a random part, ``.tmp``) it stays within the
#: 255 bytes most file systems allow, so that a file whose own name fits can be written
_MAX_TEMPORARY_STEM = 200


def _temporary_prefix(path: str) -> str:
    """``.NAME-tmp-``: how the temporary files of ``path`` begin (the writer's process id
    follows). A long ``NAME`` is cut, with a digest of the whole name after the cut, so that
    any file name the file system allows (240 characters, say) has a temporary name it allows.

    >>> len(_temporary_prefix("x" * 250).encode()) <= _MAX_TEMPORARY_STEM + 6
    True
    """
    name = os.path.basename(path)
    raw = name.encode("utf-8", "surrogateescape")
    if len(raw) > _MAX_TEMPORARY_STEM:
        import hashlib

        digest = hashlib.sha256(raw).hexdigest()[:16]
        name = raw[:_MAX_TEMPORARY_STEM - 17].decode("utf-8", "ignore") + "~" + digest
    return f".{name}-tmp-"


#: the errors of a write that found no room (a full disk, a quota, a file-size limit) or a
#: failing device; the system reports them without a file name
NO_ROOM_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO})


def _named(err: OSError, path: str) -> OSError:
    """``err`` with ``path`` as its file name when it is a failed write that names no file
    (:data:`NO_ROOM_ERRNOS`), so that a reader of the message learns which file it was;
    otherwise ``err`` itself."""
    if err.filename is not None or err.errno not in NO_ROOM_ERRNOS:
        return err
    return _naming(err, path)


def _naming(err: OSError, path: str) -> OSError:
    """``err`` (its type, number and reason) with ``path`` as its file name."""
    return type(err)(err.errno, err.strerror or os.strerror(err.errno), path)


def _sync_folder(folder: str) -> None:
    """Flush the folder's entry of a renamed file to disk (where the system allows it)."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:  # pragma: no cover - a folder that cannot be opened (Windows)
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover - a file system without fsync of folders
        pass
    finally:
        os.close(fd)


class FolderReplacedError(FileNotFoundError):
    """A run's folder (:func:`watch_folder`) is gone, or another folder stands at its path: it
    was removed or moved away while the run wrote into it. Said as its one line (its ``str``),
    naming the folder; nothing more is written, and the folder is never made again."""

    def __init__(self, folder: str) -> None:
        super().__init__(errno.ENOENT, f"the output folder {folder!r} was removed or replaced "
                         "while the run was writing it; what the run had written there is "
                         "lost: run it again", folder)

    def __str__(self) -> str:
        return self.strerror


#: the run folders being written (real path -> the path as named, made absolute, and the device
#: and inode of the folder the run started in): a write inside one first checks it is there
_WATCHED: dict[str, tuple[str, int, int]] = {}


def watch_folder(path: str | os.PathLike, fd: int) -> None:
    """Check, before each write inside the folder ``path`` (:func:`atomic_write`,
    :func:`appending`, :func:`writes_to`, :func:`check_folder_there`), that it is still the
    folder open as ``fd``, else :class:`FolderReplacedError`. So a run whose ``--out`` is
    removed while it runs stops saying so: it never writes on into an unlinked file, makes the
    folder again, or ends with status 0 calling the run complete. One ``stat`` a write."""
    info = os.fstat(fd)
    text = os.path.abspath(os.fspath(path))
    _WATCHED[os.path.realpath(text)] = (text, info.st_dev, info.st_ino)


def unwatch_folder(path: str | os.PathLike) -> None:
    """Stop checking the folder ``path`` (:func:`watch_folder`): its run has ended."""
    _WATCHED.pop(os.path.realpath(os.fspath(path)), None)


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def check_folder_there(path: str | os.PathLike) -> None:
    """Raise :class:`FolderReplacedError` when ``path`` lies in a run folder being written
    (:func:`watch_folder`) that is gone or another folder now: called before each write, and
    before a folder is made inside one (its ``mkdir(parents=True)`` made the removed run
    folder again)."""
    if not _WATCHED:
        return
    text = os.path.abspath(os.fspath(path))
    for real, (folder, dev, ino) in list(_WATCHED.items()):
        if not (_within(text, folder) or _within(text, real)):
            continue
        try:
            info = os.stat(folder)
        except OSError:
            raise FolderReplacedError(folder) from None
        if (info.st_dev, info.st_ino) != (dev, ino):
            raise FolderReplacedError(folder)


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):  # another user's process: alive
        return True
    return True


def remove_stale_temporaries(path: str | os.PathLike) -> list[str]:
    """Remove the temporary files an :func:`atomic_write` of ``path`` left behind when its
    process was killed (SIGKILL, a power cut) before it could rename or remove them: those of
    processes on this machine that no longer run. Returns their names. A write in progress
    (its process alive) is left alone.

    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> (folder / ".ckpt.npz-tmp-999999999-abc.tmp").write_bytes(b"half")
    4
    >>> remove_stale_temporaries(folder / "ckpt.npz"), list(folder.iterdir())
    (['.ckpt.npz-tmp-999999999-abc.tmp'], [])
    """
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    prefix = _temporary_prefix(path)
    removed = []
    try:
        names = os.listdir(folder)
    except OSError:
        return removed
    for name in names:
        if not (name.startswith(prefix) and name.endswith(".tmp")):
            continue
        pid = name[len(prefix):].split("-", 1)[0]
        if not (pid.isascii() and pid.isdigit()) or _process_alive(int(pid)):
            continue
        with contextlib.suppress(OSError):
            os.unlink(os.path.join(folder, name))
            removed.append(name)
    return removed


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike, mode: str = "w", *, overwrite: bool = True,
                 encoding: str | None = "utf-8") -> Iterator[IO]:
    """Open a temporary file beside ``path`` for writing (``mode`` ``"w"`` or ``"wb"``); when
    the ``with`` block ends without an error, flush it to disk and rename it to ``path``.
    On an error the temporary file is removed and ``path`` is untouched; a write that found
    no room (a full disk: :data:`NO_ROOM_ERRNOS`) is raised with ``path`` as its file name.

    ``overwrite=False`` never replaces an existing file: ``FileExistsError`` instead (the
    temporary file is linked to ``path``, which fails if ``path`` exists; a file system
    without hard links gets a check, then the rename)."""
    if mode not in ("w", "wb"):
        raise ValueError(f"mode must be 'w' or 'wb', not {mode!r}")
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    check_folder_there(path)
    remove_stale_temporaries(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=_temporary_prefix(path) + f"{os.getpid()}-",
                                   suffix=".tmp", dir=folder)
    except OSError as err:  # the folder is missing, read-only or full: name the file asked
        # for (the error named the temporary file, '/proc/.page.html-tmp-4242-x1y2z3.tmp')
        raise _naming(err, path) from err
    try:
        with os.fdopen(fd, mode, encoding=None if mode == "wb" else encoding) as f:
            os.fchmod(fd, _new_file_mode())
            yield f
            f.flush()
            os.fsync(f.fileno())
        check_folder_there(path)  # removed while it was written: not renamed into another
        if overwrite:
            try:
                os.replace(tmp, path)
            except OSError as err:  # path is a folder, or the like: name it, not the temporary
                raise _naming(err, path) from err
            _sync_folder(folder)
            return
        try:
            os.link(tmp, path)  # fails if path exists: no file is ever replaced
        except FileExistsError:
            raise
        except OSError:  # a file system without hard links: check, then rename
            if os.path.lexists(path):
                raise FileExistsError(errno.EEXIST, "File exists", path) from None
            os.replace(tmp, path)
        else:
            os.unlink(tmp)
        _sync_folder(folder)
    except BaseException as err:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(err, OSError) and (named := _named(err, path)) is not err:
            raise named from err
        raise


@contextlib.contextmanager
def writes_to(path: str | os.PathLike, *, check: bool = True) -> Iterator[None]:
    """A block that writes to the open file ``path`` (an append: a line to a log, a record to a
    shard); a write in it that found no room and names no file (:data:`NO_ROOM_ERRNOS`) is
    raised with ``path`` as its file name, as :func:`atomic_write` does. The block is not entered
    when ``path`` lies in a run folder removed since its run began (:func:`check_folder_there`;
    ``check=False`` for a close, which must close the file wherever it is).

    >>> with writes_to("log.jsonl"):
    ...     raise OSError(errno.ENOSPC, "No space left on device")
    Traceback (most recent call last):
    OSError: [Errno 28] No space left on device: 'log.jsonl'
    """
    if check:  # a close (check=False) closes the file even in a removed run folder
        check_folder_there(path)
    try:
        yield
    except OSError as err:
        named = _named(err, os.fspath(path))
        if named is err:
            raise
        raise named from err


@contextlib.contextmanager
def appending(path: str | os.PathLike, mode: str = "a") -> Iterator[IO]:
    """``open(path, mode)`` for appending (``"a"``, UTF-8 text, or ``"ab"``), closed at the end of
    the block; a write that found no room, there or in the close that flushes what is left, is
    raised naming ``path`` (write in :func:`writes_to` blocks inside)."""
    if mode not in ("a", "ab"):
        raise ValueError(f"mode must be 'a' or 'ab', not {mode!r}")
    check_folder_there(path)
    handle = open(path, mode, encoding=None if mode == "ab" else "utf-8")  # noqa: SIM115
    try:
        yield handle
    finally:
        with writes_to(path, check=False):
            handle.close()


def atomic_copy(source: str | os.PathLike, target: str | os.PathLike) -> None:
    """Copy the file ``source`` to ``target`` through :func:`atomic_write` (a reader of
    ``target`` sees the old file or the whole copy, never part of it)."""
    with open(source, "rb") as src, atomic_write(target, "wb") as dst:
        while chunk := src.read(1 << 20):
            dst.write(chunk)


def entry_kind(mode: int) -> str:
    """What a file system entry of the ``st_mode`` ``mode`` is, in words (``os.lstat``'s mode:
    a link is a link), for messages that refuse one: ``"a folder"``, ``"a symbolic link"``...

    >>> import stat
    >>> entry_kind(stat.S_IFDIR | 0o755), entry_kind(stat.S_IFIFO)
    ('a folder', 'a FIFO')
    """
    import stat

    for test, words in ((stat.S_ISREG, "a regular file"), (stat.S_ISDIR, "a folder"),
                        (stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a FIFO"),
                        (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                        (stat.S_ISBLK, "a block device")):
        if test(mode):
            return words
    return "not a regular file"


def check_output_path(path: str | os.PathLike, *, name: str = "path",
                      overwrite: bool = True) -> str:
    """The output policy of the library's file writers (records, policies), checked before
    anything is written; returns ``path`` as text. ``path`` is a new file or an existing
    regular one: a symbolic link, a folder, a device, a FIFO or a socket is a ``ValueError``
    naming ``name`` (:func:`atomic_write`'s rename would put a regular file in its place,
    replacing a device node such as ``/dev/full``, a FIFO or the link itself); with
    ``overwrite=False`` an existing file is a ``FileExistsError``; a non-path a ``TypeError``.

    >>> check_output_path("/dev/null")
    Traceback (most recent call last):
    ...
    ValueError: path '/dev/null' is a character device; name a regular file
    """
    import stat

    try:
        text = os.fsdecode(path)
    except TypeError:
        raise TypeError(f"{name} must be a str, bytes or os.PathLike, not "
                        f"{type(path).__name__}") from None
    if not text.strip():
        raise ValueError(f"{name} is empty; name a file")
    if "\0" in text:  # the system's "embedded null byte" named neither path nor parameter
        raise ValueError(f"{name} {text!r} holds a null character; no path can")
    try:
        mode = os.lstat(text).st_mode
    except OSError:  # nothing there (or its folder missing: the write names that)
        return text
    if stat.S_ISLNK(mode):
        raise ValueError(f"{name} {text!r} is a symbolic link; name the file itself")
    if not stat.S_ISREG(mode):
        raise ValueError(f"{name} {text!r} is {entry_kind(mode)}; name a regular file")
    if not overwrite:
        raise FileExistsError(errno.EEXIST, "the file exists; pass overwrite=True to replace "
                              "it", text)
    return text


def path_kind(path: str | os.PathLike) -> str:
    """What ``path`` itself is, in words (:func:`entry_kind` of its ``os.lstat``), for a
    message that refuses it where a regular file was wanted: ``"a folder"`` said as such, not
    "not a regular file (a link, a FIFO or a device)"; ``"missing"`` when there is nothing."""
    try:
        return entry_kind(os.lstat(path).st_mode)
    except FileNotFoundError:
        return "missing"
    except OSError as err:
        return f"unreadable ({err.strerror or err})"


def write_json(path: str | os.PathLike, data: Any, *, overwrite: bool = True,
               indent: int = 2, sort_keys: bool = False) -> None:
    """``data`` as JSON (``indent``, a newline at the end) in the file ``path``, written
    atomically (:func:`atomic_write`): a reader sees the old file or the whole new one.

    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     write_json(pathlib.Path(d, "a.json"), {"b": 1}, indent=None)
    ...     pathlib.Path(d, "a.json").read_text()
    '{"b": 1}\\n'
    """
    text = json.dumps(data, indent=indent, sort_keys=sort_keys)
    with atomic_write(path, overwrite=overwrite) as f:
        f.write(text + "\n")


def file_sha256(path: str | os.PathLike) -> str:
    """The sha256 of the file at ``path`` in hex, read a megabyte at a time (``OSError`` when
    it cannot be read).

    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = pathlib.Path(d, "f").write_bytes(b"abc")
    ...     file_sha256(pathlib.Path(d, "f"))[:16]
    'ba7816bf8f01cfea'
    """
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()
