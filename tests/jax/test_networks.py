"""The networks with bfloat16 products (``mlp(layers, x, jnp.bfloat16)``, written in
``dominoes_env.jax.bfloat16`` with a hand-written gradient): each product is that of the inputs
rounded to bfloat16, summed in float32; the gradient, for every layer and the input, is the
float32 gradient up to that rounding; anything but float32 and bfloat16 is refused."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

from dominoes_env.jax.networks import (  # noqa: E402
    check_matmul_dtype,
    critic_value,
    init_params,
    masked_logits,
    mlp,
)


def _rounded(x) -> np.ndarray:
    """``x`` rounded to bfloat16, as float64 (every bfloat16 value is one exactly)."""
    return np.asarray(jnp.asarray(x, jnp.float32).astype(jnp.bfloat16).astype(jnp.float32),
                      np.float64)


def _layers(sizes: list[int], seed: int = 0) -> list[dict]:
    rng = np.random.default_rng(seed)
    return [{"w": jnp.asarray(rng.normal(size=(a, b)) / np.sqrt(a), jnp.float32),
             "b": jnp.asarray(rng.normal(size=b) * 0.1, jnp.float32)}
            for a, b in zip(sizes[:-1], sizes[1:], strict=True)]


def test_each_product_is_the_float32_sum_of_the_rounded_inputs():
    """A network of two layers, forward: the hidden layer and the output, each from its input
    and weights rounded to bfloat16 (their products are exact in float32: only the sums round)."""
    layers = _layers([40, 24, 8])
    x = np.random.default_rng(1).normal(size=(64, 40)).astype(np.float32)
    hidden = np.tanh(_rounded(x) @ _rounded(layers[0]["w"]) + np.asarray(layers[0]["b"]))
    want = _rounded(hidden) @ _rounded(layers[1]["w"]) + np.asarray(layers[1]["b"])
    got = np.asarray(jax.jit(lambda x: mlp(layers, x, jnp.bfloat16))(x), np.float64)
    np.testing.assert_allclose(got, want, rtol=0, atol=2e-3)  # tanh's float32, rounded again
    assert np.abs(got - np.asarray(mlp(layers, x), np.float64)).max() > 1e-3  # it did round


@pytest.mark.parametrize("sizes", [[40, 8], [40, 24, 8], [40, 32, 24, 1]])
def test_the_gradient_of_every_layer_and_the_input_is_the_float32_one_up_to_rounding(sizes):
    """The hand-written backward pass (feature-major, ``dominoes_env.jax.bfloat16``) against
    JAX's float32 gradient of the same network, for one to three layers and an output of one
    unit (the critic's); leading batch axes are flattened and restored."""
    layers = _layers(sizes, seed=len(sizes))
    rng = np.random.default_rng(2)
    x = jnp.asarray(rng.normal(size=(4, 16, sizes[0])), jnp.float32)
    target = jnp.asarray(rng.normal(size=(4, 16, sizes[-1])), jnp.float32)

    def loss(layers, x, dtype):
        return jnp.sum((mlp(layers, x, dtype) - target) ** 2)

    full = jax.grad(loss, argnums=(0, 1))(layers, x, jnp.float32)
    half = jax.jit(jax.grad(loss, argnums=(0, 1)), static_argnums=2)(layers, x, jnp.bfloat16)
    assert jax.tree.structure(full) == jax.tree.structure(half)
    for a, b in zip(jax.tree.leaves(full), jax.tree.leaves(half), strict=True):
        assert a.shape == b.shape and b.dtype == jnp.float32
        a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
        assert np.linalg.norm(a - b) <= 0.02 * np.linalg.norm(a)


def test_a_ppo_like_gradient_in_bfloat16_is_close_to_float32():
    params = init_params(jax.random.PRNGKey(0), 234, 112, [64, 64])
    rng = np.random.default_rng(2)
    obs = (rng.random((256, 234)) < 0.2).astype(np.float32)
    mask = rng.random((256, 112)) < 0.1
    mask[:, 0] = True
    action = jnp.asarray(np.argmax(mask, axis=1))

    def loss(params, dtype):
        logp = jax.nn.log_softmax(masked_logits(params["actor"], obs, mask, dtype))
        value = critic_value(params["critic"], obs, jnp.zeros((256, 0)), dtype)
        return -jnp.take_along_axis(logp, action[:, None], 1).mean() + (value ** 2).mean()

    full = jax.grad(loss)(params, jnp.float32)
    half = jax.jit(jax.grad(loss), static_argnums=1)(params, jnp.bfloat16)
    for a, b in zip(jax.tree.leaves(full), jax.tree.leaves(half), strict=True):
        a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
        assert np.linalg.norm(a - b) <= 0.02 * np.linalg.norm(a) + 1e-7


@pytest.mark.parametrize("dtype", ["float16", jnp.float64, "int32", "no such dtype", None])
def test_only_float32_and_bfloat16_are_computed_in(dtype):
    with pytest.raises(ValueError, match="they compute in float32 or bfloat16"):
        check_matmul_dtype(dtype)
    with pytest.raises(ValueError, match="is not one the networks compute in"):
        mlp(_layers([2, 2]), jnp.ones((2, 2)), dtype)


def test_both_dtypes_are_named_by_any_spelling():
    assert check_matmul_dtype("bfloat16") == jnp.bfloat16
    assert check_matmul_dtype(np.float32) == jnp.float32


@pytest.mark.parametrize("sizes, batch", [([3, 2, 4], 2), ([3, 2, 2, 1], 1), ([300, 1, 300], 9),
                                          ([234, 256, 256, 112], 1)])
def test_shapes_the_bfloat16_kernel_refuses_still_compile_and_run(sizes, batch):
    """Products with a dimension of 1 or all dimensions under 8 go to XLA's other dot code,
    which has no bfloat16 kernel: they must be converted, not fail at run time as a transpose
    folded into a bfloat16 product's result did ("Unsupported element type for
    DotThunk::Execute: BF16 x BF16 = F32")."""
    layers = _layers(sizes)
    x = jnp.ones((batch, sizes[0]))
    grads = jax.jit(jax.grad(lambda layers: mlp(layers, x, jnp.bfloat16).sum()))(layers)
    assert [g["w"].shape for g in grads] == [layer["w"].shape for layer in layers]
    assert all(bool(jnp.isfinite(g["w"]).all()) for g in grads)


def test_every_dtype_the_commands_offer_is_one_the_networks_compute_in():
    """``cli_support.MATMUL_DTYPES`` (the flags' choices, read without JAX) and
    ``check_matmul_dtype`` (the networks') name the same dtypes: held equal here."""
    from dominoes_env.cli_support import MATMUL_DTYPES

    assert {check_matmul_dtype(name) for name in MATMUL_DTYPES} == {
        jnp.dtype(jnp.float32), jnp.dtype(jnp.bfloat16)}


def test_bad_arguments_are_refused_by_name():
    """NaN or infinite `head_scale` made NaN/inf weights without a word, `hidden_info=-1` a
    critic of one input too few, `hidden="16"`, a size 2.5 or `True` and an empty network
    bare errors from deep inside (TypeError, IndexError), 1-D logits or observations an
    IndexError or "not enough values to unpack", `group=0` a ZeroDivisionError. Each is now a
    ValueError (a `ParameterTypeError` for a wrong type) naming the argument."""
    from dominoes_env.jax.networks import init_mlp, sample_actions

    key = jax.random.PRNGKey(0)
    for scale, says in ((float("nan"), "head_scale=nan must be a finite number"),
                        (float("inf"), "head_scale=inf must be a finite number"),
                        (0, "head_scale=0.0 is out of range; allowed: > 0"),
                        ("0.1", "head_scale='0.1' must be a number")):
        with pytest.raises(ValueError, match=says):
            init_mlp(key, [4, 3, 2], scale)
    for sizes, says in (([4, 2.5], r"sizes\[1\]=2.5 must be an integer"),
                        ([True, 2], r"sizes\[0\]=True must be an integer, not a boolean"),
                        ([4, 0], r"sizes\[1\]=0 is out of range"),
                        ([4], "give at least an input and an output size"),
                        ("42", "sizes='42' must be a list of layer sizes")):
        with pytest.raises(ValueError, match=says):
            init_mlp(key, sizes, 1.0)
    for args, kwargs, says in (((6, 8, [4]), {"hidden_info": -1}, "hidden_info=-1 is out"),
                               ((6, 8, "16"), {}, "hidden='16' must be a list of layer sizes"),
                               ((6, 8, [True]), {}, r"hidden\[0\]=True must be an integer"),
                               ((6, 8, [0]), {}, r"hidden\[0\]=0 is out of range"),
                               ((6.0, 8, [4]), {}, "obs_size=6.0 must be an integer"),
                               ((6, 0, [4]), {}, "num_actions=0 is out of range")):
        with pytest.raises(ValueError, match=says):
            init_params(key, *args, **kwargs)
    params = init_params(key, 6, 8, [4], hidden_info=2)
    assert [layer["w"].shape for layer in params["critic"]] == [(8, 4), (4, 1)]
    with pytest.raises(ValueError, match=r"layers=\[\] holds no layers"):
        mlp([], jnp.ones((2, 4)))
    with pytest.raises(ValueError, match="layers takes 6 inputs, not the 5 given"):
        mlp(params["actor"], jnp.ones((2, 5)))
    with pytest.raises(ValueError, match=r"obs must be a batch of observations \[B, D\], not "
                                         r"of shape \(6,\)"):
        critic_value(params["critic"], jnp.ones(6), jnp.zeros(2))
    with pytest.raises(ValueError, match=r"hidden_info must be \[B, H\] with B=3"):
        critic_value(params["critic"], jnp.ones((3, 6)), jnp.zeros((2, 2)))
    with pytest.raises(ValueError, match="critic takes 8 inputs, not the 6 given"):
        critic_value(params["critic"], jnp.ones((3, 6)), jnp.zeros((3, 0)))
    with pytest.raises(ValueError, match="critic gives 8 outputs, not the 1 needed"):
        critic_value(params["actor"], jnp.ones((3, 6)), jnp.zeros((3, 0)))
    with pytest.raises(ValueError, match=r"logits must be \[B, A\].*not of shape \(8,\)"):
        sample_actions(key, jnp.zeros(8))
    with pytest.raises(ValueError, match="group=0 is out of range; allowed: >= 1"):
        sample_actions(key, jnp.zeros((2, 8)), group=0)
    assert sample_actions(key, jnp.zeros((2, 8)), group=8).shape == (2,)
