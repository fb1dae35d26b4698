"""Jittable baseline policies: uniform random over the legal moves, and greedy.

Both take the env and a ``State`` (one game; ``vmap`` them for a batch) and return an action
code. ``greedy_policy`` makes exactly the choices of the core's greedy order
(:mod:`dominoes_env.core.greedy`, which ``agents.greedy`` plays): the most points now, then the
heaviest tile, then a double, then the lowest code.

>>> import jax
>>> from dominoes_env.jax import make
>>> env = make()
>>> state = jax.jit(env.init)(jax.random.PRNGKey(1))
>>> action = jax.jit(greedy_policy, static_argnums=0)(env, state)
>>> bool(state.legal_action_mask[action])
True
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from dominoes_env.core import POINT_SCALE

from . import rng
from .env import Env, State
from .game import Game


def random_policy(env: Env, state: State, key: jax.Array) -> jax.Array:
    """A legal action code drawn uniformly at random (the ``k``-th legal code, ``k`` uniform
    below their number: one random word per game)."""
    T = env.tables.T
    mask = state.legal_action_mask.reshape(T, 4)
    per_tile = jnp.sum(mask, axis=1, dtype=jnp.int32)
    count = jnp.maximum(jnp.sum(per_tile, dtype=jnp.int32), 1)
    # one 32-bit word (``randint`` draws three): k = word mod count, off uniform by at most
    # count / 2**32 (< 3e-8 for 112 codes)
    k = (rng.bits(key) % count.astype(jnp.uint32)).astype(jnp.int32)
    # the k-th legal code: the legal code with k legal codes before it, those of the tiles
    # before its tile and those of its own tile's lower ends (one sum over the codes; picking
    # the tile first, then its row, took three reductions: measured 3-4% slower with Pgx's
    # auto_reset). The legal codes up to each tile are a product with a triangular matrix of
    # ones (exact in float32: at most 4T); under vmap it is one matrix product for the batch,
    # where a running sum (cumsum) is a sequential scan per game on XLA's CPU backend, three
    # times slower here (measured)
    upto = jnp.dot(per_tile.astype(jnp.float32), jnp.asarray(_upper(T))).astype(jnp.int32)
    m = mask.astype(jnp.int32)
    within = jnp.stack([jnp.zeros_like(m[:, 0]), m[:, 0], m[:, 0] + m[:, 1],
                        m[:, 0] + m[:, 1] + m[:, 2]], axis=1)  # fmt: skip
    before = (upto - per_tile)[:, None] + within  # [T, 4]
    codes = jnp.arange(4 * T, dtype=jnp.int32).reshape(T, 4)
    return jnp.sum(jnp.where(mask & (before == k), codes, 0), dtype=jnp.int32)


def _upper(T: int) -> np.ndarray:
    """``float32[T, T]``: 1 where row <= column (``x @ it`` sums ``x`` up to each place)."""
    return np.triu(np.ones((T, T), np.float32))


def greedy_policy(env: Env, state: State) -> jax.Array:
    """The greedy action code: the key ``points * POINT_SCALE + tie_rank[code]`` is largest,
    with the core's :data:`~dominoes_env.core.POINT_SCALE` and
    :func:`~dominoes_env.core.tie_rank` (tabulated in the env's tables)."""
    points = Game.points_for_count(env.game.count_after_all(state.game_state))
    key = points * POINT_SCALE + jnp.asarray(env.tables.tie_rank)
    return jnp.argmax(jnp.where(state.legal_action_mask, key, -1)).astype(jnp.int32)
