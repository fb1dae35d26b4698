"""Time the JAX observation alone: every seat's observation of a batch of game states, jitted.

The states come from random play (``Env.step_autoreset`` under ``vmap``, a state kept every
step, so the batch mixes leads, middle games, draws and new hands); the function timed is
``jit(vmap(vmap(observe, seats)))`` over them, the same computation the differential tests run
after every step; with ``--seat-to-play``, only the seat to play's (what a step computes).
Time is CPU time of this process (``time.process_time``, XLA's threads
included), wall time beside it; each figure is the median over ``--repeats`` rounds.

    python -m experiments.bench_jax_observe [--configs double-six-2p double-twelve]
        [--batch 4096] [--obs-version 4] [--repeats 5] [--seat-to-play]
"""

from __future__ import annotations

import statistics
import time

from dominoes_env.cli_support import OneLineParser, ascii_int, end_program, run_command
from dominoes_env.optional import require

#: the rule configurations this can time (double-twelve: tests/helpers.py's CONFIGS entry)
CONFIGS = {
    "double-six-2p": dict(num_players=2),
    "double-twelve": dict(max_pip=12, num_players=4, hand_size=15),
}
MAX_BATCH = 65_536
MAX_REPEATS = 1000


def sample_states(env, batch: int, seed: int = 0):
    """``batch`` game states (:class:`~dominoes_env.jax.game.GameState`) from random play: 64
    games stepped ``batch / 64`` steps each (rounded up), every state kept."""
    import jax

    from dominoes_env.jax import random_policy

    games = 64
    steps = -(-batch // games)

    def one(key):
        def body(state, k):
            k_act, k_step = jax.random.split(k)
            state = env.step_autoreset(state, random_policy(env, state, k_act), k_step)
            return state, state.game_state

        k_init, k_run = jax.random.split(key)
        _, kept = jax.lax.scan(body, env.init(k_init), jax.random.split(k_run, steps))
        return kept

    kept = jax.jit(jax.vmap(one))(jax.random.split(jax.random.PRNGKey(seed), games))
    return jax.tree.map(lambda x: x.reshape((-1,) + x.shape[2:])[:batch], kept)


def time_observe(env, states, version: int, repeats: int, observe=None,
                 every_seat: bool = True):
    """``(compile wall s, [(CPU s, wall s) per round], observations)`` of every seat's
    observation of ``states``, or only the seat to play's (``every_seat=False``; seat 0's once
    the game is over); ``observe``: ``dominoes_env.jax.observation.observe`` unless given."""
    import jax
    import jax.numpy as jnp

    if observe is None:
        from dominoes_env.jax.observation import observe
    seats = jnp.arange(env.num_players)

    def all_seats(x):
        if not every_seat:
            return observe(env.game, x, jnp.maximum(x.turn, 0), version)
        return jax.vmap(lambda seat: observe(env.game, x, seat, version))(seats)

    t0 = time.perf_counter()
    compiled = jax.jit(jax.vmap(all_seats)).lower(states).compile()
    compile_s = time.perf_counter() - t0
    jax.block_until_ready(compiled(states))  # warm up
    rounds = []
    for _ in range(repeats):
        c0, w0 = time.process_time(), time.perf_counter()
        jax.block_until_ready(compiled(states))
        rounds.append((time.process_time() - c0, time.perf_counter() - w0))
    return compile_s, rounds, compiled(states)


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog="python -m experiments.bench_jax_observe",
                           description=__doc__.split("\n")[0])
    parser.add_argument("--configs", nargs="+", default=list(CONFIGS), choices=list(CONFIGS),
                        help="rule configurations to time")
    parser.add_argument("--batch", type=ascii_int, default=4096,
                        help=f"game states observed at once (at most {MAX_BATCH:,})")
    parser.add_argument("--obs-version", type=ascii_int, default=4, choices=(2, 3, 4, 5),
                        help="observation version (3 to 5 hold the lookahead blocks)")
    parser.add_argument("--repeats", type=ascii_int, default=5,
                        help=f"timed rounds (figures are medians; at most {MAX_REPEATS})")
    parser.add_argument("--seat-to-play", action="store_true",
                        help="observe only the seat to play in each state (default: every seat)")
    args = parser.parse_args(argv)
    if not 1 <= args.batch <= MAX_BATCH or not 1 <= args.repeats <= MAX_REPEATS:
        parser.error(f"--batch must be 1..{MAX_BATCH:,} and --repeats 1..{MAX_REPEATS}")
    twice = sorted({c for c in args.configs if args.configs.count(c) > 1})
    if twice:  # it was timed twice, in two rows of one name (bench_jax refuses its repeats)
        parser.error(f"--configs {', '.join(twice)} given twice; list each once")
    return run_command(lambda: _run(args), errors=(ImportError,))


def _run(args) -> int:
    require("jax", "jax", "the JAX game")
    from dominoes_env.jax import make
    from dominoes_env.throughput import load_line

    print(load_line("start"), flush=True)
    print(f"{'config':<16}{'seats':>6}{'compile s':>11}{'CPU s':>9}{'wall s':>9}"
          f"{'obs/CPU-s':>12}")
    for name in args.configs:
        env = make(**CONFIGS[name], obs_version=args.obs_version)
        states = sample_states(env, args.batch)
        compile_s, rounds, _ = time_observe(env, states, args.obs_version, args.repeats,
                                            every_seat=not args.seat_to_play)
        cpu = statistics.median(r[0] for r in rounds)
        wall = statistics.median(r[1] for r in rounds)
        n = 1 if args.seat_to_play else env.num_players
        print(f"{name:<16}{n:>6}{compile_s:>11.1f}{cpu:>9.3f}{wall:>9.3f}"
              f"{args.batch * n / cpu:>12,.0f}", flush=True)
    who = "the seat to play" if args.seat_to_play else "every seat"
    print(f"batch {args.batch}, observation version {args.obs_version}, {who}; medians of "
          f"{args.repeats} rounds")
    print(load_line("end"))
    return 0


if __name__ == "__main__":
    end_program(main())
