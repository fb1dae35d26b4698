"""Observation version 3: version 2 plus ``reply_points``, the next seat's best answer to each
legal move. Exact values from the rules on set positions, then properties over random games on
every rule configuration: version 2 is its prefix, the fast path equals the view's encoding,
the next seat's real tiles are always among the tiles it "may hold", and the reply threat is
never below what its real hand could answer."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.ppo import PPOAgent, random_policy_npz
from dominoes_env import SingleAgentEnv, env
from dominoes_env.core import HandState, MatchState, RuleConfig, count_after, points_for_count
from dominoes_env.core.layout import Layout, place
from dominoes_env.encoding import encode_observation, observation_layout, observation_spec
from dominoes_env.encoding_v3 import encode_observation_v3, observation_layout_v3
from dominoes_env.lookahead import possible_tiles, reply_points

from .test_core_properties import CONFIGS

V3 = observation_spec(3)


def spinner_hand() -> HandState:
    """[6|6] led as the spinner; seat 1 to play."""
    hand = HandState.from_tiles(RuleConfig(), leader=0, hands=[
        [(6, 6), (6, 3), (1, 2), (0, 0), (2, 2), (3, 3), (4, 5)],
        [(5, 5), (0, 1), (1, 1), (2, 3), (3, 4), (0, 6), (1, 6)]])  # fmt: skip
    hand.play(((6, 6), None))
    return hand


def replies_of(view) -> dict[int, int]:
    lay = observation_layout_v3(view.rules)
    obs = encode_observation_v3(view)
    return {c: round(float(obs[lay.reply_points][c]) * 20) for c in range(lay.num_actions)
            if obs[lay.reply_points][c]}


def test_layout_is_version_2_plus_one_block_per_action_code():
    for n, size in ((2, 346), (3, 356), (4, 364)):
        rules = RuleConfig(num_players=n)
        lay, v2 = observation_layout_v3(rules), observation_layout(rules)
        assert lay.size == size == v2.size + 112 and lay.reply_points == slice(v2.size, size)
        assert lay.high.shape == lay.low.shape == (size,)
        np.testing.assert_array_equal(lay.high[: v2.size], v2.high)
        assert lay.high[-1] == 48 / 20 and "reply_points" in lay.table()
    assert V3.layout is observation_layout_v3 and V3.encode is encode_observation_v3


def test_reply_points_on_a_spinner_lead():
    hand = spinner_hand()
    ts = hand.rules.tiles
    view = hand.view(1)  # holds [5|5] [0|1] [1|1] [2|3] [3|4] [0|6] [1|6]; ends 6/6, count 12
    # seat 0 may hold every tile seat 1 cannot see: 28 - 7 - 1, none of them known lacking
    assert possible_tiles(view, 0, view.hand).bit_count() == 20
    got = reply_points(view, 1, view.hand, view.legal)
    # [6|0] left: count 0 + 12 (the spinner still counts 12 on the right); seat 0 answers [0|3]
    # on the left, 12 + 3 = 15 ([6|5] on the right makes only 0 + 5)
    assert got[ts.index(0, 6) * 4 + 0] == got[ts.index(0, 6) * 4 + 1] == 15
    # [6|1] left: count 13; [1|3] on the left makes 12 + 3 = 15 ([1|0] and [1|1] are seat 1's)
    assert got[ts.index(1, 6) * 4 + 0] == 15
    # only the seat to play has a reply block
    assert not replies_of(hand.view(0))
    assert replies_of(view) == {c: p for c, p in got.items() if p}


def test_a_move_that_opens_the_cross_is_answered_on_up_and_down():
    """[6|6] spinner, [6|2] left, then [6|3] right covers both long sides: the cross opens and
    the count is 2 + 3 = 5. On the left [2|w] makes 3 + w and on the right [3|w] 2 + w, and
    neither reaches a multiple of 5 ([2|2] counts 4: 7; [3|3] is the mover's); on up or down
    [6|w] makes 5 + w: [6|5] scores 10."""
    hand = HandState.from_tiles(RuleConfig(), leader=0, hands=[
        [(6, 6), (6, 3), (1, 2), (0, 0), (3, 3), (4, 5), (1, 1)],
        [(6, 2), (5, 5), (0, 1), (2, 3), (3, 4), (0, 6), (1, 6)]])  # fmt: skip
    hand.play(((6, 6), None))
    hand.play(((6, 2), "left"))
    ts = hand.rules.tiles
    view = hand.view(0)
    code = ts.index(3, 6) * 4 + 1
    x = Layout.of(view)
    assert place(x, code) == 5 and x.cross_open
    assert reply_points(view, 0, view.hand, [code]) == {code: 10}
    assert brute_force(hand, 0)[code] == 10
    # once seat 1 is known to lack 5 (say it passed on a 5), [6|5] is out and [6|0] makes 5
    hand.known_lacks[1] = 1 << 5
    assert reply_points(hand.view(0), 0, view.hand, [code]) == {code: 5}


def brute_force(hand: HandState, seat: int) -> dict[int, int]:
    """The definition, written out on full states: play each move on a copy of the layout, then
    every tile of the set that ``seat`` does not hold and that is not on the layout, lacks
    permitting, on every end open after it."""
    rules = hand.rules
    ts = rules.tiles
    nxt = (seat + 1) % rules.num_players
    lacks = hand.known_lacks[nxt]
    out = {}
    for code in hand.legal_actions():
        x = Layout.of(hand)
        place(x, code)
        best = 0
        for u, (a, b) in enumerate(ts.tiles):
            if hand.hands[seat] >> u & 1 or hand.played >> u & 1 or u == code >> 2:
                continue
            if lacks >> a & 1 or lacks >> b & 1:
                continue
            for e in range(4 if x.cross_open else 2):
                if x.ends[e] in (a, b):
                    best = max(best, points_for_count(count_after(
                        u * 4 + e, x.lead, x.lead_pips, x.ends, x.contrib, x.arm, ts.pips,
                        ts.is_double)))
        out[code] = best
    return out


@settings(max_examples=60, deadline=None)
@given(config=st.sampled_from(sorted(CONFIGS)), seed=st.integers(0, 2**31 - 1))
def test_version_3_properties_over_random_games(config, seed):
    rules = RuleConfig(**CONFIGS[config])
    lay, v2 = V3.layout(rules), observation_layout(rules)
    rng = random.Random(seed)
    match = MatchState(rules, seed=seed)
    for _ in range(60):
        if match.winner is not None:
            break
        hand, seat = match.hand, match.turn
        view = match.view(seat)
        obs = V3.encode(view)
        # version 2 is its prefix; the fast path equals the view's encoding, for every seat
        np.testing.assert_array_equal(obs[: v2.size], encode_observation(view))
        for s in range(rules.num_players):
            np.testing.assert_array_equal(
                V3.encode_state(lay, hand, s, match.scores, False), V3.encode(match.view(s)))
        assert np.all(obs >= lay.low) and np.all(obs <= lay.high)
        replies = reply_points(view, seat, view.hand, view.legal)
        assert replies == brute_force(hand, seat)
        # sound: the next seat really holds only tiles it "may hold", so no real answer scores
        # more than the threat
        nxt = (seat + 1) % rules.num_players
        assert hand.hands[nxt] & ~possible_tiles(view, nxt, view.hand) == 0
        for code in view.legal:
            x = Layout.of(hand)
            place(x, code)
            for e in range(4 if x.cross_open else 2):
                for u in range(rules.num_tiles):
                    if hand.hands[nxt] >> u & 1 and rules.tiles.suit_mask[x.ends[e]] >> u & 1:
                        p = points_for_count(count_after(u * 4 + e, x.lead, x.lead_pips, x.ends,
                                                         x.contrib, x.arm, rules.tiles.pips,
                                                         rules.tiles.is_double))  # fmt: skip
                        assert p <= replies[code]
        match.play(rng.choice(view.legal))


def test_the_environments_serve_version_3():
    from pettingzoo.test import api_test

    aec = env(obs_version=3)
    api_test(aec, num_cycles=60)
    aec.reset(seed=2)
    agent = aec.agent_selection
    obs = aec.observe(agent)["observation"]
    assert obs.shape == (346,) and aec.observation_space(agent)["observation"].contains(obs)
    single = SingleAgentEnv(obs_version=3, seat=0)
    first, _ = single.reset(seed=1)
    assert first.shape == (346,) and single.observation_space.contains(first)


@pytest.mark.parametrize(("version", "size"), [(3, 346), (4, 570)])
def test_a_lookahead_policy_plays_and_decides_within_a_millisecond(tmp_path, version, size):
    import time

    path = tmp_path / f"v{version}.npz"
    random_policy_npz(path, RuleConfig(), hidden=(256, 256), obs_version=version)
    agent = PPOAgent(path)
    assert agent.policy.obs_spec is observation_spec(version)
    assert agent.policy.obs_size == size
    match = MatchState(seed=8)
    times = []
    while match.winner is None:
        view = match.view(match.turn)
        start = time.perf_counter()
        code = agent.act(view)
        times.append(time.perf_counter() - start)
        assert code in view.legal
        match.play(code)
    assert float(np.median(times)) < 1e-3, f"median {np.median(times) * 1e3:.2f} ms"
