"""A run's marker (:data:`RUN_MARKER`, ``run.json``): the file that names the run a folder
holds, its program and the settings it was started with, read as untrusted input.

:func:`read_run_marker` reads it (``{}`` when damaged) and :func:`marker_damage` says what is
wrong with it (both are :func:`read_marker`, one read); :func:`marker_print` fingerprints it, so
that a run started there since a check is seen; :func:`marker_outputs` is the list of outputs
it holds (what ``--overwrite`` removes is never read from it: :mod:`.program_outputs`); and
:func:`settings_difference` says what differs between two runs' settings."""

from __future__ import annotations

import os
from typing import Any

from ..core.validation import short_repr

#: the file that marks a folder as one run's: the program and the settings it was started with
RUN_MARKER = "run.json"


#: the largest run marker read (one is a few kilobytes)
MAX_MARKER_BYTES = 1 << 20


def read_run_marker(folder: str | os.PathLike) -> dict[str, Any] | None:
    """The run marker of ``folder`` (``None`` when it has none), read as untrusted input: a
    marker that is not a small JSON object naming its program is ``{}``
    (:func:`marker_damage` says what is wrong with it)."""
    return read_marker(folder)[0]


def marker_damage(folder: str | os.PathLike) -> str:
    """What is wrong with the run marker of ``folder`` (``"it is empty"``, ``"the key
    'program' appears twice in one object"``...), or ``""`` when it is whole or there is
    none."""
    return read_marker(folder)[1]


def read_marker(folder: str | os.PathLike) -> tuple[dict[str, Any] | None, str]:
    """``(marker, what is wrong with it)``: see :func:`read_run_marker`. Strict as the other
    readers of untrusted JSON are: UTF-8 only (a byte order mark allowed; UTF-16, which
    ``json.loads`` of bytes would guess and take, is damage), and no key twice in an object (a
    second ``"program"`` is damage, not the one that counts)."""
    import stat

    from ..core.atomic_files import entry_kind
    from ..core.validation import (
        DuplicateKeyError,
        NestedTooDeeplyError,
        parse_json,
        utf8_text,
    )

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
        text = utf8_text(data)
    except ValueError as err:
        return {}, str(err)
    try:
        marker = parse_json(text)
    except NestedTooDeeplyError:
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


def marker_print(folder: str | os.PathLike) -> str | None:
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


def marker_outputs(marker: dict[str, Any]) -> tuple[str, ...] | None:
    """The outputs a run marker lists (``fnmatch`` patterns of names in its folder), or
    ``None`` when it lists none it can be held to (a marker written before markers listed
    them, or one whose list is not short plain names)."""
    listed = marker.get("outputs")
    if not isinstance(listed, list) or len(listed) > 256 or not all(
            isinstance(p, str) and p.strip() and "/" not in p and os.sep not in p
            and p not in (".", "..") for p in listed):
        return None
    return tuple(listed)
