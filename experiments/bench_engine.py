"""Benchmark the game core: random full hands, plays/s and hands/s, next to OpenSpiel.

Plays random legal moves through the core (``HandState.legal_actions`` + ``apply_unchecked``,
the path search agents use, and ``play``, the checked path) and, in the same run, OpenSpiel's
``python_block_dominoes`` (random legal actions, no observations, chance nodes sampled). Each
figure is the median of ``--repeats`` runs of ``--seconds`` of this process's CPU time (the
machines are shared: CPU time is steadier than wall time); ratios compare figures from this same
run. The machine's load average is printed at the start and at the end.

    python -m experiments.bench_engine [--seconds 1.0] [--repeats 5]
"""

from __future__ import annotations

import errno
import random
import statistics
import time

from dominoes_env.cli_support import (
    OneLineParser,
    ascii_int,
    end_program,
    positive_seconds,
    run_command,
)
from dominoes_env.core import HandState, RuleConfig
from dominoes_env.optional import require
from dominoes_env.throughput import load_line

#: the longest --seconds of one run and the most --repeats (a time or a count beyond them never
#: ends in practice; nothing but Ctrl-C stopped 1e20 seconds)
MAX_SECONDS = 3600.0
MAX_REPEATS = 1000


def run_core(rules: RuleConfig, seconds: float, checked: bool = False) -> tuple[float, float]:
    """(plays/s, hands/s) playing random full hands for about ``seconds``."""
    rng = random.Random(0)
    plays = hands = 0
    n = rules.num_players
    start = time.process_time()
    deadline = start + seconds
    while True:
        hand = HandState.deal(rules, rng, hands % n)
        step = hand.play if checked else hand.apply_unchecked
        while hand.turn >= 0:
            legal = hand.legal_actions()
            step(legal[rng.randrange(len(legal))])
            plays += 1
        hands += 1
        if hands % 64 == 0 and time.process_time() > deadline:
            break
    elapsed = time.process_time() - start
    return plays / elapsed, hands / elapsed


def run_openspiel(game_name: str, seconds: float) -> tuple[float, float] | None:
    """(decision steps/s, hands/s) for an OpenSpiel Python game, or None if not installed."""
    try:
        import pyspiel
        from open_spiel.python.games import block_dominoes, team_dominoes  # noqa: F401 (registers)
    except ImportError:
        return None
    game = pyspiel.load_game(game_name)
    rng = random.Random(0)
    steps = hands = 0
    start = time.process_time()
    deadline = start + seconds
    while time.process_time() < deadline:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[rng.randrange(len(outcomes))][0])
            else:
                legal = state.legal_actions()
                state.apply_action(legal[rng.randrange(len(legal))])
                steps += 1
        hands += 1
    elapsed = time.process_time() - start
    return steps / elapsed, hands / elapsed


def median_of(fn, repeats: int):
    runs = [fn() for _ in range(repeats)]
    return tuple(statistics.median(r[i] for r in runs) for i in range(len(runs[0])))


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog="python -m experiments.bench_engine",
                           description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=positive_seconds, default=1.0,
                        help=f"CPU seconds of one run (at most {MAX_SECONDS:g})")
    parser.add_argument("--repeats", type=ascii_int, default=5,
                        help=f"runs per figure (median; at most {MAX_REPEATS})")
    args = parser.parse_args(argv)
    if not 1 <= args.repeats <= MAX_REPEATS:
        parser.error(f"--repeats must be 1..{MAX_REPEATS}, not {args.repeats}")
    if args.seconds > MAX_SECONDS:
        parser.error(f"--seconds must be at most {MAX_SECONDS:g}, not {args.seconds!r}")
    return run_command(lambda: _run(args), errors=(ImportError,))


def _run(args) -> int:
    require("rich", "bench", "the benchmark's table")
    from rich.console import Console
    from rich.table import Table

    print(load_line("start"), flush=True)
    rows = []
    for label, rules, checked in [
        ("core 2p apply_unchecked", RuleConfig(), False),
        ("core 2p play (checked)", RuleConfig(), True),
        ("core 4p apply_unchecked", RuleConfig(num_players=4), False),
        ("core 4p play (checked)", RuleConfig(num_players=4), True),
    ]:
        rows.append((label, *median_of(lambda r=rules, c=checked: run_core(r, args.seconds, c),
                                       args.repeats)))
    spiel = {}
    for name in ("python_block_dominoes", "python_team_dominoes"):
        result = run_openspiel(name, args.seconds) and median_of(
            lambda n=name: run_openspiel(n, args.seconds), args.repeats)
        spiel[name] = result
    title = (f"Game core, random full hands (median of {args.repeats} x {args.seconds:g} CPU s, "
             "one core)")
    table = Table(title=title)
    for col in ("engine", "plays/s", "hands/s", "x OpenSpiel"):
        table.add_column(col, justify="right" if col != "engine" else "left")
    peers = {"2p": spiel["python_block_dominoes"], "4p": spiel["python_team_dominoes"]}
    for label, plays, hands in rows:
        peer = peers["4p" if "4p" in label else "2p"]
        ratio = f"{plays / peer[0]:.1f}x" if peer else "n/a"
        table.add_row(label, f"{plays:,.0f}", f"{hands:,.0f}", ratio)
    for name, result in spiel.items():
        if result is None:
            table.add_row(f"OpenSpiel {name}", "not installed", "", "")
        else:
            table.add_row(f"OpenSpiel {name}", f"{result[0]:,.0f}", f"{result[1]:,.0f}", "1.0x")
    class PipeAwareConsole(Console):
        def on_broken_pipe(self) -> None:  # rich's own exits with status 1, saying nothing
            raise BrokenPipeError(errno.EPIPE, "Broken pipe")

    PipeAwareConsole().print(table)
    print(load_line("end"))
    return 0


if __name__ == "__main__":
    end_program(main())
