"""The lookahead blocks of observation versions 3, 4 and 5 (:mod:`dominoes_env.obs.v3`,
:mod:`dominoes_env.obs.v4`, :mod:`dominoes_env.obs.v5`) for the seat to play in many rows of a
:class:`~agents.hand_batch.HandBatch` at once: what ``guided`` reads in its batched rollouts
when its policy was trained on one of those versions (:mod:`agents.guided`).

A deliberate twin of :func:`dominoes_env.lookahead.move_lookahead` (and, version 5,
:func:`~dominoes_env.lookahead.later_replies`) written over arrays, as
:mod:`agents.batch_obs` twins version 2: the same float32 values, bit for bit, held equal to
the core's encoders by the differential tests in ``tests/test_hand_batch.py``. Every legal move
of every row is one entry (:meth:`HandBatch.moves <agents.hand_batch.HandBatch.moves>`); for
each, the layout the move leaves is built from the row's fields (the lead, or a tile on an end,
as :func:`dominoes_env.core.layout.place` does). An answer on end ``f`` showing ``x`` after it
is one of the ``V`` tiles ``[x|w]``, and the count it makes is the count without that end plus
``w`` (``2x`` for the double), so, as in the JAX twin (:mod:`dominoes_env.jax.observation`),
the answers of an entry and an end are bit masks over ``w``: the tiles a seat may hold (one
product per row), those that score (a table by ``x`` and that count), the best of them and the
distinct tiles among them (tables by ``x`` and mask). No loop of the encoding runs over rows,
moves or tiles.

>>> import random
>>> from dominoes_env.core import DealSampler, MatchState
>>> from dominoes_env.obs.v4 import encode_observation_v4
>>> from agents.hand_batch import HandBatch
>>> view = MatchState(seed=1).view(0)
>>> batch = HandBatch(view, [DealSampler.from_view(view).sample(random.Random(0))], [0])
>>> idx = batch.running()
>>> x = batch_encoder(view.rules, 4).encode(batch, idx, *batch.moves(idx))
>>> bool((x[0] == encode_observation_v4(view)).all())
True
"""

from __future__ import annotations

import functools

import numpy as np

from dominoes_env.core import RuleConfig
from dominoes_env.core.layout import SPINNER_FIRST, SPINNER_NONE
from dominoes_env.lookahead import reply_chance_table
from dominoes_env.obs import observation_spec
from dominoes_env.obs.v2 import MOVE_POINTS_DIVISOR

from .batch_obs import BatchEncoder
from .hand_batch import HandBatch, tables

__all__ = ["LookaheadEncoder", "batch_encoder"]

I64 = np.int64


#: an answer's "highest count" where there is none: below any count once added to one
_NONE = -(1 << 30)
#: the long sides, left and right (their ends take a tile from the lead on)
_LONG = np.array([True, True, False, False])
#: how many bits each byte has
_BYTE_COUNT = np.array([bin(b).count("1") for b in range(256)], I64)


