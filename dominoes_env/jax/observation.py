"""The observation vector in JAX: the same float32 values as :mod:`dominoes_env.encoding`,
bit for bit, for the same position and seat (``OBS_VERSION = 2``).

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

from .game import I32, Game, GameState, pick, pick_row


def observe(game: Game, s: GameState, seat: jax.Array) -> jax.Array:
    """``seat``'s observation of ``s`` as ``float32[D]``."""
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
    # tables), so points / divisor = (points / 5) * step exactly. For a count c >= 0,
    # c * 0xCCCCCCCD (mod 2**32, the inverse of 5) is c / 5 when 5 divides c and is above
    # 0x33333333 when it does not: one multiply per action code, no division
    count_after = jnp.maximum(game.count_after_all(s), 0).astype(jnp.uint32)
    fifth = count_after * jnp.uint32(0xCCCCCCCD)
    fifths = jnp.where(fifth <= jnp.uint32(0x33333333), fifth, jnp.uint32(0)).astype(jnp.float32)
    move_points = jnp.where(legal, fifths * jnp.float32(tb.points_step), jnp.float32(0))

    binary = jnp.concatenate([
        pick_row(s.hands, seat), s.played, end_value.reshape(-1), end_open, end_double,
        has_spinner[None], spinner_value, s.spinner_free & has_spinner, count_mod5,
        turn_block, others_lacks,
    ]).astype(jnp.float32)  # fmt: skip
    return jnp.concatenate([
        binary, count[None], others_hand_size, boneyard, scores, move_points,
    ])  # fmt: skip


def _lookup(table, index: jax.Array) -> jax.Array:
    """``table[index]`` for an array of indices into a small table, by one-hot (exact: one
    nonzero term; for long tables or many indices a gather is faster)."""
    table = jnp.asarray(table)
    hot = index[..., None] == jnp.arange(table.shape[0], dtype=I32)
    return jnp.sum(jnp.where(hot, table, jnp.float32(0)), axis=-1)
