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

from dominoes_env.core import POINT_SCALE

from .env import Env, State
from .game import Game


def random_policy(env: Env, state: State, key: jax.Array) -> jax.Array:
    """A legal action code drawn uniformly at random (the ``k``-th legal code, ``k`` uniform
    below their number: one random word per game)."""
    mask = state.legal_action_mask.reshape(env.tables.T, 4)
    count = jnp.maximum(jnp.sum(mask, dtype=jnp.int32), 1)
    # one 32-bit word (``randint`` draws three): k = word mod count, off uniform by at most
    # count / 2**32 (< 3e-8 for 112 codes)
    k = (jax.random.bits(key, (), jnp.uint32) % count.astype(jnp.uint32)).astype(jnp.int32)
    # the k-th legal code in two levels (tiles, then the tile's four ends): a running sum over
    # 4T codes is O((4T)^2) work on XLA's CPU backend, over T tiles it is 16 times less
    per_tile = jnp.sum(mask, axis=1, dtype=jnp.int32)
    before = jnp.cumsum(per_tile) - per_tile  # legal codes of the tiles before each tile
    tile = jnp.argmax(before + per_tile > k)
    row = jnp.sum(jnp.where(jnp.arange(env.tables.T)[:, None] == tile, mask, False), axis=0,
                  dtype=jnp.int32)  # fmt: skip
    end = jnp.argmax(jnp.cumsum(row) > k - jnp.sum(jnp.where(jnp.arange(env.tables.T) == tile,
                                                             before, 0)))  # fmt: skip
    return (tile * 4 + end).astype(jnp.int32)


def greedy_policy(env: Env, state: State) -> jax.Array:
    """The greedy action code: the key ``points * POINT_SCALE + tie_rank[code]`` is largest,
    with the core's :data:`~dominoes_env.core.POINT_SCALE` and
    :func:`~dominoes_env.core.tie_rank` (tabulated in the env's tables)."""
    points = Game.points_for_count(env.game.count_after_all(state.game_state))
    key = points * POINT_SCALE + jnp.asarray(env.tables.tie_rank)
    return jnp.argmax(jnp.where(state.legal_action_mask, key, -1)).astype(jnp.int32)
