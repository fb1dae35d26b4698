"""Checkpoints of a JAX PPO run (`python -m experiments.train_jax`): write, check, restore, and
warm-start a new run from a checkpoint or an exported policy file.

A run's state is its `runner`, a dict of arrays: `params` (`{"actor", "critic"}` as
`dominoes_env.jax.networks` builds them), the optimizer's state `opt`, the frozen `snaps`, the
counters, the random `key`, and the games in play (`games`, `ep_return`), which a checkpoint
leaves out (a resumed run deals new ones). A checkpoint is an `.npz` of the runner's other
arrays (`leaf0`, `leaf1`, ... in `jax.tree` order) and a JSON `meta` string: `format`, `steps`,
`wall_s`, and the run's settings under `config`.

The run's `settings` are its configuration, a dict or a dataclass (such as
`experiments.train_jax.Config`) with at least the fields of `SHAPE_FIELDS` and `target_score`:
`players`, `partnerships` and `target_score` are the table, `net` the hidden layer sizes
(`"256,256"`), `critic` what the value network sees (`"obs"` or `"full"`), `obs_version` the
observation version the policy reads.

A checkpoint is untrusted input: nothing pickled is loaded, its metadata is checked against the
run that reads it and its run's settings by the rules of the flags that gave them
(`read_checkpoint`), and every array must have the dtype and shape the run expects, finite
values no larger than training makes (`MAX_MAGNITUDE`), and counters in the range of the run
that wrote it (`restore`), a warm start's too, which takes only the networks
(`checkpoint_networks`). A refusal is a `ValueError` naming the flag, the file and the
problem (an array by its name in the file and its place in the run's state: `leaf33 (update)`;
a setting by its name).

Needs the `jax` extra.
"""

from __future__ import annotations

import dataclasses
import json
import os
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from dominoes_env.cli_support import check_settings
from dominoes_env.core import RuleConfig
from dominoes_env.core.atomic_files import atomic_write, entry_kind
from dominoes_env.core.validation import as_float, as_int, parse_json, short_repr
from dominoes_env.npz_files import read_npz
from dominoes_env.obs import VERSIONS, observation_spec
from dominoes_env.policy_format import MAX_STEPS, MAX_WALL_S, hidden_sizes

from .optimizer import optimizer_state_shapes
from .policy_files import is_policy_file, load_actor

#: the checkpoint format
FORMAT = "straight-dominoes-train-jax/1"
#: the most a checkpoint's metadata record may expand to (it is a few kilobytes): a header
#: declaring more is refused before anything is allocated
MAX_META_BYTES = 16 * 1024 * 1024
#: the largest magnitude a checkpoint's float arrays may hold: a network's weights stay within
#: hundreds and Adam's moments within the clipped gradients. A checkpoint holding more is a
#: ``ValueError`` (finite weights or moments of 3e38 would turn the resumed run's first update
#: to NaN, and that run would then be saved over the checkpoint)
MAX_MAGNITUDE = 1e6
#: the most an int32 counter counts (optax's step counts stop there)
MAX_COUNT = 2**31 - 1
#: runner entries a checkpoint leaves out
NOT_SAVED = ("games", "ep_return")
#: settings that fix the shapes a checkpoint holds (`--resume` needs them equal)
SHAPE_FIELDS = ("players", "partnerships", "net", "critic", "obs_version", "num_envs",
                "num_steps", "snapshots")
#: what a checkpoint written before a shape field existed was trained with
SHAPE_DEFAULTS = {"critic": "obs", "obs_version": 2}
#: what a `--resume` must share with its checkpoint: the shapes, and the seed the run was
#: started with. The run's key goes on from the checkpoint, so another `--seed` (no setting of
#: the update) would change only the seeds of its evaluation matches, and its config.json and
#: policy.json would name a seed it was not trained from; it is refused instead
RESUME_FIELDS = (*SHAPE_FIELDS, "seed")
#: what a warm start (`--init`) from a checkpoint must share with it
INIT_FIELDS = ("players", "partnerships", "net", "critic")


def _saved(runner: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in runner.items() if k not in NOT_SAVED}


