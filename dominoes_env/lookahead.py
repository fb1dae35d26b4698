"""One-move lookahead from what a seat may know: the points the next seat could answer each of
its moves with (observation version 3's ``reply_points`` block).

For a legal move of the seat to play, the layout is moved on a scratch copy
(:func:`dominoes_env.core.layout.place`); then every tile the next seat may hold (not in the
mover's hand, not on the layout, with neither half a value the next seat is known to lack) is
tried on every end open after the move, and the most points one of those plays would score is
the move's reply threat. It is what a one-ply defensive player weighs (``search`` finds it by
sampling): a reactive network cannot easily work it out from the layout's one-hot blocks.

>>> from dominoes_env.core import HandState, RuleConfig
>>> hand = HandState.from_tiles(RuleConfig(), leader=0, hands=[
...     [(6, 6), (6, 3), (1, 2), (0, 0), (2, 2), (3, 3), (4, 5)],
...     [(5, 5), (0, 1), (1, 1), (2, 3), (3, 4), (0, 6), (1, 6)]])
>>> _ = hand.play(((6, 6), None)), hand.play(((6, 1), "left"))
>>> view = hand.view(0)   # ends 1 and 6, count 13; seat 0 holds [1|2] and [6|3]
>>> ts = hand.rules.tiles
>>> replies = reply_points(view, view.seat, view.hand, view.legal)
>>> replies[ts.index(1, 2) * 4 + 0]   # [2|1] left (count 14): [2|3] on it makes 15
15
"""

from __future__ import annotations

from .core import count_after, points_for_count
from .core.layout import Layout, place


def possible_tiles(src, seat: int, own: int) -> int:
    """Bitmask of the tiles ``seat`` may hold as far as the seat whose hand is ``own`` knows:
    not in ``own``, not on the layout, and with neither half a value ``seat`` is known to
    lack (``src``: a :class:`~dominoes_env.core.PublicState`)."""
    ts = src.rules.tiles
    out = ((1 << ts.num_tiles) - 1) & ~own & ~src.played
    lacks, suit = src.known_lacks[seat], ts.suit_mask
    while lacks:
        low = lacks & -lacks
        out &= ~suit[low.bit_length() - 1]
        lacks ^= low
    return out


def reply_points(src, seat: int, own: int, legal) -> dict[int, int]:
    """``{code: points}`` for each legal code of ``seat`` (whose hand is ``own``; it is to play
    in ``src``): the most points the next seat in turn could score with one play right after
    that move, from :func:`possible_tiles` (0 when none of them scores)."""
    rules = src.rules
    ts = rules.tiles
    nxt = (seat + 1) % rules.num_players
    possible = possible_tiles(src, nxt, own)
    suit, pips, dbl = ts.suit_mask, ts.pips, ts.is_double
    base = Layout.of(src, rules)
    out = {}
    for code in legal:
        x = base.copy()
        place(x, code)
        ends, contrib, arm, lead, lead_pips = x.ends, x.contrib, x.arm, x.lead, x.lead_pips
        best = 0
        for e in range(4 if x.cross_open else 2):
            m = possible & suit[ends[e]]
            while m:
                low = m & -m
                u = low.bit_length() - 1
                p = points_for_count(count_after(u << 2 | e, lead, lead_pips, ends, contrib, arm,
                                                 pips, dbl))  # fmt: skip
                if p > best:
                    best = p
                m ^= low
        out[code] = best
    return out
