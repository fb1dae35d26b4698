"""Playing a card: one tournament (:mod:`agents.tournament`) per opponent and table, each in a
folder of its own under the card's folder, so that an interrupted card keeps every finished
match and ``resume=True`` plays only the rest.

The card's folder holds ``benchmark.json`` (the :class:`BenchmarkConfig`: a folder holding
another card is refused), ``card.json`` (:mod:`.card`), ``card.png`` and
``matches/<table>/<NN>-<opponent>/`` (a tournament's ``config.json`` and ``matches.jsonl``).
"""

from __future__ import annotations

import os
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dominoes_env.core.atomic_files import write_json
from dominoes_env.core.validation import (
    as_bool,
    as_float,
    as_int,
    as_path,
    short_repr,
)

from ..arena import DEFAULT_MOVE_TIMEOUT, MAX_MOVE_TIMEOUT
from ..specs import check_spec, make_agent, parse_spec, same_agent_key
from ..tournament.runner import (
    MATCHES_FILE,
    TournamentConfig,
    TournamentDirError,
    load_records,
    read_config_json,
    run_tournament,
)
from .card import build_card, write_card
from .stats import cell_stats
from .tables import BenchmarkConfig

CONFIG_FILE = "benchmark.json"
CARD_FILE = "card.json"
PICTURE_FILE = "card.png"
CELLS_DIR = "matches"
#: every name a card run writes in its folder
OUTPUT_NAMES = (CONFIG_FILE, CARD_FILE, PICTURE_FILE, CELLS_DIR)
#: bump when the folder's layout or the cells' seeding changes, so old folders are refused
SCHEME_VERSION = 1
#: what an opponent that is the agent itself shows instead of figures
ITSELF = "the agent itself (50% by construction)"


class BenchmarkDirError(ValueError):
    """The card's folder cannot be used for this run (another card, nothing to resume, ...)."""


@dataclass(frozen=True)
class Cell:
    """One opponent at one table: ``reason`` says why it is not played (``n/a``), else
    ``None``; ``folder`` is where its tournament lives, relative to the card's folder."""

    table: str
    opponent: str
    reason: str | None
    folder: str

    def tournament(self, config: BenchmarkConfig) -> TournamentConfig:
        return TournamentConfig([config.agent, self.opponent], config.rules(self.table),
                                matches=config.per_field_table(self.table), seed=config.seed,
                                max_hands=config.max_hands)


def spec_slug(spec: str) -> str:
    """``spec`` as a short file name (what is not a letter, digit or ``=.,-`` is ``_``).

    >>> spec_slug("ppo:/runs/a b/policy.npz")
    'ppo_runs_a_b_policy.npz'
    """
    return re.sub(r"[^A-Za-z0-9=.,-]+", "_", spec).strip("._")[:40] or "agent"


def _reason(spec: str, rules) -> str | None:
    try:
        check_spec(spec, rules)
    except ValueError as err:
        return " ".join(str(err).split())
    return None


def plan(config: BenchmarkConfig) -> list[Cell]:
    """Every cell of the card, in table then panel order. A spec that names no agent (or bad
    parameters, or an unreadable policy) is a ``ValueError``; an agent that cannot play a
    table (no shipped policy for it) makes its cells ``n/a`` with the reason, and so does an
    opponent. ``ValueError`` too if the agent can play none of the tables, or no opponent can
    play it at those it can (:func:`_check_plays`)."""
    for spec in (config.agent, *config.panel):
        make_agent(spec, seed=0)
    cells: list[Cell] = []
    refused: dict[str, str] = {}  # table -> why the agent cannot play it
    for table in config.tables:
        rules = config.rules(table)
        mine = _reason(config.agent, rules)
        if mine:
            refused[table] = mine
        agent_key = same_agent_key(config.agent, rules)
        for i, opponent in enumerate(config.panel):
            # compared as agents, as the cell's tournament compares them: search:sims=5 is
            # search:sims=5,epsilon=0 (it played a cell, then stopped the card mid-run)
            itself = same_agent_key(opponent, rules) == agent_key
            reason = mine if mine else ITSELF if itself else _reason(opponent, rules)
            cells.append(Cell(table, opponent, reason, f"{CELLS_DIR}/{table}/{i:02d}-"
                                                       f"{spec_slug(opponent)}"))
    if len(refused) == len(config.tables):
        raise ValueError(f"{config.agent!r} can play none of the tables: "
                         f"{'; '.join(f'{t}: {why}' for t, why in refused.items())}")
    _check_plays(config, cells, set(refused))
    return cells


