"""``experiments.bench_jax``'s reloaded rows: the executable JAX's persistent compilation cache
would serve (serialized, then loaded back) computes what the fresh compile computes."""

from __future__ import annotations

import jax
import numpy as np

from dominoes_env.jax import make
from experiments import bench_jax


def test_a_reloaded_rollout_computes_what_the_fresh_one_does():
    env = make(num_players=2)
    states = jax.jit(jax.vmap(env.init))(jax.random.split(jax.random.PRNGKey(0), 3))
    for loop in bench_jax.LOOPS:
        fresh = bench_jax.build_rollout(env, 3, 4, loop).lower(
            states, jax.random.PRNGKey(0)).compile()
        again = bench_jax.reloaded(fresh)
        a, b = fresh(states, jax.random.PRNGKey(5)), again(states, jax.random.PRNGKey(5))
        assert all(np.array_equal(x, y) for x, y in
                   zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True)), loop


def test_reloaded_adds_a_row_per_step_timed_in_the_same_rounds(capsys):
    assert bench_jax.main(["--batches", "1", "--steps", "1", "--seconds", "0.01",
                           "--repeats", "1", "--reloaded"]) == 0
    rows = [line.split(",")[0] for line in capsys.readouterr().out.splitlines()
            if line.startswith("JAX ")]
    assert rows == ["JAX step_autoreset", "JAX pgx auto_reset",
                    "JAX step_autoreset (reloaded)", "JAX pgx auto_reset (reloaded)"]
