"""Observation version 2, the default: the observation vector and the global state, in numpy.

Everything here is built from what one seat may know (a :class:`~dominoes_env.core.SeatView`),
so an agent can encode its own view exactly as the environment does, and the observation is
seat-relative: "own", then the next seat in turn order, and so on; one policy plays any seat.

Observation layout (version 2)
------------------------------
A flat ``float32`` vector. ``T`` = tiles in the set (28 for double-six), ``V = max_pip + 1`` pip
values, ``n`` = players, ``S`` = sides (2 with partnerships, else ``n``). Relative seat ``k`` is
seat ``(seat + k) % n``; relative sides are the sides of relative seats ``0, 1, ...`` in that
order, each listed once (own side first). Ends are indexed left, right, up, down. Tiles are
indexed as in :mod:`dominoes_env.core.tiles` (``[0|0], [0|1], ..., [m|m]``). The ``0/1`` blocks
come first, the scaled numbers last. Columns "2p d6" and "4p d6" give the ranges for two players
and for four players in partnerships with double-six.

================  =========  =========  ==========  ===============================================
block             size       2p d6      4p d6       meaning
================  =========  =========  ==========  ===============================================
hand              T          0:28       0:28        1 for each tile in this seat's hand
played            T          28:56      28:56       1 for each tile in the layout
end_value         4*V        56:84      56:84       one-hot value showing at each end (row ``e``
                                                    of ``reshape(4, V)``); zeros where the end has
                                                    no value (before the lead; up/down with no
                                                    spinner)
end_open          4          84:88      84:88       1 if the end takes tiles now
end_double        4          88:92      88:92       1 if the end's outer tile is an uncovered
                                                    double (it counts both halves)
spinner           1          92:93      92:93       1 once the hand has a spinner
spinner_value     V          93:100     93:100      one-hot pip value of the spinner
spinner_free      2          100:102    100:102     1 while the spinner is the outer tile of the
                                                    left / right side (that side still empty)
count_mod5        5          102:107    102:107     one-hot ``count % 5`` (zeros before the lead)
turn              n          107:109    107:111     one-hot relative seat to play (zeros when the
                                                    hand or match is over)
others_lacks      (n-1)*V    109:116    111:132     per relative seat 1..n-1, 1 for each pip value
                                                    it is known not to hold (from its draws and
                                                    passes)
count             1          116:117    132:133     layout count / (8 * max_pip)
others_hand_size  n-1        117:118    133:136     per relative seat 1..n-1, tiles in hand /
                                                    ``hand_size``
boneyard          2          118:120    136:138     tiles left in the boneyard, tiles still
                                                    drawable; each / ``max(1, boneyard_size)``
scores            S          120:122    138:140     per relative side, score / ``target_score``,
                                                    capped at 2
move_points       T*4        122:234    140:252     per action code, the points that legal move
                                                    would score now / 20 (0 for the others and
                                                    when it is not this seat's turn)
================  =========  =========  ==========  ===============================================

Sizes: 234 (2 players), 244 (3), 252 (4 in partnerships), 254 (4 without), 414 (2 players,
double-nine). :func:`observation_layout` gives the named slices for any rules, and
``observation_layout(rules).table()`` prints this table for them.

Actions (``Discrete(T * 4)``: ``code = tile_index * 4 + end``) and their masks are the same
for every version: :mod:`dominoes_env.obs.actions`.

Versions
--------
Every change to this layout is a new version, registered in :mod:`dominoes_env.obs`
(:func:`~dominoes_env.obs.observation_spec` looks one up): this one (the
:data:`~dominoes_env.obs.DEFAULT_VERSION`), version 3 (:mod:`dominoes_env.obs.v3`: this layout
plus ``reply_points``, a one-move lookahead) and version 4 (:mod:`dominoes_env.obs.v4`). The
environments take ``obs_version``, and exported policies record the version they were trained
on, so ``ppo:PATH`` refuses a policy whose version is not registered.

Global state
------------
:func:`state_vector` (the AEC env's ``state()``, for centralised critics): every seat's hand
(``n * T``, seat 0 first), the tiles still in the boneyard (``T``), then seat 0's observation
(``D``), which is in absolute seat order since seat 0 is relative seat 0.

>>> from dominoes_env.core import MatchState
>>> match = MatchState(seed=3)
>>> obs = encode_observation(match.view(0))
>>> obs.shape, obs.dtype.name, int(obs[observation_layout(match.rules).hand].sum())
((234,), 'float32', 7)
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from ..core import (
    PLAY,
    FullState,
    RuleConfig,
    SeatView,
    count_after,
    end_of,
    points_for_count,
    tile_of,
)
from . import NUM_ENDS, ObservationLayout, ObservationSpec, cached_layout, check_out, register

VERSION = 2

#: scores are divided by ``target_score`` and capped here (a side past the target has won)
SCORE_CAP = 2.0

#: move_points holds points / MOVE_POINTS_DIVISOR
MOVE_POINTS_DIVISOR = 20.0

#: block -> what it holds (:meth:`ObservationLayoutV2.table`); later versions extend it
MEANINGS = MappingProxyType({
    "hand": "1 for each tile in this seat's hand",
    "played": "1 for each tile in the layout",
    "end_value": "one-hot value showing at each end (row e of reshape(4, V))",
    "end_open": "1 if the end takes tiles now",
    "end_double": "1 if the end's outer tile is an uncovered double",
    "spinner": "1 once the hand has a spinner",
    "spinner_value": "one-hot pip value of the spinner",
    "spinner_free": "1 while the spinner is the outer tile of the left / right side",
    "count_mod5": "one-hot count % 5 (zeros before the lead)",
    "turn": "one-hot relative seat to play (zeros when the hand or match is over)",
    "others_lacks": "per relative seat 1..n-1, pip values it is known not to hold",
    "count": "layout count / (8 * max_pip)",
    "others_hand_size": "per relative seat 1..n-1, tiles in hand / hand_size",
    "boneyard": "tiles left, tiles drawable; each / max(1, boneyard_size)",
    "scores": "per relative side, score / target_score, capped at 2",
    "move_points": "per action code, points the legal move would score now / 20",
})


class ObservationLayoutV2(ObservationLayout):
    """Named slices of the version 2 observation vector for one :class:`RuleConfig`, plus the
    tables the fast encoder uses. Get the shared instance with :func:`observation_layout`.

    Every block of the module table is an attribute holding a ``slice``: ``obs[lay.hand]``.

    >>> lay = observation_layout(RuleConfig(num_players=4))
    >>> lay.size, lay.others_lacks, lay.scores
    (252, slice(111, 132, None), slice(138, 140, None))
    """

    version = VERSION
    MEANINGS = MEANINGS

    def __init__(self, rules: RuleConfig):
        super().__init__(rules)
        n, T, V = self.num_players, self.num_tiles, self.num_values
        top_points = 8 * rules.max_pip / MOVE_POINTS_DIVISOR
        for name, size, high in (
            ("hand", T, 1.0), ("played", T, 1.0), ("end_value", NUM_ENDS * V, 1.0),
            ("end_open", NUM_ENDS, 1.0), ("end_double", NUM_ENDS, 1.0), ("spinner", 1, 1.0),
            ("spinner_value", V, 1.0), ("spinner_free", 2, 1.0), ("count_mod5", 5, 1.0),
            ("turn", n, 1.0), ("others_lacks", (n - 1) * V, 1.0),
            ("count", 1, 1.0),
            ("others_hand_size", n - 1, (rules.hand_size + rules.boneyard_size) / rules.hand_size),
            ("boneyard", 2, 1.0), ("scores", rules.num_sides, SCORE_CAP),
            ("move_points", T * NUM_ENDS, top_points),
        ):  # fmt: skip
            self.add_block(name, size, high)
        #: the 0/1 blocks are ``[0, num_binary)``; the scaled numbers follow
        self.num_binary = self.blocks["count"].start
        self._build_tables(rules)

    def _build_tables(self, rules: RuleConfig) -> None:
        ts = rules.tiles
        n, V = self.num_players, self.num_values
        b = self.blocks
        self._nbytes = (self.num_binary + 7) // 8
        self._last_shift = 8 * (self._nbytes - 1)
        tail = self.num_binary - self._last_shift  # 0/1 values in the last byte
        self._last_bits = tuple(x[: 4 * tail] for x in _FLOAT_BITS)
        # the scaled numbers before move_points are packed in one call; move_points starts as
        # zero bytes with the few scoring moves written in
        moves = self.num_tiles * NUM_ENDS
        self._pack_scalars = struct.Struct(f"<{self.size - self.num_binary - moves}f").pack
        self._zero_moves = bytes(4 * moves)
        self._played_shift = b["played"].start
        ev = [[1 << (b["end_value"].start + e * V + v) for v in range(V)] for e in range(NUM_ENDS)]
        ob = [1 << (b["end_open"].start + e) for e in range(NUM_ENDS)]
        #: left / right: value bit | open bit (both open from the lead on)
        self._lr_bits = tuple(tuple(x | ob[e] for x in ev[e]) for e in (0, 1))
        #: up / down, indexed [cross_open][end - 2][value]
        self._ud_bits = tuple(
            tuple(tuple(x | (ob[e] if is_open else 0) for x in ev[e]) for e in (2, 3))
            for is_open in (False, True)
        )
        self._double_bit = tuple(1 << (b["end_double"].start + e) for e in range(NUM_ENDS))
        self._spinner_bits = tuple(
            1 << b["spinner"].start | 1 << (b["spinner_value"].start + v) for v in range(V)
        )
        self._free_bit = (1 << b["spinner_free"].start, 1 << (b["spinner_free"].start + 1))
        self._mod5_bit = tuple(1 << (b["count_mod5"].start + r) for r in range(5))
        #: [seat][turn] -> the bit of the turn's relative seat
        self._turn_bits = tuple(
            tuple(1 << (b["turn"].start + (turn - seat) % n) for turn in range(n))
            for seat in range(n)
        )
        #: [seat] -> the other seats in relative order; their known-lacks shifts
        self._rel_seats = tuple(rules.relative_seats(seat)[1:] for seat in range(n))
        self._rel_lacks = tuple(
            tuple((s, b["others_lacks"].start + k * V) for k, s in enumerate(rel))
            for rel in self._rel_seats
        )
        self._rel_sides = tuple(rules.relative_sides(seat) for seat in range(n))
        self._low = ts.low
        self._dbl = ts.is_double
        self._count_scale = 1.0 / (8 * rules.max_pip)
        self._hand_scale = 1.0 / rules.hand_size
        self._bone_scale = 1.0 / max(1, rules.boneyard_size)
        self._score_scale = 1.0 / rules.target_score
        self._pips, self._dbl_tiles = ts.pips, ts.is_double


def observation_layout(rules: RuleConfig) -> ObservationLayoutV2:
    """The (cached) :class:`ObservationLayoutV2` of ``rules``."""
    return cached_layout(ObservationLayoutV2, rules)


def observation_size(rules: RuleConfig) -> int:
    """Length of the observation vector for ``rules``.

    >>> [observation_size(RuleConfig(num_players=n)) for n in (2, 3, 4)]
    [234, 244, 252]
    """
    return observation_layout(rules).size


# -- the encoder ---------------------------------------------------------------------------------


def _last_play_on_end_is_double(src, end: int, dbl) -> bool:
    """Whether the newest tile played on ``end`` (not the lead) is a double. Only needed when
    the end shows 0, where the end's count cannot tell ``[0|0]`` from ``[x|0]``."""
    if not src.played & 1:  # [0|0] (tile 0) is not in the layout
        return False
    history = src.history
    for i in range(len(history) - 1, 0, -1):  # index 0 is the lead
        ev = history[i]
        if ev[0] == PLAY and end_of(ev[2]) == end:
            return dbl[tile_of(ev[2])]
    return False


