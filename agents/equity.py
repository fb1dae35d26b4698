"""Match equity: the chance that a side wins the match from the scores between two hands.

A search that values the end of a hand by its point margin is risk-neutral: 20 points are worth
20 points whether the match stands 0-0 or 230-240. Matches are won, not points, so what a hand's
end is worth is the chance it leaves of winning the match (the "match equity table" of
backgammon). :func:`equity_table` computes that chance for two sides (two players, or four in
partnerships):

1. it plays ``hands`` hands with the greedy scorer in every seat (:mod:`agents.greedy`) and
   keeps, for each, the order in which the sides scored (every scoring play, then the award) and
   which side leads the hand after it (``next_leader``: who dominoed, or at random after a
   block; or the next seat with ``"rotate"``);
2. it takes those hands as the distribution of a hand's play from either side's lead, and
   works back from the scores near the target to 0-0 (every hand scores, so each score pair
   depends only on higher ones): from scores ``(a, b)`` with side ``L`` leading, a sampled hand
   wins the match for the first side to reach the target (``win_check="immediate"``; with
   ``"end_of_hand"`` the higher total once the hand is over, a tie at the top counting half) or
   leads to the table's entry at the new scores.

Scores are counted in units of 5 (every play and award scores a multiple of 5). Hands in which
no side scores (a blocked hand with a tie) are left out: they change nothing but the leader.
The greedy scorer is a stand-in for real play; the table is an approximation of the chance,
and an exact function of the rules, ``hands`` and ``seed``.

>>> from dominoes_env.core import RuleConfig
>>> table = equity_table(RuleConfig(), hands=400)
>>> table.shape                   # (my score / 5, their score / 5, 0: I lead next, 1: they do)
(50, 50, 2)
>>> bool(0.5 < table[0, 0, 0] < 0.6)  # leading the first hand is an advantage
True
>>> bool(table[40, 10, 1] > table[30, 10, 1] > table[30, 20, 1])
True
"""

from __future__ import annotations

import functools
import random

import numpy as np

from dominoes_env.core import SCORE_UNIT, HandState, RuleConfig, leader_after
from dominoes_env.core.validation import as_int, as_seed

from .greedy import greedy_move

#: points per unit of the table (every score is a multiple of it: the core's ``SCORE_UNIT``)
UNIT = SCORE_UNIT
#: hands simulated for a table by default (about a second of greedy play)
DEFAULT_HANDS = 2000
#: the highest target a table is built for (its cost grows with the square of the target)
MAX_TARGET = 500


def unsupported(rules: RuleConfig) -> str | None:
    """Why no match equity is built for ``rules``, or ``None`` if one is: a target of at most
    :data:`MAX_TARGET` points (two sides get a table, :func:`equity_table`; three or four the
    race model of :mod:`agents.race_equity`). ``rules`` that are no ``RuleConfig`` (``None``
    among them) are a ``TypeError`` naming them."""
    if not isinstance(rules, RuleConfig):
        raise TypeError(f"rules must be a RuleConfig, not {type(rules).__name__}")
    if rules.target_score > MAX_TARGET:
        return (f"a match equity table is built for targets up to {MAX_TARGET} points; "
                f"target_score={rules.target_score}")
    return None


def check_rules(rules: RuleConfig) -> None:
    """``ValueError`` (the reason :func:`unsupported` gives) unless a table can be built for
    ``rules``."""
    reason = unsupported(rules)
    if reason is not None:
        raise ValueError(reason)


