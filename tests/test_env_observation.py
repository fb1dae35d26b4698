"""The observation encoding: exact values, an independent reference, seat-relativity, hidden
information, the fast path the env uses, and the documented layout table."""

from __future__ import annotations

import doctest
import importlib
import random
import re
from pathlib import Path

import numpy as np
import pytest

import dominoes_env
from dominoes_env.core import HandState, MatchState, RuleConfig, points_for_count
from dominoes_env.obs import v2
from dominoes_env.obs.actions import action_mask, check_action, decode_action, encode_action
from dominoes_env.obs.v2 import (
    encode_hand_state,
    encode_observation,
    observation_layout,
    observation_size,
    state_vector,
)
from tests.helpers import scripted_hand

from .helpers import ENV_CONFIGS  # noqa: E402
from .reference import ENDS, ReferenceLayout

CONFIGS = ENV_CONFIGS
VARIANTS = {
    **CONFIGS,
    "no-spinner": dict(num_players=3, spinner="none"),
    "lead-double-only": dict(num_players=2, spinner="lead_double_only", boneyard_reserve=2),
    "cross-now": dict(num_players=4, spinner_cross="immediately", max_pip=9, hand_size=9),
    "d12": dict(num_players=3, max_pip=12, hand_size=12, target_score=100),
}


# -- an independent, slow reference encoder ---------------------------------------------------


def reference_observation(view) -> np.ndarray:
    """The module table, feature by feature, from a SeatView; the outer tile of every end is
    found by replaying the history (not from the counts the fast encoder uses)."""
    rules = view.rules
    ts = rules.tiles
    n, T, V = rules.num_players, ts.num_tiles, ts.num_values
    lay = observation_layout(rules)
    obs = np.zeros(lay.size, dtype=np.float32)
    seat = view.seat
    for i in range(T):
        obs[lay.hand.start + i] = view.hand >> i & 1
        obs[lay.played.start + i] = view.played >> i & 1
    plays = [ev[2] for ev in view.history if ev[0] == "play"]
    if plays:
        outer = [plays[0] >> 2, plays[0] >> 2, None, None]
        for code in plays[1:]:
            outer[code & 3] = code >> 2
        for e in range(4):
            v = view.ends[e]
            if v < 0:
                continue
            obs[lay.end_value.start + e * V + v] = 1
            obs[lay.end_open.start + e] = e < 2 or view.cross_open
            obs[lay.end_double.start + e] = outer[e] is not None and ts.is_double[outer[e]]
        if view.spinner >= 0:
            obs[lay.spinner.start] = 1
            obs[lay.spinner_value.start + ts.low[view.spinner]] = 1
            obs[lay.spinner_free.start] = view.spinner_free[0]
            obs[lay.spinner_free.start + 1] = view.spinner_free[1]
        obs[lay.count_mod5.start + view.count % 5] = 1
    if view.turn >= 0 and view.winner is None:
        obs[lay.turn.start + (view.turn - seat) % n] = 1
    for k in range(1, n):
        other = (seat + k) % n
        for v in range(V):
            obs[lay.others_lacks.start + (k - 1) * V + v] = view.known_lacks[other] >> v & 1
        obs[lay.others_hand_size.start + k - 1] = view.hand_sizes[other] / rules.hand_size
    obs[lay.count.start] = view.count / (8 * rules.max_pip)
    bone = max(1, rules.boneyard_size)
    obs[lay.boneyard.start] = view.boneyard_left / bone
    obs[lay.boneyard.start + 1] = view.drawable / bone
    sides = []
    for k in range(n):
        side = rules.side_of((seat + k) % n)
        if side not in sides:
            sides.append(side)
    for j, side in enumerate(sides):
        obs[lay.scores.start + j] = min(view.scores[side] / rules.target_score, 2.0)
    if view.winner is None:  # each legal move's points, from the rules' reference layout
        plays = [(ev[2] >> 2, None if i == 0 else ENDS[ev[2] & 3])
                 for i, ev in enumerate(e for e in view.history if e[0] == "play")]
        for code in view.legal:
            layout = ReferenceLayout(rules)
            for tile, end in plays + [(code >> 2, None if not plays else ENDS[code & 3])]:
                layout.play(tile, end)
            obs[lay.move_points.start + code] = points_for_count(layout.count()) / 20
    return obs


