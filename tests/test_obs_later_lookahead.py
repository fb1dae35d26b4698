"""Observation version 5: version 4 plus ``later_reply_points`` and ``later_reply_chance``, the
lookahead of each seat after the next one (at three and four seats), as if the seats between
it and the mover passed.

Exact values from the rules on a set position; the layout at every table; then properties over
random games on every rule configuration: version 4 is its prefix, the fast path equals the
view's encoding, every later seat's entries equal their definition written out on full states,
and that seat's real tiles are always among those it "may hold"; the environments and a policy
serve it."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.ppo import PPOAgent, random_policy_npz
from dominoes_env import SingleAgentEnv, env
from dominoes_env.core import HandState, MatchState, RuleConfig
from dominoes_env.lookahead import later_replies, possible_tiles
from dominoes_env.obs import observation_spec
from dominoes_env.obs.v5 import encode_observation_v5, observation_layout_v5

from .helpers import CONFIGS
from .test_obs_lookahead import brute_force, checked_positions

SPEC, V4 = observation_spec(5), observation_spec(4)


@pytest.mark.parametrize("players, partnerships, size", [
    (2, None, 570), (3, None, 804), (4, True, 1036), (4, False, 1038)])
def test_layout_is_version_4_plus_a_row_per_later_seat(players, partnerships, size):
    rules = RuleConfig(num_players=players, partnerships=partnerships)
    lay, old = SPEC.layout(rules), V4.layout(rules)
    rows = (players - 2) * 112  # one row of 112 action codes per seat after the next
    assert lay.size == size == old.size + 2 * rows and lay.v4_size == old.size
    assert lay.later_reply_points == slice(old.size, old.size + rows)
    assert lay.later_reply_chance == slice(old.size + rows, old.size + 2 * rows)
    np.testing.assert_array_equal(lay.high[: old.size], old.high)
    assert np.all(lay.high[lay.later_reply_points] == np.float32(48 / 20))
    assert np.all(lay.high[lay.later_reply_chance] == 1) and not lay.low.any()
    assert (SPEC.layout, SPEC.encode) == (observation_layout_v5, encode_observation_v5)


def three_player_hand() -> HandState:
    """[6|6] led as the spinner by seat 0, [6|1] on its left by seat 1: ends 1 and 6 (the
    spinner's right still free), count 1 + 12 = 13; seat 2 to play, holding [0|2] [0|3] [0|4]
    [0|5] [1|3] [1|4] [1|5]."""
    hand = HandState.from_tiles(RuleConfig(num_players=3), leader=0, hands=[
        [(6, 6), (6, 3), (1, 2), (0, 0), (2, 2), (3, 3), (4, 5)],
        [(5, 5), (0, 1), (1, 1), (2, 3), (3, 4), (0, 6), (1, 6)],
        [(0, 2), (0, 3), (0, 4), (0, 5), (1, 3), (1, 4), (1, 5)]])  # fmt: skip
    hand.play(((6, 6), None))
    hand.play(((6, 1), "left"))
    return hand


def test_the_seat_after_the_next_on_a_set_position():
    hand = three_player_hand()
    ts, view = hand.rules.tiles, hand.view(2)
    lay, obs = observation_layout_v5(hand.rules), encode_observation_v5(view)
    # seat 1 comes after seat 0; it may hold 28 - 7 (seat 2's) - 2 (played) = 19 tiles
    assert possible_tiles(view, 1, view.hand).bit_count() == 19
    sizes, replies = later_replies(view, 2, view.hand, view.legal)
    three, four = ts.index(1, 3) * 4, ts.index(1, 4) * 4  # on the left (end 0)
    # [1|3] left: ends 3 and 6, count 3 + 12 = 15. On the left [3|w] makes 12 + w: only w = 3,
    # and [3|3] counts 6 (18). On the right [6|w] covers the spinner's last side: 3 + w, so
    # [6|2] makes 5. One scoring tile, 5 points
    assert sizes == [19] and replies[three] == [(5, 1)]
    # [1|4] left: count 4 + 12 = 16. [4|3] on the left makes 15, [4|4] makes 8 + 12 = 20; on the
    # right [6|1] would make 5, but it is on the layout. Two scoring tiles, 20 points
    assert replies[four] == [(20, 2)]
    assert obs[lay.later_reply_points][three] == np.float32(5 / 20)
    assert obs[lay.later_reply_points][four] == np.float32(20 / 20)
    # seat 1 holds 6 of the 19: it misses both scoring tiles with chance C(17, 6) / C(19, 6)
    assert obs[lay.later_reply_chance][four] == np.float32(1 - math.comb(17, 6) / math.comb(19, 6))
    # only the legal codes carry values, and only for the seat to play
    for block in (lay.later_reply_points, lay.later_reply_chance):
        assert {c for c in range(112) if obs[block][c]} <= set(view.legal)
    assert not encode_observation_v5(hand.view(0))[lay.v2_size:].any()


def test_two_seats_have_no_later_seat():
    match = MatchState(seed=4)
    view = match.view(match.turn)
    np.testing.assert_array_equal(encode_observation_v5(view), V4.encode(view))
    assert later_replies(view, view.seat, view.hand, view.legal)[0] == []


# -- the definition, written out on full states (version 4's, for a later seat), and properties
# over random games ----------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(config=st.sampled_from(sorted(CONFIGS)), seed=st.integers(0, 2**31 - 1))
def test_properties_over_random_games(config, seed):
    rules = RuleConfig(**CONFIGS[config])
    n, actions = rules.num_players, rules.num_tiles * 4
    lay = SPEC.layout(rules)
    for hand, seat, view, obs in checked_positions(SPEC, V4, rules, seed):
        points = obs[lay.later_reply_points].reshape(n - 2, actions)
        chances = obs[lay.later_reply_chance].reshape(n - 2, actions)
        for row, k in enumerate(range(2, n)):
            truth = brute_force(hand, seat, k)
            for code, (best, chance, _) in truth.items():
                assert points[row, code] == np.float32(best / 20)
                assert chances[row, code] == pytest.approx(chance, abs=1e-6)
            off = np.ones(actions, bool)
            off[list(truth)] = False
            assert not points[row, off].any() and not chances[row, off].any()
            # sound: that seat really holds only tiles it "may hold"
            other = (seat + k) % n
            assert hand.hands[other] & ~possible_tiles(view, other, view.hand) == 0


# -- the environments and a policy use it ---------------------------------------------------------


@pytest.mark.parametrize("players", [3, 4])
def test_the_environments_serve_version_5(players):
    from pettingzoo.test import api_test

    size = SPEC.layout(RuleConfig(num_players=players)).size
    aec = env(num_players=players, obs_version=5)
    api_test(aec, num_cycles=60)
    aec.reset(seed=2)
    agent = aec.agent_selection
    obs = aec.observe(agent)["observation"]
    assert obs.shape == (size,) and aec.observation_space(agent)["observation"].contains(obs)
    single = SingleAgentEnv(num_players=players, obs_version=5, seat=0)
    first, _ = single.reset(seed=1)
    assert first.shape == (size,) and single.observation_space.contains(first)


def test_a_version_5_policy_plays_at_four_seats(tmp_path):
    """``ppo:PATH`` encodes version 5 for a policy that reads it (how fast it decides is
    ``python -m experiments.bench_agents``'s to say, not a unit test's)."""
    rules = RuleConfig(num_players=4)
    path = tmp_path / "v5.npz"
    random_policy_npz(path, rules, hidden=(256, 256), obs_version=5)
    agent = PPOAgent(path)
    assert agent.policy.obs_spec is SPEC and agent.policy.obs_size == 1036
    match = MatchState(rules, seed=8)
    while match.winner is None:
        view = match.view(match.turn)
        code = agent.act(view)
        assert code in view.legal
        match.play(code)
