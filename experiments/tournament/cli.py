"""``python -m experiments.tournament`` / ``dominoes-tournament``: the command line.

Example::

    python -m experiments.tournament --agents random greedy --matches 200 --workers 2 \\
        --out results/rg --target-score 150

Run the same command again after an interruption to finish it; exit status 0 when complete,
2 on bad arguments (or a results directory holding another tournament), 130 on Ctrl-C.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from dataclasses import dataclass

from agents.arena import DEFAULT_MAX_HANDS, DEFAULT_MOVE_TIMEOUT, MAX_MOVE_TIMEOUT
from agents.ray_cluster import RayStartError
from agents.tournament.report import print_summary, write_outputs
from agents.tournament.results_dir import RUN_OUTPUTS, interrupted_note
from agents.tournament.runner import BACKENDS, MATCHES_FILE, TournamentConfig, run_tournament
from agents.tournament.schedule import check_schedule_fits
from dominoes_env.cli_support import (
    CommandError,
    check_config,
    check_run_folder,
    config_field,
    config_parser,
    end_program,
    paths_in_specs,
    print_error,
    program_name,
    run_command,
    say_finished,
    shown_path,
    start_run_folder,
    stop_note,
)
from dominoes_env.core import RuleConfig
from dominoes_env.core.validation import MAX_SEED
from dominoes_env.optional import require
from dominoes_env.rule_args import add_rule_arguments, rule_options

#: what a tournament's folder holds (one holding only these, without a run marker, is a run's)
OUTPUTS = RUN_OUTPUTS


@dataclass
class Command:
    """The command's flags (``--agents`` and the rule options are added beside them): each
    value's type and range, checked by the parser and by :func:`check_config` alike."""

    players: int = config_field(2, "seats at the table", choices=(2, 3, 4))
    partnerships: bool | None = config_field(None, "4 players in two partnerships (default: on "
                                                   "with 4 players)")
    matches: int = config_field(100, "matches per pairing/table, rounded up to whole duplicate "
                                     "deals", low=1)
    seed: int = config_field(0, "tournament seed", low=0, high=MAX_SEED)
    workers: int = config_field(1, "parallel worker processes (1: play in this process); more "
                                   "than the CPUs available is capped with a warning", low=1)
    move_timeout: float = config_field(
        DEFAULT_MOVE_TIMEOUT, "the longest an agent may think about one move, in seconds; an "
        "agent that takes longer stops the run with exit status 2, naming the agent, its seat "
        "and the match seed (0 = no limit)", low=0, high=MAX_MOVE_TIMEOUT)
    backend: str = config_field("local", "local processes or ray", choices=BACKENDS)
    ray_address: str | None = config_field(None, "address of a running Ray cluster (default: "
                                                  "start a local Ray)")
    out: str | None = config_field(None, "results directory (default: results/tournament-<hash "
                                         "of the arguments>); the same command again resumes "
                                         "the tournament there", path=True)
    overwrite: bool = config_field(False, "replace the run that --out holds (its files are "
                                          "removed)")
    max_hands: int = config_field(DEFAULT_MAX_HANDS, "stop a match undecided (a draw) after "
                                                     "this many hands", low=1)
    save_records: bool = config_field(False, "keep every match's game record under "
                                             "OUT/records/ (gzip JSONL shards; watch one with "
                                             "python -m dominoes_env replay OUT --match INDEX "
                                             "--html game.html)")
    plots: bool = config_field(True, "draw the plots (--no-plots: do not)")
    quiet: bool = config_field(False, "no progress bar")

    def __post_init__(self) -> None:
        check_config(self)


def build_parser() -> argparse.ArgumentParser:
    p = config_parser(
        Command, program_name("experiments.tournament", "dominoes-tournament"),
        "Play a reproducible, resumable Straight Dominoes tournament between agents (duplicate "
        "deals, rotating seats) and report win rates, ratings and plots.")
    p.add_argument("--agents", nargs="+", required=True, metavar="SPEC",
                   help="agent specs, e.g. random greedy search:sims=50 ppo my.module:MyAgent")
    add_rule_arguments(p)
    return p


def config_from_args(args: argparse.Namespace) -> TournamentConfig:
    """The :class:`TournamentConfig` the parsed arguments describe (ValueError if invalid,
    among them a tournament whose schedule would not fit in this machine's memory)."""
    rules = RuleConfig(num_players=args.players, partnerships=args.partnerships,
                       **rule_options(args))
    config = TournamentConfig(args.agents, rules, matches=args.matches, seed=args.seed,
                              max_hands=args.max_hands)
    check_schedule_fits(config.agents, config.rules, config.matches)  # the library's count
    return config


def default_out(config: TournamentConfig) -> str:
    """``results/tournament-<10 hex digits>``: one directory per set of arguments, so repeating a
    command resumes it."""
    digest = hashlib.sha256(json.dumps(config.to_dict(), sort_keys=True).encode()).hexdigest()
    return f"results/tournament-{digest[:10]}"


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    return run_command(lambda: _main(args))


def _main(args: argparse.Namespace) -> int:
    try:
        Command(**{k: getattr(args, k) for k in Command.__dataclass_fields__})
        config = config_from_args(args)
        for flag, value in (("--out", args.out), ("--ray-address", args.ray_address)):
            if value is not None and not value.strip():
                raise ValueError(f"{flag} is empty; leave it out for its default")
    except (ValueError, TypeError) as err:
        raise CommandError(str(err)) from None
    out = args.out or default_out(config)
    folder = check_run_folder(out, "experiments.tournament", config.to_dict(),
                              rerun_resumes=True, overwrite=args.overwrite, outputs=OUTPUTS,
                              inputs=paths_in_specs(config.agents))
    try:  # the tournament extra, checked before any match is played
        for module in ("rich", "tqdm", "openskill") + (("matplotlib",) if args.plots else ()):
            require(module, "tournament", "dominoes-tournament")
    except ImportError as e:
        print_error(str(e))
        return 2
    try:
        run = run_tournament(config, out, workers=args.workers, backend=args.backend,
                             ray_address=args.ray_address, progress=not args.quiet,
                             save_records=args.save_records,
                             move_timeout=args.move_timeout or None,
                             before_writing=lambda: start_run_folder(folder))
    except KeyboardInterrupt as stop:  # run_command's one line and status (130, 143, 129)
        raise stop_note(stop, interrupted_note(out)) from None  # what it kept, if anything
    except (ValueError, TypeError, RayStartError) as e:
        raise CommandError(str(e)) from None
    try:
        summary = write_outputs(run, plots=args.plots)
    except OSError as e:
        raise CommandError(f"cannot write the report in {str(run.out)!r} ({e.filename or ''}: "
                           f"{e.strerror or e}); the matches are kept in {MATCHES_FILE}") from None
    except ValueError as e:  # a link, a FIFO or a device put where a report file goes
        raise CommandError(f"cannot write the report in {str(run.out)!r} ({e}); the matches "
                           f"are kept in {MATCHES_FILE}") from None
    print_summary(summary)
    say_finished(f"results: {shown_path(run.out)}", sys.stderr)
    return 0


if __name__ == "__main__":  # pragma: no cover
    end_program(main())
