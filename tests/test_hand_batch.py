"""The batched rollouts (agents.hand_batch, agents.batch_obs, agents.batch_lookahead) against the
core: the same deal and the same moves give the same hand, field by field, after every move, for
every rule option; the same legal moves, counts, greedy choice and observations (versions 2, 3
and 4); and the search agents give every move the same values on both paths."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.batch_lookahead import LookaheadEncoder, batch_encoder
from agents.batch_obs import BatchEncoder
from agents.hand_batch import HandBatch, bits_to_bool, row_argmax, tables
from agents.positions import positions
from agents.search import TIME_CHUNK, GreedyRollout, SearchAgent
from dominoes_env.core import (
    DealSampler,
    HandState,
    MatchState,
    RuleConfig,
    greedy_best,
    leader_after,
    tie_rank,
    wins_by_play,
)
from dominoes_env.obs.v2 import encode_hand_state, observation_layout
from dominoes_env.obs.v3 import encode_hand_state_v3, observation_layout_v3
from dominoes_env.obs.v4 import encode_hand_state_v4, observation_layout_v4
from dominoes_env.obs.v5 import encode_hand_state_v5, observation_layout_v5

from .helpers import CONFIGS


@st.composite
def rule_configs(draw) -> RuleConfig:
    """Any rules: every option, small targets so that plays and awards win matches."""
    players = draw(st.sampled_from([2, 3, 4]))
    max_pip = draw(st.sampled_from([6, 9, 12]))
    partnerships = draw(st.booleans()) if players == 4 else False
    hand_size = draw(st.integers(1, (max_pip + 1) * (max_pip + 2) // 2 // players))
    rules = RuleConfig(
        num_players=players, max_pip=max_pip, partnerships=partnerships, hand_size=hand_size,
        target_score=draw(st.sampled_from([5, 30, 100, 250])),
        next_leader=draw(st.sampled_from(["domino_else_random", "rotate"])),
        win_check=draw(st.sampled_from(["immediate", "end_of_hand"])),
        spinner=draw(st.sampled_from(["first_double", "lead_double_only", "none"])),
        spinner_cross=draw(st.sampled_from(["after_both_sides", "immediately"])),
        blocked_award=draw(st.sampled_from(["opponents_total", "difference"])))
    reserve = draw(st.integers(0, min(rules.boneyard_size, 3)))
    return rules.replace(boneyard_reserve=reserve)


def a_position(rules: RuleConfig, rnd: random.Random, moves: int):
    """The view of the seat to play after ``moves`` random moves of a match (None if over)."""
    match = MatchState(rules, seed=rnd.getrandbits(32))
    for _ in range(moves):
        if match.is_over:
            return None
        match.play(rnd.choice(match.legal_actions()))
    return None if match.is_over else match.view(match.turn)


def assert_same_hand(batch: HandBatch, r: int, h: HandState, drawn0: int) -> None:
    T = batch.tb.T
    assert (bits_to_bool(h.hands, T) == batch.hands[r]).all()
    assert batch.sizes[r].tolist() == [m.bit_count() for m in h.hands]
    assert (bits_to_bool([h.played], T)[0] == batch.played[r]).all()
    for name in ("lead", "lead_pips", "spinner", "spinner_sides", "count", "turn", "cross_open"):
        assert getattr(h, name) == getattr(batch, name)[r], name
    for name in ("ends", "contrib", "arm", "spinner_free", "known_lacks"):
        assert list(getattr(h, name)) == getattr(batch, name)[r].tolist(), name
    assert h.drawn - drawn0 == batch.drawn[r]
    if h.turn < 0:
        ended = h.result[1] if h.result[0] == "domino" else h.n
        assert batch.ended[r] == ended
        award = (-1, 0) if h.award is None else tuple(h.award)
        assert (batch.award_side[r], batch.award_points[r]) == award


#: the core's encoder of each observation version the batch twins, by version
CORE_ENCODERS = {2: (observation_layout, encode_hand_state),
                 3: (observation_layout_v3, encode_hand_state_v3),
                 4: (observation_layout_v4, encode_hand_state_v4),
                 5: (observation_layout_v5, encode_hand_state_v5)}


def assert_same_observations(batch: HandBatch, idx, hands, scores) -> None:
    """Every version's batched observation of the seat to play in rows ``idx`` is the core
    encoder's of ``hands[r]`` at match scores ``scores[r]``, element for element."""
    which, legal, counts = batch.moves(idx)
    for version, (layout, encode) in CORE_ENCODERS.items():
        lay = layout(batch.tb.rules)
        x = batch_encoder(batch.tb.rules, version).encode(batch, idx, which, legal, counts)
        assert x.shape == (len(idx), lay.size) and x.dtype == np.float32
        for j, r in enumerate(idx.tolist()):
            h = hands[r]
            expected = encode(lay, h, h.turn, scores[r], False)
            assert x[j].tolist() == expected.tolist(), (version, j)


