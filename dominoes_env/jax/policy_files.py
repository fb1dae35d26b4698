"""Policy files: a JAX actor to and from the `.npz` export that `ppo:PATH` plays.

The file format is `dominoes_env.policy_format`'s (`"straight-dominoes-ppo/1"`), which reads,
checks and writes it; here an actor is the list of layers `dominoes_env.jax.networks` computes
with (`[{"w": ..., "b": ...}, ...]`, the head last), its activation always `tanh` (that of
`dominoes_env.jax.networks`).

A policy file is untrusted input: reading one checks the whole file
(`dominoes_env.policy_format.read_policy`: nothing pickled, every array present, finite, of the
right rank, shapes that chain, metadata whose `obs_version` is registered and whose sizes are
the arrays'), that it is a `tanh` policy and, for a table's rules, that its sizes are the ones
those rules need. A bad file is refused with a `PolicyFileError` (a `ValueError`) that names the
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
dominoes_env.policy_format.PolicyFileError: policy file '...': was trained for 2 players, not
these rules' 3 players: it takes 234 inputs and 112 actions; these rules need 244 and 112
"""

from __future__ import annotations

import os
import zipfile
from collections.abc import Mapping
from typing import Any

import numpy as np

from dominoes_env.core import RuleConfig
from dominoes_env.core.validation import ParameterTypeError, short_repr
from dominoes_env.obs import DEFAULT_VERSION
from dominoes_env.policy_format import (
    TRAINED_ACTIVATION,
    PolicyFileError,
    check_policy,
    read_actor,
    write_policy,
)

#: the activation of every hidden layer of the networks written and read here
ACTIVATION = TRAINED_ACTIVATION

Actor = list[dict[str, np.ndarray]]


def export_npz(actor, path: str | os.PathLike, metadata: dict[str, Any]) -> None:
    """Write `actor` (layers, the action head last) to `path` in the policy file format,
    atomically. `metadata` (a JSON object) is stored with `obs_size`, `num_actions` and
    `obs_version` (default `DEFAULT_VERSION`) filled in; `ValueError` if the file could not be
    read back (the observation version is not registered, a weight is not finite, ...) or the
    actor's input size is not that version's for `metadata["rules"]` (when given)."""
    if not isinstance(actor, (list, tuple)):  # "ab" was indexed as layers, a dict sliced
        raise ParameterTypeError(f"actor must be a list of layers ({{'w': ..., 'b': ...}}, "
                                 f"the action head last), not {_describe(actor)}")
    if not isinstance(metadata, Mapping):
        raise ParameterTypeError(f"metadata must be a dict (a JSON object), not "
                                 f"{_describe(metadata)}")
    if not actor:
        raise PolicyFileError(path, "an actor needs at least its action head")
    names = [(f"w{i}", f"b{i}") for i in range(len(actor) - 1)] + [("action_w", "action_b")]
    arrays = {}
    for i, (layer, (w, b)) in enumerate(zip(actor, names, strict=True)):
        if not isinstance(layer, Mapping) or not {"w", "b"} <= layer.keys():
            raise ParameterTypeError(f"actor[{i}] must be a layer {{'w': ..., 'b': ...}}, not "
                                     f"{_describe(layer)}")
        arrays[w] = _weights(path, w, layer["w"])
        arrays[b] = _weights(path, b, layer["b"])
    meta = {"obs_size": int(arrays.get("w0", arrays["action_w"]).shape[0]),
            "num_actions": int(arrays["action_w"].shape[1]), "obs_version": DEFAULT_VERSION,
            **metadata}
    check_policy(path, arrays, ACTIVATION, meta)  # the sizes under meta["rules"] too
    write_policy(path, arrays, ACTIVATION, meta, check=False)  # checked above


def _describe(value: Any) -> str:
    return f"{short_repr(value)} ({type(value).__name__})"


def _weights(path: str | os.PathLike, name: str, value: Any) -> np.ndarray:
    """``value`` as the float32 array ``name`` of the file at ``path``, or a
    :class:`PolicyFileError` unless it holds real numbers: a complex array (never cast to its
    real part), text or objects are refused with the file and the array named."""
    try:
        array = np.asarray(value)
    except (TypeError, ValueError) as err:  # ragged lists
        raise PolicyFileError(path, f"{name} is no array of numbers ({err})") from None
    if array.dtype.kind not in "iuf":
        raise PolicyFileError(path, f"{name} holds {array.dtype} values, not real numbers")
    return array.astype(np.float32)


def is_policy_file(path: str | os.PathLike) -> bool:
    """Whether `path` is an `.npz` that looks like a policy file (it has a `format` entry),
    rather than a training checkpoint or anything else (no error either way; `load_actor`
    checks it)."""
    if not os.path.isfile(path):  # a FIFO would block np.load; a folder or device is no policy
        return False
    try:
        with np.load(path, allow_pickle=False) as data:
            return "format" in data.files and "meta" not in data.files
    except (OSError, ValueError, EOFError, AttributeError, TypeError, NotImplementedError,
            zipfile.BadZipFile):
        # a missing file, a pickle, a damaged zip, a plain .npy array (TypeError: it is no
        # context manager), a zip of a version numpy's zipfile cannot read
        return False


def load_actor(path: str | os.PathLike, rules: RuleConfig) -> tuple[Actor, int]:
    """The actor in the policy file at `path` (float32 layers, the action head last) and the
    observation version it reads; `PolicyFileError` (a `ValueError`) naming the file unless it
    is a valid tanh policy for `rules` (`dominoes_env.policy_format.read_actor`)."""
    return read_actor(path, rules, ACTIVATION)


def load_fixed_actor(path: str | os.PathLike, rules: RuleConfig,
                     obs_version: int = DEFAULT_VERSION) -> Actor:
    """`load_actor`'s actor, refused with a `PolicyFileError` unless it reads `obs_version`."""
    layers, version = load_actor(path, rules)
    if version != obs_version:
        raise PolicyFileError(path, f"reads observation version {version}, not version "
                                    f"{obs_version}")
    return layers
