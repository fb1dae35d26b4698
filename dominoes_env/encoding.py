"""Numpy encodings: the observation vector, the action mask, action codes and the global state.

Everything here is built from what one seat may know (a :class:`~dominoes_env.core.SeatView`),
so an agent can encode its own view exactly as the environment does, and the observation is
seat-relative: "own", then the next seat in turn order, and so on; one policy plays any seat.

Observation layout (``OBS_VERSION = 2``)
----------------------------------------
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

Actions
-------
``Discrete(T * 4)``: ``code = tile_index * 4 + end`` with ends ``left=0, right=1, up=2,
down=3``; the lead is played with end ``0``. :func:`encode_action` / :func:`decode_action`
convert. The action mask is 1 exactly at the core's legal codes for the seat to play.

Versions
--------
Every change to this layout bumps ``OBS_VERSION``. :data:`OBSERVATION_SPECS` holds every version
this package can encode (:func:`observation_spec` looks one up): this one, and version 3
(:mod:`dominoes_env.encoding_v3`: this layout plus ``reply_points``, a one-move lookahead). The
environments take ``obs_version`` (default ``OBS_VERSION``), and exported policies record the
version they were trained on, so ``ppo:PATH`` refuses a policy whose version is not registered.

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
>>> decode_action(encode_action(5, "up"))
(5, 2)
"""

from __future__ import annotations

import operator
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .core import (
    END_NAMES,
    PLAY,
    FullState,
    RuleConfig,
    SeatView,
    code_of,
    count_after,
    end_of,
    points_for_count,
    tile_of,
)
from .core.checks import as_int, is_bool

OBS_VERSION = 2

#: scores are divided by ``target_score`` and capped here (a side past the target has won)
SCORE_CAP = 2.0

NUM_ENDS = 4

_BINARY_BLOCKS = ("hand", "played", "end_value", "end_open", "end_double", "spinner",
                  "spinner_value", "spinner_free", "count_mod5", "turn", "others_lacks")
_SCALAR_BLOCKS = ("count", "others_hand_size", "boneyard", "scores", "move_points")

#: move_points holds points / MOVE_POINTS_DIVISOR
MOVE_POINTS_DIVISOR = 20.0

_MEANING = {
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
}


class ObservationLayout:
    """Named slices of the observation vector for one :class:`RuleConfig`, plus the tables
    the fast encoder uses. Get the shared instance with :func:`observation_layout`.

    Every block of the module table is an attribute holding a ``slice``: ``obs[lay.hand]``.

    >>> lay = observation_layout(RuleConfig(num_players=4))
    >>> lay.size, lay.others_lacks, lay.scores
    (252, slice(111, 132, None), slice(138, 140, None))
    """

    def __init__(self, rules: RuleConfig):
        ts = rules.tiles
        n = rules.num_players
        T, V = ts.num_tiles, ts.num_values
        sizes = {
            "hand": T, "played": T, "end_value": NUM_ENDS * V, "end_open": NUM_ENDS,
            "end_double": NUM_ENDS, "spinner": 1, "spinner_value": V, "spinner_free": 2,
            "count_mod5": 5, "turn": n, "others_lacks": (n - 1) * V,
            "count": 1, "others_hand_size": n - 1, "boneyard": 2, "scores": rules.num_sides,
            "move_points": T * NUM_ENDS,
        }  # fmt: skip
        self.rules = rules
        self.num_tiles, self.num_values, self.num_players = T, V, n
        self.num_actions = T * NUM_ENDS
        self.blocks: dict[str, slice] = {}
        start = 0
        for name in _BINARY_BLOCKS + _SCALAR_BLOCKS:
            self.blocks[name] = slice(start, start + sizes[name])
            setattr(self, name, self.blocks[name])
            start += sizes[name]
        self.size = start
        #: the 0/1 blocks are ``[0, num_binary)``; the scaled numbers follow
        self.num_binary = self.blocks["count"].start
        self._build_tables(rules)

    def __reduce__(self):
        # the packing tables hold struct.Struct methods, which cannot be pickled: a pickled
        # env (vector envs, multiprocessing) rebuilds its layout from the rules
        return observation_layout, (self.rules,)

    def _build_tables(self, rules: RuleConfig) -> None:
        ts = rules.tiles
        n, T, V = self.num_players, self.num_tiles, self.num_values
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
        self._rel_seats = tuple(tuple((seat + k) % n for k in range(1, n)) for seat in range(n))
        self._rel_lacks = tuple(
            tuple((s, b["others_lacks"].start + k * V) for k, s in enumerate(rel))
            for rel in self._rel_seats
        )
        rel_sides = []
        for seat in range(n):
            order: list[int] = []
            for k in range(n):
                side = rules.side_of((seat + k) % n)
                if side not in order:
                    order.append(side)
            rel_sides.append(tuple(order))
        self._rel_sides = tuple(rel_sides)
        self._low = ts.low
        self._dbl = ts.is_double
        self._count_scale = 1.0 / (8 * rules.max_pip)
        self._hand_scale = 1.0 / rules.hand_size
        self._bone_scale = 1.0 / max(1, rules.boneyard_size)
        self._score_scale = 1.0 / rules.target_score
        high = np.ones(self.size, dtype=np.float32)
        high[b["others_hand_size"]] = (rules.hand_size + rules.boneyard_size) / rules.hand_size
        high[b["scores"]] = SCORE_CAP
        high[b["move_points"]] = 8 * rules.max_pip / MOVE_POINTS_DIVISOR
        self._pips, self._dbl_tiles = ts.pips, ts.is_double
        self.low = np.zeros(self.size, dtype=np.float32)
        self.high = high
        self.low.flags.writeable = False
        self.high.flags.writeable = False
        self.state_size = (n + 1) * T + self.size

    def table(self) -> str:
        """The layout as a plain-text table: block, index range, size, meaning."""
        rows = [f"{'block':<18}{'range':<12}{'size':>5}  meaning"]
        for name, s in self.blocks.items():
            span = f"{s.start}:{s.stop}"
            rows.append(f"{name:<18}{span:<12}{s.stop - s.start:>5}  {_MEANING[name]}")
        return "\n".join(rows)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(size={self.size}, rules={self.rules!r})"


