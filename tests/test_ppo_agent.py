"""PPO inference in numpy: the exported network gives torch's action distribution."""

from __future__ import annotations

import os
import random

import numpy as np
import pytest

from agents import make_agent
from agents.greedy import GreedyAgent
from agents.ppo import NumpyPolicy, PPOAgent, random_policy_npz
from dominoes_env import SingleAgentEnv
from dominoes_env.core import MatchState, RuleConfig
from dominoes_env.obs.actions import action_mask
from dominoes_env.obs.v2 import encode_observation

torch = pytest.importorskip("torch")
sb3_contrib = pytest.importorskip("sb3_contrib")


def observations(env, count: int, seed: int):
    """Observations, masks and the learner's views from ``env``, playing random legal moves."""
    rng = random.Random(seed)
    obs, masks, views = [], [], []
    o, _ = env.reset(seed=seed)
    while len(obs) < count:
        mask = env.action_masks()
        view = env.match.view(env.seat)
        assert np.array_equal(o, encode_observation(view))  # the agent sees what the env shows
        assert np.array_equal(mask, action_mask(view).astype(bool))
        obs.append(o)
        masks.append(mask)
        views.append(view)
        o, _, terminated, truncated, _ = env.step(rng.choice(view.legal))
        if terminated or truncated:
            o, _ = env.reset()
    return np.stack(obs), np.stack(masks), views


def random_model(env, net_arch, activation, seed: int):
    """A randomly initialised MaskablePPO on ``env``, its weights spread out so the action
    distributions are far from uniform (a fresh policy's head is nearly flat)."""
    model = sb3_contrib.MaskablePPO("MlpPolicy", env, seed=seed, device="cpu",
                                    policy_kwargs={"net_arch": net_arch,
                                                   "activation_fn": activation})
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.policy.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * 0.3)
    return model


@pytest.mark.parametrize("n, net_arch, activation", [
    (2, [64, 64], "Tanh"),
    (3, [32], "ReLU"),
    (4, {"pi": [48, 24], "vf": [16]}, "ELU"),
])
def test_numpy_matches_torch(tmp_path, n, net_arch, activation):
    from agents.ppo_export import export_policy

    rules = RuleConfig(num_players=n)
    env = SingleAgentEnv(opponents=GreedyAgent(), rules=rules)
    model = random_model(env, net_arch, getattr(torch.nn, activation), seed=n)
    path = tmp_path / f"ppo_{n}p.npz"
    export_policy(model, path, {"rules": rules.to_dict(), "note": "test"})
    policy = NumpyPolicy(path)
    assert policy.metadata["rules"] == rules.to_dict() and policy.metadata["note"] == "test"
    assert policy.activation == activation.lower()

    obs, masks, views = observations(env, 600, seed=n)
    with torch.no_grad():
        dist = model.policy.get_distribution(torch.as_tensor(obs), action_masks=masks)
        torch_probs = dist.distribution.probs.numpy().astype(np.float64)
    numpy_probs = policy.probabilities(obs, masks)
    # float64 against torch's float32: about 5e-7 apart here, once 8.4e-5 (a fresh venv's first
    # run, not seen again in 300 repeats); a wrong layer, bias or activation is 1e-2 or more
    assert np.abs(numpy_probs - torch_probs).max() < 1e-4
    assert (numpy_probs[~masks] == 0).all()
    # the distributions are not trivial: most observations have a clear favourite
    assert np.median(numpy_probs.max(axis=1)) > 0.5

    # the agent plays sb3's deterministic action, and samples legal actions
    greedy_agent = PPOAgent(path, deterministic=True)
    sampled = PPOAgent(path, seed=0)
    actions, _ = model.predict(obs, action_masks=masks, deterministic=True)
    for i, view in enumerate(views[:200]):
        assert greedy_agent.act(view) == int(actions[i])
        assert sampled.act(view) in view.legal


@pytest.mark.parametrize("options", [{"num_players": 2}, {"num_players": 4}])
def test_shipped_policies_play_legal_moves_from_their_spec(options):
    from agents import make_agent
    from agents.arena import play_match
    from agents.ppo import shipped_policy_path

    rules = RuleConfig(target_score=100, **options)
    assert shipped_policy_path(rules).is_file()
    seats = ["ppo" if rules.side_of(s) == 0 else "greedy" for s in range(rules.num_players)]
    result = play_match(seats, rules, seed=3)  # raises if an agent returns an illegal action
    assert result.winner in (0, 1) and max(result.scores) >= 100
    agent = make_agent("ppo", seed=0)
    agent.check_rules(rules)  # loads the table's shipped policy
    meta = agent.policy.metadata
    # both read observation version 4 (reply_points, reply_chance, follow_up)
    assert meta["rules"]["num_players"] == rules.num_players and meta["obs_version"] == 4


