"""``dominoes_env.jax.rng``: the fused Threefry gives exactly ``jax.random``'s keys and words
(raw and typed keys, one key and under ``jit(vmap)``), and any other key goes to ``jax.random``
itself."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

from dominoes_env.jax import rng  # noqa: E402

KEYS = jax.random.split(jax.random.PRNGKey(2026), 2_000)


def test_threefry_is_jaxs_hash():
    # the published Threefry-2x32 (20 rounds) answer for a zero key and counter
    # (Random123's known-answer test, the one jax's own tests use)
    x = rng.threefry2x32(*(jnp.uint32(0),) * 4)
    assert [int(v) for v in x] == [0x6B200159, 0x99BA4EFE]


@pytest.mark.parametrize("typed", [False, True])
def test_split_equals_jax_random_split(typed):
    keys = jax.random.wrap_key_data(KEYS) if typed else KEYS
    ours = jax.jit(jax.vmap(rng.split))(keys)
    theirs = jax.vmap(jax.random.split)(keys)
    if typed:
        assert ours.dtype == theirs.dtype
        ours, theirs = jax.random.key_data(ours), jax.random.key_data(theirs)
    np.testing.assert_array_equal(ours, theirs)
    one = keys[7]
    mine = rng.split(one)
    assert mine.shape == jax.random.split(one).shape


@pytest.mark.parametrize("typed", [False, True])
@pytest.mark.parametrize("n", [None, 1, 2, 5])
def test_bits_equal_jax_random_bits(typed, n):
    keys = jax.random.wrap_key_data(KEYS) if typed else KEYS
    shape = () if n is None else (n,)
    ours = jax.jit(jax.vmap(lambda k: rng.bits(k, n)))(keys)
    theirs = jax.vmap(lambda k: jax.random.bits(k, shape, jnp.uint32))(keys)
    assert ours.shape == (len(KEYS), *shape) and ours.dtype == jnp.uint32
    np.testing.assert_array_equal(ours, theirs)


def test_another_kind_of_key_is_jax_randoms():
    key = jax.random.key(3, impl="rbg")
    np.testing.assert_array_equal(jax.random.key_data(rng.split(key)),
                                  jax.random.key_data(jax.random.split(key)))  # fmt: skip
    np.testing.assert_array_equal(rng.bits(key, 3), jax.random.bits(key, (3,), jnp.uint32))
