"""Reading a stable-baselines3 checkpoint (``MaskablePPO.save``'s zip) without running code from it.

A checkpoint's ``data`` entry is JSON, but stable-baselines3 stores its objects (the spaces, the
policy class, the schedules, buffers) as cloudpickle inside it, and ``MaskablePPO.load``
unpickles them: a checkpoint from anywhere runs whatever code it carries the moment it is
loaded. Its loader takes ``custom_objects`` for those entries instead, and never unpickles an
entry given there. This module reads the JSON alone (:func:`read_data`), checks it, and builds
every entry that is pickled from what the JSON says of it in plain text and from the run's own
environment (:func:`custom_objects`); an entry it does not know is refused. The networks
(``*.pth``) are read by torch with ``weights_only=True`` (tensors only).

The plain entries are untrusted too: stable-baselines3 sets each as an attribute of the model it
loads, so :func:`check_entries` holds every one to what a MaskablePPO save writes (its type,
finite, the range the training flags allow), and :func:`check_members` the zip to the members
such a save holds.

A run (``python -m experiments.train_ppo``) writes its checkpoints with :func:`save_model`: whole
or not at all, with the run's wall seconds in them (:data:`WALL_ENTRY`, read back by
:func:`recorded_wall`).

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
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from dominoes_env.cli_support import MAX_TRAINER_SEED, signals_held
from dominoes_env.core.atomic_files import atomic_write
from dominoes_env.core.validation import (
    DuplicateKeyError,
    is_finite_number,
    parse_json,
    short_repr,
)
from dominoes_env.policy_format import MAX_STEPS  # a JSON number's exact integers

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
        data = parse_json(raw)
    except DuplicateKeyError as err:  # stable-baselines3 would take the last one
        raise CheckpointError(f"its data entry is ambiguous ({err})") from None
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
    except (TypeError, ValueError, OverflowError):  # OverflowError: Infinity
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
    try:
        return float(match.group(1))
    except ValueError:  # the pattern lets '--' or '.' through
        raise CheckpointError(f"its {key}'s constant {match.group(1)!r} is no number") from None


def custom_objects(data: dict[str, Any], env, hidden: list[int], activation: str) -> dict:
    """What ``MaskablePPO.load(..., custom_objects=...)`` needs so that it unpickles nothing:
    each pickled entry of ``data`` rebuilt (the spaces from ``env``, the policy from
    ``hidden`` and ``activation``, the schedules from their constants, buffers empty: the
    next ``learn`` fills them). :class:`CheckpointError` for an entry this cannot rebuild."""
    check_pickled(data)
    return {key: _BUILDERS[key](data, env, hidden, activation) for key in pickled_keys(data)}


#: the members of a MaskablePPO save: those it always holds, and those it may hold besides
MEMBERS = ("data", "policy.pth", "policy.optimizer.pth")
OPTIONAL_MEMBERS = ("pytorch_variables.pth", "_stable_baselines3_version", "system_info.txt")


def check_members(source: str | IO[bytes]) -> None:
    """:class:`CheckpointError` unless the zip ``source`` holds each of :data:`MEMBERS` once,
    and nothing but them and :data:`OPTIONAL_MEMBERS`: stable-baselines3 loads every ``.pth``
    member as a network (and fails with a bare ``KeyError`` where ``policy.pth`` is missing),
    and reads the last of two members of one name."""
    try:
        with zipfile.ZipFile(source) as z:
            names = z.namelist()
    except (zipfile.BadZipFile, OSError, EOFError, RuntimeError, ValueError) as err:
        raise CheckpointError(f"not a readable zip ({' '.join(str(err).split())[:120]})") \
            from None
    for name in names:
        if name not in MEMBERS and name not in OPTIONAL_MEMBERS:
            raise CheckpointError(f"it holds a member {short_repr(name)}, which a MaskablePPO "
                                  "checkpoint does not")
        if names.count(name) > 1:
            raise CheckpointError(f"it holds the member {name!r} twice")
    for name in MEMBERS:
        if name not in names:
            raise CheckpointError(f"it has no {name!r} member")


def _integer(low: int, high: int = MAX_STEPS) -> Callable[[Any], str | None]:
    def check(value: Any) -> str | None:
        if type(value) is not int or not low <= value <= high:
            return f"an integer in {low}..{high:,} is expected"
        return None

    return check


def _number(low: float, high: float, low_open: bool = False) -> Callable[[Any], str | None]:
    def check(value: Any) -> str | None:
        if (not is_finite_number(value) or value > high
                or value < low or (low_open and value == low)):
            return f"a number {'>' if low_open else '>='} {low} and <= {high} is expected"
        return None

    return check


def _one_of(*allowed: Any) -> Callable[[Any], str | None]:
    def check(value: Any) -> str | None:
        if not any(type(value) is type(a) and value == a for a in allowed):
            return f"{' or '.join(json.dumps(a) for a in allowed)} is expected"
        return None

    return check


def _pickled(value: Any) -> str | None:
    return None if isinstance(value, dict) and ":serialized:" in value else \
        "a pickled object (rebuilt here, never unpickled) is expected"


def _pickled_or_null(value: Any) -> str | None:
    return None if value is None else _pickled(value)


def _optional(check: Callable[[Any], str | None]) -> Callable[[Any], str | None]:
    return lambda value: None if value is None else check(value)


def _text(value: Any) -> str | None:
    return None if value is None or isinstance(value, str) else "a text or null is expected"


#: train_ppo's own entry of a checkpoint's ``data``, an attribute it gives the model (whose
#: attributes stable-baselines3 saves, and sets again as it loads them): the run's wall seconds
#: when it was saved, from which a ``--resume`` counts on; a checkpoint saved before train_ppo
#: recorded them has none (0 seconds)
WALL_ENTRY = "wall_s"
#: every entry of a MaskablePPO save's ``data`` and what it may hold: the training settings in
#: the ranges of train_ppo's flags (tests.test_train_ppo holds them equal), the counters within
#: :data:`MAX_STEPS`, those train_ppo never sets at their defaults, and :data:`WALL_ENTRY`
ENTRIES: dict[str, Callable[[Any], str | None]] = {
    **dict.fromkeys(REBUILT, _pickled_or_null),
    **dict.fromkeys(("policy_class", "policy_kwargs", "observation_space", "action_space"),
                    _pickled),
    "learning_rate": _number(0, 1, low_open=True),
    "n_steps": _integer(1),
    "batch_size": _integer(2),
    "n_epochs": _integer(1),
    "n_envs": _integer(1),
    "gamma": _number(0, 1, low_open=True),
    "gae_lambda": _number(0, 1),
    "ent_coef": _number(0, 1),
    "seed": _optional(_integer(0, MAX_TRAINER_SEED)),
    "num_timesteps": _integer(0),
    "_total_timesteps": _integer(0),
    "_num_timesteps_at_start": _integer(0),
    "_n_updates": _integer(0),
    "_episode_num": _integer(0),
    "_stats_window_size": _integer(1, 1_000_000),
    "_current_progress_remaining": _number(-MAX_STEPS, 1),
    "start_time": _integer(0, 2**63 - 1),
    "verbose": _integer(0, 2),
    "vf_coef": _number(0, 1),
    "max_grad_norm": _number(0, 1e6, low_open=True),
    "normalize_advantage": _one_of(True, False),
    "target_kl": _optional(_number(0, 1e6, low_open=True)),
    "use_sde": _one_of(False),
    "sde_sample_freq": _integer(-1),
    "clip_range_vf": _one_of(None),
    "action_noise": _one_of(None),
    "rollout_buffer_kwargs": _one_of({}),
    "tensorboard_log": _text,
    WALL_ENTRY: _number(0, MAX_STEPS),
}
#: the entries a checkpoint cannot do without (stable-baselines3 raises a KeyError for some;
#: without the step count a run would start again from step 0)
REQUIRED = ("policy_class", "policy_kwargs", "observation_space", "action_space",
            "num_timesteps")
#: the training settings train_ppo also takes as flags (the flag's value wins on a resume)
SETTINGS = ("learning_rate", "n_steps", "batch_size", "n_epochs", "gamma", "gae_lambda",
            "ent_coef", "clip_range", "seed", "n_envs")


def check_entries(data: dict[str, Any]) -> None:
    """:class:`CheckpointError` naming the first entry of ``data`` that a MaskablePPO save of
    train_ppo would not hold (:data:`ENTRIES`), or the first of :data:`REQUIRED` it lacks;
    the schedules must be constants in the flags' ranges (:func:`settings`)."""
    check_pickled(data)
    for key, value in data.items():
        check = ENTRIES.get(key)
        if check is None:
            raise CheckpointError(f"it holds an entry {short_repr(key)}, which a MaskablePPO "
                                  "checkpoint does not")
        problem = check(value)
        if problem is not None:
            shown = "a pickled object" if isinstance(value, dict) and ":serialized:" in value \
                else short_repr(value)
            raise CheckpointError(f"its {key} is {shown}; {problem}")
    for key in REQUIRED:
        if key not in data:
            raise CheckpointError(f"it has no {key} entry")
    settings(data)


