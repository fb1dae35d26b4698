"""Tianshou (the ``tianshou`` extra): its ``PettingZooEnv`` + ``Collector`` run the env with a
masked policy (``MultiAgentPolicy`` over Tianshou's masked random policy), 2 and 4 players.

Before env v1 this crashed inside the Collector on ``info["events"]`` (lists of event tuples
of varying length cannot be stacked); the v1 infos have one fixed structure."""

from __future__ import annotations

import numpy as np
import pytest

tianshou = pytest.importorskip("tianshou")

from tianshou.algorithm.multiagent.marl import MultiAgentPolicy  # noqa: E402
from tianshou.algorithm.random import MARLRandomDiscreteMaskedOffPolicyAlgorithm  # noqa: E402
from tianshou.data import Collector, VectorReplayBuffer  # noqa: E402
from tianshou.env import DummyVectorEnv, PettingZooEnv  # noqa: E402

from dominoes_env import straight_dominoes_v1  # noqa: E402
from dominoes_env.infos import INFO_KEYS  # noqa: E402


@pytest.mark.parametrize("num_players", [2, 4])
def test_collector_runs_the_env_with_a_masked_policy(num_players):
    def make():
        return PettingZooEnv(straight_dominoes_v1.env(num_players=num_players, target_score=60))

    envs = DummyVectorEnv([make, make])
    probe = make()
    policy = MultiAgentPolicy({
        agent: MARLRandomDiscreteMaskedOffPolicyAlgorithm(probe.action_space).policy
        for agent in probe.agents
    })  # fmt: skip
    buffer = VectorReplayBuffer(20_000, len(envs))
    collector = Collector(policy, envs, buffer)
    np.random.seed(0)  # Tianshou's random policy draws from numpy's global generator
    collector.reset()
    stats = collector.collect(n_episode=6)

    assert stats.n_collected_episodes == 6 and stats.n_collected_steps == len(buffer) > 60
    batch = buffer[buffer.sample_indices(0)]  # every stored transition
    assert len(batch) == len(buffer)
    # every action the collector played was legal under the mask it was chosen from
    assert batch.obs.mask[np.arange(len(batch)), batch.act].all()
    assert set(batch.obs.agent_id) == set(probe.agents)
    # the infos were stacked, key by key, with their fixed types
    assert set(batch.info.keys()) >= set(INFO_KEYS)
    assert batch.info.scores.shape == (len(batch), 2)
    assert batch.info.hand_end.dtype.kind == "i" and set(batch.info.hand_end) <= {0, 1, 2}
    # score_delta rewards of whole matches: zero-sum, partners share theirs, someone won
    returns = stats.returns
    assert returns.shape == (6, num_players)
    np.testing.assert_allclose(returns.sum(axis=1), 0.0, atol=1e-9)
    if num_players == 4:
        np.testing.assert_allclose(returns[:, 0], returns[:, 2])
        np.testing.assert_allclose(returns[:, 1], returns[:, 3])
    assert (np.abs(returns).max(axis=1) > 0).all()
