"""Observation versions: one registry of specs, an env option that picks one, and policies that
record theirs and are refused by a package that cannot encode it."""

from __future__ import annotations

import json

import numpy as np
import pytest

from agents.ppo import PPOAgent, random_policy_npz, save_policy_npz
from agents.specs import make_agent
from dominoes_env import SingleAgentEnv, env
from dominoes_env.core import MatchState, RuleConfig
from dominoes_env.encoding import (
    OBS_VERSION,
    OBSERVATION_SPECS,
    ObservationSpec,
    encode_hand_state,
    encode_observation,
    observation_layout,
    observation_spec,
    register_observation,
)
from dominoes_env.options import EnvOptions


def reversed_spec(version: int) -> ObservationSpec:
    """A made-up version: the current observation, back to front (same size and bounds)."""
    return ObservationSpec(
        version=version, summary="test: reversed",
        layout=observation_layout,
        encode=lambda view: encode_observation(view)[::-1].copy(),
        encode_state=lambda lay, st, seat, scores, over, out=None:
            encode_hand_state(lay, st, seat, scores, over)[::-1].copy(),
    )


def test_the_registry_holds_the_current_version():
    assert OBS_VERSION in OBSERVATION_SPECS and observation_spec().version == OBS_VERSION
    assert EnvOptions().obs_version == OBS_VERSION
    assert observation_spec(np.int64(OBS_VERSION)) is observation_spec()
    with pytest.raises(ValueError, match="already registered"):
        register_observation(observation_spec())


@pytest.mark.parametrize("bad", [1, 5, "2", True, None])
def test_unknown_versions_are_refused_with_the_allowed_list(bad):
    with pytest.raises(ValueError, match=r"obs_version=.* is not available; allowed: 2, 3, 4$"):
        env(obs_version=bad)
    with pytest.raises(ValueError, match="allowed: 2, 3, 4$"):
        SingleAgentEnv(obs_version=bad)


def test_the_env_encodes_the_version_it_is_given(monkeypatch):
    monkeypatch.setitem(OBSERVATION_SPECS, 99, reversed_spec(99))
    current, other = env(), env(obs_version=99)
    current.reset(seed=3)
    other.reset(seed=3)
    for _ in range(6):
        agent = current.agent_selection
        a, b = current.observe(agent), other.observe(agent)
        np.testing.assert_array_equal(b["observation"], a["observation"][::-1])
        np.testing.assert_array_equal(b["action_mask"], a["action_mask"])
        code = int(np.flatnonzero(a["action_mask"])[0])
        current.step(code)
        other.step(code)
    single = SingleAgentEnv(obs_version=99, seat=0)
    obs, _ = single.reset(seed=1)
    view = single.match.view(0)
    np.testing.assert_array_equal(obs, encode_observation(view)[::-1])


def rewrite_metadata(path, **changes) -> None:
    data = np.load(path)
    arrays = {k: data[k] for k in data.files if k[0] in "wb" or k.startswith("action_")}
    meta = json.loads(str(data["metadata"]))
    meta.update(changes)
    meta = {k: v for k, v in meta.items() if v is not None}
    save_policy_npz(path, arrays, str(data["activation"]), meta)


@pytest.mark.parametrize("version", [1, 5])
def test_ppo_refuses_a_policy_trained_on_an_unknown_version(tmp_path, version):
    path = tmp_path / "old.npz"
    random_policy_npz(path, RuleConfig(), hidden=(8,))
    rewrite_metadata(path, obs_version=version)
    message = f"trained on observation version {version}, which this dominoes_env cannot encode"
    with pytest.raises(ValueError, match=message):
        PPOAgent(path)
    with pytest.raises(ValueError, match=message):
        make_agent(f"ppo:{path}")


def test_ppo_refuses_a_policy_without_a_version(tmp_path):
    path = tmp_path / "bare.npz"
    random_policy_npz(path, RuleConfig(), hidden=(8,))
    rewrite_metadata(path, obs_version=None)
    with pytest.raises(ValueError, match="records no obs_version"):
        PPOAgent(path)


def test_ppo_encodes_with_the_version_its_policy_records(tmp_path, monkeypatch):
    monkeypatch.setitem(OBSERVATION_SPECS, 99, reversed_spec(99))
    path = tmp_path / "v99.npz"
    random_policy_npz(path, RuleConfig(), hidden=(8,))
    rewrite_metadata(path, obs_version=99)
    agent = PPOAgent(path)
    match = MatchState(seed=5)
    view = match.view(match.turn)
    want = agent.policy.probabilities(encode_observation(view)[::-1],
                                      np.isin(np.arange(112), view.legal))
    np.testing.assert_allclose(agent.probabilities(view), want)
