"""One-move lookahead from what a seat may know: the points the next seat could answer each of
its moves with (observation version 3's ``reply_points`` block, :mod:`dominoes_env.obs.v3`).

For a legal move of the seat to play, the layout is moved on a scratch copy
(:func:`dominoes_env.core.layout.place`); then every tile the next seat may hold (not in the
mover's hand, not on the layout, with neither half a value the next seat is known to lack) is
tried on every end open after the move, and the most points one of those plays would score is
the move's reply threat. It is what a one-ply defensive player weighs (``search`` finds it by
sampling): a reactive network cannot easily work it out from the layout's one-hot blocks.

>>> from dominoes_env.core import LEFT, HandState, RuleConfig, code_of
>>> hand = HandState.from_tiles(RuleConfig(), leader=0, hands=[
...     [(6, 6), (6, 3), (1, 2), (0, 0), (2, 2), (3, 3), (4, 5)],
...     [(5, 5), (0, 1), (1, 1), (2, 3), (3, 4), (0, 6), (1, 6)]])
>>> _ = hand.play(((6, 6), None)), hand.play(((6, 1), "left"))
>>> view = hand.view(0)   # ends 1 and 6, count 13; seat 0 holds [1|2] and [6|3]
>>> ts = hand.rules.tiles
>>> replies = reply_points(view, view.seat, view.hand, view.legal)
>>> replies[code_of(ts.index(1, 2), LEFT)]   # [2|1] left (count 14): [2|3] on it makes 15
15
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .core import code_of, count_after, points_for_count, tile_of
from .core.layout import Layout, open_ends, place


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
    possible = possible_tiles(src, (seat + 1) % src.rules.num_players, own)
    ts = src.rules.tiles
    return {code: _answers(x, possible, ts)[0] for code, x in _after_each(src, legal)}


def move_lookahead(src, seat: int, own: int, legal) -> dict[int, tuple[int, int, int, int]]:
    """``{code: (reply, scoring, possible, follow_up)}`` for each legal code of ``seat`` (whose
    hand is ``own``; it is to play in ``src``), on the layout that move leaves:

    - ``reply``: :func:`reply_points`' threat;
    - ``scoring``: how many of the ``possible`` tiles the next seat may hold
      (:func:`possible_tiles`, the same for every code) would score with one play;
    - ``follow_up``: the most points ``seat`` could score with one of the tiles it still holds,
      were the layout unchanged when its turn comes back (0 when none scores).

    Observation version 4 turns ``scoring`` into :func:`reply_chance`."""
    possible = possible_tiles(src, (seat + 1) % src.rules.num_players, own)
    size, ts = possible.bit_count(), src.rules.tiles
    out = {}
    for code, x in _after_each(src, legal):
        reply, scoring = _answers(x, possible, ts)
        kept = own & ~(1 << tile_of(code))
        out[code] = (reply, scoring.bit_count(), size, _answers(x, kept, ts)[0])
    return out


def later_replies(src, seat: int, own: int,
                  legal) -> tuple[list[int], dict[int, list[tuple[int, int]]]]:
    """The seats after the next one, each as if the seats between them passed (observation
    version 5's lookahead): ``(sizes, {code: [(reply, scoring), ...]})`` for each legal code of
    ``seat`` (whose hand is ``own``; it is to play in ``src``), one pair per seat ``seat + 2``,
    ..., ``seat + n - 1`` in turn order, on the layout that move leaves: ``reply``, the most
    points that seat could score with one play (:func:`reply_points`' threat, for that seat);
    ``scoring``, how many of the tiles it may hold (:func:`possible_tiles`; ``sizes`` gives
    how many those are, per seat) would score. With two seats there are none (empty lists)."""
    n, ts = src.rules.num_players, src.rules.tiles
    possible = [possible_tiles(src, (seat + k) % n, own) for k in range(2, n)]
    out = {}
    for code, x in _after_each(src, legal):
        answers = (_answers(x, tiles, ts) for tiles in possible)
        out[code] = [(reply, scoring.bit_count()) for reply, scoring in answers]
    return [tiles.bit_count() for tiles in possible], out


def reply_chance(held: int, possible: int, scoring: int) -> float:
    """The chance that ``held`` tiles drawn at random from ``possible`` include at least one of
    ``scoring`` given ones: ``1 - C(possible - scoring, held) / C(possible, held)`` (``held``
    is capped at ``possible``), rounded to float32 (:func:`reply_chance_table`).

    >>> reply_chance(7, 14, 0), reply_chance(7, 14, 8), round(reply_chance(1, 4, 1), 4)
    (0.0, 1.0, 0.25)
    """
    return float(reply_chance_table(max(held, possible))[held, possible, scoring])


@functools.cache
def reply_chance_table(num_tiles: int) -> np.ndarray:
    """``float32[N+1, N+1, N+1]`` (``N = num_tiles``) of :func:`reply_chance` by ``[held,
    possible, scoring]``, from exact integers rounded once; the JAX observation reads the same
    table, so both give the same bits. Entries with ``scoring > possible`` are 0."""
    n = num_tiles
    out = np.zeros((n + 1, n + 1, n + 1), dtype=np.float64)
    for u in range(n + 1):
        for h in range(n + 1):
            take = min(h, u)
            total = math.comb(u, take)
            for k in range(u + 1):
                out[h, u, k] = (total - math.comb(u - k, take)) / total  # rounded once
    table = out.astype(np.float32)
    table.flags.writeable = False
    return table


def _after_each(src, legal):
    """``(code, layout)`` for each legal code: a scratch :class:`Layout` of ``src`` with the
    move played on it."""
    base = Layout.of(src)
    for code in legal:
        x = base.copy()
        place(x, code)
        yield code, x


def _answers(x: Layout, tiles: int, ts) -> tuple[int, int]:
    """``(most points, bitmask of the scoring tiles)`` of one play of a tile of ``tiles`` (a
    bitmask of the tile set ``ts``) on an open end of the layout ``x`` (``(0, 0)`` when none
    scores)."""
    suit, pips, dbl = ts.suit_mask, ts.pips, ts.is_double
    ends, contrib, arm, lead, lead_pips = x.ends, x.contrib, x.arm, x.lead, x.lead_pips
    best = scoring = 0
    for e in open_ends(x):  # x has had a move played: the lead is down
        m = tiles & suit[ends[e]]
        while m:
            low = m & -m
            u = low.bit_length() - 1
            p = points_for_count(count_after(code_of(u, e), lead, lead_pips, ends, contrib, arm,
                                             pips, dbl))  # fmt: skip
            if p:
                scoring |= low
                if p > best:
                    best = p
            m ^= low
    return best, scoring
