"""``HandBatch``: many copies of one seat's position, each on its own sampled deal, played in
lockstep with numpy (the search agents' rollouts, :mod:`agents.search`, :mod:`agents.guided`).

The core (:class:`~dominoes_env.core.HandState`) plays one hand one move at a time in Python;
a search decision plays hundreds of hands from the same position. Here each field of the hand
is an array with one row per hand (``hands[r, seat, tile]``, ``ends[r, end]``, ...), and
:meth:`HandBatch.play` puts one tile down in every row at once, then runs the forced draws and
passes that follow, as :meth:`HandState.apply_unchecked
<dominoes_env.core.HandState.apply_unchecked>` does. It is a deliberate twin of the core's
layout and turn rules (like the JAX game, :mod:`dominoes_env.jax`), held equal to the core by
differential tests over random positions and every rule option (``tests/test_hand_batch.py``);
the scoring rules come from tables the core's own functions fill (:class:`Tables`), and the
hand awards, the match winner and the next leader are the core's functions.

>>> import random
>>> from dominoes_env.core import DealSampler, MatchState
>>> view = MatchState(seed=1).view(0)
>>> deals = [DealSampler.from_view(view).sample(random.Random(i)) for i in range(3)]
>>> batch = HandBatch(view, deals, view.legal[:2])  # 3 deals x 2 first moves: 6 rows
>>> batch.rows, batch.lead.tolist() == [-1] * 6
(6, True)
>>> batch.play(np.arange(6), np.array(view.legal[:2] * 3))
>>> batch.rollout_greedy()
>>> bool((batch.turn < 0).all() | (batch.winner >= 0).all())
True
"""

from __future__ import annotations

import functools
import types

import numpy as np

from dominoes_env.core import (
    POINT_SCALE,
    Result,
    RuleConfig,
    SeatView,
    blocked_award,
    leader_after,
    points_for_count,
    round_to_five,
    tie_rank,
    wins_by_play,
)
from dominoes_env.core.events import BLOCKED, DOMINO
from dominoes_env.core.layout import SPINNER_FIRST, SPINNER_NONE, set_rule_tables

from .deal_batch import Deals, bits_to_bool

__all__ = ["HandBatch", "Tables", "bits_to_bool", "row_argmax", "tables"]

I64 = np.int64


# (numpy's array.any() and all() go through Python wrappers; these C calls are faster)
def _any(mask: np.ndarray) -> bool:
    return np.count_nonzero(mask) > 0


def _all(mask: np.ndarray) -> bool:
    return np.count_nonzero(mask) == mask.size


_any_row = functools.partial(np.logical_or.reduce, axis=1)  # any over the last axis, per row
_LEFT_RIGHT = np.array([True, True, False, False])