def _encode(lay: ObservationLayoutV2, src, seat: int, own: int, sizes, masks: bool,
            boneyard_left: int, drawable: int, scores, turn: int, legal,
            out: np.ndarray | None) -> np.ndarray:
    """The one encoder. ``src`` is any :class:`~dominoes_env.core.PublicState` (a ``SeatView``,
    a ``HandState``, another backend's state): the layout fields are read from it under the
    protocol's names; the rest comes as arguments (``sizes[s]``: seat ``s``'s
    hand size, or its hand bitmask when ``masks``). The 0/1 blocks are gathered as the bits of
    one integer from per-rules tables, then expanded to float32 bytes a byte at a time."""
    bits = own | src.played << lay._played_shift
    lead = src.lead
    if lead >= 0:
        v0, v1, v2, v3 = src.ends
        a0, a1, a2, a3 = src.arm
        lr, db, dbl = lay._lr_bits, lay._double_bit, lay._dbl
        bits |= lr[0][v0] | lr[1][v1]
        c = src.contrib
        # a covered end's outer tile is a double iff it counts twice its value (at 0 ask history)
        if a0:
            if c[0] == v0 + v0 and (v0 or _last_play_on_end_is_double(src, 0, dbl)):
                bits |= db[0]
        elif dbl[lead]:
            bits |= db[0]
        if a1:
            if c[1] == v1 + v1 and (v1 or _last_play_on_end_is_double(src, 1, dbl)):
                bits |= db[1]
        elif dbl[lead]:
            bits |= db[1]
        spinner = src.spinner
        if spinner >= 0:  # up and down show the spinner's value from the start
            ud = lay._ud_bits[src.cross_open]
            bits |= ud[0][v2] | ud[1][v3] | lay._spinner_bits[lay._low[spinner]]
            if a2 and c[2] == v2 + v2 and (v2 or _last_play_on_end_is_double(src, 2, dbl)):
                bits |= db[2]
            if a3 and c[3] == v3 + v3 and (v3 or _last_play_on_end_is_double(src, 3, dbl)):
                bits |= db[3]
            free = src.spinner_free
            if free[0]:
                bits |= lay._free_bit[0]
            if free[1]:
                bits |= lay._free_bit[1]
        count = src.count
        bits |= lay._mod5_bit[count % 5]
    else:
        count = 0
    if turn >= 0:
        bits |= lay._turn_bits[seat][turn]
    lacks = src.known_lacks
    for s, shift in lay._rel_lacks[seat]:
        bits |= lacks[s] << shift
    rel = lay._rel_seats[seat]
    # each byte of ``bits`` becomes eight float32 0.0 / 1.0 values by table lookup (the last
    # byte's table stops at the end of the 0/1 blocks), then the packed scaled numbers follow
    float_bits = _FLOAT_BITS
    chunks = [float_bits[x] for x in bits.to_bytes(lay._nbytes, "little")]
    chunks[-1] = lay._last_bits[bits >> lay._last_shift]
    hs, bs, ss = lay._hand_scale, lay._bone_scale, lay._score_scale
    values = [count * lay._count_scale]
    if masks:
        for s in rel:
            values.append(sizes[s].bit_count() * hs)
    else:
        for s in rel:
            values.append(sizes[s] * hs)
    values.append(boneyard_left * bs)
    values.append(drawable * bs)
    for side in lay._rel_sides[seat]:
        x = scores[side] * ss
        values.append(x if x < SCORE_CAP else SCORE_CAP)
    chunks.append(lay._pack_scalars(*values))
    # move_points: what each legal code ("legal", the seat's own moves when it is to play) scores
    moves = lay._zero_moves
    if legal:
        lead, lead_pips, ends = src.lead, src.lead_pips, src.ends
        contrib, arm = src.contrib, src.arm
        pips, dbl_tiles = lay._pips, lay._dbl_tiles
        for code in legal:
            p = points_for_count(count_after(code, lead, lead_pips, ends, contrib, arm, pips,
                                             dbl_tiles))
            if p:
                if moves is lay._zero_moves:
                    moves = bytearray(moves)
                _pack_float_into(moves, 4 * code, p / MOVE_POINTS_DIVISOR)
    chunks.append(moves)
    buf = bytearray().join(chunks)
    obs = np.frombuffer(buf, _FLOAT32)
    if out is None:
        return obs
    out[:] = obs
    return out


