"""Removing a run from its folder, and never the user's files beside it: what ``--overwrite``
removes of the run it replaces (:func:`replaced_outputs`: the program's outputs, as
:data:`PROGRAM_OUTPUTS` holds them, never as the run's marker lists them; :func:`listed_but_kept`:
what the marker lists but stays), removing it as the new run starts (:func:`remove_replaced_run`),
and :func:`clear_run` for a function that starts a run afresh."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from ..core.validation import short_repr
from .errors import RefusedError
from .paths import quoted_path
from .program_outputs import PROGRAM_OUTPUTS
from .run_markers import RUN_MARKER, marker_outputs, read_marker


def overwrite_word(flag: str) -> str:
    """How a refusal names replacing the run: ``--overwrite`` for a command's ``--out``,
    ``overwrite=True`` for a function's argument (``out``), which has no flags."""
    return "--overwrite" if flag.startswith("-") else "overwrite=True"


def replaced_outputs(text: str, entries: Sequence[str], marker: dict[str, Any] | None,
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
                           f"whose files {overwrite_word(flag)} cannot tell from yours "
                           f"({', '.join(map(repr, unknown[:3]))}); remove that run's files, "
                           "or name a new folder")
    return outputs


def listed_but_kept(entries: Sequence[str], marker: dict[str, Any] | None,
                    removes: tuple[str, ...]) -> tuple[str, ...]:
    """The names in the folder that the replaced run's marker lists as its outputs but that
    replacing it keeps (``removes``, empty: it keeps nothing)."""
    import fnmatch

    listed = marker_outputs(marker) if marker else None
    if not listed or not removes:
        return ()
    return tuple(name for name in entries if name != RUN_MARKER
                 and any(fnmatch.fnmatchcase(name, pattern) for pattern in listed)
                 and not any(fnmatch.fnmatchcase(name, pattern) for pattern in removes))


def remove_replaced_run(path: str, removes: Sequence[str], kept: Sequence[str]) -> None:
    """Remove from the run folder ``path`` the run that ``--overwrite`` replaces
    (:func:`start_run_folder`): its marker and the names (``fnmatch`` patterns) in ``removes``
    (empty: everything there); the user's other files stay, and those of them the replaced run's
    marker lists (``kept``, :func:`listed_but_kept`) are named in a warning on stderr. An entry
    that cannot be removed is a :class:`RefusedError`."""
    import fnmatch
    import shutil

    if kept:
        print(f"warning: {quoted_path(path)}: kept {', '.join(map(repr, kept[:3]))}"
              f"{f' and {len(kept) - 3} more' if len(kept) > 3 else ''}, "
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


def clear_run(out: str | os.PathLike, programs: Sequence[str], *,
              proof: Callable[[str], str | None], only: Sequence[str] | None = None,
              flag: str = "out") -> list[str]:
    """Remove the run of one of ``programs`` from the folder ``out``, for a function that
    starts a run afresh (``clear_results``, ``clear_card``): the names (or ``fnmatch``
    patterns) :data:`PROGRAM_OUTPUTS` lists for the run's program (``only``: those of them;
    ``None``: all, and the run marker last), as ``--overwrite`` does; the user's other files
    stay. Returns the names removed. A link among them is removed as a link: nothing outside
    the folder is ever removed (a ``records`` link to the user's shards leaves the shards).

    The folder must be such a run's: its run marker names one of ``programs``; or it has none
    (a run written before markers, or by a function that writes none) and ``proof(out)`` finds
    nothing wrong (it returns what is missing: ``"no benchmark.json"``). Anything else is a
    :class:`RefusedError` (a ``ValueError``) naming the folder, and nothing is removed: a
    symbolic link, a damaged marker, another program's run (a tournament's clear never takes
    a dataset's ``config.json`` and ``matches.jsonl``), a folder of the user's files. A folder
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
    marker, damage = read_marker(text)
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