class Tables:
    """The per-rules tables a :class:`HandBatch` reads, each filled by the core: the tile set's
    pips, low halves and doubles, which tiles show each value, the greedy order
    (:func:`~dominoes_env.core.tie_rank`), the points of every count
    (:func:`~dominoes_env.core.points_for_count`), the rounding of a domino's pips
    (:func:`~dominoes_env.core.round_to_five`), which scores win on the spot
    (:func:`~dominoes_env.core.wins_by_play`) and who leads after a domino or a block
    (:func:`~dominoes_env.core.leader_after`). Get the shared instance with :func:`tables`."""

    def __init__(self, rules: RuleConfig):
        ts = rules.tiles
        self.rules = rules
        self.n, self.T, self.V, self.S = (rules.num_players, ts.num_tiles, rules.max_pip + 1,
                                          rules.num_sides)
        layout = types.SimpleNamespace()
        set_rule_tables(layout, rules)
        self.pips = np.array(layout.tile_pips, I64)
        self.low = np.array(layout.tile_low, I64)
        self.dbl = np.array(layout.tile_double, bool)
        self.spinner_mode, self.cross_now = layout.spinner_mode, layout.cross_now
        #: suit[v, t]: tile t shows value v; row V (read as suit[-1]) is the empty end's: none
        self.suit = np.zeros((self.V + 1, self.T), bool)
        for v in range(self.V):
            self.suit[v] = [ts.suit_mask[v] >> t & 1 for t in range(self.T)]
        #: greedy key of each code without its points
        self.rank = np.array(tie_rank(rules.max_pip), I64)
        self.point_scale = POINT_SCALE
        top_count = 8 * rules.max_pip  # four ends, each at most a double of the top value
        self.points = np.array([points_for_count(c) for c in range(top_count + 1)], I64)
        all_pips = int(self.pips.sum())
        self.round5 = np.array([round_to_five(p) for p in range(all_pips + 1)], I64)
        #: wins_by_play at every score a match can reach (one hand's points on top of a score
        #: below the target); higher scores read the last entry
        top_score = rules.target_score + top_count * self.T + self.round5[-1]
        self.wins = np.array([wins_by_play(s, rules.target_score, rules.win_check)
                              for s in range(top_score + 1)], bool)
        self.side_of = np.array([rules.side_of(s) for s in range(self.n)], I64)
        #: value_bit[v]: bit v (a value in a bitmask of values); [V]: no value, 0
        self.value_bit = np.append(1 << np.arange(self.V, dtype=I64), 0)
        #: values_of[t]: the tile's two values, a double's second as V + 1 (a spare column)
        high = self.pips - self.low
        self.values_of = np.stack([self.low, np.where(self.dbl, self.V + 1, high)], axis=1)
        #: tile_values[t, v]: 1 where tile t shows v (columns V and V + 1 stay 0)
        self.tile_values = np.zeros((self.T, self.V + 2), I64)
        self.tile_values[:, :self.V] = self.suit[:self.V].T
        #: foe[s, s2]: seats s and s2 are on different sides (a domino scores the foes' pips)
        self.foe = self.side_of[:, None] != self.side_of[None, :]
        self.seat_side = np.eye(self.S, dtype=I64)[self.side_of]  # [seat, side] one-hot
        leader = 0  # leader_after reads the hand's leader only under "rotate": per row below
        #: next_leader[k] for a hand that ended as domino by seat k (k < n) or blocked (k = n),
        #: led by seat 0; -1 where the next leader is drawn at random
        self.next_leader = np.array([_leader(rules, leader, s) for s in range(self.n + 1)], I64)
        self.rotate = rules.next_leader == "rotate"


def _leader(rules: RuleConfig, leader: int, ended: int) -> int:
    result = Result(DOMINO, ended) if ended < rules.num_players else Result(BLOCKED, None)
    after = leader_after(types.SimpleNamespace(rules=rules, leader=leader, result=result))
    return -1 if after is None else after


@functools.lru_cache(maxsize=16)
def tables(rules: RuleConfig) -> Tables:
    """The (cached) :class:`Tables` of ``rules``."""
    return Tables(rules)


