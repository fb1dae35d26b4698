"""The policy-guided search agent (``guided``) and the ``best`` spec."""

from __future__ import annotations

import copy
import itertools
import random

import numpy as np
import pytest

import agents.guided as guided_module
from agents import make_agent
from agents.base import MAX_SIMS
from agents.best import BEST_BY_TABLE, BestAgent, best_spec
from agents.greedy import GreedyAgent
from agents.guided import GuidedSearchAgent, still_in_race
from agents.likelihood import PlayLikelihood, replay_others
from agents.positions import positions
from agents.ppo import POLICY_DIR, random_policy_npz
from agents.search import SearchAgent, distinct_moves
from dominoes_env.core import HandState, MatchState, RuleConfig, tile_set
from dominoes_env.core.sampling import DealSampler
from dominoes_env.core.view import make_view
from dominoes_env.obs.v2 import encode_observation

from .helpers import random_positions

TS = tile_set(6)
RULES = {n: RuleConfig(num_players=n, target_score=100) for n in (2, 3, 4)}


@pytest.fixture(scope="module")
def policies(tmp_path_factory):
    folder = tmp_path_factory.mktemp("policies")
    paths = {}
    for n, rules in RULES.items():
        paths[n] = folder / f"p{n}.npz"
        random_policy_npz(paths[n], rules, hidden=(16, 16), seed=n)
    return paths


def play_match(players, rules, seed, on_view=None):
    """Play a match; ``on_view(match, view)`` is called before each decision. Returns the codes."""
    match = MatchState(rules, seed=seed)
    codes = []
    while not match.is_over:
        view = match.view(match.turn)
        if on_view is not None:
            on_view(match, view)
        code = players[match.turn].act(view)
        assert code in view.legal
        codes.append(code)
        match.play(code)
    return codes


# -- specs ---------------------------------------------------------------------------------
def test_spec_and_parameters(policies):
    agent = make_agent("guided")
    assert type(agent) is GuidedSearchAgent
    assert (agent.sims, agent.time_ms, agent.plies, agent.infer, agent.pool, agent.race) == (
        600, None, None, 1.0, 3, 1.5)
    agent = make_agent(f"guided:sims=50,plies=3,infer=0.5,pool=2,policy={policies[2]}")
    assert (agent.sims, agent.plies, agent.infer, agent.pool) == (50, 3, 0.5, 2)
    assert agent.policy_path == policies[2]
    assert make_agent("guided:time_ms=20").time_ms == 20
    assert make_agent("guided:race=2.5").race == 2.5
    assert make_agent("guided").lookback is None
    assert make_agent("guided:lookback=2").lookback == 2


@pytest.mark.parametrize("spec, fragment", [
    ("guided:sims=0", "sims"),
    ("guided:time_ms=0", "time_ms"),
    ("guided:plies=-1", "plies"),
    ("guided:infer=-0.5", "infer"),
    ("guided:pool=0", "pool"),
    ("guided:lookback=0", "lookback"),
    ("guided:lookback=1.5", "lookback"),
    ("guided:race=-1", "race"),
    ("guided:policy=/no/such/file.npz", "no such file"),
    ("guided:depth=2", "bad parameters"),
])
def test_bad_parameters_are_clear_errors(spec, fragment):
    with pytest.raises(ValueError, match=fragment):
        make_agent(spec)


# -- play ----------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [2, 3, 4])
@pytest.mark.parametrize("plies", [",plies=0", ",plies=2", ""])
def test_only_legal_moves_in_whole_matches(n, plies, policies):
    """Whole matches (so the agent's memory of the hand and the inference run), every seat
    guided, with greedy, mixed and policy rollouts; any illegal code fails ``play_match``."""
    players = [make_agent(f"guided:sims=12,min_per_move=1{plies},policy={policies[n]}",
                          seed=s) for s in range(n)]
    assert len(play_match(players, RULES[n], seed=n)) > 20


def test_only_legal_moves_at_random_positions(policies):
    agent = make_agent(f"guided:sims=8,min_per_move=1,plies=1,policy={policies[3]}", seed=1)
    for _, view in random_positions(RULES[3], 120, seed=4, stride=10):
        assert agent.act(view) in view.legal


def test_same_seed_same_choices(policies):
    def run(seed):
        players = [make_agent(f"guided:sims=16,min_per_move=2,plies=2,policy={policies[2]}",
                              seed=seed), SearchAgent(seed=9, sims=16)]
        return play_match(players, RULES[2], seed=5)

    first = run(3)
    assert run(3) == first
    agent = make_agent(f"guided:sims=16,min_per_move=2,plies=2,policy={policies[2]}", seed=3)
    play_match([agent, GreedyAgent()], RULES[2], seed=1)
    agent.reset(3)  # reset(seed) restarts the generator and forgets the hand
    assert play_match([agent, SearchAgent(seed=9, sims=16)], RULES[2], seed=5) == first


