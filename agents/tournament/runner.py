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
import pickle
import signal
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dominoes_env.cli_support import MAX_MATCHES
from dominoes_env.core import RuleConfig, match_winner
from dominoes_env.core.atomic_files import (
    FolderReplacedError,
    appending,
    check_folder_there,
    file_sha256,
    path_kind,
    write_json,
    writes_to,
)
from dominoes_env.core.errors import RecordError
from dominoes_env.core.validation import (
    DuplicateKeyError,
    as_bool,
    as_float,
    as_int,
    as_path,
    as_seed,
    is_finite_number,
    parse_json,
    short_repr,
    utf8_text,
)
from dominoes_env.optional import require
from dominoes_env.options import score_bound
from dominoes_env.record_io import RECORDS_DIR

from ..arena import DEFAULT_MAX_HANDS, DEFAULT_MOVE_TIMEOUT, MAX_MOVE_TIMEOUT, play_match
from .record_store import RecordStore, game_line
from .schedule import MatchJob, Schedule, check_agents, check_schedule_size, make_schedule

CONFIG_FILE = "config.json"
MATCHES_FILE = "matches.jsonl"
#: the largest config.json read back (one is a few hundred bytes)
MAX_CONFIG_BYTES = 1 << 20
#: the longest line of matches.jsonl read back (one is some 300 bytes to a few KB with its
#: decision times); a matches.jsonl is at most this many bytes per scheduled match
MAX_LINE_BYTES = 1 << 20
SUMMARY_FILE = "summary.json"
HEATMAP_FILE = "winrate_heatmap.png"
RATINGS_FILE = "ratings.png"
#: bump when the schedule or seeding scheme changes, so old directories are refused
SCHEME_VERSION = 1
BACKENDS = ("local", "ray")


class WorkerDiedError(ValueError):
    """A local worker process ended while it was playing matches."""


class TournamentDirError(ValueError):
    """The results directory cannot be used for this run (other arguments, corrupt file, busy)."""


@dataclass(frozen=True)
class TournamentConfig:
    """The arguments that decide a tournament's results. ``workers`` and ``backend`` are not
    among them: they change how fast, never what."""

    agents: Sequence[str]
    rules: RuleConfig = field(default_factory=RuleConfig)
    #: per pairing (rounded up to whole duplicate groups), 1..MAX_MATCHES (10**7), and at most
    #: MAX_MATCHES in all pairings together: the schedule is built whole, so 10**12 ran for
    #: ever, 10**9 ended in MemoryError and 5 agents at four players with 10**7 asked for 45 GB
    matches: int = 100
    seed: int = 0
    max_hands: int = DEFAULT_MAX_HANDS

    def __post_init__(self) -> None:
        if not isinstance(self.rules, RuleConfig):
            raise TypeError(f"rules must be a RuleConfig, got {self.rules!r}")
        object.__setattr__(self, "agents", check_agents(self.agents, self.rules))
        object.__setattr__(self, "matches", as_int("matches", self.matches, 1, MAX_MATCHES))
        # and at most MAX_MATCHES in all tables together (a forged config.json read back too)
        check_schedule_size(self.agents, self.rules, self.matches)
        object.__setattr__(self, "seed", as_seed(self.seed))
        object.__setattr__(self, "max_hands", as_int("max_hands", self.max_hands, 1))

    def to_dict(self) -> dict[str, Any]:
        return {
            "scheme": SCHEME_VERSION, "agents": list(self.agents), "matches": self.matches,
            "seed": self.seed, "max_hands": self.max_hands, "rules": self.rules.to_dict(),
        }  # fmt: skip

    def schedule(self) -> Schedule:
        return make_schedule(self.agents, self.rules, self.matches, self.seed)


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


# -- playing a job ----------------------------------------------------------------------------
def job_record(job: MatchJob, rules: RuleConfig, max_hands: int,
               keep_record: bool = False, move_timeout: float | None = None) -> dict[str, Any]:
    """Play one scheduled match and return its record (the line stored in ``matches.jsonl``);
    with ``keep_record`` its game record travels along under ``"_game"`` (removed before the
    line is stored)."""
    result = play_match(job.seats, rules, job.seed, max_hands=max_hands, keep_record=keep_record,
                        move_timeout=move_timeout)
    rec: dict[str, Any] = {"index": job.index, "key": job.key, "table": list(job.table),
                           "deal": job.deal}  # fmt: skip
    rec.update(result.to_record())
    rec["seats"] = list(job.seats)
    owners = [job.seats[rules.seats_of(side)[0]] for side in range(rules.num_sides)]
    rec["winner_agent"] = None if result.winner is None else owners[result.winner]
    if keep_record:
        rec["_game"] = result.game
    return rec


