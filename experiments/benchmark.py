"""``python -m experiments.benchmark SPEC``: the benchmark card of one agent.

The agent plays each opponent of a fixed panel (random, greedy, search, ppo, best) at each
table (2 players; 3; 4 in partnerships; 4 without) on duplicate deals with the tournament
engine, and the card (``agents.benchmark``) is printed as one table and written as
``card.json`` and ``card.png`` in ``--out``::

    python -m experiments.benchmark greedy --matches 200 --workers 2
    python -m experiments.benchmark ppo:runs/jax/policy.npz --tables 2p 4p_partnerships

Ctrl-C keeps every finished match (and writes the card so far); the same command with
``--resume`` plays the rest. Exit status 0 when done, 2 on bad arguments, 130 on Ctrl-C.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from dataclasses import dataclass

from agents.arena import DEFAULT_MAX_HANDS, DEFAULT_MOVE_TIMEOUT, MAX_MOVE_TIMEOUT
from agents.benchmark import (
    CARD_FILE,
    CONFIG_FILE,
    OUTPUT_NAMES,
    PANEL,
    PICTURE_FILE,
    TABLES,
    BenchmarkConfig,
    plan,
    plot_card,
    print_card,
    run_card,
    spec_slug,
)
from agents.benchmark.tables import MAX_MATCHES
from agents.tournament import schedule
from dominoes_env.cli_support import (
    CommandError,
    check_config,
    check_fits_in_memory,
    check_run_folder,
    config_parser,
    end_program,
    is_stdout_error,
    paths_in_specs,
    run_command,
    shown_path,
    start_run_folder,
    stop_note,
)
from dominoes_env.cli_support import config_field as _f
from dominoes_env.core.atomic_files import FolderReplacedError
from dominoes_env.core.validation import MAX_SEED
from dominoes_env.optional import require
from dominoes_env.rule_args import add_rule_arguments, rule_options
from dominoes_env.throughput import load_line

#: the program's name in its run folder's marker (dominoes_env.cli_support.RUN_MARKER)
PROGRAM = "experiments.benchmark"
#: the most worker processes
MAX_WORKERS = 1024


@dataclass
class Config:
    """The program's flags (the agent is the positional SPEC; rule options come from
    ``dominoes_env.rule_args``)."""

    tables: list[str] = _f(lambda: list(TABLES), "tables to play at", choices=tuple(TABLES))
    panel: list[str] = _f(lambda: list(PANEL), "the opponents (agent specs)")
    matches: int = _f(100, "matches per opponent and table, split over a free-for-all table's "
                           "two-agent field and rounded up to whole duplicate deals",
                      low=1, high=MAX_MATCHES)
    seed: int = _f(0, "seed of the deals and of the agents", low=0, high=MAX_SEED)
    workers: int = _f(1, "parallel worker processes (1: play in this process); more than the "
                         "CPUs available is capped with a warning", low=1, high=MAX_WORKERS)
    move_timeout: float = _f(DEFAULT_MOVE_TIMEOUT, "the longest an agent may think about one "
                                                   "move, in seconds (0: no limit)",
                             low=0, high=MAX_MOVE_TIMEOUT)
    max_hands: int = _f(DEFAULT_MAX_HANDS, "stop a match undecided (a draw) after this many "
                                           "hands", low=1)
    out: str | None = _f(None, "output folder (default: results/benchmark-<agent>-<hash of "
                               "the arguments>)", path=True)
    resume: bool = _f(False, "continue the card in --out (same arguments)")
    overwrite: bool = _f(False, "start again, replacing the card in --out")
    plot: bool = _f(True, "draw card.png (skipped, with a note, without matplotlib)")
    progress: bool = _f(True, "show what is playing and a progress bar")

    def __post_init__(self) -> None:
        check_config(self)


def build_parser():
    parser = config_parser(Config, "python -m experiments.benchmark", __doc__.split("\n")[0])
    parser.add_argument("agent", metavar="SPEC",
                        help="the agent's spec (greedy, search:sims=400, ppo:PATH, "
                             "my.module:MyAgent, ...)")
    add_rule_arguments(parser)
    return parser


def default_out(config: BenchmarkConfig) -> str:
    """``results/benchmark-<agent>-<10 hex digits of the arguments>``."""
    digest = hashlib.sha256(json.dumps(config.to_dict(), sort_keys=True).encode()).hexdigest()
    return f"results/benchmark-{spec_slug(config.agent)}-{digest[:10]}"


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run_command(lambda: _main(args))


def _main(args) -> int:
    options = vars(args)
    try:
        config = Config(**{k: options[k] for k in Config.__dataclass_fields__})
        bench = BenchmarkConfig(args.agent, panel=config.panel, tables=config.tables,
                                matches=config.matches, seed=config.seed,
                                rule_options=rule_options(args), max_hands=config.max_hands)
        # a cell's matches, each counted as a tournament's scheduled match (read through the
        # module, so the library's one definition is the one used)
        check_fits_in_memory(f"--matches {config.matches}", config.matches,
                             schedule.BYTES_PER_MATCH)
        if config.resume and config.overwrite:
            raise ValueError("--resume continues a card and --overwrite starts it again: "
                             "pass one")
        out = config.out if config.out is not None else default_out(bench)
        for module in ("rich", "tqdm"):
            require(module, "tournament", "python -m experiments.benchmark")
        plan(bench)  # every spec builds, and plays at least one table
        # the policy files the specs name are inputs: --out holding one is refused, for
        # replacing the card would remove it (ppo:OUT/matches/p.npz went with matches/)
        folder = check_run_folder(
            out, PROGRAM, bench.to_dict(), overwrite=config.overwrite, outputs=OUTPUT_NAMES,
            resume=os.path.join(out, CONFIG_FILE) if config.resume else None,
            resume_hint="(with the same arguments)",
            inputs=paths_in_specs([bench.agent, *bench.panel]))
        kept = [n for n in OUTPUT_NAMES[1:] if os.path.lexists(os.path.join(out, n))]
        if config.resume and kept and not os.path.lexists(os.path.join(out, CONFIG_FILE)):
            # was "pass --resume to continue it", to a command that had passed it
            raise ValueError(f"{out} holds a benchmark card ({', '.join(kept)}) but no "
                             f"{CONFIG_FILE}: its arguments are unknown, so it cannot be "
                             f"resumed; put {CONFIG_FILE} back, start afresh there with "
                             "--overwrite, or use another --out")
    except (ValueError, TypeError, ImportError) as err:
        raise CommandError(str(err)) from None
    plot = config.plot
    if plot:
        try:
            require("matplotlib", "tournament", "the card's picture")
        except ImportError as err:
            print(f"note: no picture: {err}", file=sys.stderr)
            plot = False
    print(load_line("start"), flush=True)
    try:
        run = run_card(bench, out, workers=config.workers, progress=config.progress,
                       resume=folder.resumes and os.path.isfile(os.path.join(out, CONFIG_FILE)),
                       overwrite=folder.replaces,  # without it the card refused its own folder
                       move_timeout=config.move_timeout or None,
                       before_writing=lambda: start_run_folder(folder))
    except KeyboardInterrupt as stop:  # run_command's one line and status (130, 143, 129)
        raise stop_note(stop, f"the finished matches and the card so far are in {out}; the "
                              "same command with --resume plays the rest") from None
    except (ValueError, TypeError) as err:
        raise CommandError(str(err)) from None
    except OSError as err:
        if is_stdout_error(err) or isinstance(err, FolderReplacedError):  # the folder removed:
            raise  # its own line, for nothing of it is kept
        raise CommandError(f"cannot write the card in {out!r} ({err.filename or ''}: "
                           f"{err.strerror or err}); finished matches are kept") from None
    print_card(run.card)
    if plot and any(c["status"] == "ok" for t in run.card["tables"] for c in t["cells"]):
        plot_card(run.card, run.out / PICTURE_FILE)
    print(f"card: {shown_path(run.out / CARD_FILE)}", file=sys.stderr)
    print(load_line("end"))
    return 0


if __name__ == "__main__":
    end_program(main())
