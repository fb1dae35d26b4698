"""Decision speed of agents: time ``act`` on the same positions for every agent.

Positions are the views of the seat to play in matches between greedy players (real game
states, every stage of a hand). Every agent decides every position, position by position, the
agents' order reversed from one position to the next, so all of them run under the same
conditions (the speed of a shared machine drifts by 2x within minutes; timing one agent after
the other measured that drift). Prints, per agent spec, decisions per second, the mean, median,
95th percentile and largest wall time per decision, the ratio of its total time to the
first spec's, and the mean processor time per decision (``cpu ms``: what a decision costs
when other work shares the machine's cores and the wall times stretch), on one core of this
machine, between the machine's load average at the start and at the end. Before the timing,
an agent of each spec that is not timed decides one position with a choice: what a process
builds once (``guided``'s match equity table, 0.7-1 s; imports) is not charged to whichever
agent happens to decide first::

    python -m experiments.bench_agents random greedy search --players 2 --positions 400
"""

from __future__ import annotations

import statistics
import time

from agents import positions as bench_positions
from agents.arena import AgentError
from agents.search import distinct_moves
from dominoes_env import cli_support
from dominoes_env.deprecation import moved_names
from dominoes_env.throughput import load_line

#: positions(), this program's function in release 0.1.0, moved to agents.positions; it stays
#: importable from here for one version, with a DeprecationWarning
__getattr__ = moved_names(__name__, {"positions": "agents.positions"})


#: memory one position takes while the benchmark runs (a seat's view: about 5.7 KB measured with
#: four players, rounded up)
BYTES_PER_POSITION = 8192


def check_positions_fit(parser, positions: int) -> None:
    """``parser.error`` unless ``positions`` positions fit in this machine's memory (they are
    all held at once: 10**20 of them filled it before failing)."""
    try:
        cli_support.check_fits_in_memory(f"--positions {positions}", positions, BYTES_PER_POSITION)
    except ValueError as err:
        parser.error(str(err))


def bench(specs: list[str], views: list, seed: int = 0) -> list[dict]:
    """Time every spec's decisions on ``views``, interleaved (see the module docstring); returns
    the figures in milliseconds per spec. Each seat has its own agent per spec (seeded
    ``seed + seat``), as in a match, so an agent that remembers the hand so far (``guided``)
    sees its seat's views in order. Each spec first decides the first position with a choice
    untimed, with an agent of its own (:func:`warm_up`)."""
    warm_up(specs, views, seed)
    agents = [bench_positions.SeatAgents(spec, seed) for spec in specs]
    times: list[list[float]] = [[] for _ in specs]
    cpu = [0.0] * len(specs)
    order = list(range(len(specs)))
    for view in views:
        for i in order:
            seats = agents[i]
            agent = seats(view)
            start, start_cpu = time.perf_counter(), time.process_time()
            try:  # only act() is timed; its answer is checked after
                answer = agent.act(view)
            except (Exception, SystemExit) as err:
                raise seats.failed(view, err) from None
            times[i].append(time.perf_counter() - start)
            cpu[i] += time.process_time() - start_cpu
            seats.check(view, answer)  # an illegal or non-code answer is no decision to time
        order.reverse()
    rows = []
    for spec, ts, spent in zip(specs, times, cpu, strict=True):
        total = sum(ts)
        ts = sorted(ts)
        rows.append({"spec": spec, "decisions": len(ts), "per_s": len(ts) / total,
                     "mean_ms": 1000 * total / len(ts), "median_ms": 1000 * statistics.median(ts),
                     "p95_ms": 1000 * ts[int(0.95 * (len(ts) - 1))], "max_ms": 1000 * ts[-1],
                     "cpu_ms": 1000 * spent / len(ts)})
    for row in rows:
        row["ratio"] = row["mean_ms"] / rows[0]["mean_ms"]
    return rows


def warm_up(specs: list[str], views: list, seed: int = 0) -> None:
    """Let an agent of each spec, not the timed one, decide the first of ``views`` with more
    than one distinct move (else the first), so that what a process builds once for an agent
    (tables, caches, lazy imports) is built before any decision is timed."""
    view = next((v for v in views if len(distinct_moves(v)) > 1), views[0])
    for spec in specs:
        bench_positions.SeatAgents(spec, seed).decide(view)


def main(argv: list[str] | None = None) -> list[dict]:
    """The command: returns the rows it printed; Ctrl-C, SIGTERM or a closed output end it
    with one line and its exit status (``SystemExit``)."""
    parser = cli_support.OneLineParser(prog="python -m experiments.bench_agents",
                                       description=__doc__.split("\n\n")[0])
    parser.add_argument("specs", nargs="+", help="agent specs (random, greedy, search:sims=100)")
    cli_support.add_position_options(parser, 400, 0, "seed of the positions and the agents")
    args = parser.parse_args(argv)
    bench_positions.check_distinct(parser, args.specs)
    check_positions_fit(parser, args.positions)
    bench_positions.check_table_args(parser, args, args.specs)  # before the first line
    rows: list[dict] = []
    status = cli_support.run_command(lambda: _run(parser, args, rows), errors=(AgentError,))
    if status:
        raise SystemExit(status)
    return rows


def _run(parser, args, rows: list[dict]) -> int:
    print(load_line("start"), flush=True)
    views = bench_positions.table_positions(parser, args, args.specs)
    print(f"{len(views)} positions, {args.players} players, agents interleaved", flush=True)
    rows += bench(args.specs, views, args.seed)
    print(f"{'agent':28s} {'decisions/s':>12s} {'mean ms':>9s} {'median':>9s} {'p95':>9s} "
          f"{'max':>9s} {'x first':>8s} {'cpu ms':>8s}")
    for r in rows:
        print(f"{r['spec']:28s} {r['per_s']:12.0f} {r['mean_ms']:9.4f} {r['median_ms']:9.4f} "
              f"{r['p95_ms']:9.4f} {r['max_ms']:9.4f} {r['ratio']:8.2f} {r['cpu_ms']:8.3f}")
    print(load_line("end"))
    return 0


if __name__ == "__main__":
    main()