def play_batch(rules: dict, max_hands: int, jobs: Sequence[MatchJob],
               keep_record: bool = False, move_timeout: float | None = None) -> list[dict]:
    """Play several jobs in one worker call (the unit a pool chunk or a Ray task carries)."""
    cfg = RuleConfig.from_dict(rules)
    return [job_record(job, cfg, max_hands, keep_record, move_timeout) for job in jobs]


def _serve_batches(conn, inherited: list, rules: dict, max_hands: int, keep_record: bool,
                   move_timeout: float | None) -> None:
    """A local worker's loop: play each batch of jobs that arrives on ``conn`` and send back
    ``("ok", records)`` or ``("error", exception)``, until the parent is gone.

    ``inherited`` are the parent's ends of the workers' pipes, which a forked worker holds
    copies of: closed first, so that the parent's death reaches every worker as the end of its
    pipe."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C
    for other in inherited:
        other.close()
    cfg = RuleConfig.from_dict(rules)
    try:
        while True:
            jobs = conn.recv()
            try:
                reply: tuple[str, Any] = ("ok", [job_record(job, cfg, max_hands, keep_record,
                                                            move_timeout) for job in jobs])
            except Exception as err:  # an agent's fault, named by play_match: re-raised there
                reply = ("error", err)
            try:
                conn.send(reply)
            except (pickle.PicklingError, TypeError, AttributeError) as err:
                # an exception that cannot be pickled travels as its text
                conn.send(("error", RuntimeError(f"{type(err).__name__}: {err}")))
    except (EOFError, OSError):  # the parent closed the pipe, or died
        return


def _batches(jobs: Sequence[MatchJob], size: int) -> list[list[MatchJob]]:
    return [list(jobs[i : i + size]) for i in range(0, len(jobs), size)]


def batch_size(pending: int, parallel: int, cap: int) -> int:
    """Matches per dispatch: enough to keep dispatch overhead small next to play, small enough
    that every worker stays busy to the end and an interruption loses little.

    >>> batch_size(10, 2, 8), batch_size(2000, 2, 8), batch_size(100000, 4, 16)
    (1, 8, 16)
    """
    return max(1, min(cap, pending // (parallel * 32)))


# -- backends ---------------------------------------------------------------------------------
def _worker_died(proc) -> WorkerDiedError:
    # a worker that died (an agent calling os._exit, a crash in native code) takes its matches
    # with it: the run stops instead of waiting for them
    proc.join(1)
    return WorkerDiedError(
        f"a worker process died (exit code {proc.exitcode}) in the middle of a match: an agent "
        "ended or crashed the process it was playing in; the finished matches are kept "
        "(--workers 1 plays in this process)")


def _send(conn, proc, batch: list[MatchJob]) -> None:
    try:
        conn.send(batch)
    except OSError:  # its end of the pipe is gone: the worker died
        raise _worker_died(proc) from None


def iter_local(jobs: Sequence[MatchJob], config: TournamentConfig, workers: int,
               keep_record: bool = False, move_timeout: float | None = None) -> Iterator[dict]:
    """Records as matches finish: in this process for one worker, else on worker processes.

    Each worker has a pipe of its own and shares no lock or queue with the others, so a run
    that stops (an agent's error, a worker that died, Ctrl-C) can kill every worker at once
    and never waits on a lock that a killed or hung worker holds (``multiprocessing.Pool``'s
    ``terminate`` can: it sat in ``Thread.join`` for minutes behind a hung agent)."""
    rules = config.rules
    if workers == 1:
        for job in jobs:
            yield job_record(job, rules, config.max_hands, keep_record, move_timeout)
        return
    import multiprocessing
    from multiprocessing.connection import wait

    batches = _batches(jobs, batch_size(len(jobs), workers, 8))
    batches.reverse()  # pop() hands them out in schedule order
    args = (rules.to_dict(), config.max_hands, keep_record, move_timeout)
    procs = []
    try:
        busy = {}  # connection -> its worker, while a batch is out
        for _ in range(min(workers, len(batches))):
            conn, child = multiprocessing.Pipe()
            inherited = [c for _, c in procs] + [conn]
            proc = multiprocessing.Process(target=_serve_batches,
                                           args=(child, inherited, *args), daemon=True)
            proc.start()
            child.close()
            procs.append((proc, conn))
            _send(conn, proc, batches.pop())
            busy[conn] = proc
        while busy:
            ready = wait([*busy, *(proc.sentinel for proc in busy.values())])
            for conn, proc in list(busy.items()):
                if conn in ready or conn.poll():
                    try:
                        status, payload = conn.recv()
                    except EOFError:
                        status, payload = "died", None
                elif proc.sentinel in ready:
                    status, payload = "died", None
                else:
                    continue
                if status == "died":
                    raise _worker_died(proc)
                if status == "error":
                    raise payload
                yield from payload
                if batches:
                    _send(conn, proc, batches.pop())
                else:
                    del busy[conn]
    finally:
        for proc, _ in procs:  # nothing shared: killing a worker can never block another
            if proc.is_alive():
                proc.kill()
        for proc, conn in procs:
            proc.join()
            conn.close()


def _project_root() -> str:
    return str(Path(__file__).resolve().parents[2])


def iter_ray(jobs: Sequence[MatchJob], config: TournamentConfig, workers: int,
             address: str | None = None, keep_record: bool = False,
             move_timeout: float | None = None) -> Iterator[dict]:
    """Records as Ray tasks finish. Each task plays a batch of matches; at most two batches per
    CPU are in flight. Uses a Ray already initialised in this process, else connects to
    ``address`` (a running cluster, whose workers must have this package importable), else
    starts a local Ray with ``workers`` CPUs and shuts it down afterwards."""
    try:
        import ray
    except ImportError as err:
        raise ValueError(f"backend='ray' needs Ray: pip install 'ray[default]' ({err})") from None
    from ..ray_cluster import init_ray, shutdown_ray

    # the workers import agents by spec from this package and from this process's path
    # (code_search_path: no runtime environment to set up, no agent process to wait on)
    extra = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    started = init_ray(address=address, num_cpus=workers,
                       code_search_path=[] if address else [_project_root(), *filter(None, extra)])
    in_flight: list = []
    try:
        parallel = max(1, int(ray.cluster_resources().get("CPU", workers)))
        task = ray.remote(num_cpus=1)(play_batch)
        rules_ref = ray.put(config.rules.to_dict())
        batches = _batches(jobs, batch_size(len(jobs), parallel, 16))
        batches.reverse()
        while batches or in_flight:
            while batches and len(in_flight) < 2 * parallel:
                in_flight.append(task.remote(rules_ref, config.max_hands, batches.pop(),
                                             keep_record, move_timeout))
            done, in_flight = ray.wait(in_flight, num_returns=1)
            for ref in done:
                yield from ray.get(ref)
    finally:
        for ref in in_flight:
            ray.cancel(ref, force=True)
        if started:
            shutdown_ray()


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


# -- the results directory --------------------------------------------------------------------
def _describe_mismatch(old: dict, new: dict) -> str:
    diffs = []
    for key in sorted(set(old) | set(new)):
        if key == "rules" and isinstance(old.get(key), dict) and isinstance(new.get(key), dict):
            for r in sorted(set(old[key]) | set(new[key])):
                if old[key].get(r) != new[key].get(r):
                    diffs.append(f"rules.{r}: {old[key].get(r)!r} there, {new[key].get(r)!r} now")
        elif old.get(key) != new.get(key):
            diffs.append(f"{key}: {old.get(key)!r} there, {new.get(key)!r} now")
    return "; ".join(diffs)


def prepare_dir(out: Path, config: TournamentConfig) -> None:
    """Create ``out`` with this run's ``config.json``, or check that an existing one matches."""
    if out.exists() and not out.is_dir():
        raise TournamentDirError(f"the output folder {str(out)!r} is a file, not a folder")
    check_folder_there(out)  # a benchmark's cell: its removed run folder is not made again
    out.mkdir(parents=True, exist_ok=True)
    for name in (CONFIG_FILE, MATCHES_FILE):  # a FIFO would block the run, a link to /dev/zero
        here = out / name                      # fill the memory, a link to a file append to it
        if os.path.lexists(here) and not (here.is_file() and not here.is_symlink()):
            raise TournamentDirError(f"{str(here)!r} is {path_kind(here)}, not a regular "
                                     "file; remove it, or use another output folder")
    path = out / CONFIG_FILE
    wanted = config.to_dict()
    files = agent_files(config.agents)
    if files:
        wanted[AGENT_FILES] = files
    if path.exists():
        try:
            old = read_config_json(path)
        except (OSError, ValueError, RecursionError) as err:
            raise TournamentDirError(f"{path} is unreadable ({err}); use another output "
                                     "folder") from None
        if AGENT_FILES not in old:  # a run started before config.json held them: unchecked
            wanted.pop(AGENT_FILES, None)
        changed = _changed_agent_files(old.get(AGENT_FILES), wanted.get(AGENT_FILES))
        if changed and {**old, AGENT_FILES: None} == {**wanted, AGENT_FILES: None}:
            raise TournamentDirError(
                f"{out} holds a tournament whose agents read {changed}, and that file changed "
                "since the run started (its sha256 differs): resumed, the same agent name "
                "would stand for two players; put the file back to resume it, or choose "
                "another output folder")
        if old != wanted:
            raise TournamentDirError(
                f"{out} holds a tournament with different arguments "
                f"({_describe_mismatch(old, wanted)}). "
                "Repeat the original arguments to resume it, or choose another output folder."
            )
        return
    if (out / MATCHES_FILE).exists():
        raise TournamentDirError(
            f"{out} has {MATCHES_FILE} but no {CONFIG_FILE}: its arguments are unknown, so its "
            f"matches cannot be resumed; put {CONFIG_FILE} back, start afresh there with "
            "overwrite=True (--overwrite), or use another output folder"
        )
    write_json(path, wanted)


def read_config_json(path: Path) -> dict[str, Any]:
    """A run's ``config.json`` as a dict (at most :data:`MAX_CONFIG_BYTES`: a config is a few
    hundred bytes); ``ValueError`` (or ``OSError``) if it is not one."""
    with open(path, "rb") as f:
        text = f.read(MAX_CONFIG_BYTES + 1)
    if len(text) > MAX_CONFIG_BYTES:
        raise ValueError(f"larger than {MAX_CONFIG_BYTES:,} bytes")
    data = parse_json(utf8_text(text))  # bytes: json.loads took UTF-16 and UTF-32 as well
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    return data


#: the key of config.json that holds the files the agents' specs name, with their sha256
AGENT_FILES = "agent_files"


def agent_files(specs: Sequence[str]) -> dict[str, str]:
    """The regular files that agent specs name (``ppo:p.npz``, ``guided:policy=p.npz``), each
    with the sha256 of its bytes: a tournament resumed after one was replaced would add the new
    policy's matches to the old one's under the same name."""
    from dominoes_env.cli_support import paths_in_specs

    found = {}
    for path in paths_in_specs(specs):
        if os.path.isfile(path):
            found[path] = file_sha256(path)
    return found


def _changed_agent_files(old: Any, new: Any) -> str | None:
    """The first file (quoted) that the agents read whose digest differs in ``new``."""
    if not isinstance(old, dict) or not isinstance(new, dict):
        return None
    for path, digest in new.items():
        if path in old and old[path] != digest:
            return repr(path)
    return None


#: the fields of every line a run writes (``first_leader`` and ``decision_times`` came later)
LINE_FIELDS = ("index", "key", "table", "deal", "seats", "seed", "scores", "winner", "hands",
               "plays", "seat_points", "duration_s", "winner_agent")


def _line_problem(rec: Any, jobs: dict[str, MatchJob], rules: RuleConfig,
                  max_hands: int) -> str | None:
    """What is wrong with one line of ``matches.jsonl`` (``None``: a match of this schedule,
    ended as the rules let a match end). A line is untrusted: one whose scores no match can
    reach (``[-5, 10**25]``), or whose winner the scores contradict, was counted as it said
    by every table and card, where no game record is kept to replay it."""
    if not isinstance(rec, dict):
        return "not a JSON object"
    missing = [k for k in ("index", "key", "seats", "scores", "winner", "hands") if k not in rec]
    if missing:
        return f"missing {', '.join(missing)}"
    job = jobs.get(rec["key"]) if isinstance(rec["key"], str) else None
    if job is None:
        return f"match {short_repr(rec['key'])} is not in this tournament's schedule"
    if type(rec["index"]) is not int or rec["index"] != job.index:  # the key is right
        return (f"its index {short_repr(rec['index'])} is not {job.index}, the schedule's "
                f"index of match {short_repr(rec['key'])}")
    if rec["seats"] != list(job.seats):
        return "its seats differ from the schedule's"
    if "seed" not in rec:
        return "missing seed"
    if type(rec["seed"]) is not int or rec["seed"] != job.seed:
        # a line of another run (another --seed) keeps its own deals: it was reported as
        # this run's match in silence
        return (f"its match seed {short_repr(rec['seed'])} is not this tournament's "
                f"{job.seed} for that match: it is a match of another run (another --seed?)")
    missing = [k for k in LINE_FIELDS if k not in rec]
    if missing:
        return f"missing {', '.join(missing)}"
    if rec["table"] != list(job.table) or type(rec["deal"]) is not int or rec["deal"] != job.deal:
        return "its table or deal differs from the schedule's"
    return (_outcome_problem(rec, rules, max_hands) or _tally_problem(rec, rules)
            or _winner_agent_problem(rec, job, rules))


def _outcome_problem(rec: dict, rules: RuleConfig, max_hands: int) -> str | None:
    """What in a line's ``scores``, ``winner`` and ``hands`` no match can end with: a match
    ends when the rules give it a winner (:func:`match_winner`, which a win by play agrees
    with), or undecided after exactly ``max_hands`` hands; scores are multiples of 5 that no
    hand raises by more than :func:`score_bound` points."""
    scores, winner, hands, sides = rec["scores"], rec["winner"], rec["hands"], rules.num_sides
    if not isinstance(scores, list) or len(scores) != sides or any(type(x) is not int
                                                                     for x in scores):
        return f"scores must be {sides} integers"
    if winner is not None and (type(winner) is not int or not 0 <= winner < sides):
        return f"winner must be a side (0..{sides - 1}) or null"
    if type(hands) is not int or not 1 <= hands <= max_hands:
        return f"hands must be an integer in 1..{max_hands} (max_hands), not {short_repr(hands)}"
    most = hands * score_bound(rules, "hand")
    if any(not 0 <= x <= most or x % 5 for x in scores):
        return (f"scores must be multiples of 5 in 0..{most:,} (what {hands} hands can score "
                f"at most), not {short_repr(scores)}")
    target, check = rules.target_score, rules.win_check
    if winner is None and hands != max_hands:
        return (f"an undecided match (winner null) is stopped after max_hands={max_hands} "
                f"hands, not {hands}")
    if winner != match_winner(scores, target, check) or (check == "immediate" and any(
            x >= target for side, x in enumerate(scores) if side != winner)):
        return (f"scores {short_repr(scores)} do not end a match to {target} "
                f"(win_check {check!r}) with winner {short_repr(winner)}")
    return None


def _tally_problem(rec: dict, rules: RuleConfig) -> str | None:
    """What in a line's ``plays``, ``seat_points``, ``first_leader`` and ``duration_s``
    disagrees with its (checked) outcome: every hand plays 1 to all tiles, a seat's plays
    score multiples of 5, and a side's score is its seats' points plus its hand awards."""
    hands, n = rec["hands"], rules.num_players
    plays, points = rec["plays"], rec["seat_points"]
    if type(plays) is not int or not hands <= plays <= hands * rules.num_tiles:
        return (f"plays must be an integer in {hands}..{hands * rules.num_tiles} (1 to "
                f"{rules.num_tiles} per hand), not {short_repr(plays)}")
    if not isinstance(points, list) or len(points) != n or any(
            type(x) is not int or x < 0 or x % 5 for x in points):
        return f"seat_points must be {n} multiples of 5, each >= 0"
    for side, score in enumerate(rec["scores"]):
        if sum(points[seat] for seat in rules.seats_of(side)) > score:
            return (f"side {side}'s seats scored {short_repr(points)} in plays, more than "
                    f"its score {score}")
    leader = rec.get("first_leader", 0)  # a line written before it was kept has none
    if type(leader) is not int or not 0 <= leader < n:
        return f"first_leader must be a seat (0..{n - 1})"
    seconds = rec["duration_s"]
    if not is_finite_number(seconds) or seconds < 0:  # 10**400: math.isfinite overflowed
        return f"duration_s must be a finite number >= 0, not {short_repr(seconds)}"
    return None


def _winner_agent_problem(rec: dict, job: MatchJob, rules: RuleConfig) -> str | None:
    """Whether ``winner_agent`` names the agent at the winning side's first seat (null for
    an undecided match), as :func:`job_record` writes it."""
    winner = rec["winner"]
    wanted = None if winner is None else job.seats[rules.seats_of(winner)[0]]
    if type(rec["winner_agent"]) is not type(wanted) or rec["winner_agent"] != wanted:
        return (f"winner_agent {short_repr(rec['winner_agent'])} is not {short_repr(wanted)}, "
                f"the agent of winner {short_repr(winner)}")
    return None


def match_lines(path: Path, matches: int, *, end: int | None = None
                ) -> Iterator[tuple[int, bytes, int]]:
    """The complete lines of the ``matches.jsonl`` at ``path`` of a run of ``matches``
    scheduled matches, each with its number and the offset just after it, read one at a time
    (as far as offset ``end``, if given); a half-written last line is left out. A file larger
    than :data:`MAX_LINE_BYTES` per scheduled match, or a line longer than that, is a
    :class:`TournamentDirError`: a 40 GB file was read whole, into a ``MemoryError``."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        most = MAX_LINE_BYTES * max(matches, 1)
        if size > most:
            raise TournamentDirError(
                f"{path} is {size:,} bytes; a tournament of {matches:,} matches writes at most "
                f"{most:,} (MAX_LINE_BYTES a match): it is no matches file of this run; remove "
                "it, or use another output folder")
        number = offset = 0
        while end is None or offset < end:
            line = f.readline(MAX_LINE_BYTES + 1)
            if len(line) > MAX_LINE_BYTES:
                raise TournamentDirError(
                    f"{path}:{number + 1} is longer than {MAX_LINE_BYTES:,} bytes, no match "
                    "record; the file is damaged: remove that line, or use another output "
                    "folder")
            if not line.endswith(b"\n"):  # the end, or a line still being written
                return
            number, offset = number + 1, offset + len(line)
            yield number, line, offset


def load_records(path: Path, schedule: Schedule, rules: RuleConfig,
                 max_hands: int, *, repair: bool = True, end: int | None = None) -> list[dict]:
    """The finished matches in ``path`` (a tournament's of ``rules`` and ``max_hands``), after
    cutting off a half-written last line (``repair=False``: only ignored, the file left as it
    is, for a reader beside a run that may be writing that line now), read line by line
    (:func:`match_lines`; only as far as offset ``end``, if given) as strict UTF-8 text."""
    if not path.exists():
        return []
    jobs = {job.key: job for job in schedule.jobs}
    records: dict[str, dict] = {}
    first: dict[str, int] = {}  # the line each match was read from
    complete = 0  # the bytes of the complete lines
    for number, line, offset in match_lines(path, len(schedule.jobs), end=end):
        complete = offset
        if not line.strip():
            continue
        problem = None
        try:
            rec = parse_json(utf8_text(line, bom=number == 1))  # a mark only starts the file
        except DuplicateKeyError as err:  # another reader may take the other value
            raise TournamentDirError(f"{path}:{number} is not a match record of this tournament "
                                     f"({err}); the file is damaged: remove that line, or use "
                                     "another output folder") from None
        except (ValueError, RecursionError) as err:  # bytes: json.loads took UTF-16 and -32
            rec, problem = None, str(err) if str(err).startswith("it is not UTF-8") else None
        problem = problem or _line_problem(rec, jobs, rules, max_hands)
        if problem:
            raise TournamentDirError(
                f"{path}:{number} is not a match record of this tournament ({problem}); the "
                "file is damaged: remove that line, or use another output folder") from None
        seen = records.setdefault(rec["key"], rec)
        if seen is rec:
            first[rec["key"]] = number
        elif seen != rec:  # a run writes a match once: a second, other line was put there
            raise TournamentDirError(
                f"{path}:{number} is a second record of match {short_repr(rec['key'])}, unlike "
                f"the first (line {first[rec['key']]}); the file is damaged: remove the wrong "
                "line, or use another output folder")
    if repair and end is None and os.path.getsize(path) > complete:
        with open(path, "r+b") as f:  # killed in the middle of a write: drop the unfinished line
            f.truncate(complete)
    return sorted(records.values(), key=lambda r: r["index"])


#: every file a run writes into its directory (the report adds summary.json and the plots)
OUTPUT_FILES = (CONFIG_FILE, MATCHES_FILE, SUMMARY_FILE, HEATMAP_FILE, RATINGS_FILE)


def matches_kept(out: str | os.PathLike) -> bool:
    """Whether the run folder ``out`` keeps a finished match (a line of its matches.jsonl)."""
    try:
        return os.path.getsize(os.path.join(out, MATCHES_FILE)) > 0
    except OSError:
        return False


def clear_results(out: str | os.PathLike) -> None:
    """Remove a previous tournament's files from ``out`` (only the files a run writes, the
    game records and its run marker included; the user's other files stay), so the next run
    starts afresh. A missing folder, or one that holds none of them, is fine. A folder that
    is not a tournament's (another program's run, a dataset, the user's own files), or a
    symbolic link, is a :class:`TournamentDirError` naming it, and nothing is removed
    (:func:`dominoes_env.cli_support.clear_run`)."""
    from dominoes_env.cli_support import RefusedError, clear_run

    try:
        clear_run(out, TOURNAMENT_PROGRAMS, proof=tournament_proof)
    except RefusedError as err:
        raise TournamentDirError(str(err)) from None


#: the programs whose run folder is a tournament's (a demo plays one)
TOURNAMENT_PROGRAMS = ("experiments.tournament", "experiments.demo")


def tournament_proof(out: str) -> str | None:
    """What keeps the folder ``out``, which has no run marker, from being a tournament's
    (``None``: nothing): its ``config.json``, and no file a tournament does not write (a
    dataset's ``dataset.json``)."""
    from dominoes_env.cli_support import RUN_MARKER

    others = [name for name in sorted(os.listdir(out))
              if name not in (*RUN_OUTPUTS, RUN_MARKER)]
    if others:
        return f"it holds {', '.join(map(repr, others[:3]))}, which no tournament writes"
    if not os.path.isfile(os.path.join(out, CONFIG_FILE)) or os.path.islink(
            os.path.join(out, CONFIG_FILE)):
        return f"no {CONFIG_FILE}"
    return None


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


#: the program whose run a tournament's folder holds (its run marker names it)
PROGRAM = "experiments.tournament"
#: what a tournament writes into its folder
RUN_OUTPUTS = (*OUTPUT_FILES, RECORDS_DIR)


def check_folder(out: str | os.PathLike, config: TournamentConfig, program: str,
                 outputs: Sequence[str], *, overwrite: bool = False):
    """The command's output policy for a run folder ``out`` given to a function
    (:func:`dominoes_env.cli_support.check_run_folder`, its refusals a ``ValueError`` naming
    ``out`` and ``overwrite=True``, never a flag; a :class:`TournamentDirError`): a symbolic
    link, another program's run (a trainer's, a dataset's) or a folder of other files is
    refused, as the command refuses them; they were written through, or diffed as "a
    tournament with different arguments"."""
    from dominoes_env.cli_support import RefusedError, check_run_folder, paths_in_specs

    try:
        return check_run_folder(out, program, config.to_dict(), rerun_resumes=True,
                                overwrite=overwrite, outputs=outputs,
                                inputs=paths_in_specs(config.agents), flag="out")
    except RefusedError as err:
        raise TournamentDirError(str(err)) from None


def _folder_locks(own: bool):
    """The run folder's lock, released on return where this function started the run folder
    (a command's runner releases its own)."""
    import contextlib

    from dominoes_env.cli_support import run_folder_locks

    return run_folder_locks() if own else contextlib.nullcontext()


def max_workers() -> int:
    """The most local worker processes worth starting: the CPUs this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


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