def random_matches(options: dict, games: int, seed: int):
    """Yield every position (before each play) of random matches."""
    rng = random.Random(seed)
    for g in range(games):
        match = MatchState(RuleConfig(**options), seed=seed * 1000 + g)
        while not match.is_over:
            yield match
            legal = match.legal_actions()
            match.play(legal[rng.randrange(len(legal))])
        yield match


# -- layout ----------------------------------------------------------------------------------


def test_sizes_per_config():
    sizes = {name: observation_size(RuleConfig(**kw)) for name, kw in CONFIGS.items()}
    assert sizes == {"2p": 234, "3p": 244, "4p": 252, "4p-solo": 254, "d9": 414}


@pytest.mark.parametrize("name", list(VARIANTS))
def test_blocks_tile_the_vector(name):
    lay = observation_layout(RuleConfig(**VARIANTS[name]))
    stops = 0
    for block in lay.blocks.values():
        assert block.start == stops and block.stop > block.start
        stops = block.stop
    assert stops == lay.size and lay.num_binary == lay.count.start
    assert lay.low.shape == lay.high.shape == (lay.size,)


README = Path(dominoes_env.__file__).with_name("README.md")


@pytest.mark.parametrize("text, row", [
    (v2.__doc__, r"^(\w+)\s+\S+\s+(\d+):(\d+)\s+(\d+):(\d+)\s"),
    (README.read_text(), r"^\| `(\w+)` \| [^|]+ \| (\d+):(\d+) \| (\d+):(\d+) \|"),
], ids=["docstring", "README"])
def test_documented_tables_match_the_code(text, row):
    rows = {}
    for line in text.splitlines():
        m = re.match(row, line)
        if m:
            rows[m[1]] = (slice(int(m[2]), int(m[3])), slice(int(m[4]), int(m[5])))
    two, four = observation_layout(RuleConfig()), observation_layout(RuleConfig(num_players=4))
    assert set(rows) == set(two.blocks)
    for name, (s2, s4) in rows.items():
        assert (two.blocks[name], four.blocks[name]) == (s2, s4), name


def test_table_method_lists_every_block():
    text = observation_layout(RuleConfig(num_players=3)).table()
    assert all(f"{name} " in text for name in observation_layout(RuleConfig()).blocks)
    assert "others_lacks      110:124" in text


# -- exact values ----------------------------------------------------------------------------


def _obs(hand, seat=0, scores=(0, 0)):
    lay = observation_layout(hand.rules)
    return encode_hand_state(lay, hand, seat, list(scores), False), lay


def _ends(obs, lay):
    values = obs[lay.end_value].reshape(4, lay.num_values)
    return [int(r.argmax()) if r.any() else None for r in values]


def test_rules_example_2_spinner_cross():
    moves = [((6, 6), None), ((6, 3), "left"), ((6, 2), "right"), ((6, 5), "up"),
             ((6, 0), "down"), ((5, 5), "up"), ((5, 1), "up")]
    hand = scripted_hand(moves)
    for move in moves[:2]:
        hand.play(move)
    obs, lay = _obs(hand)
    assert _ends(obs, lay) == [3, 6, 6, 6]
    assert obs[lay.end_open].tolist() == [1, 1, 0, 0]
    assert obs[lay.end_double].tolist() == [0, 1, 0, 0]  # the spinner's right side is free
    assert obs[lay.spinner_free].tolist() == [0, 1]
    assert obs[lay.spinner].tolist() == [1] and obs[lay.spinner_value].argmax() == 6
    assert obs[lay.count_mod5].argmax() == 0 and obs[lay.count][0] == pytest.approx(15 / 48)
    for move in moves[2:6]:
        hand.play(move)
    obs, lay = _obs(hand)
    assert _ends(obs, lay) == [3, 2, 5, 0]
    assert obs[lay.end_open].tolist() == [1, 1, 1, 1]
    assert obs[lay.end_double].tolist() == [0, 0, 1, 0]  # [5|5] on up
    assert obs[lay.spinner_free].tolist() == [0, 0]
    assert obs[lay.count][0] == pytest.approx(15 / 48)
    played = {hand.rules.tiles.index(*t) for t, _ in moves[:6]}
    assert set(np.flatnonzero(obs[lay.played])) == played


