"""Jittable baseline policies: uniform random over the legal moves, and greedy.

Both take the env and a ``State`` (one game; ``vmap`` them for a batch) and return an action
code. ``greedy_policy`` makes exactly the choices of ``agents.greedy.greedy_choice``: the most
points now, then the heaviest tile, then a double, then the lowest code.

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

from .env import Env, State
from .game import Game

#: points are scaled by this before adding the tie rank, so points always dominate (as in
#: ``agents.greedy.POINT_SCALE``)
POINT_SCALE = 1 << 10


def random_policy(env: Env, state: State, key: jax.Array) -> jax.Array:
    """A legal action code drawn uniformly at random."""
    del env
    logits = jnp.where(state.legal_action_mask, 0.0, -jnp.inf)
    return jax.random.categorical(key, logits).astype(jnp.int32)


def greedy_policy(env: Env, state: State) -> jax.Array:
    """The greedy action code: the key ``points * 1024 + tie_rank[code]`` is largest, where
    ``tie_rank`` orders codes by (tile pips, is double, -code), as ``agents.greedy``."""
    points = Game.points_for_count(env.game.count_after_all(state._x))
    key = points * POINT_SCALE + jnp.asarray(env.tables.tie_rank)
    return jnp.argmax(jnp.where(state.legal_action_mask, key, -1)).astype(jnp.int32)
