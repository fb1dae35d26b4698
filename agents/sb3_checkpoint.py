"""Reading a stable-baselines3 checkpoint (``MaskablePPO.save``'s zip) without running code from it.

A checkpoint's ``data`` entry is JSON, but stable-baselines3 stores its objects (the spaces, the
policy class, the schedules, buffers) as cloudpickle inside it, and ``MaskablePPO.load``
unpickles them: a checkpoint from anywhere runs whatever code it carries the moment it is
loaded. Its loader takes ``custom_objects`` for those entries instead, and never unpickles an
entry given there. This module reads the JSON alone (:func:`read_data`), checks it, and builds
every entry that is pickled from what the JSON says of it in plain text and from the run's own
environment (:func:`custom_objects`); an entry it does not know is refused. The networks
(``*.pth``) are read by torch with ``weights_only=True`` (tensors only).

>>> import io, json, zipfile
>>> buf = io.BytesIO()
>>> with zipfile.ZipFile(buf, "w") as z:
...     z.writestr("data", json.dumps({"num_timesteps": 5, "evil": {":serialized:": "gAR="}}))
>>> data = read_data(buf)
>>> data["num_timesteps"], pickled_keys(data)
(5, ['evil'])
"""

from __future__ import annotations

import json
import re
import zipfile
from typing import IO, Any

#: the most the ``data`` entry may take once inflated (a real one is about 20 KB)
MAX_DATA_BYTES = 16 << 20
#: how a constant schedule reads in the JSON (stable-baselines3 2.6 and later)
_CONSTANT = re.compile(r"ConstantSchedule\(val=([-+0-9.eE]+)\)")


class CheckpointError(ValueError):
    """A checkpoint that is not one this project can resume, with the reason."""


def read_data(source: str | IO[bytes]) -> dict[str, Any]:
    """The checkpoint's ``data`` entry, parsed as JSON (nothing unpickled).
    :class:`CheckpointError` for a file that is not such a zip."""
    try:
        with zipfile.ZipFile(source) as z:
            info = z.getinfo("data")
            if info.file_size > MAX_DATA_BYTES:
                raise CheckpointError(f"its data entry is {info.file_size:,} bytes; a "
                                      f"checkpoint's is far below {MAX_DATA_BYTES:,}")
            with z.open(info) as f:
                raw = f.read(MAX_DATA_BYTES + 1)
    except KeyError:
        raise CheckpointError("it has no 'data' entry") from None
    except (zipfile.BadZipFile, OSError, EOFError, RuntimeError, ValueError) as err:
        if isinstance(err, CheckpointError):
            raise
        raise CheckpointError(f"not a readable zip ({' '.join(str(err).split())[:120]})") \
            from None
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        raise CheckpointError("its data entry is not JSON") from None
    if not isinstance(data, dict):
        raise CheckpointError("its data entry is not a JSON object")
    return data


def pickled_keys(data: dict[str, Any]) -> list[str]:
    """The entries of ``data`` that stable-baselines3 would unpickle."""
    return [k for k, v in data.items() if isinstance(v, dict) and ":serialized:" in v]


def _activation(name: str):
    import torch

    return {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}[name]


def _policy_class(data, env, hidden, activation):
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    return MaskableActorCriticPolicy


def _buffer_class(data, env, hidden, activation):
    from sb3_contrib.common.maskable.buffers import MaskableRolloutBuffer

    return MaskableRolloutBuffer


def _schedule(key: str):
    def build(data, env, hidden, activation):
        from stable_baselines3.common.utils import ConstantSchedule, FloatSchedule

        return FloatSchedule(ConstantSchedule(_constant(data, key)))

    return build


def _nothing(data, env, hidden, activation):
    return None


#: how :func:`custom_objects` rebuilds each pickled entry a MaskablePPO save holds, from
#: ``(data, env, hidden, activation)`` (torch and stable-baselines3 imported only there)
_BUILDERS = {
    "policy_class": _policy_class,
    "policy_kwargs": lambda data, env, hidden, activation: {
        "net_arch": {"pi": list(hidden), "vf": list(hidden)},
        "activation_fn": _activation(activation)},
    "observation_space": lambda data, env, hidden, activation: env.observation_space,
    "action_space": lambda data, env, hidden, activation: env.action_space,
    "rollout_buffer_class": _buffer_class,
    "lr_schedule": _schedule("lr_schedule"),
    "clip_range": _schedule("clip_range"),
    # set afresh by learn(): the last observation, episode starts and episode statistics
    "_last_obs": _nothing, "_last_episode_starts": _nothing, "_last_original_obs": _nothing,
    "ep_info_buffer": _nothing, "ep_success_buffer": _nothing,
}
#: the pickled entries :func:`custom_objects` rebuilds (every one a MaskablePPO save holds)
REBUILT = frozenset(_BUILDERS)


def check_pickled(data: dict[str, Any]) -> None:
    """:class:`CheckpointError` unless every pickled entry of ``data`` is one
    :func:`custom_objects` rebuilds, and its schedules are constants."""
    for key in pickled_keys(data):
        if key not in REBUILT:
            raise CheckpointError(f"it holds a pickled {key!r}, which is never unpickled here")
    for key in ("lr_schedule", "clip_range"):
        if key in data:
            _constant(data, key)


def space_sizes(data: dict[str, Any]) -> tuple[Any, Any]:
    """``(observation shape, number of actions)`` as the JSON states them in plain text
    (``None`` where it does not)."""
    obs, act = data.get("observation_space"), data.get("action_space")
    shape = obs.get("_shape") if isinstance(obs, dict) else None
    n = act.get("n") if isinstance(act, dict) else None
    try:
        n = int(n) if n is not None else None
    except (TypeError, ValueError):
        n = None
    return (tuple(shape) if isinstance(shape, list) else None), n


def network(data: dict[str, Any]) -> tuple[list | None, str | None]:
    """``(hidden layers, activation name)`` of the policy as the JSON states them (``None``
    where it does not)."""
    kwargs = data.get("policy_kwargs")
    if not isinstance(kwargs, dict):
        return None, None
    arch = kwargs.get("net_arch")
    pi = arch.get("pi") if isinstance(arch, dict) else arch
    fn = kwargs.get("activation_fn")
    act = fn.rsplit(".", 1)[-1].rstrip("'>").lower() if isinstance(fn, str) else None
    return (list(pi) if isinstance(pi, list) else None), act


def _constant(data: dict[str, Any], key: str) -> float:
    item = data.get(key)
    text = item.get("value_schedule") if isinstance(item, dict) else None
    match = _CONSTANT.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        raise CheckpointError(f"its {key} is not a constant schedule (only those are resumed)")
    return float(match.group(1))


def custom_objects(data: dict[str, Any], env, hidden: list[int], activation: str) -> dict:
    """What ``MaskablePPO.load(..., custom_objects=...)`` needs so that it unpickles nothing:
    each pickled entry of ``data`` rebuilt (the spaces from ``env``, the policy from
    ``hidden`` and ``activation``, the schedules from their constants, buffers empty: the
    next ``learn`` fills them). :class:`CheckpointError` for an entry this cannot rebuild."""
    check_pickled(data)
    return {key: _BUILDERS[key](data, env, hidden, activation) for key in pickled_keys(data)}
