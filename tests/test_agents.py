"""Agents: legal play everywhere, seeding, the greedy scorer's choice in hand-built positions."""

from __future__ import annotations

import random

import pytest

from agents import Agent, RandomAgent, make_agent
from agents.greedy import GreedyAgent, greedy_choice, greedy_move
from agents.ppo import random_policy_npz
from agents.search import SearchAgent
from dominoes_env.core import HandState, MatchState, RuleConfig, tie_rank, tile_set

from .helpers import random_positions

RULES = {
    2: RuleConfig(num_players=2, target_score=100),
    3: RuleConfig(num_players=3, target_score=100),
    4: RuleConfig(num_players=4, target_score=100),
}


def random_views(rules: RuleConfig, count: int, seed: int):
    """``count`` views of the seat to play, from random matches (random play between them)."""
    return [view for _, view in random_positions(rules, count, seed)]


@pytest.fixture(scope="module")
def ppo_paths(tmp_path_factory):
    folder = tmp_path_factory.mktemp("policies")
    paths = {}
    for n, rules in RULES.items():
        paths[n] = folder / f"p{n}.npz"
        random_policy_npz(paths[n], rules, hidden=(32, 32), seed=n)
    return paths


@pytest.mark.parametrize("n", [2, 3, 4])
@pytest.mark.parametrize("kind", ["random", "greedy", "search", "ppo"])
def test_agents_only_play_legal_actions(kind, n, ppo_paths):
    count = {"search": 300}.get(kind, 2000)
    spec = {"search": "search:sims=8,min_per_move=1", "ppo": f"ppo:{ppo_paths[n]}"}.get(kind, kind)
    agent = make_agent(spec, seed=n)
    for view in random_views(RULES[n], count, seed=n):
        code = agent.act(view)
        assert code in view.legal, (kind, view)


@pytest.mark.parametrize("spec", ["random", "greedy", "search:sims=24", "ppo"])
def test_same_seed_same_choices(spec, ppo_paths):
    if spec == "ppo":
        spec = f"ppo:{ppo_paths[3]}"
    views = random_views(RULES[3], 150, seed=11)
    runs = []
    for _ in range(2):
        agent = make_agent(spec, seed=5)
        runs.append([agent.act(v) for v in views])
    assert runs[0] == runs[1]
    agent = make_agent(spec, seed=5)
    agent.act(views[0])
    agent.reset(5)  # reset(seed) restarts the generator
    assert [agent.act(v) for v in views] == runs[0]


def test_random_agent_differs_across_seeds_and_is_uniform():
    view = random_views(RULES[2], 1, seed=0)[0]  # a lead: 7 legal codes
    assert len(view.legal) == 7
    counts = dict.fromkeys(view.legal, 0)
    agent = RandomAgent(seed=1)
    for _ in range(7000):
        counts[agent.act(view)] += 1
    assert all(850 < c < 1150 for c in counts.values()), counts


def test_agents_refuse_a_view_that_is_not_their_turn(ppo_paths):
    match = MatchState(RULES[2], seed=0)
    view = match.view(1 - match.turn)
    ppo = make_agent(f"ppo:{ppo_paths[2]}")
    for agent in (RandomAgent(), GreedyAgent(), SearchAgent(sims=4), ppo):
        with pytest.raises(ValueError, match="no legal move"):
            agent.act(view)


@pytest.mark.parametrize("spec", ["random", "greedy", "search:sims=4", "guided:sims=4", "best",
                                  "ppo", "user"])
@pytest.mark.parametrize("bad", [None, "x", {"legal": (1,)}])
def test_act_names_a_view_that_is_not_a_seat_view(spec, bad):
    # act(None) was an AttributeError from deep inside each agent ('NoneType' object has no
    # attribute 'legal'); every agent, a user's subclass of Agent too, says what act expects
    class Mine(Agent):
        def act(self, view):
            return view.legal[0]

    agent = Mine() if spec == "user" else make_agent(spec, seed=0)
    with pytest.raises(TypeError, match=r"\.act: view must be a SeatView .*, got "):
        agent.act(bad)


def test_a_new_agent_is_one_small_class():
    class HeaviestFirst(Agent):
        name = "heaviest"

        def act(self, view):
            pips = view.rules.tiles.pips
            return max(view.legal, key=lambda code: (pips[code >> 2], code))

    view = random_views(RULES[2], 1, seed=3)[0]
    code = HeaviestFirst(seed=0).act(view)
    assert view.rules.tiles.pips[code >> 2] == max(t.pips for t in view.hand_tiles)


# -- greedy --------------------------------------------------------------------------------
TS = tile_set(6)


def code_of(tile, end):
    return TS.index(*tile) * 4 + ("left", "right", "up", "down").index(end)


def deal(seat0, seat1, leader=0):
    """A two-player deal with the given tiles (7 each); the rest is the boneyard."""
    return HandState.from_tiles(RuleConfig(), [seat0, seat1], leader=leader)


