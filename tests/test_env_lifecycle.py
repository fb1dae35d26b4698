"""Lifecycle misuse of every env face: calls after ``close()``, after the episode, after an
opponent failed; per-agent infos; the parallel env's spaces after pickling."""

from __future__ import annotations

import pickle
import warnings

import gymnasium
import numpy as np
import pytest

import dominoes_env
from dominoes_env import SingleAgentEnv
from dominoes_env.lifecycle import ClosedEnvironmentError
from dominoes_env.registration import GYM_ID

CLOSED = "the environment is closed: make a new one to play on"


def first_legal(mask) -> int:
    return int(np.flatnonzero(mask)[0])


def finish(env) -> None:
    """Play an AEC env to the end (every agent removed), first legal move each turn."""
    for _agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else first_legal(obs["action_mask"]))


# -- close() -------------------------------------------------------------------------------------


@pytest.mark.parametrize("make", [lambda: SingleAgentEnv(seat=0),
                                  lambda: gymnasium.make(GYM_ID, seat=0)])
def test_single_agent_refuses_step_and_reset_after_close(make):
    """``step()`` and ``reset()`` after ``close()`` played on in silence (the AEC env raised)."""
    env = make()
    env.reset(seed=0)
    code = first_legal(env.unwrapped.action_masks())
    env.close()
    env.close()  # closing twice is allowed (Gymnasium's checker does it)
    for call in (lambda: env.step(code), lambda: env.reset(seed=0), env.reset):
        with pytest.raises(ClosedEnvironmentError, match=f"^{CLOSED}$") as err:
            call()
        assert isinstance(err.value, RuntimeError)
        assert isinstance(err.value, gymnasium.error.ClosedEnvironmentError)


def test_every_face_raises_the_same_error_after_close():
    """The AEC and parallel envs raise the single-agent env's error, even once the episode is
    over: the wrapped AEC env warned "step() called after all agents are terminated" and the
    parallel env said "call reset()" (then reset said closed)."""
    aec = dominoes_env.env(target_score=1)
    aec.reset(seed=0)
    finish(aec)
    aec.close()
    par = dominoes_env.parallel_env(target_score=1)
    obs, _ = par.reset(seed=0)
    while par.agents:
        agent = par.agent_selection
        obs, *_ = par.step({agent: first_legal(obs[agent]["action_mask"])})
    par.close()
    raw = dominoes_env.raw_env()
    raw.reset(seed=0)
    assert not raw.closed
    raw.close()
    assert raw.closed and aec.unwrapped.closed and par.aec.closed
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "step() called after all agents..." warning
        for call in (lambda: aec.step(None), aec.reset, lambda: par.step({}), par.reset,
                     lambda: raw.step(0), raw.reset):
            with pytest.raises(ClosedEnvironmentError, match=f"^{CLOSED}$"):
                call()


# -- infos ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("info_events", [False, True])
def test_each_agent_has_an_info_dict_of_its_own(info_events):
    """Every agent's info was one shared dict (PettingZoo's envs give each agent its own): a
    key written into ``infos["player_0"]`` showed in every agent's, the event list too."""
    env = dominoes_env.env(num_players=3, info_events=info_events)
    env.reset(seed=0)
    for step in range(6):
        infos = env.infos
        assert len({id(info) for info in infos.values()}) == 3
        infos["player_0"]["mine"] = step
        if info_events:
            infos["player_0"]["events"].append("mine")
        for agent in ("player_1", "player_2"):
            assert "mine" not in infos[agent]
            if info_events:
                assert "mine" not in infos[agent]["events"]
        env.step(first_legal(env.last()[0]["action_mask"]))
    par = dominoes_env.parallel_env(num_players=3, info_events=info_events)
    obs, infos = par.reset(seed=0)
    for _ in range(2):
        assert len({id(info) for info in infos.values()}) == 3
        agent = par.agent_selection
        obs, _, _, _, infos = par.step({agent: first_legal(obs[agent]["action_mask"])})


def test_penalised_illegal_move_gives_each_agent_its_own_info():
    env = dominoes_env.env(num_players=2)
    env.reset(seed=0)
    mask = env.last()[0]["action_mask"]
    env.step(int(np.flatnonzero(mask == 0)[0]))
    assert env.infos["player_0"] is not env.infos["player_1"]
    assert env.infos["player_0"]["illegal_action"] == env.infos["player_1"]["illegal_action"] >= 0


