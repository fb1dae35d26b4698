"""Static tables of one rule configuration, built once in numpy from the core's ``RuleConfig``.

Everything here is a constant of the compiled program: tile pips and halves, which tiles carry
which pip value, the seat-to-side map, the seat-relative orders of the observation, and the
float32 values of the observation's scaled numbers. The scaled numbers are tabulated from the
same double-precision arithmetic as :mod:`dominoes_env.obs.v2` (``float32(x * (1.0 / d))``)
so the JAX observation equals the numpy one bit for bit. The orders are the core's: the
relative seats and sides (:meth:`RuleConfig.relative_seats` / ``relative_sides``) and the
greedy tie-break (:func:`dominoes_env.core.tie_rank`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dominoes_env.core import SCORE_UNIT, MatchState, RuleConfig, tie_rank
from dominoes_env.core.layout import SPINNER_FIRST, SPINNER_LEAD, SPINNER_MODES, SPINNER_NONE
from dominoes_env.obs import NUM_ENDS
from dominoes_env.obs.v2 import (
    MOVE_POINTS_DIVISOR,
    SCORE_CAP,
    encode_observation,
    observation_layout,
)

__all__ = ["SPINNER_FIRST", "SPINNER_LEAD", "SPINNER_NONE", "Tables", "build_tables"]


def _f32_table(values) -> np.ndarray:
    """Python floats (doubles) rounded to float32, as the numpy encoder packs them."""
    return np.array(list(values), dtype=np.float64).astype(np.float32)


@dataclass(frozen=True, eq=False)
class Tables:
    """Constants of one :class:`RuleConfig` (``T`` tiles, ``V`` pip values, ``n`` seats,
    ``S`` sides, ``B`` boneyard tiles after the deal)."""

    rules: RuleConfig
    T: int
    V: int
    n: int
    S: int
    B: int
    hand_size: int
    draw_limit: int  #: boneyard positions ``0 .. draw_limit - 1`` may be drawn
    spinner_mode: int
    cross_now: bool
    pips: np.ndarray  #: int32[T]
    low: np.ndarray  #: int32[T]
    high: np.ndarray  #: int32[T]
    is_double: np.ndarray  #: bool[T]
    suit: np.ndarray  #: bool[V, T]: tile t has a half equal to v
    side: np.ndarray  #: int32[n]: side of each seat
    rel_seats: np.ndarray  #: int32[n, n]: [seat, k] = (seat + k) % n
    rel_sides: np.ndarray  #: int32[n, S]: the sides in the observation's relative order
    count_f32: np.ndarray  #: float32[8m+1]: count / (8 * max_pip)
    points_f32: np.ndarray  #: float32[8m+1]: points / 20
    points_step: float  #: 5 / 20, a power of two: points / 20 = (points / 5) * points_step
    hand_f32: np.ndarray  #: float32[T+1]: tiles / hand_size
    bone_f32: np.ndarray  #: float32[B+1]: tiles / max(1, boneyard_size)
    score_f32: np.ndarray  #: float32[2*target+2]: min(score / target_score, 2)
    tie_rank: np.ndarray  #: int32[4T]: greedy tie-break place of each action code (the core's)
    obs_size: int
    # per action code ``t * 4 + e`` (the tile's values repeated for its four ends): the JAX game
    # computes its per-code blocks on [4T] rows from these and never broadcasts a per-game
    # [4] row of ends over [T, 4] (XLA's CPU backend runs that broadcast element by element)
    code_end: np.ndarray  #: int32[4T]: the end ``e`` of each code
    code_low: np.ndarray  #: int32[4T]: the low half of its tile
    code_high: np.ndarray  #: int32[4T]: the high half of its tile
    code_pips: np.ndarray  #: int32[4T]: its tile's pips
    code_double: np.ndarray  #: bool[4T]: its tile is a double
    # tile sets as bit masks (a hand, the layout's tiles): tile ``t`` is bit ``t % 32`` of word
    # ``t // 32``, ``W = ceil(T / 32)`` uint32 words (one for double-six, three for
    # double-twelve; JAX runs without 64-bit integers)
    W: int
    suit_bits: np.ndarray  #: uint32[V, W]: the tiles with a half equal to v
    pip_planes: np.ndarray  #: uint32[P, W]: the tiles whose pips have bit k set (k < P)
    code_word: np.ndarray  #: int32[4T]: the word of each code's tile
    code_bit: np.ndarray  #: uint32[4T]: the bit of each code's tile in its word
    #: float32[version 2 size]: the version 2 observation of the seat to play in the first state
    #: of every match, its ``hand`` and ``move_points`` blocks zeroed (:func:`first_observation`)
    first_obs: np.ndarray

    @property
    def num_actions(self) -> int:
        return self.T * NUM_ENDS


def bit_words(rows: np.ndarray, W: int) -> np.ndarray:
    """``uint32[..., W]``: the tile sets ``rows`` (``bool[..., T]``) as bit masks."""
    rows = np.asarray(rows, dtype=bool)
    padded = np.zeros(rows.shape[:-1] + (32 * W,), dtype=bool)
    padded[..., : rows.shape[-1]] = rows
    weights = (np.uint64(1) << np.arange(32, dtype=np.uint64)).astype(np.uint64)
    words = (padded.reshape(rows.shape[:-1] + (W, 32)) * weights).sum(axis=-1)
    return words.astype(np.uint32)


def build_tables(rules: RuleConfig) -> Tables:
    ts = rules.tiles
    T, V, n, S = ts.num_tiles, ts.num_values, rules.num_players, rules.num_sides
    B = rules.boneyard_size
    W = -(-T // 32)
    pips = np.array(ts.pips, dtype=np.int64)
    suit = np.zeros((V, T), dtype=bool)
    for t, (a, b) in enumerate(ts.tiles):
        suit[a, t] = suit[b, t] = True
    rel_seats = np.array([rules.relative_seats(s) for s in range(n)], dtype=np.int32)
    rel_sides = [rules.relative_sides(s) for s in range(n)]
    top = 8 * rules.max_pip  # the largest count four ends can show
    points_f32 = _f32_table(c / MOVE_POINTS_DIVISOR for c in range(top + 1))
    points_step = SCORE_UNIT / MOVE_POINTS_DIVISOR
    fifths = np.arange(0, top + 1, SCORE_UNIT)
    if not np.array_equal(points_f32[fifths], (fifths // SCORE_UNIT).astype(np.float32)
                          * np.float32(points_step)):  # fmt: skip
        raise AssertionError(f"move points are no longer exact multiples of {SCORE_UNIT} / "
                             "divisor")
    return Tables(
        rules=rules, T=T, V=V, n=n, S=S, B=B, hand_size=rules.hand_size,
        draw_limit=B - rules.boneyard_reserve,
        spinner_mode=SPINNER_MODES[rules.spinner],
        cross_now=rules.spinner_cross == "immediately",
        pips=np.array(ts.pips, dtype=np.int32), low=np.array(ts.low, dtype=np.int32),
        high=np.array(ts.high, dtype=np.int32), is_double=np.array(ts.is_double, dtype=bool),
        suit=suit,
        side=np.array([rules.side_of(s) for s in range(n)], dtype=np.int32),
        rel_seats=rel_seats, rel_sides=np.array(rel_sides, dtype=np.int32),
        # the same expressions as dominoes_env.obs.v2, in double precision
        count_f32=_f32_table(c * (1.0 / top) for c in range(top + 1)),
        points_f32=points_f32, points_step=points_step,
        hand_f32=_f32_table(k * (1.0 / rules.hand_size) for k in range(T + 1)),
        bone_f32=_f32_table(k * (1.0 / max(1, B)) for k in range(B + 1)),
        score_f32=_f32_table(
            min(k * (1.0 / rules.target_score), SCORE_CAP)
            for k in range(2 * rules.target_score + 2)
        ),
        tie_rank=np.array(tie_rank(rules.max_pip), dtype=np.int32),
        obs_size=observation_layout(rules).size,
        code_end=np.tile(np.arange(NUM_ENDS, dtype=np.int32), T),
        code_low=np.repeat(np.array(ts.low, dtype=np.int32), NUM_ENDS),
        code_high=np.repeat(np.array(ts.high, dtype=np.int32), NUM_ENDS),
        code_pips=np.repeat(np.array(ts.pips, dtype=np.int32), NUM_ENDS),
        code_double=np.repeat(np.array(ts.is_double, dtype=bool), NUM_ENDS),
        W=W, suit_bits=bit_words(suit, W),
        pip_planes=bit_words([(pips >> k) & 1 for k in range(int(pips.max()).bit_length())], W),
        code_word=np.repeat(np.arange(T, dtype=np.int32) // 32, NUM_ENDS),
        code_bit=np.repeat(np.arange(T, dtype=np.uint32) % 32, NUM_ENDS),
        first_obs=first_observation(rules),
    )  # fmt: skip


def first_observation(rules: RuleConfig) -> np.ndarray:
    """``float32[size]``: the version 2 observation (:mod:`dominoes_env.obs.v2`) the seat to
    play has in the first state of a match, with its ``hand`` and ``move_points`` blocks
    zeroed: the rest is the same in every such state (nothing played, no score, every seat
    holding its dealt hand, seen by the seat to play), so the JAX env's ``init`` writes only
    those two blocks (``tests/jax/test_env.py`` checks it on many deals). Encoded by the core,
    from one deal.

    >>> obs = first_observation(RuleConfig())
    >>> lay = observation_layout(RuleConfig())
    >>> float(obs[lay.hand].sum()), float(obs[lay.move_points].sum()), obs[lay.others_hand_size]
    (0.0, 0.0, array([1.], dtype=float32))
    """
    match = MatchState(rules, seed=0)
    obs = encode_observation(match.view(match.turn))
    lay = observation_layout(rules)
    obs[lay.hand] = 0
    obs[lay.move_points] = 0
    obs.flags.writeable = False
    return obs
