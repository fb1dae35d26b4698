"""``experiments.bench_jax_pieces``: the games it times are in the middle of play, and its table
gives each piece's share of Pgx's pattern (the whole program runs, tiny, in
``tests/test_benchmark_load.py``)."""

from __future__ import annotations

import jax
import numpy as np

from dominoes_env.jax import make
from experiments import bench_jax_pieces


def test_the_games_timed_are_spread_over_the_play():
    """New matches only would time a step that never draws, blocks or ends a hand."""
    env = make(num_players=2)
    states = bench_jax_pieces.sample_states(env, 256)
    steps = np.asarray(states._step_count)
    assert steps.min() == 0 and steps.max() == bench_jax_pieces.MAX_MOVES - 1
    assert len(np.unique(steps)) == bench_jax_pieces.MAX_MOVES
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


def test_the_deal_row_times_what_a_step_reads():
    """The deal's order is computed only where it is read (``init_deal``'s callers): the row
    times the places and the leader."""
    env = make(num_players=2)
    key = jax.random.PRNGKey(3)
    places, leader = bench_jax_pieces.pieces(env)["the deal"](None, None, key, None)
    deal = env.game.random_deal(key)
    assert np.array_equal(places, deal.position) and int(leader) == int(deal.leader)
    assert sorted(np.asarray(places).tolist()) == list(range(28))
