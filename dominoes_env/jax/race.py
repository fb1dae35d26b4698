"""The chance to win a match, as a race of hands, for JAX trainers.

The JAX twin of ``agents.race_equity.RaceEquity``: each side needs some units (5 points) more,
``pmf[d, h]`` is the chance that a side ``d`` units short reaches the target in exactly ``h``
more hands (``agents.race_equity.hands_to_reach`` builds it from greedy play; the table comes in
as an array, so the JAX game does not depend on the agents), the sides are independent, and
sides that finish in the same hand share its win. A match already won (``winner >= 0``) is worth
1 to the winner's side and 0 to the others. ``tests/jax/test_race.py`` holds the two equal.

>>> import numpy as np, jax.numpy as jnp
>>> pmf = np.zeros((3, 3)); pmf[0, 0] = 1; pmf[1, 1] = pmf[2, 2] = 1   # one unit a hand
>>> race = MatchRace(pmf, target_score=10)
>>> [round(float(race.chance(jnp.array([5, 0]), jnp.int32(-1), s)), 3) for s in (0, 1)]
[1.0, 0.0]
>>> float(race.chance(jnp.array([0, 0]), jnp.int32(-1), 0))   # both finish in the same hand
0.5
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

#: points per unit of the race (every score is a multiple of 5), as ``agents.equity.UNIT``
UNIT = 5


class MatchRace:
    """The race model of one table: ``pmf`` (``[goal + 1, H]``, rows summing to 1, ``goal``
    the target's units rounded up) and the target it was built for."""

    def __init__(self, pmf, target_score: int):
        pmf = np.asarray(pmf, np.float64)
        goal = -(-int(target_score) // UNIT)
        if pmf.ndim != 2 or pmf.shape[0] != goal + 1 or pmf.shape[1] < 1:
            raise ValueError(f"pmf must be a [{goal + 1}, H] table (target {target_score}: "
                             f"{goal} units), not one of shape {pmf.shape}")
        if not np.isfinite(pmf).all() or (pmf < 0).any() or not np.allclose(pmf.sum(1), 1.0):
            raise ValueError("pmf's rows must be chances summing to 1")
        self.goal = goal
        self.pmf = jnp.asarray(pmf, jnp.float32)
        self.later = jnp.asarray(1.0 - np.cumsum(pmf, axis=1), jnp.float32)  # P(N > h)

    def chance(self, scores: jax.Array, winner: jax.Array, side: jax.Array) -> jax.Array:
        """``side``'s chance of winning a match standing at ``scores`` (every side's points;
        ``winner``: the side that has won it, or -1). One match: ``jax.vmap`` it for many."""
        sides = scores.shape[0]
        short = jnp.clip(self.goal - scores // UNIT, 1, self.goal)
        # ties[j][h]: no rival finishes before hand h and j of them finish in it (the
        # coefficients of the product over rivals of P(N > h) + x P(N = h))
        ties = [jnp.ones(self.pmf.shape[1], jnp.float32)]
        for k in range(sides - 1):
            rival = short[(side + 1 + k) % sides]
            later, now = self.later[rival], self.pmf[rival]
            ties = ([ties[0] * later]
                    + [ties[j] * later + ties[j - 1] * now for j in range(1, len(ties))]
                    + [ties[-1] * now])
        shared = sum(t / (j + 1) for j, t in enumerate(ties))
        racing = jnp.sum(self.pmf[short[side]] * shared)
        return jnp.where(winner >= 0, (winner == side).astype(jnp.float32), racing)
