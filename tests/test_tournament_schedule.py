"""Schedules (formats, seat rotation, duplicate deals) and the arena that plays one match."""

from __future__ import annotations

import hashlib
from collections import Counter

import pytest

from agents.arena import DuplicateDealMatch, agent_seed, derive_seed, play_match
from agents.base import RandomAgent
from agents.tournament.schedule import (
    circular_orders,
    make_schedule,
    scheduled_matches,
    seatings,
    tables_for,
)
from dominoes_env.core import RuleConfig

FAST = RuleConfig(target_score=60)


# -- schedule ---------------------------------------------------------------------------------
def test_head_to_head_every_pair_both_seatings_same_deal():
    s = make_schedule(["a", "b", "c"], RuleConfig(), matches=5, seed=7)
    assert s.format == "head_to_head"
    assert s.tables == (("a", "b"), ("a", "c"), ("b", "c"))
    assert s.group_size == 2 and s.deals == 3 and s.matches_per_table == (6, 6, 6)
    assert len(s.jobs) == 18 and [j.index for j in s.jobs] == list(range(18))
    assert len({j.key for j in s.jobs}) == 18
    by_deal = Counter((j.deal, j.table) for j in s.jobs)
    assert set(by_deal.values()) == {2}
    for d in range(3):  # every pairing plays deal d, in both seatings, from the same seed
        jobs = [j for j in s.jobs if j.deal == d]
        assert {j.seed for j in jobs} == {derive_seed(7, "deal", d)}
        for t in s.tables:
            assert sorted(j.seats for j in jobs if j.table == t) == sorted([t, t[::-1]])


def test_partnerships_pair_agents_as_sides():
    s = make_schedule(["x", "y"], RuleConfig(num_players=4), matches=4, seed=0)
    assert s.format == "partnerships"
    assert [j.seats for j in s.jobs] == [("x", "y", "x", "y"), ("y", "x", "y", "x")] * 2


def test_free_for_all_tables_rotate_every_seat():
    rules = RuleConfig(num_players=3)
    assert tables_for(["a", "b", "c", "d"], rules) == [
        ("a", "b", "c"), ("a", "b", "d"), ("a", "c", "d"), ("b", "c", "d")]  # fmt: skip
    assert tables_for(["a", "b"], RuleConfig(num_players=4, partnerships=False)) == [
        ("a", "a", "a", "b"), ("a", "a", "b", "b"), ("a", "b", "b", "b")]  # fmt: skip
    s = make_schedule(["a", "b", "c"], rules, matches=12, seed=0)
    assert s.format == "free_for_all" and len(s.jobs) == 12 and s.deals == 4
    seat_count = Counter((j.seats[k], k) for j in s.jobs for k in range(3))
    assert set(seat_count.values()) == {4}  # every agent in every seat equally often
    follows = Counter((j.seats[k], j.seats[(k + 1) % 3]) for j in s.jobs for k in range(3))
    assert set(follows.values()) == {6}  # and before / after each other equally often
    for d in range(4):  # each deal is played once per rotation
        assert len({j.seats for j in s.jobs if j.deal == d}) == 3


def test_circular_orders_and_uneven_groups():
    assert circular_orders(("a", "b", "c", "d")) == [
        ("a", "b", "c", "d"), ("a", "b", "d", "c"), ("a", "c", "b", "d"),
        ("a", "c", "d", "b"), ("a", "d", "b", "c"), ("a", "d", "c", "b")]  # fmt: skip
    rules = RuleConfig(num_players=4, partnerships=False)
    assert seatings(("a", "a", "b", "b"), rules, 0) == [
        ("a", "a", "b", "b"), ("a", "b", "b", "a"),
        ("b", "b", "a", "a"), ("b", "a", "a", "b")]  # fmt: skip
    assert seatings(("a", "a", "b", "b"), rules, 1) == [("a", "b", "a", "b"), ("b", "a", "b", "a")]
    s = make_schedule(["a", "b"], rules, matches=5, seed=0)
    assert s.matches_per_table == (8, 6, 8)  # rounded up to whole deals
    assert len({j.key for j in s.jobs}) == len(s.jobs) == 22


