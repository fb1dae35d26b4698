"""The match equity table (agents.equity) and the search agents' ``value="match"``."""

from __future__ import annotations

import functools
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.equity import UNIT, MatchEquity, equity_table, sample_hands
from agents.guided import GuidedSearchAgent
from agents.search import GreedyRollout, SearchAgent, resolve_value
from agents.specs import make_agent
from dominoes_env.core import HandState, RuleConfig
from dominoes_env.core.sampling import DealSampler

from .helpers import random_positions


def reference_table(rules: RuleConfig, hands: int, seed: int) -> np.ndarray:
    """The table's definition, hand by hand and event by event, by plain recursion."""
    goal = -(-rules.target_score // UNIT)
    sampled = [(ev, nxt) for ev, nxt in sample_hands(rules, hands, seed) if ev]

    @functools.cache
    def chance(a: int, b: int, lead: int) -> float:  # side 0 at a, side 1 at b, `lead` leads
        total = 0.0
        for events, nxt in sampled:
            score = [a, b]
            won = None
            for side, units in events:
                actual = side if lead == 0 else 1 - side  # the sample's side 0 is the leader's
                score[actual] += units
                if rules.win_check == "immediate" and score[actual] >= goal:
                    won = actual
                    break
            if won is None and rules.win_check == "end_of_hand" and max(score) >= goal:
                total += 0.5 if score[0] == score[1] else float(score[0] > score[1])
                continue
            if won is not None:
                total += won == 0
                continue
            if nxt < 0:
                total += 0.5 * (chance(*score, 0) + chance(*score, 1))
            else:
                total += chance(*score, nxt if lead == 0 else 1 - nxt)
        return total / len(sampled)

    return np.array([[[chance(a, b, lead) for lead in (0, 1)] for b in range(goal)]
                     for a in range(goal)])


@pytest.mark.parametrize("options", [
    {}, {"win_check": "end_of_hand"}, {"next_leader": "rotate"},
    {"num_players": 4, "win_check": "end_of_hand"},
])
def test_table_equals_its_recursive_definition(options):
    rules = RuleConfig(target_score=60, **options)
    table = equity_table(rules, hands=150, seed=3)
    assert table.shape == (12, 12, 2)
    np.testing.assert_allclose(table, reference_table(rules, 150, 3), atol=1e-12)


def test_table_is_monotone_and_symmetric_in_the_lead():
    table = equity_table(RuleConfig(), hands=600, seed=1)
    assert table.shape == (50, 50, 2)
    assert (table >= 0).all() and (table <= 1).all()
    # more points for me never hurt, more for them never help (same sampled hands)
    assert (np.diff(table, axis=0) >= -1e-12).all()
    assert (np.diff(table, axis=1) <= 1e-12).all()
    # the same hands from the other side: my chance leading = 1 - theirs when they lead
    np.testing.assert_allclose(table[:, :, 0], 1 - table[:, :, 1].T, atol=1e-12)
    # leading the first hand is worth something, and one unit short of the target with the
    # lead is close to a sure win
    assert 0.5 < table[0, 0, 0] < 0.65
    assert table[49, 0, 0] > 0.95


def test_the_table_is_for_two_sides_and_three_get_the_race():
    """``equity_table`` refuses three sides; the agents' ``value="match"`` serves them with the
    race model (:mod:`agents.race_equity`), which ``value="auto"`` does not pick."""
    with pytest.raises(ValueError, match="two sides"):
        equity_table(RuleConfig(num_players=3))
    for agent in (SearchAgent(value="match"), GuidedSearchAgent(value="match")):
        agent.check_rules(RuleConfig(num_players=3))
    assert resolve_value("auto", RuleConfig(num_players=3)) == "margin"
    assert resolve_value("match", RuleConfig(num_players=4, partnerships=False)) == "match"
    with pytest.raises(ValueError, match="value='wins' is not allowed"):
        make_agent("search:value=wins")
    with pytest.raises(ValueError, match="hands"):
        equity_table(RuleConfig(), hands=0)
    with pytest.raises(ValueError, match="targets up to 500 points; target_score=505"):
        SearchAgent(value="match").check_rules(RuleConfig(target_score=505))


@pytest.mark.parametrize("target", [1, 7, 500])
def test_any_allowed_target_builds_a_table(target):
    """Odd targets (not a multiple of 5: the units round up) and the largest allowed one."""
    table = equity_table(RuleConfig(target_score=target), hands=300)
    goal = -(-target // UNIT)
    assert table.shape == (goal, goal, 2)
    assert 0.5 < table[0, 0, 0] < 1 and np.isfinite(table).all()


@pytest.mark.parametrize("players", [2, 4])
def test_rollout_value_is_the_match_equity_of_the_hand_end(players):
    """A rollout that ends the hand without a winner is worth the table's value of the scores
    it leaves, for the deciding side, with the side that leads next; one that wins the match is
    worth the target, as with the point margin."""
    rules = RuleConfig(num_players=players)
    rng = random.Random(0)
    checked = won = 0
    for _, view in random_positions(rules, 600, seed=7, stride=20)[::10]:
        sampler = DealSampler.from_view(view)
        me = rules.side_of(view.seat)
        eq = MatchEquity(rules, me)
        hand = HandState.from_view(view, *sampler.sample(rng))
        by_match, by_margin = GreedyRollout(view, 0.0, "match"), GreedyRollout(view, 0.0)
        gains, gains_margin = [0, 0], [0, 0]
        copy = hand.copy()
        value = by_match.finish(hand, gains, -1)
        margin = by_margin.finish(copy, gains_margin, -1)
        assert gains == gains_margin  # the same greedy play
        if abs(margin) == rules.target_score:  # the match was won in the rollout
            assert value == margin
            won += 1
            continue
        assert margin == gains[me] - gains[1 - me]
        ends = [view.scores[s] + gains[s] for s in range(2)]
        leader = hand.result[1] if hand.result[0] == "domino" else None
        next_side = -1 if leader is None else rules.side_of(leader)
        assert value == pytest.approx(eq.value(ends, next_side))
        checked += 1
    assert checked >= 30 and won >= 1


@pytest.mark.parametrize("players", [2, 4])
def test_search_agents_with_match_value_play_legal_moves(players):
    rules = RuleConfig(num_players=players)
    for spec in ("search:value=match,sims=40", "guided:value=match,sims=40"):
        agent = make_agent(spec, seed=0)
        agent.check_rules(rules)
        for _, view in random_positions(rules, 6, seed=players, stride=50):
            assert agent.act(view) in view.legal
            assert all(-rules.target_score <= v <= rules.target_score
                       for _, v in agent.last_values.values())


@pytest.mark.parametrize(("options", "meant"), [
    ({}, "match"), ({"num_players": 4}, "match"), ({"target_score": 500}, "match"),
    ({"num_players": 3}, "margin"), ({"target_score": 505}, "margin"),
    ({"num_players": 4, "partnerships": False}, "margin"),
])
def test_auto_is_match_where_the_rules_allow_a_table(options, meant):
    rules = RuleConfig(**options)
    assert resolve_value("auto", rules) == meant
    assert resolve_value("margin", rules) == "margin"


def test_guided_values_by_match_equity_by_default():
    guided, search = GuidedSearchAgent(), SearchAgent()
    assert (guided.value, search.value) == ("auto", "margin")
    _, view = random_positions(RuleConfig(), 1, seed=0)[0]
    assert GreedyRollout(view, 0.0, guided.value).equity is not None
    assert GreedyRollout(view, 0.0, search.value).equity is None


def test_a_tie_at_the_target_under_end_of_hand_plays_on():
    """Under win_check="end_of_hand" a tie at or above the target ends no match: the rollout's
    value of it is the table's one unit short of the target for both (it raised IndexError)."""
    rules = RuleConfig(win_check="end_of_hand")
    eq = MatchEquity(rules, side=1, hands=300)
    table = equity_table(rules, hands=300)
    assert eq.value([255, 255], next_side=1) == pytest.approx(250 * (2 * table[49, 49, 0] - 1))
    assert eq.value([260, 260], next_side=-1) == pytest.approx(0.0, abs=1e-9)


@settings(max_examples=15, deadline=None)
@given(players=st.sampled_from([2, 4]), max_pip=st.sampled_from([6, 9]),
       target=st.integers(1, 500), win_check=st.sampled_from(["immediate", "end_of_hand"]),
       next_leader=st.sampled_from(["domino_else_random", "rotate"]),
       spinner=st.sampled_from(["first_double", "lead_double_only", "none"]),
       blocked_award=st.sampled_from(["opponents_total", "difference"]),
       seed=st.integers(0, 2**16))
def test_tables_of_any_two_sided_rules_are_chances(players, max_pip, target, win_check,
                                                    next_leader, spinner, blocked_award, seed):
    """Every rule option with two sides: chances in [0, 1], monotone in both scores, the two
    leads mirror each other, and every reachable score (ties above the target included) has a
    finite value within +-target."""
    rules = RuleConfig(num_players=players, max_pip=max_pip, target_score=target,
                       win_check=win_check, next_leader=next_leader, spinner=spinner,
                       blocked_award=blocked_award)
    table = equity_table(rules, hands=60, seed=seed)
    assert ((table >= 0) & (table <= 1)).all()
    assert (np.diff(table, axis=0) >= -1e-12).all() and (np.diff(table, axis=1) <= 1e-12).all()
    np.testing.assert_allclose(table[:, :, 0], 1 - table[:, :, 1].T, atol=1e-12)
    eq = MatchEquity(rules, side=seed % 2, hands=60, seed=seed)
    for scores in ([0, 0], [target - 1, 0], [target + 5, target + 5]):
        for nxt in (-1, 0, 1):
            v = eq.value([max(0, x) // UNIT * UNIT for x in scores], nxt)
            assert np.isfinite(v) and abs(v) <= target


def test_the_equity_checks_its_rules_side_and_seed():
    """equity_table(None) was an AttributeError, MatchEquity(rules, -1) read the other side's
    scores (and side 5 an IndexError at its first value), and seed -1 dealt seed 1's hands."""
    rules = RuleConfig(target_score=30)
    with pytest.raises(TypeError, match=r"^rules must be a RuleConfig, not NoneType"):
        equity_table(None)
    for side in (-1, 2, True, 1.0):
        with pytest.raises((ValueError, TypeError), match=rf"^side={side!r} "):
            MatchEquity(rules, side, hands=50)
    with pytest.raises(ValueError, match=r"^seed=-1 is out of range"):
        equity_table(rules, 50, -1)
    assert MatchEquity(rules, 1, hands=50).side == 1
