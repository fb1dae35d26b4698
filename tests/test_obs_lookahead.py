"""Observation versions 3 and 4, the lookahead blocks. Version 3 is version 2 plus
``reply_points`` (the next seat's best answer to each legal move); version 4 is version 3 plus
``reply_chance`` (how likely the next seat holds a scoring answer) and ``follow_up`` (this seat's
best next play with the tiles it keeps).

Exact values from the rules on set positions and the chance table against its formula; then,
for each version, properties over random games on every rule configuration: the previous
version is its prefix, the fast path equals the view's encoding, every block equals its
definition written out on full states, the next seat's real tiles are always among the tiles
it "may hold", and the reply threat is never below what its real hand could answer."""

from __future__ import annotations

import math
import random
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.ppo import PPOAgent, random_policy_npz
from dominoes_env import SingleAgentEnv, env
from dominoes_env.core import HandState, MatchState, RuleConfig, count_after, points_for_count
from dominoes_env.core.layout import Layout, place
from dominoes_env.lookahead import (
    move_lookahead,
    possible_tiles,
    reply_chance,
    reply_chance_table,
    reply_points,
)
from dominoes_env.obs import observation_spec
from dominoes_env.obs.v3 import encode_observation_v3, observation_layout_v3
from dominoes_env.obs.v4 import encode_observation_v4, observation_layout_v4

from .helpers import CONFIGS

VERSIONS = (3, 4)
#: version -> (the version it extends, its size for 2, 3 and 4 players, its new blocks in order
#: with the upper bound of each entry; every block has one entry per action code, 112 of them)
GROWTH = {
    3: (2, {2: 346, 3: 356, 4: 364}, {"reply_points": 48 / 20}),
    4: (3, {2: 570, 3: 580, 4: 588}, {"reply_chance": 1.0, "follow_up": 48 / 20}),
}
FUNCTIONS = {
    3: (observation_layout_v3, encode_observation_v3),
    4: (observation_layout_v4, encode_observation_v4),
}


# -- layouts ----------------------------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
def test_layout_is_the_previous_version_plus_blocks_per_action_code(version):
    base, sizes, blocks = GROWTH[version]
    spec, prev = observation_spec(version), observation_spec(base)
    for n, size in sizes.items():
        rules = RuleConfig(num_players=n)
        lay, old = spec.layout(rules), prev.layout(rules)
        assert lay.size == size == old.size + 112 * len(blocks)
        assert getattr(lay, f"v{base}_size") == old.size
        assert lay.high.shape == lay.low.shape == (size,)
        np.testing.assert_array_equal(lay.high[: old.size], old.high)
        start = old.size
        for name, high in blocks.items():
            block = getattr(lay, name)
            assert block == lay.blocks[name] == slice(start, start + 112)
            assert np.all(lay.high[block] == np.float32(high)) and np.all(lay.low[block] == 0)
            assert name in lay.table()
            start += 112
        assert lay.high[-1] == np.float32(48 / 20)
    assert (spec.layout, spec.encode) == FUNCTIONS[version]


# -- exact values on set positions ---------------------------------------------------------------


def spinner_hand() -> HandState:
    """[6|6] led as the spinner; seat 1 to play."""
    hand = HandState.from_tiles(RuleConfig(), leader=0, hands=[
        [(6, 6), (6, 3), (1, 2), (0, 0), (2, 2), (3, 3), (4, 5)],
        [(5, 5), (0, 1), (1, 1), (2, 3), (3, 4), (0, 6), (1, 6)]])  # fmt: skip
    hand.play(((6, 6), None))
    return hand


def replies_of(view) -> dict[int, int]:
    """The non-zero entries of a version 3 observation's reply block, in points."""
    lay = observation_layout_v3(view.rules)
    obs = encode_observation_v3(view)
    return {c: round(float(obs[lay.reply_points][c]) * 20) for c in range(lay.num_actions)
            if obs[lay.reply_points][c]}


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
    assert brute_force(hand, 0)[code][0] == 10
    # once seat 1 is known to lack 5 (say it passed on a 5), [6|5] is out and [6|0] makes 5
    hand.known_lacks[1] = 1 << 5
    assert reply_points(hand.view(0), 0, view.hand, [code]) == {code: 5}


def test_version_4_values_after_a_spinner_lead_and_one_play():
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


# -- the definitions, written out on full states, and properties over random games -------------