_FLOAT32 = np.dtype(np.float32)
_pack_float_into = struct.Struct("<f").pack_into

#: byte value -> its eight bits (lowest first) as little-endian float32 0.0 / 1.0
_FLOAT_BITS = tuple(
    b"".join(struct.pack("<f", float(x >> i & 1)) for i in range(8)) for x in range(256)
)


def encode_observation(view: SeatView, out: np.ndarray | None = None) -> np.ndarray:
    """The observation vector of a seat's view (see the module table), as ``float32``.

    ``out``: an array of shape ``(observation_size(rules),)`` and dtype ``float32`` to fill
    (every element is written); otherwise a new array is returned.

    >>> from dominoes_env.core import HandState
    >>> hand = HandState.from_tiles(RuleConfig(), leader=0, hands=[
    ...     [(6, 6), (6, 3), (1, 2), (0, 0), (2, 2), (3, 3), (4, 5)],
    ...     [(5, 5), (0, 1), (1, 1), (2, 3), (3, 4), (0, 6), (1, 6)]])
    >>> _ = hand.play(((6, 6), None))
    >>> obs, lay = encode_observation(hand.view(1)), observation_layout(hand.rules)
    >>> obs[lay.end_value].reshape(4, 7).argmax(axis=1).tolist(), obs[lay.end_double].tolist()
    ([6, 6, 6, 6], [1.0, 1.0, 0.0, 0.0])
    >>> obs[lay.count_mod5].tolist(), float(obs[lay.count][0] * 48)
    ([0.0, 0.0, 1.0, 0.0, 0.0], 12.0)
    """
    if not isinstance(view, SeatView):
        raise TypeError(f"encode_observation needs a SeatView, not {type(view).__name__}")
    lay = observation_layout(view.rules)
    check_out(out, lay.size, np.float32)
    turn = view.turn if view.winner is None else -1
    return _encode(lay, view, view.seat, view.hand, view.hand_sizes, False, view.boneyard_left,
                   view.drawable, view.scores, turn, view.legal if turn >= 0 else (), out)