def test_schedule_is_deterministic_and_seeded():
    a = make_schedule(["a", "b"], RuleConfig(), 6, seed=1)
    assert a == make_schedule(["a", "b"], RuleConfig(), 6, seed=1)
    other = make_schedule(["a", "b"], RuleConfig(), 6, seed=2)
    assert [j.seed for j in a.jobs] != [j.seed for j in other.jobs]


@pytest.mark.parametrize(
    "agents, matches, message",
    [
        (["a"], 2, "at least 2 agents"),
        (["a", "a", "b"], 2, "given twice: a"),
        (["a", ""], 2, "non-empty string"),
        (["a", "b"], 0, "matches=0"),
        ("ab", 2, "list of agent specs"),
    ],
)
def test_schedule_rejects_bad_input(agents, matches, message):
    with pytest.raises((ValueError, TypeError), match=message):
        make_schedule(agents, RuleConfig(), matches, 0)


@pytest.mark.parametrize("rules", [RuleConfig(), RuleConfig(num_players=3),
                                   RuleConfig(num_players=4),
                                   RuleConfig(num_players=4, partnerships=False)])
def test_scheduled_matches_counts_the_schedule_without_building_it(rules):
    for count in range(2, 7):
        agents = [f"a{i}" for i in range(count)]
        for matches in (1, 2, 3, 5, 7, 12, 13):
            schedule = make_schedule(agents, rules, matches, 0)
            assert scheduled_matches(agents, rules, matches) == len(schedule.jobs)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("count, rules, matches", [
    (5, RuleConfig(num_players=4, partnerships=False), 10**7),  # some 45 GB
    (3, RuleConfig(), 10**7),
    (2, RuleConfig(num_players=3), 10**7),  # 2 tables
    (200, RuleConfig(num_players=4, partnerships=False), 1),  # 64,684,950 tables
])  # fmt: skip
def test_a_schedule_of_more_than_max_matches_in_all_is_refused_before_it_is_built(
        count, rules, matches):
    """``matches`` was bounded per pairing only: the pairings together asked for tens of GB."""
    agents = [f"a{i}" for i in range(count)]
    with pytest.raises(ValueError, match=r"^matches=\d+ at each of the [\d,]+ (pairings|tables) "
                                         r"of these \d+ agents schedules [\d,]+ matches; a "
                                         r"tournament schedules at most 10,000,000"):
        make_schedule(agents, rules, matches, 0)


def test_max_agents_is_the_most_a_schedule_can_seat():
    """No tournament that MAX_MATCHES admits is refused for its number of agents: the loosest
    table is two players, two matches a pairing."""
    import math

    from agents.tournament.schedule import MAX_AGENTS
    from dominoes_env.cli_support import MAX_MATCHES

    assert scheduled_matches(["a"] * MAX_AGENTS, RuleConfig(), 1) == 2 * math.comb(
        MAX_AGENTS, 2) <= MAX_MATCHES < 2 * math.comb(MAX_AGENTS + 1, 2)


@pytest.mark.timeout(20)
def test_twenty_thousand_agents_are_refused_before_their_specs_are_read():
    """20,000 ``--agents`` took 22 s (each spec compared with every other, quadratic) before
    the schedule they asked for was refused."""
    from agents.tournament import TournamentConfig
    from agents.tournament.schedule import MAX_AGENTS, check_agents

    message = r"^a tournament takes at most 3,162 agents \(MAX_AGENTS: more play more than "
    with pytest.raises(ValueError, match=message + r"10,000,000 matches\), got 3,163$"):
        check_agents([None] * (MAX_AGENTS + 1))  # counted before any spec is looked at
    agents = ["random", "greedy"] + [f"search:sims={i}" for i in range(1, 19_999)]
    with pytest.raises(ValueError, match=message + r".*got 20,000$"):
        TournamentConfig(agents, matches=1)
    assert len(check_agents(agents[:MAX_AGENTS])) == MAX_AGENTS


