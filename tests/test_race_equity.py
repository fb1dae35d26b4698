"""The race model of match equity for three and four sides (:mod:`agents.race_equity`): exact
hands-to-reach chances for a gain distribution worked out by hand, chances that add up to 1 over
the sides, monotone in the scores, close to the two-sided table where both exist, and the value
the search agents' ``value="match"`` gives a rollout's end at three or four sides."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import agents.race_equity as race
from agents.equity import MatchEquity
from agents.race_equity import RaceEquity, hands_to_reach
from agents.search import GreedyRollout
from dominoes_env.core import HandState, RuleConfig
from dominoes_env.core.sampling import DealSampler

from .helpers import random_positions

FREE_FOR_ALL = [RuleConfig(num_players=3), RuleConfig(num_players=4, partnerships=False)]


def test_hands_to_reach_is_the_negative_binomial_of_a_coin(monkeypatch):
    """Each hand one of two sides gains one unit: pooled, a side gains 1 with chance 1/2 and 0
    otherwise, so ``d`` units take ``h`` hands with chance ``C(h - 1, d - 1) / 2**h``."""
    monkeypatch.setattr(race, "sample_hands",
                        lambda rules, hands, seed: [([(i % 2, 1)], -1) for i in range(hands)])
    hands_to_reach.cache_clear()
    try:
        pmf = hands_to_reach(RuleConfig(target_score=20), hands=10)
    finally:
        hands_to_reach.cache_clear()
    assert pmf.shape[0] == 5 and pmf[0, 0] == 1.0
    for d in range(1, 5):
        for h in range(pmf.shape[1]):
            exact = math.comb(h - 1, d - 1) / 2**h if h >= d else 0.0
            assert pmf[d, h] == pytest.approx(exact, abs=1e-12)
        assert pmf[d].sum() == pytest.approx(1.0, abs=1e-9)


@pytest.mark.parametrize("rules", FREE_FOR_ALL, ids=["3p", "4p"])
def test_every_row_is_a_distribution_and_a_longer_way_takes_longer(rules):
    pmf = hands_to_reach(rules)
    np.testing.assert_allclose(pmf.sum(axis=1), 1.0, atol=1e-9)
    assert (pmf >= 0).all() and (pmf[1:, 0] == 0).all()
    mean = pmf @ np.arange(pmf.shape[1])
    assert (np.diff(mean) > 0).all()


@settings(max_examples=40, deadline=None)
@given(rules=st.sampled_from(FREE_FOR_ALL), data=st.data())
def test_the_sides_chances_add_up_to_one_and_grow_with_a_sides_points(rules, data):
    S = rules.num_sides
    scores = data.draw(st.lists(st.integers(0, 245), min_size=S, max_size=S))
    chance = [(RaceEquity(rules, s).value(scores, -1) / rules.target_score + 1) / 2
              for s in range(S)]
    assert sum(chance) == pytest.approx(1.0, abs=1e-9)
    assert all(0.0 <= c <= 1.0 for c in chance)
    ahead = scores.copy()
    ahead[0] = min(245, ahead[0] + 25)
    eq = RaceEquity(rules, 0)
    assert eq.value(ahead, -1) >= eq.value(scores, -1) - 1e-9
    rival = scores.copy()
    rival[1] = min(245, rival[1] + 25)
    assert eq.value(rival, -1) <= eq.value(scores, -1) + 1e-9


def test_equal_scores_are_an_equal_share():
    for rules in FREE_FOR_ALL:
        for points in (0, 120, 245):
            value = RaceEquity(rules, 1).value([points] * rules.num_sides, -1)
            assert value == pytest.approx(rules.target_score * (2 / rules.num_sides - 1))


def test_with_two_sides_the_race_is_close_to_the_table():
    """Where both exist, the race and the table that works back from the target (which knows
    who leads and who scores first within a hand) differ by 1 point of chance on average."""
    rules = RuleConfig()
    a, b = RaceEquity(rules, 0), MatchEquity(rules, 0)
    grid = [[x, y] for x in range(0, 250, 10) for y in range(0, 250, 10)]
    diff = [abs(a.value(s, -1) - b.value(s, -1)) / (2 * rules.target_score) for s in grid]
    assert float(np.mean(diff)) < 0.02 and max(diff) < 0.25


@pytest.mark.parametrize("rules", FREE_FOR_ALL, ids=["3p", "4p"])
def test_a_rollouts_end_is_worth_the_race_value_of_the_scores_it_leaves(rules):
    rng = random.Random(0)
    checked = 0
    for _, view in random_positions(rules, 300, seed=9, stride=20)[::10]:
        me = rules.side_of(view.seat)
        hand = HandState.from_view(view, *DealSampler.from_view(view).sample(rng))
        rollout = GreedyRollout(view, 0.0, "match")
        gains = [0] * rules.num_sides
        value = rollout.finish(hand, gains, -1)
        if abs(value) == rules.target_score:
            continue  # the match was won in the rollout
        ends = [view.scores[s] + gains[s] for s in range(rules.num_sides)]
        assert value == pytest.approx(RaceEquity(rules, me).value(ends, -1))
        checked += 1
    assert checked >= 15
