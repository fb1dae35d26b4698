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
next leader comes from the core's function; a blocked hand's award (the core's
``blocked_award``) and the match winner (``match_winner``, in
:meth:`agents.search.GreedyRollout.batch_values`) are written over arrays, held equal by the
same tests.

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
    count_after,
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


def _any_row(mask: np.ndarray) -> np.ndarray:
    """Any over the last axis of a 2-d ``mask``, per row (a logical matrix product: numpy's
    reductions over a short last axis are several times slower)."""
    return mask @ _ones(mask.shape[1])


@functools.lru_cache(maxsize=64)
def _ones(width: int) -> np.ndarray:
    return np.ones(width, bool)


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
        #: new_count[v * T + t]: what tile t adds to the count on an end showing v (the half
        #: it leaves out, twice for a double; meaningless where t does not show v)
        twice = np.where(self.dbl, 2, 1)
        self.new_count = ((self.pips[None, :] - np.arange(self.V + 1)[:, None])
                          * twice).ravel()
        self.dbl_shift = self.dbl.astype(I64)  # a tile's half counts twice: << 1
        #: seat_after[k, s]: the seat k places after s
        self.seat_after = (np.arange(self.n)[None, :] + np.arange(self.n + 1)[:, None]) % self.n
        self.can_win = bool(self.wins.any())
        self.ones4, self.ones_n, self.ones_S = np.ones(4, I64), np.ones(self.n, I64), np.ones(
            self.S, I64)
        self.point_key = self.points * POINT_SCALE  # the greedy key's points part, by count
        #: tile_value_mask[t]: the values tile t shows, as a bitmask
        self.tile_value_mask = (1 << self.low) | (1 << (self.pips - self.low))


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
    ``award_points[r]``. ``observe=False``: the fields only the observation reads
    (:mod:`agents.batch_obs`), ``outer_double``, ``played``, ``count`` and ``known_lacks``, are
    not kept (None): greedy rollouts and their values need none of them."""

    def __init__(self, view: SeatView, deals, firsts, end_double=None, observe: bool = True):
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
        #: V + 1: where a double's second half is counted, never read); per deal, then repeated
        held = deals.hands.reshape(D * n, T).astype(I64) @ tb.tile_values
        self._held = np.repeat(held.reshape(D, -1), M, axis=0).ravel()
        self.bone = np.repeat(deals.bone, M, axis=0)
        self._bone_values = tb.tile_value_mask.take(self.bone)  # each one's values, a bitmask
        self.drawn = np.zeros(R, I64)
        self.limit = view.drawable
        self.played = (np.repeat(bits_to_bool([view.played], T), R, axis=0) if observe
                       else None)

        def full(value, dtype=I64):
            value = np.asarray(value, dtype)
            out = np.empty((R, *value.shape), dtype)
            out[...] = value
            return out

        self.lead, self.lead_pips = full(view.lead), full(view.lead_pips)
        self.ends, self.contrib, self.arm = full(view.ends), full(view.contrib), full(view.arm)
        self.spinner, self.spinner_sides = full(view.spinner), full(view.spinner_sides)
        self.spinner_free = full(view.spinner_free, bool)
        self.cross_open = full(view.cross_open, bool)
        self.turn = full(view.turn)
        self.count = full(view.count) if observe else None
        self.known_lacks = full(view.known_lacks) if observe else None
        self.leader = view.leader
        self.outer_double = None
        if observe:
            if end_double is None:
                end_double = self.view_end_double(view)
            self.outer_double = full(end_double, bool)
        self.scores = np.asarray(view.scores, I64)
        self.gains = np.zeros((R, tb.S), I64)
        self.winner = np.full(R, -1, I64)
        self.ended = np.full(R, -1, I64)
        self.award_side, self.award_points = np.full(R, -1, I64), np.zeros(R, I64)
        self.firsts = np.asarray(firsts, I64)
        ts = view.rules.tiles
        #: the count after each first move, from the view's layout (the same in every deal)
        self.first_counts = np.array([count_after(c, view.lead, view.lead_pips, view.ends,
                                                  view.contrib, view.arm, ts.pips, ts.is_double)
                                      for c in firsts], I64)
        # flat views of the fields play() writes by flat index (put / take: faster than fancy
        # indexing), and fields kept for the hot paths
        self._hands_flat = self.hands.reshape(-1)
        self._played_flat = None if self.played is None else self.played.reshape(-1)
        self._gains_flat, self._sizes_flat = self.gains.reshape(-1), self.sizes.reshape(-1)
        #: the ends that take a tile: their value, V where none (before the lead, a closed
        #: cross)
        self.open_ends = np.where(self.ends >= 0, self.ends, tb.V)
        self.open_ends[:, 2:] = np.where(self.cross_open[:, None], self.open_ends[:, 2:], tb.V)
        if view.lead < 0:
            self.open_ends[:] = tb.V
        #: spinner_free over all four ends (up / down never), spinner_free a view of it
        self._free4 = np.zeros((R, 4), bool)
        self._free4[:, :2] = self.spinner_free
        self.spinner_free = self._free4[:, :2]
        #: what the up / down ends' count lacks against the sum of the four contributions:
        #: a spinner lead's second half while neither long side is covered, else 0
        self._cross_less = self.contrib[:, 0] + self.contrib[:, 1] - self.lead_pips
        self._cross_less[(self.lead < 0) | (self.arm[:, 0] > 0) | (self.arm[:, 1] > 0)] = 0
        self._cl_any = _any(self._cross_less)
        self._unled = R if view.lead < 0 else 0  # rows not led yet

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
        if not self.tb.can_win:  # no play wins on the spot
            return (self.turn >= 0).nonzero()[0]
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
        hand = self._seat_hands.take(idx * tb.n + self.turn.take(idx), axis=0)  # [k, T]
        if not self._unled:  # every move after the first: one pass over the open ends
            open_ends = self.open_ends.take(idx, axis=0)
            fit = tb.suit.take(open_ends, axis=0)
            fit &= hand[:, None, :]  # [k, 4, T]: the tile is in hand and shows the end's value
            f, t = np.divmod(fit.reshape(-1).nonzero()[0], T)  # f: row * 4 + end
            e = f & 3
            # count_after (dominoes_env.core.scoring): the count less the end's contribution
            # (and, on up / down, what they lack: _cross_less), plus what the tile adds there
            contrib = self.contrib.take(idx, axis=0)
            rest = (contrib @ tb.ones4)[:, None] - contrib
            if self._cl_any:
                rest[:, 2:] -= self._cross_less.take(idx)[:, None]
            counts = rest.ravel().take(f) + tb.new_count.take(open_ends.ravel().take(f) * T + t)
            return f >> 2, (t << 2) | e, counts
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
        key = tb.point_key.take(counts) + tb.rank.take(codes)  # one per code: no ties
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
        seat = self.turn.take(idx)
        r, tr, er = idx, t, e
        if self._unled:
            leads = self.lead.take(idx) < 0
            if _any(leads):
                self._lead(idx[leads], t[leads])
                on = ~leads
                r, tr, er = idx[on], t[on], e[on]
        if len(r):
            self._place(r, tr, er)
        if observe := self.count is not None:
            self.count.put(idx, count)
        rs = idx * tb.n + seat
        self._hands_flat.put(rs * tb.T + t, False)
        held = (rs * (tb.V + 2))[:, None] + tb.values_of.take(t, axis=0)  # [k, 2]
        self._held.put(held, self._held.take(held) - 1)
        if observe:
            self._played_flat.put(idx * tb.T + t, True)
        side = tb.side_of.take(seat)
        g = idx * tb.S + side
        gains = self._gains_flat.take(g) + tb.points.take(count)
        self._gains_flat.put(g, gains)
        if tb.can_win:
            won = tb.wins.take(np.minimum(self.scores.take(side) + gains, len(tb.wins) - 1))
            if _any(won):
                self.winner[idx[won]] = side[won]
        left = self._sizes_flat.take(rs) - 1
        self._sizes_flat.put(rs, left)
        out = left == 0
        if not _any(out):
            self._advance(idx, seat)
            return
        self._end_domino(idx[out], seat[out])
        if not _all(out):
            self._advance(idx[~out], seat[~out])

    def play_firsts(self) -> None:
        """Play in every row the move it was built for (``firsts[i]`` in row ``d *
        len(firsts) + i``), as :meth:`play` would."""
        D = self.rows // len(self.firsts)
        self.play(np.arange(self.rows), np.tile(self.firsts, D), np.tile(self.first_counts, D))

    def _lead(self, r: np.ndarray, t: np.ndarray) -> None:
        """The lead in rows ``r`` (:func:`dominoes_env.core.layout.place`): tile ``t``, its low
        half left; a double is the spinner (unless the rules have none)."""
        tb = self.tb
        a, d, lo = tb.pips[t], tb.dbl[t], tb.low[t]
        self._unled -= len(r)
        self.lead[r], self.lead_pips[r] = t, a
        self.ends[r, 0], self.ends[r, 1] = lo, a - lo
        self.open_ends[r, 0], self.open_ends[r, 1] = lo, a - lo
        self.contrib[r, 0] = np.where(d, a, lo)
        self.contrib[r, 1] = np.where(d, a, a - lo)
        self._cross_less[r] = np.where(d, a, 0)
        self._cl_any = self._cl_any or _any(d)
        if self.outer_double is not None:
            self.outer_double[r, 0] = self.outer_double[r, 1] = d
        if tb.spinner_mode != SPINNER_NONE:
            sr = r[d]
            self.spinner[sr] = t[d]
            self._free4[sr, :2] = True
            self.ends[sr, 2] = self.ends[sr, 3] = lo[d]
            self.cross_open[sr] = tb.cross_now
            if tb.cross_now:
                self.open_ends[sr, 2] = self.open_ends[sr, 3] = lo[d]

    def _place(self, r: np.ndarray, t: np.ndarray, e: np.ndarray) -> None:
        """Tile ``t`` on end ``e`` of rows ``r`` (all led; :func:`dominoes_env.core.layout.place`):
        the end's value, contribution and arm, the spinner's sides and cross."""
        tb = self.tb
        f = r * 4 + e  # flat indices of [r, e]
        other = tb.pips.take(t) - self.ends.take(f)
        self.ends.put(f, other)
        self.open_ends.put(f, other)
        self.contrib.put(f, other << tb.dbl_shift.take(t))
        self.arm.put(f, self.arm.take(f) + 1)
        d = tb.dbl.take(t)
        if self.outer_double is not None:
            self.outer_double.put(f, d)
        free = self._free4.take(f)  # a long side of the spinner, covered now
        if _any(free):
            fr = r[free]
            self._free4.put(f[free], False)
            self.spinner_sides[fr] += 1
            opened = fr[self.spinner_sides[fr] == 2]
            self.cross_open[opened] = True
            self.open_ends[opened, 2:] = self.ends[opened, 2:]
        side = e < 2
        if self._cl_any:
            self._cross_less.put(r[side], 0)
            self._cl_any = _any(self._cross_less)
        if tb.spinner_mode == SPINNER_FIRST:
            new = d & side
            if _any(new):
                new &= self.spinner.take(r) < 0  # the first double on a long side
                if _any(new):
                    nr, v = r[new], (tb.pips.take(t) - other)[new]
                    self.spinner[nr] = t[new]
                    self.spinner_sides[nr] = 1
                    self._free4.put(f[new], True)
                    self.ends[nr, 2] = self.ends[nr, 3] = v
                    self.cross_open[nr] = tb.cross_now
                    if tb.cross_now:
                        self.open_ends[nr, 2] = self.open_ends[nr, 3] = v

    def _end_domino(self, r: np.ndarray, seat: np.ndarray) -> None:
        tb = self.tb
        pips = self.hands.take(r, axis=0) @ tb.pips  # [k, n]
        foes = (pips * tb.foe.take(seat, axis=0)) @ tb.ones_n  # (a short sum: a product)
        self._award(r, tb.side_of.take(seat), tb.round5.take(foes))
        self.ended[r] = seat

    def _advance(self, r: np.ndarray, seat: np.ndarray) -> None:
        """Move the turn on from ``seat`` in rows ``r``: the next seat that can play, drawing
        for each seat that cannot while the boneyard allows, passing when it still cannot
        (``HandState._advance``); ``n`` passes block the hand."""
        tb = self.tb
        n, T, V = tb.n, tb.T, tb.V
        open_ends = self.open_ends.take(r, axis=0)  # V: the end takes no tile
        s = tb.seat_after[1].take(seat)
        # the next seat holds a tile showing an open value
        can = self._held.take(((r * n + s) * (V + 2))[:, None] + open_ends) @ tb.ones4 > 0
        self.turn.put(r, s)  # the usual case: the next seat plays
        if _all(can):
            return
        k = (~can).nonzero()[0]  # the rest draw or pass (positions in r)
        open_ends = open_ends.take(k, axis=0)
        # the open values as a bitmask (known_lacks)
        bits = tb.value_bit.take(open_ends)
        values = bits[:, 0] | bits[:, 1] | bits[:, 2] | bits[:, 3]
        r, seat = r.take(k), seat.take(k)
        B = self.bone.shape[1]
        draws = B > 0 and self.limit > 0
        if draws:
            bone = self.bone.take(r, axis=0)
            bone_fits = (self._bone_values.take(r, axis=0) & values[:, None]) != 0  # [k, B]
            if self.limit < B:
                bone_fits &= np.arange(B) < self.limit
            pos = np.arange(B)
        k = np.arange(len(r))
        s, rows, vals = tb.seat_after[1].take(seat), r, values
        for step in range(1, n + 1):
            if step > 1:
                s = tb.seat_after[step].take(seat.take(k))
                rows = r.take(k)
                ends = open_ends.take(k, axis=0)
                can = self._held.take(((rows * n + s) * (V + 2))[:, None] + ends) @ tb.ones4 > 0
                if _any(can):
                    self.turn.put(rows[can], s[can])
                    cant = ~can
                    k, s, rows = k[cant], s[cant], rows[cant]
                    if not len(k):
                        return
                vals = values.take(k)
            rs = rows * n + s
            drawn = self.drawn.take(rows)
            if draws:
                after = pos >= drawn[:, None]
                cand = after & (bone_fits if step == 1 else bone_fits.take(k, axis=0))
                drew_fit = _any_row(cand)
                new = np.where(drew_fit, cand.argmax(axis=1) + 1, self.limit)  # drawn <= limit
                drew = new - drawn
                kk, cols = np.divmod((after & (pos < new[:, None])).ravel().nonzero()[0], B)
                tiles = bone.ravel().take((kk if step == 1 else k.take(kk)) * B + cols)
                rk = rs.take(kk)
                self._hands_flat.put(rk * T + tiles, True)
                held = (rk * (V + 2))[:, None] + tb.values_of.take(tiles, axis=0)
                np.add.at(self._held, held.ravel(), 1)
                self.drawn.put(rows, new)
                self._sizes_flat.put(rs, self._sizes_flat.take(rs) + drew)
            else:
                drew_fit = np.zeros(len(k), bool)
                drew = np.maximum(drawn, self.limit) - drawn
            # a seat that drew more than one tile, or drew and still cannot play, lacks
            # exactly these values now; otherwise it lacks them too
            if self.known_lacks is not None:
                self.known_lacks.put(rs, np.where(drew > drew_fit, vals,
                                                  self.known_lacks.take(rs) | vals))
            if _any(drew_fit):
                self.turn.put(rows[drew_fit], s[drew_fit])
                k = k[~drew_fit]
                if not len(k):
                    return
        self._end_blocked(r.take(k))

    def _end_blocked(self, r: np.ndarray) -> None:
        tb = self.tb
        side_pips = (self.hands.take(r, axis=0) @ tb.pips) @ tb.seat_side  # [k, S]
        # blocked_award (dominoes_env.core) over the rows: the side with the fewest pips, alone
        # there, scores the others' pips (or, under "difference", what they hold above it)
        low = side_pips.min(axis=1)
        alone = (side_pips == low[:, None]) @ tb.ones_S == 1
        total = side_pips @ tb.ones_S
        others = total - low if tb.rules.blocked_award != "difference" else total - tb.S * low
        side = np.where(alone, side_pips.argmin(axis=1), -1)
        points = np.where(alone, tb.round5.take(others), 0)
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
            self.play(idx, codes.take(pick), counts.take(pick))


def row_argmax(which: np.ndarray, key: np.ndarray, unique: bool = False) -> np.ndarray:
    """Per row of the sorted row numbers ``which`` (``0 .. k-1``, every row present), the index
    of its largest ``key`` (the first of equals; ``unique``: no two keys of a row are equal,
    and integer keys are below ``2**40``)."""
    new_row = np.empty(len(which), bool)  # where each row's entries start
    new_row[0] = True
    np.not_equal(which[1:], which[:-1], out=new_row[1:])
    starts = new_row.nonzero()[0]
    if unique and key.dtype.kind == "i":  # the index rides in the low bits of the key
        bits = len(key).bit_length()
        return np.maximum.reduceat((key << bits) | np.arange(len(key)), starts) & (
            (1 << bits) - 1)
    top = np.maximum.reduceat(key, starts)
    hits = np.flatnonzero(key == top[which])
    if unique:
        return hits
    return hits[np.concatenate(([True], which[hits[1:]] != which[hits[:-1]]))]
