"""``make demo`` / ``python -m experiments.demo``: a short head-to-head tournament between the
built-in agents, printed as a table (well under two minutes on two cores).

It plays random and greedy, plus search at a small budget when ``agents/search.py`` exists and
the shipped PPO policy when ``agents/ppo.py`` and ``agents/policies/ppo_2p.npz`` exist. Results,
``summary.json`` and plots go to ``results/demo`` (replaced on every run) unless ``--out`` says
otherwise.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from dominoes_env.core import RuleConfig

from .tournament.report import print_summary, write_outputs
from .tournament.runner import TournamentConfig, clear_results, run_tournament

#: the search agent at a budget that keeps the demo short
SEARCH_SPEC = "search:sims=100"


def demo_agents() -> list[str]:
    """random and greedy, plus search and ppo when they exist in this checkout."""
    import agents

    root = Path(agents.__file__).parent
    specs = ["random", "greedy"]
    if (root / "search.py").exists():
        specs.append(SEARCH_SPEC)
    if (root / "ppo.py").exists() and (root / "policies" / "ppo_2p.npz").exists():
        specs.append("ppo")
    return specs


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m experiments.demo",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--matches", type=int, default=20, help="matches per pairing (20)")
    p.add_argument("--workers", type=int, default=2, help="parallel workers (2)")
    p.add_argument("--target-score", type=int, default=250, help="match target (250)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="results/demo",
                   help="results directory, replaced on every run (results/demo)")
    args = p.parse_args(argv)
    specs = demo_agents()
    config = TournamentConfig(specs, RuleConfig(target_score=args.target_score),
                              matches=args.matches, seed=args.seed)
    print(f"demo tournament: {', '.join(specs)}; {args.matches} matches per pair, "
          f"{args.workers} workers", file=sys.stderr)
    start = time.perf_counter()
    clear_results(args.out)
    run = run_tournament(config, args.out, workers=args.workers)
    summary = write_outputs(run)
    print_summary(summary)
    seconds = time.perf_counter() - start
    print(f"demo finished in {seconds:.1f} s; results in {run.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
