"""Benchmark the PettingZoo AEC environment next to PettingZoo's connect_four_v3 and OpenSpiel.

Every contender runs the same loop for about ``--seconds`` (ours and Connect Four's:
:func:`dominoes_env.throughput.run_aec`): read the observation of the agent to act (for us and
Connect Four ``env.last()``; for OpenSpiel ``state.observation_tensor()``), pick a uniformly
random legal action from the mask / legal-action list, step. A step is one
decision; our forced draws and passes happen inside ``step``, OpenSpiel's chance nodes (the
deal) are applied but not counted, resets are included in the time. Time is this process's
CPU time (``time.process_time``), so other load on a shared machine skews the figures less
than wall-clock time would (on an idle machine the two agree). Contenders run round-robin for
``--repeats`` rounds; each steps/s figure is the median over rounds, and each ratio is the
median over rounds of the two contenders' figures from the same round. The machine's load
average is printed at the start and at the end.

    python -m experiments.bench_env [--seconds 0.5] [--repeats 9]

The target: at least 5x OpenSpiel's ``python_block_dominoes`` (2 players) and
``python_team_dominoes`` (4 players) with ``observation_tensor``.
"""

from __future__ import annotations

import random
import statistics
import sys
import warnings
from collections.abc import Callable

from dominoes_env import throughput
from dominoes_env.cli_support import OneLineParser, ascii_int, positive_seconds, run_command
from dominoes_env.deprecation import moved_names

TARGET_RATIO = 5.0
#: the longest --seconds of one run and the most --repeats (a time or a count beyond them never
#: ends in practice; nothing but Ctrl-C stopped 1e20 seconds)
MAX_SECONDS = 3600.0
MAX_REPEATS = 1000


#: run_aec moved to dominoes_env.throughput (bench_jax times the same loop); it stays importable
#: from here for one version, with a DeprecationWarning
__getattr__ = moved_names(__name__, {"run_aec": "dominoes_env.throughput"})


def run_openspiel(game_name: str, seconds: float, seed: int = 0) -> float:
    """Decision steps/s of an OpenSpiel game with ``observation_tensor`` read every step."""
    import pyspiel

    game = pyspiel.load_game(game_name)
    rng = random.Random(seed)
    clock = throughput.clock
    steps = 0
    start = clock()
    deadline = start + seconds
    while clock() < deadline:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[rng.randrange(len(outcomes))][0])
                continue
            state.observation_tensor(state.current_player())
            legal = state.legal_actions()
            state.apply_action(legal[rng.randrange(len(legal))])
            steps += 1
    return steps / (clock() - start)


def contenders(seconds: float) -> tuple[dict[str, Callable[[], float]], list[str]]:
    """name -> zero-argument runner; plus notes on what could not be measured."""
    import dominoes_env

    run_aec = throughput.run_aec
    runs: dict[str, Callable[[], float]] = {
        "straight_dominoes 2p": lambda: run_aec(lambda: dominoes_env.env(num_players=2), seconds),
        "straight_dominoes 4p": lambda: run_aec(lambda: dominoes_env.env(num_players=4), seconds),
    }
    notes = []
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from pettingzoo.classic.connect_four.connect_four import env as connect_four
        runs["connect_four_v3"] = lambda: run_aec(connect_four, seconds)
    except ImportError as err:  # connect_four needs pygame (the bench extra)
        notes.append(f"connect_four_v3 not measured: {err}")
    try:
        import open_spiel.python.games  # noqa: F401 (registers the python games)
        import pyspiel  # noqa: F401

        for game in ("python_block_dominoes", "python_team_dominoes"):
            runs[game] = lambda game=game: run_openspiel(game, seconds)
    except ImportError as err:
        notes.append(f"OpenSpiel not measured (pip install open_spiel): {err}")
    return runs, notes


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog="python -m experiments.bench_env",
                           description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=positive_seconds, default=0.5,
                        help=f"CPU-s of one run (at most {MAX_SECONDS:g})")
    parser.add_argument("--repeats", type=ascii_int, default=9,
                        help=f"rounds (figures are medians; at most {MAX_REPEATS})")
    args = parser.parse_args(argv)
    if not 1 <= args.repeats <= MAX_REPEATS:
        parser.error(f"--repeats must be 1..{MAX_REPEATS}, not {args.repeats}")
    if args.seconds > MAX_SECONDS:
        parser.error(f"--seconds must be at most {MAX_SECONDS:g}, not {args.seconds!r}")
    return run_command(lambda: _run(args))


def _run(args) -> int:
    print(throughput.load_line("start"), flush=True)
    runs, notes = contenders(args.seconds)
    results: dict[str, list[float]] = {name: [] for name in runs}
    for r in range(args.repeats):
        print(f"round {r + 1}/{args.repeats} ...", file=sys.stderr, flush=True)
        for name, run in runs.items():
            results[name].append(run())
    median = {name: statistics.median(v) for name, v in results.items()}

    def ratio(a: str, b: str) -> float:
        """Median over rounds of a/b, each from the same round (load drift cancels)."""
        return statistics.median(x / y for x, y in zip(results[a], results[b], strict=True))

    openspiel = {"straight_dominoes 2p": "python_block_dominoes",
                 "straight_dominoes 4p": "python_team_dominoes"}
    print(f"AEC loop, random legal actions, observation every step; {args.repeats} rounds of "
          f"{args.seconds:g} CPU-s per contender; medians (range min-max)")
    print(f"{'env':<24}{'steps/s':>10}{'range':>18}{'vs connect_four_v3':>20}"
          f"{'vs OpenSpiel':>14}  OpenSpiel game")
    ok = True
    for name, value in median.items():
        spread = f"{min(results[name]):,.0f}-{max(results[name]):,.0f}"
        vs_c4 = f"{ratio(name, 'connect_four_v3'):.1f}x" if "connect_four_v3" in median else "-"
        other = openspiel.get(name)
        if other and other in median:
            r = ratio(name, other)
            ok &= r >= TARGET_RATIO
            vs_os, game = f"{r:.1f}x", other
        else:
            vs_os, game = "-", ""
        print(f"{name:<24}{value:>10,.0f}{spread:>18}{vs_c4:>20}{vs_os:>14}  {game}")
    for note in notes:
        print(note)
    if all(g in median for g in openspiel.values()):
        verdict = "met" if ok else "NOT met"
        print(f"target >= {TARGET_RATIO:g}x OpenSpiel on both: {verdict}")
    print(throughput.load_line("end"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
