"""Observation versions: one registry of specs, an env option that picks one, and policies that
record theirs and are refused by a package that cannot encode it."""

from __future__ import annotations

import json

import numpy as np
import pytest

from agents.ppo import PPOAgent, random_policy_npz
from agents.specs import make_agent
from dominoes_env import SingleAgentEnv, env
from dominoes_env.core import MatchState, RuleConfig
from dominoes_env.obs import DEFAULT_VERSION as OBS_VERSION
from dominoes_env.obs import VERSIONS, ObservationSpec, observation_spec, register
from dominoes_env.obs.v2 import encode_hand_state, encode_observation, observation_layout
from dominoes_env.options import EnvOptions
from dominoes_env.policy_format import write_policy


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
    assert OBS_VERSION in VERSIONS and observation_spec().version == OBS_VERSION
    assert EnvOptions().obs_version == OBS_VERSION
    assert observation_spec(np.int64(OBS_VERSION)) is observation_spec()
    with pytest.raises(ValueError, match="already registered"):
        register(observation_spec())


@pytest.mark.parametrize("bad", [1, 6, "2", True, None])
def test_unknown_versions_are_refused_with_the_allowed_list(bad):
    with pytest.raises(ValueError, match=r"obs_version=.* is not available; allowed: 2, 3, 4, 5$"):
        env(obs_version=bad)
    with pytest.raises(ValueError, match="allowed: 2, 3, 4, 5$"):
        SingleAgentEnv(obs_version=bad)


def test_the_env_encodes_the_version_it_is_given(monkeypatch):
    monkeypatch.setitem(VERSIONS, 99, reversed_spec(99))
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
    # unchecked: the files these tests need are the ones every exporter refuses to write
    write_policy(path, arrays, str(data["activation"]), meta, check=False)


@pytest.mark.parametrize("version", [1, 6])
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
    monkeypatch.setitem(VERSIONS, 99, reversed_spec(99))
    path = tmp_path / "v99.npz"
    random_policy_npz(path, RuleConfig(), hidden=(8,))
    rewrite_metadata(path, obs_version=99)
    agent = PPOAgent(path)
    match = MatchState(seed=5)
    view = match.view(match.turn)
    want = agent.policy.probabilities(encode_observation(view)[::-1],
                                      np.isin(np.arange(112), view.legal))
    np.testing.assert_allclose(agent.probabilities(view), want)


# -- the old homes of release 0.1.0's names: deprecated aliases ------------------------------

OLD_NAMES = {
    "dominoes_env.encoding": {
        "OBS_VERSION": ("dominoes_env.obs", "DEFAULT_VERSION"),
        "NUM_ENDS": ("dominoes_env.obs", "NUM_ENDS"),
        "ObservationLayout": ("dominoes_env.obs.v2", "ObservationLayoutV2"),
        "SCORE_CAP": ("dominoes_env.obs.v2", "SCORE_CAP"),
        "MOVE_POINTS_DIVISOR": ("dominoes_env.obs.v2", "MOVE_POINTS_DIVISOR"),
        "observation_layout": ("dominoes_env.obs.v2", "observation_layout"),
        "observation_size": ("dominoes_env.obs.v2", "observation_size"),
        "encode_observation": ("dominoes_env.obs.v2", "encode_observation"),
        "encode_hand_state": ("dominoes_env.obs.v2", "encode_hand_state"),
        "state_vector": ("dominoes_env.obs.v2", "state_vector"),
        "state_bounds": ("dominoes_env.obs.v2", "state_bounds"),
        "action_mask": ("dominoes_env.obs.actions", "action_mask"),
        "mask_of": ("dominoes_env.obs.actions", "mask_of"),
        "encode_action": ("dominoes_env.obs.actions", "encode_action"),
        "decode_action": ("dominoes_env.obs.actions", "decode_action"),
        "check_action": ("dominoes_env.obs.actions", "check_action"),
    },
    "agents.greedy": {name: ("dominoes_env.core", name)
                      for name in ("tie_rank", "POINT_SCALE")},
}


@pytest.mark.parametrize(("old", "name"), [(old, name) for old, names in OLD_NAMES.items()
                                           for name in names])
def test_old_names_warn_and_give_the_new_object(old, name):
    import importlib

    home, new = OLD_NAMES[old][name]
    module = importlib.import_module(old)
    with pytest.warns(DeprecationWarning, match=rf"{old}\.{name} is deprecated.*{home}"):
        value = getattr(module, name)
    assert value is getattr(importlib.import_module(home), new)


