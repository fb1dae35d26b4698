"""Writing a file so that no reader ever sees half of it: :func:`atomic_write`.

Every file the package and its experiments write (records, replay pages, policies, checkpoints,
tournament state, datasets) goes through it: the content goes to a temporary file beside the
target, which is flushed to disk and then renamed over the target in one step. An error or an
interrupt while writing leaves the old file (or none) and no temporary file behind.

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
import os
import tempfile
from collections.abc import Iterator
from typing import IO


def _new_file_mode() -> int:
    """The permissions a new file gets here (``0o666`` less the umask), not mkstemp's 0600."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike, mode: str = "w", *, overwrite: bool = True,
                 encoding: str | None = "utf-8") -> Iterator[IO]:
    """Open a temporary file beside ``path`` for writing (``mode`` ``"w"`` or ``"wb"``); when
    the ``with`` block ends without an error, flush it to disk and rename it to ``path``.
    On an error the temporary file is removed and ``path`` is untouched.

    ``overwrite=False`` never replaces an existing file: ``FileExistsError`` instead (the
    temporary file is linked to ``path``, which fails if ``path`` exists; a file system
    without hard links gets a check, then the rename)."""
    if mode not in ("w", "wb"):
        raise ValueError(f"mode must be 'w' or 'wb', not {mode!r}")
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}-", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, mode, encoding=None if mode == "wb" else encoding) as f:
            os.fchmod(fd, _new_file_mode())
            yield f
            f.flush()
            os.fsync(f.fileno())
        if overwrite:
            os.replace(tmp, path)
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
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