def play_both(view, deals, rnd: random.Random, greedy: bool) -> int:
    """Play the same moves (random, or the batch's greedy choice) in a batch and on the core,
    comparing everything after every move (and the observations before the first); returns
    the moves played."""
    rules = view.rules
    firsts = list(view.legal)
    batch = HandBatch(view, deals, firsts)
    hands = [HandState.from_view(view, *deal) for deal in deals for _ in firsts]
    drawn0 = hands[0].drawn
    gains = [[0] * rules.num_sides for _ in hands]
    winner = [-1] * len(hands)
    lay, encoder, rank = observation_layout(rules), BatchEncoder(rules), tie_rank(rules.max_pip)
    idx = np.arange(len(hands))
    assert_same_observations(batch, idx, hands, [view.scores] * len(hands))
    codes = np.array([firsts[i % len(firsts)] for i in range(len(hands))])
    played = 0
    while len(idx):
        for r, code in zip(idx.tolist(), codes.tolist(), strict=True):
            h = hands[r]
            side = rules.side_of(h.turn)
            gains[r][side] += h.apply_unchecked(code)
            if wins_by_play(view.scores[side] + gains[r][side], rules.target_score,
                            rules.win_check):
                winner[r] = side
        batch.play(idx, codes)
        played += len(idx)
        for r, h in enumerate(hands):
            assert_same_hand(batch, r, h, drawn0)
            assert batch.gains[r].tolist() == gains[r]
            assert batch.winner[r] == winner[r]
        idx = batch.running()
        assert idx.tolist() == [r for r, h in enumerate(hands) if h.turn >= 0 and winner[r] < 0]
        if not len(idx):
            break
        which, legal, counts = batch.moves(idx)
        x = encoder.encode(batch, idx, which, legal, counts)
        pick = legal[batch.greedy(which, legal, counts)]
        for j, r in enumerate(idx.tolist()):
            h = hands[r]
            mine = which == j
            assert sorted(legal[mine].tolist()) == sorted(h.legal_actions())
            assert counts[mine].tolist() == [h.count_after(c) for c in legal[mine].tolist()]
            assert pick[j] == greedy_best(h.legal_actions(), h.points_after, rank)
            now = [s + g for s, g in zip(view.scores, gains[r], strict=True)]
            assert (x[j] == encode_hand_state(lay, h, h.turn, now, False)).all()
        scores = [[s + g for s, g in zip(view.scores, gains[r], strict=True)]
                  for r in range(len(hands))]
        assert_same_observations(batch, idx, hands, scores)
        codes = pick if greedy else np.array([rnd.choice(hands[r].legal_actions())
                                              for r in idx.tolist()])
    return played


@settings(max_examples=60, deadline=None)
@given(rules=rule_configs(), seed=st.integers(0, 2**32 - 1), moves=st.integers(0, 30),
       greedy=st.booleans())
