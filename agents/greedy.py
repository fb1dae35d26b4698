"""``GreedyAgent``: the move that scores the most points now.

Ties (the usual case: most moves score nothing) are broken by a fixed, documented rule:

1. the most points now (the layout count after the move, when it is a positive multiple of 5);
2. then shed the heaviest tile (most pips: fewer pips left for an opponent's domino award);
3. then a double before a non-double of the same weight (doubles are the hardest to place later);
4. then the lowest action code (so the choice is a pure function of the view).

The agent never draws on its generator: greedy play is deterministic.

>>> from dominoes_env.core import HandState, RuleConfig
>>> hand = HandState.from_tiles(RuleConfig(), leader=0, hands=[
...     [(6, 6), (6, 4), (1, 2), (0, 0), (2, 2), (3, 3), (4, 5)],
...     [(5, 5), (0, 1), (1, 1), (2, 3), (3, 4), (0, 6), (1, 6)]])
>>> str(hand.move_of(GreedyAgent().act(hand.view(0))))  # [6|4] counts 10 and scores 10
'[4|6] lead'
"""

from __future__ import annotations

from functools import cache

from dominoes_env.core import (
    HandState,
    SeatView,
    TileSet,
    count_after,
    points_for_count,
    tile_of,
    tile_set,
)

from .base import Agent


@cache
def tie_rank(max_pip: int) -> tuple[int, ...]:
    """Per action code, its place in the greedy tie-break order (higher is preferred): heavier
    tile first, then doubles, then lower codes. Values lie in ``0 .. 4 * num_tiles - 1``.

    >>> rank = tie_rank(6)
    >>> ts = tile_set(6)
    >>> rank[ts.index(6, 6) * 4] > rank[ts.index(5, 6) * 4] > rank[ts.index(0, 0) * 4]
    True
    """
    ts: TileSet = tile_set(max_pip)
    codes = range(ts.num_tiles * 4)
    order = sorted(codes, key=lambda c: (ts.pips[tile_of(c)], ts.is_double[tile_of(c)], -c))
    rank = [0] * len(order)
    for place, code in enumerate(order):
        rank[code] = place
    return tuple(rank)


#: points are scaled by this before adding the tie rank, so points always dominate
POINT_SCALE = 1 << 10


def greedy_choice(view: SeatView) -> int:
    """The greedy action code for ``view`` (see the module docstring for the tie-break rule)."""
    legal = view.legal
    if not legal:
        raise ValueError(f"seat {view.seat} has no legal move: it is not its turn")
    ts = view.rules.tiles
    rank = tie_rank(ts.max_pip)
    pips, dbl = ts.pips, ts.is_double
    lead, lead_pips, ends, contrib, arm = (view.lead, view.lead_pips, view.ends, view.contrib,
                                           view.arm)
    best, best_key = legal[0], -1
    for code in legal:
        points = points_for_count(count_after(code, lead, lead_pips, ends, contrib, arm, pips, dbl))
        key = points * POINT_SCALE + rank[code]
        if key > best_key:
            best, best_key = code, key
    return best


def greedy_move(hand: HandState) -> int:
    """The greedy action code of the seat to play in a full ``hand`` state: the rule of
    :func:`greedy_choice`, read from the state instead of a view. (The rollouts of
    :mod:`agents.search` inline it in their loop, which is their hot path.)"""
    rank = tie_rank(hand.rules.max_pip)
    return max(hand.legal_actions(), key=lambda a: hand.points_after(a) * POINT_SCALE + rank[a])


class GreedyAgent(Agent):
    """Plays the move that scores the most points now; ties shed the heaviest tile.

    Deterministic: the seed is accepted for the common interface but never used.
    """

    name = "greedy"

    def act(self, view: SeatView) -> int:
        return greedy_choice(view)
