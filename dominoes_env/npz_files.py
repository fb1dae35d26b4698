"""Reading ``.npz`` files (exported policies, decision datasets) as untrusted input.

:func:`read_npz` checks the archive before numpy reads an array from it: every member is a
``.npy`` array of plain numbers (an object array would be a pickle, which can run code: never
loaded), whose header declares exactly the bytes the member holds (a header that declares a
terabyte is refused before numpy allocates it), and the members together expand to at most
``max_bytes`` (a zip bomb stops there: the archive's declared sizes bound what is read, and
its checksums are checked), and no member name appears twice (numpy reads the last such
member, other zip readers the first). Anything else is one :class:`NpzError` saying what is
wrong; the callers name the file.

>>> import numpy as np, os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "a.npz")
>>> np.savez(path, x=np.arange(3), y=np.array([{"code": 1}], dtype=object))
>>> read_npz(path, max_bytes=1 << 20)
Traceback (most recent call last):
...
dominoes_env.npz_files.NpzError: y holds Python objects (a pickle, which is never loaded)
>>> np.savez(path, x=np.arange(3))
>>> read_npz(path, max_bytes=1 << 20)["x"].tolist()
[0, 1, 2]
"""

from __future__ import annotations

import math
import os
import zipfile
import zlib
from collections.abc import Collection
from pathlib import Path

import numpy as np

__all__ = ["NpzError", "read_npz"]

_NPY_MAGIC = b"\x93NUMPY"
#: what reading a damaged archive can raise (zipfile and numpy's own readers)
_READ_ERRORS = (OSError, ValueError, EOFError, KeyError, RuntimeError, NotImplementedError,
                zipfile.BadZipFile, zlib.error)  # fmt: skip


class NpzError(ValueError):
    """An ``.npz`` file that is not read: the message says why (the caller names the file)."""


def _reason(err: BaseException) -> str:
    return " ".join(str(err).split())[:120] or type(err).__name__


def _header(fp) -> tuple[tuple[int, ...], np.dtype]:
    version = np.lib.format.read_magic(fp)
    if version == (1, 0):
        shape, _, dtype = np.lib.format.read_array_header_1_0(fp)
    elif version == (2, 0):
        shape, _, dtype = np.lib.format.read_array_header_2_0(fp)
    else:
        raise NpzError(f".npy format version {version} is not read (1.0 and 2.0 are)")
    return shape, dtype


def read_npz(path: str | os.PathLike, *, max_bytes: int,
             names: Collection[str] | None = None) -> dict[str, np.ndarray]:
    """Every array of the ``.npz`` at ``path`` by name (``allow_pickle=False``), or only those
    in ``names`` (the others are neither checked nor read), checked as the module says;
    :class:`NpzError` otherwise."""
    path = Path(path)
    if not path.exists():
        raise NpzError("no such file")
    if not path.is_file():
        raise NpzError("not a regular file (an .npz file is)")
    try:
        with open(path, "rb") as f:
            if f.read(len(_NPY_MAGIC)) == _NPY_MAGIC:
                raise NpzError("a single .npy array, not an .npz file")
        with zipfile.ZipFile(path) as archive:
            seen: set[str] = set()
            for info in archive.infolist():
                if info.filename in seen:  # numpy reads the last, another zip reader the first
                    raise NpzError(f"it holds {info.filename!r} twice")
                seen.add(info.filename)
            infos = [info for info in archive.infolist()
                     if names is None or info.filename.removesuffix(".npy") in names]
            total = sum(info.file_size for info in infos)
            if total > max_bytes:
                raise NpzError(f"its arrays expand to {total:,} bytes; at most {max_bytes:,} "
                               "are read")
            arrays = {}
            for info in infos:
                name = info.filename.removesuffix(".npy")
                if not info.filename.endswith(".npy") or info.is_dir():
                    raise NpzError(f"it holds {info.filename!r}, which is not an .npy array")
                if info.flag_bits & 0x1:
                    raise NpzError(f"{name} is encrypted")
                with archive.open(info) as fp:
                    shape, dtype = _header(fp)
                    if dtype.hasobject:
                        raise NpzError(f"{name} holds Python objects (a pickle, which is never "
                                       "loaded)")
                    size = math.prod(shape) * dtype.itemsize
                    if size != info.file_size - fp.tell():
                        raise NpzError(f"{name} declares {dtype} {shape} ({size:,} bytes) but "
                                       f"holds {info.file_size - fp.tell():,} bytes of data")
                with archive.open(info) as fp:
                    arrays[name] = np.lib.format.read_array(fp, allow_pickle=False)
            return arrays
    except NpzError:
        raise
    except _READ_ERRORS as err:
        raise NpzError(f"not a readable .npz file ({_reason(err)})") from None
