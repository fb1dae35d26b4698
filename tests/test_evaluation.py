"""agents.evaluation.evaluate: the one policy evaluator of every trainer."""

from __future__ import annotations

import pytest

from agents.evaluation import evaluate
from agents.ppo import random_policy_npz, shipped_policy_path
from dominoes_env.core import RuleConfig

#: a policy of one table, refused at another with both named
TWO_PLAYER_POLICY = shipped_policy_path("2p")

FAST = dict(target_score=50)
FOUR = dict(num_players=4, **FAST)

# (rules, opponent, matches, seed) -> what experiments.train_ppo.evaluate(policy path, ...) gave
# before this evaluator replaced it (commit db47322), for a fixed random policy (random_policy_npz
# seed 0, one hidden layer of 16, observation version 2): with 2 sides the seeding scheme and the
# results are unchanged (the search opponent's re-pinned when search began drawing its deals
# with numpy, issue 34: the same distribution, other deals per seed)
PINNED = [
    (FAST, "greedy", 6, 3,
     {"win_rate": 0.0, "ci_low": 0.0, "ci_high": 0.39033428790216534,
      "margin": -41.666666666666664, "matches": 6}),
    (FAST, "random", 5, 11,
     {"win_rate": 0.5, "ci_low": 0.15003898915214953, "ci_high": 0.8499610108478505,
      "margin": -1.25, "matches": 4}),
    (FAST, "search:sims=20", 4, 7,
     {"win_rate": 0.0, "ci_low": 0.0, "ci_high": 0.4898908364545973, "margin": -42.5,
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


def _spy_on_matches(monkeypatch, winner=None):
    """Record ([agent name by seat], seed) of every match evaluate plays; with ``winner``, each
    match is won by that seat's side instead of being played."""
    import agents.evaluation as evaluation
    from agents.arena import MatchResult

    seen = []
    real = evaluation.play_match

    def spy(seats, rules, seed):
        seen.append(([getattr(a, "name", a) for a in seats], seed))
        if winner is None:
            return real(seats, rules, seed)
        scores = tuple(100 if s == rules.side_of(winner) else 0 for s in range(rules.num_sides))
        return MatchResult(seats=tuple(seen[-1][0]), seed=seed, scores=scores,
                           winner=rules.side_of(winner), hands=1, plays=0,
                           seat_points=(0,) * rules.num_players)

    monkeypatch.setattr(evaluation, "play_match", spy)
    return seen


def test_every_side_is_played_with_two_sides(monkeypatch):
    rules = RuleConfig(target_score=30, num_players=4)
    seen = _spy_on_matches(monkeypatch)
    res = evaluate("greedy", "random", rules, matches=4, seed=5)
    assert res["matches"] == len(seen) == 4
    # each deal once per side, the agent on every seat of that side and nowhere else
    g, r = "greedy", "random"
    assert [names for names, _ in seen] == [[g, r, g, r], [r, g, r, g]] * 2
    assert seen[0][1] == seen[1][1] != seen[2][1] == seen[3][1]
    assert 0 <= res["ci_low"] <= res["win_rate"] <= res["ci_high"] <= 1


# the two-agent field of the tournament's free-for-all format, deal 0: A is the agent
FIELD = {
    3: ["AAB", "ABA", "BAA", "ABB", "BBA", "BAB"],
    4: ["AAAB", "AABA", "ABAA", "BAAA", "AABB", "ABBA", "BBAA", "BAAB",
        "ABBB", "BBBA", "BBAB", "BABB"],
}


@pytest.mark.parametrize("players", [3, 4])
def test_free_for_all_plays_the_tournaments_two_agent_field(players, monkeypatch):
    rules = RuleConfig(target_score=30, num_players=players, partnerships=False)
    seen = _spy_on_matches(monkeypatch)
    res = evaluate("greedy", "random", rules, matches=len(FIELD[players]), seed=5)
    names = {"A": "greedy", "B": "random"}
    assert [names_ for names_, _ in seen] == [[names[c] for c in t] for t in FIELD[players]]
    assert len({seed for _, seed in seen}) == 1  # one deal, every seating
    assert res["matches"] == len(FIELD[players])


@pytest.mark.parametrize("players", [3, 4])
@pytest.mark.parametrize("winner", [0, 1])
def test_free_for_all_share_is_one_half_between_equals(players, winner, monkeypatch):
    # whoever sits at the winning seat wins: the agent holds it in exactly half the matches
    rules = RuleConfig(target_score=30, num_players=players, partnerships=False)
    seen = _spy_on_matches(monkeypatch, winner=winner)
    res = evaluate("greedy", "random", rules, matches=3 * len(FIELD[players]), seed=1)
    # three deals; at 4 players the second sits (A, A, B, B) as ABAB: 2 rotations, not 4
    assert res["win_rate"] == 0.5 and res["matches"] == len(seen)
    assert len(seen) == {3: 18, 4: 12 + 10 + 12}[players]
    assert res["margin"] == 0  # +100 when the agent wins, -100 when it loses


def test_same_seed_same_result_and_the_seed_matters():
    rules = RuleConfig(num_players=3, target_score=30)
    a = evaluate("greedy", "random", rules, matches=6, seed=1)
    assert a == evaluate("greedy", "random", rules, matches=6, seed=1)
    assert any(evaluate("greedy", "random", rules, matches=6, seed=s) != a for s in (2, 3, 4))


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
    (dict(agent=f"ppo:{TWO_PLAYER_POLICY}", rules=RuleConfig(num_players=3)), ValueError,
     "was trained for 2 players; these rules are 3 players"),
])
def test_bad_arguments_are_refused_by_name(kwargs, error, message):
    args = dict(agent="greedy", opponent="random", rules=RuleConfig(), matches=2, seed=0)
    args.update(kwargs)
    rules = args.pop("rules")
    with pytest.raises(error, match=message.replace("(", r"\(").replace(".", r"\.")):
        evaluate(args.pop("agent"), args.pop("opponent"), rules, **args)
