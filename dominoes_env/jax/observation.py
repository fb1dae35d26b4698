"""The observation vector in JAX: the same float32 values as :mod:`dominoes_env.obs`, bit for
bit, for the same position and seat: version 2 (:mod:`dominoes_env.obs.v2`); with ``version=3``,
version 2 plus ``reply_points`` (:mod:`dominoes_env.obs.v3`); with ``version=4``, version 3 plus
``reply_chance`` and ``follow_up`` (:mod:`dominoes_env.obs.v4`); with ``version=5``, version 4
plus ``later_reply_points`` and ``later_reply_chance`` (:mod:`dominoes_env.obs.v5`). The default
is the registry's ``DEFAULT_VERSION``.

The blocks, in order (``T`` tiles, ``V = max_pip + 1`` values, ``n`` seats, ``S`` sides;
relative seat ``k`` is seat ``(seat + k) % n``; the full table with index ranges is in
:mod:`dominoes_env.obs.v2`):

================  =========  ======================================================================
block             size       value
================  =========  ======================================================================
hand              T          1 for each tile in this seat's hand
played            T          1 for each tile in the layout
end_value         4*V        one-hot value at left, right (after the lead), up, down (once there
                             is a spinner)
end_open          4          left / right after the lead; up / down once the cross is open
end_double        4          the end's outer tile is a double (left / right: the lead while
                             their arm is empty; up / down: only once a tile is on them)
spinner           1          1 once the hand has a spinner
spinner_value     V          one-hot pip value of the spinner
spinner_free      2          the spinner is still the outer tile of left / right
count_mod5        5          one-hot ``count % 5`` after the lead
turn              n          one-hot relative seat to play (zeros once the hand or match is over)
others_lacks      (n-1)*V    per relative seat 1..n-1, the values it is known to lack
count             1          count / (8 * max_pip)
others_hand_size  n-1        per relative seat 1..n-1, tiles in hand / hand_size
boneyard          2          tiles left, tiles drawable; each / max(1, boneyard_size)
scores            S          per relative side (own first), score / target_score, capped at 2
move_points       4T         per action code, points of that legal move / 20 (own turn only)
================  =========  ======================================================================

The scaled numbers come from :class:`~dominoes_env.jax.tables.Tables` (double-precision
arithmetic rounded to float32, as the numpy encoder): XLA may turn a float32 division by a
constant into a multiplication by its reciprocal, which differs in the last bit.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ..core import SCORE_UNIT
from ..lookahead import reply_chance_table
from ..obs import DEFAULT_VERSION
from ..obs.v2 import observation_layout
from .game import (
    I32,
    Game,
    GameState,
    materialize,
    pick,
    pick_row,
    popcount,
    rows_of,
)
from .tables import SPINNER_FIRST, SPINNER_NONE


def observe(game: Game, s: GameState, seat: jax.Array, version: int = DEFAULT_VERSION,
            legal: jax.Array | None = None) -> jax.Array:
    """``seat``'s observation of ``s`` as ``float32[D]`` (observation ``version`` 2 to 5).
    ``legal``: ``game.legal_mask(s)`` when the caller has it already (computed if ``None``)."""
    tb = game.tb
    n, V, S = tb.n, tb.V, tb.S
    seat = jnp.asarray(seat, I32)
    led = s.lead >= 0
    has_spinner = s.spinner >= 0
    vals = jnp.arange(V, dtype=I32)
    lr = jnp.array([True, True, False, False])

    # end_value / end_open / end_double: left and right from the lead on, up and down once
    # there is a spinner (their value shows before the cross opens)
    shown = led & (lr | has_spinner)
    end_value = (s.ends[:, None] == vals[None, :]) & shown[:, None]
    end_open = led & (lr | (has_spinner & s.cross_open))
    end_double = led & s.outer_double & (lr | (has_spinner & (s.arm > 0)))
    spinner_value = has_spinner & (pick(tb.low, s.spinner) == vals)
    count_mod5 = led & (s.count % 5 == jnp.arange(5, dtype=I32))
    turn = jnp.where(s.winner >= 0, -1, s.turn)
    turn_block = (turn >= 0) & ((turn - seat) % n == jnp.arange(n, dtype=I32))
    # relative seats 1..n-1 as a one-hot [n-1, n] matrix (no gathers: see game.one_hot)
    rel = (seat + jnp.arange(1, n, dtype=I32)[:, None]) % n == jnp.arange(n, dtype=I32)[None, :]
    others_lacks = jnp.any(rel[:, :, None] & s.known_lacks[None, :, :], axis=1).reshape(-1)

    seat_sizes = popcount(s.hands)
    sizes = jnp.sum(jnp.where(rel, seat_sizes[None, :], 0), axis=1, dtype=I32)
    # the sides in relative order: row ``seat`` of the static table, by one-hot
    side_order = jnp.sum(jnp.where((jnp.arange(n, dtype=I32) == seat)[:, None],
                                   jnp.asarray(tb.rel_sides), 0), axis=0, dtype=I32)  # fmt: skip
    side_scores = jnp.sum(jnp.where(side_order[:, None] == jnp.arange(S, dtype=I32)[None, :],
                                    s.scores[None, :], 0), axis=1, dtype=I32)  # fmt: skip
    # the scaled numbers (count, others_hand_size, boneyard, scores): their float32 values
    # read from the tables in one gather of a few entries per game (a one-hot over each table
    # cost as much as a third of the observation: measured)
    scaled = _scaled_numbers(tb, jnp.where(led, s.count, 0), sizes,
                             jnp.stack([tb.B - s.drawn, tb.draw_limit - s.drawn]), side_scores)
    count, others_hand_size = scaled[:1], scaled[1:n]
    boneyard, scores = scaled[n : n + 2], scaled[n + 2 :]

    # move_points: the points of each of this seat's legal moves when it is to play
    to_play = (game.legal_mask(s) if legal is None else legal) & (turn >= 0)
    legal = to_play & (turn == seat)
    # points are multiples of SCORE_UNIT and SCORE_UNIT / MOVE_POINTS_DIVISOR is a power of two
    # (checked by the tables), so points / divisor = (points / unit) * step exactly (_fifths)
    # (all on [4T] rows from per-code tables: see Game.per_code)
    count_after = jnp.maximum(game.count_after_all(s), 0)
    move_points = jnp.where(legal, _scaled_points(tb, count_after), jnp.float32(0))

    binary = jnp.concatenate([
        rows_of(tb, pick_row(s.hands, seat)), rows_of(tb, s.played), end_value.reshape(-1),
        end_open, end_double, has_spinner[None], spinner_value, s.spinner_free & has_spinner,
        count_mod5, turn_block, others_lacks,
    ]).astype(jnp.float32)  # fmt: skip
    blocks = [binary, count, others_hand_size, boneyard, scores, move_points]
    if version >= 3:
        # only the seat to play has lookahead values (0 elsewhere): computed for that seat,
        # they do not depend on ``seat``, so under vmap over seats they are computed once
        mine = turn == seat
        blocks.extend(jnp.where(mine, block, jnp.float32(0))
                      for block in lookahead(game, s, turn, to_play, version))
    return jnp.concatenate(blocks)


def observe_first(game: Game, s: GameState, legal: jax.Array,
                  version: int = DEFAULT_VERSION) -> jax.Array:
    """``observe(game, s, s.turn, version, legal)`` for ``s`` the first state of a match
    (:meth:`Game.new_match`), written from the blocks that differ between matches: the hand,
    the move points of its legal leads, and (versions 3 to 5) the lookahead blocks; the rest
    is :attr:`Tables.first_obs`, the same in every new match. A new match is what
    ``Env.init`` makes, and Pgx's ``auto_reset`` runs ``init`` for every game at every step
    under ``vmap``: the whole observation there cost half a step (measured)."""
    tb = game.tb
    lay = observation_layout(tb.rules)
    hand = rows_of(tb, pick_row(s.hands, s.turn)).astype(jnp.float32)
    # the move points of observe's last version 2 block (4T values), the same expression
    count_after = jnp.maximum(game.count_after_all(s), 0)
    move_points = jnp.where(legal, _scaled_points(tb, count_after), jnp.float32(0))
    if lay.hand.start != 0 or lay.move_points.stop != lay.size:
        raise AssertionError("version 2 no longer starts with the hand and ends with the "
                             "move points")
    blocks = [hand, jnp.asarray(tb.first_obs[lay.hand.stop:lay.move_points.start]), move_points]
    if version >= 3:
        blocks.extend(lookahead(game, s, s.turn, legal, version))
    return jnp.concatenate(blocks)


def _scaled_numbers(tb, count: jax.Array, sizes: jax.Array, boneyard: jax.Array,
                    scores: jax.Array) -> jax.Array:
    """``float32[1 + (n - 1) + 2 + S]``: ``count``'s, ``sizes``', ``boneyard``'s and ``scores``'
    entries of the tables ``count_f32``, ``hand_f32``, ``bone_f32`` and ``score_f32`` (scores
    clipped to the table: every score from its end on shows ``SCORE_CAP``), by one gather
    from the four tables laid end to end."""
    tables = (tb.count_f32, tb.hand_f32, tb.bone_f32, tb.score_f32)
    starts = np.cumsum([0] + [len(t) for t in tables[:-1]])
    index = jnp.concatenate([
        jnp.clip(jnp.atleast_1d(values), 0, len(table) - 1) + start
        for values, table, start in zip((count, sizes, boneyard, scores), tables, starts,
                                        strict=True)
    ])  # fmt: skip
    return jnp.asarray(np.concatenate(tables))[index]


#: the inverse of the (odd) scoring unit modulo 2**32 (0xCCCCCCCD for 5), and the largest
#: quotient of a uint32 by the unit (0x33333333): see _fifths
_UNIT_INVERSE = pow(SCORE_UNIT, -1, 2**32)
_UNIT_QUOTIENTS = (2**32 - 1) // SCORE_UNIT


def _fifths(count: jax.Array) -> jax.Array:
    """``points_for_count(count) // SCORE_UNIT`` as uint32 for counts ``>= 0``: ``c`` times
    the unit's inverse (mod 2**32) is ``c / SCORE_UNIT`` when the unit divides ``c`` and
    above the largest such quotient when it does not, so one multiply, no division."""
    fifth = count.astype(jnp.uint32) * jnp.uint32(_UNIT_INVERSE)
    return jnp.where(fifth <= jnp.uint32(_UNIT_QUOTIENTS), fifth, jnp.uint32(0))


def _scaled_points(tb, count: jax.Array) -> jax.Array:
    """``points_for_count(count) / MOVE_POINTS_DIVISOR`` in float32 for counts ``>= 0``."""
    return _fifths(count).astype(jnp.float32) * jnp.float32(tb.points_step)


def reply_points(game: Game, s: GameState, seat: jax.Array, legal: jax.Array) -> jax.Array:
    """``float32[4T]``: for each ``legal`` code of ``seat`` (to play), the most points the next
    seat could score with one play right after it, from the tiles it may hold (not in
    ``seat``'s hand, not on the layout, neither half a value it is known to lack), / 20
    (:func:`dominoes_env.lookahead.reply_points`; :func:`lookahead`'s first block)."""
    return lookahead(game, s, seat, legal, 3)[0]


def lookahead(game: Game, s: GameState, seat: jax.Array, legal: jax.Array, version: int
              ) -> list[jax.Array]:
    """The lookahead blocks of observation ``version`` (3: ``reply_points``; 4: also
    ``reply_chance`` and ``follow_up``; 5: also ``later_reply_points`` and
    ``later_reply_chance``, one ``[4T]`` row per seat after the next), each ``float32[4T]``
    and 0 off ``legal``
    (:func:`dominoes_env.lookahead.move_lookahead`); ``seat`` is the seat to play and
    ``legal`` its legal codes.

    The moves are not the ``4T`` action codes but the few that can be legal: before the lead,
    each tile of the hand led (:func:`_lead_moves`); after it, each end ``e`` and value ``w``,
    the tile ``[x_e|w]`` played on ``e`` (:func:`_play_moves`, ``4V`` of them); each code then
    reads its move's values. For a move and an end ``f`` showing ``x``, the answers ``[x|w]``
    are one bit mask over ``w`` (``V <= 13`` bits): the tiles a seat may hold, and those that
    score (:func:`_answers`); an answer makes the count ``rest + w`` (``rest + 2x`` for the
    double), so the best is the highest bit, or the double."""
    tb = game.tb
    own = rows_of(tb, pick_row(s.hands, seat))
    unseen = ~own & ~rows_of(tb, s.played)
    # the seats whose answers are read: the next one, and with version 5 the later ones
    later = range(2, tb.n) if version >= 5 else range(0)
    answerers = [(seat + k) % tb.n for k in (1, *later)]

    def may_hold(other):  # bool[T]: the tiles seat ``other`` may hold, as ``seat`` knows
        lacks = pick_row(s.known_lacks, other)  # bool[V]
        return unseen & ~jnp.any(jnp.asarray(tb.suit) & lacks[:, None], axis=0)

    possible = [may_hold(other) for other in answerers]
    may = [_half_bits(tb, tiles) for tiles in possible]  # int32[V]: [x|w] at bit w of x
    mine = _half_bits(tb, own)

    lead_moves, leads = _lead_moves(game, s, own)
    per_path = []
    for moves in (lead_moves, _play_moves(game, s)):
        reply = moves.rows(may[0]) & moves.pays  # [f, k]: the possible answers that score
        out = [_best(moves, reply)]
        if version >= 4:
            out.append(_scoring(moves.ends, reply))
            out.append(_best(moves, moves.rows(mine) & ~moves.itself & moves.pays))
        for bits in may[1:]:  # version 5: each later seat's best answer and scoring tiles
            reply = moves.rows(bits) & moves.pays
            out.extend([_best(moves, reply), _scoring(moves.ends, reply)])
        per_path.append(out)
    # computed once per move (left alone XLA fuses them into each code's read below and
    # recomputes them for every code and value: measured, most of the lookahead's time)
    per_path = materialize(per_path, s.count < 0)  # a layout's count is never negative
    # each code's values: before the lead, its tile's as a lead; after it, its move's
    lead_now = s.lead < 0
    ints = [jnp.where(lead_now, jnp.repeat(_led_by_tile(leads, led), 4),
                      _play_by_code(game, s, played))
            for led, played in zip(*per_path, strict=True)]

    def scaled(fifth):
        return jnp.where(legal, fifth.astype(jnp.float32) * jnp.float32(tb.points_step),
                         jnp.float32(0))  # fmt: skip

    def chance(i, scoring):  # answerer i's reply_chance of each code (version 4 on)
        table = jnp.asarray(reply_chance_table(tb.T).reshape(-1, tb.T + 1))
        held = popcount(pick_row(s.hands, answerers[i]))
        size = jnp.sum(possible[i], dtype=I32)
        # this position's row of the table (one slice), then each code's entry: a gather (a
        # one-hot over T + 1 entries for each of 4T codes cost more than the rest of the block,
        # measured)
        entry = table[held * (tb.T + 1) + size][jnp.clip(scoring, 0, tb.T)]
        return jnp.where(legal, entry, jnp.float32(0))

    blocks = [scaled(ints[0])]
    if version >= 4:
        blocks.extend([chance(0, ints[1]), scaled(ints[2])])
    if len(answerers) > 1:  # version 5 at 3 or 4 seats: later_reply_points, then _chance
        blocks.extend([scaled(ints[1 + 2 * i]) for i in range(1, len(answerers))])
        blocks.extend([chance(i, ints[2 + 2 * i]) for i in range(1, len(answerers))])
    return blocks


def _half_bits(tb, tiles: jax.Array) -> jax.Array:
    """``int32[V]``: for each value ``x``, bit ``w`` set when ``tiles`` (``bool[T]``) holds
    ``[x|w]`` (a product with a static ``[T, V]`` table of bit weights: exact in float32, at
    most ``2**13``)."""
    weights = np.zeros((tb.T, tb.V), np.float32)
    for t, (a, b) in enumerate(zip(np.asarray(tb.low), np.asarray(tb.high), strict=True)):
        weights[t, a] += 2.0 ** b
        if a != b:
            weights[t, b] += 2.0 ** a
    return jnp.dot(tiles.astype(jnp.float32), jnp.asarray(weights)).astype(I32)


def _bit(x: jax.Array) -> jax.Array:
    """``1 << x`` where ``x >= 0``, else 0."""
    return jnp.where(x >= 0, jnp.left_shift(jnp.int32(1), jnp.maximum(x, 0)), 0)


def _row_of(bits: jax.Array, x: jax.Array) -> jax.Array:
    """``bits[x]`` (0 where ``x`` is out of range) for an ``int32[V]`` row and any shape of
    ``x``, by one-hot."""
    hot = x[..., None] == jnp.arange(bits.shape[0], dtype=I32)
    return jnp.sum(jnp.where(hot, bits, 0), axis=-1, dtype=bits.dtype)


class _Moves(NamedTuple):
    """``K`` moves from one position, each array ``[4, K]`` by end ``f`` and move ``k``:
    ``ends``, the value ``x`` end ``f`` shows after the move (-1: none); ``rest``, the count an
    answer there adds its new end to; ``pays``, the bit mask of the ``w`` whose answer ``[x|w]``
    scores (none where ``f`` is not open); ``itself``, the bit of ``w`` where ``[x|w]`` is the
    tile the move plays; ``rows(bits)``, for ``_half_bits`` of a tile set, its row ``x``."""

    ends: jax.Array
    rest: jax.Array
    pays: jax.Array
    itself: jax.Array
    rows: object


def _answers(tb, s: GameState, ends, open_end, rest) -> tuple[jax.Array, jax.Array, jax.Array]:
    """``(ends, rest, pays)`` from each move's ``[4, K]`` layout (see :class:`_Moves`): the
    count after ``[x|w]`` is ``rest + w``, or ``rest + 2x`` for the double; it scores when it
    is a positive multiple of 5. Computed once per position (left alone XLA fuses the layouts
    into the per-seat loops and recomputes them per seat)."""
    never = s.count < 0  # a layout's count is never negative
    ends, open_end, rest = materialize((ends, open_end, jnp.maximum(rest, 0)), never)
    # the w < V with (rest + w) a multiple of the unit, by rest's remainder (V <= 13: max_pip
    # is 6, 9 or 12)
    fives = [np.int32(sum(1 << w for w in range(tb.V) if (r + w) % SCORE_UNIT == 0))
             for r in range(SCORE_UNIT)]
    r = jax.lax.rem(rest, I32(SCORE_UNIT))
    mask = jnp.int32(fives[-1])
    for k in range(SCORE_UNIT - 2, -1, -1):  # a chain of selects, as written out before
        mask = jnp.where(r == k, fives[k], mask)
    mask = jnp.where(rest == 0, mask & ~1, mask)  # a count of 0 scores nothing
    xbit = _bit(ends)
    double = rest + ends + ends
    double_pays = (double > 0) & (jax.lax.rem(double, I32(SCORE_UNIT)) == 0)
    pays = (mask & ~xbit) | jnp.where(double_pays, xbit, 0)
    pays = jnp.where(open_end & (ends >= 0), pays, 0)
    return ends, rest, materialize(pays, never)


def _best(moves: _Moves, held: jax.Array) -> jax.Array:
    """``int32[K]``: the most points / 5 of one answer among ``held`` (``[4, K]`` bit masks of
    scoring answers), 0 when there is none."""
    xbit = _bit(moves.ends)
    single = held & ~xbit
    top = 31 - jax.lax.clz(single)  # the highest w (-1 when none)
    count = jnp.where(single != 0, moves.rest + top, 0)
    count = jnp.maximum(count, jnp.where((held & xbit) != 0, moves.rest + 2 * moves.ends, 0))
    return _fifths(jnp.max(count, axis=0)).astype(I32)


def _scoring(ends: jax.Array, reply: jax.Array) -> jax.Array:
    """``int32[K]``: how many distinct tiles ``reply`` marks (``[4, K]`` bit masks of ``[x_f|w]``),
    each counted at its first end: it shows again on a later end ``f`` as the same bit if
    ``x_g = x_f``, or as bit ``x_g`` if ``[x_g|x_f]`` is marked on ``g``."""
    scoring = jax.lax.population_count(reply[0])
    for f in range(1, 4):
        dup = jnp.zeros_like(reply[f])
        for g in range(f):
            same = ends[g] == ends[f]
            crossed = ((reply[g] >> jnp.maximum(ends[f], 0)) & 1) != 0
            dup = dup | jnp.where(same, reply[g], 0) | jnp.where(crossed & (ends[f] >= 0),
                                                                 _bit(ends[g]), 0)
        scoring = scoring + jax.lax.population_count(reply[f] & ~dup)
    return scoring


def _lead_moves(game: Game, s: GameState, own: jax.Array) -> tuple[_Moves, jax.Array]:
    """Before the lead: move ``k`` leads the ``k``-th tile of ``own``, the hand of the seat to
    play (``K = hand_size``: the leader holds its dealt hand), the layout as
    :meth:`Game.place_tile` makes it: the low half shows left, the high half right, and a
    spinner's value up and down. Also ``bool[K, T]``: move ``k`` leads tile ``t``."""
    tb = game.tb
    T, H = tb.T, tb.hand_size
    # the own tiles before each tile: a product with a triangular matrix of ones (exact in
    # float32), as random_policy counts legal codes
    before = jnp.dot(own.astype(jnp.float32), jnp.asarray(_strictly_upper(T))).astype(I32)
    leads = own[None, :] & (before[None, :] == jnp.arange(H, dtype=I32)[:, None])  # [K, T]

    def of(table):  # [T] -> [K]: the led tile's entry
        return jnp.sum(jnp.where(leads, jnp.asarray(table)[None, :], 0), axis=1, dtype=I32)

    lo, hi = of(tb.low), of(tb.high)
    pips = lo + hi
    dbl = lo == hi
    spins = dbl & (tb.spinner_mode != SPINNER_NONE)
    cross_value = jnp.where(spins, lo, -1)
    ends = jnp.stack([lo, hi, cross_value, cross_value])  # [f, k]
    zero = jnp.zeros_like(lo)
    contrib = jnp.stack([jnp.where(dbl, pips, lo), jnp.where(dbl, pips, hi), zero, zero])
    lr = jnp.asarray(np.arange(4) < 2)[:, None]
    # count_without_end of that layout: the lead's arms are empty (s.arm as place_tile keeps it)
    long_arms = (s.arm[0] > 0) | (s.arm[1] > 0)
    base = jnp.where(lr | long_arms, jnp.sum(contrib, axis=0, dtype=I32),
                     pips + contrib[2] + contrib[3])
    open_end = (lr | (spins & tb.cross_now)) & (ends >= 0)
    ends, rest, pays = _answers(tb, s, ends, open_end, base - contrib)
    from_low = ends == lo  # [f, k]: end f shows the tile's low half
    from_high = ~from_low & (ends == hi)
    itself = jnp.where(ends == lo, _bit(hi), 0) | jnp.where(ends == hi, _bit(lo), 0)

    def rows(bits):
        return (jnp.where(from_low, _row_of(bits, lo), 0)
                | jnp.where(from_high, _row_of(bits, hi), 0))  # fmt: skip

    return _Moves(ends, rest, pays, itself, rows), leads


def _strictly_upper(n: int) -> np.ndarray:
    """``float32[n, n]``: 1 above the diagonal (``x @ it``: the sum of ``x`` before each
    place)."""
    return np.triu(np.ones((n, n), np.float32), k=1)


def _play_moves(game: Game, s: GameState) -> _Moves:
    """After the lead: move ``k = e * V + w`` plays ``[x_e|w]`` on end ``e`` (``x_e`` the value
    end ``e`` shows now; ``K = 4V``), the layout computed as :meth:`Game.place_tile` does for
    that code: ``w`` shows on ``e``, a first double on left / right may become the spinner
    (its value then shows up and down) or cover it and open the cross. Moves on an end
    showing nothing mean nothing."""
    tb = game.tb
    V = tb.V
    e = np.repeat(np.arange(4), V)  # [K], static
    w = jnp.asarray(np.tile(np.arange(V, dtype=np.int32), 4))
    f = np.arange(4)[:, None]
    on_e = jnp.asarray(f == e[None, :])  # [f, k]: f is the move's end
    lr = jnp.asarray(f < 2)

    def by_end(row):  # [4] -> [K]: row[e]
        return jnp.sum(jnp.where(on_e, row[:, None], jnp.zeros((), row.dtype)), axis=0,
                       dtype=row.dtype)

    v = by_end(s.ends)
    dbl = w == v
    long_side = jnp.asarray(e < 2)
    covers = long_side & by_end(jnp.concatenate([s.spinner_free, jnp.zeros(2, bool)]))
    new = (long_side & ~covers & dbl & (s.spinner < 0)
           & (tb.spinner_mode == SPINNER_FIRST))  # fmt: skip
    sides = s.spinner_sides + covers.astype(I32) + new.astype(I32)
    cross = s.cross_open | (covers & (sides == 2)) | (new & tb.cross_now)
    ends = jnp.where(on_e, w, jnp.where(new & ~lr, v, s.ends[:, None]))  # [f, k]
    contrib = jnp.where(on_e, jnp.where(dbl, w + w, w), s.contrib[:, None])
    arm = s.arm[:, None] + on_e.astype(I32)
    long_arms = (arm[0] > 0) | (arm[1] > 0)
    total = jnp.sum(contrib, axis=0, dtype=I32)
    base = jnp.where(lr | long_arms, total, s.lead_pips + contrib[2] + contrib[3])
    open_end = (lr | cross) & (ends >= 0)
    ends, rest, pays = _answers(tb, s, ends, open_end, base - contrib)
    spin_cross = new & ~lr  # [f, k]: f shows v, the move's end's old value
    itself = jnp.where(ends == v, _bit(w), 0) | jnp.where(ends == w, _bit(v), 0)

    def rows(bits):
        now = _row_of(bits, s.ends)  # [f]: the row of the value end f shows now
        return jnp.where(on_e, _row_of(bits, w), jnp.where(spin_cross, by_end(now),
                                                           now[:, None]))  # fmt: skip

    return _Moves(ends, rest, pays, itself, rows)


def _led_by_tile(leads: jax.Array, values: jax.Array) -> jax.Array:
    """``int32[T]``: each tile's entry of ``values`` (``[K]``, by :func:`_lead_moves`' moves;
    0 for tiles no move leads)."""
    return jnp.sum(jnp.where(leads, values[:, None], 0), axis=0, dtype=I32)


def _play_by_code(game: Game, s: GameState, values: jax.Array) -> jax.Array:
    """``int32[4T]``: for each code ``(t, e)`` after the lead, ``values`` (``[4V]``, by
    :func:`_play_moves`' moves) of the move that plays ``t`` on ``e``: its other half than
    ``x_e`` shows there (codes that do not fit read what means nothing)."""
    tb = game.tb
    V = tb.V
    low, high = jnp.asarray(tb.code_low), jnp.asarray(tb.code_high)
    other = jnp.where(low == game.per_code(s.ends), high, low)  # [4T]
    by_end = values.reshape(4, V)
    e = jnp.asarray(tb.code_end)[:, None]
    # [4T, V]: the row of each code's end
    rows = jnp.where(e == 0, by_end[0], jnp.where(e == 1, by_end[1], jnp.where(
        e == 2, by_end[2], by_end[3])))  # fmt: skip
    return jnp.sum(jnp.where(other[:, None] == jnp.arange(V, dtype=I32), rows, 0), axis=1,
                   dtype=I32)

