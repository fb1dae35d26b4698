"""Observation version 4: version 3 plus ``reply_chance`` (how likely the next seat holds a
scoring answer to each legal move) and ``follow_up`` (this seat's best next play with the tiles
it keeps). Exact values from the rules on a set position, the chance table against its formula,
then properties over random games on every rule configuration: version 3 is its prefix, the
fast path equals the view's encoding, and both blocks equal their definitions written out on
full states."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dominoes_env import SingleAgentEnv, env
from dominoes_env.core import HandState, MatchState, RuleConfig, count_after, points_for_count
from dominoes_env.core.layout import Layout, place
from dominoes_env.encoding import observation_spec
from dominoes_env.encoding_v4 import encode_observation_v4, observation_layout_v4
from dominoes_env.lookahead import move_lookahead, reply_chance, reply_chance_table

from .test_core_properties import CONFIGS

V3, V4 = observation_spec(3), observation_spec(4)


def test_layout_is_version_3_plus_two_blocks_per_action_code():
    for n, v3_size in ((2, 346), (3, 356), (4, 364)):
        rules = RuleConfig(num_players=n)
        lay, v3 = observation_layout_v4(rules), V3.layout(rules)
        assert lay.size == v3_size + 224 and lay.v3_size == v3.size == v3_size
        assert lay.reply_chance == slice(v3_size, v3_size + 112)
        assert lay.follow_up == slice(v3_size + 112, lay.size)
        np.testing.assert_array_equal(lay.high[:v3_size], v3.high)
        assert np.all(lay.high[lay.reply_chance] == 1) and lay.high[-1] == 48 / 20
        assert "reply_chance" in lay.table() and "follow_up" in lay.table()
    assert V4.layout is observation_layout_v4 and V4.encode is encode_observation_v4


def test_values_after_a_spinner_lead_and_one_play():
    hand = HandState.from_tiles(RuleConfig(), leader=0, hands=[
        [(6, 6), (6, 3), (1, 2), (0, 0), (2, 2), (3, 3), (4, 5)],
        [(5, 5), (0, 1), (1, 1), (2, 3), (3, 4), (0, 6), (1, 6)]])  # fmt: skip
    hand.play(((6, 6), None))
    hand.play(((6, 1), "left"))
    view = hand.view(0)  # ends 1 (left) and 6 (the spinner, still free on the right): count 13
    ts, lay = hand.rules.tiles, observation_layout_v4(hand.rules)
    obs = encode_observation_v4(view)
    code = ts.index(1, 2) * 4 + 0  # [1|2] on the left: ends 2 and 6, count 2 + 12 = 14
    # the next seat may hold 28 - 6 (ours) - 2 (played) = 20 tiles; one of them scores: [2|3]
    # on the left (3 + 12 = 15); [6|3] on the right would make 2 + 3 but it is ours
    assert move_lookahead(view, 0, view.hand, [code]) == {code: (15, 1, 20, 5)}
    # it holds 6 of them: no [2|3] among 6 of 20 has chance C(19, 6) / C(20, 6) = 14 / 20
    assert obs[lay.reply_chance][code] == np.float32(6 / 20)
    # ours next, were the layout unchanged: [6|3] on the right makes 2 + 3 = 5
    assert obs[lay.follow_up][code] == np.float32(5 / 20)
    assert obs[lay.reply_points][code] == np.float32(15 / 20)
    # [0|0], [2|2], [3|3], [4|5] do not fit; only the legal codes carry values
    legal = set(view.legal)
    for block in (lay.reply_points, lay.reply_chance, lay.follow_up):
        assert {c for c in range(lay.num_actions) if obs[block][c]} <= legal
    assert not encode_observation_v4(hand.view(1))[lay.v2_size:].any()  # not its turn


@pytest.mark.parametrize("num_tiles", [28, 55])
def test_the_chance_table_is_the_hypergeometric_formula(num_tiles):
    table = reply_chance_table(num_tiles)
    assert table.shape == (num_tiles + 1,) * 3 and table.dtype == np.float32
    assert not table.flags.writeable and reply_chance_table(num_tiles) is table
    rng = random.Random(num_tiles)
    for _ in range(300):
        u = rng.randrange(num_tiles + 1)
        h, k = rng.randrange(u + 1), rng.randrange(u + 1)
        miss = math.comb(u - k, h) / math.comb(u, h)
        assert table[h, u, k] == np.float32(1 - miss)
    assert table[0, 10, 10] == 0 and table[3, 10, 8] == 1 and table[10, 10, 1] == 1
    assert reply_chance(2, 4, 1) == np.float32(0.5)  # C(3, 2) / C(4, 2) = 1/2 miss it


def brute_force(hand: HandState, seat: int) -> dict[int, tuple[float, int]]:
    """``{code: (chance, follow_up points)}`` written out on a full state: the next seat's
    possible tiles counted one by one, then the formula; our own tiles but the one played on
    every end open after the move."""
    rules, ts = hand.rules, hand.rules.tiles
    nxt = (seat + 1) % rules.num_players
    lacks = hand.known_lacks[nxt]
    own = hand.hands[seat]

    def points(x, u):
        a, b = ts.tiles[u]
        return max((points_for_count(count_after(u * 4 + e, x.lead, x.lead_pips, x.ends,
                                                 x.contrib, x.arm, ts.pips, ts.is_double))
                    for e in range(4 if x.cross_open else 2) if x.ends[e] in (a, b)),
                   default=0)  # fmt: skip

    possible = [u for u, (a, b) in enumerate(ts.tiles)
                if not (own >> u & 1 or hand.played >> u & 1 or lacks >> a & 1
                        or lacks >> b & 1)]  # fmt: skip
    held = min(hand.hands[nxt].bit_count(), len(possible))
    out = {}
    for code in hand.legal_actions():
        x = Layout.of(hand)
        place(x, code)
        k = sum(1 for u in possible if points(x, u))
        chance = 1 - math.comb(len(possible) - k, held) / math.comb(len(possible), held)
        mine = max((points(x, u) for u in range(ts.num_tiles)
                    if own >> u & 1 and u != code >> 2), default=0)
        out[code] = (chance, mine)
    return out


@settings(max_examples=60, deadline=None)
@given(config=st.sampled_from(sorted(CONFIGS)), seed=st.integers(0, 2**31 - 1))
def test_version_4_properties_over_random_games(config, seed):
    rules = RuleConfig(**CONFIGS[config])
    lay, v3 = V4.layout(rules), V3.layout(rules)
    rng = random.Random(seed)
    match = MatchState(rules, seed=seed)
    for _ in range(60):
        if match.winner is not None:
            break
        hand, seat = match.hand, match.turn
        view = match.view(seat)
        obs = V4.encode(view)
        np.testing.assert_array_equal(obs[: v3.size], V3.encode(view))
        for s in range(rules.num_players):
            np.testing.assert_array_equal(
                V4.encode_state(lay, hand, s, match.scores, False), V4.encode(match.view(s)))
        assert np.all(obs >= lay.low) and np.all(obs <= lay.high)
        for code, (chance, mine) in brute_force(hand, seat).items():
            assert obs[lay.reply_chance][code] == pytest.approx(chance, abs=1e-6)
            assert obs[lay.follow_up][code] == np.float32(mine / 20)
            # a chance of a scoring answer exactly when some possible tile scores
            assert (obs[lay.reply_chance][code] > 0) == (obs[lay.reply_points][code] > 0) or (
                hand.hands[(seat + 1) % rules.num_players] == 0)
        match.play(rng.choice(view.legal))


def test_the_environments_serve_version_4():
    from pettingzoo.test import api_test

    aec = env(obs_version=4)
    api_test(aec, num_cycles=60)
    aec.reset(seed=2)
    agent = aec.agent_selection
    obs = aec.observe(agent)["observation"]
    assert obs.shape == (570,) and aec.observation_space(agent)["observation"].contains(obs)
    single = SingleAgentEnv(obs_version=4, seat=0)
    first, _ = single.reset(seed=1)
    assert first.shape == (570,) and single.observation_space.contains(first)
