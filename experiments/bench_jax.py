"""Benchmark the JAX game (``dominoes_env.jax``) next to the AEC env loop, in the same run.

Both play uniformly random legal moves and read the observation of the player to act on every
step. The AEC loop is :func:`dominoes_env.throughput.run_aec`. The JAX loop is one jitted
function: ``vmap`` over ``batch`` games of a ``scan`` over ``--steps`` steps of
``random_policy`` + a step that starts a new match the step one ends (so every step is a
decision), summing every observation so none is optimised away. Two such steps are timed:
``Env.step_autoreset``, and Pgx's documented pattern ``pgx.experimental.auto_reset(env.step,
env.init)`` (the same states, leaf for leaf, tested), which a user following Pgx's
documentation writes. A
step is one decision in one game. Time is this process's CPU time (``time.process_time``: all
threads, so XLA's own threads count; other load on a shared machine skews it less than wall
time), and the wall time is printed beside it (XLA spreads a large batch over the cores; the
AEC loop is one thread). Compile time is wall time of ``jit(...).lower().compile()`` for
that batch size (its CPU time beside it: on a loaded machine the wall time mostly waits for a
core). Each figure is the median over ``--repeats`` rounds; each ratio the median
over rounds of JAX / AEC from the same round.

    python -m experiments.bench_jax [--batches 1 256 4096] [--players 2] [--repeats 3]
        [--obs-version 2] [--reloaded]

``--obs-version`` is the observation both contenders read (default 2; 3 to 5 add the
lookahead blocks). ``--reloaded`` adds a row per step for the same executable serialized
and loaded back, as JAX's persistent compilation cache serves it, timed in the same rounds.

The targets: batch 4096 at least 20x the AEC loop's steps per CPU-second with both
steps; compile under 30 s.
"""

from __future__ import annotations

import contextlib
import statistics
import sys
import time

from dominoes_env.cli_support import (
    OneLineParser,
    ascii_int,
    check_fits_in_memory,
    end_program,
    positive_seconds,
    run_command,
)
from dominoes_env.optional import require

TARGET_RATIO = 20.0
TARGET_COMPILE_S = 30.0
#: the steps timed: name -> how the step is built from the env
LOOPS = ("step_autoreset", "pgx auto_reset")
#: the longest --seconds, the most --repeats and --steps (a time or a count beyond them never
#: ends in practice: nothing but Ctrl-C stopped 1e20 seconds)
MAX_SECONDS = 3600.0
MAX_REPEATS = 1000
MAX_STEPS = 100_000
#: copies of a batch of game states alive at once while it is stepped (the states, the new
#: states, the scan's carry and XLA's temporaries), for the memory check of --batches
STATE_COPIES = 4


def build_rollout(env, batch: int, steps: int, loop: str = LOOPS[0]):
    """A jitted ``(states, key) -> (states, checksum)`` playing ``steps`` steps in each game
    with the step ``loop`` (one of :data:`LOOPS`)."""
    import jax
    import jax.numpy as jnp

    from dominoes_env.jax import random_policy

    if loop == "step_autoreset":
        step = env.step_autoreset
    elif loop == "pgx auto_reset":
        from pgx.experimental import auto_reset

        step = auto_reset(env.step, env.init)
    else:
        raise ValueError(f"loop must be one of {LOOPS}, not {loop!r}")

    def one(state, key):
        def body(carry, k):
            state, acc = carry
            k_act, k_step = jax.random.split(k)
            action = random_policy(env, state, k_act)
            state = step(state, action, k_step)
            return (state, acc + jnp.sum(state.observation)), None

        (state, acc), _ = jax.lax.scan(body, (state, jnp.float32(0)),
                                       jax.random.split(key, steps))
        return state, acc

    def rollout(states, key):
        return jax.vmap(one)(states, jax.random.split(key, batch))

    return jax.jit(rollout)


@contextlib.contextmanager
def compilation_cache_off():
    """JAX's persistent compilation cache off inside the block (as it was after it)."""
    import jax
    from jax.experimental.compilation_cache import compilation_cache

    was = jax.config.jax_enable_compilation_cache
    jax.config.update("jax_enable_compilation_cache", False)
    compilation_cache.reset_cache()  # JAX decides once whether it uses the cache: ask again
    try:
        yield
    finally:
        jax.config.update("jax_enable_compilation_cache", was)
        compilation_cache.reset_cache()