def test_rules_example_3_double_at_the_end_of_a_line():
    hand = scripted_hand([((4, 4), None), ((4, 1), "left"), ((1, 1), "left")])
    for move in [((4, 4), None), ((4, 1), "left"), ((1, 1), "left")]:
        hand.play(move)
    obs, lay = _obs(hand, seat=1)
    assert _ends(obs, lay) == [1, 4, 4, 4]
    assert obs[lay.end_double].tolist() == [1, 1, 0, 0]
    assert obs[lay.count_mod5].argmax() == 0  # count 10


def test_zero_ends_tell_double_zero_from_a_plain_tile():
    # [0|0] on the right shows 0 and is a double (the spinner); [4|0] on the left shows 0, plain
    moves = [((3, 4), None), ((4, 0), "right"), ((3, 0), "left"), ((0, 0), "right")]
    hand = scripted_hand(moves)
    for move in moves[:2]:
        hand.play(move)
    obs, lay = _obs(hand)
    assert _ends(obs, lay)[:2] == [3, 0] and obs[lay.end_double].tolist() == [0, 0, 0, 0]
    for move in moves[2:]:
        hand.play(move)
    obs, lay = _obs(hand)
    assert _ends(obs, lay) == [0, 0, 0, 0]
    assert obs[lay.end_double].tolist() == [0, 1, 0, 0]
    assert obs[lay.spinner].tolist() == [1] and obs[lay.spinner_value].argmax() == 0


def test_empty_layout_and_turn():
    hand = scripted_hand([((6, 6), None)], rules=RuleConfig(num_players=3), leader=2)
    obs, lay = _obs(hand, seat=0, scores=(0, 0, 0))
    assert not obs[lay.end_value].any() and not obs[lay.count_mod5].any()
    assert obs[lay.turn].tolist() == [0, 0, 1]  # seat 2 is relative seat 2 for seat 0
    obs, lay = _obs(hand, seat=2, scores=(0, 0, 0))
    assert obs[lay.turn].tolist() == [1, 0, 0]
    assert obs[lay.boneyard].tolist() == [1.0, 1.0] and obs[lay.hand].sum() == 7


def test_seat_relative_order_in_partnerships():
    rules = RuleConfig(num_players=4, target_score=100)
    hand = HandState.deal(rules, random.Random(4), leader=0)
    hand.known_lacks = [0b1, 0b10, 0b100, 0b1000]
    lay = observation_layout(rules)
    obs = encode_hand_state(lay, hand, 1, [30, 60], False)
    lacks = obs[lay.others_lacks].reshape(3, 7)
    assert [int(r.argmax()) for r in lacks] == [2, 3, 0]  # seats 2, 3, 0
    assert obs[lay.scores].tolist() == pytest.approx([0.6, 0.3])  # own side (1) first
    assert obs[lay.turn].tolist() == [0, 0, 0, 1]  # seat 0 is relative seat 3
    assert obs[lay.scores].max() <= 2.0
    capped = encode_hand_state(lay, hand, 0, [500, 0], False)
    assert capped[lay.scores].tolist() == [2.0, 0.0]


# -- the encoder against the reference, and the env's fast path against the view path ---------


