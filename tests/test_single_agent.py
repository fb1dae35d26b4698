"""SingleAgentEnv: Gymnasium's checker, seeding, opponents, rewards, masks, MaskablePPO."""

from __future__ import annotations

import warnings
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from dominoes_env import IllegalMoveError, SingleAgentEnv
from dominoes_env.registration import GYM_ID
from dominoes_env.single_agent import RandomPlayer

from .helpers import CHILD_TIMEOUT_S, ENV_CONFIGS, ROOT, comparable_info  # noqa: E402

CONFIGS = ENV_CONFIGS


def play_episode(env, seed, policy_seed=0):
    rng = np.random.default_rng(policy_seed)
    obs, info = env.reset(seed=seed)
    trajectory = [(obs.tobytes(), comparable_info(info))]
    total = 0.0
    while True:
        mask = env.action_masks()
        assert mask.any() and env.match.turn == env.seat
        obs, reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(mask))))
        total += reward
        trajectory.append((obs.tobytes(), reward, terminated, comparable_info(info)))
        if terminated or truncated:
            return total, trajectory


@pytest.mark.parametrize("name", list(CONFIGS))
def test_gymnasium_check_env(name):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        env = gymnasium.make(GYM_ID, render_mode="rgb_array", **CONFIGS[name])
        check_env(env.unwrapped)
    assert [str(w.message) for w in caught] == []


@pytest.mark.parametrize("name", list(CONFIGS))
def test_masks_are_the_legal_moves_and_rewards_add_up(name):
    env = SingleAgentEnv(target_score=120, **CONFIGS[name])
    rules = env.rules
    for seed in range(3):
        rng = np.random.default_rng(seed)
        env.reset(seed=seed)
        total = 0.0
        terminated = False
        while not terminated:
            mask = env.action_masks()
            assert np.flatnonzero(mask).tolist() == sorted(env.match.legal_actions())
            assert mask.dtype == bool and env.match.turn == env.seat
            _, reward, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(mask))))
            total += reward
            assert not truncated
        assert not env.action_masks().any()
        scores = env.match.scores
        side = rules.side_of(env.seat)
        others = [s for k, s in enumerate(scores) if k != side]
        assert total == pytest.approx((scores[side] - sum(others) / len(others)) / 120)


def test_win_loss_and_hand_episodes():
    env = SingleAgentEnv(num_players=3, reward_mode="win_loss", episode="hand")
    for seed in range(4):
        total, trajectory = play_episode(env, seed)
        scores = env.match.scores
        top = max(scores)
        winner = scores.index(top) if scores.count(top) == 1 else None
        side = env.rules.side_of(env.seat)
        assert total == (0.0 if winner is None else 1.0 if winner == side else -0.5)
        last = trajectory[-1][3]  # the hand that ended the episode
        assert last["hands_ended"] >= 1 and last["hand_end"] in (1, 2)
        assert all(step[1] == 0.0 for step in trajectory[1:-1])


def test_same_seed_same_episode_and_seat():
    a, b = SingleAgentEnv(num_players=4), SingleAgentEnv(num_players=4)
    first = play_episode(a, 21)
    assert first == play_episode(b, 21)
    seats = {SingleAgentEnv(num_players=4).reset(seed=s)[1]["seat"] for s in range(20)}
    assert seats == {0, 1, 2, 3}
    assert play_episode(a, 22)[1][0] != first[1][0]


def test_fixed_seat_and_observation_is_the_learners_view():
    env = SingleAgentEnv(num_players=3, seat=2)
    obs, info = env.reset(seed=3)
    assert info["seat"] == env.seat == 2
    from dominoes_env.obs.v2 import encode_observation

    np.testing.assert_array_equal(obs, encode_observation(env.view()))


