"""OpenSpiel's own bots on ``python_straight_dominoes``: ``resample_from_infostate`` gives a state
the player cannot tell from the real one, OpenSpiel's Python ``ISMCTSBot`` plays whole games
with it unchanged, and the C++ ``pyspiel.ISMCTSBot`` (which crashes on a Python game) is
refused by the ``ismcts`` spec with a reason, never reached."""

from __future__ import annotations

import random
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pyspiel = pytest.importorskip("pyspiel")

from dominoes_env import openspiel as dos  # noqa: E402
from dominoes_env.core import DealSampler, MatchState, RuleConfig  # noqa: E402

TABLES = {"2p": {}, "3p": {"num_players": 3}, "4p-partners": {"num_players": 4},
          "4p-solo": {"num_players": 4, "partnerships": "no"}}


def _advance(state, rng: random.Random, decisions: int):
    """Random chance outcomes and moves until ``decisions`` decisions were made and the state
    is a decision node again (or the game is over)."""
    made = 0
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(rng.choice([a for a, _ in state.chance_outcomes()]))
        elif made == decisions:
            break
        else:
            state.apply_action(rng.choice(state.legal_actions()))
            made += 1
    return state


def _same_for(player: int, a, b) -> None:
    """``player`` cannot tell ``a`` from ``b``."""
    assert a.information_state_string(player) == b.information_state_string(player)
    assert a.observation_string(player) == b.observation_string(player)
    np.testing.assert_array_equal(np.array(a.observation_tensor(player)),
                                  np.array(b.observation_tensor(player)))
    assert a.view(player) == b.view(player)  # everything the seat knows, hand included
    assert a.current_player() == b.current_player()
    if player == a.current_player():
        assert a.legal_actions() == b.legal_actions()


@settings(max_examples=80, deadline=None)
@given(table=st.sampled_from(sorted(TABLES)), seed=st.integers(0, 10**6),
       decisions=st.integers(0, 100), other=st.booleans(), guess=st.integers(0, 2**31))
def test_the_resampled_state_looks_the_same_to_the_player(table, seed, decisions, other,
                                                          guess):
    game = dos.load_game(target_score=150, **TABLES[table])  # a match of several hands
    state = _advance(game.new_initial_state(), random.Random(seed), decisions)
    if state.is_terminal():  # about one game in ten is over that soon
        return
    player = (state.current_player() + other) % game.num_players()
    new = state.resample_from_infostate(player, random.Random(guess).random)
    _same_for(player, state, new)
    # a whole history from the game's start: replaying its actions gives the same state
    again = game.new_initial_state()
    for action in new.history():
        again.apply_action(action)
    assert str(again) == str(new) and again.history() == new.history()
    for p in range(game.num_players()):
        assert again.information_state_string(p) == new.information_state_string(p)
    assert len(new.history()) == len(state.history())


@pytest.mark.parametrize("table", sorted(TABLES))
def test_different_hidden_deals_come_out(table):
    game = dos.load_game(**TABLES[table])
    state = _advance(game.new_initial_state(), random.Random(3), 3)
    player = state.current_player()
    view = state.view(player)
    assert DealSampler.from_view(view).num_deals > 1000
    rng = random.Random(0)
    deals = set()
    for _ in range(30):
        new = state.resample_from_infostate(player, rng.random)
        deals.add(tuple(new.match.hand.hands))
    assert len(deals) == 30  # among more than a thousand fitting deals
    seen = {s: 0 for s in range(game.num_players()) if s != player}
    for hands in deals:
        for s in seen:
            seen[s] |= hands[s]
    for s, tiles in seen.items():  # each hidden seat got more tiles than it holds
        assert tiles.bit_count() > view.hand_sizes[s]


def test_the_same_sampler_gives_the_same_state():
    game = dos.load_game(num_players=3)
    state = _advance(game.new_initial_state(), random.Random(8), 10)
    first = state.resample_from_infostate(1, random.Random(5).random)
    again = state.resample_from_infostate(1, random.Random(5).random)
    assert first.history() == again.history()
    # OpenSpiel's own sampler works too (the bot's default)
    other = state.resample_from_infostate(1, pyspiel.UniformProbabilitySampler(0.0, 1.0))
    _same_for(1, state, other)


def test_a_state_built_from_a_view_resamples_its_root():
    match = MatchState(RuleConfig(num_players=3, target_score=100), seed=11)
    for _ in range(4):
        match.play(match.legal_actions()[0])
    view = match.view(match.turn)
    game = dos.load_game(match.rules, episode="hand", reward_mode="score_delta")
    root = dos.state_from_view(game, view, *DealSampler.from_view(view).sample(random.Random(0)))
    rng = random.Random(1)
    state = _advance(root.clone(), rng, 5)
    for player in range(3):
        deals = set()
        for _ in range(10):
            new = state.resample_from_infostate(player, rng.random)
            _same_for(player, state, new)
            deals.add(tuple(new.match.hand.hands))
        assert len(deals) > 1


