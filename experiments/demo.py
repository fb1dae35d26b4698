"""``make demo`` / ``python -m experiments.demo``: a short head-to-head tournament between the
built-in agents, printed as a table (well under two minutes on two cores).

It plays random, greedy and search at a small budget, plus the shipped PPO policy
(``agents/policies/ppo_2p.npz``) when it exists. Results,
``summary.json`` and plots go to ``results/demo`` unless ``--out`` says otherwise; an earlier
demo there is replaced with ``--overwrite`` (``make demo`` passes it). Ctrl-C keeps the finished
matches, and the same command again plays the rest (as the tournament it runs does).
"""

from __future__ import annotations

import sys
import time

from agents.tournament.report import print_summary, write_outputs
from agents.tournament.results_dir import RUN_OUTPUTS, interrupted_note
from agents.tournament.runner import TournamentConfig, run_tournament
from agents.tournament.schedule import check_schedule_fits
from dominoes_env.cli_support import (
    CommandError,
    OneLineParser,
    ascii_int,
    check_run_folder,
    end_program,
    paths_in_specs,
    run_command,
    say_finished,
    seed_value,
    shown_path,
    start_run_folder,
    stop_note,
)
from dominoes_env.core import RuleConfig

#: the search agent at a budget that keeps the demo short
SEARCH_SPEC = "search:sims=100"
#: what a demo's folder holds (a tournament's: one holding only these, without a run marker,
#: is a run's)
OUTPUTS = RUN_OUTPUTS


def demo_agents() -> list[str]:
    """random, greedy and search, plus the shipped PPO policy when this checkout has one."""
    from agents.ppo import shipped_policy_path

    specs = ["random", "greedy", SEARCH_SPEC]
    if shipped_policy_path(2).is_file():
        specs.append("ppo")
    return specs


def main(argv: list[str] | None = None) -> int:
    p = OneLineParser(prog="python -m experiments.demo",
                      description=__doc__.split("\n\n")[0])
    p.add_argument("--matches", type=ascii_int, default=20, help="matches per pairing (20)")
    p.add_argument("--workers", type=ascii_int, default=2, help="parallel workers (2)")
    p.add_argument("--target-score", type=ascii_int, default=250, help="match target (250)")
    p.add_argument("--seed", type=seed_value, default=0, help="tournament seed (0)")
    p.add_argument("--out", default="results/demo",
                   help="results directory (results/demo)")
    p.add_argument("--overwrite", action="store_true",
                   help="replace the demo that --out holds (its files are removed)")
    args = p.parse_args(argv)
    specs = demo_agents()
    try:
        config = TournamentConfig(specs, RuleConfig(target_score=args.target_score),
                                  matches=args.matches, seed=args.seed)
        if args.workers < 1:
            raise ValueError(f"--workers must be >= 1, not {args.workers}")
        check_schedule_fits(config.agents, config.rules, config.matches)
        # the output policy, an empty --out included
        folder = check_run_folder(args.out, "experiments.demo", config.to_dict(),
                                  overwrite=args.overwrite, outputs=OUTPUTS, rerun_resumes=True,
                                  inputs=paths_in_specs(specs))
    except (ValueError, TypeError) as err:
        p.error(str(err))
    return run_command(lambda: _play(config, specs, args, folder), errors=(OSError,))


def _play(config: TournamentConfig, specs: list[str], args, folder) -> int:
    print(f"demo tournament: {', '.join(specs)}; {args.matches} matches per pair, "
          f"{args.workers} workers", file=sys.stderr)
    start = time.perf_counter()
    try:
        run = run_tournament(config, args.out, workers=args.workers,
                             before_writing=lambda: start_run_folder(folder))
    except KeyboardInterrupt as stop:  # run_command's one line and status (130, 143, 129)
        raise stop_note(stop, interrupted_note(args.out)) from None  # what it kept, if anything
    except (ValueError, TypeError) as err:
        raise CommandError(str(err)) from None
    summary = write_outputs(run)
    print_summary(summary)
    seconds = time.perf_counter() - start
    say_finished(f"demo finished in {seconds:.1f} s; results in {shown_path(run.out)}",
                 sys.stderr)
    return 0


if __name__ == "__main__":
    end_program(main())