class Recorder:
    """A duck-typed opponent: plays the highest legal code, records its calls."""

    def __init__(self):
        self.calls = []

    def reset(self, seed=None):
        self.calls.append(("reset", seed))

    def begin_hand(self, view):
        self.calls.append(("begin_hand", view.seat, view.hand_number))

    def act(self, view):
        self.calls.append(("act", view.seat))
        return max(view.legal)


def test_opponent_objects_by_relative_seat():
    left, partner, right = Recorder(), Recorder(), Recorder()
    env = SingleAgentEnv(opponents=[left, partner, right], seat=1, num_players=4)
    play_episode(env, 5)
    for opp, seat in ((left, 2), (partner, 3), (right, 0)):
        assert opp.calls[0][0] == "reset" and isinstance(opp.calls[0][1], int)
        assert {c[1] for c in opp.calls if c[0] == "act"} == {seat}
        hands = [c[2] for c in opp.calls if c[0] == "begin_hand"]
        assert hands == list(range(env.match.hand_number + 1))
    # the same seed reseeds the opponents the same way
    again = Recorder()
    SingleAgentEnv(opponents=[again, Recorder(), Recorder()], seat=1, num_players=4).reset(seed=5)
    assert again.calls[0] == left.calls[0]


def test_one_object_plays_every_other_seat():
    opp = Recorder()
    env = SingleAgentEnv(opponents=opp, seat=0, num_players=3)
    play_episode(env, 1)
    assert {c[1] for c in opp.calls if c[0] == "act"} == {1, 2}


def _random_match_moves(make_player, seed, num_players):
    """Every move of a match to 100 whose seats are all ``make_player(seat)``, reseeded."""
    from dominoes_env.core import MatchState, RuleConfig

    match = MatchState(RuleConfig(num_players=num_players, target_score=100), seed=seed)
    players = [make_player(seat) for seat in range(num_players)]
    for seat, player in enumerate(players):
        player.reset(seed=seed * 10 + seat)  # reset(seed) restarts the generator
    moves = []
    while not match.is_over:
        moves.append(players[match.turn].act(match.view(match.turn)))
        match.play(moves[-1])
    return moves


@pytest.mark.parametrize("num_players", [2, 4])
def test_random_player_matches_agents_random_agent(num_players):
    # agents.RandomAgent is RandomPlayer's act behind the Agent protocol: the same seeds give
    # the same moves, move for move over whole matches, and after reset(seed) too
    from agents import Agent, RandomAgent

    env = SingleAgentEnv(num_players=2, seat=0)
    env.reset(seed=0)
    view = env.match.view(0)
    assert [RandomPlayer(seed=s).act(view) for s in range(10)] == \
        [RandomAgent(seed=s).act(view) for s in range(10)]
    for seed in range(3):
        player = _random_match_moves(lambda s: RandomPlayer(seed=s), seed, num_players)
        agent = _random_match_moves(lambda s: RandomAgent(seed=s), seed, num_players)
        assert player == agent and len(set(player)) > 1
    # both public names keep their own shape: an Agent (view checked, its name, its repr)
    # and the env's light default opponent
    agent = RandomAgent(seed=1)
    assert isinstance(agent, Agent) and agent.name == RandomPlayer.name == "random"
    assert repr(agent) == "RandomAgent()" and repr(RandomPlayer()) == "RandomPlayer()"
    with pytest.raises(TypeError, match="view must be a SeatView"):
        agent.act(None)
    with pytest.raises(ValueError, match="no legal move"):
        agent.act(env.match.view(1 - env.match.turn))


