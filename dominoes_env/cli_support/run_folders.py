"""The output policy of run folders: the ``--out`` folder a program writes its run into.

A run goes into a new or empty folder, continues only as the same run (same program and
settings, as its run marker :data:`RUN_MARKER` holds them), and ``--overwrite`` removes only
what the run's program writes (:data:`PROGRAM_OUTPUTS`, held here in the code, never read from
the marker), never the user's files:

- :func:`check_run_folder` checks the folder before anything is written (a
  :class:`RunFolder`), :func:`start_run_folder` starts the run there (the run it replaces
  removed, its marker written), and :func:`clear_run` removes a run for a function that starts
  one afresh;
- the run marker read as untrusted input (:func:`read_run_marker`, :func:`marker_damage`), and
  what differs between two runs' settings (:func:`settings_difference`);
- the locks that keep two processes out of one folder: taken by :func:`start_run_folder`,
  released when the command returns (:func:`run_locks_held`, :func:`release_run_locks`; a
  function that starts a run of its own uses :func:`run_folder_locks`);
- a trainer's ``--resume``: the run folder of its checkpoint (:func:`run_of_checkpoint`), and
  the note when it has nothing left to train (:func:`nothing_to_train`)."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from ..core.atomic_files import unwatch_folder, watch_folder
from ..core.validation import short_repr
from .errors import RefusedError
from .paths import check_out_dir, quoted_path

#: the file that marks a folder as one run's: the program and the settings it was started with
RUN_MARKER = "run.json"


#: the largest run marker read (one is a few kilobytes)
MAX_MARKER_BYTES = 1 << 20


_TOURNAMENT_OUTPUTS = ("config.json", "matches.jsonl", "summary.json", "winrate_heatmap.png",
                       "ratings.png", "records")


#: what each program writes into its run folder (names or ``fnmatch`` patterns): all that
#: ``--overwrite`` removes of a run of that program, held here in the code and never read from
#: the run's marker, whose ``"outputs"`` anyone can edit to name the user's own files (each
#: program passes the same list to :func:`check_run_folder`; a test holds them equal)
PROGRAM_OUTPUTS: dict[str, tuple[str, ...]] = {
    "experiments.tournament": _TOURNAMENT_OUTPUTS,
    "experiments.demo": _TOURNAMENT_OUTPUTS,
    "experiments.make_dataset": (*_TOURNAMENT_OUTPUTS, "decisions", "dataset.json"),
    "experiments.benchmark": ("benchmark.json", "card.json", "card.png", "matches"),
    "experiments.train_ppo": ("pool", "config.json", "tb", "eval.csv", "eval.csv.damaged*",
                              "eval_policy.npz", "throughput.json", "checkpoints", "bc.json",
                              "policy.npz", "policy.json"),
    "experiments.train_jax": ("config.json", "tb", "eval.csv", "eval.csv.damaged*",
                              "eval_policy.npz", "checkpoint.npz", "throughput.json",
                              "policy.npz", "policy.json"),
    "experiments.train_rllib": ("progress.csv", "tb", "checkpoint", "policy.npz", "policy.json"),
    "experiments.expert_iteration": ("demos.npz", "policy.npz", "policy.json",
                                     "iteration[0-9]*"),
}  # fmt: skip

#: which of each program's outputs (:data:`PROGRAM_OUTPUTS`) are folders; the others are files.
#: A resumed run found a folder where it appends a file (``eval.csv``) only after it had trained
#: and saved its checkpoint, and a file where it writes a folder (``tb``) as a raw errno line
OUTPUT_FOLDERS: dict[str, tuple[str, ...]] = {
    "experiments.tournament": ("records",),
    "experiments.demo": ("records",),
    "experiments.make_dataset": ("records", "decisions"),
    "experiments.benchmark": ("matches",),
    "experiments.train_ppo": ("pool", "tb", "checkpoints"),
    "experiments.train_jax": ("tb",),
    "experiments.train_rllib": ("tb", "checkpoint"),
    "experiments.expert_iteration": ("iteration[0-9]*",),
}  # fmt: skip


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
    #: the run marker the check saw (:func:`_marker_print`; ``None``: none), which must be
    #: there still when the run starts
    seen: str | None = None
    #: what replacing the run keeps although the replaced run's marker lists it as the run's
    #: (no output of that program: the user's own, named in an edited marker), said on stderr
    kept: tuple[str, ...] = ()


def read_run_marker(folder: str | os.PathLike) -> dict[str, Any] | None:
    """The run marker of ``folder`` (``None`` when it has none), read as untrusted input: a
    marker that is not a small JSON object naming its program is ``{}``
    (:func:`marker_damage` says what is wrong with it)."""
    return _read_marker(folder)[0]


def marker_damage(folder: str | os.PathLike) -> str:
    """What is wrong with the run marker of ``folder`` (``"it is empty"``, ``"the key
    'program' appears twice in one object"``...), or ``""`` when it is whole or there is
    none."""
    return _read_marker(folder)[1]


def _read_marker(folder: str | os.PathLike) -> tuple[dict[str, Any] | None, str]:
    """``(marker, what is wrong with it)``: see :func:`read_run_marker`. Strict as the other
    readers of untrusted JSON are: UTF-8 (a byte order mark allowed), no key twice in an
    object; UTF-16 was taken (``json.loads`` of bytes guesses the encoding) and a second
    ``"program"`` won without a word."""
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


def _marker_print(folder: str | os.PathLike) -> str | None:
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
    import fnmatch
    import json

    settings = json.loads(json.dumps(settings, sort_keys=True, default=str))  # as stored
    replace = f"pass {_overwrite_word(flag)} to replace"  # a function's out: overwrite=True
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
    entries = sorted(os.listdir(text)) if os.path.isdir(text) else []
    if not entries:
        return RunFolder(text, program, settings, outputs=tuple(outputs))
    try:
        seen = _marker_print(text)
        marker, damage = _read_marker(text)
        held = f"another run (of {marker['program']})" if marker else "another run"
        foreign = [name for name in entries if name != RUN_MARKER
                   and not any(fnmatch.fnmatchcase(name, pattern) for pattern in outputs)]
        if not marker and foreign:  # no marker, or a run.json that is no run's (another tool's)
            raise RefusedError(f"{flag} {text!r} holds files that are not a run's "
                               f"({', '.join(map(repr, foreign[:3]))}"
                               f"{f'; its {RUN_MARKER} is damaged: {damage}' if damage else ''}); "
                               "name a new folder (a run goes into a new or empty one)")
        if overwrite:
            removes = _replaced_outputs(text, entries, marker, program, tuple(outputs), flag)
            _refuse_removing_the_working_directory(text, real, removes, flag)
            return RunFolder(text, program, settings, replaces=True, outputs=tuple(outputs),
                             removes=removes, seen=seen,
                             kept=_listed_but_kept(entries, marker, removes))
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
        if damage:  # a run's folder (nothing else there) whose marker cannot say whose run it is
            raise RefusedError(f"{flag} {text!r} holds a damaged {RUN_MARKER} ({damage}), so which "
                               f"run is there is unknown; {replace} that run, or "
                               "name a new folder")
        if marker and marker["program"] != program:  # not this program's run to continue
            raise RefusedError(f"{flag} {text!r} holds a run of {short_repr(marker['program'])}, "
                               f"which {program} cannot continue; {replace} it, "
                               "or name a new folder")
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
        return RunFolder(text, program, settings, resumes=True, outputs=tuple(outputs),
                         seen=seen)
    except RefusedError:
        if _written_by_another(real):  # a run starting there at the same time: its folder
            # holds its first files, no checkpoint yet ("it stopped before saving one")
            raise RefusedError(_being_written(text)) from None
        raise


def _marker_outputs(marker: dict[str, Any]) -> tuple[str, ...] | None:
    """The outputs a run marker lists (``fnmatch`` patterns of names in its folder), or
    ``None`` when it lists none it can be held to (a marker written before markers listed
    them, or one whose list is not short plain names)."""
    listed = marker.get("outputs")
    if not isinstance(listed, list) or len(listed) > 256 or not all(
            isinstance(p, str) and p.strip() and "/" not in p and os.sep not in p
            and p not in (".", "..") for p in listed):
        return None
    return tuple(listed)


def _replaced_outputs(text: str, entries: Sequence[str], marker: dict[str, Any] | None,
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
                           f"whose files {_overwrite_word(flag)} cannot tell from yours "
                           f"({', '.join(map(repr, unknown[:3]))}); remove that run's files, "
                           "or name a new folder")
    return outputs


def _listed_but_kept(entries: Sequence[str], marker: dict[str, Any] | None,
                     removes: tuple[str, ...]) -> tuple[str, ...]:
    """The names in the folder that the replaced run's marker lists as its outputs but that
    replacing it keeps (``removes``, empty: it keeps nothing)."""
    import fnmatch

    listed = _marker_outputs(marker) if marker else None
    if not listed or not removes:
        return ()
    return tuple(name for name in entries if name != RUN_MARKER
                 and any(fnmatch.fnmatchcase(name, pattern) for pattern in listed)
                 and not any(fnmatch.fnmatchcase(name, pattern) for pattern in removes))


def _overwrite_word(flag: str) -> str:
    """How a refusal names replacing the run: ``--overwrite`` for a command's ``--out``,
    ``overwrite=True`` for a function's argument (``out``), which has no flags."""
    return "--overwrite" if flag.startswith("-") else "overwrite=True"


def _refuse_removing_the_working_directory(text: str, real: str, outputs: Sequence[str],
                                           flag: str) -> None:
    """:class:`RefusedError` if replacing the run in ``real`` (:func:`start_run_folder`) would
    remove the working directory: ``--out .. --overwrite`` run from inside the run's
    ``records/`` removed the old run, working directory and all, then could not write the new
    one (``..`` no longer led anywhere) and said the finished matches were kept."""
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
                           f"{_overwrite_word(flag)} would remove with the run; work from "
                           "outside it")