def _check_plays(config: BenchmarkConfig, cells: list[Cell], unplayed: set[str]) -> None:
    """A ``ValueError`` naming each opponent's reason when no cell of the card would be
    played: a panel none of whose opponents can play the agent at the tables it plays (or
    that is the agent itself) made an all-``n/a`` card with status 0, where an agent that
    can play no table is refused."""
    if any(cell.reason is None for cell in cells):
        return
    why = "; ".join(f"{cell.table} {cell.opponent!r}: {cell.reason}" for cell in cells
                    if cell.table not in unplayed)
    raise ValueError(f"no opponent of the panel can play {config.agent!r} at the tables it "
                     f"plays, so the card would play nothing: {why}")


def _stored(config: BenchmarkConfig) -> dict[str, Any]:
    return {"scheme": SCHEME_VERSION, **config.to_dict()}


def _stored_damage(old: Any) -> str | None:
    """What makes a read ``benchmark.json`` no card's configuration (``None``: it is one):
    not an object, another scheme, keys or values no :class:`BenchmarkConfig` has (``"matches":
    NaN``, a table ``'9p'``, a panel entry that names no agent, a rule option ``zzz``). Such a
    file is damaged: it is reported as such, never offered as the settings to repeat to
    resume the card."""
    if not isinstance(old, dict):
        return "not a JSON object"
    if old.get("scheme") != SCHEME_VERSION:
        return f"scheme {short_repr(old.get('scheme'))}, not this version's {SCHEME_VERSION}"
    fields = set(BenchmarkConfig.__dataclass_fields__)
    odd = sorted((set(old) - {"scheme"}) ^ fields, key=str)
    if odd:
        return f"{', '.join(map(short_repr, odd[:3]))} missing or unknown"
    try:
        config = BenchmarkConfig(**{name: old[name] for name in fields})
        for spec in (config.agent, *config.panel):
            parse_spec(spec)
    except (ValueError, TypeError) as err:
        return str(err)
    if _stored(config) != old:
        return "its values are not as a card writes them"
    return None


def _differences(old: Any, new: dict) -> str:
    if not isinstance(old, dict):
        return "the stored configuration is not a JSON object"
    return "; ".join(f"{k}: {old.get(k)!r} there, {new.get(k)!r} now"
                     for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k))


def clear_card(out: str | os.PathLike, *, keep_marker: bool = False) -> None:
    """Remove what a card run writes in ``out`` (and nothing else there): only from a card's
    folder, one whose run marker names ``experiments.benchmark`` or whose ``benchmark.json``
    is a card's configuration. Any other folder holding such names (the user's own
    ``card.json`` and ``matches/``), or a symbolic link, is a
    :class:`BenchmarkDirError` naming it, and nothing is removed
    (:func:`dominoes_env.cli_support.clear_run`); a link in the folder goes as a link. The run
    marker goes too, unless ``keep_marker`` (the new run's, written just before)."""
    from dominoes_env.cli_support import RefusedError, clear_run

    try:
        clear_run(out, ("experiments.benchmark",), proof=_card_proof,
                  only=OUTPUT_NAMES if keep_marker else None)
    except RefusedError as err:
        raise BenchmarkDirError(str(err)) from None


