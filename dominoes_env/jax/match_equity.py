"""A side's chance to win the match from the scores, for JAX trainers (``train_jax --reward
match``).

The JAX twins of the two models of ``agents``, given as arrays (so the JAX game does not depend
on the agents); ``tests/jax/test_match_equity.py`` holds each equal to its original:

- :class:`MatchTable`, ``agents.equity.equity_table`` for two sides (two players, or four in
  partnerships): ``table[a, b, L]``, worked back from the target over sampled greedy hands,
  the next leader ``L`` averaged out (it is not known during a hand);
- :class:`MatchRace`, ``agents.race_equity``'s race for three or more sides: ``pmf[d, h]`` is the
  chance that a side ``d`` units short reaches the target in exactly ``h`` more hands
  (``agents.race_equity.hands_to_reach``), the sides are independent and sides that finish in
  the same hand share its win.

Scores count in units of 5 points. A match already won (``winner >= 0``) is worth 1 to the
winner's side and 0 to the others. Both value a position during a hand as if the hand had
ended there (the rest of it is not modelled), so a trainer's rewards, the changes of the
chance, add up over a hand to the change from its start to its end.

>>> import numpy as np, jax.numpy as jnp
>>> pmf = np.zeros((3, 3)); pmf[0, 0] = 1; pmf[1, 1] = pmf[2, 2] = 1   # one unit a hand
>>> race = MatchRace(pmf, target_score=10)
>>> [float(race.chance(jnp.array([5, 0]), jnp.int32(-1), s)) for s in (0, 1)]
[1.0, 0.0]
>>> float(race.chance(jnp.array([0, 0]), jnp.int32(-1), 0))   # both finish in the same hand
0.5
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from dominoes_env.core import SCORE_UNIT
from dominoes_env.core.validation import as_int

#: points per unit (every score is a multiple of it: the core's ``SCORE_UNIT``), as
#: ``agents.equity.UNIT``
UNIT = SCORE_UNIT


def _goal(target_score) -> tuple[int, int]:
    """``(target, units that reach it)``; a ``ValueError``/``TypeError`` naming a bad target."""
    target = as_int("target_score", target_score, 1)
    return target, -(-target // UNIT)


def _table(name: str, values) -> np.ndarray:
    """``values`` as a float64 array, or a ``TypeError`` naming ``name``."""
    try:
        return np.asarray(values, np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a table of numbers, not "
                        f"{type(values).__name__}") from None


class MatchRace:
    """The race model of a table of three or more sides: ``pmf`` (``[goal + 1, H]``, rows
    summing to 1, ``goal`` the target's units rounded up) for ``target_score``."""

    def __init__(self, pmf, target_score: int):
        self.target_score, self.goal = _goal(target_score)
        pmf = _table("pmf", pmf)
        if pmf.ndim != 2 or pmf.shape[0] != self.goal + 1 or pmf.shape[1] < 1:
            raise ValueError(f"pmf must be a [{self.goal + 1}, H] table (target "
                             f"{self.target_score}: {self.goal} units), not one of shape "
                             f"{pmf.shape}")
        if not np.isfinite(pmf).all() or (pmf < 0).any() or not np.allclose(pmf.sum(1), 1.0):
            raise ValueError("pmf's rows must be chances summing to 1")
        self.pmf = jnp.asarray(pmf, jnp.float32)
        self.later = jnp.asarray(1.0 - np.cumsum(pmf, axis=1), jnp.float32)  # P(N > h)

    def chance(self, scores: jax.Array, winner: jax.Array, side: jax.Array) -> jax.Array:
        """``side``'s chance of winning a match standing at ``scores`` (every side's points;
        ``winner``: the side that has won it, or -1). One match: ``jax.vmap`` it for many. A
        side at or past the target without a winner (``win_check="end_of_hand"`` during a
        hand) counts as one unit short, as ``agents.race_equity`` reads it."""
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


class MatchTable:
    """The match equity table of a table of two sides: ``table[a, b, L]`` (``[goal, goal,
    2]``), the chance that a side at ``a`` units wins against one at ``b`` with ``L`` leading
    the next hand (0: the side itself), as ``agents.equity.equity_table`` builds it."""

    def __init__(self, table, target_score: int):
        self.target_score, self.goal = _goal(target_score)
        table = _table("table", table)
        if table.shape != (self.goal, self.goal, 2):
            raise ValueError(f"table must be a [{self.goal}, {self.goal}, 2] table (target "
                             f"{self.target_score}: {self.goal} units), not one of shape "
                             f"{table.shape}")
        if not np.isfinite(table).all() or (table < 0).any() or (table > 1).any():
            raise ValueError("table's entries must be chances")
        self.mean = jnp.asarray(0.5 * (table[:, :, 0] + table[:, :, 1]), jnp.float32)

    def chance(self, scores: jax.Array, winner: jax.Array, side: jax.Array) -> jax.Array:
        """As :meth:`MatchRace.chance`, for two sides (a side at or past the target without a
        winner counts as one unit short, as ``agents.equity.MatchEquity`` reads it)."""
        if scores.shape[0] != 2:
            raise ValueError(f"a match equity table is for two sides, not {scores.shape[0]}")
        units = jnp.minimum(scores // UNIT, self.goal - 1)
        mine = self.mean[units[side], units[1 - side]]
        return jnp.where(winner >= 0, (winner == side).astype(jnp.float32), mine)
