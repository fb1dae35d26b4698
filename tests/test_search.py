"""The search agent and the hidden-deal sampler it stands on."""

from __future__ import annotations

import random
import types
from collections import Counter

import numpy as np
import pytest

from agents.base import MAX_SIMS
from agents.search import SearchAgent, distinct_moves
from dominoes_env.core import HandState, RuleConfig, tile_set
from dominoes_env.core.sampling import DealSampler, determinize
from dominoes_env.core.view import make_view

from .helpers import assert_deal_fits_the_view, fitting_deals, random_positions

TS = tile_set(6)


def views_of_random_matches(rules: RuleConfig, count: int, seed: int):
    return random_positions(rules, count, seed, stride=100)


# -- the sampler ---------------------------------------------------------------------------
def test_sampler_is_exact_and_uniform_on_a_small_case():
    # 7 unseen tiles; seat 1 holds 2 and has no 0s or 1s, seat 2 holds 2 and has no 6s,
    # the boneyard holds 3.
    tiles = [(0, 0), (0, 6), (1, 2), (2, 6), (3, 4), (1, 6), (4, 5)]
    idx = [TS.index(*t) for t in tiles]
    unseen = sum(1 << i for i in idx)
    lacks = {1: 0b11, 2: 1 << 6}
    sampler = DealSampler(TS, unseen, {1: 2, 2: 2}, 3, lacks)

    support = fitting_deals(TS, idx, {1: 2, 2: 2}, lacks)
    assert sampler.num_deals == len(support) == 7

    rng = random.Random(0)
    counts = Counter()
    first_drawn = Counter()
    draws = 6000
    for _ in range(draws):
        hands, bone = sampler.sample(rng)
        key = (frozenset(i for i in idx if hands[1] >> i & 1),
               frozenset(i for i in idx if hands[2] >> i & 1))
        assert key in support
        assert sorted(bone) == sorted(set(idx) - key[0] - key[1])
        counts[key] += 1
        first_drawn[bone[0]] += 1
    assert set(counts) == support  # every fitting deal comes out
    expected = draws / len(support)
    chi2 = sum((c - expected) ** 2 / expected for c in counts.values())
    assert chi2 < 22.5  # 6 degrees of freedom: p < 0.001 only when not uniform
    # the boneyard order is random too: every unseen tile can be drawn first
    assert set(first_drawn) == set(idx)


def test_sampler_rejects_impossible_inputs():
    unseen = (1 << TS.index(0, 0)) | (1 << TS.index(0, 1))
    with pytest.raises(ValueError, match="cannot fill"):
        DealSampler(TS, unseen, {1: 2}, 1)
    with pytest.raises(ValueError, match="no deal of the unseen tiles fits"):
        DealSampler(TS, unseen, {1: 1}, 1, lacks={1: 0b1})  # both tiles hold a 0


@pytest.mark.parametrize("rules", [RuleConfig(), RuleConfig(num_players=3),
                                   RuleConfig(num_players=4), RuleConfig(num_players=3, max_pip=9),
                                   RuleConfig(boneyard_reserve=2)],
                         ids=["2p", "3p", "4p", "3p-d9", "2p-reserve"])
def test_sampled_deals_agree_with_the_view(rules):
    rng = random.Random(1)
    for truth, view in views_of_random_matches(rules, 400, seed=rules.num_players):
        sampler = DealSampler.from_view(view)  # raises if the true deal were outside its support
        for _ in range(3):
            assert_deal_fits_the_view(view, *sampler.sample(rng))
        state = determinize(view, rng, sampler)
        again = make_view(state, view.seat, view.scores, view.target_score, view.hand_number,
                          view.winner)
        assert again == view  # the rebuilt state shows the seat exactly what it saw
        assert state.legal_actions() == truth.legal_actions()


# -- the search agent ----------------------------------------------------------------------
def test_search_never_reads_hidden_tiles():
    rules = RuleConfig(num_players=3)
    checked = 0
    for truth, view in views_of_random_matches(rules, 60, seed=7)[5::6]:
        if len(distinct_moves(view)) < 2:
            continue
        # another true state with the same view but other hidden hands and boneyard
        other = determinize(view, random.Random(99))
        assert other.hands != truth.hands or other.boneyard != truth.boneyard
        other_view = make_view(other, view.seat, view.scores, view.target_score,
                               view.hand_number, view.winner)
        assert other_view == view
        picks = [SearchAgent(seed=s, sims=16, min_per_move=2).act(view) for s in range(12)]
        others = [SearchAgent(seed=s, sims=16, min_per_move=2).act(other_view) for s in range(12)]
        assert picks == others  # the same decision distribution, seed by seed
        checked += 1
    assert checked >= 5


def test_distinct_moves_merges_symmetric_ends():
    hand = HandState.from_tiles(RuleConfig(), [
        [(6, 6), (6, 3), (1, 2), (0, 0), (2, 2), (3, 3), (4, 5)],
        [(5, 5), (0, 1), (1, 1), (2, 3), (3, 4), (0, 6), (1, 6)]])
    hand.play(((6, 6), None))
    view = hand.view(1)
    # [0|6] and [1|6] fit left and right of the lone spinner: two positions, not four
    assert len(view.legal) == 4
    assert distinct_moves(view) == [TS.index(0, 6) * 4, TS.index(1, 6) * 4]
    hand.play(((6, 1), "left"))
    assert distinct_moves(hand.view(0)) == hand.legal_actions()  # no symmetry left


