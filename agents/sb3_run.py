"""The files a MaskablePPO run (``python -m experiments.train_ppo``) keeps in its folder, read
back as untrusted input when it resumes: the self-play pool's snapshots (``pool/*.npz``) with the
record of their digests (``pool/digests.json``), and the periodic checkpoints
(``checkpoints/ppo_<steps>_steps.zip``: their names, pruning, the steps a run reached).

A resumed run trains against the snapshots in its pool, so each must be one the run wrote,
unchanged (:func:`check_pool`); a periodic checkpoint is removed only when it is one
(:func:`prune_checkpoints`): a user's file of that name stays.
"""

from __future__ import annotations

import contextlib
import csv
import os
import re
from pathlib import Path

from dominoes_env.core.atomic_files import file_sha256, write_json
from dominoes_env.core.validation import as_int, as_path, parse_json, short_repr

from .sb3_checkpoint import CheckpointError, check_members


class RunDirError(ValueError):
    """The run directory, the checkpoint to resume or the dataset to clone cannot serve this run
    (one-line reason)."""


#: the file in ``pool/`` that keeps the sha256 of each snapshot the run wrote, by file name
POOL_DIGESTS = "digests.json"


def read_pool_digests(pool: Path) -> dict[str, str] | None:
    """The snapshots' digests the run recorded (``None``: there is no record);
    :class:`RunDirError` naming the file and its damage if it is damaged (not JSON, a key
    twice, a name no snapshot's or a digest no sha256), never read as a record (where the last
    of two values would count, and a good snapshot be said to have changed)."""
    path = pool / POOL_DIGESTS
    if not os.path.lexists(path):
        return None
    damage = None
    try:
        digests = parse_json(path.read_bytes())
    except OSError as err:
        digests, damage = None, err.strerror or str(err)
    except (ValueError, RecursionError) as err:  # DuplicateKeyError is a ValueError
        digests, damage = None, " ".join(str(err).split())[:120] or "not JSON"
    if damage is None:
        if not isinstance(digests, dict):
            damage = "not a JSON object of snapshot names and digests"
        else:
            odd = next((name for name, value in digests.items()
                        if not SNAPSHOT_NAME.fullmatch(name)
                        or not (isinstance(value, str) and SHA256.fullmatch(value))), None)
            if odd is not None:
                damage = f"{short_repr(odd)} is no snapshot's name with its sha256"
    if damage is not None:
        raise RunDirError(f"{str(path)!r}, the record of the run's pool snapshots, is damaged "
                          f"({damage}); remove the pool's snapshots with it (the run trains on "
                          "without them) or use --overwrite")
    return digests


#: a pool snapshot's file name, and a digest as digests.json holds it
SNAPSHOT_NAME = re.compile(r"snapshot_\d{9,18}\.npz")
SHA256 = re.compile(r"[0-9a-f]{64}")


def record_pool_snapshot(path: Path) -> None:
    """Add the sha256 of the snapshot just written at ``path`` to its pool's record."""
    pool = path.parent
    try:
        digests = read_pool_digests(pool) or {}
    except RunDirError:
        digests = {}
    digests[path.name] = file_sha256(path)
    write_json(pool / POOL_DIGESTS, digests, indent=1, sort_keys=True)


def check_pool(out: Path) -> None:
    """A resumed run trains against the snapshots in ``pool/``: each must be one the run wrote,
    unchanged (not replaced by another network, nor put there by anyone else), and readable;
    :class:`RunDirError` naming the snapshot otherwise, before anything is trained.
    Snapshots without the record of their digests are refused too: with ``digests.json``
    removed, a snapshot replaced by another valid policy could not be told apart."""
    pool = out / "pool"
    if not pool.is_dir():
        return
    digests = read_pool_digests(pool)
    way_on = ("remove it (the run trains on without it), put the run's own back, or use "
              "--overwrite")
    for path in sorted(pool.glob("*.npz")):
        if digests is None:
            raise RunDirError(f"{str(path)!r} cannot be checked as a snapshot this run wrote: "
                              f"its pool holds no {POOL_DIGESTS}, the record of their digests; "
                              "remove the pool's snapshots (the run trains on without them) "
                              "or use --overwrite")
        if path.name not in digests:
            raise RunDirError(f"{str(path)!r} is no snapshot this run wrote (its pool's "
                              f"{POOL_DIGESTS} does not list it); {way_on}")
        try:
            same = file_sha256(path) == digests[path.name]
        except OSError as err:
            raise RunDirError(f"{str(path)!r}, a pool snapshot of this run, cannot be read "
                              f"({err.strerror or err}); {way_on}") from None
        if not same:
            raise RunDirError(f"{str(path)!r}, a pool snapshot of this run, changed since "
                              f"the run wrote it (its sha256 differs); {way_on}")