class HandBatch:
    """``len(deals) * len(firsts)`` copies of ``view``'s position: row ``d * len(firsts) + i``
    holds deal ``d`` (``deals``: a :class:`~agents.deal_batch.Deals`, or a list of ``(hands,
    boneyard)`` as :class:`~dominoes_env.core.DealSampler` draws them) and is
    meant to start with move ``firsts[i]`` (the caller plays it, :meth:`play`). ``scores``: the
    match scores by side (default the view's).

    Fields (one row per hand; read them, never assign them): ``hands[r, seat, tile]``,
    ``sizes[r, seat]`` (tiles in each hand),
    ``played[r, tile]``, ``bone[r, k]`` (the boneyard in draw order) with ``drawn[r]`` drawn and
    :attr:`limit` drawable in all, ``lead``, ``lead_pips``, ``ends[r, e]``, ``contrib``, ``arm``,
    ``spinner``, ``spinner_free[r, 2]``, ``spinner_sides``, ``cross_open``, ``count``, ``turn``
    (-1 once the hand is over), ``known_lacks[r, seat]`` (a bitmask of values, as the core's),
    ``outer_double[r, e]`` (the outer tile of the end is a double: what the observation's
    ``end_double`` block shows), ``gains[r, side]`` (points scored by play since the batch was
    built), ``winner`` (the side a play took to the match target under ``win_check=
    "immediate"``, or -1), ``ended[r]`` (-1 while the hand runs, the seat that went out, or
    ``n`` after a block) and the hand's award, ``award_side[r]`` (-1: none) and
    ``award_points[r]``."""

    def __init__(self, view: SeatView, deals, firsts, end_double=None):
        tb = self.tb = tables(view.rules)
        n, T = tb.n, tb.T
        D, M = len(deals), len(firsts)
        R = self.rows = D * M
        if not isinstance(deals, Deals):
            deals = Deals.from_list(deals, T)
        self.hands = np.repeat(deals.hands, M, axis=0)
        self.sizes = self.hands.sum(axis=2)
        self._seat_hands = self.hands.reshape(R * n, T)  # row r * n + seat: a view
        #: [(r * n + seat) * (V + 2) + v]: the seat's tiles showing value v (v = V: none, 0;
        #: V + 1: where a double's second half is counted, never read)
        self._held = (self._seat_hands.astype(I64) @ tb.tile_values).ravel()
        self.bone = np.repeat(deals.bone, M, axis=0)
        self.drawn = np.zeros(R, I64)
        self.limit = view.drawable
        self.played = np.repeat(bits_to_bool([view.played], T), R, axis=0)

        def full(value, dtype=I64):
            return np.tile(np.asarray(value, dtype), (R, 1)) if np.ndim(value) else np.full(
                R, value, dtype)

        self.lead, self.lead_pips = full(view.lead), full(view.lead_pips)
        self.ends, self.contrib, self.arm = full(view.ends), full(view.contrib), full(view.arm)
        self.spinner, self.spinner_sides = full(view.spinner), full(view.spinner_sides)
        self.spinner_free = full(view.spinner_free, bool)
        self.cross_open = full(view.cross_open, bool)
        self.count, self.turn = full(view.count), full(view.turn)
        self.known_lacks = full(view.known_lacks)
        self.leader = view.leader
        if end_double is None:
            end_double = self.view_end_double(view)
        self.outer_double = full(end_double, bool)
        self.scores = np.asarray(view.scores, I64)
        self.gains = np.zeros((R, tb.S), I64)
        self.winner = np.full(R, -1, I64)
        self.ended = np.full(R, -1, I64)
        self.award_side, self.award_points = np.full(R, -1, I64), np.zeros(R, I64)
        self._r = np.arange(R)

    @staticmethod
    def view_end_double(view: SeatView) -> list[bool]:
        """Whether each end's outer tile is a double in ``view``, as the observation encoder
        reads it (:mod:`dominoes_env.obs.v2`'s ``end_double`` block)."""
        from dominoes_env.obs.v2 import encode_observation, observation_layout

        lay = observation_layout(view.rules)
        return (encode_observation(view)[lay.end_double] > 0).tolist()

    # -- queries ---------------------------------------------------------------------------
    def running(self) -> np.ndarray:
        """The rows still to play: the hand runs and no side has won the match."""
        return ((self.turn >= 0) & (self.winner < 0)).nonzero()[0]

    def moves(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The legal moves of rows ``idx`` (all running) for the seat to play there, one entry
        per move, in row order: ``(which, codes, counts)``: ``which[j]`` the position in
        ``idx`` of the move's row, ``codes[j]`` its action code, ``counts[j]`` the layout's
        count after it (:func:`~dominoes_env.core.count_after`). Every running row has at least
        one."""
        tb = self.tb
        T = tb.T
        # (numpy's take is much faster than fancy indexing of rows)
        hand = self._seat_hands.take(idx * tb.n + self.turn[idx], axis=0)  # [k, T]
        ends = self.ends.take(idx, axis=0)
        led = self.lead[idx] >= 0
        if _all(led):  # every move after the first: the ends that take tiles, -1 elsewhere
            cross = self.cross_open[idx]
            fit = tb.suit.take(np.where(cross[:, None] | _LEFT_RIGHT, ends, -1), axis=0)
            fit &= hand[:, None, :]  # [k, 4, T]: the tile is in hand and shows the end's value
        else:
            fit = tb.suit.take(ends, axis=0)
            fit &= (hand & led[:, None])[:, None, :]
            fit[:, 2:] &= self.cross_open[idx][:, None, None]
            fit[:, 0] |= hand & ~led[:, None]  # a lead is played with end code 0
        flat = fit.reshape(-1).nonzero()[0]
        which, rest = np.divmod(flat, 4 * T)
        e, t = np.divmod(rest, T)
        codes = t * 4 + e
        # count_after (dominoes_env.core.scoring), for every legal move at once: per row and
        # end, the count less that end's contribution, plus what the tile adds there
        f = which * 4 + e
        pips = tb.pips.take(t)
        other = pips - ends.ravel().take(f)
        new = np.where(tb.dbl.take(t), other + other, other)
        contrib = self.contrib.take(idx, axis=0)
        arm = self.arm.take(idx, axis=0)
        total = np.add.reduce(contrib, axis=1)
        side_open = (arm[:, 0] > 0) | (arm[:, 1] > 0)
        cross_base = np.where(side_open, total, self.lead_pips[idx] + contrib[:, 2] + contrib[:, 3])
        rest = np.empty_like(contrib)
        rest[:, :2] = total[:, None]
        rest[:, 2:] = cross_base[:, None]
        rest -= contrib
        counts = rest.ravel().take(f) + new
        if not _all(led):
            counts = np.where(led.take(which), counts, pips)
        return which, codes, counts

    def greedy(self, which: np.ndarray, codes: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """The greedy move of each row (:func:`~dominoes_env.core.greedy_best`: the most
        points, ties by the greedy order) among :meth:`moves`'s entries: the entry index of
        each row's choice, in row order."""
        tb = self.tb
        key = tb.points[counts] * tb.point_scale + tb.rank[codes]  # one per code: no ties
        return row_argmax(which, key, unique=True)

    # -- playing ---------------------------------------------------------------------------
    def play(self, idx: np.ndarray, codes: np.ndarray, count: np.ndarray | None = None) -> None:
        """Play action ``codes[k]`` (legal) in row ``idx[k]`` for the seat to play there, add
        its points to that side's gains, mark a side that wins the match on the spot, and run
        the forced draws and passes that follow (or end the hand). ``count``: the counts after
        the codes, when the caller has them from :meth:`moves`."""
        tb = self.tb
        t, e = codes >> 2, codes & 3
        if count is None:
            which, all_codes, counts = self.moves(idx)
            count = counts[all_codes == codes[which]]
        seat = self.turn[idx]
        a, d = tb.pips[t], tb.dbl[t]
        leads = self.lead[idx] < 0
        # the lead (dominoes_env.core.layout.place): low half left; a double is the spinner
        if _any(leads):
            r, tl, al, dl = idx[leads], t[leads], a[leads], d[leads]
            lo = tb.low[tl]
            self.lead[r], self.lead_pips[r] = tl, al
            self.ends[r, 0], self.ends[r, 1] = lo, al - lo
            self.contrib[r, 0] = np.where(dl, al, lo)
            self.contrib[r, 1] = np.where(dl, al, al - lo)
            self.outer_double[r, 0] = self.outer_double[r, 1] = dl
            if tb.spinner_mode != SPINNER_NONE:
                sr = r[dl]
                self.spinner[sr] = tl[dl]
                self.spinner_free[sr] = True
                self.ends[sr, 2] = self.ends[sr, 3] = lo[dl]
                self.cross_open[sr] = tb.cross_now
        if not _any(leads):  # every move but a lead
            r, tr, er, dr, ar = idx, t, e, d, a
        else:
            on = ~leads
            r, tr, er, dr, ar = idx[on], t[on], e[on], d[on], a[on]
        if len(r):
            f = r * 4 + er  # flat indices of [r, er] (put / take: faster than fancy indexing)
            v = self.ends.take(f)
            other = ar - v
            self.ends.put(f, other)
            self.contrib.put(f, np.where(dr, other + other, other))
            self.arm.put(f, self.arm.take(f) + 1)
            self.outer_double.put(f, dr)
            side = er < 2
            fs = r * 2 + np.minimum(er, 1)
            free = side & self.spinner_free.take(fs)
            if _any(free):
                fr = r[free]
                self.spinner_free.put(fs[free], False)
                self.spinner_sides[fr] += 1
                self.cross_open[fr] |= self.spinner_sides[fr] == 2
            if tb.spinner_mode == SPINNER_FIRST:
                new = side & ~free & dr & (self.spinner[r] < 0)
                if _any(new):
                    nr = r[new]
                    self.spinner[nr] = tr[new]
                    self.spinner_sides[nr] = 1
                    self.spinner_free[nr, er[new]] = True
                    self.ends[nr, 2] = self.ends[nr, 3] = v[new]
                    self.cross_open[nr] = tb.cross_now
        self.count[idx] = count
        rs = idx * tb.n + seat
        self._seat_hands.ravel().put(rs * tb.T + t, False)
        held = (rs * (tb.V + 2))[:, None] + tb.values_of.take(t, axis=0)  # [k, 2]
        self._held.put(held, self._held.take(held) - 1)
        self.played.ravel().put(idx * tb.T + t, True)
        side = tb.side_of.take(seat)
        g = idx * tb.S + side
        gains = self.gains.take(g) + tb.points.take(count)
        self.gains.put(g, gains)
        won = tb.wins.take(np.minimum(self.scores.take(side) + gains, len(tb.wins) - 1))
        if _any(won):
            self.winner[idx[won]] = side[won]
        left = self.sizes.take(rs) - 1
        self.sizes.put(rs, left)
        out = left == 0
        if _any(out):
            self._end_domino(idx[out], seat[out])
        if not _all(out):
            self._advance(idx[~out], seat[~out])

    def _end_domino(self, r: np.ndarray, seat: np.ndarray) -> None:
        tb = self.tb
        pips = self.hands[r] @ tb.pips  # [k, n]
        foes = (pips * tb.foe[seat]).sum(axis=1)
        self._award(r, tb.side_of[seat], tb.round5[foes])
        self.ended[r] = seat

    def _advance(self, r: np.ndarray, seat: np.ndarray) -> None:
        """Move the turn on from ``seat`` in rows ``r``: the next seat that can play, drawing
        for each seat that cannot while the boneyard allows, passing when it still cannot
        (``HandState._advance``); ``n`` passes block the hand."""
        tb = self.tb
        n, T = tb.n, tb.T
        V = tb.V
        open_ends = np.where(self.cross_open[r][:, None] | _LEFT_RIGHT,
                             self.ends.take(r, axis=0), V)  # V: the end takes no tile
        s = (seat + 1) % n
        # the next seat holds a tile showing an open value
        can = _any_row(self._held.take(((r * n + s) * (V + 2))[:, None] + open_ends))
        self.turn[r] = s  # the usual case: the next seat plays
        if _all(can):
            return
        k = (~can).nonzero()[0]  # the rest draw or pass (positions in r)
        open_ends = open_ends.take(k, axis=0)
        bits = tb.value_bit.take(open_ends)  # the open values as a bitmask (known_lacks)
        values = bits[:, 0] | bits[:, 1] | bits[:, 2] | bits[:, 3]
        fit = tb.suit.take(open_ends, axis=0)
        fits = fit[:, 0] | fit[:, 1] | fit[:, 2] | fit[:, 3]  # [k, T]: tiles that play now
        r, seat = r[k], seat[k]
        B = self.bone.shape[1]
        draws = B > 0 and self.limit > 0
        if draws:
            bone = self.bone.take(r, axis=0)
            bone_fits = fits.ravel().take(np.arange(len(r))[:, None] * T + bone)  # [k, B]
            pos = np.arange(B)
        k = np.arange(len(r))
        for step in range(1, n + 1):
            s = (seat[k] + step) % n
            rows = r[k]
            rs = rows * n + s
            if step > 1:
                can = _any_row(self._seat_hands.take(rs, axis=0) & fits.take(k, axis=0))
                self.turn[rows[can]] = s[can]
                k, s, rows, rs = k[~can], s[~can], rows[~can], rs[~can]
                if not len(k):
                    return
            drawn = self.drawn[rows]
            drew_fit = np.zeros(len(k), bool)
            new = np.maximum(drawn, self.limit)
            if draws:
                after = pos >= drawn[:, None]
                cand = bone_fits.take(k, axis=0) & after & (pos < self.limit)
                drew_fit = _any_row(cand)
                new = np.where(drew_fit, cand.argmax(axis=1) + 1, new)
                kk, cols = (after & (pos < new[:, None])).nonzero()
                tiles = bone.ravel().take(k[kk] * B + cols)
                self._seat_hands.ravel().put(rs[kk] * T + tiles, True)
                held = (rs[kk] * (V + 2))[:, None] + tb.values_of.take(tiles, axis=0)
                np.add.at(self._held, held.ravel(), 1)
                self.drawn[rows] = new
                self.sizes.put(rs, self.sizes.take(rs) + new - drawn)
            drew = new - drawn
            lacks = self.known_lacks.take(rs)
            vals = values[k]
            # a seat that drew more than one tile lacks exactly these values now
            self.known_lacks.put(rs, np.where(
                drew_fit, np.where(drew > 1, vals, lacks | vals),
                np.where(drew > 0, vals, lacks | vals)))
            self.turn[rows[drew_fit]] = s[drew_fit]
            k = k[~drew_fit]
            if not len(k):
                return
        self._end_blocked(r[k])

    def _end_blocked(self, r: np.ndarray) -> None:
        tb = self.tb
        side_pips = (self.hands[r] @ tb.pips) @ tb.seat_side  # [k, S]
        side, points = np.full(len(r), -1, I64), np.zeros(len(r), I64)
        for j, row in enumerate(side_pips.tolist()):
            award = blocked_award(row, tb.rules.blocked_award)
            if award is not None:
                side[j], points[j] = award
        self._award(r, side, points)
        self.ended[r] = tb.n

    def _award(self, r: np.ndarray, side: np.ndarray, points: np.ndarray) -> None:
        """End the hand in rows ``r`` with the award ``points`` to ``side`` (-1: none)."""
        self.turn[r] = -1
        self.award_side[r], self.award_points[r] = side, points

    def next_leader(self) -> np.ndarray:
        """Per finished row, the seat that leads the next hand (-1: drawn at random), as
        :func:`~dominoes_env.core.leader_after` says."""
        tb = self.tb
        if tb.rotate:
            return np.full(self.rows, (self.leader + 1) % tb.n, I64)
        return tb.next_leader[np.maximum(self.ended, 0)]

    def rollout_greedy(self, epsilon: float = 0.0, rng: np.random.Generator | None = None
                       ) -> None:
        """Finish every running row with the greedy scorer for every seat (with ``epsilon``
        > 0: a uniformly random legal move instead, with that chance, drawn from ``rng``)."""
        while True:
            idx = self.running()
            if not len(idx):
                return
            which, codes, counts = self.moves(idx)
            pick = self.greedy(which, codes, counts)
            if epsilon > 0:
                explore = rng.random(len(idx)) < epsilon
                if _any(explore):
                    pick = np.where(explore, row_argmax(which, rng.random(len(which))), pick)
            self.play(idx, codes[pick], counts[pick])


def row_argmax(which: np.ndarray, key: np.ndarray, unique: bool = False) -> np.ndarray:
    """Per row of the sorted row numbers ``which`` (``0 .. k-1``, every row present), the index
    of its largest ``key`` (the first of equals; ``unique``: no two keys of a row are equal)."""
    starts = which.searchsorted(np.arange(which[-1] + 1))
    top = np.maximum.reduceat(key, starts)
    hits = np.flatnonzero(key == top[which])
    if unique:
        return hits
    return hits[np.concatenate(([True], which[hits[1:]] != which[hits[:-1]]))]