class LookaheadEncoder(BatchEncoder):
    """The observation of ``version`` 3, 4 or 5 of the seat to play, for rows of a
    :class:`HandBatch` of ``rules``: :class:`BatchEncoder`'s version 2 blocks, then
    ``reply_points`` (with version 4, ``reply_chance`` and ``follow_up``; with version 5,
    ``later_reply_points`` and ``later_reply_chance``)."""

    #: the observation versions it encodes
    VERSIONS = (3, 4, 5)

    def __init__(self, rules: RuleConfig, version: int):
        if version not in self.VERSIONS:
            raise ValueError(f"LookaheadEncoder encodes observation versions 3, 4 and 5, not "
                             f"{version!r}")
        super().__init__(rules)
        self.version = version
        lay = self.layout = observation_spec(version).layout(rules)
        self.size = lay.size
        self.reply_at = lay.reply_points.start
        self.chance_at = lay.reply_chance.start if version >= 4 else None
        self.follow_at = lay.follow_up.start if version >= 4 else None
        #: version 5: where the later seats' rows start (one row of T * 4 codes per seat)
        self.later_at = ((lay.later_reply_points.start, lay.later_reply_chance.start)
                         if version >= 5 and rules.num_players > 2 else None)
        tb = self.tb = tables(rules)
        T, V = self.T, self.V
        C = self.C = len(tb.points)  # every count a layout can have
        masks = np.arange(1 << V)
        on = (masks[:, None] >> np.arange(V) & 1) > 0  # [mask, w]: bit w is set
        #: half_bits[t, x]: the bit of w where tile t is [x|w]; column V (an end that takes no
        #: tile) 0, column V + 1 1. A product with a row of tiles gives, per value x, the tiles
        #: [x|w] as a bit mask over w, and the number of tiles (float32 is exact there).
        self.half_bits = np.zeros((T, V + 2), np.float32)
        for t, (lo, pips) in enumerate(zip(tb.low.tolist(), tb.pips.tolist(), strict=True)):
            self.half_bits[t, lo] = 1 << (pips - lo)
            self.half_bits[t, pips - lo] = 1 << lo
        self.half_bits[:, V + 1] = 1
        self.tile_bits = self.half_bits.astype(I64).ravel()  # [t * (V + 2) + x]
        #: allowed[lacks, t]: tile t shows no value of the bit mask lacks
        self.allowed = (tb.tile_value_mask[None, :] & masks[:, None]) == 0
        #: what answer [x|w] adds to the count on an end showing x: w, or 2x for the double
        adds = np.where(np.eye(V, dtype=bool), 2 * np.arange(V)[:, None], np.arange(V))
        #: pays[x * C + c]: the bit mask of the w whose answer [x|w] scores on an end showing
        #: x, the count without that end being c (row V: none)
        count = np.arange(C)[None, :, None] + adds[:, None, :]  # [x, c, w]
        scores = tb.points.take(np.minimum(count, C - 1)) * (count < C) > 0
        self.pays = np.zeros((V + 1) * C, I64)
        self.pays[:V * C] = (scores * (1 << np.arange(V))).sum(axis=2).ravel()
        #: adds_most[(x << V) | mask]: the most one answer [x|w] of the bit mask adds (_NONE:
        #: the mask is empty; row V, an end that takes no tile, too)
        most = np.where(on[None, :, :], adds[:, None, :], _NONE).max(axis=2)  # [x, mask]
        self.adds_most = np.full((V + 1) << V, _NONE, I64)
        self.adds_most[:V << V] = most.ravel()
        #: tile_masks[(x << V) | mask]: the tiles [x|w] of the bit mask over w, as a bit mask
        #: over the tile set in 64-bit words (row V: none)
        words = -(-T // 64)
        tile_masks = np.zeros((V + 1, 1 << V, words), np.uint64)
        for x in range(V):
            for w in range(V):
                t = rules.tiles.index(x, w)
                tile_masks[x, on[:, w], t // 64] |= np.uint64(1 << (t % 64))
        self.tile_masks = tile_masks.reshape(-1, words)
        self.byte_count, self.ones_bytes = _BYTE_COUNT, np.ones(8 * words, I64)
        self.chance = reply_chance_table(T).ravel()
        self.spinner_first = tb.spinner_mode == SPINNER_FIRST
        self.lead_spins = tb.spinner_mode != SPINNER_NONE

    def encode(self, batch: HandBatch, idx: np.ndarray, which: np.ndarray, codes: np.ndarray,
               counts: np.ndarray) -> np.ndarray:
        """``float32[len(idx), size]``: as :meth:`BatchEncoder.encode`, with this version's
        lookahead blocks filled for each legal move."""
        x = super().encode(batch, idx, which, codes, counts)
        xf = x.ravel()
        at = which * self.size + codes
        reply, chance, follow, later = self._lookahead(batch, idx, which, codes)
        xf.put(at + self.reply_at, reply / MOVE_POINTS_DIVISOR)
        if self.version >= 4:
            xf.put(at + self.chance_at, chance)
            xf.put(at + self.follow_at, follow / MOVE_POINTS_DIVISOR)
        for i, (points, odds) in enumerate(later):  # version 5: row i of each later block
            row = i * self.T * 4
            xf.put(at + self.later_at[0] + row, points / MOVE_POINTS_DIVISOR)
            xf.put(at + self.later_at[1] + row, odds)
        return x

    def lookahead(self, batch: HandBatch, idx: np.ndarray, which: np.ndarray,
                  codes: np.ndarray) -> tuple[np.ndarray, ...]:
        """Per entry of ``(which, codes)`` (legal moves of rows ``idx``, as :meth:`encode`
        takes them): ``(reply, chance, follow_up)``, the points of
        :func:`~dominoes_env.lookahead.move_lookahead`'s reply and follow-up and the float32
        :func:`~dominoes_env.lookahead.reply_chance` (``chance`` and ``follow_up`` None for
        version 3)."""
        return self._lookahead(batch, idx, which, codes)[:3]

    def _lookahead(self, batch: HandBatch, idx: np.ndarray, which: np.ndarray,
                   codes: np.ndarray) -> tuple:
        """:meth:`lookahead`'s three, then version 5's ``[(reply, chance)]``, one pair per seat
        after the next (:func:`~dominoes_env.lookahead.later_replies`; empty before version 5
        and at two seats)."""
        n, T, V, C = self.n, self.T, self.V, self.C
        W = V + 2  # columns of half_bits
        k, v4 = len(idx), self.version >= 4
        seat = batch.turn.take(idx)
        nxt = idx * n + (seat + 1) % n  # the next seat's row in the [row, seat] fields
        # possible_tiles: not in the mover's hand, not played, no value the next seat lacks
        own = batch.hands.reshape(-1, T).take(idx * n + seat, axis=0)  # [k, T]
        unseen = ~own & ~batch.played.take(idx, axis=0)
        possible = unseen & self.allowed.take(batch.known_lacks.ravel().take(nxt), axis=0)
        # per row and value x, the tiles [x|w] the next seat may hold (and, version 4, the
        # mover's) as bit masks over w
        halves = ((np.stack([possible, own]) if v4 else possible) @ self.half_bits)
        halves = halves.astype(I64).ravel()
        xs, rest = self._after(batch, idx.take(which), codes)
        pays = self.pays.take(xs * C + rest)  # [M, F]: the answers that score, by w
        at = (which * W)[:, None] + xs
        if not v4:
            return self._best(halves.take(at) & pays, xs, rest), None, None, []
        bits = halves.take(np.stack([at, at + k * W])) & pays  # [2, M, F]
        # follow_up: the answers of the tiles the mover keeps (not the one it plays)
        bits[1] &= ~self.tile_bits.take(((codes >> 2) * W)[:, None] + xs)
        reply, follow = self._best(bits, xs, rest)
        # reply_chance: by the next seat's hand size, the tiles it may hold, the scoring ones
        size = halves[V + 1:k * W:W]  # (column V + 1: the number of tiles)
        row = (batch.sizes.ravel().take(nxt) * (T + 1) + size) * (T + 1)
        chance = self.chance.take(row.take(which) + self._distinct(bits[0], xs))
        later = []
        for j in range(2, n) if self.later_at else ():  # version 5: the seats after the next
            other = idx * n + (seat + j) % n
            tiles = unseen & self.allowed.take(batch.known_lacks.ravel().take(other), axis=0)
            half = (tiles @ self.half_bits).astype(I64).ravel()  # [k * W]
            answers = half.take(at) & pays
            odds_row = (batch.sizes.ravel().take(other) * (T + 1) + half[V + 1::W]) * (T + 1)
            later.append((self._best(answers, xs, rest),
                          self.chance.take(odds_row.take(which) + self._distinct(answers, xs))))
        return reply, chance, follow, later

    def _best(self, bits: np.ndarray, xs: np.ndarray, rest: np.ndarray) -> np.ndarray:
        """Per entry, the most points of one answer among ``bits`` (``[..., M, F]`` bit masks
        over w of scoring answers ``[x|w]`` on end ``f`` showing ``x = xs``, making the count
        ``rest`` plus what the tile adds), 0 when there is none."""
        best = rest + self.adds_most.take((xs << self.V) + bits)
        out = best[..., 0]
        for f in range(1, best.shape[-1]):
            out = np.maximum(out, best[..., f])
        return np.maximum(out, 0)

    def _distinct(self, bits: np.ndarray, xs: np.ndarray) -> np.ndarray:
        """Per entry, how many distinct tiles ``bits`` marks (``[M, F]`` bit masks over w of
        ``[x_f|w]``, ``x_f`` = ``xs``): the tiles of every end as one bit mask over the tile
        set (a tile may show on two ends), its bits counted a byte at a time."""
        tiles = self.tile_masks.take((xs << self.V) + bits, axis=0)  # [M, F, words]
        union = np.bitwise_or.reduce(tiles, axis=1)
        return self.byte_count.take(union.view(np.uint8)) @ self.ones_bytes

    def _after(self, batch: HandBatch, r: np.ndarray, codes: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
        """The layout each move leaves (move ``codes[j]`` in row ``r[j]``, as
        :func:`dominoes_env.core.layout.place` plays it), as ``(xs, rest)``, each ``[M, F]``:
        the value end ``f`` shows (V where it takes no tile; ``F = 2`` when no move leaves a
        cross open) and the count less that end's contribution (what an answer there adds
        to: :func:`~dominoes_env.core.count_after`), between 0 and the highest count."""
        tb, V = self.tb, self.V
        M = len(r)
        t, e = codes >> 2, codes & 3
        ends = batch.ends.take(r, axis=0)
        contrib = batch.contrib.take(r, axis=0)
        cross = batch.cross_open.take(r)
        # a tile on an end: its other half shows there; a long side may cover the spinner
        # (the cross opens once both are covered) or, a first double, become it
        f = np.arange(0, 4 * M, 4) + e
        v = ends.ravel().take(f)
        other = tb.pips.take(t) - v
        ends.ravel().put(f, other)
        contrib.ravel().put(f, other << tb.dbl_shift.take(t))
        side = e < 2
        covers = side & batch.spinner_free.ravel().take(r * 2 + (e & 1))
        if np.count_nonzero(covers):
            cross = cross | (covers & (batch.spinner_sides.take(r) + covers == 2))
        if self.spinner_first and np.count_nonzero(none := batch.spinner.take(r) < 0):
            spins = none & side & ~covers & tb.dbl.take(t)
            if np.count_nonzero(spins):
                ends[spins, 2:] = v[spins, None]
                cross = np.where(spins, tb.cross_now, cross)
        arm = batch.arm.take(r, axis=0)
        side_open = arm[:, 0] + arm[:, 1] + side > 0  # a long side holds a tile
        lead_pips = batch.lead_pips.take(r)
        leads = batch.lead.take(r) < 0
        if np.count_nonzero(leads):  # the lead: low half left, high half right; a double
            tl = t[leads]  # may spin (its value shows up and down)
            lo, a, d = tb.low.take(tl), tb.pips.take(tl), tb.dbl.take(tl)
            ends[leads, 0], ends[leads, 1] = lo, a - lo
            contrib[leads, 0] = np.where(d, a, lo)
            contrib[leads, 1] = np.where(d, a, a - lo)
            spin = d & self.lead_spins
            ends[leads, 2] = np.where(spin, lo, ends[leads, 2])
            ends[leads, 3] = np.where(spin, lo, ends[leads, 3])
            cross[leads] = spin & tb.cross_now
            side_open[leads] = False  # the lead covers no arm
            lead_pips[leads] = a
        total = contrib @ tb.ones4
        if not np.count_nonzero(cross):
            return ends[:, :2], total[:, None] - contrib[:, :2]
        rest = total[:, None] - contrib
        if not np.all(side_open):  # up / down count from the lead's pips while neither long
            # side holds a tile
            less = np.where(side_open, 0, contrib[:, 0] + contrib[:, 1] - lead_pips)
            rest[:, 2:] -= less[:, None]
        return np.where(cross[:, None] | _LONG, ends, V), rest


@functools.lru_cache(maxsize=16)
def batch_encoder(rules: RuleConfig, version: int) -> BatchEncoder | None:
    """The (cached) batched encoder of observation ``version`` for rows of a :class:`HandBatch` of
    ``rules`` (:class:`BatchEncoder` for version 2, :class:`LookaheadEncoder` for 3 to 5), or
    None for a version none twins."""
    if version == BatchEncoder.version:
        return BatchEncoder(rules)
    if version in LookaheadEncoder.VERSIONS:
        return LookaheadEncoder(rules, version)
    return None
