"""``experiments.bench_jax_pieces``: the games it times are in the middle of play, and its table
gives each piece's share of Pgx's pattern (the whole program runs, tiny, in
``tests/test_benchmark_load.py``)."""

from __future__ import annotations

import jax
import numpy as np

from dominoes_env.jax import make
from dominoes_env.jax.game import popcount
from experiments import bench_jax_pieces


def test_the_games_timed_are_spread_over_the_play():
    """New matches only would time a step that never draws, blocks or ends a hand."""
    env = make(num_players=2)
    states = bench_jax_pieces.sample_states(env, 256)
    played = np.asarray(popcount(states.game_state.played))  # tiles on each layout
    assert played.min() == 0 and played.max() == bench_jax_pieces.MAX_MOVES - 1
    assert len(np.unique(played)) == bench_jax_pieces.MAX_MOVES
    assert np.asarray(states.game_state.drawn).max() > 0  # some drew from the boneyard
    jax.vmap(lambda s: env.check_state(s, "step"))(states)
    assert np.asarray(states.legal_action_mask).any(axis=1).all()


def test_each_row_is_a_share_of_pgx_auto_reset(monkeypatch, capsys):
    names = list(bench_jax_pieces.pieces(make(num_players=2)))
    assert names[3] == bench_jax_pieces.REFERENCE
    ms = {name: 1.0 + i for i, name in enumerate(names)}  # the reference: 4.0 ms
    monkeypatch.setattr(bench_jax_pieces, "time_pieces", lambda *a, **k: ms)
    assert bench_jax_pieces.main(["--batch", "2", "--repeats", "1", "--calls", "1"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines()
            if line.split("  ")[0].strip() in names]
    assert [r.split("  ")[0].strip() for r in rows] == names
    assert rows[0].split()[-2:] == ["1.000", "25%"]
    assert rows[3].split()[-2:] == ["4.000", "100%"]


def test_deals_given_is_pgx_auto_reset_without_drawing_them():
    """Given the two deals Pgx's wrapper draws from a game's key (the step's and ``init``'s),
    the row computes exactly ``auto_reset(env.step, env.init)``: it leaves out the drawing and
    nothing else. Games that end their hand or their match at this step are among them."""
    from pgx.experimental import auto_reset

    env = make(num_players=2, target_score=20)
    states = bench_jax_pieces.sample_states(env, 64, seed=2)
    keys = jax.random.split(jax.random.PRNGKey(7), 64)
    actions = jax.jit(jax.vmap(bench_jax_pieces.random_actions(env)))(states, keys)
    deals = jax.jit(jax.vmap(lambda k: bench_jax_pieces.pgx_deals(env, k)))(keys)
    # jitted: run op by op, each call took half a minute
    given = jax.jit(jax.vmap(bench_jax_pieces.pieces(env)["pgx auto_reset, deals given"]))(
        states, actions, keys, deals)
    drawn = jax.jit(jax.vmap(auto_reset(env.step, env.init)))(states, actions, keys)
    for a, b in zip(jax.tree.leaves(given), jax.tree.leaves(drawn), strict=True):
        assert np.array_equal(a, b)
    dealt = np.asarray(popcount(drawn.game_state.played)) == 0  # a hand dealt at this step
    ended = np.asarray(drawn.terminated)  # a new match: init's deal
    assert ended.any() and (dealt & ~ended).any() and not dealt.all()  # and the step's deal