def test_batch_plays_as_the_core_under_every_rule_option(rules, seed, moves, greedy):
    rnd = random.Random(seed)
    view = a_position(rules, rnd, moves)
    if view is None:
        return
    sampler = DealSampler.from_view(view)
    assert play_both(view, [sampler.sample(rnd) for _ in range(3)], rnd, greedy) > 0


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_batch_plays_as_the_core_in_every_rule_family(name):
    rules, rnd, played = RuleConfig(**CONFIGS[name]), random.Random(name), 0
    for moves in (0, 1, 4, 9, 16):
        view = a_position(rules, rnd, moves)
        if view is not None:
            sampler = DealSampler.from_view(view)
            played += play_both(view, [sampler.sample(rnd) for _ in range(4)], rnd,
                                greedy=moves % 2 == 0)
    assert played > 20


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_next_leader_is_the_cores(name):
    rules = RuleConfig(**CONFIGS[name])
    view = MatchState(rules, seed=3).view(MatchState(rules, seed=3).turn)
    sampler, rnd = DealSampler.from_view(view), random.Random(1)
    deals = [sampler.sample(rnd) for _ in range(8)]
    batch = HandBatch(view, deals, view.legal)
    batch.play(np.arange(batch.rows), np.array(view.legal * len(deals)))
    batch.rollout_greedy()
    hands = []
    for deal in deals:
        for code in view.legal:
            h = HandState.from_view(view, *deal)
            h.apply_unchecked(code)
            GreedyRollout(view, 0.0).finish(h, [0] * rules.num_sides, -1)
            hands.append(h)
    ended = [r for r, h in enumerate(hands) if h.turn < 0]
    expect = [-1 if leader_after(hands[r]) is None else leader_after(hands[r]) for r in ended]
    assert batch.next_leader()[ended].tolist() == expect


@pytest.mark.parametrize("spinner", ["first_double", "lead_double_only", "none"])
@pytest.mark.parametrize("cross", ["after_both_sides", "immediately"])
@pytest.mark.parametrize("players", [2, 4])
def test_lookahead_of_every_lead_is_the_cores(spinner, cross, players):
    # before the lead every legal move is a lead (a double may spin and, at once, open its
    # cross): the rows are encoded before any play, at many deals' first positions
    rules = RuleConfig(num_players=players, spinner=spinner, spinner_cross=cross)
    leads = 0
    for seed in range(12):
        match = MatchState(rules, seed=seed)
        view = match.view(match.turn)
        deals = [DealSampler.from_view(view).sample(random.Random(seed * 3 + d))
                 for d in range(3)]
        batch = HandBatch(view, deals, view.legal)
        hands = [HandState.from_view(view, *deal) for deal in deals for _ in view.legal]
        idx = batch.running()
        assert (batch.lead.take(idx) < 0).all()
        assert_same_observations(batch, idx, hands, [view.scores] * len(hands))
        leads += len(view.legal)
    assert leads > 60


def test_batch_encoder_of_each_version():
    rules = RuleConfig()
    assert type(batch_encoder(rules, 2)) is BatchEncoder
    for version in (3, 4, 5):
        encoder = batch_encoder(rules, version)
        assert type(encoder) is LookaheadEncoder and encoder.version == version
        assert encoder.size == CORE_ENCODERS[version][0](rules).size
    assert batch_encoder(rules, 6) is None
    with pytest.raises(ValueError, match="versions 3, 4 and 5, not 2"):
        LookaheadEncoder(rules, 2)


def test_tables_come_from_the_core():
    tb = tables(RuleConfig(max_pip=9, target_score=100, win_check="immediate"))
    assert tb.points.tolist()[:11] == [0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 10]
    assert tb.round5.tolist()[:6] == [0, 0, 0, 5, 5, 5]
    assert tb.wins[99] == False and tb.wins[100] == True  # noqa: E712
    assert tables(RuleConfig(win_check="end_of_hand")).wins.any() == False  # noqa: E712
    assert tb.suit[-1].any() == False  # noqa: E712  (the row an end without a value reads)


def test_row_argmax_takes_the_first_of_equals():
    which = np.array([0, 0, 0, 1, 2, 2])
    assert row_argmax(which, np.array([3, 5, 5, 1, 2, 9])).tolist() == [1, 3, 5]
    assert row_argmax(which, np.array([3, 5, 4, 1, 2, 9]), unique=True).tolist() == [1, 3, 5]


# -- the agents: the same values on both paths ----------------------------------------------
@pytest.mark.parametrize("name,value", [("2p", "margin"), ("2p", "match"), ("3p", "margin"),
                                        ("4p-partners", "match"), ("reserve-rotate", "match"),
                                        ("end-of-hand-4p", "margin"), ("double-twelve", "margin"),
                                        ("3p", "match"), ("4p-solo", "match"),
                                        ("end-of-hand", "match")])
def test_search_values_are_the_same_batched_and_one_by_one(name, value):
    rules = RuleConfig(**CONFIGS[name])
    compared = 0
    for i, view in enumerate(positions(rules, 24, seed=7)):
        batched = SearchAgent(seed=i, sims=48, value=value)
        plain = SearchAgent(seed=i, sims=48, value=value, batch=False)
        assert batched.act(view) == plain.act(view)
        assert batched.last_values.keys() == plain.last_values.keys()
        for code, (n, mean) in batched.last_values.items():
            assert n == plain.last_values[code][0]
            assert math.isclose(mean, plain.last_values[code][1], rel_tol=1e-12, abs_tol=1e-12)
        compared += len(batched.last_values) > 1
    assert compared >= 8


