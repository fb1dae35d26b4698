"""Decision speed of agents: time ``act`` on the same positions for every agent.

Positions are the views of the seat to play in matches between greedy players (real game
states, every stage of a hand). Prints, per agent spec, decisions per second and the mean,
median, 95th percentile and largest time per decision, on one core of this machine::

    python -m experiments.bench_agents random greedy search --players 2 --positions 400
"""

from __future__ import annotations

import statistics
import time

from agents import make_agent
from agents.greedy import GreedyAgent
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


def bench(spec: str, views: list, seed: int = 0) -> dict:
    """Time ``spec``'s decisions on ``views``; returns the figures in milliseconds. Each seat has
    its own agent (seeded ``seed + seat``), as in a match, so an agent that remembers the hand
    so far (``guided``) sees its seat's views in order."""
    agents: dict = {}
    times = []
    for view in views:
        agent = agents.get(view.seat)
        if agent is None:
            agent = agents[view.seat] = make_agent(spec, seed=seed + view.seat)
        start = time.perf_counter()
        agent.act(view)
        times.append(time.perf_counter() - start)
    times.sort()
    total = sum(times)
    return {"spec": spec, "decisions": len(times), "per_s": len(times) / total,
            "mean_ms": 1000 * total / len(times), "median_ms": 1000 * statistics.median(times),
            "p95_ms": 1000 * times[int(0.95 * (len(times) - 1))], "max_ms": 1000 * times[-1]}


def main(argv: list[str] | None = None) -> list[dict]:
    parser = OneLineParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("specs", nargs="+", help="agent specs (random, greedy, search:sims=100)")
    parser.add_argument("--players", type=int, choices=(2, 3, 4), default=2,
                        help="seats at the table of the positions (2)")
    parser.add_argument("--positions", type=int, default=400,
                        help="positions each agent decides, drawn from random matches (400)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the positions and the agents (0)")
    args = parser.parse_args(argv)
    views = positions(RuleConfig(num_players=args.players), args.positions, args.seed)
    rows = []
    print(f"{len(views)} positions, {args.players} players")
    print(f"{'agent':28s} {'decisions/s':>12s} {'mean ms':>9s} {'median':>9s} {'p95':>9s} "
          f"{'max':>9s}")
    for spec in args.specs:
        r = bench(spec, views, args.seed)
        rows.append(r)
        print(f"{spec:28s} {r['per_s']:12.0f} {r['mean_ms']:9.4f} {r['median_ms']:9.4f} "
              f"{r['p95_ms']:9.4f} {r['max_ms']:9.4f}")
    return rows


if __name__ == "__main__":
    main()
