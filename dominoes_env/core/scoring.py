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