def reloaded(compiled):
    """``compiled`` serialized and loaded back: the executable a run reading it from JAX's
    persistent compilation cache gets. ``compiled`` must not come from that cache (compile
    it under :func:`compilation_cache_off`): jax 0.10.2 cannot serialize again an executable
    it read from the cache ("NOT_FOUND: Function ... not found", or, with two CPU devices, an
    executable that computes other numbers)."""
    import jax
    from jax.experimental.serialize_executable import deserialize_and_load, serialize

    # on the first device, as compiled (by default it would be spread over every device)
    return deserialize_and_load(*serialize(compiled), execution_devices=jax.devices()[:1])


def bench_jax(env, batch: int, steps: int, seconds: float, seed: int = 0,
              loop: str = LOOPS[0], reload: bool = False):
    """``((compile wall s, compile CPU s), run)``; ``run()`` gives one round's ``(steps per
    CPU-s, steps per wall-s)`` with the step ``loop``; ``reload``: the compiled step
    serialized and loaded back first (:func:`reloaded`)."""
    import jax

    init = jax.jit(jax.vmap(env.init))
    states = init(jax.random.split(jax.random.PRNGKey(seed), batch))
    rollout = build_rollout(env, batch, steps, loop)
    t0, c0 = time.perf_counter(), time.process_time()
    lowered = rollout.lower(states, jax.random.PRNGKey(0))
    compiled = reloaded(lowered.compile()) if reload else lowered.compile()
    compile_s = (time.perf_counter() - t0, time.process_time() - c0)
    jax.block_until_ready(compiled(states, jax.random.PRNGKey(1)))  # warm up
    box = {"states": states, "i": 2}

    def run() -> tuple[float, float]:
        done = 0
        c0, w0 = time.process_time(), time.perf_counter()
        while True:
            box["states"], acc = compiled(box["states"], jax.random.PRNGKey(box["i"]))
            acc.block_until_ready()
            box["i"] += 1
            done += batch * steps
            if time.process_time() - c0 >= seconds:
                break
        return done / (time.process_time() - c0), done / (time.perf_counter() - w0)

    return compile_s, run


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog="python -m experiments.bench_jax",
                           description=__doc__.split("\n")[0])
    parser.add_argument("--batches", type=ascii_int, nargs="+", default=[1, 256, 4096],
                        help="batch sizes (games stepped at once) to time, each compiled apart "
                             "(as many as fit in this machine's memory)")
    parser.add_argument("--players", type=ascii_int, default=2, choices=(2, 3, 4),
                        help="seats at the table: 2, 3 or 4 (4: partnerships)")
    parser.add_argument("--obs-version", type=ascii_int, default=2, choices=(2, 3, 4, 5),
                        help="observation version read every step, by both contenders (3 to 5 "
                             "hold the lookahead blocks)")
    parser.add_argument("--steps", type=ascii_int, default=64,
                        help=f"steps per game per jitted call (at most {MAX_STEPS:,})")
    parser.add_argument("--seconds", type=positive_seconds, default=2.0,
                        help=f"CPU-s per contender/round (at most {MAX_SECONDS:g})")
    parser.add_argument("--repeats", type=ascii_int, default=3,
                        help=f"rounds (figures are medians; at most {MAX_REPEATS})")
    parser.add_argument("--reloaded", action="store_true",
                        help="also time each step serialized and loaded back, as JAX's "
                             "persistent compilation cache serves it (a row of its own, "
                             "timed in the same rounds)")
    args = parser.parse_args(argv)
    if min(args.batches) < 1 or args.steps < 1 or args.repeats < 1:
        parser.error("--batches, --steps and --repeats must be >= 1")
    twice = sorted({b for b in args.batches if args.batches.count(b) > 1})
    if twice:  # its rows are keyed by batch: a repeat ended in a zip() ValueError traceback
        parser.error(f"--batches {', '.join(map(str, twice))} given twice; list each once")
    if args.steps > MAX_STEPS or args.repeats > MAX_REPEATS or args.seconds > MAX_SECONDS:
        parser.error(f"--steps must be at most {MAX_STEPS:,}, --repeats at most {MAX_REPEATS} "
                     f"and --seconds at most {MAX_SECONDS:g}")
    def command() -> int:
        if not args.reloaded:
            return _run(args)
        with compilation_cache_off():  # every step compiled here, so that it can be reloaded
            return _run(args)

    return run_command(command, errors=(ImportError,))