@pytest.mark.parametrize("players", [2, 4])
def test_no_shipped_policy_is_given_for_other_tiles(players):
    """The shipped policies read double-six tiles: ``shipped_policy_path(RuleConfig(max_pip=9))``
    returned ``ppo_2p.npz`` as the policy of a double-nine table."""
    from agents.guided import guided_policy_path
    from agents.ppo import shipped_policy_path

    rules = RuleConfig(num_players=players, max_pip=9)
    for where in (shipped_policy_path, guided_policy_path):
        with pytest.raises(ValueError, match=r"no shipped policy plays double-9 tiles "
                           r"\(max_pip=9\): ppo_.*\.npz is for .* with double-6 tiles"):
            where(rules)
    assert shipped_policy_path(RuleConfig(num_players=players, target_score=100)).is_file()


def test_guided_keeps_the_policy_its_figures_were_measured_with():
    """Shipping a newer ``ppo`` policy does not change ``guided``: with two players it reads
    ``ppo_2p_obs2.npz``, with three ``ppo_3p_obs2.npz`` and in four-player partnerships
    ``ppo_4p_partnerships_obs2.npz``, without partnerships ``ppo_4p_free_for_all_obs2.npz``
    (the version 2 policies)."""
    from agents.guided import GuidedSearchAgent, guided_policy_path
    from agents.ppo import POLICY_DIR, shipped_policy_path

    assert guided_policy_path(2) == POLICY_DIR / "ppo_2p_obs2.npz"
    assert guided_policy_path(4) == POLICY_DIR / "ppo_4p_partnerships_obs2.npz"
    assert shipped_policy_path(4) == POLICY_DIR / "ppo_4p_partnerships.npz"
    assert guided_policy_path(3) == POLICY_DIR / "ppo_3p_obs2.npz"
    assert shipped_policy_path(3) == POLICY_DIR / "ppo_3p.npz"
    agent = GuidedSearchAgent(seed=0, sims=16)
    agent.check_rules(RuleConfig())
    played = agent.policy_agent
    assert played.path == guided_policy_path(2) and played.policy.obs_spec.version == 2


@pytest.mark.parametrize("players, partnerships", [(2, False), (3, False), (4, True), (4, False)])
def test_guided_policy_ppo_reads_the_policy_ppo_plays_at_each_table(players, partnerships,
                                                                      tmp_path, monkeypatch):
    """``guided:policy=ppo`` names no file: it reads the table's shipped ``ppo`` policy (version
    4), where plain ``guided`` reads its own version 2 one; a file named ``ppo`` in the working
    directory does not change that (``policy=./ppo`` reads it)."""
    from agents.guided import guided_policy_path
    from agents.ppo import shipped_policy_path
    from agents.specs import same_agent_key

    (tmp_path / "ppo").write_bytes(b"not a policy")
    monkeypatch.chdir(tmp_path)
    rules = RuleConfig(num_players=players, partnerships=partnerships)
    agent = make_agent("guided:policy=ppo,sims=16", seed=0)
    agent.check_rules(rules)
    assert agent.policy_agent.path == shipped_policy_path(rules) != guided_policy_path(rules)
    assert agent.policy_agent.policy.obs_spec.version == 4 and "policy=ppo" in repr(agent)
    match = MatchState(rules=rules, seed=3)
    assert agent.act(match.view(match.turn)) in match.legal_actions()
    assert same_agent_key("guided:policy=ppo") == same_agent_key("guided:policy=ppo,sims=600")
    assert same_agent_key("guided:policy=ppo") != same_agent_key("guided:policy=./ppo")
    with pytest.raises(ValueError, match="ppo"):
        make_agent("guided:policy=./ppo").check_rules(rules)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_an_export_of_diverged_weights_is_refused_and_writes_nothing(tmp_path, bad):
    """export_policy wrote NaN/inf weights through an unchecked writer: the file of a diverged
    run was written and refused only when ``ppo:PATH`` read it."""
    from agents.ppo_export import export_policy
    from dominoes_env.policy_format import PolicyFileError

    rules = RuleConfig()
    model = random_model(SingleAgentEnv(opponents=GreedyAgent(), rules=rules), [16], torch.nn.Tanh,
                         seed=1)
    with torch.no_grad():
        model.policy.action_net.bias[3] = bad
    path = tmp_path / "policy.npz"
    with pytest.raises(PolicyFileError) as info:
        export_policy(model, path, {"rules": rules.to_dict()})
    assert str(info.value) == f"policy file {str(path)!r}: action_b holds NaN or infinite values"
    assert os.listdir(tmp_path) == []  # no file, no temporary file