def encode_hand_state(lay: ObservationLayoutV2, hand: FullState, seat: int, scores, over: bool,
                      out: np.ndarray | None = None, legal=None) -> np.ndarray:
    """Fast path for the environments: ``seat``'s observation read straight from a full state
    (a :class:`~dominoes_env.core.FullState` such as a ``HandState``, plus the match ``scores``;
    ``over`` when the match has ended), without building a :class:`SeatView`. It reads the
    :class:`~dominoes_env.core.PublicState` fields, ``hands[seat]`` and the legal codes (from
    ``hand.legal_actions()``, unless the caller passes them as ``legal``), and the tests check it
    equals :func:`encode_observation` of the view at every step."""
    hands = hand.hands
    turn = -1 if over else hand.turn
    if turn != seat:
        legal = ()
    elif legal is None:
        legal = hand.legal_actions()
    return _encode(lay, hand, seat, hands[seat], hands, True, hand.boneyard_left,
                   hand.drawable, scores, turn, legal, out)


def state_vector(match, out: np.ndarray | None = None, hand: FullState | None = None
                 ) -> np.ndarray:
    """The full global state of a :class:`~dominoes_env.core.MatchState` (all hands), for
    centralised critics: every seat's hand (``n * T``, seat 0 first), the tiles still in the
    boneyard (``T``), then seat 0's observation. ``hand`` overrides ``match.hand`` (the env
    passes the hand of a finished one-hand episode); it is read through the
    :class:`~dominoes_env.core.FullState` protocol (``hands``, ``boneyard_tiles``).

    >>> from dominoes_env.core import MatchState
    >>> m = MatchState(seed=1)
    >>> s = state_vector(m)
    >>> s.shape, int(s[: 2 * 28].sum()), int(s[2 * 28 : 3 * 28].sum())
    ((318,), 14, 14)
    """
    rules = getattr(match, "rules", None)
    if not isinstance(rules, RuleConfig):  # None was an AttributeError
        raise TypeError(f"state_vector needs a MatchState (or a match with rules and a hand), "
                        f"not {type(match).__name__}")
    lay = observation_layout(rules)
    check_out(out, lay.state_size, np.float32)
    if out is None:
        out = np.empty(lay.state_size, dtype=np.float32)
    hand = match.hand if hand is None else hand
    T, n = lay.num_tiles, lay.num_players
    bits = 0
    for s in range(n):
        bits |= hand.hands[s] << (s * T)
    for t in hand.boneyard_tiles:
        bits |= 1 << (n * T + t)
    nbits = (n + 1) * T
    out[:nbits] = np.unpackbits(
        np.frombuffer(bits.to_bytes((nbits + 7) // 8, "little"), dtype=np.uint8),
        count=nbits, bitorder="little",
    )
    encode_hand_state(lay, hand, 0, match.scores, match.winner is not None, out[nbits:])
    return out


def state_bounds(rules: RuleConfig) -> tuple[np.ndarray, np.ndarray]:
    """``(low, high)`` of :func:`state_vector` for ``rules``."""
    lay = observation_layout(rules)
    k = (lay.num_players + 1) * lay.num_tiles
    return (np.zeros(lay.state_size, dtype=np.float32),
            np.concatenate([np.ones(k, dtype=np.float32), lay.high]))


# -- how a later version extends this one -----------------------------------------------------
#: ``fill(lay, out, src, seat, own, legal)`` writes a later version's blocks (after
#: ``lay.v2_size``, already zero) for the legal moves of ``seat`` holding ``own`` in ``src`` (a
#: seat's view or a full hand state)
Fill = Callable[[Any, np.ndarray, Any, int, int, Sequence[int]], None]


def _extended(lay, v2: np.ndarray, src, seat: int, own: int, legal, fill: Fill,
              out: np.ndarray | None) -> np.ndarray:
    if out is None:
        out = np.zeros(lay.size, dtype=np.float32)
    else:
        out[lay.v2_size:] = 0.0
    out[: lay.v2_size] = v2
    if legal:
        fill(lay, out, src, seat, own, legal)
    return out


def extend_view(view: SeatView, lay, fill: Fill, out: np.ndarray | None = None) -> np.ndarray:
    """A later version's observation of a seat's view: this version's, then the blocks
    ``fill`` writes into the later ``lay`` (``out`` as in :func:`encode_observation`)."""
    if not isinstance(view, SeatView):
        raise TypeError(f"encode_observation needs a SeatView, not {type(view).__name__}")
    check_out(out, lay.size, np.float32)
    legal = view.legal if view.winner is None and view.turn == view.seat else ()
    return _extended(lay, encode_observation(view), view, view.seat, view.hand, legal, fill, out)


def extend_hand_state(lay, hand: FullState, seat: int, scores, over: bool, fill: Fill,
                      out: np.ndarray | None = None, legal=None) -> np.ndarray:
    """A later version's observation straight from a full state (the environments' fast
    path; equal to :func:`extend_view` of the seat's view)."""
    if over or hand.turn != seat:
        legal = ()
    elif legal is None:
        legal = hand.legal_actions()
    v2 = encode_hand_state(lay, hand, seat, scores, over, legal=legal)
    return _extended(lay, v2, hand, seat, hand.hands[seat], legal, fill, out)


register(ObservationSpec(
    version=VERSION,
    summary="the module table: binary blocks, then scaled counts, scores and move points",
    layout=observation_layout,
    encode=encode_observation,
    encode_state=encode_hand_state,
    takes_legal=True,
))