def _card_proof(out: str) -> str | None:
    """What keeps the folder ``out``, which has no run marker, from being a card's (``None``:
    nothing): its ``benchmark.json``, as a card writes it."""
    path = Path(out, CONFIG_FILE)
    if path.is_symlink() or not path.is_file():
        return f"no {CONFIG_FILE}" if not os.path.lexists(path) else f"{CONFIG_FILE} is no file"
    try:  # capped: a 40 GB benchmark.json was read whole, into a MemoryError
        damage = _stored_damage(read_config_json(path))
    except (OSError, ValueError, RecursionError) as err:
        damage = str(err)
    return f"{CONFIG_FILE} is no card's configuration: {damage}" if damage else None


def _refuse_removing_an_input(out: Path, config: BenchmarkConfig) -> None:
    """:class:`BenchmarkDirError` when ``out`` holds a file the card's specs read
    (``ppo:OUT/matches/policy.npz``): replacing the card there would remove its own input, as
    the output policy refuses (an output is never an input)."""
    from dominoes_env.cli_support import paths_in_specs

    real = os.path.realpath(out)
    for source in paths_in_specs([config.agent, *config.panel]):
        found = os.path.realpath(source)
        if found == real or found.startswith(real.rstrip(os.sep) + os.sep):
            raise BenchmarkDirError(f"{str(out)!r} holds an input of this card ({source!r}, "
                                    "which its specs read), which overwrite=True (--overwrite) "
                                    "could remove with the card; move the input out of it, or "
                                    "use another output folder")


def prepare_dir(out: Path, config: BenchmarkConfig, *, resume: bool, overwrite: bool,
                before_writing: Callable[[], object] | None = None) -> None:
    """The output policy: a new folder; an existing card of the same configuration only with
    ``resume``; anything a card writes already there only with ``overwrite`` (it is removed
    first), and never where the folder holds a file the card's specs read
    (:func:`_refuse_removing_an_input`). :class:`BenchmarkDirError` otherwise; then
    ``before_writing()`` runs (a program's run marker is written there: a refused ``--resume``
    left a new ``run.json`` behind) and ``benchmark.json`` is written."""
    ready = before_writing if before_writing is not None else (lambda: None)
    if resume and overwrite:
        raise BenchmarkDirError("resume=True (--resume) continues a card and overwrite=True "
                                "(--overwrite) starts it again: pass one")
    if out.exists() and not out.is_dir():
        raise BenchmarkDirError(f"the output folder {str(out)!r} is a file, not a folder")
    path = out / CONFIG_FILE
    wanted = _stored(config)
    ours = [n for n in OUTPUT_NAMES if os.path.lexists(out / n)]
    if overwrite:
        _refuse_removing_an_input(out, config)
        ready()
        # a run marker written by ready() is the new run's: it stays (the replaced run's was
        # removed with its files by the program's start_run_folder)
        clear_card(out, keep_marker=before_writing is not None)
    elif resume:
        if not path.is_file():
            raise BenchmarkDirError(f"{out} holds no benchmark card to resume ({CONFIG_FILE} "
                                    "is missing); leave out resume (--resume) to start one")
        try:  # capped: a 40 GB benchmark.json was read whole, into a MemoryError
            old = read_config_json(path)
        except (OSError, ValueError, RecursionError) as err:
            raise BenchmarkDirError(f"{path} is unreadable ({err}); use overwrite=True "
                                    "(--overwrite) or another output folder") from None
        damage = _stored_damage(old)
        if damage:  # no command line gives it: not to be "repeated" to resume it
            raise BenchmarkDirError(f"{path} is no card this version can resume ({damage}); "
                                    "use overwrite=True (--overwrite) or another output folder")
        if old != wanted:
            raise BenchmarkDirError(f"{out} holds a card with other arguments "
                                    f"({_differences(old, wanted)}); repeat them to resume it, "
                                    "or use overwrite=True (--overwrite) or another output folder")
        ready()
        return
    elif ours:
        raise BenchmarkDirError(f"{out} holds a benchmark card already ({', '.join(ours)}); "
                                "pass resume=True (--resume) to continue it, overwrite=True "
                                "(--overwrite) to start again, or choose another output "
                                "folder")
    else:
        ready()
    out.mkdir(parents=True, exist_ok=True)
    write_json(path, wanted)