def settings(data: dict[str, Any]) -> dict[str, Any]:
    """The training settings (:data:`SETTINGS`) the checkpoint ``data`` states (those it
    states), the constant clip range among them; :class:`CheckpointError` for a schedule out of
    its flag's range."""
    found = {key: data[key] for key in SETTINGS if key in data and key != "clip_range"}
    for key, name, check in (("lr_schedule", "learning_rate", _number(0, 1, low_open=True)),
                             ("clip_range", "clip_range", _number(0, 1, low_open=True))):
        if key in data:
            value = _constant(data, key)
            problem = check(value)
            if problem is not None:
                raise CheckpointError(f"its {key} is {short_repr(value)}; {problem}")
            found.setdefault(name, value)
    return found


def recorded_wall(data: dict[str, Any]) -> float:
    """The run's wall seconds that a checkpoint's ``data`` (read and checked:
    :func:`agents.sb3_run.checkpoint_data`) recorded when it was saved (:data:`WALL_ENTRY`); 0
    for one saved before train_ppo recorded them."""
    return float(data.get(WALL_ENTRY, 0.0))


def save_model(model, path: Path, wall_s: float) -> None:
    """``model`` saved to ``path`` whole or not at all (:func:`atomic_write`), with the run's
    wall seconds ``wall_s`` in its data (:data:`WALL_ENTRY`, which a ``--resume`` counts on
    from) and Ctrl-C, SIGTERM and SIGHUP held until it is written
    (:func:`~dominoes_env.cli_support.signals_held`): torch's zip writer, interrupted, raises
    its own error in place of the interruption."""
    path.parent.mkdir(parents=True, exist_ok=True)
    setattr(model, WALL_ENTRY, round(wall_s, 1))  # stable-baselines3 saves its attributes
    with signals_held(), atomic_write(path, "wb") as f:
        model.save(f)
