"""The policy file format ``"straight-dominoes-ppo/1"``: the one reader and writer of the ``.npz``
files that ``ppo:PATH`` plays (:class:`agents.ppo.NumpyPolicy`), that the trainers write
(:func:`agents.ppo_export.export_policy`, :func:`agents.rllib.export_module`,
:func:`dominoes_env.jax.policy_files.export_npz`) and that
the JAX trainers read back (:func:`read_actor`). numpy only.

==================  ================================================================
key                 contents
==================  ================================================================
``format``          the format string above (:data:`FORMAT`)
``activation``      the hidden layers' activation, a name of :data:`ACTIVATIONS`: tanh, relu,
                    elu, leaky_relu, sigmoid, silu, gelu, identity
``num_layers``      number of hidden layers ``L`` of the policy network (at most
                    :data:`MAX_LAYERS`)
``w{i}``, ``b{i}``  hidden layer ``i`` (``0 <= i < L``): weight ``(in, out)``, bias ``(out,)``
``action_w``,       the action head (logits): weight ``(in, num_actions)``, bias
``action_b``
``metadata``        a JSON string: ``obs_size``, ``num_actions``, ``obs_version`` (the
                    observation version it reads: reading refuses a version
                    ``dominoes_env.obs.VERSIONS`` does not hold), ``rules`` (the training
                    rules as a dict, optional), the card (optional: ``steps``, ``wall_s``,
                    ``seed``, ``devices``, ``trainer``, ``command``) and whatever else
                    the trainer added
==================  ================================================================

A policy file is untrusted input. :func:`read_policy` reads it with
:func:`dominoes_env.npz_files.read_npz` (nothing pickled is loaded, at most
:data:`MAX_POLICY_BYTES`) and checks the whole file: every key present, float weights of the
right rank whose shapes chain from the observation to the actions, finite values within
:data:`MAX_WEIGHT` (:func:`weights_problem`, the rule the trainers check each update by too)
in a dtype the players compute in (float16, float32, float64), metadata a JSON object whose
sizes are the weights' and whose ``obs_version`` is registered. The first
problem is a :class:`PolicyFileError` naming the file. :func:`write_policy` writes atomically
(a temporary file, then a rename) and, with ``check=True``, refuses what it could not read back.

>>> import numpy as np, os, tempfile
>>> rng = np.random.default_rng(0)
>>> arrays = {"w0": rng.normal(size=(234, 8)), "b0": np.zeros(8),
...           "action_w": rng.normal(size=(8, 112)), "action_b": np.zeros(112)}
>>> path = os.path.join(tempfile.mkdtemp(), "tiny.npz")
>>> write_policy(path, arrays, "tanh", {"obs_size": 234, "num_actions": 112, "obs_version": 2})
>>> policy = read_policy(path)
>>> policy.obs_size, policy.num_actions, policy.obs_spec.version, len(policy.layers)
(234, 112, 2, 2)
>>> write_policy(path, {**arrays, "b0": np.full(8, np.nan)}, "tanh", policy.metadata)
Traceback (most recent call last):
...
dominoes_env.policy_format.PolicyFileError: policy file '...': b0 holds NaN or infinite values
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .core.atomic_files import atomic_write, check_output_path
from .core.validation import (
    MAX_SEED,
    DuplicateKeyError,
    as_bool,
    int_text,
    parse_json,
    short_repr,
)
from .npz_files import NpzError, read_npz

if TYPE_CHECKING:
    from .core import RuleConfig
    from .obs import ObservationSpec

__all__ = ["ACTIVATIONS", "FORMAT", "MAX_LAYERS", "MAX_POLICY_BYTES", "MAX_WEIGHT",
           "TRAINED_ACTIVATION", "PolicyFile", "PolicyFileError", "check_policy",
           "hidden_sizes", "read_actor", "read_policy", "table_words", "trained_table",
           "magnitudes_problem", "weights_problem", "write_policy"]

#: the format string every policy file holds under ``format``
FORMAT = "straight-dominoes-ppo/1"

#: the most hidden layers a policy file may declare (the shipped ones have 2)
MAX_LAYERS = 64

#: the most a policy file's arrays may expand to (the shipped ones are under 2 MB)
MAX_POLICY_BYTES = 512 * 1024 * 1024

#: the largest magnitude a policy's weights may hold (as a JAX checkpoint's arrays,
#: ``dominoes_env.jax.checkpoints.MAX_MAGNITUDE``): trained weights stay within a few units
#: (the shipped ones within 1.2). A file holding more is refused: weights finite in the file
#: need not be in the dtype a player computes in (1e300 in float64 is inf in float32: the JAX
#: trainer, ``guided``), and finite float32 weights of 1e38 overflow the first layer's
#: products; either way the policy's probabilities would be NaN without a word
MAX_WEIGHT = 1e6
#: the most steps and seconds a policy's card or a checkpoint may say it was trained (2**53: a
#: billion steps a second for a hundred days; 10**9 s: thirty years): a larger value (1e308
#: steps, 2**70) is damage, refused when the file is read, before a resumed run or a card
#: uses it
MAX_STEPS, MAX_WALL_S = 2**53, 1e9


def hidden_sizes(net: str, name: str = "net") -> list[int]:
    """The hidden layer sizes a trainer's ``--net`` gives (``"256,256"``): positive integers,
    at most :data:`MAX_LAYERS` of them, since the policy file a run exports holds no more (so
    a run that could not be exported is refused before it trains). ``ValueError`` naming
    ``name``.

    >>> hidden_sizes("64,32")
    [64, 32]
    >>> hidden_sizes(",".join(["8"] * 65))
    Traceback (most recent call last):
    ...
    ValueError: net gives 65 hidden layers; a policy file holds at most 64
    """
    try:
        sizes = [int_text(x) for x in net.split(",")]
    except (ValueError, AttributeError):
        sizes = []
    if not sizes or min(sizes) < 1:
        raise ValueError(f"{name}={short_repr(net)}: give hidden sizes like 256,256")
    if len(sizes) > MAX_LAYERS:
        raise ValueError(f"{name} gives {len(sizes)} hidden layers; a policy file holds at "
                         f"most {MAX_LAYERS}")
    return sizes


def _gelu(x):
    erf = np.vectorize(math.erf, otypes=[np.float64])
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


#: each activation a policy file may name, and what it computes (numpy)
ACTIVATIONS = {
    "tanh": np.tanh,
    "relu": lambda x: np.maximum(x, 0.0),
    "elu": lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, 0.0))),
    "leaky_relu": lambda x: np.where(x > 0, x, 0.01 * x),
    "sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x)),
    "silu": lambda x: x / (1.0 + np.exp(-x)),
    "gelu": _gelu,
    "identity": lambda x: x,
}

#: the keys of every policy file beside its hidden layers' ``w{i}`` and ``b{i}``
_KEYS = ("format", "activation", "num_layers", "action_w", "action_b", "metadata")


class PolicyFileError(ValueError):
    """A policy file that cannot be played or written: missing, unreadable, or not a valid
    export. The message names the file and what is wrong with it (:attr:`problem`)."""

    def __init__(self, path: str | os.PathLike, problem: str):
        self.path = os.fspath(path)
        self.problem = problem
        super().__init__(f"policy file {self.path!r}: {problem}")


@dataclass(frozen=True)
class PolicyFile:
    """A checked policy file: its layers as stored (float arrays ``(w, b)``, the hidden layers
    in order and the action head last), the activation of its hidden layers, its metadata and
    the observation spec of its ``obs_version``."""

    path: str | os.PathLike
    layers: tuple[tuple[np.ndarray, np.ndarray], ...]
    activation: str
    metadata: dict[str, Any]
    obs_spec: ObservationSpec

    @property
    def obs_size(self) -> int:
        """The observation size it takes (the first layer's inputs)."""
        return int(self.layers[0][0].shape[0])

    @property
    def num_actions(self) -> int:
        """The number of actions it scores (the action head's outputs)."""
        return int(self.layers[-1][0].shape[1])


def read_policy(path: str | os.PathLike) -> PolicyFile:
    """The policy file at ``path``, checked as the module says; :class:`PolicyFileError`
    naming ``path`` and the first problem otherwise."""
    try:
        data = read_npz(path, max_bytes=MAX_POLICY_BYTES)
    except NpzError as err:
        problem = str(err)
        if problem.startswith("not a readable .npz file"):
            problem = problem.replace("not a readable .npz file", "not a policy .npz file", 1)
        raise PolicyFileError(path, problem) from None
    return _parse(path, data)


#: the hidden layers' activation of the networks the JAX trainers write and read back
#: (:mod:`dominoes_env.jax.networks`, :mod:`dominoes_env.jax.policy_files`)
TRAINED_ACTIVATION = "tanh"


def read_actor(path: str | os.PathLike, rules: RuleConfig, activation: str = TRAINED_ACTIVATION
               ) -> tuple[list[dict[str, np.ndarray]], int]:
    """The layers of the policy file at ``path`` as a network's parameters (``[{"w", "b"},
    ...]``, float32, the action head last) and the observation version it reads;
    :class:`PolicyFileError` naming the file unless it is a valid policy of ``activation`` for
    ``rules`` (its input size that version's observation size, one output per action). numpy
    only, so a program checks a policy before it starts JAX (the JAX trainers' reader,
    :func:`dominoes_env.jax.policy_files.load_actor`, is this one)."""
    policy = read_policy(path)
    if policy.activation != activation:
        raise PolicyFileError(path, f"uses {policy.activation}; the JAX networks play "
                                    f"{activation} policies")
    need = (policy.obs_spec.layout(rules).size, rules.num_tiles * 4)
    if (policy.obs_size, policy.num_actions) != need:
        trained = trained_table(policy.metadata)
        table = (f"was trained for {trained}, not these rules' {table_words(rules)}: it "
                 if trained not in (None, table_words(rules)) else "")
        raise PolicyFileError(path, f"{table}takes {policy.obs_size} inputs and "
                                    f"{policy.num_actions} actions; these rules need {need[0]} "
                                    f"and {need[1]}")
    actor = [{"w": w.astype(np.float32), "b": b.astype(np.float32)} for w, b in policy.layers]
    return actor, policy.obs_spec.version


def table_words(rules: RuleConfig) -> str:
    """The table of ``rules`` as people name it: players, partnerships, and tiles other than
    double-six (as :func:`agents.tables.describe_table` names the tables).

    >>> from dominoes_env.core import RuleConfig
    >>> table_words(RuleConfig(num_players=4, partnerships=False, max_pip=9))
    '4 players without partnerships, double-9 tiles'
    """
    words = f"{rules.num_players} players"
    if rules.num_players == 4:
        words += " in partnerships" if rules.partnerships else " without partnerships"
    return words + (f", double-{rules.max_pip} tiles" if rules.max_pip != 6 else "")


def trained_table(metadata: dict[str, Any]) -> str | None:
    """:func:`table_words` of a policy's training rules (its metadata's ``rules``), or
    ``None`` where it records none that can be read."""
    from .core import RuleConfig

    try:
        return table_words(RuleConfig.from_dict(metadata["rules"]))
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


def check_policy(path: str | os.PathLike, arrays: Mapping[str, Any], activation: str,
                 metadata: Mapping[str, Any]) -> PolicyFile:
    """What :func:`read_policy` would make of these arrays (``w{i}``, ``b{i}``, ``action_w``,
    ``action_b``), activation and metadata written to ``path``, without writing them;
    :class:`PolicyFileError` naming ``path`` where it would refuse them."""
    return _parse(path, _payload(path, arrays, activation, metadata))


def write_policy(path: str | os.PathLike, arrays: Mapping[str, Any], activation: str,
                 metadata: Mapping[str, Any], *, check: bool = True,
                 overwrite: bool = True) -> None:
    """Write ``arrays`` (``w{i}``, ``b{i}``, ``action_w``, ``action_b``), ``activation`` and
    ``metadata`` (a JSON object) to ``path`` in the format, atomically, creating its folder.
    ``check=True`` refuses with :class:`PolicyFileError`, before anything is written, what
    :func:`read_policy` would refuse; ``check=False`` writes them as given: only for tests,
    which write the files the reader refuses with it (every exporter writes checked).
    ``path`` follows :func:`~dominoes_env.core.atomic_files.check_output_path`: a symbolic
    link, a folder, a device or a FIFO is a ``ValueError`` (never replaced by the file), and
    ``overwrite=False`` never replaces an existing file (``FileExistsError``)."""
    overwrite = as_bool("overwrite", overwrite)
    check_output_path(path, overwrite=overwrite)
    payload = _payload(path, arrays, activation, metadata)
    if check:
        _parse(path, payload)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(path, "wb", overwrite=overwrite) as fh:
        np.savez(fh, **payload)


# -- the checks ------------------------------------------------------------------------------
def _payload(path, arrays: Mapping[str, Any], activation: str,
             metadata: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """Every array of the file that holds these. ``arrays`` is a mapping from text keys
    (``TypeError`` otherwise: a string or a list is refused)."""
    if not isinstance(arrays, Mapping) or not all(isinstance(key, str) for key in arrays):
        raise TypeError(f"arrays must be a mapping of the layers' names (w0, b0, ..., action_w, "
                        f"action_b) to arrays, not {short_repr(arrays)}")
    try:
        text = json.dumps(metadata)
    except (TypeError, ValueError, RecursionError) as err:
        reason = " ".join(str(err).split())[:120] or type(err).__name__
        raise PolicyFileError(path, f"metadata is not JSON ({reason})") from None
    layers = sum(1 for key in arrays if key.startswith("w"))
    return {**{key: np.asarray(value) for key, value in arrays.items()},
            "format": np.array(FORMAT), "activation": np.array(activation),
            "num_layers": np.array(layers), "metadata": np.array(text)}


def _parse(path, data: Mapping[str, np.ndarray]) -> PolicyFile:
    """The policy file of ``data`` (the arrays of ``path``), checked."""
    missing = set(_KEYS) - set(data)
    if missing:
        raise PolicyFileError(path, f"not an exported policy: missing {', '.join(sorted(missing))}")
    fmt = _text(path, data, "format")
    if fmt != FORMAT:
        raise PolicyFileError(path, f"format {short_repr(fmt)}; this version reads {FORMAT!r}")
    activation = _text(path, data, "activation")
    if activation not in ACTIVATIONS:
        raise PolicyFileError(path, f"unknown activation {short_repr(activation)}; allowed: "
                                    f"{', '.join(ACTIVATIONS)}")
    layers = _layers(path, data, _num_layers(path, data["num_layers"]))
    metadata = _metadata(path, _text(path, data, "metadata"))
    spec = _obs_spec(path, metadata)
    sizes = (("obs_size", layers[0][0].shape[0]), ("num_actions", layers[-1][0].shape[1]))
    for key, value in sizes:
        if key not in metadata:
            raise PolicyFileError(path, f"metadata lacks {key} (an export records obs_size, "
                                        "num_actions and obs_version)")
        if type(metadata[key]) is not int or metadata[key] != value:
            raise PolicyFileError(path, f"metadata says {key}={short_repr(metadata[key])}; the "
                                        f"weights have {value}")
    if not isinstance(metadata.get("rules", {}), dict):
        raise PolicyFileError(path, "metadata's rules must be a JSON object")
    if "rules" in metadata:
        _check_rules(path, metadata["rules"], spec, dict(sizes))
    return PolicyFile(path, layers, activation, metadata, spec)


def _check_rules(path, rules: dict, spec: ObservationSpec, sizes: dict[str, int]) -> None:
    """The metadata's training rules are rules (``RuleConfig.from_dict``) whose observation and
    action sizes are the weights', else a :class:`PolicyFileError`: a policy saying it was
    trained at double-12 with double-6 weights, or with a rule option no version has, is
    refused."""
    from .core import RuleConfig

    try:
        config = RuleConfig.from_dict(rules)
    except (ValueError, TypeError) as err:
        raise PolicyFileError(path, f"metadata's rules: {err}") from None
    need = {"obs_size": spec.layout(config).size, "num_actions": config.num_tiles * 4}
    if need != sizes:
        raise PolicyFileError(path, f"metadata's rules need {need['obs_size']} inputs and "
                                    f"{need['num_actions']} actions at obs_version "
                                    f"{spec.version}; the weights have {sizes['obs_size']} "
                                    f"and {sizes['num_actions']}{_fitting(config, sizes)}")


def _fitting(config, sizes: dict[str, int]) -> str:
    """Which observation versions the weights fit under ``config``, for the message that
    refuses a policy whose metadata's rules and version need other sizes, so that a file whose
    ``obs_version`` alone is wrong (2 changed to 3) is not reported as if the rules were."""
    from .obs import VERSIONS

    if sizes["num_actions"] != config.num_tiles * 4:
        return ""
    fits = [str(v) for v, other in sorted(VERSIONS.items())
            if other.layout(config).size == sizes["obs_size"]]
    return f" (they fit these rules at obs_version {', '.join(fits)})" if fits else ""


def _text(path, data: Mapping[str, np.ndarray], key: str) -> str:
    value = data[key]
    if value.shape != () or value.dtype.kind not in "US":
        raise PolicyFileError(path, f"{key} must be a string")
    return str(value)


def _num_layers(path, value: np.ndarray) -> int:
    allowed = f"num_layers must be one integer in 0..{MAX_LAYERS}"
    if value.shape != () or value.dtype.kind not in "iu":
        raise PolicyFileError(path, f"{allowed}; the file holds {value.dtype} {value.shape}")
    if not 0 <= int(value) <= MAX_LAYERS:
        raise PolicyFileError(path, f"{allowed}; the file says num_layers={int(value)}")
    return int(value)


def _layers(path, data: Mapping[str, np.ndarray], n: int) -> tuple:
    """``n`` hidden layers and the head: present, float, of the right rank, finite and within
    :data:`MAX_WEIGHT` (:func:`_weights_problem`), with shapes that chain from the input to
    the actions."""
    keys = [(f"w{i}", f"b{i}") for i in range(n)] + [("action_w", "action_b")]
    missing = [key for pair in keys for key in pair if key not in data]
    if missing:
        raise PolicyFileError(path, f"num_layers={n} but {', '.join(missing)} missing")
    known = {key for pair in keys for key in pair} | set(_KEYS)
    extra = sorted(key for key in data if key not in known)
    if extra:  # num_layers=1 beside w1, b1 played a network that was never trained
        raise PolicyFileError(path, f"holds {', '.join(map(repr, extra[:3]))}, which a policy "
                                    f"of num_layers={n} does not have")
    width = None
    for i, (wk, bk) in enumerate(keys):
        w, b = data[wk], data[bk]
        for key, array, ndim in ((wk, w, 2), (bk, b, 1)):
            problem = _weights_problem(key, array, ndim)
            if problem:
                raise PolicyFileError(path, problem)
        width = w.shape[0] if width is None else width
        if w.shape[0] != width or b.shape != (w.shape[1],) or 0 in w.shape:
            name = f"layer {i}" if i < n else "the action head"
            raise PolicyFileError(path, f"{name} has weights {w.shape} and bias {b.shape}; it "
                                        f"takes {width} inputs, so they must be ({width}, k) "
                                        "and (k,)")
        width = w.shape[1]
    return tuple((data[wk], data[bk]) for wk, bk in keys)


def _weights_problem(key: str, array: np.ndarray, ndim: int) -> str | None:
    """What keeps ``array`` (``key``) from being a layer's weights or bias of rank ``ndim``
    (``None``: nothing): a float dtype the players compute in (float16, float32, float64; a
    longdouble of 1e400 would be inf as float64), finite, and no value above
    :data:`MAX_WEIGHT` (1e300 in float64 would be inf as float32)."""
    if array.ndim != ndim or array.dtype.kind != "f":
        return f"{key} must be a {ndim}-D float array, got {array.dtype} {array.shape}"
    if array.dtype.itemsize > 8:
        return (f"{key} is {array.dtype}; a policy's weights are float16, float32 or float64 "
                "(what its players compute in)")
    problem = weights_problem(key, array)
    if problem is not None and np.isfinite(array).all():  # too large: say how it came about
        problem += " (the file was changed, or its run diverged)"
    return problem


def magnitudes_problem(largest: Mapping[str, float]) -> tuple[str | None, bool]:
    """What a trainer checks an update by, from each array's largest magnitude (``largest``:
    name -> that magnitude, NaN where the array holds a NaN): the first problem
    :func:`weights_problem` finds (``None`` if none) and whether every array is finite. Reading
    one number per array keeps the networks where they are (on the device, in torch).

    >>> magnitudes_problem({"w0": 0.5, "b0": float("nan")})
    ('b0 holds NaN or infinite values', False)
    >>> magnitudes_problem({"w0": 2e6})
    ("w0 holds a value of magnitude 2e+06; a policy's weights are at most 1e+06", True)
    """
    problem = next((found for name, top in largest.items()
                    if (found := weights_problem(name, top)) is not None), None)
    return problem, all(math.isfinite(top) for top in largest.values())


def weights_problem(name: str, values: Any) -> str | None:
    """What keeps ``values`` (a float array of a policy's weights or biases, or anything
    ``numpy.asarray`` makes one of: a torch tensor on the CPU, a JAX array) out of a policy
    file, named ``name``; ``None`` when nothing does. The one rule on a policy's values, which
    the reader and every writer apply (:func:`read_policy`, :func:`write_policy`), and which the
    trainers check after each update, so that a run never keeps, saves or counts an update
    its policy file would refuse: every value finite, and none of magnitude above
    :data:`MAX_WEIGHT`.

    >>> weights_problem("w0", np.array([0.5, -2.0])) is None
    True
    >>> weights_problem("w0", np.array([0.5, np.nan]))
    'w0 holds NaN or infinite values'
    >>> weights_problem("action_w", np.array([[1e7]], np.float32))
    "action_w holds a value of magnitude 1e+07; a policy's weights are at most 1e+06"
    """
    array = np.asarray(values)
    if not np.isfinite(array).all():
        return f"{name} holds NaN or infinite values"
    top = float(np.abs(array).max()) if array.size else 0.0
    if top > MAX_WEIGHT:
        return (f"{name} holds a value of magnitude {top:.3g}; a policy's weights are at most "
                f"{MAX_WEIGHT:g}")
    return None


def _metadata(path, text: str) -> dict[str, Any]:
    try:
        metadata = parse_json(text)
    except DuplicateKeyError as err:
        raise PolicyFileError(path, f"metadata: {err}") from None
    except (ValueError, RecursionError):
        raise PolicyFileError(path, "metadata is not JSON") from None
    if not isinstance(metadata, dict):
        raise PolicyFileError(path, "metadata must be a JSON object")
    for key, (kinds, most, what) in _CARD.items():
        value = metadata.get(key)
        if value is not None and not (type(value) in kinds and (
                most is None or 0 <= value <= most)):  # NaN fails the comparison
            raise PolicyFileError(path, f"metadata says {key}={short_repr(value)}; it must be "
                                        f"{what}")
    return metadata


#: the policy card's fields (the trainers write them; each optional), by key: the types allowed,
#: the largest number (``None``: text) and the message's words. A value of another type or
#: past the bound (``"steps": NaN``, ``"steps": 10**400``: JSON's integers have no limit) is
#: the reader's error naming the field; the bounds are a checkpoint's (:data:`MAX_STEPS`,
#: :data:`MAX_WALL_S`) and a seed's
_CARD = {"steps": ((int,), MAX_STEPS, f"a whole number of steps in 0..{MAX_STEPS:,}"),
         "wall_s": ((int, float), MAX_WALL_S, f"a number of seconds in 0..{MAX_WALL_S:,.0f}"),
         "seed": ((int,), MAX_SEED, f"a whole number in 0..{MAX_SEED:,}"),
         "devices": ((int,), 2**31 - 1, f"a whole number in 0..{2**31 - 1:,}"),
         "trainer": ((str,), None, "a string"),
         "command": ((str,), None, "a string")}


def _obs_spec(path, metadata: dict[str, Any]) -> ObservationSpec:
    """The registered observation spec of the metadata's ``obs_version``."""
    from .obs import VERSIONS, observation_spec

    version = metadata.get("obs_version")
    if version is None:
        raise PolicyFileError(path, "its metadata records no obs_version; it cannot be matched "
                                    "to an observation encoding")
    try:
        return observation_spec(version)
    except (ValueError, TypeError):
        allowed = ", ".join(map(str, sorted(VERSIONS)))
        raise PolicyFileError(
            path, f"it was trained on observation version {short_repr(version)}, which this "
                  f"dominoes_env cannot encode (available: {allowed}); retrain it or use the "
                  "dominoes_env release that made it") from None
