"""Scoring arithmetic shared by the engine and the tests' reference checks."""

from __future__ import annotations


def round_to_five(pips: int) -> int:
    """Round to the nearest multiple of 5: remainder 1 or 2 down, 3 or 4 up.

    >>> [round_to_five(x) for x in (2, 3, 12, 13, 25)]
    [0, 5, 10, 15, 25]
    """
    return (pips + 2) // 5 * 5


def points_for_count(count: int) -> int:
    """Points a play scores for a layout count: the count if it is a positive multiple of 5."""
    return count if count > 0 and count % 5 == 0 else 0


def blocked_award(side_pips: list[int], mode: str = "opponents_total") -> tuple[int, int] | None:
    """``(side, points)`` for a blocked hand, or ``None`` when the fewest pips are tied.

    >>> blocked_award([14, 12])
    (1, 15)
    >>> blocked_award([14, 12, 20], "difference")
    (1, 10)
    >>> blocked_award([9, 9]) is None
    True
    """
    low = min(side_pips)
    if side_pips.count(low) > 1:
        return None
    winner = side_pips.index(low)
    others = [p for s, p in enumerate(side_pips) if s != winner]
    if mode == "difference":
        return winner, round_to_five(sum(p - low for p in others))
    return winner, round_to_five(sum(others))
