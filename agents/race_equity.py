"""Match equity for three or four sides (free-for-all): the chance to win as a race of hands.

:mod:`agents.equity` works a table back from the target for two sides; with three or four sides
such a table has ``50 ** 3`` or ``50 ** 4`` cells per leader at 250 points, too many to fill. This
model treats the match as a race instead: each side needs some units (5 points) more, the hands
to come add to each side's total, and the first side to cover its shortfall wins.

1. It plays ``hands`` hands with the greedy scorer in every seat
   (:func:`agents.equity.sample_hands`) and counts what each side gained in each (every scoring
   play and the award): the distribution of one side's gain in a hand, all sides pooled (in a
   free-for-all the seats differ only by who leads, which rotates over a match).
2. From it, the chance that a side short of ``d`` units covers them in exactly ``h`` more hands
   (:func:`hands_to_reach`), for every ``d`` up to the target.
3. A side's chance of winning from shortfalls ``d_me`` and ``d_o`` (the others) is the chance
   that it finishes in some hand ``h`` while every other side needs more hands, the sides that
   finish in the same hand sharing its win equally (``j`` rivals with it: ``1 / (j + 1)``
   each). The sides' chances add up to 1.

The sides' gains are taken as independent and the leader is ignored: an approximation that keeps
what a point margin misses (a side close to the target must be stopped; points matter more
near the end), at the cost of ``4 * H`` operations per valuation.

>>> from dominoes_env.core import RuleConfig
>>> eq = RaceEquity(RuleConfig(num_players=3), side=0, hands=400)
>>> bool(eq.value([200, 100, 100], next_side=-1) > eq.value([100, 100, 100], next_side=-1))
True
>>> bool(eq.value([100, 100, 240], next_side=-1) < eq.value([100, 100, 100], next_side=-1))
True
"""

from __future__ import annotations

import functools

import numpy as np

from dominoes_env.core import RuleConfig
from dominoes_env.core.validation import as_int

from .equity import DEFAULT_HANDS, UNIT, sample_hands

#: hands looked ahead at most: a side short of the whole target covers it in fewer hands but
#: with a chance below 1e-9 (checked when the table is built)
MAX_HANDS_AHEAD = 400


@functools.lru_cache(maxsize=16)
def hands_to_reach(rules: RuleConfig, hands: int = DEFAULT_HANDS, seed: int = 0) -> np.ndarray:
    """``pmf[d, h]``: the chance that a side ``d`` units short of the target reaches it in
    exactly ``h`` more hands (``d`` from 0 to the target's units; ``pmf[0, 0] = 1``), from the
    gains of ``hands`` greedy hands; cached per arguments."""
    hands = as_int("hands", hands, 1)
    goal = -(-rules.target_score // UNIT)
    gains = np.zeros((hands, rules.num_sides), np.int64)
    for i, (events, _next) in enumerate(sample_hands(rules, hands, seed)):
        for side, units in events:
            gains[i, side] += units
    if not gains.any():
        raise ValueError("no simulated hand scored a point; the race is undefined")
    per_hand = np.bincount(np.minimum(gains.ravel(), goal), minlength=goal + 1) / gains.size
    reach = np.cumsum(per_hand[::-1])[::-1]  # reach[g]: the chance of a gain of g or more
    H = MAX_HANDS_AHEAD
    pmf = np.zeros((goal + 1, H + 1))
    pmf[0, 0] = 1.0
    pmf[1:, 1] = reach[1:]
    for h in range(2, H + 1):
        # the first hand gains g < d, then d - g to go in h - 1 hands:
        # pmf[d, h] = sum over g < d of per_hand[g] * pmf[d - g, h - 1] (0 for d - g = 0 and h > 1)
        pmf[1:, h] = np.convolve(per_hand, pmf[:, h - 1])[1:goal + 1]
    if pmf[goal].sum() < 1.0 - 1e-9:
        raise ValueError(f"a side short of {goal} units needs more than {H} hands with "
                         "these gains; the race is not tabulated")
    # up to the last hand with any chance worth counting (the most hands: the whole target)
    used = int(np.flatnonzero(pmf[goal] > 1e-12)[-1]) + 1
    return pmf[:, :used].copy()


class RaceEquity:
    """The value of a finished hand for one side of three or more:
    ``target * (2 * chance of winning - 1)``, as :class:`agents.equity.MatchEquity` gives it for
    two (``+target`` for a won match, ``-target`` for a lost one)."""

    def __init__(self, rules: RuleConfig, side: int, hands: int = DEFAULT_HANDS, seed: int = 0):
        pmf = hands_to_reach(rules, hands, seed)
        self.pmf = pmf
        self.later = 1.0 - np.cumsum(pmf, axis=1)  # [d, h]: P(N > h)
        self.goal = pmf.shape[0] - 1
        self.side = side
        self.sides = rules.num_sides
        self.target = rules.target_score

    def value(self, scores, next_side: int) -> float:
        """The value for this side of a match standing at ``scores`` (no side has won yet);
        ``next_side`` is not used (the race ignores the leader)."""
        return float(self.values(np.asarray([scores]), np.asarray([next_side]))[0])

    def values(self, scores: np.ndarray, next_side: np.ndarray) -> np.ndarray:
        """:meth:`value` of many matches at once: ``scores[k]`` (every side's points)."""
        short = np.clip(self.goal - np.asarray(scores) // UNIT, 1, self.goal)  # [k, S]
        # ties[j]: the chance, per row and hand h, that no rival finishes before h and j of them
        # finish in h (the coefficients of the product over rivals of P(N > h) + x P(N = h))
        ties = [np.ones(self.pmf.shape[1])]
        for o in range(self.sides):
            if o != self.side:
                later, now = self.later[short[:, o]], self.pmf[short[:, o]]
                ties = ([ties[0] * later]
                        + [ties[j] * later + ties[j - 1] * now for j in range(1, len(ties))]
                        + [ties[-1] * now])
        # a hand that j rivals finish too is this side's win with chance 1 / (j + 1)
        shared = sum(t / (j + 1) for j, t in enumerate(ties))
        chance = (self.pmf[short[:, self.side]] * shared).sum(axis=1)
        return self.target * (2.0 * chance - 1.0)