def test_import_agents_leaves_gymnasium_out():
    # importing the agents package stays numpy and the game: RandomAgent's RandomPlayer lives
    # in dominoes_env.random_player, not beside the Gymnasium env
    import subprocess
    import sys

    code = ("import sys, agents\n"
            "agents.RandomAgent(seed=0)\n"
            "print(sorted(m for m in ('gymnasium', 'dominoes_env.single_agent') "
            "if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, timeout=CHILD_TIMEOUT_S)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_a_random_agents_first_move_leaves_gymnasium_out():
    """RandomAgent.act imported RandomPlayer from dominoes_env.single_agent at its first call:
    ~50 ms of Gymnasium's import charged to a tournament seat's first decision. RandomPlayer
    lives in a module of the game alone now, and acting imports nothing more."""
    import subprocess
    import sys

    code = ("import sys, agents\n"
            "from dominoes_env.core import MatchState\n"
            "m = MatchState(seed=0)\n"
            "before = set(sys.modules)\n"
            "move = agents.RandomAgent(seed=0).act(m.view(m.turn))\n"
            "assert move in m.legal_actions()\n"
            "print(sorted(set(sys.modules) - before), 'gymnasium' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, timeout=CHILD_TIMEOUT_S)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[] False"


def test_random_player_is_one_class_under_its_three_names_and_pickles():
    """``dominoes_env.RandomPlayer``, ``dominoes_env.single_agent.RandomPlayer`` (where it was
    defined) and ``dominoes_env.random_player.RandomPlayer`` are one class; a player pickled
    when it was defined in ``single_agent`` still loads, and plays on as it would have."""
    import pickle

    import dominoes_env
    import dominoes_env.random_player
    import dominoes_env.single_agent

    assert (dominoes_env.RandomPlayer is dominoes_env.single_agent.RandomPlayer
            is dominoes_env.random_player.RandomPlayer is RandomPlayer)
    env = SingleAgentEnv(num_players=2, seat=0)
    env.reset(seed=0)
    view = env.match.view(0)
    player = RandomPlayer(seed=3)
    player.act(view)
    old = pickle.dumps(player, protocol=0).replace(  # the class's path before it moved
        b"dominoes_env.random_player\n", b"dominoes_env.single_agent\n")
    assert b"dominoes_env.single_agent\nRandomPlayer" in old
    new = pickle.dumps(player)
    assert b"dominoes_env.random_player" in new
    moves = [player.act(view) for _ in range(20)]
    assert len(set(moves)) > 1
    for twin in (pickle.loads(old), pickle.loads(new)):
        assert type(twin) is RandomPlayer
        assert [twin.act(view) for _ in range(20)] == moves


@pytest.mark.parametrize("opponents, error, match", [
    ([RandomPlayer()], ValueError, "a list of 3 agent objects"),
    ([object(), object(), object()], TypeError, r"opponents\[0\].*no act"),
])
def test_bad_opponents(opponents, error, match):
    with pytest.raises(error, match=match):
        SingleAgentEnv(opponents=opponents, num_players=4)


@pytest.mark.parametrize("seat", [4, -1, "left", True])
def test_bad_seat(seat):
    with pytest.raises(ValueError, match="seat="):
        SingleAgentEnv(num_players=4, seat=seat)


def test_illegal_opponent_is_named():
    class Cheat:
        def act(self, view):
            return 0 if 0 not in view.legal else 1 if 1 not in view.legal else 2

    env = SingleAgentEnv(opponents=Cheat(), seat=0, num_players=2)
    with pytest.raises(ValueError, match="opponent .*Cheat.* at seat 1"):
        play_episode(env, 0)


def test_illegal_actions_penalised_or_raised():
    env = SingleAgentEnv(num_players=2)
    env.reset(seed=0)
    bad = int(np.flatnonzero(~env.action_masks())[0])
    obs, reward, terminated, truncated, info = env.step(bad)
    assert (reward, terminated, truncated) == (-1.0, True, False) and info["illegal_action"] == bad
    with pytest.raises(RuntimeError, match="call reset"):
        env.step(0)
    strict = SingleAgentEnv(num_players=2, illegal_action="raise")
    strict.reset(seed=0)
    with pytest.raises(IllegalMoveError):
        strict.step(bad)
    with pytest.raises(ValueError, match="out of range"):
        strict.step(112)
    with pytest.raises(TypeError, match="integer code"):
        strict.step("left")


def test_render_modes(capsys):
    env = SingleAgentEnv(render_mode="ansi", num_players=3)
    env.reset(seed=0)
    assert "Straight Dominoes" in env.render()
    image = SingleAgentEnv(render_mode="rgb_array")
    image.reset(seed=0)
    frame = image.render()
    assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3


def test_maskable_ppo_learns_a_few_steps():
    sb3_contrib = pytest.importorskip("sb3_contrib")
    env = SingleAgentEnv(num_players=2, target_score=50)
    model = sb3_contrib.MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=32, n_epochs=1,
                                    seed=0, device="cpu")
    model.learn(total_timesteps=64)
    obs, _ = env.reset(seed=1)
    action, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
    assert env.action_masks()[int(action)]


def test_a_quick_model_s_logger_writes_inside_the_checkout():
    """Stable-Baselines3 gives a model trained without a TensorBoard folder (the test above) an
    empty folder tempdir/SB3-<time>; each run of the suite left two behind outside the
    checkout (conftest.py points SB3_LOGDIR into it)."""
    pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.utils import configure_logger

    assert Path(configure_logger().dir).resolve().is_relative_to(ROOT)


def test_learner_side_plays_both_partners():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(gymnasium.make(GYM_ID, render_mode="ansi", learner="side",
                                 num_players=4).unwrapped)
    assert [str(w.message) for w in caught] == []
    env = SingleAgentEnv(learner="side", num_players=4, target_score=120)
    for seed in range(3):
        rng = np.random.default_rng(seed)
        _, info = env.reset(seed=seed)
        side = env.rules.side_of(info["seat"])
        seats, total, terminated = set(), 0.0, False
        while not terminated:
            mask = env.action_masks()
            assert np.flatnonzero(mask).tolist() == sorted(env.match.legal_actions())
            assert env.rules.side_of(env.match.turn) == side and env.match.turn == env.seat
            seats.add(env.seat)
            _, reward, terminated, _, info = env.step(int(rng.choice(np.flatnonzero(mask))))
            total += reward
        assert seats == set(env.rules.seats_of(side))  # both partners asked the learner
        scores = env.match.scores
        assert total == pytest.approx((scores[side] - scores[1 - side]) / 120)


def test_learner_side_needs_partnerships_and_two_opponents():
    with pytest.raises(ValueError, match="partnerships"):
        SingleAgentEnv(learner="side", num_players=3)
    with pytest.raises(ValueError, match="learner='team' is not allowed"):
        SingleAgentEnv(learner="team", num_players=4)
    with pytest.raises(ValueError, match="list of 2 agent objects"):
        SingleAgentEnv(learner="side", num_players=4, opponents=[RandomPlayer()] * 3)


def test_before_reset_every_method_raises_reset_first_error():
    """``step``, ``action_masks``, ``view`` and ``render`` before ``reset()`` raised a plain
    ``RuntimeError``; the AEC env's ``ResetFirstError`` (still a ``RuntimeError``) names it."""
    from dominoes_env.aec import ResetFirstError
    from dominoes_env.lifecycle import ResetFirstError as same

    assert ResetFirstError is same and issubclass(ResetFirstError, RuntimeError)
    env = SingleAgentEnv(num_players=2, render_mode="ansi")
    for call, name in [(lambda: env.step(0), "step()"), (env.action_masks, "action_masks()"),
                       (env.view, "view()"), (env.render, "render()")]:
        with pytest.raises(ResetFirstError, match=rf"^call reset\(\) before {name[:-2]}\(\)$"):
            call()
    env.reset(seed=0)
    env.step(int(np.flatnonzero(~env.action_masks())[0]))  # illegal: the episode ends
    with pytest.raises(RuntimeError, match=r"^the episode is over") as err:
        env.step(0)
    assert not isinstance(err.value, ResetFirstError)  # it began: no reset-first error