def as_settings(settings: Any) -> dict[str, Any]:
    """`settings` as a dict (a dataclass's fields, or a mapping's items)."""
    if dataclasses.is_dataclass(settings) and not isinstance(settings, type):
        return dataclasses.asdict(settings)
    if isinstance(settings, Mapping):
        return dict(settings)
    raise TypeError(f"settings must be a dict or a dataclass, not {type(settings).__name__}")


def _table(settings: Mapping[str, Any]) -> tuple[RuleConfig, list[int]]:
    """The rules and the hidden layer sizes of `settings`."""
    rules = RuleConfig(num_players=settings["players"], partnerships=settings["partnerships"],
                       target_score=settings["target_score"])
    return rules, [int(x) for x in str(settings["net"]).split(",")]


def save_checkpoint(runner: Mapping[str, Any], settings: Any, steps: int, wall: float,
                    path: str | os.PathLike) -> None:
    """Write everything `runner` carries but the games in play to `path`, atomically, with
    `steps`, `wall` (seconds trained) and the run's `settings`. `steps` (an integer in
    0..`MAX_STEPS`) and `wall` (a number of seconds in 0..`MAX_WALL_S`) are checked first, by
    the rules `read_checkpoint` reads them with (`ValueError` / `TypeError` naming them, and
    nothing written: a NaN, a negative count, 2.7 or True never replaces a good checkpoint)."""
    steps = as_int("steps", steps, 0, MAX_STEPS)
    wall = as_float("wall", wall, 0, MAX_WALL_S)
    leaves = jax.tree.leaves(_saved(runner))
    meta = {"format": FORMAT, "steps": steps, "wall_s": wall,
            "config": as_settings(settings)}
    payload = {f"leaf{i}": np.asarray(x) for i, x in enumerate(leaves)}
    payload["meta"] = np.array(json.dumps(meta))
    with atomic_write(path, "wb") as fh:
        np.savez(fh, **payload)


def saved_field(meta: Mapping[str, Any], name: str):
    """A setting of a checkpoint's metadata (the old default where it predates the setting)."""
    return meta.get("config", {}).get(name, SHAPE_DEFAULTS.get(name))


def _unreadable(path: Path, err: Exception) -> str:
    """Why ``path`` could not be read as a checkpoint, in our words (numpy's advice for a
    pickle, "load it unsafely with allow_pickle=", is never the thing to do here)."""
    if not zipfile.is_zipfile(path):
        return "not an .npz archive"
    if "pickle" in str(err):
        return "it holds pickled (object) data, which is never loaded"
    return " ".join(str(err).split())[:120]


def not_a_file(path: Path) -> str:
    """Why ``path``, which is not a regular file, is no checkpoint: missing, or what it is
    (what a link leads to)."""
    try:
        return f"it is {entry_kind(os.stat(path).st_mode)}, not a checkpoint file"
    except FileNotFoundError:
        return "no such checkpoint file"
    except OSError as err:
        return f"it cannot be read ({err.strerror or err})"


def _check_saved_settings(where: str, saved: Mapping[str, Any], settings: Any) -> None:
    """`ValueError` naming the first setting of a checkpoint's `saved` config that no run
    could have had: its table (the rules' own checks) and its `net`, and where `settings` is a
    configuration dataclass (`experiments.train_jax.Config`), each of its fields by the rules
    of that field's flag (`check_settings`): a checkpoint saying matmul='float16',
    target_score=-5 or update_epochs=-1 (which would turn off the check of the optimizer's
    step count) is refused, as the same flags on the command line are."""
    table = {name: saved[key] for key, name in (("players", "num_players"),
                                                ("partnerships", "partnerships"),
                                                ("target_score", "target_score"))
             if key in saved}
    try:
        if dataclasses.is_dataclass(settings) and not isinstance(settings, type):
            check_settings(type(settings), saved)
        RuleConfig(**table)
        if "net" in saved:
            hidden_sizes(saved["net"])
    except (ValueError, TypeError) as err:
        raise ValueError(f"{where} is damaged: in its config, {err}") from None


