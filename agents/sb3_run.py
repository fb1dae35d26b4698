"""What a MaskablePPO run (``python -m experiments.train_ppo``) keeps in its folder and reads
back as untrusted input when it resumes, and what it checks before it writes anything.

The run's files: the self-play pool's snapshots (``pool/*.npz``) with the record of their
digests (``pool/digests.json``), and the periodic checkpoints
(``checkpoints/ppo_<steps>_steps.zip``: their names, pruning, the steps a run reached). A
resumed run trains against the snapshots in its pool, so each must be one the run wrote,
unchanged (:func:`check_pool`); a periodic checkpoint is removed only when it is one
(:func:`prune_checkpoints`): a user's file of that name stays.

Resuming: a ``--resume`` checkpoint must be one this run can go on from
(:func:`check_checkpoint`: readable, its data checked by :func:`checkpoint_data`, its weights
sound, made for this table and network), and a line says where it was trained with other
settings (:func:`settings_note`) or takes the run back (:func:`rewind_note`).

This machine: the run must fit in its memory (:func:`check_memory`), and torch must be able to
use the run's device (:func:`check_device`).

torch and stable-baselines3 are imported only by the checks that read them.
"""

from __future__ import annotations

import contextlib
import csv
import os
import re
from pathlib import Path
from typing import Any

from dominoes_env.cli_support import check_fits_in_memory
from dominoes_env.core import RuleConfig
from dominoes_env.core.atomic_files import file_sha256, path_kind, write_json
from dominoes_env.core.validation import as_int, as_path, parse_json, short_repr
from dominoes_env.optional import require
from dominoes_env.policy_format import hidden_sizes, magnitudes_problem

from .sb3_checkpoint import (
    CheckpointError,
    check_entries,
    check_members,
    network,
    pickled_keys,
    read_data,
    settings,
    space_sizes,
)
from .sb3_divergence import largest_magnitudes


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


# -- resuming ------------------------------------------------------------------------------
def checkpoint_data(path: Path) -> dict[str, Any]:
    """The ``data`` entry of the ``--resume`` checkpoint ``path``, read as JSON alone
    (stable-baselines3 would unpickle the objects in it: code from the file) and checked
    (:func:`~agents.sb3_checkpoint.check_entries`); a :class:`RunDirError` naming the file for
    one that is not such a zip or holds an entry a run's save would not."""
    try:
        check_members(path)
        data = read_data(path)
        check_entries(data)
    except CheckpointError as err:
        raise RunDirError(f"--resume {str(path)!r} is not a readable checkpoint ({err})") \
            from None
    return data


def check_checkpoint(path: Path, rules: RuleConfig, net: str, activation: str) -> None:
    """A ``--resume`` checkpoint must be a readable stable-baselines3 zip whose spaces fit the
    table of ``rules`` and whose network matches ``net`` (train_ppo's ``--net``: the hidden
    layer sizes, comma-separated) and ``activation``, and whose weights a policy file would
    hold; :class:`RunDirError` saying which it is not otherwise."""
    import pickle
    import zipfile

    if not path.is_file():
        raise RunDirError(f"--resume {str(path)!r}: "
                          + ("no such file" if not os.path.lexists(path)
                             else f"it is {path_kind(path)}, not a checkpoint file"))
    data = checkpoint_data(path)
    try:  # the networks, read by torch as tensors only; no entry of the JSON unpickled
        from stable_baselines3.common.save_util import load_from_zip_file

        _, params, _ = load_from_zip_file(str(path), device="cpu", print_system_info=False,
                                          custom_objects=dict.fromkeys(pickled_keys(data)))
    except pickle.UnpicklingError:  # torch's own words advise loading it unsafely: never
        raise RunDirError(f"--resume {str(path)!r} is not a readable checkpoint (a network "
                          "file in it is damaged, or holds objects that are never "
                          "unpickled)") from None
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, KeyError, RuntimeError) as err:
        raise RunDirError(f"--resume {str(path)!r} is not a readable checkpoint "
                          f"({type(err).__name__}: {' '.join(str(err).split())[:150]})") from None
    if "observation_space" not in data:
        raise RunDirError(f"--resume {str(path)!r} is not a stable-baselines3 checkpoint")
    weights = params.get("policy") if isinstance(params, dict) else None
    problem, _ = magnitudes_problem(
        largest_magnitudes(weights.items() if isinstance(weights, dict) else ()))
    if problem is not None:  # what a diverged run saved before each update was checked
        raise RunDirError(f"--resume {str(path)!r} holds weights a policy file refuses "
                          f"({problem}: the file was changed, or its run diverged); resume an "
                          "earlier checkpoint of the run")
    from dominoes_env.obs.v2 import observation_size

    obs, actions = observation_size(rules), rules.num_tiles * 4
    shape, n = space_sizes(data)
    if shape != (obs,) or n != actions:
        raise RunDirError(f"--resume {str(path)!r} was trained with {shape} observations and "
                          f"{n} actions; --players {rules.num_players} needs ({obs},) and "
                          f"{actions}")
    pi, act = network(data)
    if pi is not None and pi != hidden_sizes(net):
        raise RunDirError(f"--resume {str(path)!r} has hidden layers {','.join(map(str, pi))}, "
                          f"not --net {net}; pass --net {','.join(map(str, pi))}")
    if act and act != activation:
        raise RunDirError(f"--resume {str(path)!r} uses activation {act}, not --activation "
                          f"{activation}; pass --activation {act}")