def checkpoints_of(out: Path) -> list[Path]:
    """The checkpoints a run has written (``checkpoints/*.zip``)."""
    return sorted((out / "checkpoints").glob("*.zip"))


#: the name of a periodic checkpoint (``ppo_<steps>_steps.zip``), the files pruning removes
CHECKPOINT_NAME = re.compile(r"ppo_(\d{1,18})_steps\.zip")


def is_checkpoint(path: str | os.PathLike) -> bool:
    """Whether the file ``path`` is a MaskablePPO checkpoint: a zip of the members a save
    holds (:func:`agents.sb3_checkpoint.check_members`), as a run writes them."""
    try:
        check_members(os.fspath(path))
    except CheckpointError:
        return False
    return True


def prune_checkpoints(folder: Path, steps: int, keep: int) -> list[Path]:
    """Remove the periodic checkpoints in ``folder`` older than the ``keep`` newest up to
    ``steps`` (the one just written, always kept); returns those removed, oldest first. Only
    regular files named ``ppo_<steps>_steps.zip`` that are checkpoints (:func:`is_checkpoint`)
    go: ``last.zip``, links, a file of that name that is no checkpoint (the user's text file,
    say) and anything else there stay, and so do checkpoints past ``steps`` (a run resumed
    from an older checkpoint writes them again as it goes on). So a long run keeps ``keep``
    checkpoints, not all it ever wrote. ``keep`` is at least 1 and
    ``steps`` at least 0 (integers), else a ``ValueError``/``TypeError`` naming it, before
    anything is removed.

    >>> import tempfile, zipfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     for name in ("ppo_100_steps.zip", "ppo_200_steps.zip", "ppo_300_steps.zip",
    ...                  "ppo_400_steps.zip", "last.zip"):
    ...         with zipfile.ZipFile(Path(d) / name, "w") as z:
    ...             for member in ("data", "policy.pth", "policy.optimizer.pth"):
    ...                 z.writestr(member, "")
    ...     _ = (Path(d) / "ppo_50_steps.zip").write_text("mine")
    ...     removed = [p.name for p in prune_checkpoints(Path(d), 300, 2)]
    ...     kept = sorted(p.name for p in Path(d).iterdir())
    >>> removed
    ['ppo_100_steps.zip']
    >>> kept
    ['last.zip', 'ppo_200_steps.zip', 'ppo_300_steps.zip', 'ppo_400_steps.zip', 'ppo_50_steps.zip']
    """
    # keep=0 removed every checkpoint, the one just written too; keep=2.5 was a bare TypeError
    steps = as_int("steps", steps, 0)
    keep = as_int("keep", keep, 1)
    found = []
    with os.scandir(as_path("folder", folder)) as entries:
        for entry in entries:
            name = CHECKPOINT_NAME.fullmatch(entry.name)
            if (name and entry.is_file(follow_symlinks=False) and int(name[1]) <= steps
                    and is_checkpoint(entry.path)):
                found.append((int(name[1]), Path(entry.path)))
    found.sort()
    removed = []
    for _, path in found[:max(0, len(found) - keep)]:  # the oldest first
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
            removed.append(path)
    return removed


def reached_steps(out: Path) -> int:
    """The most steps the run in ``out`` shows it reached: its checkpoints' names
    (``ppo_<steps>_steps.zip``) and its evaluations (``eval.csv``); 0 when it shows none."""
    best = 0
    for path in checkpoints_of(out):
        found = CHECKPOINT_NAME.fullmatch(path.name)
        if found:
            best = max(best, int(found.group(1)))
    try:
        with open(out / "eval.csv", newline="", encoding="utf-8") as f:
            for row in csv.DictReader(f):
                steps = str(row.get("steps") or "")
                if steps.isascii() and steps.isdigit() and len(steps) <= 18:
                    best = max(best, int(steps))
    except (OSError, csv.Error, UnicodeDecodeError):  # none yet, or damaged: the checkpoints
        pass
    return best