_LAYOUTS: dict[tuple[type, RuleConfig], ObservationLayout] = {}


def cached_layout(cls: type[ObservationLayout], rules: RuleConfig) -> ObservationLayout:
    """The shared instance of the layout class ``cls`` (a version's layout) for ``rules``."""
    lay = _LAYOUTS.get((cls, rules))
    if lay is None:
        if not isinstance(rules, RuleConfig):
            raise TypeError(f"rules must be a RuleConfig, not {type(rules).__name__}")
        lay = _LAYOUTS[cls, rules] = cls(rules)
    return lay


def observation_layout(rules: RuleConfig) -> ObservationLayout:
    """The (cached) :class:`ObservationLayout` of ``rules``."""
    return cached_layout(ObservationLayout, rules)


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


def _encode(lay: ObservationLayout, src, seat: int, own: int, sizes, masks: bool,
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
_INT8 = np.dtype(np.int8)

#: byte value -> its eight bits (lowest first) as little-endian float32 0.0 / 1.0
_FLOAT_BITS = tuple(
    b"".join(struct.pack("<f", float(x >> i & 1)) for i in range(8)) for x in range(256)
)


def _check_out(out, size: int, dtype) -> None:
    if out is not None and (
        not isinstance(out, np.ndarray) or out.shape != (size,) or out.dtype != dtype
    ):
        raise ValueError(
            f"out must be a numpy array of shape ({size},) and dtype {np.dtype(dtype)}"
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
    _check_out(out, lay.size, np.float32)
    turn = view.turn if view.winner is None else -1
    return _encode(lay, view, view.seat, view.hand, view.hand_sizes, False, view.boneyard_left,
                   view.drawable, view.scores, turn, view.legal if turn >= 0 else (), out)


def encode_hand_state(lay: ObservationLayout, hand: FullState, seat: int, scores, over: bool,
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


def action_mask(view: SeatView, out: np.ndarray | None = None) -> np.ndarray:
    """``int8`` mask over the ``T * 4`` action codes: 1 exactly at ``view.legal`` (all zeros
    when it is not this seat's turn).

    >>> from dominoes_env.core import MatchState
    >>> m = MatchState(seed=0)
    >>> np.flatnonzero(action_mask(m.view(m.turn))).tolist() == sorted(m.legal_actions())
    True
    """
    if not isinstance(view, SeatView):
        raise TypeError(f"action_mask needs a SeatView, not {type(view).__name__}")
    size = view.rules.num_tiles * NUM_ENDS
    _check_out(out, size, np.int8)
    mask = mask_of(view.legal, size)
    if out is None:
        return mask
    out[:] = mask
    return out


def mask_of(codes, size: int) -> np.ndarray:
    """A new ``int8`` array of ``size`` zeros with 1 at each of ``codes``."""
    buf = bytearray(size)
    for c in codes:
        buf[c] = 1
    return np.frombuffer(buf, _INT8)


def encode_action(tile_index: int, end: int | str | None = None,
                  num_tiles: int | None = None) -> int:
    """The action code of a tile index and an end (``0..3`` or ``"left"``, ``"right"``,
    ``"up"``, ``"down"``; ``None`` for the lead, which uses end 0).

    >>> encode_action(27, "left"), encode_action(27, None), encode_action(3, 2)
    (108, 108, 14)
    """
    tile_index = as_int("tile_index", tile_index)
    if tile_index < 0 or (num_tiles is not None and tile_index >= num_tiles):
        allowed = "a non-negative integer" if num_tiles is None else f"0..{num_tiles - 1}"
        raise ValueError(f"tile_index={tile_index} is out of range; allowed: {allowed}")
    if end is None:
        e = 0
    elif isinstance(end, str):
        if end not in END_NAMES:
            raise ValueError(f"unknown end {end!r}; allowed: {', '.join(END_NAMES)} or None")
        e = END_NAMES.index(end)
    elif not is_bool(end) and hasattr(end, "__index__") and 0 <= operator.index(end) < NUM_ENDS:
        e = operator.index(end)
    else:
        raise ValueError(
            f"end={end!r} is not an end; allowed: 0..3, {', '.join(END_NAMES)} or None"
        )
    return code_of(int(tile_index), e)


def decode_action(code: int, num_tiles: int | None = None) -> tuple[int, int]:
    """``(tile_index, end_index)`` of an action code.

    >>> decode_action(109)
    (27, 1)
    """
    code = as_int("action code", code)
    if code < 0 or (num_tiles is not None and code >= num_tiles * NUM_ENDS):
        top = None if num_tiles is None else num_tiles * NUM_ENDS - 1
        allowed = "a non-negative integer" if top is None else f"0..{top}"
        raise ValueError(f"action code {code} is out of range; allowed: {allowed}")
    return tile_of(int(code)), end_of(int(code))


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
    rules = match.rules
    lay = observation_layout(rules)
    _check_out(out, lay.state_size, np.float32)
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


def check_action(action, num_actions: int) -> int:
    """``action`` as an ``int`` code after checking its type and range (``TypeError`` /
    ``ValueError`` naming what is allowed). Legality is the core's business.

    >>> check_action(np.int32(5), 112)
    5
    >>> check_action(112, 112)
    Traceback (most recent call last):
    ...
    ValueError: action 112 is out of range; allowed: 0..111 (tile_index * 4 + end)
    """
    if isinstance(action, (bool, np.bool_)):
        raise TypeError(f"an action is an integer code (tile_index * 4 + end), not {action!r}")
    try:
        code = operator.index(action)
    except TypeError:
        raise TypeError(
            f"an action is an integer code (tile_index * 4 + end), not {action!r} "
            f"({type(action).__name__})"
        ) from None
    if not 0 <= code < num_actions:
        raise ValueError(
            f"action {code} is out of range; allowed: 0..{num_actions - 1} (tile_index * 4 + end)"
        )
    return code


# -- observation versions --------------------------------------------------------------------------


@dataclass(frozen=True)
class ObservationSpec:
    """One version of the observation: how it is laid out and encoded.

    ``layout(rules)`` returns an object with ``size``, ``low`` and ``high`` (the Box bounds);
    ``encode(view)`` encodes a :class:`SeatView`; ``encode_state(layout, state, seat, scores,
    over, out=None)`` encodes ``seat``'s observation straight from a full state (the
    environments' fast path, equal to ``encode`` of the view). Policies record the version they
    were trained on; a version stays registered as long as this package can still encode it.
    """

    version: int
    summary: str
    layout: Callable[[RuleConfig], Any]
    encode: Callable[..., np.ndarray]
    encode_state: Callable[..., np.ndarray]


#: every observation version this package can encode, by version number
OBSERVATION_SPECS: dict[int, ObservationSpec] = {}


def register_observation(spec: ObservationSpec) -> ObservationSpec:
    """Add an observation version to :data:`OBSERVATION_SPECS` (a version is registered once)."""
    if not isinstance(spec, ObservationSpec):
        raise TypeError(f"an observation spec is an ObservationSpec, not {type(spec).__name__}")
    if spec.version in OBSERVATION_SPECS:
        raise ValueError(f"observation version {spec.version} is already registered")
    OBSERVATION_SPECS[spec.version] = spec
    return spec


def observation_spec(version: int = OBS_VERSION) -> ObservationSpec:
    """The registered :class:`ObservationSpec` of ``version`` (``ValueError`` naming the
    registered versions otherwise).

    >>> observation_spec().version == OBS_VERSION
    True
    >>> observation_spec(1)
    Traceback (most recent call last):
    ...
    ValueError: obs_version=1 is not available; allowed: 2, 3, 4
    """
    spec = None
    if not is_bool(version):
        try:
            spec = OBSERVATION_SPECS.get(operator.index(version))
        except TypeError:
            spec = None
    if spec is None:
        allowed = ", ".join(map(str, sorted(OBSERVATION_SPECS)))
        raise ValueError(f"obs_version={version!r} is not available; allowed: {allowed}")
    return spec


register_observation(ObservationSpec(
    version=2,
    summary="the module table: binary blocks, then scaled counts, scores and move points",
    layout=observation_layout,
    encode=encode_observation,
    encode_state=encode_hand_state,
))

# registers versions 3 and 4, each built on the one before
from . import encoding_v3, encoding_v4  # noqa: E402, F401, I001