@pytest.mark.parametrize("name", list(VARIANTS))
def test_every_position_matches_the_reference(name):
    lay = observation_layout(RuleConfig(**VARIANTS[name]))
    positions = 0
    for match in random_matches(VARIANTS[name], games=2, seed=11):
        over = match.winner is not None
        for seat in range(match.rules.num_players):
            view = match.view(seat)
            expected = reference_observation(view)
            got = encode_observation(view)
            np.testing.assert_array_equal(got, expected)
            fast = encode_hand_state(lay, match.hand, seat, match.scores, over)
            np.testing.assert_array_equal(fast, got)
            # the legal codes handed in by a caller that has them (guided's rollouts)
            given = encode_hand_state(lay, match.hand, seat, match.scores, over,
                                      legal=match.hand.legal_actions())
            np.testing.assert_array_equal(given, got)
            assert np.all(got >= lay.low) and np.all(got <= lay.high)
        positions += 1
    assert positions > 50


@pytest.mark.parametrize("name", list(CONFIGS))
def test_mask_is_exactly_the_legal_moves(name):
    for match in random_matches(CONFIGS[name], games=3, seed=5):
        for seat in range(match.rules.num_players):
            mask = action_mask(match.view(seat))
            expected = sorted(match.legal_actions()) if seat == match.turn else []
            assert mask.dtype == np.int8 and np.flatnonzero(mask).tolist() == expected


def test_out_buffers_are_filled_and_checked():
    match = MatchState(seed=9)
    view = match.view(match.turn)
    out = np.full(234, 7.0, dtype=np.float32)
    assert encode_observation(view, out) is out
    np.testing.assert_array_equal(out, encode_observation(view))
    mask_out = np.ones(112, dtype=np.int8)
    assert action_mask(view, mask_out) is mask_out and mask_out.sum() == len(view.legal)
    with pytest.raises(ValueError, match="shape"):
        encode_observation(view, np.zeros(10, dtype=np.float32))
    with pytest.raises(ValueError, match="dtype float32"):
        encode_observation(view, np.zeros(234, dtype=np.float64))
    with pytest.raises(TypeError, match="SeatView"):
        encode_observation(match)


# -- hidden information ----------------------------------------------------------------------


def _swap_deal(hand: HandState, seat_a: int, x: int, seat_b: int | None, y: int) -> HandState:
    """The same deal with tile ``x`` (held by ``seat_a``) and ``y`` (held by ``seat_b``, or in
    the boneyard when None) exchanged."""
    hands = list(hand.dealt[0])
    bone = list(hand.dealt[1])
    hands[seat_a] ^= 1 << x | 1 << y
    if seat_b is None:
        bone[bone.index(y)] = x
    else:
        hands[seat_b] ^= 1 << x | 1 << y
    return HandState(hand.rules, hands, bone, hand.leader)


@pytest.mark.parametrize("name", ["2p", "3p", "4p", "d9"])
def test_hidden_tiles_do_not_change_the_observation(name):
    rules = RuleConfig(**CONFIGS[name])
    lay = observation_layout(rules)
    rng = random.Random(3)
    compared = 0
    for trial in range(30):
        a = HandState.deal(rules, rng, leader=trial % rules.num_players)
        game = a.copy()
        codes = []
        while game.turn >= 0:
            legal = game.legal_actions()
            codes.append(legal[rng.randrange(len(legal))])
            game.apply_unchecked(codes[-1])
        # tiles seat 1 and another hidden place hold from the deal to the end
        kept_1 = a.dealt[0][1] & game.hands[1]
        if rules.num_players > 2:
            other, kept_2 = 2, a.dealt[0][2] & game.hands[2]
        else:
            other, kept_2 = None, 0
            for t in a.dealt[1][game.drawn:]:
                kept_2 |= 1 << t
        if not kept_1 or not kept_2:
            continue
        x = (kept_1 & -kept_1).bit_length() - 1
        y = (kept_2 & -kept_2).bit_length() - 1
        b = _swap_deal(a, 1, x, other, y)
        for code in codes:
            if a.history != b.history:
                break
            for hs in (a, b):
                assert hs.turn >= 0
            obs_a = encode_hand_state(lay, a, 0, [0] * rules.num_sides, False)
            obs_b = encode_hand_state(lay, b, 0, [0] * rules.num_sides, False)
            np.testing.assert_array_equal(obs_a, obs_b)
            np.testing.assert_array_equal(encode_observation(a.view(0)), obs_b)
            assert action_mask(a.view(0)).tolist() == action_mask(b.view(0)).tolist()
            # the seat whose tiles differ does see the difference
            assert not np.array_equal(encode_observation(a.view(1)), encode_observation(b.view(1)))
            compared += 1
            if code not in b.legal_actions():
                break
            a.apply_unchecked(code)
            b.apply_unchecked(code)
    assert compared >= 60