def check_batches_fit(env, batches: list[int]) -> None:
    """:class:`CommandError` unless the largest batch of game states fits in this machine's
    memory (a state's size read from ``env.init``'s shapes, nothing computed)."""
    import jax

    shapes = jax.eval_shape(env.init, jax.random.PRNGKey(0))
    per_game = sum(x.size * x.dtype.itemsize for x in jax.tree.leaves(shapes))
    check_fits_in_memory(f"--batches {max(batches)}", max(batches), per_game * STATE_COPIES,
                         f"{per_game:,} bytes a game")


def _run(args) -> int:
    jax = require("jax", "jax", "the JAX game")
    import dominoes_env
    from dominoes_env.jax import make
    from dominoes_env.throughput import cpus_line, load_line, run_aec

    print(load_line("start"), flush=True)

    n = args.players
    env = make(num_players=n, obs_version=args.obs_version)
    check_batches_fit(env, args.batches)
    device = jax.devices()[0]
    loops = [*LOOPS, *(f"{loop} (reloaded)" for loop in LOOPS if args.reloaded)]
    runs = [(loop, b) for loop in loops for b in args.batches]
    runners, compile_s = {}, {}
    for loop, b in runs:
        print(f"compiling {loop} batch {b} ...", file=sys.stderr, flush=True)
        step, reload, _ = loop.partition(" (reloaded)")
        compile_s[loop, b], runners[loop, b] = bench_jax(env, b, args.steps, args.seconds,
                                                         loop=step, reload=bool(reload))
    aec, jx = [], {run: [] for run in runs}
    for r in range(args.repeats):
        print(f"round {r + 1}/{args.repeats} ...", file=sys.stderr, flush=True)
        aec.append(run_aec(lambda: dominoes_env.env(num_players=n, obs_version=args.obs_version),
                           args.seconds))
        for run in runs:
            jx[run].append(runners[run]())
    aec_med = statistics.median(aec)
    print(f"{n} players, random legal moves, observation version {args.obs_version} every step; "
          f"{args.repeats} rounds of "
          f"{args.seconds:g} CPU-s; JAX on {device.platform} ({device.device_kind}), "
          f"jax {jax.__version__}, {cpus_line()}; medians")
    print(f"{'loop':<44}{'compile wall/CPU s':>20}{'steps/CPU-s':>14}{'steps/wall-s':>14}"
          f"{'vs AEC':>9}")
    print(f"{'AEC env (PettingZoo)':<44}{'-':>20}{aec_med:>14,.0f}{'-':>14}{'1.0x':>9}")
    ok = True
    big = max(args.batches)
    for loop, b in runs:
        cpu = statistics.median(x[0] for x in jx[loop, b])
        wall = statistics.median(x[1] for x in jx[loop, b])
        ratio = statistics.median(x[0] / a for x, a in zip(jx[loop, b], aec, strict=True))
        wall_c, cpu_c = compile_s[loop, b]
        if b == big and loop in LOOPS:
            ok = ok and ratio >= TARGET_RATIO and wall_c < TARGET_COMPILE_S
        print(f"{f'JAX {loop}, batch {b}':<44}{f'{wall_c:.1f} / {cpu_c:.1f}':>20}{cpu:>14,.0f}"
              f"{wall:>14,.0f}{ratio:>8.1f}x")
    print(f"target: batch {big} >= {TARGET_RATIO:g}x the AEC loop per CPU-second with both "
          f"steps and compile < {TARGET_COMPILE_S:g} s: {'met' if ok else 'NOT met'}")
    print(load_line("end"))
    return 0


if __name__ == "__main__":
    end_program(main())  # at once after a signal: XLA's threads may still run
