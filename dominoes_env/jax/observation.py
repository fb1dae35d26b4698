"""The observation vector in JAX: the same float32 values as :mod:`dominoes_env.encoding`,
bit for bit, for the same position and seat: version 2 (``OBS_VERSION``) and, with
``version=3``, version 2 plus ``reply_points`` (:mod:`dominoes_env.encoding_v3`).

The blocks, in order (``T`` tiles, ``V = max_pip + 1`` values, ``n`` seats, ``S`` sides;
relative seat ``k`` is seat ``(seat + k) % n``; the full table with index ranges is in
:mod:`dominoes_env.encoding`):

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

import jax
import jax.numpy as jnp
import numpy as np

from .game import I32, Game, GameState, pick, pick_row


def observe(game: Game, s: GameState, seat: jax.Array, version: int = 2) -> jax.Array:
    """``seat``'s observation of ``s`` as ``float32[D]`` (observation ``version`` 2 or 3)."""
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

    count = pick(tb.count_f32, jnp.where(led, s.count, 0))
    seat_sizes = jnp.sum(s.hands, axis=1, dtype=I32)
    sizes = jnp.sum(jnp.where(rel, seat_sizes[None, :], 0), axis=1)
    others_hand_size = _lookup(tb.hand_f32, sizes)
    boneyard = _lookup(tb.bone_f32, jnp.stack([tb.B - s.drawn, tb.draw_limit - s.drawn]))
    # the sides in relative order: row ``seat`` of the static table, by one-hot
    side_order = jnp.sum(jnp.where((jnp.arange(n) == seat)[:, None], jnp.asarray(tb.rel_sides),
                                   0), axis=0)  # fmt: skip
    side_scores = jnp.sum(jnp.where(side_order[:, None] == jnp.arange(S)[None, :],
                                    s.scores[None, :], 0), axis=1)  # fmt: skip
    top_score = tb.score_f32.shape[0] - 1  # every score from there on shows SCORE_CAP
    scores = jnp.asarray(tb.score_f32)[jnp.clip(side_scores, 0, top_score)]

    # move_points: the points of each of this seat's legal moves when it is to play
    legal = game.legal_mask(s) & (turn == seat)
    # points are multiples of 5 and 5 / MOVE_POINTS_DIVISOR is a power of two (checked by the
    # tables), so points / divisor = (points / 5) * step exactly (see _fifths)
    count_after = jnp.maximum(game.count_after_all(s), 0)
    move_points = jnp.where(legal, _scaled_points(tb, count_after), jnp.float32(0))

    binary = jnp.concatenate([
        pick_row(s.hands, seat), s.played, end_value.reshape(-1), end_open, end_double,
        has_spinner[None], spinner_value, s.spinner_free & has_spinner, count_mod5,
        turn_block, others_lacks,
    ]).astype(jnp.float32)  # fmt: skip
    blocks = [binary, count[None], others_hand_size, boneyard, scores, move_points]
    if version == 3:
        blocks.append(reply_points(game, s, seat, legal))
    return jnp.concatenate(blocks)


def _fifths(count: jax.Array) -> jax.Array:
    """``points_for_count(count) // 5`` as uint32 for counts ``>= 0``: ``c * 0xCCCCCCCD``
    (mod 2**32; the inverse of 5) is ``c / 5`` when 5 divides ``c`` and above ``0x33333333``
    when it does not, so one multiply, no division."""
    fifth = count.astype(jnp.uint32) * jnp.uint32(0xCCCCCCCD)
    return jnp.where(fifth <= jnp.uint32(0x33333333), fifth, jnp.uint32(0))


def _scaled_points(tb, count: jax.Array) -> jax.Array:
    """``points_for_count(count) / MOVE_POINTS_DIVISOR`` in float32 for counts ``>= 0``."""
    return _fifths(count).astype(jnp.float32) * jnp.float32(tb.points_step)


def reply_points(game: Game, s: GameState, seat: jax.Array, legal: jax.Array) -> jax.Array:
    """``float32[4T]``: for each ``legal`` code of ``seat`` (to play), the most points the next
    seat could score with one play right after it, from the tiles it may hold (not in
    ``seat``'s hand, not on the layout, neither half a value it is known to lack), / 20
    (:func:`dominoes_env.lookahead.reply_points`).

    Every action code's layout comes from :meth:`Game.place_tile` (``vmap`` over the codes).
    An answer on end ``f`` showing ``x`` with the tile ``[x|w]`` makes the count
    ``rest[f] + w`` (``+ 2w`` for the double ``[x|x]``), ``rest`` from
    :meth:`Game.count_without_end`; so each code needs ``4 * V`` counts, not ``4 * T``."""
    tb = game.tb
    V = tb.V
    nxt = (seat + 1) % tb.n
    lacks = pick_row(s.known_lacks, nxt)  # bool[V]
    lacked = jnp.any(jnp.asarray(tb.suit) & lacks[:, None], axis=0)  # bool[T]
    possible = ~pick_row(s.hands, seat) & ~s.played & ~lacked
    # may[v, w]: the tile [v|w] is possible (a static table of which tile is [v|w])
    v, w = np.divmod(np.arange(V * V), V)
    low, high = np.asarray(tb.low), np.asarray(tb.high)
    pair = ((low[None, :] == np.minimum(v, w)[:, None])
            & (high[None, :] == np.maximum(v, w)[:, None]))  # fmt: skip
    may = jnp.any(jnp.asarray(pair) & possible[None, :], axis=1).reshape(V, V)

    codes = jnp.arange(tb.num_actions, dtype=I32)
    after = jax.vmap(lambda c: game.place_tile(s, c, jnp.bool_(False)))(codes)
    ends = after.ends  # [4T, 4]
    open_end = jax.vmap(game.open_ends)(after)  # [4T, 4]
    rest = jax.vmap(game.count_without_end)(after)  # [4T, 4]
    shows = ends[:, :, None] == jnp.arange(V, dtype=I32)  # [4T, 4, V]: end f shows x
    held = jnp.any(shows[:, :, :, None] & may[None, None], axis=2)  # [4T, 4, w]: [x|w] held
    ws = jnp.arange(V, dtype=I32)
    count = jnp.maximum(rest, 0)[:, :, None] + jnp.where(shows, ws + ws, ws)
    fifths = _fifths(count)  # points / 5, 0 where the count does not score
    best = jnp.max(jnp.where(held & open_end[:, :, None], fifths, 0), axis=(1, 2))
    return jnp.where(legal, best.astype(jnp.float32) * jnp.float32(tb.points_step),
                     jnp.float32(0))  # fmt: skip


def _lookup(table, index: jax.Array) -> jax.Array:
    """``table[index]`` for an array of indices into a small table, by one-hot (exact: one
    nonzero term; for long tables or many indices a gather is faster)."""
    table = jnp.asarray(table)
    hot = index[..., None] == jnp.arange(table.shape[0], dtype=I32)
    return jnp.sum(jnp.where(hot, table, jnp.float32(0)), axis=-1)