# -- arena ------------------------------------------------------------------------------------
def test_derive_seed_is_stable():
    digest = hashlib.blake2b(b'[0,"deal",0]', digest_size=8).digest()
    assert derive_seed(0, "deal", 0) == int.from_bytes(digest, "big") >> 1 == 2025139025073310403
    assert agent_seed(5, 1) == derive_seed(5, "seat", 1)
    with pytest.raises(TypeError):
        derive_seed(1.5)


def test_duplicate_deals_do_not_depend_on_play():
    """Hand k of two matches with one seed is the same deal, however hands before it went."""
    a, b = DuplicateDealMatch(FAST, seed=11), DuplicateDealMatch(FAST, seed=11)
    deals_a, deals_b = {}, {}
    for m, deals, pick in ((a, deals_a, 0), (b, deals_b, -1)):
        while not m.is_over:
            deals.setdefault(m.hand_number, (tuple(m.hand.hands), list(m.hand.boneyard)))
            m.play(m.legal_actions()[pick])
    common = set(deals_a) & set(deals_b)
    assert len(common) >= 2
    assert all(deals_a[k] == deals_b[k] for k in common)


def test_play_match_is_determined_by_seats_rules_and_seed():
    r = play_match(["random", "greedy"], FAST, seed=3)
    assert r == play_match(["random", "greedy"], FAST, seed=3)
    assert r != play_match(["random", "greedy"], FAST, seed=4)
    assert r.seats == ("random", "greedy") and r.winner in (0, 1)
    assert max(r.scores) >= 60 and r.scores[r.winner] == max(r.scores)
    assert r.plays >= 1 and sum(r.seat_points) <= sum(r.scores)
    swapped = play_match(["greedy", "random"], FAST, seed=3)
    assert swapped.seats == ("greedy", "random")
    rec = r.to_record()
    assert rec["seats"] == ["random", "greedy"] and isinstance(rec["duration_s"], float)


def test_play_match_accepts_agent_objects_and_resets_them():
    agents = [RandomAgent(seed=99), RandomAgent(seed=123)]
    r = play_match(agents, FAST, seed=5)
    assert r == play_match([RandomAgent(), RandomAgent()], FAST, seed=5)
    assert r == play_match(["random", "random"], FAST, seed=5)
    assert r.seats == ("random", "random")


def test_play_match_four_players_partnerships():
    rules = RuleConfig(num_players=4, target_score=60)
    r = play_match(["greedy", "random", "greedy", "random"], rules, 1)
    assert len(r.scores) == 2 and len(r.seat_points) == 4


def test_play_match_stops_undecided_after_max_hands():
    r = play_match(["random", "random"], RuleConfig(), seed=0, max_hands=1)
    assert r.winner is None and r.hands == 1 and max(r.scores) < 250


class Cheater(RandomAgent):
    name = "cheater"

    def act(self, view):
        return 10_000


def test_play_match_rejects_bad_agents_and_arguments():
    with pytest.raises(ValueError, match="'cheater' at seat 1 returned 10000, not a legal action"):
        play_match([RandomAgent(), Cheater()], FAST, seed=0)
    with pytest.raises(ValueError, match="3 agent\\(s\\) given for num_players=2"):
        play_match(["random"] * 3, FAST, seed=0)
    with pytest.raises(TypeError, match="no act"):
        play_match(["random", object()], FAST, seed=0)
    with pytest.raises(ValueError, match="unknown agent spec"):
        play_match(["random", "nonsense"], FAST, seed=0)
    with pytest.raises(TypeError, match="seed"):
        play_match(["random", "random"], FAST, seed="1")
    with pytest.raises(ValueError, match="max_hands"):
        play_match(["random", "random"], FAST, seed=0, max_hands=0)