def read_checkpoint(path: str | os.PathLike, settings: Any, flag: str = "--resume",
                    fields: tuple[str, ...] = SHAPE_FIELDS) -> dict[str, Any]:
    """The metadata of the checkpoint at `path`, checked against `settings` on `fields`
    (`ValueError` naming `flag`, the file and what does not match) and, its run's settings,
    against what a run may have (`_check_saved_settings`); the arrays are loaded by `restore`
    or `warm_start`."""
    given, settings = settings, as_settings(settings)
    p = Path(path)
    where = f"{flag} {os.fspath(path)!r}"
    if not p.is_file():  # a FIFO, a folder, a device was "no such checkpoint file"
        raise ValueError(f"{where}: {not_a_file(p)}")
    try:
        meta = parse_json(str(read_npz(p, max_bytes=MAX_META_BYTES, names=("meta",))["meta"]))
    except (OSError, ValueError, KeyError, EOFError, AttributeError, TypeError,
            RecursionError, zipfile.BadZipFile) as err:  # JSONDecodeError, NpzError, no meta
        raise ValueError(f"{where} is not a train_jax checkpoint ({_unreadable(p, err)})"
                         ) from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT \
            or not isinstance(meta.get("config", {}), dict):
        raise ValueError(f"{where} is not a train_jax checkpoint ({FORMAT})")
    steps, wall = meta.get("steps"), meta.get("wall_s")
    if type(steps) is not int or not 0 <= steps <= MAX_STEPS:  # not a bool, 2.5 or 2**70
        raise ValueError(f"{where}: its steps is {short_repr(steps)}, not a whole number in "
                         f"0..{MAX_STEPS:,}")
    if type(wall) not in (int, float) or not 0 <= wall <= MAX_WALL_S:  # NaN fails too
        raise ValueError(f"{where}: its wall_s is {short_repr(wall)}, not a number of seconds "
                         f"in 0..{MAX_WALL_S:,.0f}")
    _check_saved_settings(where, meta.get("config", {}), given)
    for name in fields:
        was = saved_field(meta, name)
        if was != settings.get(name):
            raise ValueError(f"{where} was trained with {name}={was!r}, this run has "
                             f"{name}={settings.get(name)!r}")
    return meta


def _part(key: Any) -> str:
    """One step of a path into the run's state: a dict key, a list index, a field name."""
    for attr in ("key", "name", "idx"):
        if hasattr(key, attr):
            return str(getattr(key, attr))
    return str(key)


def _paths(tree: Any) -> list[tuple[str, ...]]:
    """Where each array of `tree` is (`("opt", "1", "0", "count")`), in `jax.tree` order."""
    return [tuple(_part(k) for k in path)
            for path, _ in jax.tree_util.tree_flatten_with_path(tree)[0]]


def _names(paths: list[tuple[str, ...]]) -> list[str]:
    """How a message names each array: its name in the file and its place in the state."""
    return [f"leaf{i} ({'/'.join(path)})" for i, path in enumerate(paths)]


def _load_leaves(path: str | os.PathLike, expected: list, flag: str,
                 names: list[str] | None = None) -> list[np.ndarray]:
    """The checkpoint's arrays, each of the dtype and shape of `expected`'s, finite and within
    `MAX_MAGNITUDE` (`names`: how a message names them)."""
    where = f"{flag} {os.fspath(path)!r}"
    try:
        # no more than this run's own arrays and a metadata record
        cap = sum(np.dtype(leaf.dtype).itemsize * int(np.prod(np.shape(leaf)))
                  for leaf in expected) + MAX_META_BYTES
        data = read_npz(path, max_bytes=cap)
        held = {k for k in data if k.startswith("leaf")}
        count = len(held)
        missing = [i for i in range(len(expected)) if f"leaf{i}" not in held]
        loaded = [data[f"leaf{i}"] for i in range(len(expected)) if f"leaf{i}" in held]
    except (OSError, ValueError, KeyError, EOFError, AttributeError,
            zipfile.BadZipFile) as err:  # a pickled, damaged or oversized array
        raise ValueError(f"{where} is damaged ({' '.join(str(err).split())[:120]})") from None
    if missing and missing[0] < count:  # a gap: was a bare KeyError, "is damaged ('leaf5')"
        name = names[missing[0]] if names else f"leaf{missing[0]}"
        more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
        raise ValueError(f"{where} is damaged: its array {name}{more} is missing (this run's "
                         f"trainer has {len(expected)} arrays, leaf0..leaf{len(expected) - 1})")
    if count != len(expected):
        raise ValueError(f"{where} holds {count} arrays; this run's trainer has {len(expected)}")
    names = names or ["an array"] * len(expected)
    for want, got, name in zip(expected, loaded, names, strict=True):
        if np.dtype(want.dtype) != got.dtype:
            raise ValueError(f"{where}: {name} is {got.dtype}, expected {np.dtype(want.dtype)}")
        if got.dtype.kind == "f" and not np.isfinite(got).all():
            raise ValueError(f"{where}: {name} holds NaN or infinite values")
        if got.dtype.kind == "f" and got.size and (top := float(np.abs(got).max())) \
                > MAX_MAGNITUDE:
            raise ValueError(f"{where}: {name} holds a value of magnitude {top:.3g}; training "
                             f"makes none above {MAX_MAGNITUDE:g} (the file was changed, or its "
                             "run diverged)")
    return loaded