@pytest.mark.parametrize("options, error, match", [
    ({"hidden": (0,)}, ValueError, "hidden=0 is out of range"),  # a ZeroDivisionError
    ({"hidden": (2**31,)}, ValueError, r"hidden=\(2147483648,\) needs about .* GiB of memory"),
    ({"hidden": 8}, TypeError, "hidden=8 must be a list of layer widths"),
    ({"hidden": (8.5,)}, TypeError, "hidden=8.5 must be an integer"),
    ({"hidden": (True,)}, TypeError, "hidden=True must be an integer"),
    ({"hidden": (8,) * 65}, ValueError, "hidden gives 65 layers; a policy file holds at most 64"),
    ({"seed": -1}, ValueError, "seed=-1 is out of range"),  # numpy's "expected non-negative"
])  # fmt: skip
def test_random_policy_npz_names_a_bad_parameter(tmp_path, options, error, match):
    """A width of 0 ended in ZeroDivisionError, 2**31 in numpy's MemoryError (3.66 TiB),
    ``hidden=8`` and ``seed=-1`` in Python's and numpy's words naming neither."""
    with pytest.raises(error, match=match):
        random_policy_npz(tmp_path / "p.npz", RuleConfig(), **options)
    assert not (tmp_path / "p.npz").exists()
    random_policy_npz(tmp_path / "p.npz", RuleConfig(), hidden=[8, 4], seed=2**64 - 1)


@pytest.mark.parametrize("obs, error, match", [
    (None, TypeError, r"^obs must be an array of numbers of shape \(234,\) or \(B, 234\), not "
                      "None$"),
    ("abc", TypeError, "^obs must be an array of numbers"),
    (np.nan, ValueError, r"^obs has shape \(\); the policy at .* takes \(234,\) or \(B, 234\)$"),
    (np.zeros(233), ValueError, r"^obs has shape \(233,\)"),
    (np.zeros((2, 1, 234)), ValueError, r"^obs has shape \(2, 1, 234\)"),
    (np.full(234, np.nan), ValueError, "^obs holds NaN or infinite values$"),
    (np.r_[np.zeros(233), np.inf][None], ValueError, "^obs holds NaN or infinite values$"),
    # finite, but no encoder writes it: played as if it were an observation
    (np.full(234, 1e38), ValueError, r"^obs\[0\] = 1e\+38 is outside 0\.\.1, the values "
                                     "observation version 2 takes there at the table of the "
                                     "policy at "),
    (np.r_[np.zeros(233), -1.0][None], ValueError, r"^obs\[0, 233\] = -1 is outside 0\.\."),
])  # fmt: skip
def test_numpy_policy_names_a_bad_observation(tmp_path, obs, error, match):
    """``logits(None)`` was an IndexError "tuple index out of range" and a NaN observation
    gave NaN logits in silence."""
    from agents.ppo import NumpyPolicy

    path = tmp_path / "p.npz"
    random_policy_npz(path, RuleConfig(), hidden=(8,))
    policy = NumpyPolicy(path)
    with pytest.raises(error, match=match):
        policy.logits(obs)
    with pytest.raises(error, match=match):
        policy.probabilities(obs, np.ones(112, bool))
    assert policy.logits(np.zeros((3, 234))).shape == (3, 112)


@pytest.mark.parametrize("path, error, match", [
    (b"p.npz", TypeError, r"^path=b'p.npz' must be a path \(str or os.PathLike\), not bytes$"),
    (None, TypeError, r"^path=None must be a path"),
    ("", ValueError, r"^path='' is empty"),
])  # fmt: skip
def test_numpy_policy_names_a_path_that_is_none(path, error, match):
    """``NumpyPolicy(b'...')`` was pathlib's own TypeError, which names no parameter."""
    from agents.ppo import NumpyPolicy

    with pytest.raises(error, match=match):
        NumpyPolicy(path)


@pytest.mark.parametrize("mask, error, match", [
    (np.full(112, np.nan), ValueError, "^mask must be booleans or 0/1 numbers; it holds nan$"),
    (np.full(112, 2), ValueError, "^mask must be booleans or 0/1 numbers; it holds 2$"),
    (["x"] * 112, TypeError, "^mask must be booleans or 0/1 numbers, not "),
])  # fmt: skip
def test_numpy_policy_names_a_bad_mask(tmp_path, mask, error, match):
    """A NaN mask was read as all legal (NaN is true), a mask of 2s as legal."""
    from agents.ppo import NumpyPolicy

    path = tmp_path / "p.npz"
    random_policy_npz(path, RuleConfig(), hidden=(8,))
    policy = NumpyPolicy(path)
    with pytest.raises(error, match=match):
        policy.probabilities(np.zeros(234), mask)
    legal = np.arange(112) < 3
    want = policy.probabilities(np.zeros(234), legal)
    np.testing.assert_array_equal(policy.probabilities(np.zeros(234), legal.astype(float)), want)
    assert (want[3:] == 0).all()
