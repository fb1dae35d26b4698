"""Decision speed of agents: time ``act`` on the same positions for every agent.

Positions are the views of the seat to play in matches between greedy players (real game
states, every stage of a hand). Every agent decides every position, position by position, the
agents' order reversed from one position to the next, so all of them run under the same
conditions (the speed of a shared machine drifts by 2x within minutes; timing one agent after
the other measured that drift). Prints, per agent spec, decisions per second, the mean, median,
95th percentile and largest wall time per decision, and the ratio of its total time to the
first spec's, on one core of this machine::

    python -m experiments.bench_agents random greedy search --players 2 --positions 400
"""

from __future__ import annotations

import statistics
import time

from agents import make_agent
from agents.greedy import GreedyAgent
from agents.specs import check_spec
from dominoes_env.cli_support import OneLineParser
from dominoes_env.core import RuleConfig
from dominoes_env.driver import derive_seed, play_match_with


def positions(rules: RuleConfig, count: int, seed: int = 0) -> list:
    """``count`` views of the seat to play from greedy-vs-greedy matches, played by the shared
    match driver (match ``g`` is seeded ``derive_seed(seed, "positions", g)``), in the order
    they were played."""
    out, game = [], 0
    while len(out) < count:
        players = [GreedyAgent() for _ in range(rules.num_players)]
        play_match_with(players, rules, derive_seed(seed, "positions", game),
                        on_decision=lambda seat, view, code: out.append(view))
        game += 1
    return out[:count]


class SeatAgents:
    """One agent of ``spec`` per seat, seeded ``seed + seat`` and built at that seat's first
    view, as in a match: an agent that remembers the hand so far (``guided``) sees its seat's
    views in order."""

    def __init__(self, spec: str, seed: int):
        self.spec, self.seed = spec, seed
        self.agents: dict = {}

    def __call__(self, view):
        agent = self.agents.get(view.seat)
        if agent is None:
            agent = self.agents[view.seat] = make_agent(self.spec, seed=self.seed + view.seat)
        return agent


def add_position_options(parser, positions: int, seed: int, seed_help: str) -> None:
    """The flags that choose the positions (``--players``, ``--positions``, ``--seed``), shared
    by the commands that decide positions: :func:`table_positions` reads them."""
    parser.add_argument("--players", type=int, choices=(2, 3, 4), default=2,
                        help="seats at the table of the positions (2)")
    parser.add_argument("--positions", type=int, default=positions,
                        help=f"positions, drawn from greedy-vs-greedy matches ({positions})")
    parser.add_argument("--seed", type=int, default=seed, help=f"{seed_help} ({seed})")


def table_positions(parser, args, specs: list[str]) -> list:
    """The positions :func:`add_position_options`'s flags ask for, once every spec is known to
    play that table; a bad count or spec is ``parser.error`` (one line, exit status 2)."""
    if args.positions < 1:
        parser.error(f"--positions must be >= 1, not {args.positions}")
    rules = RuleConfig(num_players=args.players)
    for spec in specs:  # every spec can play this table, before any work
        try:
            check_spec(spec, rules)
        except ValueError as err:
            parser.error(str(err))
    return positions(rules, args.positions, args.seed)


def bench(specs: list[str], views: list, seed: int = 0) -> list[dict]:
    """Time every spec's decisions on ``views``, interleaved (see the module docstring); returns
    the figures in milliseconds per spec. Each seat has its own agent per spec (seeded
    ``seed + seat``), as in a match, so an agent that remembers the hand so far (``guided``)
    sees its seat's views in order."""
    agents = [SeatAgents(spec, seed) for spec in specs]
    times: list[list[float]] = [[] for _ in specs]
    order = list(range(len(specs)))
    for view in views:
        for i in order:
            agent = agents[i](view)
            start = time.perf_counter()
            agent.act(view)
            times[i].append(time.perf_counter() - start)
        order.reverse()
    rows = []
    for spec, ts in zip(specs, times, strict=True):
        total = sum(ts)
        ts = sorted(ts)
        rows.append({"spec": spec, "decisions": len(ts), "per_s": len(ts) / total,
                     "mean_ms": 1000 * total / len(ts), "median_ms": 1000 * statistics.median(ts),
                     "p95_ms": 1000 * ts[int(0.95 * (len(ts) - 1))], "max_ms": 1000 * ts[-1]})
    for row in rows:
        row["ratio"] = row["mean_ms"] / rows[0]["mean_ms"]
    return rows


def main(argv: list[str] | None = None) -> list[dict]:
    parser = OneLineParser(prog="python -m experiments.bench_agents",
                           description=__doc__.split("\n\n")[0])
    parser.add_argument("specs", nargs="+", help="agent specs (random, greedy, search:sims=100)")
    add_position_options(parser, 400, 0, "seed of the positions and the agents")
    args = parser.parse_args(argv)
    views = table_positions(parser, args, args.specs)
    print(f"{len(views)} positions, {args.players} players, agents interleaved")
    rows = bench(args.specs, views, args.seed)
    print(f"{'agent':28s} {'decisions/s':>12s} {'mean ms':>9s} {'median':>9s} {'p95':>9s} "
          f"{'max':>9s} {'x first':>8s}")
    for r in rows:
        print(f"{r['spec']:28s} {r['per_s']:12.0f} {r['mean_ms']:9.4f} {r['median_ms']:9.4f} "
              f"{r['p95_ms']:9.4f} {r['max_ms']:9.4f} {r['ratio']:8.2f}")
    return rows


if __name__ == "__main__":
    main()