def _whole(where: str, config: Mapping[str, Any], name: str) -> int | None:
    """The count `name` of a checkpoint's `config` that a check of its counters needs (`None`
    where the config has none); `ValueError` where it is no whole number >= 1, so that the
    check it gates always runs (a config saying update_epochs=-1 would let any optimizer step
    count through)."""
    if name not in config:
        return None
    value = config[name]
    if type(value) is not int or value < 1:
        raise ValueError(f"{where} is damaged: in its config, {name}={short_repr(value)} is "
                         "not a whole number >= 1")
    return value


def _check_counters(where: str, paths: list[tuple[str, ...]], loaded: list[np.ndarray],
                    names: list[str], meta: Mapping[str, Any]) -> None:
    """`ValueError` naming the first counter of a checkpoint out of the range of the run that
    wrote it (its `meta`): a negative one (Adam's step count at -1 divides by zero: the resumed
    run's first update would be NaN), an update count other than its steps' (`steps` over the
    rollout of `num_envs` x `num_steps`), an optimizer step count other than its updates'
    (`num_minibatches` x `update_epochs` each), a snapshot count or index outside the
    snapshots it keeps (JAX clamps an index out of range, in silence)."""
    config = meta.get("config") or {}
    steps = meta["steps"]
    counts = {name: _whole(where, config, name) or 0
              for name in ("num_envs", "num_steps", "num_minibatches", "update_epochs")}
    rollout = counts["num_envs"] * counts["num_steps"]
    per_update = counts["num_minibatches"] * counts["update_epochs"]
    kept = next((int(x.shape[0]) for p, x in zip(paths, loaded, strict=True)
                 if p[0] == "snaps" and x.ndim), None)
    for path, array, name in zip(paths, loaded, names, strict=True):
        if array.dtype.kind != "i":
            continue
        if array.size and int(array.min()) < 0:
            raise ValueError(f"{where}: {name} is {int(array.min())}; a count is never "
                             "negative")
        value = int(array.max()) if array.size else 0
        if path == ("update",) and rollout and value * rollout != steps:
            raise ValueError(f"{where}: {name} is {value:,}; its {steps:,} steps in rollouts "
                             f"of {rollout:,} are {steps / rollout:,.4g} updates")
        if path[0] == "opt" and path[-1] == "count" and rollout and per_update:
            want = min(steps // rollout * per_update, MAX_COUNT)
            if value != want:
                raise ValueError(f"{where}: {name} is {value:,}; its {steps // rollout:,} "
                                 f"updates of {per_update:,} minibatch steps are {want:,}")
        if path == ("snaps_filled",) and kept is not None and not 1 <= value <= kept:
            raise ValueError(f"{where}: {name} is {value:,}; it counts the snapshots kept, "
                             f"1..{kept}")
        if path == ("snaps_next",) and kept is not None and not value < kept:
            raise ValueError(f"{where}: {name} is {value:,}; it indexes the snapshots kept, "
                             f"0..{kept - 1}")


def _load_checked(path: str | os.PathLike, expected: list, paths: list[tuple[str, ...]],
                  flag: str, meta: Mapping[str, Any]) -> list[np.ndarray]:
    """The arrays of the checkpoint at `path` (its metadata `meta`), each of the dtype and
    shape of `expected`'s (arrays, or shapes and dtypes: `jax.ShapeDtypeStruct`), finite and
    within `MAX_MAGNITUDE` (`_load_leaves`), and its counters in the range of the run that
    wrote it (`_check_counters`)."""
    where = f"{flag} {os.fspath(path)!r}"
    names = _names(paths)
    loaded = _load_leaves(path, expected, flag, names)
    for want, got, name in zip(expected, loaded, names, strict=True):
        if tuple(np.shape(want)) != got.shape:
            raise ValueError(f"{where}: {name} has shape {got.shape}, expected "
                             f"{tuple(np.shape(want))}")
    _check_counters(where, paths, loaded, names, meta)
    return loaded


def restore(path: str | os.PathLike, runner: dict[str, Any], flag: str = "--resume"
            ) -> dict[str, Any]:
    """`runner` with every array the checkpoint at `path` holds (each placed where `runner`'s
    is, e.g. replicated over its devices); `ValueError` if one has another dtype or shape, a
    value out of training's range, or a counter out of the range of the run that wrote it
    (`_check_counters`)."""
    meta = read_checkpoint(path, {}, flag, fields=())
    leaves, tree = jax.tree.flatten(_saved(runner))
    loaded = _load_checked(path, leaves, _paths(_saved(runner)), flag, meta)
    restored = jax.tree.unflatten(tree, [jax.device_put(x, old.sharding)
                                         for old, x in zip(leaves, loaded, strict=True)])
    return {**runner, **restored}


def init_policy(path: str | os.PathLike, settings: Any
                ) -> tuple[list[dict[str, np.ndarray]], int]:
    """The actor layers of the policy file at `path` and the observation version it reads
    (`ValueError` unless it plays the table of `settings` with its hidden layer sizes)."""
    rules, hidden = _table(as_settings(settings))
    try:
        actor, version = load_actor(path, rules)
    except ValueError as err:
        raise ValueError(f"--init: {err}") from None
    have = [int(layer["w"].shape[1]) for layer in actor[:-1]]
    if have != list(hidden):
        raise ValueError(f"--init {os.fspath(path)!r} has hidden layers "
                         f"{','.join(map(str, have))}; this run has --net "
                         f"{','.join(map(str, hidden))}")
    return actor, version


def check_init(path: str | os.PathLike, settings: Any) -> int:
    """The observation version of the `--init` file at `path`, a checkpoint or a policy file
    (`ValueError` unless a run with `settings` can start from it: same table and network, an
    observation version up to the run's `obs_version`)."""
    settings = as_settings(settings)
    if is_policy_file(path):
        version = init_policy(path, settings)[1]
    else:
        version = saved_field(read_checkpoint(path, settings, "--init", INIT_FIELDS),
                              "obs_version")
    if version not in VERSIONS or version > settings["obs_version"]:
        raise ValueError(f"--init {os.fspath(path)!r} reads observation version {version!r}; "
                         f"this run reads {settings['obs_version']} and can only start from a "
                         f"version up to it")
    return version


def policy_networks(actor: list[dict[str, np.ndarray]], hidden_info: int) -> dict[str, Any]:
    """The networks a run starts from when `--init` names a policy file (`actor`, as
    `init_policy` reads it), which keeps no value network: that actor, and a critic made of
    copies of its hidden layers (the features it learned; `hidden_info` more inputs at zero
    weights for a perfect-information critic) under a zero value head. The critic starts out
    predicting 0 everywhere and learns its head first (no gradient reaches its hidden layers
    until the head moves)."""
    first, *rest = actor[:-1]
    critic = [{"w": np.concatenate([first["w"], np.zeros((hidden_info, first["w"].shape[1]),
                                                          np.float32)]),
               "b": first["b"].copy()},
              *({"w": layer["w"].copy(), "b": layer["b"].copy()} for layer in rest),
              {"w": np.zeros((actor[-2]["w"].shape[1], 1), np.float32),
               "b": np.zeros(1, np.float32)}]
    return {"actor": actor, "critic": critic}


def _saved_shape(path: tuple[str, ...], shape: tuple[int, ...], fewer_inputs: int,
                 kept: int) -> tuple[int, ...]:
    """The shape of the array at `path` (of `shape` in a run's state) in a checkpoint of a run
    whose networks read `fewer_inputs` fewer observation inputs and which kept `kept`
    snapshots: a first layer's weights (of a network, of the optimizer's moments of it, of a
    snapshot) have that many fewer rows, the snapshots have `kept` on their first axis, every
    other array is as the run's."""
    if path[0] == "snaps":
        return (kept, *_saved_shape(("actor", *path[1:]), shape[1:], fewer_inputs, kept))
    network = next((path[i:] for i, part in enumerate(path) if part in ("actor", "critic")),
                   ())
    if network[1:] == ("0", "w"):
        return (shape[0] - fewer_inputs, *shape[1:])
    return tuple(shape)


def checkpoint_networks(path: str | os.PathLike, runner: Mapping[str, Any],
                        fewer_inputs: int = 0) -> list[np.ndarray]:
    """The network arrays of the checkpoint at `path`, in the order of `runner`'s, once the
    whole file is checked as `restore` checks it: a warm start takes only the networks, but a
    damaged optimizer state, snapshot, key or counter is a damaged file, refused rather than
    partly used. Its optimizer state is that of the settings of the run that wrote it
    (`anneal_lr` adds a step count), not this run's. Its arrays have the shapes of `runner`'s
    but where the run that wrote it read `fewer_inputs` fewer observation inputs (an earlier
    observation version) or kept another number of snapshots (`_saved_shape`)."""
    meta = read_checkpoint(path, {}, "--init", fields=())
    config = meta.get("config") or {}
    saved = _saved(runner)
    if isinstance(config.get("anneal_lr"), bool):  # the state of its run's optimizer
        saved["opt"] = optimizer_state_shapes(config["anneal_lr"], runner["params"])
    leaves, paths = jax.tree.leaves(saved), _paths(saved)
    kept = _whole(f"--init {os.fspath(path)!r}", config, "snapshots")
    if kept is None:  # a config that does not say: as many as this run keeps
        kept = next((int(np.shape(x)[0]) for p, x in zip(paths, leaves, strict=True)
                     if p[0] == "snaps"), 0)
    expected = [jax.ShapeDtypeStruct(_saved_shape(p, np.shape(x), fewer_inputs, kept), x.dtype)
                for p, x in zip(paths, leaves, strict=True)]
    loaded = _load_checked(path, expected, paths, "--init", meta)
    return [x for p, x in zip(paths, loaded, strict=True) if p[0] == "params"]


def warm_start(path: str | os.PathLike, runner: dict[str, Any], settings: Any
               ) -> dict[str, Any]:
    """`runner` with the networks of the checkpoint or policy file at `path` (`--init`;
    `policy_networks` for a policy file), every snapshot a copy of that actor, and the run's
    own fresh optimizer, games and counters.

    A file of a lower observation version (versions extend each other at the end) gets zero
    weights for the inputs it lacked, inserted after its observation (before the hidden
    information a perfect-information critic also reads): the network computes what it did,
    and learns to use the new inputs from there (network surgery, as OpenAI Five grew its
    inputs between runs)."""
    settings = as_settings(settings)
    rules = _table(settings)[0]
    version = check_init(path, settings)
    old_size = observation_spec(version).layout(rules).size
    new_size = observation_spec(settings["obs_version"]).layout(rules).size
    params = runner["params"]
    flat_params, params_tree = jax.tree.flatten(params)
    if is_policy_file(path):
        hidden_info = int(np.shape(params["critic"][0]["w"])[0]) - new_size
        got = jax.tree.leaves(policy_networks(init_policy(path, settings)[0], hidden_info))
    else:
        got = checkpoint_networks(path, runner, new_size - old_size)
    grown = []
    for new, old in zip(flat_params, got, strict=True):
        want = tuple(np.shape(new))
        if old.shape != want:
            extra = new_size - old_size
            if old.ndim != 2 or old.shape[0] + extra != want[0] or old.shape[1] != want[1]:
                raise ValueError(f"--init {os.fspath(path)!r}: an array has shape {old.shape}, "
                                 f"expected {want}")
            old = np.concatenate([old[:old_size], np.zeros((extra, want[1]), old.dtype),
                                  old[old_size:]])
        grown.append(jax.device_put(old, new.sharding))
    params = jax.tree.unflatten(params_tree, grown)
    snaps = jax.tree.map(lambda x, s: jax.device_put(jnp.stack([x] * s.shape[0]), s.sharding),
                         params["actor"], runner["snaps"])
    return {**runner, "params": params, "snaps": snaps}
