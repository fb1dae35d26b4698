"""Run a tournament's matches (in-process, on a local process pool or on Ray) into a results
directory that survives interruption.

The directory holds:

- ``config.json``: the arguments that decide the results (agents, matches, seed, rules,
  ``max_hands``). A run on a directory whose ``config.json`` differs is refused.
- ``matches.jsonl``: one JSON object per finished match, appended and flushed as each result
  arrives. A run killed at any moment loses only the matches in flight (a half-written last line
  is cut off on the next start); running the same command again plays only the missing matches.
- ``records/`` (with ``save_records=True``, ``--save-records``): every match's game record,
  kept exactly in step with ``matches.jsonl`` (:mod:`.record_store`).

Results do not depend on ``workers`` or ``backend``: each match is fully determined by its job
(seating and seed), and ratings are computed in schedule order, not finishing order.

The pieces it runs on, their public names importable from here too: :mod:`.jobs` (playing one
scheduled match), :mod:`.backends` (local worker processes, Ray), :mod:`.results_dir` (the
folder, its ``config.json``, the output policy) and :mod:`.matches_file` (``matches.jsonl``
read back, every line checked).

>>> import tempfile
>>> cfg = TournamentConfig(["random", "greedy"], RuleConfig(target_score=30), matches=2)
>>> with tempfile.TemporaryDirectory() as out:
...     first = run_tournament(cfg, out, progress=False)
...     again = run_tournament(cfg, out, progress=False)  # complete already: nothing to play
>>> len(first.records), first.played, again.played
(2, 2, 0)
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from dominoes_env.core import RuleConfig
from dominoes_env.core.atomic_files import FolderReplacedError, appending, writes_to
from dominoes_env.core.errors import RecordError
from dominoes_env.core.validation import as_bool, as_float, as_int, as_path
from dominoes_env.optional import require
from dominoes_env.record_io import RECORDS_DIR

from ..arena import DEFAULT_MOVE_TIMEOUT, MAX_MOVE_TIMEOUT
from .backends import BACKENDS, WorkerDiedError, batch_size, iter_local, iter_ray, max_workers
from .jobs import job_record, play_batch
from .matches_file import LINE_FIELDS, MAX_LINE_BYTES, load_records, match_lines
from .record_store import RecordStore, game_line
from .results_dir import (
    AGENT_FILES,
    CONFIG_FILE,
    HEATMAP_FILE,
    MATCHES_FILE,
    MAX_CONFIG_BYTES,
    OUTPUT_FILES,
    PROGRAM,
    RATINGS_FILE,
    RUN_OUTPUTS,
    SCHEME_VERSION,
    SUMMARY_FILE,
    TOURNAMENT_PROGRAMS,
    TournamentConfig,
    TournamentDirError,
    agent_files,
    check_folder,
    clear_results,
    matches_kept,
    prepare_dir,
    read_config_json,
    tournament_proof,
)
from .schedule import MatchJob, Schedule, make_schedule

__all__ = [  # the run's own names, and the pieces' public names (importable from here too)
    "TournamentRun", "run_tournament",
    "BACKENDS", "WorkerDiedError", "batch_size", "iter_local", "iter_ray", "max_workers",
    "job_record", "play_batch",
    "LINE_FIELDS", "MAX_LINE_BYTES", "load_records", "match_lines",
    "AGENT_FILES", "CONFIG_FILE", "HEATMAP_FILE", "MATCHES_FILE", "MAX_CONFIG_BYTES",
    "OUTPUT_FILES", "PROGRAM", "RATINGS_FILE", "RUN_OUTPUTS", "SCHEME_VERSION", "SUMMARY_FILE",
    "TOURNAMENT_PROGRAMS", "TournamentConfig", "TournamentDirError", "agent_files",
    "check_folder", "clear_results", "matches_kept", "prepare_dir", "read_config_json",
    "tournament_proof",
    "MatchJob", "make_schedule",  # the schedule's, which the run's signatures name
]  # fmt: skip


@dataclass
class TournamentRun:
    """What :func:`run_tournament` returns: every finished match (in schedule order) and how
    this invocation went."""

    config: TournamentConfig
    schedule: Schedule
    out: Path
    records: list[dict]
    played: int  #: matches played by this invocation
    seconds: float  #: wall time of this invocation's play
    workers: int
    backend: str

    @property
    def complete(self) -> bool:
        return len(self.records) == len(self.schedule.jobs)


def _outcome(rec: dict) -> tuple:
    return tuple(rec["scores"]), rec["winner"], rec["hands"]


def _ended(outcome: tuple) -> str:
    scores, winner, hands = outcome
    return f"scores {list(scores)}, winner {winner} after {hands} hands"


def _replay_disagrees(path: Path, old: dict, rec: dict, disputed: tuple | None) -> str:
    """Why a run stops when a match played again for its game record ends otherwise than its
    line of ``matches.jsonl`` says; the game record it had (``disputed``: what it ends with),
    if any, stays in its shard."""
    says = f"{path} says match {old['key']!r} ended with {_ended(_outcome(old))}"
    replay = _ended(_outcome(rec))
    if disputed is not None and _outcome(rec) == (tuple(disputed[0]), *disputed[1:]):
        return (f"{says}, but its game record and a replay of the match from its seed both end "
                f"with {replay}: that line of {path.name} was changed; put it back, or remove "
                "it to play the match again (its record is kept)")
    if disputed is not None:
        return (f"{says}, its game record ends with {_ended((tuple(disputed[0]), *disputed[1:]))}"
                f" and a replay of the match from its seed with {replay}: an agent is not "
                "reproducible from its seed, or the line and the record were both changed "
                "(the record is kept)")
    return (f"{says}, but a replay of the match from its seed for its game record ends with "
            f"{replay}: that line was changed, or an agent is not reproducible from its seed")


def _lock(handle) -> None:
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not on POSIX: no lock
        return
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        raise TournamentDirError(
            f"another run is writing to {handle.name}; wait for it to finish"
        ) from None


def _progress(total: int, initial: int, enabled: bool):
    tqdm = require("tqdm", "tournament", "the tournament's progress bar").tqdm

    return tqdm(total=total, initial=initial, unit="match", disable=not enabled, smoothing=0.1,
                dynamic_ncols=True)


def run_tournament(
    config: TournamentConfig,
    out: str | os.PathLike,
    *,
    workers: int = 1,
    backend: str = "local",
    ray_address: str | None = None,
    progress: bool = True,
    save_records: bool = False,
    move_timeout: float | None = DEFAULT_MOVE_TIMEOUT,
    overwrite: bool = False,
    before_writing: Callable[[], object] | None = None,
) -> TournamentRun:
    """Play every match of ``config`` not yet in ``out`` and return all finished ones.

    ``out`` gets the output policy of the command's ``--out`` (:func:`check_folder`): a new or
    empty folder, or this tournament's own to resume; ``overwrite=True`` replaces the run
    there. ``before_writing()`` replaces that check: a program that checked its run folder
    itself starts it there, once every argument is checked and before anything is written
    (:func:`dominoes_env.cli_support.start_run_folder`).

    ``save_records`` keeps every match's game record under ``out/records/``, in step with
    ``matches.jsonl`` (see :mod:`.record_store`; matches finished earlier without their record
    are played again for it).

    ``move_timeout`` (seconds, ``None``: no limit) stops the run with an
    :class:`~agents.arena.AgentError` when an agent thinks longer about one move; an agent
    that raises or answers a non-integer or illegal action stops it the same way, naming its
    spec, seat and match seed. Finished matches are kept in every case. ``workers`` above the
    CPUs available (:func:`max_workers`) is capped with a warning on stderr.

    Ctrl-C (``KeyboardInterrupt``) propagates after the finished matches are safely written; a
    results directory that cannot be used or written raises :class:`TournamentDirError`.
    """
    if not isinstance(config, TournamentConfig):  # a dict failed deep inside: no 'schedule'
        raise TypeError(f"config must be a TournamentConfig, not {type(config).__name__}")
    workers = as_int("workers", workers, 1)
    out = as_path("out", out)  # '' would be the current directory
    progress = as_bool("progress", progress)
    save_records = as_bool("save_records", save_records)
    overwrite = as_bool("overwrite", overwrite)
    if overwrite and before_writing is not None:
        raise ValueError("overwrite=True is for a folder run_tournament checks itself; a "
                         "caller passing before_writing checked its folder already")
    if move_timeout is not None:
        # play_match's bound, checked before the run folder is written
        move_timeout = as_float("move_timeout", move_timeout, 0, MAX_MOVE_TIMEOUT, low_open=True)
    if workers > max_workers() and backend == "local":
        print(f"warning: workers={workers} capped at {max_workers()} (the CPUs this process "
              "may use)", file=sys.stderr)
        workers = max_workers()
    if backend not in BACKENDS:
        raise ValueError(f"backend={backend!r} is not allowed; allowed: {', '.join(BACKENDS)}")
    if ray_address and backend != "ray":
        raise ValueError("ray_address is only used with backend='ray'")
    if backend == "ray" and not ray_address:  # RAY_ADDRESS: the cluster Ray would join
        from ..ray_cluster import ray_address_from_environment

        ray_address = ray_address_from_environment()
    if ray_address:  # a cluster that is not there is refused before anything is written
        from ..ray_cluster import check_reachable

        check_reachable(ray_address)
    schedule = config.schedule()
    from ..specs import check_spec

    for spec in config.agents:  # every spec can serve this table, before anything is written
        check_spec(spec, config.rules)
    own_folder = before_writing is None
    if own_folder:
        from dominoes_env.cli_support import start_run_folder

        folder = check_folder(out, config, PROGRAM, RUN_OUTPUTS, overwrite=overwrite)
        before_writing = lambda: start_run_folder(folder)  # noqa: E731

    out = Path(out)
    if save_records and os.path.lexists(out / RECORDS_DIR) and not (
            (out / RECORDS_DIR).is_dir() and not (out / RECORDS_DIR).is_symlink()):
        raise TournamentDirError(f"{str(out / RECORDS_DIR)!r} is not a folder; the game records "
                                 "go there: remove it, or use another output folder")
    joined = False
    if ray_address:  # joined before anything is written: an address where no Ray cluster
        from ..ray_cluster import init_ray  # runs ('auto' with none) left a run folder behind

        joined = init_ray(address=ray_address)
    try:
        with _folder_locks(own_folder):
            before_writing()
            return _run_in_dir(config, schedule, out, workers, backend, ray_address, progress,
                               save_records, move_timeout)
    except FolderReplacedError:  # its own line says what was lost: no "kept there"
        raise
    except OSError as err:
        where = err.filename or out
        kept = ("matches already finished there are kept" if (out / MATCHES_FILE).is_file()
                else "no finished match is kept there")  # the folder was removed, say
        raise TournamentDirError(f"cannot write the results in {str(out)!r} ({where}: "
                                 f"{err.strerror or err}); {kept}") from None
    finally:
        if joined:
            from ..ray_cluster import shutdown_ray

            shutdown_ray()


def _folder_locks(own: bool):
    """The run folder's lock, released on return where this function started the run folder
    (a command's runner releases its own)."""
    import contextlib

    from dominoes_env.cli_support import run_folder_locks

    return run_folder_locks() if own else contextlib.nullcontext()


def _load_records(store: RecordStore, done: dict[str, dict], rules: RuleConfig,
                  out: Path) -> set[str]:
    """The matches whose game record the store keeps; what it had to drop is said on stderr
    (those matches are played again for their records)."""
    try:
        kept = store.load(done, rules)
    except RecordError as err:
        raise TournamentDirError(f"{err}; remove that shard from {out / RECORDS_DIR} to play "
                                 "its matches again for their records") from None
    for line in store.repairs[:10]:
        print(f"warning: {line}", file=sys.stderr)
    if len(store.repairs) > 10:
        print(f"warning: and {len(store.repairs) - 10} more records dropped", file=sys.stderr)
    return kept


def _run_in_dir(config, schedule, out, workers, backend, ray_address, progress, save_records,
                move_timeout) -> TournamentRun:
    prepare_dir(out, config)
    path = out / MATCHES_FILE
    with appending(path) as handle:
        _lock(handle)
        records = load_records(path, schedule, config.rules, config.max_hands)
        done = {r["key"]: r for r in records}
        store = RecordStore(out) if save_records else None
        kept = _load_records(store, done, config.rules, out) if store else set(done)
        pending = [job for job in schedule.jobs if job.key not in kept]
        start = time.perf_counter()
        played = 0
        try:
            if pending:
                if backend == "ray":
                    stream: Iterable[dict] = iter_ray(pending, config, workers, ray_address,
                                                      save_records, move_timeout)
                else:
                    stream = iter_local(pending, config, workers, save_records, move_timeout)
                with _progress(len(schedule.jobs), len(kept), progress) as bar:
                    for rec in stream:
                        game = rec.pop("_game", None)
                        old = done.get(rec["key"])
                        disputed = store.disputed.get(rec["key"]) if store else None
                        if old is not None and _outcome(old) != _outcome(rec):
                            raise TournamentDirError(_replay_disagrees(path, old, rec,
                                                                       disputed))
                        if disputed is not None:  # the replay agrees with the line: the
                            store.replace(game_line(rec, game))  # record was the changed one
                            print(f"warning: {store.disputes.pop(rec['key'])}",
                                  file=sys.stderr)
                        elif store is not None:
                            store.append(game_line(rec, game))  # the record first, then
                        if old is None:  # the match line: a crash between leaves no orphan
                            with writes_to(path):
                                handle.write(json.dumps(rec, separators=(",", ":")) + "\n")
                                handle.flush()
                            records.append(rec)
                            played += 1
                        bar.update(1)
        finally:
            if store is not None:
                store.close()
        seconds = time.perf_counter() - start
    records.sort(key=lambda r: r["index"])
    return TournamentRun(config, schedule, out, records, played, seconds, workers, backend)
