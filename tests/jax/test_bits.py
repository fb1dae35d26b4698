"""Tile sets as bit masks in the JAX game (``dominoes_env.jax.game``: ``tile_bit``, ``rows_of``,
``words_of``, ``popcount``, ``code_bits``): the same sets as ``bool[T]`` rows for every tile
count, one word (double-six) or several (double-nine, double-twelve)."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

from dominoes_env.jax import make  # noqa: E402
from dominoes_env.jax.game import code_bits, popcount, rows_of, tile_bit, words_of  # noqa: E402


@pytest.mark.parametrize("max_pip, words", [(6, 1), (9, 2), (12, 3)])
def test_bit_masks_hold_the_same_sets_as_rows(max_pip, words):
    tb = make(max_pip=max_pip, num_players=2).tables
    T = tb.T
    assert tb.W == words
    rng = np.random.default_rng(max_pip)
    rows = rng.random((64, 3, T)) < 0.4
    rows[0, 0] = True  # every tile, the last word's top bits included
    rows[0, 1] = False
    packed = jax.jit(lambda r: words_of(tb, r))(jnp.asarray(rows))
    assert packed.shape == (64, 3, words) and packed.dtype == jnp.uint32
    expected = np.zeros((64, 3, words), np.uint64)
    for t in range(T):
        expected[..., t // 32] |= rows[..., t].astype(np.uint64) << np.uint64(t % 32)
    np.testing.assert_array_equal(np.asarray(packed), expected.astype(np.uint32))
    np.testing.assert_array_equal(np.asarray(rows_of(tb, packed)), rows)
    np.testing.assert_array_equal(np.asarray(popcount(packed)), rows.sum(axis=-1))
    singles = jax.vmap(lambda t: tile_bit(tb, t))(jnp.arange(T))
    np.testing.assert_array_equal(np.asarray(rows_of(tb, singles)), np.eye(T, dtype=bool))
    codes = jax.vmap(lambda w: code_bits(tb, w))(packed[:, 0])
    np.testing.assert_array_equal(np.asarray(codes), np.repeat(rows[:, 0], 4, axis=1))
