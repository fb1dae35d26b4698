"""Policy files: a JAX actor to and from the `.npz` export that `ppo:PATH` plays.

The file format is the one `agents.ppo` reads (format `"straight-dominoes-ppo/1"`): hidden
layers `w{i}` (`[in, out]`) and `b{i}`, the action head `action_w` and `action_b`, the
activation (here always `tanh`, the activation of `dominoes_env.jax.networks`), the number of
hidden layers, and a JSON `metadata` object with at least `obs_version` (the observation version
the policy reads), `obs_size` and `num_actions`. An actor is the list of layers
`dominoes_env.jax.networks` computes with (`[{"w": ..., "b": ...}, ...]`, the head last).

A policy file is untrusted input: reading one checks every array (present, a float array of the
right rank, shapes that chain from the observation to the actions, finite values), loads
nothing pickled, checks the metadata (a JSON object whose `obs_version` is a registered
observation version, whose sizes are those of the arrays) and, for a table's rules, that the
sizes are the ones those rules need. A bad file is refused with a `ValueError` that names the
file and the problem.

>>> import os, tempfile
>>> from dominoes_env.core import RuleConfig
>>> rules = RuleConfig()
>>> rng = np.random.default_rng(0)
>>> actor = [{"w": rng.normal(size=(234, 8)), "b": np.zeros(8)},
...          {"w": rng.normal(size=(8, 112)), "b": np.zeros(112)}]
>>> path = os.path.join(tempfile.mkdtemp(), "policy.npz")
>>> export_npz(actor, path, {"rules": rules.to_dict(), "obs_version": 2})
>>> is_policy_file(path)
True
>>> layers, version = load_actor(path, rules)
>>> [layer["w"].shape for layer in layers], version
([(234, 8), (8, 112)], 2)
>>> load_actor(path, RuleConfig(num_players=3))
Traceback (most recent call last):
...
ValueError: policy file '...': takes 234 inputs and 112 actions; these rules need 244 and 112
"""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from dominoes_env.core import RuleConfig
from dominoes_env.core.atomic_files import atomic_write
from dominoes_env.obs import DEFAULT_VERSION, VERSIONS, observation_spec

#: the export format (that of `agents.ppo`; a test holds them equal)
POLICY_FORMAT = "straight-dominoes-ppo/1"
#: the activation of every hidden layer of the networks written and read here
ACTIVATION = "tanh"
#: the most hidden layers a policy file may declare
MAX_LAYERS = 64

Actor = list[dict[str, np.ndarray]]


def export_npz(actor, path: str | os.PathLike, metadata: dict[str, Any]) -> None:
    """Write `actor` (layers, the action head last) to `path` in the policy file format,
    atomically. `metadata` (a JSON object) is stored with `obs_size`, `num_actions` and
    `obs_version` (default `DEFAULT_VERSION`) filled in; `ValueError` if the observation
    version is not registered, the actor's input size is not that version's for
    `metadata["rules"]` (when given), or a weight is not finite."""
    where = f"policy file {os.fspath(path)!r}"
    if not actor:
        raise ValueError(f"{where}: an actor needs at least its action head")
    arrays = {}
    for i, layer in enumerate(actor[:-1]):
        arrays[f"w{i}"] = np.asarray(layer["w"], np.float32)
        arrays[f"b{i}"] = np.asarray(layer["b"], np.float32)
    arrays["action_w"] = np.asarray(actor[-1]["w"], np.float32)
    arrays["action_b"] = np.asarray(actor[-1]["b"], np.float32)
    meta = {"obs_size": int(arrays.get("w0", arrays["action_w"]).shape[0]),
            "num_actions": int(arrays["action_w"].shape[1]), "obs_version": DEFAULT_VERSION,
            **metadata}
    _check_arrays(arrays, len(actor) - 1, where)
    _check_metadata(meta, meta["obs_size"], meta["num_actions"], where)
    if isinstance(meta.get("rules"), dict):
        need = observation_spec(meta["obs_version"]).layout(
            RuleConfig.from_dict(meta["rules"])).size
        if meta["obs_size"] != need:
            raise ValueError(f"{where}: the actor takes {meta['obs_size']} inputs; observation "
                             f"version {meta['obs_version']} under its rules has {need}")
    payload = {**arrays, "format": np.array(POLICY_FORMAT), "activation": np.array(ACTIVATION),
               "num_layers": np.array(len(actor) - 1),
               "metadata": np.array(json.dumps(meta))}
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(path, "wb") as fh:
        np.savez(fh, **payload)


def is_policy_file(path: str | os.PathLike) -> bool:
    """Whether `path` is an `.npz` that looks like a policy file (it has a `format` entry),
    rather than a training checkpoint or anything else (no error either way; `load_actor`
    checks it)."""
    try:
        with np.load(path, allow_pickle=False) as data:
            return "format" in data.files and "meta" not in data.files
    except (OSError, ValueError, EOFError, AttributeError, zipfile.BadZipFile):
        return False  # a missing file, a pickle, a damaged zip, a plain .npy array


