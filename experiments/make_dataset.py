"""``python -m experiments.make_dataset``: a dataset of games for imitation learning and offline
RL: the game records, and every decision as arrays (:mod:`agents.datasets` describes the
directory and its arrays, and reads it back).

Example::

    python -m experiments.make_dataset --agents search:sims=50 greedy --matches 200 \\
        --workers 2 --out datasets/search-greedy

The games are played as a tournament (:mod:`agents.tournament`: duplicate deals, seats
exchanged, every match seeded, resumable: run the same command again after an interruption),
with ``--save-records``.
"""

from __future__ import annotations

import argparse
import os

from agents import datasets
from agents.arena import DEFAULT_MAX_HANDS
from agents.tournament.runner import OUTPUT_FILES, TournamentConfig, matches_kept
from agents.tournament.schedule import check_schedule_fits
from dominoes_env.cli_support import (
    OneLineParser,
    ascii_int,
    check_run_folder,
    end_program,
    is_stdout_error,
    paths_in_specs,
    print_error,
    run_command,
    say_finished,
    seed_value,
    shown_path,
    start_run_folder,
    stop_note,
)
from dominoes_env.core import RuleConfig
from dominoes_env.core.atomic_files import NO_ROOM_ERRNOS
from dominoes_env.record_io import RECORDS_DIR
from dominoes_env.rule_args import add_rule_arguments, rule_options

#: what a dataset's folder holds (one holding only these, without a run marker, is a run's)
OUTPUTS = (*OUTPUT_FILES, RECORDS_DIR, datasets.DECISIONS_DIR, datasets.INFO_FILE)


def build_parser() -> argparse.ArgumentParser:
    p = OneLineParser(
        prog="python -m experiments.make_dataset",
        description="Play games between agents and keep them as a dataset: game records and "
                    "per-decision observation, mask, action and outcome arrays (.npz).")
    p.add_argument("--agents", nargs="+", required=True, metavar="SPEC",
                   help="agent specs (at least two, each once), e.g. search:sims=50 greedy")
    p.add_argument("--matches", type=ascii_int, required=True,
                   help="matches per pairing/table, rounded up to whole duplicate deals")
    p.add_argument("--out", required=True, help="the dataset directory (the same command "
                   "again resumes it)")
    p.add_argument("--overwrite", action="store_true",
                   help="replace the dataset that --out holds (its files are removed)")
    p.add_argument("--players", type=ascii_int, choices=(2, 3, 4), default=2, help="seats (2)")
    p.add_argument("--partnerships", action=argparse.BooleanOptionalAction, default=None,
                   help="4 players in two partnerships (default: on with 4 players)")
    p.add_argument("--seed", type=seed_value, default=0, help="seed of the deals and agents (0)")
    p.add_argument("--workers", type=ascii_int, default=1, help="parallel processes (1)")
    p.add_argument("--max-hands", type=ascii_int, default=DEFAULT_MAX_HANDS,
                   help=f"stop a match undecided after this many hands ({DEFAULT_MAX_HANDS}; "
                        "at most 32,768, the most the int16 hand numbers hold)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    add_rule_arguments(p)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    return run_command(lambda: _main(parser, args))


def _main(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    if args.workers < 1:  # as the tournament's parser says it (the engine's line had no prefix)
        parser.error(f"argument --workers: workers={args.workers} is out of range; allowed: >= 1")
    try:
        rules = RuleConfig(num_players=args.players, partnerships=args.partnerships,
                           **rule_options(args))
        config = TournamentConfig(args.agents, rules, matches=args.matches, seed=args.seed,
                                  max_hands=args.max_hands)
        datasets.check_config(config)
        if not args.out.strip():
            raise ValueError("--out is empty; name the dataset directory")
        # the schedule and its results, counted as the tournament counts them (the decision
        # arrays are built one records shard at a time)
        check_schedule_fits(config.agents, config.rules, config.matches,
                            f"--matches {args.matches}")
        folder = check_run_folder(args.out, "experiments.make_dataset", config.to_dict(),
                                  rerun_resumes=True, overwrite=args.overwrite, outputs=OUTPUTS,
                                  inputs=paths_in_specs(config.agents))
    except (ValueError, TypeError) as err:
        parser.error(str(err))
    try:
        info = datasets.build_dataset(config, args.out, workers=args.workers,
                                      progress=not args.quiet,
                                      before_writing=lambda: start_run_folder(folder))
    except KeyboardInterrupt as stop:  # run_command's one line and status (130, 143, 129)
        if matches_kept(args.out):
            raise stop_note(stop, f"finished games are saved in {args.out}; run the same "
                                  "command again to finish") from None
        # stopped before a game ended (an agent's module, say): nothing to point at
        raise stop_note(stop, "no game had finished") from None
    except OSError as err:
        if is_stdout_error(err):
            raise
        if err.errno not in NO_ROOM_ERRNOS:
            print_error(str(err))
            return 2
        where = os.fsdecode(err.filename) if err.filename is not None else args.out
        print_error(f"cannot write the dataset in {args.out!r} ({where}: "
                    f"{err.strerror or err}); the games finished there are kept: run the same "
                    "command again to finish")  # a rerun resumes
        return 2
    except (ValueError, TypeError) as err:
        print_error(str(err))
        return 2
    say_finished(f"{info['matches']} matches, {info['decisions']:,} decisions in "
                 f"{shown_path(args.out)}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    end_program(main())
