"""The match equity models in JAX (`dominoes_env.jax.match_equity`) against their numpy
originals (`agents.equity`, `agents.race_equity`) at every table, and the self-play reward they
give (`match_equity`): each of the learner's steps is worth the change of its side's chance to
win the match, a step that wins or loses the match the whole rest of it."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pgx")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

from agents.equity import MatchEquity, equity_table  # noqa: E402
from agents.race_equity import RaceEquity, hands_to_reach  # noqa: E402
from dominoes_env.core import RuleConfig  # noqa: E402
from dominoes_env.jax.match_equity import MatchRace, MatchTable  # noqa: E402
from dominoes_env.jax.selfplay import SelfPlay  # noqa: E402
from tests.helpers import jit_reset  # noqa: E402

TABLES = [(2, False), (3, False), (4, False), (4, True)]


def chances(model, scores, winner, side):
    """`model.chance` of many matches (`scores[k]`, `winner[k]`) for one `side`."""
    return np.asarray(jax.vmap(model.chance, in_axes=(0, 0, None))(
        jnp.asarray(scores, jnp.int32), jnp.asarray(winner, jnp.int32), side), np.float64)


def random_scores(rng, sides: int) -> np.ndarray:
    """Scores anywhere, close to the target, and past it (`win_check="end_of_hand"` during a
    hand: no winner yet)."""
    scores = rng.integers(0, 50, (400, sides)) * 5
    scores[:40] = rng.integers(45, 50, (40, sides)) * 5
    scores[40:80] = rng.integers(40, 60, (40, sides)) * 5
    return scores


@pytest.mark.parametrize("players, partnerships", TABLES)
def test_the_race_is_the_race_equity_of_agents_at_every_table(players, partnerships):
    rules = RuleConfig(num_players=players, partnerships=partnerships)
    race = MatchRace(hands_to_reach(rules), rules.target_score)
    scores = random_scores(np.random.default_rng(players), rules.num_sides)
    total = np.zeros(len(scores))
    for side in range(rules.num_sides):
        got = chances(race, scores, np.full(len(scores), -1), side)
        want = RaceEquity(rules, side).values(scores, np.full(len(scores), -1))
        np.testing.assert_allclose(250 * (2 * got - 1), want, atol=0.01)  # float32 sums
        total += got
    np.testing.assert_allclose(total, 1.0, atol=1e-5)  # someone wins: the chances add to 1


@pytest.mark.parametrize("options", [{}, {"num_players": 4},
                                     {"win_check": "end_of_hand", "target_score": 150}])
def test_the_table_is_the_match_equity_of_agents_with_the_leader_averaged(options):
    rules = RuleConfig(**options)
    table = MatchTable(equity_table(rules), rules.target_score)
    scores = random_scores(np.random.default_rng(1), 2) * rules.target_score // 250 // 5 * 5
    for side in (0, 1):
        got = chances(table, scores, np.full(len(scores), -1), side)
        want = MatchEquity(rules, side).values(scores, np.full(len(scores), -1))
        np.testing.assert_allclose(rules.target_score * (2 * got - 1), want, atol=1e-3)


def test_a_match_already_won_is_certain_for_its_winner_alone():
    rules = RuleConfig(num_players=3)
    race = MatchRace(hands_to_reach(rules), rules.target_score)
    scores = [[250, 0, 0], [0, 255, 240], [100, 100, 100]]
    for side in range(3):
        np.testing.assert_array_equal(chances(race, scores, [0, 1, 2], side),
                                      [side == 0, side == 1, side == 2])
    table = MatchTable(equity_table(RuleConfig()), 250)
    for side in range(2):
        np.testing.assert_array_equal(chances(table, [[250, 0], [240, 250]], [0, 1], side),
                                      [side == 0, side == 1])


def test_a_model_of_the_wrong_shape_or_target_is_refused_by_name():
    pmf, table = hands_to_reach(RuleConfig()), equity_table(RuleConfig())
    with pytest.raises(ValueError, match=r"pmf must be a \[21, H\] table \(target 100: 20 units"):
        MatchRace(pmf, 100)
    with pytest.raises(ValueError, match=r"table must be a \[20, 20, 2\] table"):
        MatchTable(table, 100)
    bad = pmf.copy()
    bad[3, 1] += 0.5
    with pytest.raises(ValueError, match="rows must be chances summing to 1"):
        MatchRace(bad, 250)
    with pytest.raises(ValueError, match="table's entries must be chances"):
        MatchTable(table * 2, 250)
    for target, error in (("abc", TypeError), (0, ValueError), (True, TypeError)):
        with pytest.raises(error, match="target_score"):
            MatchRace(pmf, target)
    with pytest.raises(TypeError, match="pmf must be a table of numbers, not list"):
        MatchRace([["a", "b"]], 250)
    with pytest.raises(ValueError, match="built for target 250, not these rules' 100"):
        SelfPlay(RuleConfig(target_score=100), 4, match_equity=MatchRace(pmf, 250))
    with pytest.raises(ValueError, match="a MatchTable is for two sides; these rules have 3"):
        SelfPlay(RuleConfig(num_players=3), 4, match_equity=MatchTable(table, 250))
    with pytest.raises(TypeError, match="must be a MatchRace or a MatchTable, not ndarray"):
        SelfPlay(RuleConfig(), 4, match_equity=pmf)


def model_of(rules: RuleConfig):
    """The model `train_jax --reward match` gives `rules`: the table for two sides, else the
    race."""
    if rules.num_sides == 2:
        return MatchTable(equity_table(rules), rules.target_score)
    return MatchRace(hands_to_reach(rules), rules.target_score)


def chances_of(model, games) -> np.ndarray:
    """Each game's chance that the learner's side wins its match."""
    x = games.state.game_state
    return np.asarray(jax.vmap(model.chance)(x.scores, x.winner, games.side), np.float64)


@pytest.mark.parametrize("options", [{"num_players": 3}, {"num_players": 4},
                                     {"num_players": 3, "win_check": "end_of_hand"}])
def test_a_step_is_worth_the_change_of_the_learner_s_chance_to_win_the_match(options):
    """Each of the learner's steps (its move and the opponents' up to its next turn) is
    `2 * target * reward_scale` times the change of its side's chance, so a hand's rewards add
    up to the change over the hand; greedy opponents, new hands at random match scores."""
    rules = RuleConfig(**options)
    model, n = model_of(rules), 64
    sp = SelfPlay(rules, n, opponents={"greedy": 1}, match_scores=1.0, match_equity=model)
    assert sp.equity_scale == 2 * 250 * 0.05
    step = jax.jit(lambda g, a, k: sp.step(g, a, None, None, k))
    games = jit_reset(sp, jax.random.PRNGKey(1), n)
    key, moved, finished = jax.random.PRNGKey(2), 0, 0
    for _ in range(10):
        key, k = jax.random.split(key)
        before = chances_of(model, games)
        games, reward, done = step(games, jnp.argmax(games.state.legal_action_mask, 1), k)
        reward, done = np.asarray(reward, np.float64), np.asarray(done)
        going = ~done
        np.testing.assert_allclose(reward[going],
                                   sp.equity_scale * (chances_of(model, games) - before)[going],
                                   atol=1e-4)
        moved += int((reward[going] != 0).sum())
        finished += int(done.sum())
    assert moved > 0 and finished > 0


@pytest.mark.parametrize("players", [3, 4])
def test_a_step_that_ends_the_match_is_worth_the_rest_of_the_chance(players):
    """Every side one play from the target (245 of 250): the first scoring play wins the match
    at once, and the step that ends it is worth `equity_scale * (1 - chance)` to the winner's
    learner and `-equity_scale * chance` to the others' (the chance before the step)."""
    rules = RuleConfig(num_players=players)
    model, n = model_of(rules), 64
    sp = SelfPlay(rules, n, opponents={"greedy": 1}, match_equity=model)
    games = jit_reset(sp, jax.random.PRNGKey(3), n)
    x = games.state.game_state
    state = games.state.with_game_state(x._replace(scores=jnp.full_like(x.scores, 245)))
    games = games._replace(state=state.replace(observation=jax.vmap(sp.env.observe)(state)))
    before = chances_of(model, games)
    games, reward, done = jax.jit(lambda g, a, k: sp.step(g, a, None, None, k))(
        games, jnp.argmax(games.state.legal_action_mask, 1), jax.random.PRNGKey(4))
    reward, done = np.asarray(reward, np.float64) / sp.equity_scale, np.asarray(done)
    after = reward[done] + before[done]  # the chance the match's end left: 1 or 0
    won = np.isclose(after, 1.0, atol=1e-4)
    lost = np.isclose(after, 0.0, atol=1e-4)
    assert done.sum() >= n // 4 and (won | lost).mean() >= 0.9  # a blocked hand may score 0
    assert won.any() and lost.any()


def test_an_illegal_action_keeps_the_env_s_penalty():
    rules = RuleConfig(num_players=3)
    sp = SelfPlay(rules, 8, opponents={"greedy": 1}, match_equity=model_of(rules))
    games = jit_reset(sp, jax.random.PRNGKey(5), 8)
    illegal = jnp.argmin(games.state.legal_action_mask, 1)  # the first illegal code
    _, reward, done = jax.jit(lambda g, a, k: sp.step(g, a, None, None, k))(
        games, illegal, jax.random.PRNGKey(6))
    assert np.asarray(done).all()
    np.testing.assert_allclose(np.asarray(reward), -1.0)  # illegal_reward for the offender