def brute_force(hand: HandState, seat: int, k: int = 1) -> dict[int, tuple[int, float, int]]:
    """``{code: (reply points, reply chance, follow_up points)}`` for each legal move of
    ``seat``, written out on a full state, the replies those of seat ``seat + k`` (the next
    seat; version 5 reads the later ones too). That seat's possible tiles are counted one by
    one: every tile of the set that ``seat`` does not hold and that is not on the layout, lacks
    permitting. Reply points: the best of them on every end open after the move; the chance:
    the formula over how many of them score; follow-up: our own tiles but the one played."""
    rules, ts = hand.rules, hand.rules.tiles
    nxt = (seat + k) % rules.num_players
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
        answers = [points(x, u) for u in possible]
        k = sum(1 for p in answers if p)
        chance = 1 - math.comb(len(possible) - k, held) / math.comb(len(possible), held)
        mine = max((points(x, u) for u in range(ts.num_tiles)
                    if own >> u & 1 and u != code >> 2), default=0)
        out[code] = (max(answers, default=0), chance, mine)
    return out


def checked_positions(spec, prev, rules: RuleConfig, seed: int):
    """The positions of a random match (at most 60 decisions), each as ``(hand, seat, view,
    obs)`` with ``obs`` the seat to play's observation of ``spec``, once the checks every
    lookahead version shares hold: the previous version ``prev`` is its prefix, the fast path
    equals the view's encoding for every seat, and every value is within its block's bounds.
    A random legal move is played after each."""
    lay, old = spec.layout(rules), prev.layout(rules)
    rng = random.Random(seed)
    match = MatchState(rules, seed=seed)
    for _ in range(60):
        if match.winner is not None:
            break
        hand, seat = match.hand, match.turn
        view = match.view(seat)
        obs = spec.encode(view)
        np.testing.assert_array_equal(obs[: old.size], prev.encode(view))
        for s in range(rules.num_players):
            np.testing.assert_array_equal(
                spec.encode_state(lay, hand, s, match.scores, False), spec.encode(match.view(s)))
        assert np.all(obs >= lay.low) and np.all(obs <= lay.high)
        yield hand, seat, view, obs
        match.play(rng.choice(view.legal))


@pytest.mark.parametrize("version", VERSIONS)
@settings(max_examples=60, deadline=None)
@given(config=st.sampled_from(sorted(CONFIGS)), seed=st.integers(0, 2**31 - 1))
def test_properties_over_random_games(version, config, seed):
    rules = RuleConfig(**CONFIGS[config])
    spec, prev = observation_spec(version), observation_spec(GROWTH[version][0])
    lay = spec.layout(rules)
    for hand, seat, view, obs in checked_positions(spec, prev, rules, seed):
        truth = brute_force(hand, seat)
        replies = reply_points(view, seat, view.hand, view.legal)
        assert replies == {code: best for code, (best, _, _) in truth.items()}
        for code, (best, chance, mine) in truth.items():
            assert obs[lay.reply_points][code] == np.float32(best / 20)
            if version >= 4:
                assert obs[lay.reply_chance][code] == pytest.approx(chance, abs=1e-6)
                assert obs[lay.follow_up][code] == np.float32(mine / 20)
                # a chance of a scoring answer exactly when some possible tile scores
                assert (obs[lay.reply_chance][code] > 0) == (obs[lay.reply_points][code] > 0) or (
                    hand.hands[(seat + 1) % rules.num_players] == 0)
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


# -- the environments and a policy use them ------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
def test_the_environments_serve_the_version(version):
    from pettingzoo.test import api_test

    size = GROWTH[version][1][2]
    aec = env(obs_version=version)
    api_test(aec, num_cycles=60)
    aec.reset(seed=2)
    agent = aec.agent_selection
    obs = aec.observe(agent)["observation"]
    assert obs.shape == (size,) and aec.observation_space(agent)["observation"].contains(obs)
    single = SingleAgentEnv(obs_version=version, seat=0)
    first, _ = single.reset(seed=1)
    assert first.shape == (size,) and single.observation_space.contains(first)


@pytest.mark.parametrize("version", VERSIONS)
def test_a_lookahead_policy_plays_and_decides_within_a_millisecond(tmp_path, version):
    size = GROWTH[version][1][2]
    path = tmp_path / f"v{version}.npz"
    random_policy_npz(path, RuleConfig(), hidden=(256, 256), obs_version=version)
    agent = PPOAgent(path)
    assert agent.policy.obs_spec is observation_spec(version)
    assert agent.policy.obs_size == size
    match = MatchState(seed=8)
    times = []
    while match.winner is None:
        view = match.view(match.turn)
        # CPU seconds of this process, not wall time: a busy machine (make test beside other
        # jobs) stretches wall time, never the work a decision does
        start = time.process_time()
        code = agent.act(view)
        times.append(time.process_time() - start)
        assert code in view.legal
        match.play(code)
    assert float(np.median(times)) < 1e-3, f"median {np.median(times) * 1e3:.2f} ms"
