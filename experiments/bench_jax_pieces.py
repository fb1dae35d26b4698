"""Time the pieces of the JAX game's batch step one by one: where a step's CPU time goes.

Each piece is ``jit(vmap(...))`` over ``--batch`` games in the middle of play (new matches
stepped 0 to 15 random legal moves each), the same games, actions and keys at every call:

- ``random actions``: ``bench_jax``'s random legal action per game (a key split, then
  ``random_policy``);
- ``step``: ``Env.step`` (its key deals the next hand of a match);
- ``step_autoreset``: ``Env.step_autoreset``;
- ``pgx auto_reset``: ``pgx.experimental.auto_reset(env.step, env.init)``, Pgx's documented
  pattern;
- ``pgx auto_reset, deals given``: the same pattern with ``step_deal`` and ``init_deal``
  playing deals drawn before the timing (two per game, a step's and an ``init``'s, drawn as
  the pattern draws them: :func:`pgx_deals`), so that only their drawing is left out (given
  the deals of the same keys it computes what the pattern computes, tested): the difference to
  the row above is what drawing them costs;
- ``init``: ``Env.init``;
- ``the deal``: ``Game.random_deal``, what a step reads of it (each tile's place and the
  leader: the hash of the key and the rank of its words);
- ``legal mask``: ``Game.legal_mask``;
- ``observation``: ``Env.observe`` of the seat to play.

The actions are ``bench_jax``'s random ones, drawn once from keys of their own. A figure is
the CPU time of this process per call (``time.process_time``: XLA's threads included) in
milliseconds, the median over ``--repeats`` rounds of ``--calls`` calls of each piece (the
pieces interleaved in each round), with its share of the Pgx pattern's time. The pieces
overlap (a step draws a deal and computes a legal mask and an observation), and XLA fuses a
piece with its neighbours inside a step, so the shares are a guide, not a sum.

    python -m experiments.bench_jax_pieces [--batch 4096] [--players 2] [--obs-version 2]
        [--repeats 5] [--calls 20]
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable

from dominoes_env.cli_support import (
    OneLineParser,
    ascii_int,
    check_fits_in_memory,
    end_program,
    run_command,
)
from dominoes_env.optional import require

MAX_BATCH = 65_536
MAX_REPEATS = 1000
MAX_CALLS = 10_000
#: the random legal moves each game is stepped before the timing: 0 to this many less one
MAX_MOVES = 16
#: copies of a batch of game states alive at once (the states, a piece's new states, its
#: temporaries, the deals), for the memory check of --batch
STATE_COPIES = 6
#: the row every share is of
REFERENCE = "pgx auto_reset"


def random_actions(env):
    """``(state, key) -> action``: ``bench_jax``'s random legal action for one game."""
    import jax

    from dominoes_env.jax import random_policy

    def act(state, key):
        k_act, _ = jax.random.split(key)
        return random_policy(env, state, k_act)

    return act


def sample_states(env, batch: int, seed: int = 0):
    """``batch`` states of ``env``: new matches each stepped a random number (0 to
    ``MAX_MOVES - 1``) of random legal moves with ``Env.step_autoreset``."""
    import jax
    import jax.numpy as jnp

    act = random_actions(env)

    def one(key):
        k_init, k_moves, k_play = jax.random.split(key, 3)
        moves = jax.random.randint(k_moves, (), 0, MAX_MOVES)

        def body(state, x):
            i, k = x
            new = env.step_autoreset(state, act(state, k), jax.random.fold_in(k, 1))
            return jax.tree.map(lambda a, b: jnp.where(i < moves, a, b), new, state), None

        steps = (jnp.arange(MAX_MOVES), jax.random.split(k_play, MAX_MOVES))
        return jax.lax.scan(body, env.init(k_init), steps)[0]

    return jax.jit(jax.vmap(one))(jax.random.split(jax.random.PRNGKey(seed), batch))


def pgx_deals(env, key):
    """The two deals ``pgx.experimental.auto_reset(env.step, env.init)`` draws from one
    game's ``key``: the step's (the next hand of a match) and ``init``'s."""
    import jax

    k_step, k_init = jax.random.split(key)  # as the wrapper splits its key
    return env.game.random_deal(k_step), env.game.random_deal(k_init)


def pieces(env) -> dict[str, Callable]:
    """Each piece as a function of one game's ``(state, action, key, deals)`` (``deals``:
    :func:`pgx_deals` of some key), in the order of the rows."""
    from pgx.experimental import auto_reset

    game = env.game
    act = random_actions(env)

    def pgx_given(state, action, key, deals):
        step_deal, init_deal = deals
        return auto_reset(lambda s, a, k: env.step_deal(s, a, step_deal),
                          lambda k: env.init_deal(init_deal))(state, action, key)

    return {
        "random actions": lambda s, a, k, d: act(s, k),
        "step": lambda s, a, k, d: env.step(s, a, k),
        "step_autoreset": lambda s, a, k, d: env.step_autoreset(s, a, k),
        REFERENCE: lambda s, a, k, d: auto_reset(env.step, env.init)(s, a, k),
        "pgx auto_reset, deals given": pgx_given,
        "init": lambda s, a, k, d: env.init(k),
        "the deal": lambda s, a, k, d: _places(game.random_deal(k)),
        "legal mask": lambda s, a, k, d: game.legal_mask(s.game_state),
        "observation": lambda s, a, k, d: env.observe(s),
    }