#: the run folders this process writes into, locked (realpath -> the folder's open fd)
_RUN_LOCKS: dict[str, int] = {}


def _being_written(path: str) -> str:
    return (f"the run folder {path!r} is being written by another run (a process still "
            "running); wait for it to end, or name another folder")


def _written_by_another(real: str) -> bool:
    """Whether another process holds the run folder ``real`` locked (:func:`_lock_run_folder`):
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


def _lock_run_folder(path: str) -> None:
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
        raise RefusedError(_being_written(path)) from None
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
    import shutil
    from datetime import datetime, timezone

    from ..core.atomic_files import atomic_write

    path = folder.path
    os.makedirs(path, exist_ok=True)
    _lock_run_folder(path)  # before anything there is removed or written
    if _marker_print(path) != folder.seen:  # another run started there since the check
        other = read_run_marker(path)
        who = f" ({short_repr(other['program'])})" if other else ""
        raise RefusedError(f"another run{who} started in {path!r} after this command checked "
                           "it; run the command again to check the folder anew, or name "
                           "another folder")
    if folder.replaces and os.path.isdir(path):
        import fnmatch

        removes = folder.outputs if folder.removes is None else folder.removes
        if folder.kept:
            print(f"warning: {quoted_path(path)}: kept {', '.join(map(repr, folder.kept[:3]))}"
                  f"{f' and {len(folder.kept) - 3} more' if len(folder.kept) > 3 else ''}, "
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
    os.makedirs(path, exist_ok=True)
    if folder.resumes and read_run_marker(path) is not None:
        return path
    marker = {"program": folder.program, "settings": folder.settings,
              "outputs": list(folder.outputs),
              "started": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    with atomic_write(os.path.join(path, RUN_MARKER)) as f:
        f.write(json.dumps(marker, indent=2, sort_keys=True, default=str) + "\n")
    return path


def clear_run(out: str | os.PathLike, programs: Sequence[str], *,
              proof: Callable[[str], str | None], only: Sequence[str] | None = None,
              flag: str = "out") -> list[str]:
    """Remove the run of one of ``programs`` from the folder ``out``, for a function that
    starts a run afresh (``clear_results``, ``clear_card``): the names (or ``fnmatch``
    patterns) :data:`PROGRAM_OUTPUTS` lists for the run's program (``only``: those of them;
    ``None``: all, and the run marker last), as ``--overwrite`` does; the user's other files
    stay. Returns the names removed. A link among them is removed as a link: nothing outside
    the folder is ever removed (a ``records`` link to the user's shards had them deleted).

    The folder must be such a run's: its run marker names one of ``programs``; or it has none
    (a run written before markers, or by a function that writes none) and ``proof(out)`` finds
    nothing wrong (it returns what is missing: ``"no benchmark.json"``). Anything else is a
    :class:`RefusedError` (a ``ValueError``) naming the folder, and nothing is removed: a
    symbolic link, a damaged marker, another program's run (a dataset's ``config.json`` and
    ``matches.jsonl`` went with a tournament's clear), a folder of the user's files. A folder
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
    marker, damage = _read_marker(text)
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


def run_of_checkpoint(checkpoint: str) -> str:
    """The run folder of a trainer's checkpoint: ``X`` for ``X/checkpoint.npz`` (train_jax)
    and for ``X/checkpoints/last.zip`` (train_ppo), where ``--resume`` without ``--out``
    continues the run (a stopped run says "continue with --resume X/checkpoint.npz"; without
    ``--out`` the run went on in the trainer's default folder, in silence).

    >>> run_of_checkpoint("runs/a/checkpoint.npz"), run_of_checkpoint("r/checkpoints/last.zip")
    ('runs/a', 'r')
    >>> run_of_checkpoint("checkpoint.npz")
    '.'

    A folder is refused (``ValueError``): its parent was taken for the run, and the refusal
    then named that folder as ``--out`` ("holds files that are not a run's").
    """
    if os.path.isdir(checkpoint):
        raise ValueError(f"--resume {checkpoint!r} is a folder; name the checkpoint file in it "
                         "(the line that stopped its run says which)")
    folder = os.path.dirname(checkpoint) or "."
    if os.path.basename(os.path.normpath(folder)) == "checkpoints":
        folder = os.path.dirname(os.path.normpath(folder)) or "."
    return folder


def nothing_to_train(resume: str, steps: int, total: int) -> str | None:
    """What to say when ``--resume`` is at ``--total-steps`` or past it: nothing is trained,
    and the run's last line says it trained the checkpoint's steps ("trained 300,000 steps"
    for --total-steps 200000, in silence)."""
    if steps < total:
        return None
    return (f"note: --resume {resume} is at step {steps:,}, not below --total-steps {total:,}: "
            "nothing is trained (give a larger --total-steps to train on)")
