"""The rules of Straight Dominoes as pure JAX functions on fixed-shape arrays.

This is the twin of :mod:`dominoes_env.core` (``hand.py`` / ``match.py``), written for ``jit``
and ``vmap``: no Python control flow on traced values, int32, uint32 and bool arrays only. A
set of tiles (a hand, the layout's tiles) is a bit mask, as in the core, in ``W = ceil(T / 32)``
uint32 words (:func:`tile_bit`, :func:`rows_of`, :func:`words_of`: one word for double-six,
three for double-twelve, since JAX runs without 64-bit integers), so a hand's size or pips are
population counts and the state a step selects and copies is a few words per seat. Each rule
lives in one function here, named after the core method it mirrors:

=====================  =========================================================================
``deal_hand``          the deal: hands, boneyard order, leader (``HandState.__init__``)
``legal_mask``         legal action codes (``HandState.legal_actions``)
``count_after_all``    the layout count after every action code (``scoring.count_after``)
``place_tile``         a play on the layout: ends, spinner, count (``core.layout.place``)
``advance``            forced draws and passes to the next seat that can play (``_advance``)
``end_domino``         the domino award (``_end_domino``)
``end_blocked``        the blocked award (``_end_blocked`` / ``scoring.blocked_award``)
``settle``             match scores, winner and the next hand (``MatchState._settle``)
=====================  =========================================================================

Differential tests (``tests/jax/``) hold every function equal to the core on every
rule option.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from dominoes_env.core import SCORE_UNIT

from . import rng
from .tables import SPINNER_FIRST, SPINNER_NONE, Tables

I32 = jnp.int32

#: hand results (``HandState.result``): none yet, ("domino", seat), ("blocked", None)
RESULT_NONE, RESULT_DOMINO, RESULT_BLOCKED = 0, 1, 2


class Deal(NamedTuple):
    """A deal: ``order`` is a permutation of the tile indices; seat ``s`` holds
    ``order[s*h:(s+1)*h]`` and the boneyard is ``order[n*h:]`` in draw order (first drawn
    first). ``leader`` leads the hand when the rules draw the leader at random (the first hand
    of a match, after a blocked hand under ``domino_else_random``)."""

    order: jax.Array  #: int32[T]
    leader: jax.Array  #: int32 scalar
    #: int32[T] or None: each tile's place in ``order`` (its inverse), when already known
    position: jax.Array | None = None


class GameState(NamedTuple):
    """One match in progress: the current hand's layout plus the match scores.

    Fields mirror ``HandState`` / ``MatchState`` (the core's names); ``-1`` means "none".
    """

    hands: jax.Array  #: uint32[n, W]: each seat's tiles, bit masks (:func:`rows_of` unpacks)
    played: jax.Array  #: uint32[W]: tiles in the layout, a bit mask
    bone_pos: jax.Array  #: int32[T]: each tile's place in the boneyard's draw order (first
    #: drawn 0), -1 for the dealt tiles
    drawn: jax.Array  #: tiles drawn from the boneyard so far
    leader: jax.Array
    turn: jax.Array  #: seat to play, -1 once the hand is over
    lead: jax.Array  #: tile index of the lead, -1 before it
    lead_pips: jax.Array
    ends: jax.Array  #: int32[4]: value showing at left, right, up, down (-1: none)
    contrib: jax.Array  #: int32[4]: what each end adds to the count
    arm: jax.Array  #: int32[4]: tiles on each end's arm
    outer_double: jax.Array  #: bool[4]: the end's outer tile is a double (the lead for an
    #: empty left / right arm)
    spinner: jax.Array  #: tile index of the spinner, -1 if none
    spinner_free: jax.Array  #: bool[2]: the spinner is still the outer tile of left / right
    spinner_sides: jax.Array
    cross_open: jax.Array  #: bool: up and down take tiles
    count: jax.Array  #: the layout's count
    known_lacks: jax.Array  #: bool[n, V]: pip values each seat is known not to hold
    result: jax.Array  #: RESULT_NONE / RESULT_DOMINO / RESULT_BLOCKED
    result_seat: jax.Array  #: the seat that dominoed, else -1
    award_side: jax.Array  #: the hand award (``HandState.award``): side or -1, and points
    award_points: jax.Array
    # -- the match
    scores: jax.Array  #: int32[S]: side scores in the match
    hand_number: jax.Array
    winner: jax.Array  #: side that won the match, -1 while it goes on
    # -- what the last play did (kept when it was followed by a new deal)
    last_points: jax.Array  #: its points (award not included)
    ended_result: jax.Array  #: the result of the hand it ended, RESULT_NONE if none
    ended_seat: jax.Array  #: that hand's domino seat, else -1
    ended_award_side: jax.Array  #: that hand's award (``HandState.award``), side -1 if none
    ended_award_points: jax.Array
    added_side: jax.Array  #: the award the match added for it (``MatchState.awards``)
    added_points: jax.Array


def _i(x) -> jax.Array:
    return jnp.asarray(x, dtype=I32)


# Indexing by a traced value is written with one-hot masks, never ``x[i]`` or ``x.at[i]``:
# under ``vmap`` those become gathers and scatters, which XLA's CPU backend runs element by
# element outside the fused loops (measured: the step ran 2-3x slower with them).
def one_hot(i: jax.Array, size: int) -> jax.Array:
    """``bool[size]``: True at ``i`` (nowhere if ``i`` is out of range)."""
    return jnp.arange(size, dtype=I32) == i


def pick(table, i: jax.Array) -> jax.Array:
    """``table[i]`` for a 1-D table (bool, int or float; 0 / False if ``i`` is out of range)."""
    table = jnp.asarray(table)
    hot = one_hot(i, table.shape[0])
    if table.dtype == jnp.bool_:
        return jnp.any(table & hot)
    if table.dtype == jnp.float32:  # summed as bit patterns: see sum_one_float
        return sum_one_float(jnp.where(hot, table, jnp.float32(0)))
    return jnp.sum(jnp.where(hot, table, jnp.zeros((), table.dtype)), dtype=table.dtype)


def sum_one_float(x: jax.Array, axis: int = -1) -> jax.Array:
    """The sum of ``float32`` values along ``axis`` where at most one is not ``+0.0`` (a
    one-hot selection): that value, exactly. Summed as ``int32`` bit patterns, because XLA's
    CPU backend hands float sums to a library call that reads its input from memory, so the
    ``[.., size]`` selection before it is written out in full (measured: a table look-up of the
    observation cost as much as the legal mask)."""
    bits = jax.lax.bitcast_convert_type(x, jnp.int32)
    return jax.lax.bitcast_convert_type(jnp.sum(bits, axis=axis, dtype=jnp.int32), jnp.float32)


def pick_row(matrix: jax.Array, i: jax.Array) -> jax.Array:
    """``matrix[i]`` for a 2-D array (row ``i``)."""
    matrix = jnp.asarray(matrix)
    hot = one_hot(i, matrix.shape[0])[:, None]
    if matrix.dtype == jnp.bool_:
        return jnp.any(matrix & hot, axis=0)
    return jnp.sum(jnp.where(hot, matrix, jnp.zeros((), matrix.dtype)), axis=0,
                   dtype=matrix.dtype)


# -- tile sets as bit masks: tile t is bit t % 32 of word t // 32 (Tables.W words) --------------
_U32 = jnp.uint32


def tile_bit(tb, t: jax.Array) -> jax.Array:
    """``uint32[W]``: the bit mask of tile ``t`` alone."""
    t = jnp.asarray(t, I32)
    word = jnp.arange(tb.W, dtype=I32) == (t >> 5)
    return jnp.where(word, jnp.left_shift(_U32(1), (t & 31).astype(_U32)), _U32(0))


def rows_of(tb, words: jax.Array) -> jax.Array:
    """``bool[..., T]``: the tile sets ``words`` (``uint32[..., W]``) unpacked."""
    return jnp.concatenate([
        (words[..., w : w + 1] >> jnp.arange(min(32, tb.T - 32 * w), dtype=_U32)) & _U32(1)
        for w in range(tb.W)
    ], axis=-1) != 0  # fmt: skip


def _word_sums(tb, rows: jax.Array) -> list[jax.Array]:
    """The ``W`` words of the tile sets ``rows`` (``bool[..., T]``), each ``uint32[...]``: a
    sum of the tiles' bits (distinct powers of two, so the sum is their or)."""
    bits = np.left_shift(np.uint32(1), np.arange(tb.T, dtype=np.uint32) % np.uint32(32))
    word = np.arange(tb.T) // 32
    return [jnp.sum(jnp.where(rows & jnp.asarray(word == w), jnp.asarray(bits), _U32(0)),
                    axis=-1, dtype=_U32) for w in range(tb.W)]  # fmt: skip


def words_of(tb, rows: jax.Array) -> jax.Array:
    """``uint32[..., W]``: the tile sets ``rows`` (``bool[..., T]``) as bit masks. (Inside a
    step, :func:`packed`.)"""
    return jnp.stack(_word_sums(tb, rows), axis=-1)


def packed(tb, rows: list[jax.Array], never: jax.Array) -> list[jax.Array]:
    """:func:`words_of` of each ``bool[T]`` row of ``rows`` (``uint32[W]`` each), the sums
    over the tiles computed in a loop of their own (:func:`materialize`; ``never`` a traced
    False): XLA's CPU backend then runs each sum as a vectorised reduction of its own, where,
    fused into the step's selects, it ran as scalar code (measured: a third of a batch step);
    and a product with a table of bit halves, which converts every entry to float32 first, made
    Pgx's ``auto_reset`` 10% slower (measured)."""
    sums = materialize([_word_sums(tb, row) for row in rows], never)
    return [jnp.stack(words) for words in sums]


def popcount(words: jax.Array) -> jax.Array:
    """``int32[...]``: the tiles in each set ``words`` (``uint32[..., W]``)."""
    return jnp.sum(jax.lax.population_count(words).astype(I32), axis=-1, dtype=I32)


def code_bits(tb, words: jax.Array) -> jax.Array:
    """``bool[4T]``: for each action code, its tile is in the set ``words`` (``uint32[W]``):
    each code's word, then its bit (static per-code tables: see :meth:`Game.per_code`)."""
    cw = np.asarray(tb.code_word)
    word = words[tb.W - 1]
    for w in range(tb.W - 2, -1, -1):
        word = jnp.where(jnp.asarray(cw == w), words[w], word)
    return ((word >> jnp.asarray(tb.code_bit)) & _U32(1)) != 0


#: 2**32 / golden ratio, odd: ``i * _GOLDEN`` is a bijection of the 32-bit words
_GOLDEN = jnp.uint32(0x9E3779B9)


def mix32(x: jax.Array) -> jax.Array:
    """A bijection of ``uint32`` words with full avalanche (MurmurHash3's finalizer, ``fmix32``):
    each input bit flips each output bit with probability about 1/2.

    >>> [hex(int(mix32(jnp.uint32(v)))) for v in (0, 1, 2)]
    ['0x0', '0x514e28b7', '0x30f4c306']
    """
    x = x ^ (x >> 16)
    x = x * jnp.uint32(0x85EBCA6B)
    x = x ^ (x >> 13)
    x = x * jnp.uint32(0xC2B2AE35)
    return x ^ (x >> 16)


def materialize(tree, never: jax.Array):
    """``tree``, computed once, before what reads it.

    XLA fuses cheap producers into their consumers and recomputes them per element of the
    consumer: a hash under a ``T * T`` comparison, or the step's per-game selects under the
    observation's per-action loops (measured: several times the cost). ``lax.optimization_barrier``
    does not stop this on XLA's CPU backend (it is removed before fusion); a loop's result is
    always materialized, so ``tree`` goes through a ``while_loop`` whose body never runs: its
    condition ``never`` must be False, as a traced value XLA cannot fold."""

    def body(carry):  # never runs; it changes the tree so that XLA cannot drop the loop
        tree, flag = carry
        return jax.tree.map(lambda x: jnp.where(flag, ~x if x.dtype == bool else -x, x),
                            tree), ~flag

    return jax.lax.while_loop(lambda c: c[1], body, (tree, never))[0]


def put(array: jax.Array, i: jax.Array, value) -> jax.Array:
    """``array.at[i].set(value)`` along the first axis."""
    hot = one_hot(i, array.shape[0]).reshape((-1,) + (1,) * (array.ndim - 1))
    return jnp.where(hot, value, array)


class Game:
    """The rules of one :class:`~dominoes_env.core.RuleConfig` (its :class:`Tables`) as pure
    functions. Hashable by identity: one ``Game`` per env, reused by every compiled call."""

    def __init__(self, tb: Tables):
        self.tb = tb

    # -- the deal ----------------------------------------------------------------------------
    def random_deal(self, key: jax.Array) -> Deal:
        """A shuffled set and a random leader (the core's ``HandState.deal`` + leader draw, with
        JAX's generator in place of Python's).

        One call of JAX's generator (two 32-bit words, one threefry block) keys a hash of the
        tile indices, :func:`mix32` twice with the second word between; it is a bijection of
        the 32-bit words for each key, so the ``T`` tiles get ``T`` distinct words (no ties)
        and a tile's place in the shuffled order is its word's rank, the count of smaller
        words: ``T * T`` comparisons under ``vmap``, cheaper than a sort or ``T`` words drawn
        from threefry (measured on XLA's CPU backend). One more word of the hash draws the
        leader. (The key holds 64 bits, so it reaches at most 2**64 deals either way;
        ``tests/jax/test_deal.py`` checks the places and the leader look uniform.)"""
        T, n = self.tb.T, self.tb.n
        seed = rng.bits(key, 2)  # jax.random.bits(key, (2,), uint32), fused (see .rng)
        # computed once (an odd word is never 0: a False XLA cannot fold): left alone XLA
        # computes the threefry block again for each of the hash's T + 1 words
        seed = materialize(seed, never=(seed[0] | 1) == 0)
        words = mix32(mix32(seed[0] + jnp.arange(T + 1, dtype=jnp.uint32) * _GOLDEN) ^ seed[1])
        # computed once: left alone XLA recomputes the hash into each of the rank's T * T
        # comparisons (measured: the deal 7 times slower)
        words = materialize(words, never=words[0] == words[1])
        u, idx = words[:T], jnp.arange(T, dtype=I32)
        rank = jnp.sum(u[None, :] < u[:, None], axis=1, dtype=I32)  # a permutation of 0..T-1
        # order[rank[t]] = t (a step uses only rank, so XLA drops this there)
        order = jnp.sum(jnp.where(rank[None, :] == idx[:, None], idx[None, :], 0), axis=1,
                        dtype=I32)  # fmt: skip
        leader = (words[T] % jnp.uint32(n)).astype(I32)
        return Deal(order, leader, rank)

    def dealt_hands(self, where: jax.Array) -> jax.Array:
        """``uint32[n, W]``: the hands of a deal whose tile ``t`` is at place ``where[t]`` of
        its order (seat ``s`` holds places ``s*h .. s*h + h - 1``; compared, not divided: jnp's
        ``//`` is a division and a remainder per tile on XLA's CPU backend). One seat at a time,
        on ``[T]`` rows: from one ``[n, T]`` comparison the step was 8% slower (measured)."""
        h = self.tb.hand_size
        rows = [(where >= s * h) & (where < s * h + h) for s in range(self.tb.n)]
        return jnp.stack(packed(self.tb, rows, never=where[0] < 0))  # a place is never < 0

    def deal_hand(self, state: GameState, deal: Deal, leader: jax.Array) -> GameState:
        """``state`` with a fresh hand dealt from ``deal`` and led by ``leader`` (scores, hand
        number and winner are kept)."""
        tb = self.tb
        h, n = tb.hand_size, tb.n
        idx = jnp.arange(tb.T, dtype=I32)
        where = deal.position  # each tile's place in the deal's order (the inverse permutation)
        if where is None:
            where = jnp.sum(jnp.where(deal.order[:, None] == idx[None, :], idx[:, None], 0),
                            axis=0, dtype=I32)  # fmt: skip
        hands = self.dealt_hands(where)
        bone_pos = jnp.where(where >= n * h, where - n * h, -1)
        return state._replace(
            hands=hands, played=jnp.zeros(tb.W, _U32), bone_pos=bone_pos, drawn=_i(0),
            leader=_i(leader), turn=_i(leader), lead=_i(-1), lead_pips=_i(0),
            ends=jnp.full(4, -1, I32), contrib=jnp.zeros(4, I32), arm=jnp.zeros(4, I32),
            outer_double=jnp.zeros(4, bool), spinner=_i(-1), spinner_free=jnp.zeros(2, bool),
            spinner_sides=_i(0), cross_open=jnp.bool_(False), count=_i(0),
            known_lacks=jnp.zeros((n, tb.V), bool), result=_i(RESULT_NONE),
            result_seat=_i(-1), award_side=_i(-1), award_points=_i(0),
        )  # fmt: skip

    def new_match(self, deal: Deal) -> GameState:
        """A new match whose first hand is ``deal`` (led by ``deal.leader``)."""
        tb = self.tb
        blank = GameState(*([None] * len(GameState._fields)))._replace(
            scores=jnp.zeros(tb.S, I32), hand_number=_i(0), winner=_i(-1), last_points=_i(0),
            ended_result=_i(RESULT_NONE), ended_seat=_i(-1), ended_award_side=_i(-1),
            ended_award_points=_i(0), added_side=_i(-1), added_points=_i(0),
        )  # fmt: skip
        return self.deal_hand(blank, deal, deal.leader)

    # -- legal moves and the count -----------------------------------------------------------
    def per_code(self, per_end: jax.Array) -> jax.Array:
        """``[4T]``: ``per_end[code & 3]`` for each action code, from a per-game ``[4]`` row (four
        selects against the static table of each code's end: on XLA's CPU backend a ``[T, 4]``
        broadcast of the row runs element by element, several times slower)."""
        e = jnp.asarray(self.tb.code_end)
        return jnp.where(e == 0, per_end[0], jnp.where(e == 1, per_end[1], jnp.where(
            e == 2, per_end[2], per_end[3])))  # fmt: skip

    def hand_rows(self, s: GameState) -> jax.Array:
        """``bool[n, T]``: each seat's tiles (the hands unpacked)."""
        return rows_of(self.tb, s.hands)

    def hand_codes(self, s: GameState, seat: jax.Array) -> jax.Array:
        """``bool[4T]``: the action codes of the tiles in ``seat``'s hand (none if ``seat`` is
        out of range)."""
        return code_bits(self.tb, pick_row(s.hands, seat))

    def fits(self, s: GameState) -> jax.Array:
        """``bool[4T]``: for each action code ``t * 4 + e``, tile ``t`` matches end ``e`` and ``e``
        takes tiles now (after the lead)."""
        tb = self.tb
        end = self.per_code(s.ends)
        per_end = (jnp.asarray(tb.code_low) == end) | (jnp.asarray(tb.code_high) == end)
        return per_end & self.per_code(self.open_ends(s))

    @staticmethod
    def open_ends(s: GameState) -> jax.Array:
        """``bool[4]``: the ends that take tiles now (left / right after the lead, up / down
        once the cross is open; ``HandState.open_ends``)."""
        return (jnp.array([True, True, False, False]) | s.cross_open) & (s.ends >= 0)

    def legal_mask(self, s: GameState) -> jax.Array:
        """``bool[4T]`` over action codes ``tile * 4 + end`` for the seat to play: before the
        lead any tile in hand with end 0; after it a tile in hand that matches an open end.
        All False once the hand or the match is over."""
        hand = self.hand_codes(s, s.turn)  # no tiles once turn is -1
        lead_codes = jnp.asarray(self.tb.code_end) == 0
        codes = jnp.where(s.lead < 0, lead_codes, self.fits(s))
        return hand & codes & (s.turn >= 0) & (s.winner < 0)

    def count_after_all(self, s: GameState) -> jax.Array:
        """``int32[4T]``: the layout count after each action code, were it legal (the core's
        ``scoring.count_after``; meaningless for illegal codes)."""
        tb = self.tb
        pips = jnp.asarray(tb.code_pips)
        other = pips - self.per_code(s.ends)
        new = jnp.where(jnp.asarray(tb.code_double), other + other, other)
        after = self.per_code(self.count_without_end(s)) + new
        return jnp.where(s.lead < 0, pips, after)

    @staticmethod
    def count_without_end(s: GameState) -> jax.Array:
        """``int32[4]``: the count a play on end ``e`` adds its new end to (after the lead):
        every end's contribution but ``e``'s, or, on up / down while neither long side has a
        tile, the lead's pips and the cross ends but ``e``'s (``scoring.count_after``)."""
        total = jnp.sum(s.contrib, dtype=I32)
        long_arms = (s.arm[0] > 0) | (s.arm[1] > 0)
        side_end = jnp.array([True, True, False, False])
        base = jnp.where(side_end | long_arms, total, s.lead_pips + s.contrib[2] + s.contrib[3])
        return base - s.contrib

    @staticmethod
    def points_for_count(count: jax.Array) -> jax.Array:
        """Points for a layout count (never negative): the count if it is a positive multiple
        of 5."""
        return jnp.where((count > 0) & (jax.lax.rem(count, _i(SCORE_UNIT)) == 0), count, 0)

    # -- a play ------------------------------------------------------------------------------
    def place_tile(self, s: GameState, code: jax.Array, flip: jax.Array) -> GameState:
        """Put the tile of ``code`` on the layout for the seat to play (no legality check):
        the lead sets left / right (``flip``: high half left) and may become the spinner; a
        later play covers end ``code & 3``, may open the spinner's cross or become the
        spinner; then the count is recomputed (``core.layout.place``)."""
        tb = self.tb
        t, e = code >> 2, code & 3
        pips_t, dbl, low_t = pick(tb.pips, t), pick(tb.is_double, t), pick(tb.low, t)
        seat = s.turn
        tile = tile_bit(tb, t)
        hands = s.hands & ~jnp.where(one_hot(seat, tb.n)[:, None], tile[None, :], _U32(0))
        played = s.played | tile
        spin_ok = tb.spinner_mode != SPINNER_NONE

        # the lead: [lo|hi] shows lo at left and hi at right; a double may be the spinner
        lo = jnp.where(flip, pips_t - low_t, low_t)
        hi = pips_t - lo
        lead_spins = dbl & spin_ok
        cross_value = jnp.where(lead_spins, lo, -1)  # up / down show the spinner's value
        lead_ends = jnp.stack([lo, hi, cross_value, cross_value])
        lead_contrib = jnp.stack([jnp.where(dbl, pips_t, lo), jnp.where(dbl, pips_t, hi), 0, 0])
        lead_state = s._replace(
            lead=t, lead_pips=pips_t, ends=lead_ends, contrib=lead_contrib,
            outer_double=jnp.stack([dbl, dbl, False, False]),
            spinner=jnp.where(lead_spins, t, -1), spinner_free=jnp.stack([lead_spins, lead_spins]),
            cross_open=lead_spins & tb.cross_now, count=pips_t,
        )  # fmt: skip

        # a later play on end e: the tile's other half shows there
        v = pick(s.ends, e)
        other = pips_t - v
        ends = put(s.ends, e, other)
        contrib = put(s.contrib, e, jnp.where(dbl, other + other, other))
        arm = s.arm + one_hot(e, 4)
        outer_double = put(s.outer_double, e, dbl)
        long_side = e < 2
        e2 = jnp.clip(e, 0, 1)
        covers_spinner = long_side & pick(s.spinner_free, e2)
        # the first double on left / right becomes the spinner (spinner="first_double")
        new_spinner = (long_side & ~covers_spinner & dbl & (s.spinner < 0)
                       & (tb.spinner_mode == SPINNER_FIRST))  # fmt: skip
        sides = s.spinner_sides + covers_spinner.astype(I32) + new_spinner.astype(I32)
        free = jnp.where(one_hot(e2, 2) & (covers_spinner | new_spinner), new_spinner,
                         s.spinner_free)  # fmt: skip
        ends = jnp.where(new_spinner & (jnp.arange(4, dtype=I32) >= 2), v, ends)
        cross = (s.cross_open | (covers_spinner & (sides == 2))
                 | (new_spinner & tb.cross_now))  # fmt: skip
        long_arms = (arm[0] > 0) | (arm[1] > 0)
        count = jnp.where(long_arms, jnp.sum(contrib, dtype=I32),
                          s.lead_pips + contrib[2] + contrib[3])
        play_state = s._replace(
            ends=ends, contrib=contrib, arm=arm, outer_double=outer_double,
            spinner=jnp.where(new_spinner, t, s.spinner), spinner_free=free,
            spinner_sides=sides, cross_open=cross, count=count,
        )  # fmt: skip

        out = jax.tree.map(lambda a, b: jnp.where(s.lead < 0, a, b), lead_state, play_state)
        return out._replace(hands=hands, played=played)

    # -- forced draws and passes -------------------------------------------------------------
    def advance(self, s: GameState, seat: jax.Array) -> GameState:
        """Move the turn on from ``seat`` (``HandState._advance``): each next seat that cannot
        play draws from the boneyard until a drawn tile fits (or the drawable part is empty),
        then plays or passes; when every seat in turn has passed the hand is blocked.

        Only the next seat can draw (see below): one vectorised step over the tiles' boneyard
        positions, then a fixed loop of scalar steps over the other seats."""
        tb = self.tb
        n, V = tb.n, tb.V
        ends = s.ends
        open_end = jnp.array([True, True, False, False]) | s.cross_open
        values = jnp.any(
            (ends[:, None] == jnp.arange(V, dtype=I32)[None, :]) & open_end[:, None], axis=0
        )  # bool[V]: the values showing at the open ends
        suit = jnp.asarray(tb.suit)
        fits = jnp.any(suit & values[:, None], axis=0)  # bool[T]: the tiles that can be played
        fit_words = jax.lax.reduce(jnp.where(values[:, None], jnp.asarray(tb.suit_bits), _U32(0)),
                                   _U32(0), jax.lax.bitwise_or, (0,))  # the same, uint32[W]
        pos = s.bone_pos  # per tile; -1: not in the boneyard
        pos_fits = fits & (pos >= 0) & (pos < tb.draw_limit)
        # who holds a tile that fits: each seat's hand as it enters, since a seat draws only
        # on its own visit (the seat that played comes last and nobody draws for it)
        holds_all = jnp.any((s.hands & fit_words[None, :]) != 0, axis=1)  # bool[n]
        drawn = s.drawn
        # Only the first seat after ``seat`` can draw anything: if it cannot play it draws
        # until a drawn tile fits (and plays it), or it empties the drawable part, which leaves
        # nothing for the seats after it. So one draw is computed (one pass over the tiles,
        # not one per seat), then the turn goes to the first seat that can play: the next seat
        # if it holds a fitting tile or drew one, else the first of the others that holds one
        # (the seat that played comes last); every seat passed over must draw (it draws
        # nothing but shows what it lacks). None: the hand is blocked.
        first_seat = (seat + 1) % n
        who1 = one_hot(first_seat, n)  # bool[n]
        holds1 = jnp.any(holds_all & who1)
        cand = pos_fits & (pos >= drawn)
        first = jnp.min(jnp.where(cand, pos, tb.draw_limit))
        # a candidate's place is below the limit (one reduction over the tiles, not two:
        # each is a slow row reduction on XLA's CPU backend, 2% of a batch step)
        hit = first < tb.draw_limit
        stop = jnp.maximum(jnp.where(hit, first + 1, tb.draw_limit), drawn)
        new_drawn = jnp.where(holds1, drawn, stop)
        drew = new_drawn - drawn
        # what the table learns: after several draws that end in a playable tile only these
        # values (the seat may have drawn a value it lacked before); otherwise these values
        # as well, or only these if it drew and still passes
        replace1 = ~holds1 & jnp.where(hit, drew > 1, drew > 0)
        turn = jnp.where(holds1 | hit, first_seat, -1)
        must = who1 & ~holds1
        # the seats after it, in turn order (a Python loop: n is static), while none could play
        for k in range(2, n + 1):
            who = one_hot((seat + k) % n, n)
            active = turn < 0
            holds = jnp.any(holds_all & who)
            must = must | (who & active & ~holds)
            turn = jnp.where(active & holds, (seat + k) % n, turn)
        replace_all = who1 & replace1

        got = (pos >= drawn) & (pos < new_drawn)  # the tiles drawn, all by the next seat
        got_words = packed(tb, [got], never=drawn < 0)[0]
        hands = s.hands | jnp.where(who1[:, None], got_words[None, :], _U32(0))
        learned = jnp.where(replace_all[:, None], values[None, :], s.known_lacks | values[None, :])
        lacks = jnp.where(must[:, None], learned, s.known_lacks)
        found = turn >= 0
        s = s._replace(hands=hands, known_lacks=lacks, drawn=new_drawn, turn=turn)
        return self.end_blocked(s, ~found)

    # -- the end of a hand -------------------------------------------------------------------
    @staticmethod
    def round_to_five(pips: jax.Array) -> jax.Array:
        """Nearest multiple of 5: remainder 1 or 2 down, 3 or 4 up."""
        return (pips + SCORE_UNIT // 2) // SCORE_UNIT * SCORE_UNIT

    def side_pips(self, s: GameState) -> jax.Array:
        """``int32[S]``: pips left in each side's hands."""
        tb = self.tb
        # the pips of a hand: per bit k of a tile's pips, 2**k times the tiles with that bit
        planes = jnp.asarray(tb.pip_planes)  # [P, W]
        per_plane = popcount(s.hands[:, None, :] & planes[None, :, :])  # [n, P]
        seat_pips = jnp.sum(per_plane << jnp.arange(planes.shape[0], dtype=I32), axis=1,
                            dtype=I32)
        of_side = jnp.asarray(tb.side)[:, None] == jnp.arange(tb.S, dtype=I32)[None, :]  # static
        return jnp.sum(jnp.where(of_side, seat_pips[:, None], 0), axis=0, dtype=I32)

    def end_domino(self, s: GameState, seat: jax.Array, now: jax.Array) -> GameState:
        """Where ``now``: ``seat`` played its last tile; its side scores the opponents' pips,
        rounded (a partner's pips are ignored)."""
        side = pick(self.tb.side, seat)
        pips = self.side_pips(s)
        left = jnp.sum(jnp.where(jnp.arange(self.tb.S, dtype=I32) != side, pips, 0), dtype=I32)
        return jax.tree.map(lambda a, b: jnp.where(now, a, b), s._replace(
            turn=_i(-1), result=_i(RESULT_DOMINO), result_seat=seat, award_side=side,
            award_points=self.round_to_five(left)), s)  # fmt: skip

    def end_blocked(self, s: GameState, now: jax.Array) -> GameState:
        """Where ``now``: nobody can play or draw. The side with the fewest pips scores the
        others' pips (``"opponents_total"``) or their excess over its own (``"difference"``),
        rounded; a tie for the fewest scores nothing."""
        tb = self.tb
        pips = self.side_pips(s)
        low = jnp.min(pips)
        tied = jnp.sum(pips == low, dtype=I32) > 1
        others = jnp.sum(pips, dtype=I32) - low
        if tb.rules.blocked_award == "difference":
            others = others - (tb.S - 1) * low
        return jax.tree.map(lambda a, b: jnp.where(now, a, b), s._replace(
            turn=_i(-1), result=_i(RESULT_BLOCKED), result_seat=_i(-1),
            award_side=jnp.where(tied, -1, jnp.argmin(pips).astype(I32)),
            award_points=jnp.where(tied, 0, self.round_to_five(others))), s)  # fmt: skip

    # -- a whole turn and the match ----------------------------------------------------------
    def play(self, s: GameState, code: jax.Array, flip: jax.Array) -> GameState:
        """Play a legal action code for the seat to play, then the forced draws and passes (or
        the end of the hand). ``last_points`` holds the play's points; scores are untouched
        (see :meth:`settle`)."""
        seat = s.turn
        s = self.place_tile(s, code, flip)
        points = self.points_for_count(s.count)
        out = ~jnp.any(pick_row(s.hands, seat) != 0)
        s = self.end_domino(s, seat, out)
        advanced = self.advance(s, seat)
        s = jax.tree.map(lambda a, b: jnp.where(out, a, b), s, advanced)
        return s._replace(last_points=points, ended_result=s.result, ended_seat=s.result_seat,
                          ended_award_side=s.award_side, ended_award_points=s.award_points)

    def settle(self, s: GameState, seat: jax.Array) -> GameState:
        """Score the play of ``seat`` (``MatchState._settle``): its points for its side; at the
        end of a hand the award (under ``win_check="immediate"``, a play that reaches the target
        wins at once and only a domino's award still counts); then the winner. The next hand
        is :meth:`next_hand`'s."""
        tb, rules = self.tb, self.tb.rules
        side = pick(tb.side, seat)
        scores = s.scores + jnp.where(one_hot(side, tb.S), s.last_points, 0)
        immediate = rules.win_check == "immediate"
        won_by_play = immediate & (pick(scores, side) >= rules.target_score)
        hand_over = s.turn < 0
        applied = hand_over & (s.award_side >= 0) & ~(won_by_play & (s.result != RESULT_DOMINO))
        scores = scores + jnp.where(one_hot(s.award_side, tb.S) & applied, s.award_points, 0)
        top = jnp.max(scores)
        unique = jnp.sum(scores == top, dtype=I32) == 1
        reached = hand_over & (top >= rules.target_score) & (immediate | unique)
        winner = jnp.where(won_by_play, side,
                           jnp.where(reached, jnp.argmax(scores).astype(I32), -1))  # fmt: skip
        s = s._replace(
            scores=scores, winner=winner,
            added_side=jnp.where(applied, s.award_side, -1),
            added_points=jnp.where(applied, s.award_points, 0),
        )  # fmt: skip
        return s

    def next_hand(self, s: GameState, deal: Deal) -> GameState:
        """After :meth:`settle`: where the hand is over and the match goes on, the next hand
        from ``deal`` (the leader by ``next_leader``, or ``deal.leader`` when the rules draw it
        at random)."""
        tb, rules = self.tb, self.tb.rules
        if rules.next_leader == "rotate":
            leader = (s.leader + 1) % tb.n
        else:
            leader = jnp.where(s.result == RESULT_DOMINO, s.result_seat, deal.leader)
        fresh = self.deal_hand(s, deal, leader)._replace(hand_number=s.hand_number + 1)
        go_on = (s.turn < 0) & (s.winner < 0)
        return jax.tree.map(lambda a, b: jnp.where(go_on, a, b), fresh, s)