# -- actions and global state ------------------------------------------------------------------


def test_action_codes_round_trip():
    for tile in range(28):
        for end, name in enumerate(("left", "right", "up", "down")):
            code = encode_action(tile, name, num_tiles=28)
            assert code == encode_action(tile, end) == tile * 4 + end
            assert decode_action(code, num_tiles=28) == (tile, end)
    assert encode_action(5) == 20
    with pytest.raises(ValueError, match="allowed: 0..27"):
        encode_action(28, 0, num_tiles=28)
    with pytest.raises(ValueError, match="unknown end 'middle'"):
        encode_action(1, "middle")
    with pytest.raises(ValueError, match=r"unknown end 4; allowed: left, right, up, down or 0..3"):
        encode_action(1, 4)  # the words of play's refusal: one reading of an end
    with pytest.raises(TypeError):
        encode_action(1.5, 0)
    with pytest.raises(ValueError, match="allowed: 0..111"):
        decode_action(112, num_tiles=28)


@pytest.mark.parametrize("bad, error", [(True, TypeError), (1.0, TypeError), ("3", TypeError),
                                        (None, TypeError), (-1, ValueError), (112, ValueError),
                                        (np.array([3]), TypeError)])
def test_check_action_rejects(bad, error):
    with pytest.raises(error, match="action"):
        check_action(bad, 112)


def test_check_action_accepts_numpy_integers():
    assert check_action(np.int64(7), 112) == 7 and check_action(np.array(7), 112) == 7


@pytest.mark.parametrize("name", ["2p", "4p"])
def test_state_vector_holds_every_hand(name):
    rules = RuleConfig(**CONFIGS[name])
    lay = observation_layout(rules)
    n, T = rules.num_players, rules.num_tiles
    for match in random_matches(CONFIGS[name], games=1, seed=2):
        s = state_vector(match)
        hand = match.hand
        assert s.shape == (lay.state_size,) and s.dtype == np.float32
        for seat in range(n):
            held = np.flatnonzero(s[seat * T:(seat + 1) * T])
            assert sum(1 << int(i) for i in held) == hand.hands[seat]
        bone = {int(i) for i in np.flatnonzero(s[n * T:(n + 1) * T])}
        assert bone == set(hand.boneyard[hand.drawn:])
        np.testing.assert_array_equal(s[(n + 1) * T:], reference_observation(match.view(0)))


@pytest.mark.parametrize("module", ["dominoes_env.obs", "dominoes_env.obs.v2",
                                    "dominoes_env.obs.v3", "dominoes_env.obs.v4",
                                    "dominoes_env.obs.actions", "dominoes_env.encoding",
                                    "dominoes_env.options",
                                    "dominoes_env.render.layout", "dominoes_env.render.ansi",
                                    "dominoes_env.render.svg", "dominoes_env.render.image",
                                    "dominoes_env.aec", "dominoes_env.registration",
                                    "dominoes_env"])
def test_docstring_examples(module):
    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0
