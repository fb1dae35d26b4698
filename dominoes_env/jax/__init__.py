"""Straight Dominoes as pure JAX functions: batched, jit-compiled, equal to the core.

Needs the ``jax`` extra (``pip install "straight-dominoes[jax]"``: jax and pgx). The game is a
second implementation of :mod:`dominoes_env.core` for training at scale, held equal to it by
differential tests (same deal, same moves: same legal masks, points, scores and observations).
Its arrays are 32-bit (int32, uint32, float32, every dtype explicit), so it plays the same games
with JAX's 64-bit mode on (``JAX_ENABLE_X64=1``) or off.

>>> import jax
>>> from dominoes_env.jax import make, random_policy
>>> env = make(num_players=3, episode="hand")
>>> keys = jax.random.split(jax.random.PRNGKey(0), 8)
>>> state = jax.jit(jax.vmap(env.init))(keys)  # 8 hands at once
>>> state.observation.shape
(8, 244)

- :func:`make` / :class:`Env` (:mod:`.env`): ``init(key)``, ``step(state, action, key)``,
  ``observe(state, player_id)``; a ``pgx.Env``, so Pgx's utilities apply.
- :mod:`.policies`: jittable ``random_policy`` and ``greedy_policy`` (the choices of
  ``agents.greedy``).
- :mod:`.game`: the rules as pure functions; :mod:`.observation`: the observation vector.
"""

from .env import Env, State, make
from .game import Deal, GameState
from .policies import greedy_policy, random_policy

__all__ = ["Deal", "Env", "GameState", "State", "greedy_policy", "make", "random_policy"]
