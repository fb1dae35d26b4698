"""The race model of a match in JAX (`dominoes_env.jax.race`) against its numpy original
(`agents.race_equity`) at every table, and the self-play reward it gives (`match_race`): each
of the learner's steps is worth the change of its side's chance to win the match."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pgx")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

from agents.race_equity import RaceEquity, hands_to_reach  # noqa: E402
from dominoes_env.core import RuleConfig  # noqa: E402
from dominoes_env.jax.race import MatchRace  # noqa: E402
from dominoes_env.jax.selfplay import SelfPlay  # noqa: E402
from tests.helpers import jit_reset  # noqa: E402

TABLES = [(2, False), (3, False), (4, False), (4, True)]


def chances(race: MatchRace, scores, winner, side):
    """`race.chance` of many matches (`scores[k]`, `winner[k]`) for one `side`."""
    return np.asarray(jax.vmap(race.chance, in_axes=(0, 0, None))(
        jnp.asarray(scores, jnp.int32), jnp.asarray(winner, jnp.int32), side), np.float64)


@pytest.mark.parametrize("players, partnerships", TABLES)
def test_the_chance_is_the_race_equity_of_agents_at_every_table(players, partnerships):
    rules = RuleConfig(num_players=players, partnerships=partnerships)
    race = MatchRace(hands_to_reach(rules), rules.target_score)
    rng = np.random.default_rng(players)
    scores = rng.integers(0, 50, (400, rules.num_sides)) * 5
    scores[:40] = rng.integers(45, 50, (40, rules.num_sides)) * 5  # close to the target
    total = np.zeros(len(scores))
    for side in range(rules.num_sides):
        got = chances(race, scores, np.full(len(scores), -1), side)
        want = RaceEquity(rules, side).values(scores, np.full(len(scores), -1))
        np.testing.assert_allclose(250 * (2 * got - 1), want, atol=0.01)  # float32 sums
        total += got
    np.testing.assert_allclose(total, 1.0, atol=1e-5)  # someone wins: the chances add to 1


def test_a_match_already_won_is_certain_for_its_winner_alone():
    rules = RuleConfig(num_players=3)
    race = MatchRace(hands_to_reach(rules), rules.target_score)
    scores = [[250, 0, 0], [0, 255, 240], [100, 100, 100]]
    for side in range(3):
        got = chances(race, scores, [0, 1, 2], side)
        np.testing.assert_array_equal(got, [side == 0, side == 1, side == 2])


def test_a_table_that_is_no_race_is_refused():
    pmf = hands_to_reach(RuleConfig())
    with pytest.raises(ValueError, match=r"pmf must be a \[21, H\] table \(target 100: 20 units"):
        MatchRace(pmf, 100)
    bad = pmf.copy()
    bad[3, 1] += 0.5
    with pytest.raises(ValueError, match="rows must be chances summing to 1"):
        MatchRace(bad, 250)
    with pytest.raises(ValueError, match="another target than rules' 100"):
        SelfPlay(RuleConfig(target_score=100), 4, match_race=MatchRace(pmf, 250))
    with pytest.raises(TypeError, match="match_race must be a MatchRace, not ndarray"):
        SelfPlay(RuleConfig(), 4, match_race=pmf)


def test_a_step_is_worth_the_change_of_the_learner_s_chance_to_win_the_match():
    """Each of the learner's steps (its move and the opponents' up to its next turn) is
    `2 * target * reward_scale` times the change of its side's chance, so a hand's rewards add
    up to the change over the hand; greedy opponents, new hands at random match scores."""
    rules = RuleConfig(num_players=3)
    race = MatchRace(hands_to_reach(rules), rules.target_score)
    n = 64
    sp = SelfPlay(rules, n, opponents={"greedy": 1}, match_scores=1.0, match_race=race)
    assert sp.race_scale == 2 * 250 * 0.05
    step = jax.jit(lambda g, a, k: sp.step(g, a, None, None, k))
    games = jit_reset(sp, jax.random.PRNGKey(1), n)
    key, moved, finished = jax.random.PRNGKey(2), 0, 0
    for _ in range(10):
        key, k = jax.random.split(key)
        before = chances_of(race, games)
        games, reward, done = step(games, jnp.argmax(games.state.legal_action_mask, 1), k)
        reward, done = np.asarray(reward, np.float64), np.asarray(done)
        going = ~done
        np.testing.assert_allclose(reward[going],
                                   sp.race_scale * (chances_of(race, games) - before)[going],
                                   atol=1e-4)
        assert (np.abs(reward[done]) <= sp.race_scale).all()  # a chance moves by 1 at most
        moved += int((reward[going] != 0).sum())
        finished += int(done.sum())
    assert moved > 0 and finished > 0


def chances_of(race: MatchRace, games) -> np.ndarray:
    """Each game's chance that the learner's side wins its match."""
    x = games.state.game_state
    return np.asarray(jax.vmap(race.chance)(x.scores, x.winner, games.side), np.float64)