def test_the_package_level_obs_version_is_a_deprecated_alias():
    import dominoes_env
    from dominoes_env.obs import DEFAULT_VERSION

    with pytest.warns(DeprecationWarning, match="use dominoes_env.obs.DEFAULT_VERSION"):
        assert dominoes_env.OBS_VERSION == DEFAULT_VERSION
    assert dominoes_env.DEFAULT_VERSION == DEFAULT_VERSION
    assert "OBS_VERSION" not in dir(dominoes_env) and "OBS_VERSION" not in dominoes_env.__all__


@pytest.mark.parametrize("old", list(OLD_NAMES))
def test_old_modules_refuse_unknown_names(old):
    import importlib

    module = importlib.import_module(old)
    with pytest.raises(AttributeError, match="no_such_name"):
        module.no_such_name  # noqa: B018


def test_versions_extend_each_other_through_the_public_api():
    """Each version's layout is its parent's plus blocks at the end, with the parent's meanings
    unchanged (no version edits another's tables)."""
    from dominoes_env.obs import ObservationLayout

    rules = RuleConfig(num_players=3)
    layouts = [observation_spec(v).layout(rules) for v in (2, 3, 4, 5)]
    for parent, child in zip(layouts, layouts[1:], strict=False):
        assert isinstance(child, type(parent)) and isinstance(parent, ObservationLayout)
        assert dict(child.MEANINGS).items() >= dict(parent.MEANINGS).items()
        assert list(child.blocks)[: len(parent.blocks)] == list(parent.blocks)
        assert {k: child.blocks[k] for k in parent.blocks} == parent.blocks
        np.testing.assert_array_equal(child.high[: parent.size], parent.high)
        assert child.state_size - child.size == parent.state_size - parent.size
    assert [lay.version for lay in layouts] == [2, 3, 4, 5]
    with pytest.raises(ValueError, match="already has a block"):
        layouts[0].add_block("hand", 1)


@pytest.mark.parametrize("players, partnerships", [(2, None), (3, None), (4, True), (4, False)])
def test_the_top_level_observation_helpers_take_the_version(players, partnerships):
    """``dominoes_env.observation_size(rules)`` was version 2's (234 at two players) while
    ``env(obs_version=4)`` observes 570 values and every shipped policy reads version 4: the
    helpers take ``version=`` (default: the envs' default) and follow that version's spec."""
    import dominoes_env

    rules = RuleConfig(num_players=players, partnerships=partnerships)
    view = MatchState(rules, seed=3).view(0)
    for version in sorted(VERSIONS):
        e = env(num_players=players, partnerships=partnerships, obs_version=version)
        e.reset(seed=3)
        space = e.observation_space(e.possible_agents[0])["observation"]
        assert dominoes_env.observation_size(rules, version=version) == space.shape[0]
        lay = dominoes_env.observation_layout(rules, version=version)
        assert lay is observation_spec(version).layout(rules) and lay.version == version
        obs = dominoes_env.encode_observation(view, version=version)
        np.testing.assert_array_equal(obs, observation_spec(version).encode(view))
        out = np.zeros(lay.size, np.float32)
        assert dominoes_env.encode_observation(view, out, version=version) is out
    # no version named: the envs' default, as before
    assert dominoes_env.observation_size(rules) == observation_spec().layout(rules).size
    e = env(num_players=players, partnerships=partnerships)
    assert dominoes_env.observation_size(rules) == e.observation_space(
        e.possible_agents[0])["observation"].shape[0]


@pytest.mark.parametrize("helper", ["observation_size", "observation_layout",
                                    "encode_observation", "state_vector"])
@pytest.mark.parametrize("version", [1, 6, "4", 2.0, True])
def test_the_top_level_observation_helpers_refuse_an_unknown_version(helper, version):
    import dominoes_env

    arg = MatchState(seed=0)
    arg = {"observation_size": arg.rules, "observation_layout": arg.rules,
           "encode_observation": arg.view(0), "state_vector": arg}[helper]
    allowed = "2" if helper == "state_vector" else "2, 3, 4, 5"
    with pytest.raises(ValueError, match=f"allowed: {allowed}$"):
        getattr(dominoes_env, helper)(arg, version=version)


@pytest.mark.parametrize("version", [3, 4])
def test_state_vector_is_the_envs_state_and_holds_version_2(version):
    """``env.state()`` is every hand plus seat 0's version-2 observation whatever the env's
    ``obs_version``: ``state_vector`` has no other version, and says so."""
    import dominoes_env

    m = MatchState(seed=1)
    np.testing.assert_array_equal(dominoes_env.state_vector(m, version=2),
                                  dominoes_env.state_vector(m))
    e = env(obs_version=version)
    e.reset(seed=1)
    np.testing.assert_array_equal(e.state(), dominoes_env.state_vector(e.unwrapped.match))
    with pytest.raises(ValueError, match="state_vector holds version 2's observation"):
        dominoes_env.state_vector(m, version=version)
