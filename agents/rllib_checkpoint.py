"""Resuming only an RLlib checkpoint that ``train_rllib`` wrote and nobody changed since.

RLlib's ``Algorithm.restore_from_path`` unpickles the files of a checkpoint folder
(``algorithm_state.pkl``, ``class_and_ctor_args.pkl``, the learner's and the env runners'
state), and unpickling runs whatever code a file carries: Ray has no loader that reads tensors
only, as torch and stable-baselines3 have (:mod:`agents.sb3_checkpoint`). So ``train_rllib``
writes, when it saves a checkpoint, the SHA-256 digest of each of its files into the folder
itself (:func:`write_manifest`: the manifest and the files it names are put in place by one
rename), and resumes only a folder that holds exactly those files with those digests, restored
from a private copy of the very bytes checked (:func:`verified_copy`): a file replaced after the
check is never read.

A digest says the folder is the one a run of this program wrote, not who wrote that run: a
checkpoint folder from elsewhere carries its own manifest, and is to be resumed only as far as
its author is trusted.

>>> import pathlib, tempfile
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = (folder / "state.pkl").write_bytes(b"weights")
>>> write_manifest(folder)
>>> verified_copy(folder)
>>> _ = (folder / "state.pkl").write_bytes(b"code")
>>> verified_copy(folder)
Traceback (most recent call last):
...
agents.rllib_checkpoint.CheckpointChanged: state.pkl differs from the file it wrote
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path

from dominoes_env.core.atomic_files import atomic_write, entry_kind
from dominoes_env.core.validation import parse_json, short_repr

#: the manifest's name, inside the checkpoint folder it describes
MANIFEST = "train_rllib_manifest.json"
#: the most files and the largest manifest read (a checkpoint holds about 25 files)
MAX_FILES = 10_000
MAX_MANIFEST_BYTES = 4 << 20
_PROGRAM = "experiments.train_rllib"


class CheckpointChanged(ValueError):
    """A checkpoint folder that is not as ``train_rllib`` wrote it, with the reason."""


def _files(folder: Path) -> list[str]:
    """The files of ``folder`` and its subfolders but the manifest (paths relative to it,
    ``/``-separated, sorted). :class:`CheckpointChanged` for an entry that is neither a regular
    file nor a folder: a link could lead the loader anywhere, a FIFO block it."""
    found: list[str] = []
    stack = [""]
    while stack:
        sub = stack.pop()
        with os.scandir(folder / sub) as entries:
            for entry in entries:
                name = f"{sub}/{entry.name}" if sub else entry.name
                mode = entry.stat(follow_symlinks=False).st_mode
                if stat.S_ISDIR(mode):
                    stack.append(name)
                elif stat.S_ISREG(mode):
                    if name != MANIFEST:
                        found.append(name)
                else:
                    raise CheckpointChanged(f"{name} is {entry_kind(mode)}, not a regular "
                                            "file")
                if len(found) > MAX_FILES:
                    raise CheckpointChanged(f"it holds more than {MAX_FILES:,} files")
    return sorted(found)


def _read(path: Path, name: str, copy_to: Path | None) -> str:
    """The SHA-256 of the regular file ``path`` (opened without following a link), its bytes
    written to ``copy_to`` as they are read when that is given."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
                     | getattr(os, "O_NONBLOCK", 0))
    except OSError as err:
        raise CheckpointChanged(f"{name} cannot be read ({err.strerror})") from None
    digest = hashlib.sha256()
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):  # before fdopen, which raises IsADirectoryError on a folder
        os.close(fd)
        raise CheckpointChanged(f"{name} is {entry_kind(mode)}, not a regular file")
    with os.fdopen(fd, "rb") as src:
        if copy_to is not None:
            copy_to.parent.mkdir(parents=True, exist_ok=True)
        dst = open(copy_to, "xb") if copy_to is not None else None  # noqa: SIM115
        try:
            while block := src.read(1 << 20):
                digest.update(block)
                if dst is not None:
                    dst.write(block)
        finally:
            if dst is not None:
                dst.close()
    return digest.hexdigest()


def write_manifest(folder: str | os.PathLike) -> None:
    """Write into the checkpoint folder ``folder`` the SHA-256 of each of its files
    (:data:`MANIFEST`, atomically), as ``train_rllib`` does to every checkpoint it saves."""
    folder = Path(folder)
    files = {name: _read(folder / name, name, None) for name in _files(folder)}
    with atomic_write(folder / MANIFEST) as f:
        f.write(json.dumps({"program": _PROGRAM, "sha256": files}, indent=1, sort_keys=True)
                + "\n")


def _manifest(folder: Path) -> dict[str, str]:
    """The digests the manifest of ``folder`` lists (:class:`CheckpointChanged` for a missing
    or malformed one)."""
    path = folder / MANIFEST
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
                     | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise CheckpointChanged(f"it holds no {MANIFEST}, the digests of its files that "
                                "train_rllib writes with each checkpoint") from None
    except OSError as err:
        raise CheckpointChanged(f"its {MANIFEST} cannot be read ({err.strerror})") from None
    with os.fdopen(fd, "rb") as f:
        text = f.read(MAX_MANIFEST_BYTES + 1) if stat.S_ISREG(os.fstat(fd).st_mode) else None
    try:
        if text is None or len(text) > MAX_MANIFEST_BYTES:
            raise ValueError
        data = parse_json(text)
        listed = data["sha256"] if data.get("program") == _PROGRAM else None
        if not (isinstance(listed, dict) and all(
                isinstance(k, str) and isinstance(v, str) and len(v) == 64
                for k, v in listed.items())):
            raise ValueError
    except (ValueError, RecursionError, AttributeError, KeyError, TypeError):
        raise CheckpointChanged(f"its {MANIFEST} is not one train_rllib wrote") from None
    return listed


def verified_copy(folder: str | os.PathLike, copy_to: str | os.PathLike | None = None) -> None:
    """Check that the checkpoint folder ``folder`` holds exactly the files its manifest lists,
    each with the digest listed (:class:`CheckpointChanged` naming the first that does not),
    reading each file once; with ``copy_to`` (an empty folder) the bytes read are copied there,
    so that what is restored from the copy is what was checked."""
    folder = Path(folder)
    listed = _manifest(folder)
    found = _files(folder)
    for name in found:
        if name not in listed:
            raise CheckpointChanged(f"{short_repr(name)} is not one of the files it wrote")
    for name in sorted(listed):
        if name not in found:
            raise CheckpointChanged(f"{short_repr(name)} is missing")
        target = None if copy_to is None else Path(copy_to, *name.split("/"))
        if _read(folder / name, name, target) != listed[name]:
            raise CheckpointChanged(f"{name} differs from the file it wrote")