def load_actor(path: str | os.PathLike, rules: RuleConfig) -> tuple[Actor, int]:
    """The actor in the policy file at `path` (float32 layers, the action head last) and the
    observation version it reads; `ValueError` naming the file unless it is a valid tanh policy
    for `rules` (its input size that version's observation size, one output per action)."""
    where = f"policy file {os.fspath(path)!r}"
    data = _read(path, where)
    missing = {"format", "activation", "num_layers", "action_w", "action_b", "metadata"}
    missing -= set(data)
    if missing:
        raise ValueError(f"{where}: not an exported policy (missing {', '.join(sorted(missing))})")
    fmt = _text(data, "format", where)
    if fmt != POLICY_FORMAT:
        raise ValueError(f"{where}: format {fmt!r}; this version reads {POLICY_FORMAT!r}")
    activation = _text(data, "activation", where)
    if activation != ACTIVATION:
        raise ValueError(f"{where}: uses {activation}; the JAX networks play {ACTIVATION} policies")
    layers = data["num_layers"]
    if layers.shape != () or layers.dtype.kind not in "iu" or not 0 <= int(layers) <= MAX_LAYERS:
        raise ValueError(f"{where}: num_layers must be one integer in 0..{MAX_LAYERS}")
    n = int(layers)
    _check_arrays(data, n, where)
    try:
        meta = json.loads(_text(data, "metadata", where))
    except json.JSONDecodeError:
        raise ValueError(f"{where}: metadata is not JSON") from None
    size, actions = data["w0" if n else "action_w"].shape[0], data["action_w"].shape[1]
    version = _check_metadata(meta, size, actions, where)
    need = (observation_spec(version).layout(rules).size, rules.num_tiles * 4)
    if (size, actions) != need:
        raise ValueError(f"{where}: takes {size} inputs and {actions} actions; these rules "
                         f"need {need[0]} and {need[1]}")
    keys = [(f"w{i}", f"b{i}") for i in range(n)] + [("action_w", "action_b")]
    return [{"w": data[w].astype(np.float32), "b": data[b].astype(np.float32)}
            for w, b in keys], version


def load_fixed_actor(path: str | os.PathLike, rules: RuleConfig,
                     obs_version: int = DEFAULT_VERSION) -> Actor:
    """`load_actor`'s actor, refused with a `ValueError` unless it reads `obs_version`."""
    layers, version = load_actor(path, rules)
    if version != obs_version:
        raise ValueError(f"policy file {os.fspath(path)!r} reads observation version {version}, "
                         f"not version {obs_version}")
    return layers


# -- the checks ------------------------------------------------------------------------------
def _read(path: str | os.PathLike, where: str) -> dict[str, np.ndarray]:
    p = Path(path)
    if not p.exists():
        raise ValueError(f"{where}: no such file")
    if not p.is_file():
        raise ValueError(f"{where}: not a regular file (a policy is an .npz file)")
    try:
        loaded = np.load(p, allow_pickle=False)
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as err:
        raise ValueError(f"{where}: not a policy .npz file ({_reason(err)})") from None
    if not isinstance(loaded, np.lib.npyio.NpzFile):
        raise ValueError(f"{where}: a single .npy array, not a policy .npz file")
    try:
        with loaded:
            return {key: loaded[key] for key in loaded.files}
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile) as err:
        raise ValueError(f"{where}: damaged, or an array of pickled objects "
                         f"({_reason(err)})") from None


def _reason(err: BaseException) -> str:
    return " ".join(str(err).split())[:120] or type(err).__name__


def _text(data: dict[str, np.ndarray], key: str, where: str) -> str:
    value = data[key]
    if value.shape != () or value.dtype.kind not in "US":
        raise ValueError(f"{where}: {key} must be a string")
    return str(value)


def _check_arrays(data: dict[str, np.ndarray], n: int, where: str) -> None:
    """`n` hidden layers and the head: present, float, of the right rank, shapes that chain
    from the input to the actions, finite."""
    keys = [(f"w{i}", f"b{i}") for i in range(n)] + [("action_w", "action_b")]
    missing = [k for pair in keys for k in pair if k not in data]
    if missing:
        raise ValueError(f"{where}: num_layers={n} but {', '.join(missing)} missing")
    width = None
    for i, (wk, bk) in enumerate(keys):
        w, b = data[wk], data[bk]
        for key, array, ndim in ((wk, w, 2), (bk, b, 1)):
            if array.ndim != ndim or array.dtype.kind != "f":
                raise ValueError(f"{where}: {key} must be a {ndim}-D float array, got "
                                 f"{array.dtype} {array.shape}")
            if not np.isfinite(array).all():
                raise ValueError(f"{where}: {key} holds NaN or infinite values")
        width = w.shape[0] if width is None else width
        if w.shape[0] != width or b.shape != (w.shape[1],) or 0 in w.shape:
            name = f"layer {i}" if i < n else "the action head"
            raise ValueError(f"{where}: {name} has weights {w.shape} and bias {b.shape}; it "
                             f"takes {width} inputs, so they must be ({width}, k) and (k,)")
        width = w.shape[1]


def _check_metadata(meta: Any, size: int, actions: int, where: str) -> int:
    """The metadata's observation version, once the metadata is known to be a JSON object with
    a registered `obs_version` and with sizes (where given) equal to the arrays'."""
    if not isinstance(meta, dict):
        raise ValueError(f"{where}: metadata must be a JSON object")
    try:
        json.dumps(meta)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{where}: metadata is not JSON ({_reason(err)})") from None
    version = meta.get("obs_version")
    if isinstance(version, bool) or not isinstance(version, int) \
            or version not in VERSIONS:
        allowed = ", ".join(map(str, sorted(VERSIONS)))
        raise ValueError(f"{where}: obs_version={version!r} is not a registered observation "
                         f"version ({allowed})")
    for key, value in (("obs_size", size), ("num_actions", actions)):
        if key in meta and meta[key] != value:
            raise ValueError(f"{where}: metadata says {key}={meta[key]!r}; the arrays have "
                             f"{value}")
    if "rules" in meta and not isinstance(meta["rules"], dict):
        raise ValueError(f"{where}: metadata's rules must be a JSON object")
    return version