@pytest.mark.parametrize("n,options", [(2, {}), (3, {}), (2, {"chunk": 8, "sims": 120}),
                                       (3, {"chunk": 8, "sims": 120}),
                                       (4, {"chunk": 8, "sims": 120}),
                                       (2, {"plies": 2, "chunk": 8, "sims": 120}),
                                       (2, {"shipped": True}),
                                       (2, {"obs_version": 4, "sims": 240}),
                                       (3, {"obs_version": 4, "chunk": 8, "sims": 120}),
                                       (4, {"obs_version": 4, "chunk": 8, "sims": 120}),
                                       ("4-solo", {"obs_version": 4, "chunk": 8, "sims": 120}),
                                       (3, {"obs_version": 5, "chunk": 8, "sims": 120}),
                                       (4, {"obs_version": 5, "chunk": 8, "sims": 120}),
                                       (2, {"obs_version": 3, "plies": 2, "chunk": 8, "sims": 120}),
                                       (2, {"shipped": "ppo_2p.npz", "sims": 120}),
                                       ("4-solo", {"shipped": "ppo_4p_free_for_all.npz",
                                                   "sims": 120})])
def test_batched_rollouts_give_the_one_by_one_values(n, options, tmp_path):
    # batched, the chunks after the first are searched ahead (two, four, ... at once) and a
    # chunk the search does not reach is drawn again from the generators' saved states: seat by
    # seat, decision after decision, the values are the one-by-one path's, float for float
    # (policies of observation versions 2 to 5: agents.batch_obs, agents.batch_lookahead)
    options = dict(options)
    shipped = options.pop("shipped", False)
    rules = (RuleConfig(num_players=4, partnerships=False) if n == "4-solo"
             else RuleConfig(num_players=n))
    if shipped:  # the table's own policy, or a shipped one named
        policy = None if shipped is True else str(POLICY_DIR / shipped)
    else:
        rules = rules.replace(target_score=100)  # as RULES
        policy = str(tmp_path / "p.npz")
        random_policy_npz(policy, rules, hidden=(16, 16), seed=rules.num_players,
                          obs_version=options.pop("obs_version", 2))
    agents, compared = {}, 0
    for view in positions(rules, 40, seed=5):
        pair = agents.setdefault(view.seat, [
            GuidedSearchAgent(seed=view.seat, policy=policy, batch=batch, **options)
            for batch in (True, False)])
        assert pair[0].network(view.rules).batch_encoder is not None
        codes = [agent.act(view) for agent in pair]
        assert codes[0] == codes[1]
        assert pair[0].last_values == pair[1].last_values
        compared += len(pair[0].last_values) > 1
    assert compared >= 10


def test_refuses_a_view_that_is_not_its_turn(policies):
    match = MatchState(RULES[2], seed=0)
    with pytest.raises(ValueError, match="no legal move"):
        GuidedSearchAgent(policy=policies[2]).act(match.view(1 - match.turn))


def test_policy_for_other_rules_is_refused(policies):
    match = MatchState(RULES[3], seed=0)
    with pytest.raises(ValueError, match="trained for 2 players; these rules are 3 players"):
        GuidedSearchAgent(policy=policies[2]).act(match.view(match.turn))
    match = MatchState(RULES[2].replace(max_pip=9), seed=0)  # its table, another tile set
    with pytest.raises(ValueError, match="these rules need"):
        GuidedSearchAgent(policy=policies[2]).act(match.view(match.turn))


