"""The PettingZoo AEC environment: PettingZoo's own test utilities, pickling, the registry,
options, illegal actions, forced draws and passes, state()."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pettingzoo
import pytest
from pettingzoo.utils import wrappers

import dominoes_env
from dominoes_env import IllegalMoveError, aec
from dominoes_env.infos import INFO_KEYS
from dominoes_env.obs.v2 import encode_observation, state_vector
from dominoes_env.registration import AEC_ID

with warnings.catch_warnings():  # pettingzoo.test imports connect_four_v3 the deprecated way
    warnings.simplefilter("ignore", DeprecationWarning)
    from pettingzoo.test import api_test, render_test, seed_test

from .helpers import ENV_CONFIGS  # noqa: E402

CONFIGS = ENV_CONFIGS


def play(env, seed: int, steps: int | None = None, rng_seed: int = 0):
    """Random legal play from reset(seed); returns the list of (agent, obs, reward, term,
    trunc, info) seen through last()."""
    rng = np.random.default_rng(rng_seed)
    env.reset(seed=seed)
    seen = []
    for agent in env.agent_iter(steps if steps is not None else 2**63):
        obs, reward, term, trunc, info = env.last()
        seen.append((agent, obs, reward, term, trunc, info))
        if term or trunc:
            action = None
        else:
            legal = np.flatnonzero(obs["action_mask"])
            action = int(rng.choice(legal))
        env.step(action)
    return seen


def same(a, b) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and np.array_equal(a, b)
    return a == b


# -- PettingZoo's test utilities -------------------------------------------------------------


# api_test warns about these for every env with a {"observation", "action_mask"} dict that is
# not on its own allowlist of PettingZoo's classic envs (connect_four_v3, chess_v6, ...)
DICT_OBSERVATION_WARNINGS = ("Observation is not a NumPy array",
                             "Observation space for each agent probably should be")


@pytest.mark.parametrize("name", list(CONFIGS))
def test_pettingzoo_api_test(name):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        api_test(dominoes_env.env(**CONFIGS[name]), num_cycles=200)
    doubts = {str(w.message) for w in caught if issubclass(w.category, UserWarning)}
    assert {d for d in doubts if not d.startswith(DICT_OBSERVATION_WARNINGS)} == set()


@pytest.mark.parametrize("name", list(CONFIGS))
def test_pettingzoo_seed_test(name):
    seed_test(lambda: dominoes_env.env(**CONFIGS[name]), num_cycles=100)


@pytest.mark.parametrize("name", list(CONFIGS))
def test_pettingzoo_render_test(name, capsys):
    render_test(lambda render_mode=None: dominoes_env.env(render_mode=render_mode, **CONFIGS[name]))
    assert "Straight Dominoes" in capsys.readouterr().out  # the human mode printed


@pytest.mark.parametrize("name", list(CONFIGS))
def test_pickle_round_trip_resumes_the_episode(name):
    for make in (dominoes_env.env, dominoes_env.raw_env):
        env = make(**CONFIGS[name])
        fresh = pickle.loads(pickle.dumps(env))  # before reset: just the constructor arguments
        assert same(play(fresh, seed=3, steps=30), play(make(**CONFIGS[name]), seed=3, steps=30))
        play(env, seed=5, steps=25)
        copy = pickle.loads(pickle.dumps(env))
        assert copy.unwrapped.rules == env.unwrapped.rules and copy is not env
        # both continue identically from the middle of the episode
        rng_a, rng_b = np.random.default_rng(1), np.random.default_rng(1)
        for _ in range(40):
            if not env.agents:
                break
            a, b = env.last(), copy.last()
            assert same(a, b) and env.agent_selection == copy.agent_selection
            mask = a[0]["action_mask"]
            done = a[2] or a[3]
            env.step(None if done else int(rng_a.choice(np.flatnonzero(mask))))
            copy.step(None if done else int(rng_b.choice(np.flatnonzero(mask))))


# -- conventions -----------------------------------------------------------------------------


def test_classic_conventions():
    env = dominoes_env.env(num_players=3)
    raw = env.unwrapped
    assert isinstance(raw, dominoes_env.raw_env) and isinstance(raw, pettingzoo.AECEnv)
    assert isinstance(env, wrappers.OrderEnforcingWrapper)
    assert raw.metadata["name"] == "straight_dominoes_v1" == str(env)
    assert raw.metadata["render_modes"] == ["human", "ansi", "rgb_array"]
    assert raw.possible_agents == ["player_0", "player_1", "player_2"]
    assert env.action_space("player_1").n == 112
    space = env.observation_space("player_0")
    assert space["observation"].shape == (244,) and space["action_mask"].dtype == np.int8
    with pytest.raises(AttributeError, match="before reset"):
        _ = env.agents
    with pytest.raises(AssertionError, match="reset"):
        env.step(0)


def test_registry():
    env = pettingzoo.make("aec", AEC_ID, num_players=4, target_score=100)
    env.reset(seed=0)
    assert env.unwrapped.rules.partnerships and env.unwrapped.rules.target_score == 100
    assert len(env.agents) == 4


@pytest.mark.parametrize("options, match", [
    (dict(colour="red"), "unknown option.*colour.*allowed: num_players"),
    (dict(reward_mode="points"), "reward_mode='points' is not allowed"),
    (dict(episode="game"), "episode='game' is not allowed"),
    (dict(reward_scale=0), r"reward_scale=0.0 is out of range; allowed: > 0"),
    (dict(illegal_action="ignore"), "illegal_action='ignore' is not allowed"),
    (dict(num_players=5), "num_players=5 is out of range"),
    (dict(render_mode="window"), "render_mode='window' is not supported"),
])
def test_bad_options_are_rejected(options, match):
    with pytest.raises(ValueError, match=match):
        dominoes_env.env(**options)


def test_rules_option_as_a_base():
    env = dominoes_env.env(rules=dominoes_env.RuleConfig(num_players=3), target_score=60)
    assert env.unwrapped.rules == dominoes_env.RuleConfig(num_players=3, target_score=60)


def test_observations_are_fresh_arrays():
    env = dominoes_env.env()
    env.reset(seed=0)
    first = env.last()[0]
    kept = first["observation"].copy()
    env.step(int(np.flatnonzero(first["action_mask"])[0]))
    env.last()
    assert np.array_equal(first["observation"], kept)


# -- the game through the env ----------------------------------------------------------------


@pytest.mark.parametrize("name", list(CONFIGS))
def test_masks_are_the_core_legal_moves_and_no_agent_is_asked_to_pass(name):
    env = dominoes_env.env(info_events=True, **CONFIGS[name])
    kinds = set()
    for seed in range(4):
        rng = np.random.default_rng(seed)
        env.reset(seed=seed)
        for agent in env.agent_iter():
            obs, _, term, trunc, info = env.last()
            kinds.update(ev[0] for ev in info["events"])
            if term or trunc:
                env.step(None)
                continue
            match = env.unwrapped.match
            assert agent == f"player_{match.turn}"
            legal = np.flatnonzero(obs["action_mask"]).tolist()
            assert legal == sorted(match.legal_actions()) and legal  # never asked to pass
            seat = int(agent.split("_")[1])
            np.testing.assert_array_equal(obs["observation"], encode_observation(match.view(seat)))
            for other in env.agents:
                if other != agent:
                    assert not env.observe(other)["action_mask"].any()
            env.step(int(rng.choice(legal)))
    assert "play" in kinds
    if name != "d9":  # double-nine's 41-tile boneyard makes passes rare
        assert "pass" in kinds
    if dominoes_env.RuleConfig(**CONFIGS[name]).boneyard_size:
        assert "draw" in kinds


@pytest.mark.parametrize("name", list(CONFIGS))
def test_infos_have_one_fixed_structure_and_report_hand_ends(name):
    """Every info of every step has the same keys, types and shapes (what Tianshou's Collector
    and Gymnasium's vector envs need to stack them); the hand-end fields match the core."""
    env = dominoes_env.env(**CONFIGS[name])
    n_sides = env.unwrapped.rules.num_sides
    rng = np.random.default_rng(0)
    hand_ends = 0
    for seed in range(2):
        env.reset(seed=seed)
        while env.agents:
            obs, _, term, trunc, info = env.last()
            assert tuple(info) == INFO_KEYS
            assert info["scores"].shape == (n_sides,) and info["scores"].dtype == np.int64
            assert not info["scores"].flags.writeable
            assert all(type(info[k]) is int for k in INFO_KEYS if k != "scores")
            if term or trunc:
                env.step(None)
                continue
            match = env.unwrapped.match
            hand, finished, number = match.hand, len(match.finished_hands), match.hand_number
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
            info = env.unwrapped.infos[env.unwrapped.agent_selection]
            assert info["scores"].tolist() == match.scores and info["illegal_action"] == -1
            assert info["hand_number"] == number
            if len(match.finished_hands) > finished:
                hand_ends += 1
                kind, seat = hand.result
                side, points = match.awards[-1] or (-1, 0)
                assert (info["hand_end"], info["domino_seat"]) == (
                    {"domino": 1, "blocked": 2}[kind], -1 if seat is None else seat)
                assert (info["award_side"], info["award_points"]) == (side, points)
            else:
                assert (info["hand_end"], info["domino_seat"], info["award_side"],
                        info["award_points"]) == (0, -1, -1, 0)
    assert hand_ends >= 2


def test_info_events_option_adds_the_event_list():
    env = dominoes_env.env(num_players=2, target_score=100, info_events=True)
    env.reset(seed=2)
    assert env.last()[4]["events"] == [] and env.last()[4]["illegal_reason"] == ""
    rng = np.random.default_rng(0)
    hand_ends = 0
    while env.agents:
        obs, _, term, trunc, info = env.last()
        assert tuple(info) == (*INFO_KEYS, "events", "illegal_reason")
        if term or trunc:
            env.step(None)
            continue
        match = env.unwrapped.match
        hand, before = match.hand, len(match.hand.history)
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        info = env.unwrapped.infos[env.unwrapped.agent_selection]
        assert list(info["events"]) == hand.history[before:]
        assert info["events"][0][0] == "play"
        hand_ends += info["hand_end"] != 0
    assert hand_ends >= 2


def test_info_events_must_be_a_bool():
    with pytest.raises(TypeError, match="info_events"):
        dominoes_env.env(info_events="yes")


def test_hand_episode_ends_with_the_first_hand():
    env = dominoes_env.env(num_players=3, episode="hand")
    seen = play(env, seed=4)
    last = seen[-1]
    assert last[3] is True and last[5]["hand_end"] in (1, 2)
    # the env shows the finished hand, not the next one the match has dealt
    match = env.unwrapped.match
    assert np.array_equal(env.state(), state_vector(match, hand=match.finished_hands[0]))
    assert not np.array_equal(env.state(), state_vector(match))
    lay = dominoes_env.observation_layout(env.unwrapped.rules)
    assert not last[1]["observation"][lay.turn].any()  # the finished hand: nobody to play


def test_state_is_the_global_state():
    env = dominoes_env.env(num_players=4)
    for _step in play(env, seed=8, steps=30):
        state = env.state()
        assert env.unwrapped.state_space.contains(state)
        hands = env.unwrapped.match.hand.hands
        assert sum(1 << i for i in np.flatnonzero(state[:28])) == hands[0]
        assert state.shape == (5 * 28 + 252,)


# -- illegal actions -------------------------------------------------------------------------


def _illegal_code(env) -> int:
    mask = env.last()[0]["action_mask"]
    return int(np.flatnonzero(mask == 0)[0])


def test_illegal_action_is_penalised_like_terminate_illegal_wrapper():
    ours = dominoes_env.env(num_players=3)
    reference = wrappers.OrderEnforcingWrapper(wrappers.TerminateIllegalWrapper(
        dominoes_env.raw_env(num_players=3, illegal_action="raise"), illegal_reward=-1))
    results = []
    for env in (ours, reference):
        env.reset(seed=1)
        env.step(int(np.flatnonzero(env.last()[0]["action_mask"])[0]))
        offender = env.agent_selection
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            env.step(_illegal_code(env))
        results.append((offender, dict(env.rewards), dict(env.terminations), dict(env.truncations)))
        seen = []
        for agent in env.agent_iter():
            seen.append((agent, env.last()[1]))
            env.step(None)
        results.append(seen)
    assert results[0] == results[2] and results[1] == results[3]
    offender, rewards, terms, _ = results[0]
    assert rewards[offender] == -1 and sum(rewards.values()) == -1 and all(terms.values())


def test_strict_mode_raises_the_core_error_and_changes_nothing():
    env = dominoes_env.env(num_players=2, illegal_action="raise")
    env.reset(seed=1)
    before = env.last()
    with pytest.raises(IllegalMoveError, match="illegal move"):
        env.step(_illegal_code(env))
    assert same(env.last(), before) and not any(env.terminations.values())


@pytest.mark.parametrize("illegal_action", ["penalize", "raise"])
@pytest.mark.parametrize("action, error, match", [
    (1.5, TypeError, "integer code"), ("3", TypeError, "integer code"),
    (True, TypeError, "integer code"), (None, TypeError, "integer code"),
    (112, ValueError, "out of range; allowed: 0..111"), (-1, ValueError, "out of range"),
])
def test_wrong_actions_give_clear_errors(illegal_action, action, error, match):
    for env in (dominoes_env.env(illegal_action=illegal_action),
                dominoes_env.raw_env(illegal_action=illegal_action)):
        env.reset(seed=0)
        with pytest.raises(error, match=match):
            env.step(action)
        assert not any(env.terminations.values())


def test_numpy_integer_actions_are_accepted():
    env = dominoes_env.env()
    env.reset(seed=0)
    code = np.flatnonzero(env.last()[0]["action_mask"])[0]
    env.step(np.int32(code))
    assert env.unwrapped.match.hand.history[0][2] == code


def test_order_enforcing_matches_pettingzoo_wrapper():
    plain = wrappers.OrderEnforcingWrapper(dominoes_env.raw_env(num_players=4))
    assert same(play(dominoes_env.env(num_players=4), seed=6), play(plain, seed=6))


def test_aec_module_has_no_stray_wrapper():
    assert not hasattr(aec, "IllegalActionWrapper")


def test_misuse_gives_errors_that_name_the_problem():
    """Before ``reset()``, ``step`` raised PettingZoo's AssertionError and ``last`` an
    AttributeError (the parallel and single-agent envs: RuntimeError); an unknown agent gave a
    bare ``KeyError: 'zzz'``; after ``close()``, ``step`` and ``reset`` played on in silence."""
    env = dominoes_env.env(num_players=2)
    for call, name in [(lambda: env.step(0), "step()"), (lambda: env.last(), "last()"),
                       (lambda: env.observe("player_0"), "observe()"),
                       (lambda: env.agent_iter(), "agent_iter()"),
                       (lambda: env.state(), "state()")]:
        with pytest.raises(RuntimeError, match=rf"^call reset\(\) before {name[:-2]}") as err:
            call()
        assert isinstance(err.value, AssertionError)  # what PettingZoo's wrapper raised
    env.reset(seed=0)
    par = dominoes_env.parallel_env(num_players=2)
    for call, agent in [(env.observe, "zzz"), (env.observe, None), (env.action_space, "zzz"),
                        (env.observation_space, 5), (par.action_space, "zzz"),
                        (par.observation_space, 5)]:
        with pytest.raises(ValueError, match=rf"^no agent {agent!r} in this environment; the "
                                             "agents are player_0, player_1$") as err:
            call(agent)
        assert isinstance(err.value, KeyError)
    env.close()
    for call in (lambda: env.step(0), env.reset):
        with pytest.raises(RuntimeError, match="the environment is closed"):
            call()
    par.reset(seed=0)
    par.close()
    with pytest.raises(RuntimeError, match="the environment is closed"):
        par.reset()


def test_aec_module_exports_its_errors():
    """``ResetFirstError`` and ``UnknownAgentError``, what a caller catches, were public
    names of a module without ``__all__``."""
    assert {"ResetFirstError", "UnknownAgentError", "env", "raw_env", "ENV_NAME"} <= set(
        aec.__all__)
    assert all(hasattr(aec, name) for name in aec.__all__)
    assert issubclass(aec.ResetFirstError, RuntimeError)
    assert issubclass(aec.UnknownAgentError, KeyError) and issubclass(aec.UnknownAgentError,
                                                                      ValueError)


@pytest.mark.parametrize("make", [dominoes_env.raw_env, dominoes_env.env,
                                  dominoes_env.parallel_env])
def test_seat_of_and_agent_of_map_agents_and_seats(make):
    """Agent names were mapped to seats with ``possible_agents.index(name)``, a convention of
    the names' order."""
    env = make(num_players=3)
    assert [env.seat_of(a) for a in env.possible_agents] == [0, 1, 2]
    assert [env.agent_of(s) for s in range(3)] == env.possible_agents
    assert env.agent_of(np.int64(1)) == "player_1"
    for agent in ("player_3", "zzz", None, ["player_0"]):
        with pytest.raises(aec.UnknownAgentError, match=r"^no agent .* in this environment; "
                                                        r"the agents are player_0, player_1, "
                                                        r"player_2$"):
            env.seat_of(agent)
    for seat in (3, -1):
        with pytest.raises(ValueError, match=rf"^seat={seat} is out of range; allowed: 0\.\.2$"):
            env.agent_of(seat)
    for seat in ("1", 1.0, True, None):
        with pytest.raises(TypeError, match="^seat=.* must be an integer"):
            env.agent_of(seat)
    env.reset(seed=0)
    raw = getattr(env, "aec", env.unwrapped)  # the parallel env's AEC env, or the raw env
    assert env.seat_of(env.agent_selection) == raw.match.turn


def test_last_after_the_episode_says_it_is_over():
    """``last()`` once every agent is done raised ``KeyError: 'player_0'`` (as PettingZoo's own
    envs do); it now says the episode is over."""
    env = aec.env(target_score=1)
    env.reset(seed=0)
    for _agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))
    assert not env.agents
    with pytest.raises(RuntimeError, match=r"the episode is over .*call reset\(\)"):
        env.last()
    env.reset(seed=1)
    assert env.last()[2] is False