def settings_note(resume: str, ours: dict[str, Any], data: dict[str, Any]) -> str | None:
    """What to say when the ``--resume`` checkpoint ``resume`` (its ``data``) was trained with
    settings other than ``ours``, this command's, which the run goes on with (by the names of
    :data:`~agents.sb3_checkpoint.SETTINGS`); ``None`` when they agree."""
    theirs = settings(data)
    differ = [key for key in ours if key in theirs and theirs[key] != ours[key]]
    if not differ:
        return None
    there = ", ".join(f"{key}={theirs[key]}" for key in differ)
    flags = " ".join(f"--{key.replace('_', '-')} {ours[key]}" for key in differ)
    return f"note: --resume {resume} was trained with {there}; this run goes on with {flags}"


def rewind_note(resume: str | None, out: Path, steps: int) -> str | None:
    """What to say when ``--resume`` (the checkpoint ``resume``; ``None``: a new run) takes
    the run in ``out`` back to ``steps``, before the steps it reached (an older checkpoint of
    it: :func:`reached_steps`): the later evaluations stay in eval.csv, and the policy and
    checkpoints it exported are replaced as the run goes on again."""
    reached = reached_steps(out)
    if resume is None or steps >= reached:
        return None
    return (f"note: --resume {resume} takes this run back to step {steps:,} of the "
            f"{reached:,} it reached: eval.csv keeps its later rows, and policy.npz and the "
            "later checkpoints are replaced as it trains again")


# -- this machine --------------------------------------------------------------------------
#: memory of one step in the rollout buffer or a minibatch (the observation, the mask, the
#: action, value, log-probability, return and advantage), of an environment in this process,
#: and of a process (a subproc environment or a demonstration worker), all rounded up
BYTES_PER_STEP = 4096
BYTES_PER_ENV = 2**20
BYTES_PER_PROCESS = 256 * 2**20


def check_memory(rules: RuleConfig, hidden: list[int], *, n_envs: int, vec_env: str,
                 workers: int, n_steps: int, batch_size: int) -> None:
    """``ValueError`` (:class:`~dominoes_env.cli_support.RefusedError`) unless a run of these
    settings (train_ppo's flags of the same names; ``hidden``: the sizes of its hidden layers)
    fits in this machine's memory: its environments (a process each with ``vec_env``
    ``subproc``), the demonstration workers, the rollout buffer and a minibatch, and the
    networks (policy and value, their gradients and Adam's two moments)."""
    from dominoes_env.obs import observation_spec

    sizes = [observation_spec().layout(rules).size, *hidden, rules.num_tiles * 4]
    weights = sum(a * b + b for a, b in zip(sizes[:-1], sizes[1:], strict=True))
    subproc = n_envs > 1 and vec_env == "subproc"
    need = (n_envs * (BYTES_PER_PROCESS if subproc else BYTES_PER_ENV)
            + workers * BYTES_PER_PROCESS
            + (n_steps * n_envs + batch_size) * BYTES_PER_STEP
            + 2 * 4 * 4 * weights)
    check_fits_in_memory("this run", need, 1,
                         f"{n_envs:,} environments, {workers:,} workers, "
                         f"rollouts of {n_steps:,} steps, networks of {weights:,} weights")


def check_device(device: str) -> None:
    """``ValueError`` unless torch can use ``device`` (train_ppo's ``--device``: ``cpu``,
    ``auto``, ``mps``, ``cuda`` or ``cuda:N``) here, naming the devices it can (``cpu`` and
    ``auto`` always can). ``--device mps`` without MPS, or ``cuda:N`` past the last GPU, is
    refused before anything is written."""
    if device in ("cpu", "auto"):
        return
    torch = require("torch", "train", "training")
    cuda = torch.cuda.is_available()
    gpus = torch.cuda.device_count() if cuda else 0
    mps_backend = getattr(torch.backends, "mps", None)
    mps = bool(mps_backend is not None and mps_backend.is_available())
    available = ["cpu", *(["cuda", *(f"cuda:{i}" for i in range(gpus))] if gpus else []),
                 *(["mps"] if mps else [])]
    if device == "mps":
        ok = mps
    else:  # cuda or cuda:N
        index = int(device.partition(":")[2] or 0)
        ok = cuda and index < gpus
    if not ok:
        raise ValueError(f"--device {device}: torch cannot use it here; available: "
                         f"{', '.join(available)}")