# -- after the episode ---------------------------------------------------------------------------


def test_raw_env_step_and_last_after_the_episode_say_it_is_over():
    """The unwrapped env raised ``KeyError: 'player_0'`` from ``step`` and ``last`` once every
    agent was done (the wrapped env warns / says so)."""
    env = dominoes_env.raw_env(target_score=1)
    env.reset(seed=0)
    finish(env)
    assert not env.agents
    for call in (lambda: env.step(None), lambda: env.step(0), env.last):
        with pytest.raises(RuntimeError, match=r"^the episode is over .*call reset\(\)"):
            call()
    env.reset(seed=1)
    assert env.last()[2] is False


class FailsOnce:
    """An opponent whose second move raises."""

    def __init__(self, error: BaseException):
        self.moves, self.error = 0, error

    def act(self, view):
        self.moves += 1
        if self.moves == 2:
            raise self.error
        return view.legal[0]


@pytest.mark.parametrize("error", [RuntimeError("boom"), KeyboardInterrupt()])
def test_an_opponent_failure_ends_the_single_agent_episode(error):
    """After an opponent raised inside ``step``, the seat to play was the opponent's and the
    next ``step`` played the learner's action for it."""
    env = SingleAgentEnv(opponents=FailsOnce(error), seat=0, num_players=2)
    env.reset(seed=0)
    with pytest.raises(type(error)):
        for _ in range(3):
            env.step(first_legal(env.action_masks()))
    assert env.match.turn != env.seat
    opponent_move = env.match.legal_actions()[0]
    history = list(env.match.hand.history)
    with pytest.raises(RuntimeError, match=r"episode is over .*call reset\(\)"):
        env.step(opponent_move)
    assert env.match.hand.history == history and not env.action_masks().any()
    env.opponents[0].moves = 2  # no more failures: a new episode plays normally
    env.reset(seed=0)
    env.step(first_legal(env.action_masks()))


def test_an_opponent_failure_at_reset_leaves_no_episode_to_step():
    failed = 0
    for seat in (0, 1):  # the opponent moves first in one of them
        env = SingleAgentEnv(opponents=FailsOnce(RuntimeError("boom")), seat=seat)
        env.opponents[0].moves = 1  # its first move raises
        try:
            env.reset(seed=0)
        except RuntimeError as err:
            assert str(err) == "boom"
            failed += 1
            with pytest.raises(RuntimeError, match=r"episode is over .*call reset\(\)"):
                env.step(env.match.legal_actions()[0])
    assert failed == 1


# -- spaces ---------------------------------------------------------------------------------------


def test_parallel_env_spaces_are_one_object_per_agent_after_pickling():
    """An unpickled ``parallel_env``'s ``observation_spaces`` / ``action_spaces`` were those of
    a throwaway env, other objects than ``observation_space(agent)`` returned."""
    env = dominoes_env.parallel_env(num_players=3)
    env.reset(seed=0)
    for copy in (env, pickle.loads(pickle.dumps(env))):
        for agent in copy.possible_agents:
            assert copy.observation_spaces[agent] is copy.observation_space(agent)
            assert copy.action_spaces[agent] is copy.action_space(agent)
            assert copy.observation_space(agent) is copy.observation_space(agent)
        assert copy.state_space is copy.aec.state_space


@pytest.mark.parametrize("face", ["aec", "raw", "parallel", "gymnasium"])
def test_a_closed_env_stays_closed_through_a_pickle(face):
    """Every face's copy of a closed env is closed: the AEC and parallel envs came back open
    from a pickle (their episode state left ``close()`` out) while the Gymnasium one stayed
    closed."""
    make = {"aec": dominoes_env.env, "raw": dominoes_env.raw_env,
            "parallel": dominoes_env.parallel_env, "gymnasium": SingleAgentEnv}[face]
    env = make(num_players=2)
    env.reset(seed=0)
    env.close()
    copy = pickle.loads(pickle.dumps(env))
    with pytest.raises(ClosedEnvironmentError, match=f"^{CLOSED}$"):
        copy.reset(seed=1)
