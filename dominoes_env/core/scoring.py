"""The scoring rules, each written once: the layout count after a play (:func:`count_after`),
which counts score (:func:`points_for_count`), the hand awards (:func:`round_to_five`,
:func:`blocked_award`) and who wins the match (:func:`wins_by_play`, :func:`match_winner`).

The engine (``HandState``, ``MatchState``), the agents (greedy, search rollouts) and the
observation encoder all call these; none restates them."""

from __future__ import annotations

from .events import Award

#: every score is a multiple of this: a play scores a count only when it is one, and a hand's
#: award is rounded to one (the other forms of the game and the match equity read it here)
SCORE_UNIT = 5


def round_to_five(pips: int) -> int:
    """Round to the nearest multiple of 5: remainder 1 or 2 down, 3 or 4 up.

    >>> [round_to_five(x) for x in (2, 3, 12, 13, 25)]
    [0, 5, 10, 15, 25]
    """
    return (pips + SCORE_UNIT // 2) // SCORE_UNIT * SCORE_UNIT


def points_for_count(count: int) -> int:
    """Points a play scores for a layout count: the count if it is a positive multiple of 5.

    >>> [points_for_count(c) for c in (0, 4, 5, 12, 20)]
    [0, 0, 5, 0, 20]
    """
    return count if count > 0 and count % SCORE_UNIT == 0 else 0


def count_after(code: int, lead: int, lead_pips: int, ends, contrib, arm, pips, is_double) -> int:
    """The layout count after playing action ``code`` (assumed legal), from the layout fields a
    :class:`~dominoes_env.core.HandState` and a :class:`~dominoes_env.core.SeatView` both hold.

    ``pips`` and ``is_double`` are the :class:`~dominoes_env.core.TileSet` tables. Agents call it
    with a view's fields; ``HandState.count_after`` calls it with its own.

    >>> from dominoes_env.core import tile_set
    >>> ts = tile_set(6)
    >>> # lone [5|5] lead (ends 5/5, each contributing 10 until covered), [5|2] on the left: 10 + 2
    >>> count_after(ts.index(2, 5) * 4, ts.index(5, 5), 10, (5, 5, 5, 5), (10, 10, 0, 0),
    ...             (0, 0, 0, 0), ts.pips, ts.is_double)
    12
    """
    t = code >> 2
    if lead < 0:
        return pips[t]
    e = code & 3
    other = pips[t] - ends[e]
    new = other + other if is_double[t] else other
    if e < 2 or arm[0] or arm[1]:
        return contrib[0] + contrib[1] + contrib[2] + contrib[3] - contrib[e] + new
    return lead_pips + contrib[2] + contrib[3] - contrib[e] + new


def blocked_award(side_pips: list[int], mode: str = "opponents_total") -> Award | None:
    """``Award(side, points)`` for a blocked hand, or ``None`` when the fewest pips are tied.

    >>> blocked_award([14, 12])
    Award(side=1, points=15)
    >>> blocked_award([14, 12, 20], "difference") == (1, 10)
    True
    >>> blocked_award([9, 9]) is None
    True
    """
    low = min(side_pips)
    if side_pips.count(low) > 1:
        return None
    winner = side_pips.index(low)
    others = [p for s, p in enumerate(side_pips) if s != winner]
    if mode == "difference":
        return Award(winner, round_to_five(sum(p - low for p in others)))
    return Award(winner, round_to_five(sum(others)))


def wins_by_play(score: int, target: int, win_check: str) -> bool:
    """Whether a play that brings its side's score to ``score`` wins the match on the spot:
    under ``win_check="immediate"``, reaching ``target`` ends the match at once.

    >>> wins_by_play(250, 250, "immediate"), wins_by_play(250, 250, "end_of_hand")
    (True, False)
    """
    return score >= target and win_check == "immediate"


def match_winner(scores, target: int, win_check: str) -> int | None:
    """The side that has won once a hand's award is added to ``scores``, or ``None`` when the
    match goes on: the top score must reach ``target``; under ``"end_of_hand"`` it must also be
    alone at the top (a tie at the top plays another hand).

    >>> match_winner([255, 120], 250, "end_of_hand"), match_winner([255, 255], 250, "end_of_hand")
    (0, None)
    >>> match_winner([100, 240], 250, "immediate") is None
    True
    """
    top = max(scores)
    if top >= target and (win_check == "immediate" or scores.count(top) == 1):
        return scores.index(top)
    return None