# -- budget --------------------------------------------------------------------------------
def test_sims_budget_is_shared_among_distinct_moves(policies):
    agent = GuidedSearchAgent(seed=0, sims=60, min_per_move=4, race=0, policy=policies[2])
    seen = 0
    for _, view in random_positions(RULES[2], 60, seed=2):
        agent.act(view)
        moves = distinct_moves(view)
        if len(moves) == 1:
            assert agent.last_values == {}  # a forced move costs nothing
            continue
        runs = max(4, -(-60 // len(moves)))
        assert sorted(agent.last_values) == sorted(moves)
        assert {r for r, _ in agent.last_values.values()} == {runs}
        seen += 1
    assert seen > 10


def test_time_budget_stops_after_the_chunk_that_spends_it(policies, monkeypatch):
    """With ``time_ms`` the agent samples chunks of deals until the time is spent: on a clock
    that advances 1 ms per reading, ``time_ms=4.5`` stops after the 5th chunk."""
    clock = itertools.count()
    monkeypatch.setattr(guided_module.time, "perf_counter", lambda: next(clock) / 1000)
    agent = GuidedSearchAgent(seed=0, time_ms=4.5, chunk=3, infer=0, race=0,
                              policy=policies[2])
    for _, view in random_positions(RULES[2], 40, seed=3):
        agent.act(view)
        if len(distinct_moves(view)) > 1:
            assert {r for r, _ in agent.last_values.values()} == {15}


@pytest.mark.parametrize("budget", [{"sims": 1, "min_per_move": 1_000_000},
                                    {"sims": MAX_SIMS}])
def test_a_decision_spends_at_most_max_sims_rollouts(policies, monkeypatch, budget):
    """The budget was ``min_per_move`` times the moves: ``min_per_move=1000000`` with 7 moves
    played 7,000,000 rollouts, minutes where ``sims`` is bounded to about one; and the last
    chunk rounded its share up to whole deals: ``sims=MAX_SIMS`` with 7 moves played
    1,000,006."""
    played = [0]

    def batched(self, view, net, rollout, deals, moves, end_double=None):
        played[0] += len(deals) * len(moves)
        assert played[0] <= 2 * MAX_SIMS, f"{played[0]:,} rollouts and counting"
        return np.zeros((len(deals), len(moves)))

    monkeypatch.setattr(GuidedSearchAgent, "_batched", batched)
    agent = GuidedSearchAgent(seed=0, chunk=1000, pool=1, infer=0, race=0,
                              policy=policies[2], **budget)
    match = MatchState(RULES[2], seed=2)
    view = match.view(match.turn)
    moves = len(distinct_moves(view))
    assert moves > 1 and agent.act(view) in view.legal
    spent = sum(r for r, _ in agent.last_values.values())
    assert MAX_SIMS - moves < spent <= played[0] <= MAX_SIMS


# -- racing --------------------------------------------------------------------------------
def test_race_keeps_the_moves_within_z_standard_errors():
    best = np.array([10.0, 12.0, 8.0, 10.0])  # one row per deal, one column per move
    values = np.stack([best - 1,  # 1 behind on every deal: no spread at all, dropped
                       best - np.array([2, -1, 2, -1]),  # 0.5 behind, 0.58 standard errors
                       best,
                       best - np.array([3, 1, 3, 1])], axis=1)  # 2 behind, 3.46 standard errors
    alive = [1, 4, 5, 7]  # the columns' move indices
    assert still_in_race(values, alive, 3.0) == [4, 5]
    assert still_in_race(values, alive, 4.0) == [4, 5, 7]
    assert still_in_race(values[:, 1:3], [4, 5], 0.5) == [5]


def test_race_spends_the_budget_on_the_moves_left(policies):
    """With ``race`` every move gets at least ``chunk`` deals; the moves still in at the end
    share every deal (the most rollouts), the choice is one of them, and the decision ends
    when one is left or the budget is spent (overshooting by less than one rollout per move)."""
    agent = GuidedSearchAgent(seed=0, sims=120, chunk=8, min_per_move=2, race=1.0,
                              policy=policies[2])
    raced = stopped = 0
    for _, view in random_positions(RULES[2], 80, seed=2):
        code = agent.act(view)
        moves = distinct_moves(view)
        if len(moves) == 1:
            continue
        counts = {c: r for c, (r, _) in agent.last_values.items()}
        assert sorted(counts) == sorted(moves) and min(counts.values()) >= 8
        most = max(counts.values())
        left = [c for c in moves if counts[c] == most]
        assert code in left
        total = sum(counts.values())
        assert total < 120 + len(moves)
        stopped += total < 120  # one move left before the budget was spent
        raced += len(left) < len(moves)
    assert raced > 5 and stopped > 5


def test_race_stops_once_the_winning_move_is_clear(tmp_path):
    """RULES.md example 2 (see test_search): [6|5]@up wins the match on the spot, every
    rollout worth +250; the race drops the other moves after the first chunk and stops."""
    policy = tmp_path / "p.npz"
    random_policy_npz(policy, RuleConfig(), hidden=(16, 16), seed=0)
    hand = HandState.from_tiles(RuleConfig(), [
        [(6, 6), (6, 2), (0, 0), (1, 1), (0, 1), (0, 2), (1, 2)],
        [(6, 3), (6, 5), (6, 0), (3, 3), (2, 3), (6, 4), (2, 2)]])
    for move in [((6, 6), None), ((6, 3), "left"), ((6, 2), "right")]:
        hand.play(move)
    view = make_view(hand, 1, (245, 240), 250, 3, None)
    win = TS.index(5, 6) * 4 + 2
    agent = GuidedSearchAgent(seed=0, sims=600, chunk=16, race=2.0, policy=policy)
    assert agent.act(view) == win
    assert agent.last_values[win] == (16, 250.0)
    assert {r for r, _ in agent.last_values.values()} == {16}


# -- inference -----------------------------------------------------------------------------
@pytest.mark.parametrize("n", [2, 3])
def test_replayed_decisions_are_what_the_others_saw(n, policies):
    """Given the true deal, the positions the inference rebuilds for the other seats' past
    plays encode exactly as those seats' own views did, and the codes are what they played."""
    agent = GuidedSearchAgent(seed=0, sims=8, min_per_move=1, policy=policies[n])
    seen: dict[tuple, object] = {}  # (seat, history length) -> that seat's view
    checked = 0

    def on_view(match, view):
        nonlocal checked
        seen[view.seat, len(view.history), match.hand_number] = view
        if view.seat != 0:
            return
        hand = match.hand
        boneyard = hand.boneyard[hand.drawn:]
        segments = agent.segments(view)
        net = agent.network(view.rules)
        for state, seat, scores, code in replay_others(view, segments, hand.hands, boneyard):
            theirs = seen[seat, len(state.history), match.hand_number]
            ours = net.encode(net.layout, state, seat, scores, False)
            assert ours.tolist() == encode_observation(theirs).tolist()
            assert code in theirs.legal
            checked += 1

    players = [agent] + [GreedyAgent() for _ in range(n - 1)]
    play_match(players, RULES[n], seed=11, on_view=on_view)
    assert checked > 10


@pytest.mark.parametrize("n, version", [(2, 2), (3, 2), (4, 2), (2, 3), (2, 4), (3, 4), (4, 4)])
def test_likelihood_in_batches_equals_replaying_every_deal(n, version, tmp_path):
    """The likelihood of a whole batch of deals equals replaying and encoding each deal's
    decisions one by one: with observation version 2 the public part of the others'
    observations replayed once and the hands filled in per deal (``fast``); with versions 3
    and 4 (the shipped ``ppo`` policies) every decision rebuilt in all deals at once and
    encoded by the batched encoders (``batched``)."""
    rules = RuleConfig(num_players=n, target_score=100)
    path = tmp_path / f"v{version}.npz"
    random_policy_npz(path, rules, hidden=(16, 16), seed=n, obs_version=version)
    agent = GuidedSearchAgent(seed=0, sims=8, min_per_move=1, policy=path)
    rng = random.Random(n)
    compared = 0

    def on_view(match, view):
        nonlocal compared
        if view.seat != 0:
            return
        sampler = DealSampler.from_view(view)
        deals = [sampler.sample(rng) for _ in range(12)]
        likelihood = agent.play_likelihood(view, deals[0])
        assert (likelihood.fast, likelihood.batched) == (version == 2, version != 2)
        together, slow = likelihood(deals), likelihood.replayed(deals)
        assert together.shape == (12,)
        assert likelihood([]).shape == (0,)  # no deals: no likelihoods (v3/4 raised)
        assert np.allclose(together, slow, rtol=1e-5, atol=1e-5)
        compared += int((slow != 0).any())

    players = [agent] + [GreedyAgent() for _ in range(n - 1)]
    for seed in range(3):
        play_match(players, rules, seed=seed, on_view=on_view)
    assert compared > 10


def test_another_encoder_is_replayed_deal_by_deal(policies):
    """The batched path knows this package's encoder only; a net reading another one (a
    registered observation version, say) gets the per-deal replay."""
    agent = GuidedSearchAgent(seed=0, sims=8, min_per_move=1, policy=policies[2])
    match = MatchState(RULES[2], seed=5)
    while match.turn != 0 or len(agent.memory) < 2:
        view = match.view(match.turn)
        match.play(agent.act(view) if match.turn == 0 else view.legal[0])
    view = match.view(0)
    segments = agent.segments(view)
    net = agent.network(view.rules)
    sampler = DealSampler.from_view(view)
    deals = [sampler.sample(random.Random(i)) for i in range(6)]
    wrapped = copy.copy(net)
    wrapped.encode = lambda *args, **kw: net.encode(*args, **kw)
    slow = PlayLikelihood(view, segments, wrapped, deals[0])
    assert not slow.fast and not slow.batched
    assert slow(deals).tolist() == slow.replayed(deals).tolist()
    assert (slow(deals) < 0).any()  # some of the others' plays had a choice
    fast = PlayLikelihood(view, segments, net, deals[0])
    assert fast.fast and np.allclose(fast(deals), slow(deals), atol=1e-5)


def test_inference_stops_at_another_seats_draw(policies):
    """The remembered decisions used are the newest ones back to (not including) the last
    one after which the other seat drew."""
    agent = GuidedSearchAgent(seed=0, sims=8, min_per_move=1, policy=policies[2])
    cut = 0

    def drew(events):
        return any(ev[0] == "draw" and ev[1] == 1 for ev in events)

    def on_view(match, view):
        nonlocal cut
        if view.seat != 0:
            return
        segments = agent.segments(view)  # the memory of another hand forgotten first
        memory = agent.memory
        assert [s[0] for s in segments] == list(reversed(memory))[:len(segments)]
        bounds = [len(v.history) for v in memory] + [len(view.history)]
        for j in range(len(memory) - len(segments), len(memory)):
            assert not drew(view.history[bounds[j]:bounds[j + 1]])
        if len(segments) < len(memory):
            j = len(memory) - len(segments) - 1
            assert drew(view.history[bounds[j]:bounds[j + 1]])
            cut += 1

    play_match([agent, GreedyAgent()], RULES[2], seed=2, on_view=on_view)
    assert cut > 3


def test_lookback_weighs_the_newest_decisions_only(policies):
    """``lookback=k``: the segments are the first ``k`` of those the whole look-back uses
    (the newest), at a table without draws where the whole look-back reaches the hand's
    start."""
    rules = RuleConfig(num_players=4, partnerships=False)
    full = GuidedSearchAgent(seed=0, sims=8, min_per_move=1)
    short = GuidedSearchAgent(seed=0, sims=8, min_per_move=1, lookback=2)
    longest = 0

    def on_view(match, view):
        nonlocal longest
        if view.seat != 0:
            return
        whole, cut = full.segments(view), short.segments(view)
        assert cut == whole[:2]
        longest = max(longest, len(whole))
        short.act(view)  # short decides here too, and remembers it as full does

    play_match([full, GreedyAgent(), GreedyAgent(), GreedyAgent()], rules, seed=3,
               on_view=on_view)
    assert longest > 2


# -- best ----------------------------------------------------------------------------------
def test_best_names_the_strongest_agent_per_table():
    assert BEST_BY_TABLE == {"2p": "guided:policy=ppo,infer=0.5",
                             "3p": "guided:infer=0,sims=1800",
                             "4p_partnerships": "guided:infer=0",
                             "4p_free_for_all": "guided:infer=0,sims=3000,policy=ppo"}
    assert {n: best_spec(n) for n in (2, 3, 4)} == {2: "guided:policy=ppo,infer=0.5",
                                                    3: "guided:infer=0,sims=1800",
                                                    4: "guided:infer=0"}
    with pytest.raises(ValueError, match="not a table: 5"):
        best_spec(5)


@pytest.mark.parametrize("n, cls", [(2, GuidedSearchAgent), (3, GuidedSearchAgent),
                                    (4, GuidedSearchAgent)])
def test_best_resolves_when_it_sees_the_table(n, cls):
    agent = make_agent("best", seed=4)
    assert type(agent) is BestAgent and agent.agent is None
    agent.check_rules(RuleConfig(num_players=n))
    assert type(agent.agent) is cls and agent.spec == best_spec(n)
    fresh = make_agent("best", seed=4)  # or at its first decision
    match = MatchState(RuleConfig(num_players=n), seed=1)
    view = match.view(match.turn)
    assert fresh.act(view) in view.legal and type(fresh.agent) is cls


def test_best_follows_the_table_and_its_seed():
    agent = make_agent("best", seed=2)
    ffa = RuleConfig(num_players=4, partnerships=False)
    views = [v for _, v in random_positions(ffa, 20, seed=1)]
    first = [agent.act(v) for v in views]
    agent.reset(2)
    assert [agent.act(v) for v in views] == first
    reference = make_agent(BEST_BY_TABLE["4p_free_for_all"], seed=2)
    assert first == [reference.act(v) for v in views]
    match = MatchState(RuleConfig(num_players=2), seed=0)
    agent.act(match.view(match.turn))  # a two-player table: guided, with inference, now
    assert type(agent.agent) is GuidedSearchAgent and agent.spec == "guided:policy=ppo,infer=0.5"
    assert agent.agent.infer == 0.5 and agent.agent.table_ppo