def test_search_epsilon_values_agree_in_distribution():
    # epsilon rollouts draw their random moves from different generators on the two paths:
    # over many deals the mean values of each move agree within a few standard errors
    rules = RuleConfig()
    view = next(v for v in positions(rules, 40, seed=2) if len(v.legal) >= 3)
    means = []
    for batch in (True, False):
        agent = SearchAgent(seed=11, sims=3000, epsilon=0.5, batch=batch)
        agent.act(view)
        means.append(agent.last_values)
    for code, (n, mean) in means[0].items():
        other = means[1][code][1]
        assert abs(mean - other) < 4 * 30 / math.sqrt(n)  # values of a hand: within +-30 or so


def test_time_budget_searches_whole_batches_of_deals():
    view = next(v for v in positions(RuleConfig(), 20, seed=1) if len(v.legal) > 1)
    agent = SearchAgent(seed=0, time_ms=30)
    agent.act(view)
    counts = {n for n, _mean in agent.last_values.values()}
    assert len(counts) == 1 and counts.pop() >= TIME_CHUNK  # every move on the same deals


@pytest.mark.parametrize("win_check", ["immediate", "end_of_hand"])
@pytest.mark.parametrize("value", ["margin", "match"])
def test_batch_values_are_the_cores_when_hand_awards_decide_matches(win_check, value):
    # a small target: hands end with awards that win matches (match_winner, vectorized in
    # batch_values) and with the match going on (the equity table, read in one expression)
    rules = RuleConfig(target_score=30, win_check=win_check)
    settled = 0
    for i, view in enumerate(positions(rules, 30, seed=3)):
        rollout = GreedyRollout(view, 0.0, value)
        deals = [DealSampler.from_view(view).sample(random.Random(i * 7 + d)) for d in range(4)]
        firsts = list(view.legal)
        batch = HandBatch(view, deals, firsts)
        batch.play(np.arange(batch.rows), np.tile(np.asarray(firsts, np.int64), len(deals)))
        batch.rollout_greedy()
        settled += int(((batch.winner < 0) & (batch.award_side >= 0)).sum())
        expected = [rollout(HandState.from_view(view, *deal), code, 0)
                    for deal in deals for code in firsts]
        assert rollout.batch_values(batch).tolist() == expected
    assert settled > 20


@pytest.mark.parametrize("name", ["2p", "3p", "4p-partners", "double-twelve"])
def test_play_firsts_is_play_with_the_counts_of_the_view(name):
    rules = RuleConfig(**CONFIGS[name])
    for i, view in enumerate(positions(rules, 12, seed=4)):
        deals = [DealSampler.from_view(view).sample(random.Random(i * 3 + d)) for d in range(3)]
        firsts = list(view.legal)
        a, b = HandBatch(view, deals, firsts), HandBatch(view, deals, firsts)
        a.play_firsts()
        b.play(np.arange(b.rows), np.tile(np.asarray(firsts, np.int64), len(deals)))
        for field in ("count", "gains", "winner", "turn", "hands", "ends", "known_lacks"):
            assert (getattr(a, field) == getattr(b, field)).all(), field


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_a_batch_that_keeps_no_observation_fields_plays_the_same(name):
    # observe=False (search's greedy rollouts) drops outer_double, played, count, known_lacks
    rules = RuleConfig(**CONFIGS[name])
    for i, view in enumerate(positions(rules, 6, seed=8)):
        deals = [DealSampler.from_view(view).sample(random.Random(i * 5 + d)) for d in range(4)]
        full, lean = (HandBatch(view, deals, view.legal, observe=o) for o in (True, False))
        assert lean.played is None and lean.known_lacks is None and lean.outer_double is None
        for batch in (full, lean):
            batch.play_firsts()
            batch.rollout_greedy()
        for field in ("hands", "gains", "winner", "ended", "award_side", "award_points", "turn",
                      "drawn", "ends", "spinner"):
            assert (getattr(full, field) == getattr(lean, field)).all(), field
