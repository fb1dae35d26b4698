"""``experiments.bench_jax``'s reloaded rows: the executable JAX's persistent compilation cache
would serve (serialized, then loaded back) computes what the fresh compile computes."""

from __future__ import annotations

import jax
import numpy as np
import pytest

from dominoes_env.jax import make
from experiments import bench_jax


def test_a_reloaded_rollout_computes_what_the_fresh_one_does():
    env = make(num_players=2)
    states = jax.jit(jax.vmap(env.init))(jax.random.split(jax.random.PRNGKey(0), 2))
    lowered = bench_jax.build_rollout(env, 2, 2).lower(states, jax.random.PRNGKey(0))
    # (the test session's compilation cache holds the program after a first run, and an
    # executable read from it cannot be serialized again: bench_jax --reloaded turns it off)
    with bench_jax.compilation_cache_off():
        fresh = lowered.compile()
    again = bench_jax.reloaded(fresh)
    a, b = fresh(states, jax.random.PRNGKey(5)), again(states, jax.random.PRNGKey(5))
    assert all(np.array_equal(x, y) for x, y in
               zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True))


def test_reloaded_adds_a_row_per_step_timed_in_the_same_rounds(monkeypatch, capsys):
    # the rows, not the timing (compiling four rollouts took two minutes of the suite)
    import dominoes_env.throughput

    asked = []

    def timed(env, batch, steps, seconds, loop, reload):
        asked.append((loop, reload))
        return (0.5, 0.5), lambda: (2.0, 1.0)

    monkeypatch.setattr(bench_jax, "bench_jax", timed)
    monkeypatch.setattr(dominoes_env.throughput, "run_aec", lambda make_env, seconds: 1.0)
    assert bench_jax.main(["--batches", "1", "--steps", "1", "--seconds", "0.01",
                           "--repeats", "1", "--reloaded"]) == 0
    rows = [line.split(",")[0] for line in capsys.readouterr().out.splitlines()
            if line.startswith("JAX ")]
    assert rows == ["JAX step_autoreset", "JAX pgx auto_reset",
                    "JAX step_autoreset (reloaded)", "JAX pgx auto_reset (reloaded)"]
    assert asked == [("step_autoreset", False), ("pgx auto_reset", False),
                     ("step_autoreset", True), ("pgx auto_reset", True)]


def test_the_header_says_how_many_cpus_xla_may_use(monkeypatch, capsys):
    """A figure taken under ``taskset -c 0`` says so: XLA's hand-offs between threads cost
    CPU time, so the same step gives other figures on one core than on two."""
    import os

    import dominoes_env.throughput

    monkeypatch.setattr(bench_jax, "bench_jax", lambda *a, **k: ((0.5, 0.5), lambda: (2.0, 1.0)))
    monkeypatch.setattr(dominoes_env.throughput, "run_aec", lambda make_env, seconds: 1.0)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0}, raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert bench_jax.main(["--batches", "1", "--steps", "1", "--seconds", "0.01",
                           "--repeats", "1"]) == 0
    assert "1 of 2 CPUs for XLA's threads" in capsys.readouterr().out


def test_players_is_the_flag_every_program_takes(monkeypatch, capsys):
    """``--players`` as every other program spells it (it was ``--num-players``), with the same
    choices: 3 benchmarks a 3-seat table, 5 is one ``error:`` line and status 2."""
    import dominoes_env.throughput

    monkeypatch.setattr(bench_jax, "bench_jax", lambda *a, **k: ((0.5, 0.5), lambda: (2.0, 1.0)))
    monkeypatch.setattr(dominoes_env.throughput, "run_aec", lambda make_env, seconds: 1.0)
    assert bench_jax.main(["--batches", "1", "--steps", "1", "--seconds", "0.01",
                           "--repeats", "1", "--players", "3"]) == 0
    assert "\n3 players, random legal moves" in "\n" + capsys.readouterr().out
    for argv, message in ((["--players", "5"], "argument --players: invalid choice: 5 "
                                                "(choose from 2, 3, 4)"),
                          (["--num-players", "3"], "unrecognized arguments: --num-players")):
        with pytest.raises(SystemExit) as stopped:
            bench_jax.main(argv)
        assert stopped.value.code == 2
        err = capsys.readouterr().err
        assert message in err and err.startswith("error: ") and err.count("\n") == 1
