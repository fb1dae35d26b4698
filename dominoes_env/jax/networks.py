"""The actor and critic networks of the JAX trainers: plain tanh MLPs as lists of layers.

A network is a list of layers, each a dict `{"w": [in, out], "b": [out]}`: tanh after every
layer but the last. The actor maps an observation to one logit per action code (the layout
`agents.ppo` plays, so an actor exports to a `ppo:PATH` policy file with
`dominoes_env.jax.policy_files.export_npz`); the critic maps the observation, and optionally
hidden information only a training critic may see, to one value.

>>> import jax, jax.numpy as jnp
>>> params = init_params(jax.random.PRNGKey(0), obs_size=6, num_actions=8, hidden=[16])
>>> [layer["w"].shape for layer in params["actor"]], [l["w"].shape for l in params["critic"]]
([(6, 16), (16, 8)], [(6, 16), (16, 1)])
>>> obs, mask = jnp.ones((2, 6)), jnp.arange(8)[None, :] % 3 == 0
>>> logits = masked_logits(params["actor"], obs, mask)
>>> bool((logits[:, 1] < -1e8).all()), critic_value(params["critic"], obs, jnp.zeros((2, 0))).shape
(True, (2,))

Needs the `jax` extra.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from dominoes_env.core.validation import ParameterTypeError, as_float, as_int, short_repr

from . import bfloat16

#: the logit of an illegal action (its probability underflows to exactly 0)
MASKED_LOGIT = -1e9

Layers = list[dict[str, Any]]


def init_mlp(key: jax.Array, sizes: list[int], head_scale: float) -> Layers:
    """Layers of sizes `sizes[0] -> ... -> sizes[-1]`: orthogonal weights (gain `sqrt(2)` for
    the hidden layers, `head_scale` for the last), zero biases (PureJaxRL's and SB3's choice).

    `sizes` are integers >= 1 (at least two: an input and an output size), `head_scale` a
    finite number > 0; anything else is refused before a weight is drawn.

    >>> layers = init_mlp(jax.random.PRNGKey(0), [4, 8, 2], 0.01)
    >>> [tuple(layer["w"].shape) for layer in layers], float(abs(layers[1]["w"]).max()) < 0.02
    ([(4, 8), (8, 2)], True)
    >>> init_mlp(jax.random.PRNGKey(0), [4, 8, 2], float("nan"))
    Traceback (most recent call last):
    ...
    ValueError: head_scale=nan must be a finite number
    """
    sizes = _sizes("sizes", sizes)
    if len(sizes) < 2:
        raise ValueError(f"sizes={short_repr(sizes)}: give at least an input and an output "
                         "size, all >= 1")
    head_scale = as_float("head_scale", head_scale, 0, low_open=True)
    layers = []
    keys = jax.random.split(key, len(sizes) - 1)
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:], strict=True)):
        gain = head_scale if i == len(sizes) - 2 else math.sqrt(2)
        w = jax.nn.initializers.orthogonal(gain)(keys[i], (a, b), jnp.float32)
        layers.append({"w": w, "b": np.zeros(b, np.float32)})
    return layers


def _sizes(name: str, sizes: Any) -> list[int]:
    """`sizes` (a list, tuple or 1-D integer array of layer sizes) as Python ints, each >= 1,
    else a `ParameterTypeError`/`ValueError` naming `name` (or the entry, `name[i]`)."""
    if isinstance(sizes, np.ndarray) and sizes.ndim == 1:
        sizes = sizes.tolist()
    if isinstance(sizes, (str, bytes, bytearray)) or not isinstance(sizes, Sequence):
        raise ParameterTypeError(f"{name}={short_repr(sizes)} must be a list of layer sizes "
                                 f"(integers >= 1), not {type(sizes).__name__}")
    return [as_int(f"{name}[{i}]", size, 1) for i, size in enumerate(sizes)]


def _shape(value: Any) -> tuple[int, ...] | None:
    """The static shape of an array (a tracer's too: nothing reads its values), or `None`
    for what has none."""
    shape = getattr(value, "shape", None)
    return tuple(shape) if isinstance(shape, tuple) else None


def check_layers(name: str, layers: Any, in_size: int | None = None,
                 out_size: int | None = None) -> Any:
    """`layers` if it is a network as this module builds one, else a `ParameterTypeError`
    (a `TypeError` and a `ValueError`) or `ValueError` naming `name`: a non-empty list of
    layers `{"w": [in, out], "b": [out]}`, each taking the previous one's outputs, the first
    taking `in_size` inputs and the last giving `out_size` outputs (either unchecked when
    `None`). Reads static shapes only, so it costs nothing under `jax.jit`.

    >>> check_layers("actor", init_mlp(jax.random.PRNGKey(0), [10, 4, 8], 0.01), 234, 112)
    Traceback (most recent call last):
    ...
    ValueError: actor takes 10 inputs, not the 234 given
    """
    if not isinstance(layers, (list, tuple)):
        raise ParameterTypeError(f"{name}={short_repr(layers)} must be a network: a list of "
                                 f"layers {{'w', 'b'}}, not {type(layers).__name__}")
    if not layers:
        raise ValueError(f"{name}={short_repr(layers)} holds no layers; a network has at "
                         "least one {'w', 'b'}")
    width = in_size
    for i, layer in enumerate(layers):
        if not isinstance(layer, Mapping) or "w" not in layer or "b" not in layer:
            what = (f"a {type(layer).__name__} with keys {short_repr(sorted(map(str, layer)))}"
                    if isinstance(layer, Mapping) else f"a {type(layer).__name__}")
            raise ParameterTypeError(f"{name}[{i}] must be a layer: a dict with arrays 'w' "
                                     f"([in, out]) and 'b' ([out]), not {what}")
        w, b = _shape(layer["w"]), _shape(layer["b"])
        if w is None or len(w) != 2 or b is None or len(b) != 1 or b[0] != w[1]:
            raise ValueError(f"{name}[{i}] has weights of shape {w} and biases of shape {b}; "
                             "a layer has 'w' [in, out] and 'b' [out]")
        if width is not None and w[0] != width:
            if i == 0:
                raise ValueError(f"{name} takes {w[0]} inputs, not the {width} given")
            raise ValueError(f"{name}[{i}] takes {w[0]} inputs, but {name}[{i - 1}] gives "
                             f"{width}")
        width = w[1]
    if out_size is not None and width != out_size:
        raise ValueError(f"{name} gives {width} outputs, not the {out_size} needed")
    return layers


def check_matmul_dtype(dtype) -> jnp.dtype:
    """`dtype` as a numpy dtype if :func:`mlp` computes its products in it (float32 or
    bfloat16), else a `ValueError` naming it.

    >>> check_matmul_dtype("float16")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: matmul dtype float16 is not one the networks compute in; they compute in ...
    """
    try:
        found = jnp.dtype(dtype)
    except TypeError:
        found = None
    if found not in (jnp.dtype(jnp.float32), jnp.dtype(jnp.bfloat16)):
        raise ValueError(f"matmul dtype {dtype} is not one the networks compute in; they "
                         "compute in float32 or bfloat16")
    return found


def mlp(layers: Layers, x: jax.Array, matmul_dtype=jnp.float32) -> jax.Array:
    """The network's output for `x` (`[..., in]`): tanh after every layer but the last. Its
    matrix products read float32, or with `matmul_dtype=jnp.bfloat16` their inputs rounded to
    bfloat16 and summed in float32, forward and backward (:mod:`.bfloat16`: 1.5 times as fast
    a gradient on this machine's CPU).

    >>> x, layers = jnp.array([[1.0, 1 / 3]]), [{"w": jnp.array([[1.0], [3.0]]), "b": jnp.zeros(1)}]
    >>> float(mlp(layers, x)[0, 0]), float(mlp(layers, x, jnp.bfloat16)[0, 0])
    (2.0, 2.001953125)

    `layers` must be a network of at least one layer taking `x`'s last axis (`check_layers`).
    """
    dtype = check_matmul_dtype(matmul_dtype)
    shape = _shape(x)
    if shape is None or not shape:
        raise ParameterTypeError(f"x must be an array with the inputs on its last axis, not "
                                 f"{short_repr(x)}")
    check_layers("layers", layers, shape[-1])
    if dtype == jnp.bfloat16:
        rows = x.reshape(-1, x.shape[-1])
        out = bfloat16.mlp(tuple(layer["w"] for layer in layers),
                           tuple(layer["b"] for layer in layers), rows)
        return out.reshape(*x.shape[:-1], out.shape[-1])
    for layer in layers[:-1]:
        x = jnp.tanh(x @ layer["w"] + layer["b"])
    return x @ layers[-1]["w"] + layers[-1]["b"]


def init_params(key: jax.Array, obs_size: int, num_actions: int, hidden: list[int],
                hidden_info: int = 0) -> dict[str, Layers]:
    """`{"actor": ..., "critic": ...}`: the actor reads the observation (`obs_size` inputs) and
    gives `num_actions` logits (head scaled 0.01: a near-uniform first policy); the critic reads
    the observation and `hidden_info` more inputs (0 unless it sees hidden information, as
    `SelfPlay.hidden_info` builds it) and gives one value. Both have the `hidden` layer sizes.

    `obs_size` and `num_actions` are integers >= 1, `hidden` a list of them (may be empty),
    `hidden_info` an integer >= 0.

    >>> init_params(jax.random.PRNGKey(0), 6, 8, [4], hidden_info=-1)
    Traceback (most recent call last):
    ...
    ValueError: hidden_info=-1 is out of range; allowed: >= 0
    """
    obs_size = as_int("obs_size", obs_size, 1)
    num_actions = as_int("num_actions", num_actions, 1)
    hidden = _sizes("hidden", hidden)
    hidden_info = as_int("hidden_info", hidden_info, 0)
    ka, kc = jax.random.split(key)
    return {"actor": init_mlp(ka, [obs_size, *hidden, num_actions], 0.01),
            "critic": init_mlp(kc, [obs_size + hidden_info, *hidden, 1], 1.0)}


def critic_value(critic: Layers, obs: jax.Array, hidden_info: jax.Array,
                 matmul_dtype=jnp.float32) -> jax.Array:
    """The value network on a batch of observations (`[B, D]`) and the hidden information it
    may see (`[B, H]`, `H` may be 0): one value per row. The critic takes `D + H` inputs and
    gives one output."""
    obs_shape, info_shape = _shape(obs), _shape(hidden_info)
    if obs_shape is None or len(obs_shape) != 2:
        raise ValueError(f"obs must be a batch of observations [B, D], not of shape {obs_shape}")
    if info_shape is None or len(info_shape) != 2 or info_shape[0] != obs_shape[0]:
        raise ValueError(f"hidden_info must be [B, H] with B={obs_shape[0]} rows as obs, not "
                         f"of shape {info_shape}")
    check_layers("critic", critic, obs_shape[1] + info_shape[1], 1)
    return mlp(critic, jnp.concatenate([obs, hidden_info], axis=-1), matmul_dtype)[:, 0]


def masked_logits(actor: Layers, obs: jax.Array, mask: jax.Array,
                  matmul_dtype=jnp.float32) -> jax.Array:
    """The actor's logits with the illegal actions (`mask` false) at `MASKED_LOGIT`."""
    return jnp.where(mask, mlp(actor, obs, matmul_dtype), MASKED_LOGIT)


def sample_actions(key: jax.Array, logits: jax.Array, group: int = 4) -> jax.Array:
    """One action per row of `logits` (`[B, A]`, masked entries at `MASKED_LOGIT`), drawn from
    `softmax(logits)` by inverting its cumulative distribution with one uniform number per row,
    in two levels (`A / group` groups, then the `group` actions of the chosen one).

    `jax.random.categorical` (Gumbel-max) draws `A` random numbers per row and takes an argmax:
    on XLA's CPU backend that was a sixth of a training update. An action of probability 0 is
    never returned (a rounding miss falls back to the most likely action).

    >>> logits = jnp.array([[0.0, -1e9, 0.0, -1e9, -1e9, -1e9, -1e9, 0.0]])
    >>> keys = jax.random.split(jax.random.PRNGKey(0), 3000)
    >>> a = jax.vmap(lambda k: sample_actions(k, logits)[0])(keys)
    >>> sorted(set(a.tolist())), [round(float((a == i).mean()), 1) for i in (0, 2, 7)]
    ([0, 2, 7], [0.3, 0.3, 0.3])
    """
    group = as_int("group", group, 1)
    shape = _shape(logits)
    if shape is None or len(shape) != 2 or shape[1] < 1:
        raise ValueError(f"logits must be [B, A], one row of A >= 1 logits per action drawn, "
                         f"not of shape {shape}")
    b, a = shape
    if a % group:
        raise ValueError(f"{a} actions do not split into groups of {group}")
    probs = jax.nn.softmax(logits, axis=-1).reshape(b, a // group, group)
    per_group = probs.sum(-1)
    cdf = jnp.cumsum(per_group, axis=-1)
    u = jax.random.uniform(key, (b,), jnp.float32) * cdf[:, -1]
    g = jnp.minimum(jnp.sum(cdf <= u[:, None], axis=-1, dtype=jnp.int32), a // group - 1)
    chosen = jnp.take_along_axis(probs, g[:, None, None], axis=1)[:, 0]  # [B, group]
    before = jnp.take_along_axis(cdf - per_group, g[:, None], axis=1)[:, 0]
    inner = jnp.cumsum(chosen, axis=-1)
    e = jnp.minimum(jnp.sum(inner <= (u - before)[:, None], axis=-1, dtype=jnp.int32),
                    group - 1)
    action = g * group + e
    ok = jnp.take_along_axis(probs.reshape(b, a), action[:, None], axis=1)[:, 0] > 0
    return jnp.where(ok, action, jnp.argmax(logits, axis=-1)).astype(jnp.int32)