def collect(config: BenchmarkConfig, out: Path, cells: list[Cell]) -> list[dict[str, Any]]:
    """Each cell's figures from the matches finished in its folder (:func:`cell_stats`), with
    ``table``, ``opponent``, ``status`` (``"ok"`` or ``"n/a"``), ``reason``,
    ``matches_scheduled`` and ``complete``."""
    rows = []
    for cell in cells:
        row: dict[str, Any] = {"table": cell.table, "opponent": cell.opponent}
        if cell.reason:
            rows.append({**row, "status": "n/a", "reason": cell.reason})
            continue
        tournament = cell.tournament(config)
        schedule = tournament.schedule()
        rules = tournament.rules
        path = out / cell.folder / MATCHES_FILE
        jobs = {job.key: job for job in schedule.jobs}
        try:
            records = load_records(path, schedule, rules, tournament.max_hands)
            for rec in records:  # the field table as scheduled, not as the line says
                rec["table"] = list(jobs[rec["key"]].table)
            stats = cell_stats(records, config.agent, rules)
        except TournamentDirError:
            raise
        except (ValueError, KeyError, TypeError) as err:
            raise TournamentDirError(f"{path}: {err}") from None
        rows.append({**row, "status": "ok", "reason": None, **stats,
                     "matches_scheduled": len(schedule.jobs),
                     "complete": len(records) == len(schedule.jobs)})
    return rows


@dataclass
class CardRun:
    """What :func:`run_card` returns: the card (:mod:`.card`) and where it was written."""

    card: dict[str, Any]
    out: Path
    played: int  #: matches this invocation played


def _in_the_card() -> None:
    """A cell's tournament starts no run folder of its own: it lies in the card's, checked by
    :func:`prepare_dir` (a run marker of its own would stand for another run inside the
    card's)."""


def run_card(config: BenchmarkConfig, out: str | os.PathLike, *, workers: int = 1,
             progress: bool = True, resume: bool = False, overwrite: bool = False,
             move_timeout: float | None = DEFAULT_MOVE_TIMEOUT,
             before_writing: Callable[[], object] | None = None) -> CardRun:
    """Play every playable cell of the card not yet finished in ``out`` and write
    ``card.json``. Ctrl-C (``KeyboardInterrupt``) writes the card of the matches finished so
    far (``"complete": false``) and propagates; ``resume=True`` then plays the rest.
    ``before_writing()`` runs once every spec is checked, before anything is written (a
    program starts its run folder there: :func:`dominoes_env.cli_support.start_run_folder`)."""
    out = Path(as_path("out", out))  # '' would be the current directory
    # the arguments each cell's run_tournament takes, checked before benchmark.json is written
    workers = as_int("workers", workers, 1)
    progress, resume = as_bool("progress", progress), as_bool("resume", resume)
    overwrite = as_bool("overwrite", overwrite)
    if move_timeout is not None:
        move_timeout = as_float("move_timeout", move_timeout, 0, MAX_MOVE_TIMEOUT, low_open=True)
    cells = plan(config)
    prepare_dir(out, config, resume=resume, overwrite=overwrite, before_writing=before_writing)
    start = time.perf_counter()
    played = 0
    try:
        for cell in cells:
            if cell.reason:
                continue
            if progress:
                print(f"{cell.table}: {config.agent} against {cell.opponent}", file=sys.stderr)
            run = run_tournament(cell.tournament(config), out / cell.folder, workers=workers,
                                 progress=progress, move_timeout=move_timeout,
                                 before_writing=_in_the_card)
            played += run.played
            workers = run.workers  # capped at the CPUs once, not warned about again
    except KeyboardInterrupt:
        write_card(build_card(config, collect(config, out, cells),
                              wall_s=time.perf_counter() - start, workers=workers),
                   out / CARD_FILE)
        raise
    card = build_card(config, collect(config, out, cells), wall_s=time.perf_counter() - start,
                      workers=workers)
    write_card(card, out / CARD_FILE)
    return CardRun(card, out, played)
