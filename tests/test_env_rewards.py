"""Rewards add up to what dominoes_env.options documents; seeds replay episodes exactly."""

from __future__ import annotations

import numpy as np
import pytest

import dominoes_env
from dominoes_env.options import delta_rewards, win_loss_rewards

from .helpers import comparable_info

CONFIGS = {
    "2p": dict(num_players=2, target_score=150),
    "3p": dict(num_players=3, target_score=150),
    "4p": dict(num_players=4, target_score=150),
    "4p-solo": dict(num_players=4, partnerships=False, target_score=150),
    "d9": dict(num_players=2, max_pip=9, target_score=150),
}


def run_episode(env, seed: int):
    """Random legal play; returns per agent (sum of env.rewards over the steps, sum of the
    rewards last() hands out) and the largest |sum of one step's rewards|."""
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    step_sum = dict.fromkeys(env.possible_agents, 0.0)
    last_sum = dict.fromkeys(env.possible_agents, 0.0)
    worst_step = 0.0
    for agent in env.agent_iter():
        obs, reward, term, trunc, _ = env.last()
        last_sum[agent] += reward
        action = None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"])))
        env.step(action)
        for a, r in env.rewards.items():
            step_sum[a] += r
        worst_step = max(worst_step, abs(sum(env.rewards.values())))
    return step_sum, last_sum, worst_step


@pytest.mark.parametrize("name", list(CONFIGS))
@pytest.mark.parametrize("episode", ["match", "hand"])
def test_score_delta_sums_to_the_relative_final_score(name, episode):
    env = dominoes_env.env(episode=episode, **CONFIGS[name])
    rules = env.unwrapped.rules
    for seed in range(3):
        step_sum, last_sum, worst = run_episode(env, seed)
        match = env.unwrapped.match
        scores = match.scores
        if episode == "match":
            assert match.is_over
        else:
            assert len(match.finished_hands) == 1 or match.is_over
        assert worst < 1e-9  # zero-sum at every step
        for s, agent in enumerate(env.possible_agents):
            side = rules.side_of(s)
            others = [p for k, p in enumerate(scores) if k != side]
            expected = (scores[side] - sum(others) / len(others)) / rules.target_score
            assert step_sum[agent] == pytest.approx(expected, abs=1e-9)
            assert last_sum[agent] == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("name", list(CONFIGS))
@pytest.mark.parametrize("episode", ["match", "hand"])
def test_win_loss_pays_the_winner_once(name, episode):
    env = dominoes_env.env(reward_mode="win_loss", episode=episode, **CONFIGS[name])
    rules = env.unwrapped.rules
    k = rules.num_sides
    for seed in range(3):
        step_sum, last_sum, _ = run_episode(env, seed)
        scores = env.unwrapped.match.scores
        top = max(scores)
        winner = scores.index(top) if scores.count(top) == 1 else None
        if episode == "match":
            assert winner == env.unwrapped.match.winner
        for s, agent in enumerate(env.possible_agents):
            side = rules.side_of(s)
            expected = 0.0 if winner is None else (1.0 if side == winner else -1.0 / (k - 1))
            assert step_sum[agent] == pytest.approx(expected)
            assert last_sum[agent] == pytest.approx(expected)


def test_reward_scale_one_gives_raw_points():
    env = dominoes_env.env(num_players=2, reward_scale=1.0, target_score=100)
    step_sum, _, _ = run_episode(env, 4)
    s0, s1 = env.unwrapped.match.scores
    assert step_sum == {"player_0": s0 - s1, "player_1": s1 - s0}



def test_a_reward_scale_too_large_for_float32_is_refused():
    """``reward_scale=1e308`` passed the "finite and positive" check, and 71 rewards of a game
    were ``inf`` / ``-inf``: the scale times the largest score must fit in a float32 (the
    JAX env's rewards, most learners' buffers). At the bound, every reward and sum is finite."""
    from dominoes_env.options import FLOAT32_MAX, max_reward_scale, score_bound
    from dominoes_env.single_agent import SingleAgentEnv

    rules = dominoes_env.RuleConfig(num_players=2, target_score=100)
    for make in (dominoes_env.env, dominoes_env.parallel_env):
        with pytest.raises(ValueError, match=r"reward_scale=1e\+308 is out of range for these "
                                             r"rules: a side's score \(up to 1,612 points\)"):
            make(rules=rules, reward_scale=1e308)
    with pytest.raises(ValueError, match="reward_scale=1e"):
        SingleAgentEnv(opponents=["random"], reward_scale=1e308)
    with pytest.raises(ValueError, match="illegal_reward=1e"):
        dominoes_env.env(illegal_reward=1e300)
    top = max_reward_scale(rules)
    assert top * score_bound(rules) <= FLOAT32_MAX
    env = dominoes_env.env(rules=rules, reward_scale=top)
    step_sum, _, _ = run_episode(env, 4)
    assert all(np.isfinite(np.float32(r)) for r in step_sum.values())

def test_reward_helpers():
    assert delta_rewards([10, 0], 1.0) == [10.0, -10.0]
    assert delta_rewards([0, 15, 0, 0], 0.01) == pytest.approx([-0.05, 0.15, -0.05, -0.05])
    assert win_loss_rewards(0, 4) == pytest.approx([1, -1 / 3, -1 / 3, -1 / 3])


def _trajectory(env, seed, steps=400):
    rng = np.random.default_rng(0)
    if seed is not None:
        env.reset(seed=seed)
    else:
        env.reset()
    out = []
    for agent in env.agent_iter(steps):
        obs, reward, term, trunc, info = env.last()
        out.append((agent, obs["observation"].tobytes(), obs["action_mask"].tobytes(), reward,
                    term, trunc, comparable_info(info)))
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return out


@pytest.mark.parametrize("name", list(CONFIGS))
def test_same_seed_same_episode(name):
    a, b = dominoes_env.env(**CONFIGS[name]), dominoes_env.env(**CONFIGS[name])
    first = _trajectory(a, 11)
    assert first == _trajectory(b, 11)
    assert first != _trajectory(b, 12)
    # seedless resets continue the seeded sequence of episodes
    follow_a, follow_b = _trajectory(a, None), _trajectory(b, 11)
    assert _trajectory(b, None) == follow_a and follow_b == first