def _places(deal):
    """What a step reads of a deal: each tile's place and the leader (not the order, which
    XLA drops there)."""
    return deal.position, deal.leader


def time_pieces(env, batch: int, repeats: int, calls: int, seed: int = 0,
                progress=None) -> dict[str, float]:
    """Each piece's median CPU milliseconds per call at ``batch`` games (see the module
    docstring); ``progress(text)`` is told what is being done."""
    import jax

    say = progress or (lambda text: None)
    states = sample_states(env, batch, seed)
    k_act, k_step, k_deals = jax.random.split(jax.random.PRNGKey(seed + 1), 3)
    actions = jax.jit(jax.vmap(random_actions(env)))(states, jax.random.split(k_act, batch))
    keys = jax.random.split(k_step, batch)
    deals = jax.jit(jax.vmap(lambda k: pgx_deals(env, k)))(jax.random.split(k_deals, batch))
    args = (states, actions, keys, deals)
    compiled = {}
    for name, piece in pieces(env).items():
        say(f"compiling {name} ...")
        compiled[name] = jax.jit(jax.vmap(piece)).lower(*args).compile()
        jax.block_until_ready(compiled[name](*args))  # warm up
    rounds: dict[str, list[float]] = {name: [] for name in compiled}
    for r in range(repeats):
        say(f"round {r + 1}/{repeats} ...")
        for name, f in compiled.items():
            start = time.process_time()
            for _ in range(calls):
                out = f(*args)
            jax.block_until_ready(out)
            rounds[name].append(1000 * (time.process_time() - start) / calls)
    return {name: statistics.median(ms) for name, ms in rounds.items()}


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog="python -m experiments.bench_jax_pieces",
                           description=__doc__.split("\n")[0])
    parser.add_argument("--batch", type=ascii_int, default=4096,
                        help=f"games stepped at once (at most {MAX_BATCH:,})")
    parser.add_argument("--players", type=ascii_int, default=2, choices=(2, 3, 4),
                        help="seats at the table: 2, 3 or 4 (4: partnerships)")
    parser.add_argument("--obs-version", type=ascii_int, default=2, choices=(2, 3, 4, 5),
                        help="observation version the steps compute (3 to 5 hold the "
                             "lookahead blocks)")
    parser.add_argument("--repeats", type=ascii_int, default=5,
                        help=f"timed rounds (figures are medians; at most {MAX_REPEATS})")
    parser.add_argument("--calls", type=ascii_int, default=20,
                        help=f"calls of each piece per round (at most {MAX_CALLS:,})")
    args = parser.parse_args(argv)
    if not 1 <= args.batch <= MAX_BATCH:
        parser.error(f"--batch must be 1..{MAX_BATCH:,}, not {args.batch}")
    if not 1 <= args.repeats <= MAX_REPEATS:
        parser.error(f"--repeats must be 1..{MAX_REPEATS}, not {args.repeats}")
    if not 1 <= args.calls <= MAX_CALLS:
        parser.error(f"--calls must be 1..{MAX_CALLS:,}, not {args.calls}")
    return run_command(lambda: _run(args), errors=(ImportError,))


def _run(args) -> int:
    jax = require("jax", "jax", "the JAX game")
    from dominoes_env.jax import make
    from dominoes_env.throughput import cpus_line, load_line

    print(load_line("start"), flush=True)
    env = make(num_players=args.players, obs_version=args.obs_version)
    shapes = jax.eval_shape(env.init, jax.random.PRNGKey(0))
    per_game = sum(x.size * x.dtype.itemsize for x in jax.tree.leaves(shapes))
    check_fits_in_memory(f"--batch {args.batch}", args.batch, per_game * STATE_COPIES,
                         f"{per_game:,} bytes a game")
    ms = time_pieces(env, args.batch, args.repeats, args.calls,
                     progress=lambda text: print(text, file=sys.stderr, flush=True))
    device = jax.devices()[0]
    print(f"{args.players} players, observation version {args.obs_version}, batch "
          f"{args.batch:,}; CPU ms per call, medians of {args.repeats} rounds of {args.calls} "
          f"calls; JAX on {device.platform}, jax {jax.__version__}, {cpus_line()}")
    print(f"{'piece':<32}{'CPU ms':>10}{'of ' + REFERENCE:>22}")
    for name, value in ms.items():
        print(f"{name:<32}{value:>10.3f}{value / ms[REFERENCE]:>22.0%}")
    print(load_line("end"))
    return 0


if __name__ == "__main__":
    end_program(main())