def test_search_takes_the_move_that_wins_the_match():
    # RULES.md example 2 position: [6|5]@up counts 10, the only move that scores 10
    hand = HandState.from_tiles(RuleConfig(), [
        [(6, 6), (6, 2), (0, 0), (1, 1), (0, 1), (0, 2), (1, 2)],
        [(6, 3), (6, 5), (6, 0), (3, 3), (2, 3), (6, 4), (2, 2)]])
    for move in [((6, 6), None), ((6, 3), "left"), ((6, 2), "right")]:
        hand.play(move)
    view = make_view(hand, 1, (245, 240), 250, 3, None)  # whoever scores next wins
    agent = SearchAgent(seed=0, sims=60)
    win = TS.index(5, 6) * 4 + 2
    assert agent.act(view) == win
    runs, value = agent.last_values[win]
    assert runs >= 8 and value == 250.0  # every rollout wins the match on the spot
    assert all(v < 250.0 for c, (_, v) in agent.last_values.items() if c != win)


def test_search_budget_and_shortcuts():
    views = [v for _, v in views_of_random_matches(RuleConfig(), 80, seed=3)]
    agent = SearchAgent(seed=1, sims=30, min_per_move=4)
    for view in views:
        code = agent.act(view)
        moves = distinct_moves(view)
        if len(moves) == 1:
            assert code == moves[0] and agent.last_values == {}
        else:
            runs = {r for r, _ in agent.last_values.values()}
            assert runs == {max(4, -(-30 // len(moves)))}
            assert set(agent.last_values) == set(moves)
    timed = SearchAgent(seed=1, time_ms=5)
    view = next(v for v in views if len(distinct_moves(v)) > 2)
    assert timed.act(view) in view.legal
    assert min(r for r, _ in timed.last_values.values()) >= 1


@pytest.mark.parametrize("fixed_ms, per_deal_ms", [(2.0, 0.01), (0.3, 0.05), (0.05, 0.2),
                                                   (4.0, 0.001)])
def test_a_time_budget_ends_its_batches_on_time(monkeypatch, fixed_ms, per_deal_ms):
    """Under ``time_ms`` the batched search sizes its batches to end as the time runs out (a
    batch costs ``fixed + per_deal * deals``, on a clock of the test's). It sized each at the
    whole cost per deal so far and played at least 8 deals at the end: 10 ms became 11.2 ms
    with a 2 ms fixed cost, so at an equal budget it thought longer than the one-by-one path."""
    import agents.search as search

    clock = [0.0]

    def batched(self, view, rollout, deals, seeds, moves):
        clock[0] += (fixed_ms + per_deal_ms * len(deals)) / 1000
        return np.zeros(len(moves))

    monkeypatch.setattr(search, "time", types.SimpleNamespace(perf_counter=lambda: clock[0]))
    monkeypatch.setattr(search.SearchAgent, "_batched", batched)
    agent = search.SearchAgent(seed=1, time_ms=10)
    views = [v for _, v in views_of_random_matches(RuleConfig(), 30, seed=4)
             if len(distinct_moves(v)) > 1]
    for view in views[:5]:
        clock[0] = 0.0
        agent.act(view)
        assert 0.0095 - (fixed_ms + per_deal_ms) / 1000 <= clock[0] <= 0.0101, clock[0]


@pytest.mark.parametrize("params", [{"sims": 1, "min_per_move": 1_000_000},
                                    {"sims": MAX_SIMS}, {"time_ms": 600_000}])
def test_a_decision_holds_at_most_max_sims_rollouts_at_once(monkeypatch, params):
    """Every deal plays every distinct move at once: ``min_per_move=1000000`` with 7 moves
    asked for 7,000,000 rollouts (some 8.6 GB), ``sims=MAX_SIMS`` rounded up to whole deals
    played 1,000,006, and a long ``time_ms`` grew its batches past any bound; each now stops at
    MAX_SIMS rollouts (``min_per_move``'s and ``sims``': split over the moves, rounded down)."""
    import agents.search as search
    from dominoes_env.core import MatchState

    match = MatchState(seed=2)
    view = match.view(match.turn)
    moves = len(distinct_moves(view))
    clock = [0.0]

    class Sampler:  # the deals asked for, counted (and refused past the bound) before drawn
        def __init__(self, view):
            pass

        def sample(self, rng, count):
            assert count * moves <= MAX_SIMS, f"{count:,} deals of {moves} moves at once"
            return range(count)

    def batched(self, view, rollout, deals, seeds, moves):
        clock[0] += 100.0  # 6 batches in the 600 s
        return np.zeros(len(moves))

    monkeypatch.setattr(search, "DealBatchSampler", Sampler)
    monkeypatch.setattr(search.SearchAgent, "_batched", batched)
    monkeypatch.setattr(search, "time", types.SimpleNamespace(perf_counter=lambda: clock[0]))
    monkeypatch.setattr(search, "next_time_chunk", lambda costs, left: 10**9)
    agent = search.SearchAgent(seed=0, **params)
    assert moves == 7 and agent.act(view) in view.legal
    runs = {r for r, _ in agent.last_values.values()}
    if "sims" in params:
        assert runs == {MAX_SIMS // moves}
    else:
        assert runs == {search.TIME_CHUNK + 5 * (MAX_SIMS // moves)}


@pytest.mark.parametrize("bad", [{"sims": 0}, {"sims": 2.5}, {"time_ms": -1}, {"epsilon": 2},
                                 {"min_per_move": 0}])
def test_search_rejects_bad_parameters(bad):
    with pytest.raises(ValueError, match=next(iter(bad))):
        SearchAgent(**bad)


def test_epsilon_rollouts_and_end_of_hand_win_check_play_legally():
    rules = RuleConfig(num_players=4, win_check="end_of_hand", target_score=60)
    agent = SearchAgent(seed=3, sims=12, epsilon=0.3)
    for _, view in views_of_random_matches(rules, 60, seed=4):
        assert agent.act(view) in view.legal
