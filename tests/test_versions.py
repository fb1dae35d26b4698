"""Versioned envs: the straight_dominoes_v1 module, the registry ids whatever the import order,
the deprecated v0 aliases, the Parallel API, and single-agent infos of one fixed structure."""

from __future__ import annotations

import subprocess
import sys
import warnings

import gymnasium
import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test

import dominoes_env
from dominoes_env import straight_dominoes_v1
from dominoes_env.infos import INFO_KEYS, SINGLE_AGENT_KEYS
from dominoes_env.registration import AEC_ID, AEC_ID_V0, GYM_ID, GYM_ID_V0

from .helpers import ENV_CONFIGS, comparable_info


def test_the_version_module_is_pettingzoo_classic_shaped():
    assert straight_dominoes_v1.raw_env is dominoes_env.raw_env
    assert straight_dominoes_v1.env is dominoes_env.env
    env = straight_dominoes_v1.env(num_players=3)
    assert env.metadata["name"] == "straight_dominoes_v1"
    assert straight_dominoes_v1.parallel_env.metadata["name"] == "straight_dominoes_v1"
    assert (AEC_ID, GYM_ID) == ("dominoes/straight_dominoes-v1", "dominoes/StraightDominoes-v1")


MAKE = {
    "gymnasium": 'import gymnasium; e = gymnasium.make("{gym}", num_players=3); '
                 'print(type(e.unwrapped).__name__, e.unwrapped.rules.num_players)',
    "pettingzoo": 'import pettingzoo; e = pettingzoo.make("aec", "{aec}", num_players=3); '
                  'p = pettingzoo.make("parallel", "{aec}", num_players=3); '
                  'print(e.unwrapped.metadata["name"], len(p.possible_agents))',
}
EXPECTED = {"gymnasium": "SingleAgentEnv 3", "pettingzoo": "straight_dominoes_v1 3"}


@pytest.mark.parametrize("library", ["gymnasium", "pettingzoo"])
@pytest.mark.parametrize("order", ["library first", "dominoes_env first"])
def test_make_in_a_fresh_interpreter_whatever_the_import_order(library, order):
    make = MAKE[library].format(gym=GYM_ID, aec=AEC_ID)
    imports = (f"import {library}; import dominoes_env" if order == "library first"
               else f"import dominoes_env; import {library}")
    out = subprocess.run([sys.executable, "-c", f"{imports}; {make}"], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[-2] == EXPECTED[library]


def test_gymnasium_module_prefix_needs_no_import():
    code = f'import gymnasium; print(gymnasium.make("dominoes_env:{GYM_ID}").spec.id)'
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[-2] == GYM_ID


def test_import_dominoes_env_imports_no_library():
    code = ("import sys, dominoes_env; "
            "print(sorted(m for m in ('numpy', 'gymnasium', 'pettingzoo') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_v0_ids_are_deprecated_aliases_of_v1():
    with pytest.warns(DeprecationWarning, match="deprecated alias of 'dominoes/straight_dom"):
        env = pettingzoo.make("aec", AEC_ID_V0, num_players=2)
    assert env.unwrapped.metadata["name"] == "straight_dominoes_v1"
    with pytest.warns(DeprecationWarning, match="deprecated alias"):
        par = pettingzoo.make("parallel", AEC_ID_V0, num_players=2)
    assert isinstance(par, straight_dominoes_v1.parallel_env)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        single = gymnasium.make(GYM_ID_V0, num_players=2)
    assert isinstance(single.unwrapped, dominoes_env.SingleAgentEnv)
    assert any("deprecated alias of 'dominoes/StraightDominoes-v1'" in str(w.message)
               for w in caught)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the current ids warn about nothing
        pettingzoo.make("aec", AEC_ID)
        gymnasium.make(GYM_ID)


# -- the Parallel API ------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(ENV_CONFIGS))
def test_parallel_api_test(name):
    env = straight_dominoes_v1.parallel_env(target_score=60, **ENV_CONFIGS[name])
    parallel_api_test(env, num_cycles=2000)


def test_parallel_seed_test():
    parallel_seed_test(lambda: straight_dominoes_v1.parallel_env(num_players=4))


def test_aec_api_test_through_the_version_module():
    api_test(straight_dominoes_v1.env(num_players=3, target_score=60), num_cycles=300)


def test_parallel_episode_equals_the_aec_episode():
    """Same seed, same legal choices: the parallel env plays exactly the AEC episode."""
    aec = straight_dominoes_v1.env(num_players=4, target_score=100)
    par = straight_dominoes_v1.parallel_env(num_players=4, target_score=100)
    obs, infos = par.reset(seed=5)
    aec.reset(seed=5)
    rng = np.random.default_rng(1)
    steps = 0
    while par.agents:
        agent = aec.agent_selection
        assert par.agent_selection == agent
        a_obs = aec.observe(agent)
        np.testing.assert_array_equal(obs[agent]["observation"], a_obs["observation"])
        for other in par.agents:  # only the agent to play has a mask
            assert obs[other]["action_mask"].any() == (other == agent)
        action = int(rng.choice(np.flatnonzero(a_obs["action_mask"])))
        # the other agents' actions are ignored, even illegal ones
        actions = dict.fromkeys(par.agents, 0) | {agent: action}
        obs, rewards, terms, truncs, infos = par.step(actions)
        aec.step(action)
        steps += 1
        assert rewards == aec.unwrapped.rewards
        assert comparable_info(infos[agent]) == comparable_info(aec.unwrapped.infos[agent])
    assert all(terms.values()) and not any(truncs.values()) and steps > 20
    assert aec.unwrapped.match.winner is not None
    assert all(aec.unwrapped.terminations.values())


def test_parallel_step_needs_the_acting_agents_action():
    par = straight_dominoes_v1.parallel_env(num_players=2)
    with pytest.raises(RuntimeError, match="reset"):
        par.step({})
    par.reset(seed=0)
    other = next(a for a in par.agents if a != par.agent_selection)
    with pytest.raises(ValueError, match=f"no action for '{par.agent_selection}'"):
        par.step({other: 0})
    with pytest.raises(TypeError, match="dict"):
        par.step(3)


# -- single-agent infos ----------------------------------------------------------------------


@pytest.mark.parametrize("info_events", [False, True])
def test_single_agent_infos_have_one_fixed_structure(info_events):
    env = dominoes_env.SingleAgentEnv(num_players=3, target_score=100, info_events=info_events)
    keys = (*SINGLE_AGENT_KEYS, *INFO_KEYS)
    extra = ("events", "hand_results", "illegal_reason") if info_events else ()
    rng = np.random.default_rng(0)
    ended = 0
    obs, info = env.reset(seed=3)
    while True:
        assert set(info) == {*keys, *extra}
        assert info["scores"].shape == (3,) and info["scores"].dtype == np.int64
        assert all(type(info[k]) is int for k in keys if k != "scores")
        assert info["scores"].tolist() == env.match.scores
        if info_events:
            assert len(info["hand_results"]) == info["hands_ended"]
        if info["hands_ended"]:
            ended += 1
            assert info["hand_end"] in (1, 2)
            assert info["award_side"] == (env.match.awards[-1] or (-1, 0))[0]
        else:
            assert (info["hand_end"], info["award_side"], info["award_points"]) == (0, -1, 0)
        mask = env.action_masks()
        obs, _, terminated, _, info = env.step(int(rng.choice(np.flatnonzero(mask))))
        if terminated:
            break
    assert ended >= 2
