"""The greedy scorer's order of moves, written once.

The greedy scorer plays the move that scores the most points now; ties (most moves score
nothing) are broken by a fixed rule:

1. the most points now (the layout count after the move, when it is a positive multiple of 5);
2. then shed the heaviest tile (most pips: fewer pips left for an opponent's domino award);
3. then a double before a non-double of the same weight (doubles are the hardest to place later);
4. then the lowest action code (so the choice is a pure function of the position).

A move's greedy key is ``points * POINT_SCALE + tie_rank(max_pip)[code]``; the greedy move is
the legal code with the largest key (:func:`greedy_best`). ``agents.greedy`` plays it, the
search agents' rollouts and ties follow it, and the JAX twin's greedy policy reads tables built
from :func:`tie_rank` and :data:`POINT_SCALE`.

>>> from dominoes_env.core import HandState, RuleConfig
>>> hand = HandState.from_tiles(RuleConfig(), leader=0, hands=[
...     [(6, 6), (6, 4), (1, 2), (0, 0), (2, 2), (3, 3), (4, 5)],
...     [(5, 5), (0, 1), (1, 1), (2, 3), (3, 4), (0, 6), (1, 6)]])
>>> str(hand.move_of(greedy_best(hand.legal_actions(), hand.points_after, tie_rank(6))))
'[4|6] lead'
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache

from .moves import tile_of
from .tiles import tile_set

#: points are scaled by this before adding the tie rank, so points always dominate (a tie rank
#: is below ``4 * 91 = 364``, the action codes of the largest set)
POINT_SCALE = 1 << 10


@cache
def tie_rank(max_pip: int) -> tuple[int, ...]:
    """Per action code, its place in the greedy tie-break order (higher is preferred): heavier
    tile first, then doubles, then lower codes. Values lie in ``0 .. 4 * num_tiles - 1``.

    >>> rank = tie_rank(6)
    >>> ts = tile_set(6)
    >>> rank[ts.index(6, 6) * 4] > rank[ts.index(5, 6) * 4] > rank[ts.index(0, 0) * 4]
    True
    """
    ts = tile_set(max_pip)
    codes = range(ts.num_tiles * 4)
    order = sorted(codes, key=lambda c: (ts.pips[tile_of(c)], ts.is_double[tile_of(c)], -c))
    rank = [0] * len(order)
    for place, code in enumerate(order):
        rank[code] = place
    return tuple(rank)


def greedy_best(legal: Sequence[int], points_of: Callable[[int], int],
                rank: Sequence[int]) -> int:
    """The greedy move among the ``legal`` action codes: the largest ``points_of(code) *
    POINT_SCALE + rank[code]`` (``rank``: :func:`tie_rank` of the set). ``ValueError`` when
    ``legal`` is empty."""
    if not legal:
        raise ValueError("there is no legal move to choose from")
    best, best_key = legal[0], -1
    for code in legal:
        key = points_of(code) * POINT_SCALE + rank[code]
        if key > best_key:
            best, best_key = code, key
    return best
