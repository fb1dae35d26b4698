"""The observation vector in JAX: the same float32 values as :mod:`dominoes_env.obs`, bit for
bit, for the same position and seat: version 2 (:mod:`dominoes_env.obs.v2`); with ``version=3``,
version 2 plus ``reply_points`` (:mod:`dominoes_env.obs.v3`); with ``version=4``, version 3 plus
``reply_chance`` and ``follow_up`` (:mod:`dominoes_env.obs.v4`). The default is the registry's
``DEFAULT_VERSION``.

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

import jax
import jax.numpy as jnp
import numpy as np

from ..lookahead import reply_chance_table
from ..obs import DEFAULT_VERSION
from .game import I32, Game, GameState, pick, pick_row, sum_one_float


def observe(game: Game, s: GameState, seat: jax.Array, version: int = DEFAULT_VERSION,
            legal: jax.Array | None = None) -> jax.Array:
    """``seat``'s observation of ``s`` as ``float32[D]`` (observation ``version`` 2, 3 or 4).
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
    legal = (game.legal_mask(s) if legal is None else legal) & (turn == seat)
    # points are multiples of 5 and 5 / MOVE_POINTS_DIVISOR is a power of two (checked by the
    # tables), so points / divisor = (points / 5) * step exactly (see _fifths)
    # (all on [4T] rows from per-code tables: see Game.per_code)
    count_after = jnp.maximum(game.count_after_all(s), 0)
    move_points = jnp.where(legal, _scaled_points(tb, count_after), jnp.float32(0))

    binary = jnp.concatenate([
        pick_row(s.hands, seat), s.played, end_value.reshape(-1), end_open, end_double,
        has_spinner[None], spinner_value, s.spinner_free & has_spinner, count_mod5,
        turn_block, others_lacks,
    ]).astype(jnp.float32)  # fmt: skip
    blocks = [binary, count[None], others_hand_size, boneyard, scores, move_points]
    if version >= 3:
        blocks.extend(lookahead(game, s, seat, legal, version))
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
    (:func:`dominoes_env.lookahead.reply_points`; :func:`lookahead`'s first block)."""
    return lookahead(game, s, seat, legal, 3)[0]


def lookahead(game: Game, s: GameState, seat: jax.Array, legal: jax.Array, version: int
              ) -> list[jax.Array]:
    """The lookahead blocks of observation ``version`` (3: ``reply_points``; 4: also
    ``reply_chance`` and ``follow_up``), each ``float32[4T]`` and 0 off ``legal``
    (:func:`dominoes_env.lookahead.move_lookahead`).

    Every action code's layout comes from :meth:`Game.place_tile` (``vmap`` over the codes).
    An answer on end ``f`` showing ``x`` with the tile ``[x|w]`` makes the count
    ``rest[f] + w`` (``+ 2w`` for the double ``[x|x]``), ``rest`` from
    :meth:`Game.count_without_end`; so each code needs ``4 * V`` counts, not ``4 * T``. Which
    tiles may answer is a ``[V, V]`` table by halves (``[v|w]`` at ``[v, w]`` and ``[w, v]``)."""
    tb = game.tb
    V = tb.V
    nxt = (seat + 1) % tb.n
    lacks = pick_row(s.known_lacks, nxt)  # bool[V]
    lacked = jnp.any(jnp.asarray(tb.suit) & lacks[:, None], axis=0)  # bool[T]
    own = pick_row(s.hands, seat)
    possible = ~own & ~s.played & ~lacked
    pair = _pair_table(tb)  # [V*V, T]: [v|w] is tile t

    def by_halves(tiles):  # bool[T] -> bool[V, V]
        return jnp.any(jnp.asarray(pair) & tiles[None, :], axis=1).reshape(V, V)

    codes = jnp.arange(tb.num_actions, dtype=I32)
    after = jax.vmap(lambda c: game.place_tile(s, c, jnp.bool_(False)))(codes)
    ends = after.ends  # [4T, 4]
    open_end = jax.vmap(game.open_ends)(after)  # [4T, 4]
    rest = jax.vmap(game.count_without_end)(after)  # [4T, 4]
    shows = ends[:, :, None] == jnp.arange(V, dtype=I32)  # [4T, 4, V]: end f shows x
    ws = jnp.arange(V, dtype=I32)
    count = jnp.maximum(rest, 0)[:, :, None] + jnp.where(shows, ws + ws, ws)
    fifths = jnp.where(open_end[:, :, None], _fifths(count), 0)  # [4T, 4, w]: points / 5

    def best(may):  # may: bool[V, V] or [4T, V, V] -> the most fifths of one play, [4T]
        may = jnp.broadcast_to(may, (tb.num_actions, V, V))
        held = jnp.any(shows[:, :, :, None] & may[:, None], axis=2)  # [4T, 4, w]: [x|w] held
        return jnp.max(jnp.where(held, fifths, 0), axis=(1, 2))

    def scaled(fifth):
        return jnp.where(legal, fifth.astype(jnp.float32) * jnp.float32(tb.points_step),
                         jnp.float32(0))  # fmt: skip

    blocks = [scaled(best(by_halves(possible)))]
    if version >= 4:
        # reply_chance: which possible tiles score on some end after each code
        # (by halves, both ways round; a tile other than a double shows twice, so the sum over
        # the whole table plus its diagonal counts each tile twice)
        pays = fifths > 0  # [4T, f, w]: [x|w] on end f (showing x) scores
        scores = _any_over(lambda f: (shows[:, f, :, None] & pays[:, f, None, :])
                           | (pays[:, f, :, None] & shows[:, f, None, :]), 4)  # [4T, v, w]
        scores = scores & by_halves(possible)[None]
        diagonal = jnp.asarray(np.eye(V, dtype=bool))
        scoring = (jnp.sum(scores, axis=(1, 2), dtype=I32)
                   + jnp.sum(scores & diagonal, axis=(1, 2), dtype=I32)) // 2
        held = jnp.sum(pick_row(s.hands, nxt), dtype=I32)
        size = jnp.sum(possible, dtype=I32)
        # this position's row of the table (one slice), then each code's entry by one-hot
        table = jnp.asarray(reply_chance_table(tb.T).reshape(-1, tb.T + 1))
        chance = _lookup(table[held * (tb.T + 1) + size], scoring)
        blocks.append(jnp.where(legal, chance, jnp.float32(0)))
        # follow_up: this seat's tiles but the one each code plays (its two entries by halves)
        played = np.repeat(np.asarray(pair).T.reshape(tb.T, V, V), 4, axis=0)  # [4T, V, V]
        blocks.append(scaled(best(by_halves(own)[None] & ~jnp.asarray(played))))
    return blocks


def _any_over(term, n: int) -> jax.Array:
    """``term(0) | term(1) | ... | term(n - 1)``: on XLA's CPU backend, OR-ing a few slices is
    five times faster than ``jnp.any`` over the short ends axis here (measured; not so for
    ``best``'s reduction over values)."""
    out = term(0)
    for i in range(1, n):
        out = out | term(i)
    return out


def _pair_table(tb) -> np.ndarray:
    """``bool[V*V, T]``: row ``v * V + w`` marks the tile ``[v|w]`` (a static table)."""
    v, w = np.divmod(np.arange(tb.V * tb.V), tb.V)
    low, high = np.asarray(tb.low), np.asarray(tb.high)
    return ((low[None, :] == np.minimum(v, w)[:, None])
            & (high[None, :] == np.maximum(v, w)[:, None]))  # fmt: skip


def _lookup(table, index: jax.Array) -> jax.Array:
    """``table[index]`` for an array of indices into a small table, by one-hot (exact: one
    nonzero term; for long tables or many indices a gather is faster)."""
    table = jnp.asarray(table)
    hot = index[..., None] == jnp.arange(table.shape[0], dtype=I32)
    return sum_one_float(jnp.where(hot, table, jnp.float32(0)))
