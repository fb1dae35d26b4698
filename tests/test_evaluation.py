"""agents.evaluation.evaluate: the one policy evaluator of every trainer."""

from __future__ import annotations

import pytest

from agents.evaluation import evaluate
from agents.ppo import random_policy_npz
from dominoes_env.core import RuleConfig

FAST = dict(target_score=50)
FOUR = dict(num_players=4, **FAST)

# (rules, opponent, matches, seed) -> what experiments.train_ppo.evaluate(policy path, ...) gave
# before this evaluator replaced it (commit db47322), for a fixed random policy (random_policy_npz
# seed 0, one hidden layer of 16, observation version 2): with 2 sides the seeding scheme and the
# results are unchanged
PINNED = [
    (FAST, "greedy", 6, 3,
     {"win_rate": 0.0, "ci_low": 0.0, "ci_high": 0.39033428790216534,
      "margin": -41.666666666666664, "matches": 6}),
    (FAST, "random", 5, 11,
     {"win_rate": 0.5, "ci_low": 0.15003898915214953, "ci_high": 0.8499610108478505,
      "margin": -1.25, "matches": 4}),
    (FAST, "search:sims=20", 4, 7,
     {"win_rate": 0.0, "ci_low": 0.0, "ci_high": 0.4898908364545973, "margin": -33.75,
      "matches": 4}),
    (FOUR, "greedy", 4, 0,
     {"win_rate": 0.0, "ci_low": 0.0, "ci_high": 0.4898908364545973, "margin": -27.5,
      "matches": 4}),
    (FOUR, "random", 4, 9,
     {"win_rate": 0.5, "ci_low": 0.15003898915214953, "ci_high": 0.8499610108478505,
      "margin": -6.25, "matches": 4}),
]


@pytest.mark.parametrize(("rules", "opponent", "matches", "seed", "expected"), PINNED)
def test_two_sides_give_what_the_old_train_ppo_evaluator_gave(rules, opponent, matches, seed,
                                                              expected, tmp_path):
    rules = RuleConfig(**rules)
    path = tmp_path / "policy.npz"
    random_policy_npz(path, rules, hidden=(16,), seed=0, obs_version=2)
    assert evaluate(f"ppo:{path}", opponent, rules, matches=matches, seed=seed) == expected


@pytest.mark.parametrize("options", [dict(num_players=3), dict(num_players=4),
                                     dict(num_players=4, partnerships=False)])
def test_every_side_is_played_at_three_and_four_players(options, monkeypatch):
    rules = RuleConfig(target_score=30, **options)
    seen = []
    import agents.evaluation as evaluation

    real = evaluation.play_match

    def spy(seats, rules, seed):
        seen.append(([getattr(a, "name", a) for a in seats], seed))
        return real(seats, rules, seed)

    monkeypatch.setattr(evaluation, "play_match", spy)
    res = evaluate("greedy", "random", rules, matches=2 * rules.num_sides, seed=5)
    assert res["matches"] == len(seen) == 2 * rules.num_sides
    # each deal once per side, the agent on every seat of that side and nowhere else
    for i in range(2):
        deal = seen[i * rules.num_sides:(i + 1) * rules.num_sides]
        assert len({seed for _, seed in deal}) == 1
        for side, (names, _) in enumerate(deal):
            assert names == ["greedy" if rules.side_of(s) == side else "random"
                             for s in range(rules.num_players)]
    assert 0 <= res["ci_low"] <= res["win_rate"] <= res["ci_high"] <= 1


def test_same_seed_same_result_and_the_seed_matters():
    rules = RuleConfig(num_players=3, target_score=30)
    a = evaluate("random", "random", rules, matches=6, seed=1)
    assert a == evaluate("random", "random", rules, matches=6, seed=1)
    assert any(evaluate("random", "random", rules, matches=6, seed=s) != a for s in (2, 3, 4))


def test_a_drawn_match_counts_half(monkeypatch):
    import agents.evaluation as evaluation
    from agents.arena import MatchResult

    def draw(seats, rules, seed):
        return MatchResult(seats=("a", "b"), seed=seed, scores=(10, 10), winner=None, hands=1,
                           plays=0, seat_points=(0, 0))

    monkeypatch.setattr(evaluation, "play_match", draw)
    res = evaluate("random", "random", RuleConfig(), matches=2, seed=0)
    assert res["win_rate"] == 0.5 and res["margin"] == 0 and res["matches"] == 2


@pytest.mark.parametrize(("kwargs", "error", "message"), [
    (dict(agent=3), TypeError, "agent must be an agent spec"),
    (dict(agent="nonsense"), ValueError, "agent: unknown agent spec 'nonsense'"),
    (dict(opponent="ppo:/no/such/file.npz"), ValueError, "opponent: agent spec 'ppo:"),
    (dict(opponent=None), TypeError, "opponent must be an agent spec"),
    (dict(rules={"num_players": 2}), TypeError, "rules must be a RuleConfig"),
    (dict(matches=0), ValueError, "matches=0"),
    (dict(matches=2.5), TypeError, "matches=2.5"),
    (dict(matches=True), TypeError, "matches=True"),
    (dict(seed="x"), TypeError, "seed="),
    (dict(agent="ppo", rules=RuleConfig(num_players=3)), ValueError,
     "agent: agent spec 'ppo' cannot play these rules"),
])
def test_bad_arguments_are_refused_by_name(kwargs, error, message):
    args = dict(agent="greedy", opponent="random", rules=RuleConfig(), matches=2, seed=0)
    args.update(kwargs)
    rules = args.pop("rules")
    with pytest.raises(error, match=message.replace("(", r"\(").replace(".", r"\.")):
        evaluate(args.pop("agent"), args.pop("opponent"), rules, **args)