def sample_hands(rules: RuleConfig, hands: int, seed: int = 0) -> list[tuple[list, int]]:
    """``hands`` hands played by the greedy scorer from seat 0's lead: for each,
    ``([(side, units) of every scoring play, then the award], side leading next or -1)``,
    where -1 means the next leader is drawn at random.

    >>> from dominoes_env.core import RuleConfig
    >>> events, nxt = sample_hands(RuleConfig(), 1)[0]
    >>> all(side in (0, 1) and units > 0 for side, units in events), nxt in (-1, 0, 1)
    (True, True)
    """
    rng = random.Random(seed)
    side_of = [rules.side_of(s) for s in range(rules.num_players)]
    out = []
    for _ in range(hands):
        h = HandState.deal(rules, rng, 0)
        events = []
        while h.turn >= 0:
            side = side_of[h.turn]
            points = h.apply_unchecked(greedy_move(h))
            if points:
                events.append((side, points // UNIT))
        if h.award is not None and h.award[1]:
            events.append((h.award[0], h.award[1] // UNIT))
        leader = leader_after(h)
        nxt = -1 if leader is None else side_of[leader]
        out.append((events, nxt))
    return out


@functools.lru_cache(maxsize=16)
def equity_table(rules: RuleConfig, hands: int = DEFAULT_HANDS, seed: int = 0) -> np.ndarray:
    """``table[a, b, L]``: the chance that side 0 wins the match when the next hand starts with
    side 0 at ``a * 5`` points, side 1 at ``b * 5`` and side ``L`` leading (``a``, ``b`` below
    the target's units). ``ValueError`` for rules :func:`check_rules` refuses or with other than
    two sides; cached per arguments."""
    check_rules(rules)
    if rules.num_sides != 2:
        raise ValueError(f"a match equity table needs two sides (two players, or four in "
                         f"partnerships); this game has {rules.num_sides}")
    hands = as_int("hands", hands, 1)
    seed = as_seed(seed)  # -1 dealt the hands of seed 1
    goal = -(-rules.target_score // UNIT)  # units that reach the target
    sampled = [(ev, nxt) for ev, nxt in sample_hands(rules, hands, seed) if ev]
    if not sampled:
        raise ValueError("no simulated hand scored a point; the table is undefined")
    n = len(sampled)
    length = max(len(ev) for ev, _ in sampled)
    # cumulative units of each side after each event, from the leader's side's point of view
    cum = np.zeros((2, n, length), np.int64)
    for i, (ev, _) in enumerate(sampled):
        for j, (side, units) in enumerate(ev):
            cum[side, i, j:] += units
    nxt = np.array([x for _, x in sampled])
    immediate = rules.win_check == "immediate"
    never = length + 1
    views = []  # per leading side: the sampled hands from that side's point of view
    for lead in (0, 1):
        # a hand led by side 1 is a sampled hand with the sides' roles swapped
        mine, theirs = (cum[0], cum[1]) if lead == 0 else (cum[1], cum[0])
        leads = np.where(nxt < 0, 2, nxt if lead == 0 else 1 - nxt)  # 2: drawn at random
        # first event index at which each side's gain reaches t units (never: not in the hand)
        views.append((mine[:, -1], theirs[:, -1], leads,
                      _first_reach(mine, goal, never), _first_reach(theirs, goal, never)))
    # [..., 2]: a random next leader, the mean of the two
    table = np.zeros((goal, goal, 3))
    # every sampled hand scores, so a score pair depends only on pairs of a higher total: fill
    # the table one diagonal (a + b = total) at a time, from the target down, every hand at once
    for total in range(2 * goal - 2, -1, -1):
        a = np.arange(max(0, total - goal + 1), min(goal - 1, total) + 1)
        b = total - a
        for lead, (gain_a, gain_b, leads, first_a, first_b) in enumerate(views):
            end_a, end_b = a[:, None] + gain_a, b[:, None] + gain_b
            if immediate:
                fa, fb = first_a[goal - a], first_b[goal - b]
                won, lost = fa < fb, fb < fa
                value = won.astype(float)
            else:
                over = np.maximum(end_a, end_b) >= goal
                tie = over & (end_a == end_b)
                won, lost = over & (end_a > end_b), over & (end_b > end_a) | tie
                value = np.where(tie, 0.5, won.astype(float))
            later = table[np.minimum(end_a, goal - 1), np.minimum(end_b, goal - 1), leads]
            table[a, b, lead] = np.where(won | lost, value, later).mean(axis=1)
        table[a, b, 2] = 0.5 * (table[a, b, 0] + table[a, b, 1])
    return table[:, :, :2].copy()


def _first_reach(cum: np.ndarray, goal: int, never: int) -> np.ndarray:
    """``out[t, i]``: the first event index of hand ``i`` at which ``cum`` reaches ``t`` units
    (``never`` if it does not), for ``t`` in ``0..goal``."""
    out = np.full((goal + 1, cum.shape[0]), never, np.int64)
    for t in range(goal + 1):
        hit = cum >= t
        any_hit = hit.any(axis=1)
        out[t, any_hit] = hit[any_hit].argmax(axis=1)
    return out


class MatchEquity:
    """The value of a finished hand for one side: ``target * (2 * chance of winning - 1)``, so a
    won match is worth ``+target`` and a lost one ``-target`` as in
    :class:`agents.search.GreedyRollout`.

    >>> from dominoes_env.core import RuleConfig
    >>> eq = MatchEquity(RuleConfig(), side=0, hands=400)
    >>> eq.value([200, 100], next_side=1) > eq.value([100, 100], next_side=0) > 0  # the lead
    True
    >>> eq.value([100, 100], next_side=1) < 0
    True
    """

    def __init__(self, rules: RuleConfig, side: int, hands: int = DEFAULT_HANDS, seed: int = 0):
        self.table = equity_table(rules, hands, seed)
        self.side = as_int("side", side, 0, 1)  # side -1 read the other side's scores
        self.target = rules.target_score

    def value(self, scores, next_side: int) -> float:
        """The value for this side of a match standing at ``scores`` (no side has won yet),
        ``next_side`` leading the next hand (-1: drawn at random). Under
        ``win_check="end_of_hand"`` two sides can tie at or above the target and play on: they
        are read as both one unit short of it (whoever scores more in the next hand wins)."""
        me = self.side
        t = self.table
        top = t.shape[0] - 1
        a, b = min(scores[me] // UNIT, top), min(scores[1 - me] // UNIT, top)
        if next_side < 0:
            chance = 0.5 * (t[a, b, 0] + t[a, b, 1])
        else:
            chance = t[a, b, 0 if next_side == me else 1]
        return self.target * (2.0 * float(chance) - 1.0)

    def values(self, scores: np.ndarray, next_side: np.ndarray) -> np.ndarray:
        """:meth:`value` of many matches at once: ``scores[k]`` (two sides) with
        ``next_side[k]`` leading the next hand; the same floats, bit for bit."""
        me = self.side
        t = self.table
        top = t.shape[0] - 1
        a = np.minimum(scores[:, me] // UNIT, top)
        b = np.minimum(scores[:, 1 - me] // UNIT, top)
        cell = t[a, b]  # [k, 3]
        chance = np.where(next_side < 0, 0.5 * (cell[:, 0] + cell[:, 1]),
                          cell[np.arange(len(a)), np.where(next_side == me, 0, 1)])
        return self.target * (2.0 * chance.astype(np.float64) - 1.0)
