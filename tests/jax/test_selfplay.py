"""The self-play env of the JAX trainers as a library: shapes, every opponent kind, every
observation version it serves, and bad options refused before anything is traced."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pgx")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

from dominoes_env.core import RuleConfig  # noqa: E402
from dominoes_env.jax.networks import init_params  # noqa: E402
from dominoes_env.jax.selfplay import (  # noqa: E402
    OPPONENT_KINDS,
    SelfPlay,
    check_obs_version,
    served_obs_versions,
)
from dominoes_env.obs import VERSIONS, observation_spec  # noqa: E402
from tests.helpers import jit_reset  # noqa: E402


@pytest.mark.parametrize("players, version", [(2, 2), (3, 3), (4, 4)])
def test_shapes_and_every_opponent_kind(players, version):
    rules = RuleConfig(num_players=players)
    size = observation_spec(version).layout(rules).size
    params = init_params(jax.random.PRNGKey(0), size, 112, [8])
    actor = params["actor"]
    sp = SelfPlay(rules, 10, opponents={kind: 1 for kind in OPPONENT_KINDS},
                  fixed_actor=actor, obs_version=version, full_critic=True)
    assert [kind for kind, _, _ in sp.slots] == [0, 1, 2, 3, 4]  # 2 envs each
    games = jit_reset(sp, jax.random.PRNGKey(1), 10)
    assert games.state.observation.shape == (10, size) == (10, sp.obs_size)
    assert games.state.legal_action_mask.shape == (10, 112)
    assert jax.eval_shape(sp.hidden_info, games.state).shape == (10, sp.hidden_size) \
        == (10, (players + 1) * 28)
    step = jax.jit(lambda g, a, k: sp.step(g, a, actor, actor, k))
    key = jax.random.PRNGKey(2)
    ended = 0
    for _ in range(30):
        key, k = jax.random.split(key)
        games, reward, done = step(games, jnp.argmax(games.state.legal_action_mask, 1), k)
        assert reward.shape == (10,) and done.shape == (10,)
        side = np.asarray(sp.side_of)[np.asarray(games.state.current_player)]
        assert (side == np.asarray(games.side)).all()  # every game waits for the learner
        ended += int(np.asarray(done).sum())
    assert ended > 0


def test_served_versions_and_refusals():
    assert set(served_obs_versions()) <= set(VERSIONS) and 2 in served_obs_versions()
    assert check_obs_version(2) == 2
    for bad in (1, True, "2"):
        with pytest.raises(ValueError, match="not one the JAX game serves; it serves 2"):
            check_obs_version(bad)
    rules = RuleConfig()
    for kwargs, says in (({"opponents": {"grumpy": 1}}, "unknown opponent kind(s) grumpy"),
                         ({"opponents": {"policy": 1}}, "'policy' needs fixed_actor"),
                         ({"opponents": {"self": 0}}, "one positive"),
                         ({"match_scores": 2}, "match_scores=2 is a share"),
                         ({"obs_version": 7}, "observation version 7")):
        with pytest.raises(ValueError, match=says.replace("(", r"\(").replace(")", r"\)")):
            SelfPlay(rules, 4, **kwargs)
    with pytest.raises(ValueError, match="num_envs=0"):
        SelfPlay(rules, 0)
    with pytest.raises(TypeError, match="rules must be a RuleConfig"):
        SelfPlay({"num_players": 2}, 4)


#: a 4-player deal (seat 0 leads, no boneyard) in which greedy play takes seat 1 through the
#: whole hand without a move: seats 0, 2 and 3 play, seat 1 passes, seat 0 goes out
NEVER_MOVES_DEAL = ([3, 5, 11, 20, 21, 22, 25], [0, 4, 7, 8, 12, 13, 15],
                    [1, 6, 14, 16, 18, 19, 24], [2, 9, 10, 17, 23, 26, 27])


def test_a_new_game_that_ends_before_the_learner_moves_is_dealt_again():
    """The learner at seat 1 of that deal, against greedy opponents: its game ends before the
    learner's first move. Replaced by the same new game, it ended the same way again, and
    `play_to_learner` never returned (a 4-player train_jax run hung in its 35th update)."""
    from dominoes_env.jax.game import Deal
    from dominoes_env.jax.policies import greedy_policy
    from dominoes_env.jax.selfplay import Games

    rules = RuleConfig(num_players=4, partnerships=False)
    sp = SelfPlay(rules, 2, opponents={"greedy": 1})
    deal = Deal(jnp.asarray(sum(NEVER_MOVES_DEAL, []), jnp.int32), jnp.int32(0))
    init_deal = jax.jit(sp.env.init_deal)
    state = init_deal(deal)
    seats = []  # the premise: greedy play ends the hand with seat 1 never to move
    play = jax.jit(lambda s: sp.env.step(s, greedy_policy(sp.env, s), None))
    while not bool(state.terminated):
        seats.append(int(state.current_player))
        state = play(state)
    assert 1 not in seats and len(seats) >= 8, seats
    start = jax.tree.map(lambda x: jnp.stack([x, x]), init_deal(deal))
    games = Games(start, jnp.asarray([1, 1], jnp.int32), sp.opp_of_env)
    never = jnp.zeros(2, bool)
    out, reward, done = jax.jit(lambda g, k: sp.play_to_learner(
        g, jnp.zeros(2, jnp.int32), never, g, None, None, k))(games, jax.random.PRNGKey(3))
    side = np.asarray(sp.side_of)[np.asarray(out.state.current_player)]
    assert (side == np.asarray(out.side)).all()  # every game waits for the learner
    assert np.asarray(done).all() and reward.shape == (2,)


def test_wrong_arguments_are_refused_by_name_before_anything_is_traced():
    """A fixed actor of the wrong sizes (or a file name in its place) was accepted and `step`
    failed later in XLA ("dot_general requires contracting dimensions"); a missing actor for
    the `self` envs ended in "'NoneType' object is not subscriptable", an action per game of
    the wrong length in a broadcasting error, `reset` of another batch size in inconsistent
    games ("vmap got inconsistent sizes" at the next step), an unbatched state's
    `hidden_info` in a silent `[234, 0]` array, and `match_scores="0.5"` in a bare
    "'<=' not supported". Each is now a `ValueError` (or `ParameterTypeError`) naming it."""
    from dominoes_env.jax.selfplay import Games

    rules, key = RuleConfig(), jax.random.PRNGKey(0)
    narrow = init_params(key, 10, 8, [4])["actor"]
    for fixed, says in ((narrow, "fixed_actor takes 10 inputs, not the 234 given"),
                        (init_params(key, 234, 8, [4])["actor"],
                         "fixed_actor gives 8 outputs, not the 112 needed"),
                        ("x.npz", "fixed_actor='x.npz' must be a network"),
                        ([], r"fixed_actor=\[\] holds no layers"),
                        ([{"w": np.zeros((234, 112))}],
                         r"fixed_actor\[0\] must be a layer.*not a dict with keys \['w'\]")):
        with pytest.raises(ValueError, match=says):
            SelfPlay(rules, 4, opponents={"policy": 1}, fixed_actor=fixed)
    for share, says in (("0.5", "match_scores='0.5' must be a number"),
                        (float("nan"), "match_scores=nan must be a finite number"),
                        (-0.1, "match_scores=-0.1 is a share")):
        with pytest.raises(ValueError, match=says):
            SelfPlay(rules, 4, match_scores=share)
    with pytest.raises(ValueError, match=r"opponents\['self'\]='x' must be a number"):
        SelfPlay(rules, 4, opponents={"self": "x"})

    sp = SelfPlay(rules, 4, opponents={"self": 1, "snapshot": 1}, full_critic=True)
    with pytest.raises(ValueError, match="n=8 games, but this SelfPlay plays num_envs=4"):
        sp.reset(key, 8)
    games = jax.eval_shape(lambda k: sp.reset(k, 4), key)  # shapes only: nothing compiled
    actor = init_params(key, sp.obs_size, sp.num_actions, [4])["actor"]
    action = jnp.zeros(4, jnp.int32)
    for args, says in (((games, action, None, actor), "actor is None, but some envs play "
                                                       "opponent kind 'self'"),
                       ((games, action, actor, None), "frozen_actor is None, but some envs "
                                                      "play opponent kind 'snapshot'"),
                       ((games, action, actor, narrow), "frozen_actor takes 10 inputs"),
                       ((games, jnp.zeros(3, jnp.int32), actor, actor),
                        r"action has shape \(3,\); give one action per game, shape \(4,\)"),
                       ((games, jnp.zeros(4), actor, actor), "action has dtype float32"),
                       ((games.state, action, actor, actor), "games must be Games")):
        with pytest.raises(ValueError, match=says):
            sp.step(*args, key)
    other = jax.eval_shape(lambda k: SelfPlay(rules, 8).reset(k, 8), key)
    with pytest.raises(ValueError, match=r"games holds a batch of shape \(8,\); this SelfPlay "
                                         "plays num_envs=4"):
        sp.step(Games(*other), jnp.zeros(8, jnp.int32), actor, actor, key)
    # step's play with the new deals given checks them as well
    pending = jnp.ones(4, bool)
    for args, says in (((games, action, pending, Games(*other), actor, actor),
                        r"fresh must hold one entry per game, shape \(4,\), not \(8,\)"),
                       ((games, action, jnp.ones(3, bool), games, actor, actor),
                        r"pending must hold one entry per game, shape \(4,\), not \(3,\)"),
                       ((games, action, pending, games, None, actor), "actor is None")):
        with pytest.raises(ValueError, match=says):
            sp.play_to_learner(*args, key)
    one = jax.tree.map(lambda x: jax.ShapeDtypeStruct(x.shape[1:], x.dtype), games.state)
    with pytest.raises(ValueError, match=r"state must be a batch of states \(observations "
                                         r"\[B, 234\].*of shape \(234,\)"):
        sp.hidden_info(one)
    assert jax.eval_shape(sp.hidden_info, games.state).shape == (4, sp.hidden_size)
