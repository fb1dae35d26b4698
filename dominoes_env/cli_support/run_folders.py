"""The output policy of run folders: the ``--out`` folder a program writes its run into.

A run goes into a new or empty folder, continues only as the same run (same program and
settings, as its run marker :data:`RUN_MARKER` holds them), and ``--overwrite`` removes only
what the run's program writes (:data:`PROGRAM_OUTPUTS`, held in the code, never read from the
marker), never the user's files. :func:`check_run_folder` checks the folder before anything is
written (a :class:`RunFolder`), and :func:`start_run_folder` starts the run there (the folder
locked, the run it replaces removed, its marker written).

What the policy is made of has a module each, whose public names are importable from here as
well: :mod:`.run_markers` (the run marker read as untrusted input: :func:`read_run_marker`,
:func:`marker_damage`; :func:`settings_difference`), :mod:`.program_outputs`
(:data:`PROGRAM_OUTPUTS`, :data:`OUTPUT_FOLDERS`), :mod:`.run_removal` (what ``--overwrite``
removes, and :func:`clear_run` for a function that starts a run afresh), :mod:`.folder_locks`
(the locks that keep two processes out of one folder: :func:`run_locks_held`,
:func:`release_run_locks`, :func:`run_folder_locks`) and :mod:`.trainer_resume` (a trainer's
``--resume``: :func:`run_of_checkpoint`, :func:`nothing_to_train`)."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from typing import Any

from ..core.validation import short_repr
from .errors import RefusedError
from .folder_locks import (
    being_written,
    lock_run_folder,
    release_run_locks,
    run_folder_locks,
    run_locks_held,
    written_by_another,
)
from .paths import check_out_dir
from .program_outputs import OUTPUT_FOLDERS, PROGRAM_OUTPUTS
from .run_markers import (
    MAX_MARKER_BYTES,
    RUN_MARKER,
    marker_damage,
    marker_print,
    read_marker,
    read_run_marker,
    settings_difference,
)
from .run_removal import (
    clear_run,
    listed_but_kept,
    overwrite_word,
    remove_replaced_run,
    replaced_outputs,
)
from .trainer_resume import nothing_to_train, run_of_checkpoint

__all__ = [
    "RUN_MARKER",
    "MAX_MARKER_BYTES",
    "PROGRAM_OUTPUTS",
    "OUTPUT_FOLDERS",
    "RunFolder",
    "read_run_marker",
    "marker_damage",
    "settings_difference",
    "MAX_ENTRIES_CHECKED",
    "check_run_folder",
    "run_folder_locks",
    "run_locks_held",
    "release_run_locks",
    "start_run_folder",
    "clear_run",
    "run_of_checkpoint",
    "nothing_to_train",
]


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
    #: the run marker the check saw (:func:`.run_markers.marker_print`; ``None``: none), which
    #: must be there still when the run starts
    seen: str | None = None
    #: what replacing the run keeps although the replaced run's marker lists it as the run's
    #: (no output of that program: the user's own, named in an edited marker), said on stderr
    kept: tuple[str, ...] = ()


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


def _wrong_kind(folder: str, names: Sequence[str], program: str,
                outputs: Sequence[str]) -> str:
    """What is wrong with the first of ``names`` that is one of the program's ``outputs`` but
    not of the kind the program writes there (:data:`OUTPUT_FOLDERS`): a folder where the run
    writes a file, or a file where it writes a folder; ``""`` when there is none (or the
    program's kinds are not known)."""
    import fnmatch

    if program not in OUTPUT_FOLDERS:
        return ""
    for name in names:
        if not any(fnmatch.fnmatchcase(name, pattern) for pattern in outputs):
            continue
        is_dir = os.path.isdir(os.path.join(folder, name))
        wants_dir = any(fnmatch.fnmatchcase(name, pattern) for pattern in OUTPUT_FOLDERS[program])
        if is_dir != wants_dir:
            found, wanted = ("a folder", "file") if is_dir else ("a file", "folder")
            return f"{name!r}, {found} where the run writes a {wanted}"
    return ""


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def check_run_folder(out: str | os.PathLike, program: str, settings: Any, *,
                     resume: str | os.PathLike | None = None, overwrite: bool = False,
                     rerun_resumes: bool = False, outputs: Sequence[str] = (),
                     resume_hint: str = "", resumable: bool = True,
                     inputs: Sequence[str | os.PathLike | None] = (),
                     flag: str = "--out", utf8_name: bool = False) -> RunFolder:
    """The output policy of a run's folder, checked before anything is written
    (:class:`RefusedError`, one line naming the folder and the flag to pass):

    ``flag`` names the folder in refusals: a command's ``--out``, or a function's argument
    (``out``: then replacing the run is ``overwrite=True``, not ``--overwrite``); ``utf8_name``:
    the program writes TensorBoard logs, whose writer takes a folder named in UTF-8 only.

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
    dominoes_env.cli_support.errors.RefusedError: --out '...' holds another run (of demo); pass ...
    """
    import json

    settings = json.loads(json.dumps(settings, sort_keys=True, default=str))  # as stored
    replace = f"pass {overwrite_word(flag)} to replace"  # a function's out: overwrite=True
    text, real = _checked_folder(out, inputs, overwrite=overwrite, flag=flag,
                                 utf8_name=utf8_name)
    entries = sorted(os.listdir(text)) if os.path.isdir(text) else []
    if not entries:
        return RunFolder(text, program, settings, outputs=tuple(outputs))
    try:
        seen = marker_print(text)
        marker, damage = read_marker(text)
        _refuse_files_of_no_run(text, entries, marker, damage, outputs, flag)
        if overwrite:
            removes = replaced_outputs(text, entries, marker, program, tuple(outputs), flag)
            _refuse_removing_the_working_directory(text, real, removes, flag)
            return RunFolder(text, program, settings, replaces=True, outputs=tuple(outputs),
                             removes=removes, seen=seen,
                             kept=listed_but_kept(entries, marker, removes))
        _refuse_entries_unwritable(text, entries, program, outputs, flag, replace)
        _refuse_another_programs_run(text, marker, damage, program, flag, replace)
        _refuse_continuing(text, real, marker, settings, resume=resume,
                           rerun_resumes=rerun_resumes, resume_hint=resume_hint,
                           resumable=resumable, flag=flag, replace=replace)
        return RunFolder(text, program, settings, resumes=True, outputs=tuple(outputs),
                         seen=seen)
    except RefusedError:
        if written_by_another(real):  # a run starting there at the same time: its folder
            # holds its first files, no checkpoint yet ("it stopped before saving one")
            raise RefusedError(being_written(text)) from None
        raise


def _checked_folder(out: str | os.PathLike, inputs: Sequence[str | os.PathLike | None], *,
                    overwrite: bool, flag: str, utf8_name: bool) -> tuple[str, str]:
    """``(the folder as named, its real path)``, or :class:`RefusedError` for a folder no run
    goes into, whatever it holds: what :func:`check_out_dir` refuses, a symbolic link, an input
    of the command (or, with ``overwrite``, a folder that holds one)."""
    check_out_dir(out, flag, utf8_name=utf8_name)
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
    return text, real


def _refuse_files_of_no_run(text: str, entries: Sequence[str], marker: dict[str, Any] | None,
                            damage: str, outputs: Sequence[str], flag: str) -> None:
    """:class:`RefusedError` for a folder without a run marker (or with a ``run.json`` that is
    no run's: another tool's, or damaged) that holds names other than the program's
    ``outputs``: not a run's folder, never continued nor emptied."""
    import fnmatch

    foreign = [name for name in entries if name != RUN_MARKER
               and not any(fnmatch.fnmatchcase(name, pattern) for pattern in outputs)]
    if not marker and foreign:  # no marker, or a run.json that is no run's (another tool's)
        raise RefusedError(f"{flag} {text!r} holds files that are not a run's "
                           f"({', '.join(map(repr, foreign[:3]))}"
                           f"{f'; its {RUN_MARKER} is damaged: {damage}' if damage else ''}); "
                           "name a new folder (a run goes into a new or empty one)")


def _refuse_entries_unwritable(text: str, entries: Sequence[str], program: str,
                               outputs: Sequence[str], flag: str, replace: str) -> None:
    """:class:`RefusedError` for a folder the continued run could not write into as it should:
    an entry that is no regular file or folder (:func:`_odd_entry`), or an output of the wrong
    kind (:func:`_wrong_kind`)."""
    odd, kind = _odd_entry(text, entries, outputs)
    if odd:  # a FIFO blocks the run that reads it, /dev/zero fills memory, a link writes
        # elsewhere
        raise RefusedError(f"{flag} {text!r} holds {odd!r}, which is {kind}, not a regular "
                           f"file or folder; remove it, {replace} the run, or "
                           "name a new folder")
    wrong = _wrong_kind(text, entries, program, outputs)
    if wrong:
        raise RefusedError(f"{flag} {text!r} holds {wrong}; remove it, {replace} the run, or "
                           "name a new folder")


def _refuse_another_programs_run(text: str, marker: dict[str, Any] | None, damage: str,
                                 program: str, flag: str, replace: str) -> None:
    """:class:`RefusedError` for a run this program cannot continue: one whose marker is
    damaged (whose run it is is unknown), or another program's."""
    if damage:  # a run's folder (nothing else there) whose marker cannot say whose run it is
        raise RefusedError(f"{flag} {text!r} holds a damaged {RUN_MARKER} ({damage}), so which "
                           f"run is there is unknown; {replace} that run, or "
                           "name a new folder")
    if marker and marker["program"] != program:  # not this program's run to continue
        raise RefusedError(f"{flag} {text!r} holds a run of {short_repr(marker['program'])}, "
                           f"which {program} cannot continue; {replace} it, "
                           "or name a new folder")


def _refuse_continuing(text: str, real: str, marker: dict[str, Any] | None, settings: Any, *,
                       resume: str | os.PathLike | None, rerun_resumes: bool, resume_hint: str,
                       resumable: bool, flag: str, replace: str) -> None:
    """:class:`RefusedError` unless this command continues the run of its program in the
    folder: ``resume`` inside it (or ``rerun_resumes``), with the settings its marker holds."""
    held = f"another run (of {marker['program']})" if marker else "another run"
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


def _refuse_removing_the_working_directory(text: str, real: str, outputs: Sequence[str],
                                           flag: str) -> None:
    """:class:`RefusedError` if replacing the run in ``real`` (:func:`start_run_folder`) would
    remove the working directory (``--out .. --overwrite`` run from inside the run's
    ``records/``): the new run could not be written once ``..`` leads nowhere, so nothing is
    removed."""
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
                           f"{overwrite_word(flag)} would remove with the run; work from "
                           "outside it")


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
    from datetime import datetime, timezone

    from ..core.atomic_files import atomic_write

    path = folder.path
    os.makedirs(path, exist_ok=True)
    lock_run_folder(path)  # before anything there is removed or written
    if marker_print(path) != folder.seen:  # another run started there since the check
        other = read_run_marker(path)
        who = f" ({short_repr(other['program'])})" if other else ""
        raise RefusedError(f"another run{who} started in {path!r} after this command checked "
                           "it; run the command again to check the folder anew, or name "
                           "another folder")
    if folder.replaces and os.path.isdir(path):
        remove_replaced_run(path, folder.outputs if folder.removes is None else folder.removes,
                            folder.kept)
    os.makedirs(path, exist_ok=True)
    if folder.resumes and read_run_marker(path) is not None:
        return path
    marker = {"program": folder.program, "settings": folder.settings,
              "outputs": list(folder.outputs),
              "started": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    with atomic_write(os.path.join(path, RUN_MARKER)) as f:
        f.write(json.dumps(marker, indent=2, sort_keys=True, default=str) + "\n")
    return path