def test_greedy_lead_ties_on_points_shed_the_heaviest_then_the_double():
    # [5|5] and [6|4] both count 10; both weigh 10 pips: the double goes first. [6|6] counts 12.
    hand = deal([(5, 5), (6, 4), (6, 6), (0, 0), (0, 1), (1, 1), (0, 2)],
                [(3, 3), (2, 3), (1, 2), (1, 3), (0, 3), (2, 2), (1, 4)])
    assert GreedyAgent().act(hand.view(0)) == TS.index(5, 5) * 4
    # without the fives, nothing scores: shed the heaviest tile, [6|6]
    hand = deal([(2, 5), (6, 3), (6, 6), (0, 0), (0, 1), (1, 1), (0, 2)],
                [(3, 3), (2, 3), (1, 2), (1, 3), (0, 3), (2, 2), (1, 4)])
    assert GreedyAgent().act(hand.view(0)) == TS.index(6, 6) * 4


def test_greedy_plays_a_double_at_an_end_when_it_scores_most():
    # lead [3|4]; [4|4] on the right becomes the spinner (one side covered, counts 8);
    # [3|1] on the left: count 1 + 8 = 9. Seat 1 to play.
    hand = deal([(3, 4), (1, 3), (0, 0), (0, 2), (2, 2), (2, 5), (0, 5)],
                [(4, 4), (1, 1), (4, 6), (1, 4), (1, 6), (1, 5), (0, 1)])
    for move in [((3, 4), None), ((4, 4), "right"), ((3, 1), "left")]:
        hand.play(move)
    assert hand.turn == 1 and hand.count == 9
    view = hand.view(1)
    # [1|1]@left: the double at the end counts 2 -> 2 + 8 = 10 (the only scoring move);
    # [1|6]@left counts 14, [4|6]@right 7, [1|4]@right 2: heavier tiles that score nothing
    expected = code_of((1, 1), "left")
    assert expected in view.legal and hand.points_after(expected) == 10
    assert GreedyAgent().act(view) == expected


def test_greedy_scores_on_the_spinner_arms():
    # example 2 of RULES.md: [6|6] lead, [6|3]@left, [6|2]@right -> count 5, up/down open
    hand = deal([(6, 6), (6, 2), (0, 0), (1, 1), (0, 1), (0, 2), (1, 2)],
                [(6, 3), (6, 5), (6, 0), (3, 3), (2, 3), (6, 4), (2, 2)])
    for move in [((6, 6), None), ((6, 3), "left"), ((6, 2), "right")]:
        hand.play(move)
    assert hand.turn == 1 and hand.count == 5 and hand.cross_open
    # [6|5]@up: 3 + 2 + 5 = 10 (best); [6|0]@up 5; [6|4]@up 9; [3|3]@left 8; [2|2]@right 9
    points = {c: hand.points_after(c) for c in hand.legal_actions()}
    assert max(points.values()) == 10
    # up and down are alike: the lower code (up) breaks the tie
    assert GreedyAgent().act(hand.view(1)) == code_of((6, 5), "up")


def test_greedy_matches_a_brute_force_search_of_the_points_everywhere():
    ranks = {}
    for n, rules in RULES.items():
        ranks[n] = tie_rank(rules.max_pip)
        for view in random_views(rules, 700, seed=20 + n):
            match_points = {}
            for code in view.legal:
                # rebuild the hand from the view with any hidden deal, play the code, read points
                probe = _probe_state(view)
                match_points[code] = probe.play(code)
            best = max(match_points.values())
            choice = greedy_choice(view)
            assert match_points[choice] == best
            tied = [c for c, p in match_points.items() if p == best]
            pips = TS.pips
            heaviest = max(pips[c >> 2] for c in tied)
            assert pips[choice >> 2] == heaviest
            assert choice == max(tied, key=lambda c: ranks[n][c])
            assert greedy_move(_probe_state(view)) == choice  # the same rule on a full state


def _probe_state(view):
    from dominoes_env.core.sampling import determinize

    return determinize(view, random.Random(0))



@pytest.mark.parametrize("name", ["agents.greedy", "dominoes_env.core.sampling", "agents.search",
                                  "agents.ppo", "agents.guided", "agents.best", "agents.blas"])
def test_docstring_examples(name):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


def test_agents_play_in_a_pettingzoo_loop():
    import dominoes_env

    env = dominoes_env.env(num_players=3, target_score=100)
    env.reset(seed=0)
    players = {name: make_agent(spec, seed=i) for i, (name, spec) in
               enumerate(zip(env.possible_agents, ["greedy", "search:sims=12", "random"],
                             strict=True))}
    seat = {name: i for i, name in enumerate(env.possible_agents)}
    plays = 0
    for name in env.agent_iter(max_iter=2000):
        obs, reward, terminated, truncated, info = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        view = env.unwrapped.match.view(seat[name])  # this seat's information only
        code = players[name].act(view)
        assert obs["action_mask"][code] == 1
        env.step(code)
        plays += 1
    # played to the end of the match (which can be its first hand: once search drew its deals
    # with numpy, a seat reached the target after 19 plays here)
    assert env.unwrapped.match.is_over and plays > 0


def test_agents_are_opponents_inside_single_agent_env():
    from dominoes_env import SingleAgentEnv

    opponents = [SearchAgent(sims=8, min_per_move=1), GreedyAgent()]
    env = SingleAgentEnv(opponents=opponents, num_players=3, target_score=60, seat=0)
    learner = RandomAgent(seed=0)
    env.reset(seed=4)
    steps, done = 0, False
    while not done:
        view = env.match.view(env.seat)
        _, _, terminated, truncated, _ = env.step(learner.act(view))
        done = terminated or truncated
        steps += 1
    assert env.match.is_over and steps > 5