def test_resampling_needs_a_decision_node_a_seat_and_a_sampler():
    game = dos.load_game()
    state = game.new_initial_state()
    with pytest.raises(ValueError, match="needs a decision node.*a chance node"):
        state.resample_from_infostate(0, random.random)
    state = _advance(state, random.Random(0), 2)
    with pytest.raises(ValueError, match=r"player_id=2 is out of range; allowed: 0\.\.1"):
        state.resample_from_infostate(2, random.random)
    with pytest.raises(TypeError, match="player_id=0.5 must be an integer"):
        state.resample_from_infostate(0.5, random.random)
    with pytest.raises(TypeError, match="probability_sampler must be a callable"):
        state.resample_from_infostate(0, 0.5)
    with pytest.raises(ValueError, match=r"must return a float in \[0, 1\); got 1\.5"):
        state.resample_from_infostate(0, lambda: 1.5)
    state = _advance(state, random.Random(0), 10**6)
    with pytest.raises(ValueError, match="this state is terminal"):
        state.resample_from_infostate(0, random.random)


@pytest.mark.parametrize("table", sorted(TABLES))
def test_openspiels_python_ismcts_bot_plays_whole_games_unchanged(table):
    """The bot as OpenSpiel ships it: its default resampler (``resample_from_infostate`` with
    ``pyspiel.UniformProbabilitySampler``) and its default keys (information state strings),
    which it checks are the same in every sampled state."""
    from open_spiel.python.algorithms import ismcts, mcts

    game = dos.load_game(target_score=30, **TABLES[table])
    random_state = np.random.RandomState(0)
    bot = ismcts.ISMCTSBot(game, mcts.RandomRolloutEvaluator(1, random_state), 2.0, 6,
                           random_state=random_state)
    state = game.new_initial_state()
    decisions = 0
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(int(random_state.choice(outcomes, p=probs)))
        else:
            action = int(bot.step(state))
            assert action in state.legal_actions()
            state.apply_action(action)
            decisions += 1
    assert decisions > 5 and max(state.match.scores) >= 30
    assert sorted(state.returns())[-1] == 1.0


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=300)


def test_the_cpp_bot_is_refused_by_the_spec_with_its_reason():
    from agents.ismcts import CPP_BOT_REFUSED
    from agents.specs import make_agent

    with pytest.raises(ValueError, match="bot=cpp is refused: OpenSpiel's C.. pyspiel"):
        make_agent("ismcts:bot=cpp")
    assert "segmentation fault" in CPP_BOT_REFUSED
    with pytest.raises(ValueError, match="bot='x' is not allowed; allowed: python"):
        make_agent("ismcts:bot=x")
    run = subprocess.run([sys.executable, "-m", "dominoes_env", "play", "--opponents",
                          "ismcts:bot=cpp"], capture_output=True, text=True, timeout=300,
                         stdin=subprocess.DEVNULL)
    assert run.returncode == 2, run.stderr  # one line, exit 2: no crash
    assert run.stderr.count("\n") == 1 and "bot=cpp is refused" in run.stderr


def test_the_cpp_bot_still_crashes_on_a_python_game():
    """Why the spec refuses it: OpenSpiel's C++ bot releases the interpreter lock in step()
    and then calls the Python game. If OpenSpiel fixes that, this test fails: then allow it."""
    run = _run("""
        import pyspiel
        from dominoes_env import openspiel
        game = openspiel.load_game(target_score=30)
        state = game.new_initial_state()
        while state.is_chance_node():
            state.apply_action(state.chance_outcomes()[0][0])
        bot = pyspiel.ISMCTSBot(0, pyspiel.RandomRolloutEvaluator(1, 0), 2.0, 5, -1,
                                pyspiel.ISMCTSFinalPolicyType.MAX_VISIT_COUNT, False, False)
        print(bot.step(state))
    """)
    assert run.returncode == -11, (run.returncode, run.stderr[-500:])  # SIGSEGV


def test_the_ismcts_spec_runs_in_a_fresh_interpreter():
    run = _run("""
        from agents.arena import play_match
        result = play_match(["ismcts:sims=4", "greedy"], {"target_score": 20}, seed=0)
        print(result.winner in (0, 1))
    """)
    assert run.returncode == 0 and run.stdout.strip() == "True", run.stderr[-500:]


def test_openspiels_rl_algorithms_run_on_the_observation_tensor():
    """No information state tensor: OpenSpiel's rl_environment then serves the observation
    tensor, and its policy gradient learns from it (a few A2C episodes, both seats)."""
    torch = pytest.importorskip("torch")
    from open_spiel.python import rl_environment
    from open_spiel.python.pytorch import policy_gradient

    game = dos.load_game(target_score=20, episode="hand")
    assert not game.get_type().provides_information_state_tensor
    env = rl_environment.Environment(game, seed=0)
    size = env.observation_spec()["info_state"][0]
    assert env.use_observation and size == game.observation_tensor_size()
    torch.manual_seed(0)
    agents = [policy_gradient.PolicyGradient(p, size, game.num_distinct_actions(),
                                             loss_str="a2c", hidden_layers_sizes=(16,),
                                             batch_size=2, num_critic_before_pi=1)
              for p in range(2)]
    for _ in range(4):
        step = env.reset()
        while not step.last():
            player = step.observations["current_player"]
            action = agents[player].step(step).action
            assert action in step.observations["legal_actions"][player]
            step = env.step([action])
        for agent in agents:
            agent.step(step)
        assert sorted(step.rewards) == [-1.0, 1.0] or step.rewards == [0.0, 0.0]
    for agent in agents:  # both seats learned: a critic loss and a policy loss
        assert all(np.isfinite(torch.as_tensor(loss).detach().item()) for loss in agent.loss)
