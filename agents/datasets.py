"""Decision datasets for imitation learning and offline RL: the game records of a tournament
and every decision in them as arrays.

:func:`build_dataset` plays the games as a tournament (:mod:`agents.tournament`: duplicate deals,
seats exchanged, every match seeded, resumable: call it again on the same directory after an
interruption) with ``save_records=True``. The directory then holds:

- ``config.json``, ``matches.jsonl``, ``records/records-NNNN.jsonl.gz``: the tournament and
  every match's game record (``python -m dominoes_env replay DIR --match INDEX --html m.html``
  watches one);
- ``decisions/decisions-NNNN.npz``: one per records shard, the decisions of its matches, row
  by row in play order (arrays below); each is written whole (temporary file, then rename);
- ``dataset.json``: the format version, the observation version and size, the number of
  actions, the agents (``agent`` indexes this list), the rules and the counts.

Arrays of a ``decisions-NNNN.npz`` (N rows, one per play, forced plays included; none for a
records shard that holds no record):

==============  ==================  ===========================================================
``obs``         float32 [N, O]      the acting seat's observation (``encode_observation``)
``mask``        bool [N, A]         its legal actions (``action_mask``)
``action``      int64 [N]           the action taken (tile index * 4 + end)
``seat``        int8 [N]            the acting seat
``agent``       int16 [N]           which agent acted (index into ``dataset.json["agents"]``)
``match``       int64 [N]           the match's schedule index (its line in ``matches.jsonl``)
``hand``        int16 [N]           the hand of the match, from 0
``points``      int16 [N]           points the play scored at once
``hand_margin`` int16 [N]           in that hand, the acting side's points minus the best
                                    other side's (plays and award): a per-hand return
``outcome``     int8 [N]            +1 the acting side won the match, -1 lost, 0 undecided
==============  ==================  ===========================================================

:func:`load_decisions` reads them back as one dict of arrays, every file checked as untrusted
input (:func:`dataset_info`: the metadata's format, version, fields and sizes;
:func:`read_decisions`: no pickle, each array's dtype and shape, finite observations, actions
within the action space and legal under their masks): a bad one is a ``ValueError`` naming the
file and the problem;
:func:`agents.imitation.dataset_demonstrations` turns them into what behaviour cloning fits
(``python -m experiments.train_ppo --bc-dataset DIR``). The command line that builds one is
``python -m experiments.make_dataset``.
"""

from __future__ import annotations

import os
import re
import stat
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from dominoes_env.core import MatchState, RecordError, RuleConfig
from dominoes_env.core.atomic_files import atomic_write, write_json
from dominoes_env.core.records import record_rules, replay_steps
from dominoes_env.core.validation import (
    DuplicateKeyError,
    ParameterTypeError,
    as_bool,
    as_path,
    as_seed,
    is_count,
    parse_json,
    short_repr,
)
from dominoes_env.npz_files import NpzError, read_npz
from dominoes_env.obs.actions import action_mask
from dominoes_env.obs.v2 import VERSION as OBS_VERSION
from dominoes_env.obs.v2 import encode_observation, observation_layout, observation_size
from dominoes_env.options import play_points_bound, score_bound
from dominoes_env.record_io import (
    MAX_SCHEDULE_INDEX,
    RECORDS_DIR,
    SHARD_SIZE,
    iter_records,
    shard_name,
)

from .specs import parse_spec
from .tournament.runner import RUN_OUTPUTS, TournamentConfig, check_folder, run_tournament

__all__ = ["DECISIONS_DIR", "FIELDS", "FORMAT_VERSION", "INFO_FILE", "IncompleteDatasetWarning",
           "build_dataset", "dataset_info", "load_decisions", "mask_problem", "read_decisions",
           "record_decisions", "specs_problem", "write_decisions"]

FORMAT_VERSION = 1
DECISIONS_DIR = "decisions"
INFO_FILE = "dataset.json"
#: the program whose run a dataset's folder holds (its run marker names it)
PROGRAM = "experiments.make_dataset"
FIELDS = ("obs", "mask", "action", "seat", "agent", "match", "hand", "points", "hand_margin",
          "outcome")  # fmt: skip


def record_decisions(record: dict, agents: list[str], *,
                     observations: bool = True) -> dict[str, np.ndarray]:
    """Every play of a tournament's game record as rows of the arrays above (the record's
    ``match`` field gives the schedule index and the agents by seat). ``observations=False``
    leaves out ``obs`` and ``mask``, the costly part, where only the other columns are wanted."""
    if not isinstance(agents, (list, tuple)) or not all(isinstance(a, str) for a in agents):
        raise ParameterTypeError(f"agents must be a list of agent specs, got "
                                 f"{short_repr(agents)}")  # a str was searched for substrings
    rules, _hands = record_rules(record)
    index, seats = _match_of(record, rules)
    seat_agent = []
    for seat, spec in enumerate(seats):
        if spec not in agents:
            raise RecordError(f"the record's match.seats[{seat}] {short_repr(spec)} is none of "
                              f"the agents {short_repr(list(agents))}")
        seat_agent.append(agents.index(spec))
    match = MatchState(rules, auto_deal=False)
    cols: dict[str, list] = {k: [] for k in FIELDS}
    for step in replay_steps(record):  # each hand's positions, then where the record leaves it
        match = step.match
        if step.move == 0:
            start = list(match.scores)
            first = len(cols["action"])
        if step.code is not None:
            seat = step.seat
            if observations:
                view = match.view(seat)
                cols["obs"].append(encode_observation(view))
                cols["mask"].append(action_mask(view).astype(bool))
            cols["action"].append(step.code)
            cols["seat"].append(seat)
            cols["agent"].append(seat_agent[seat])
            cols["match"].append(index)
            cols["hand"].append(step.hand)
            cols["points"].append(step.points)
            continue
        gained = [b - a for a, b in zip(start, match.scores, strict=True)]
        for row in range(first, len(cols["action"])):
            side = rules.side_of(cols["seat"][row])
            others = [g for s, g in enumerate(gained) if s != side]
            cols["hand_margin"].append(gained[side] - max(others))
    winner = match.winner
    cols["outcome"] = [0 if winner is None else (1 if rules.side_of(s) == winner else -1)
                       for s in cols["seat"]]
    arrays = _arrays(cols, rules)
    return arrays if observations else {k: v for k, v in arrays.items()
                                        if k not in ("obs", "mask")}


def _match_of(record: dict, rules: RuleConfig) -> tuple[int, list]:
    """The schedule index (0..MAX_SCHEDULE_INDEX) and the agents by seat of a tournament's game
    record (its ``match`` field), or a ``RecordError`` naming what is missing or wrong (a
    missing key, an index of ``2**70`` or ``-3``)."""
    meta = record.get("match")
    if not isinstance(meta, dict):
        raise RecordError("the record has no 'match' object (a tournament's game record holds "
                          "its schedule index and seats there)")
    index = meta.get("index")
    if not is_count(index) or index > MAX_SCHEDULE_INDEX:
        raise RecordError(f"the record's match.index {short_repr(index)} is no schedule index; "
                          f"allowed: 0..{MAX_SCHEDULE_INDEX}")
    seats = meta.get("seats")
    if not isinstance(seats, list) or len(seats) != rules.num_players:
        raise RecordError(f"the record's match.seats {short_repr(seats)} must list the agent "
                          f"of each of its {rules.num_players} seats")
    return index, seats


def _arrays(cols: dict[str, list], rules: RuleConfig) -> dict[str, np.ndarray]:
    n_obs = observation_size(rules)
    n_act = rules.tiles.num_tiles * 4
    return {
        "obs": np.array(cols["obs"], dtype=np.float32).reshape(-1, n_obs),
        "mask": np.array(cols["mask"], dtype=bool).reshape(-1, n_act),
        "action": np.array(cols["action"], dtype=np.int64),
        "seat": np.array(cols["seat"], dtype=np.int8),
        "agent": np.array(cols["agent"], dtype=np.int16),
        "match": np.array(cols["match"], dtype=np.int64),
        "hand": np.array(cols["hand"], dtype=np.int16),
        "points": np.array(cols["points"], dtype=np.int16),
        "hand_margin": np.array(cols["hand_margin"], dtype=np.int16),
        "outcome": np.array(cols["outcome"], dtype=np.int8),
    }


def _save_npz(path: Path, arrays: dict[str, np.ndarray]) -> None:
    with atomic_write(path, "wb") as f:
        np.savez_compressed(f, **arrays)


def write_decisions(out: Path, config: TournamentConfig) -> dict[str, int]:
    """Turn every records shard into its ``decisions/*.npz`` (keeping a file already there
    whose arrays are exactly those its records replay to; another is written again with a
    one-line warning); returns the counts. A damaged records shard, or one holding a match
    twice, is a ``RecordError`` naming it (a resumed :func:`build_dataset` repairs the shards
    before they get here)."""
    agents = list(config.agents)
    rules = config.rules
    info = {"rules": rules.to_dict(), "agents": agents, "observation_size":
            observation_size(rules), "num_actions": rules.tiles.num_tiles * 4}
    folder = out / DECISIONS_DIR
    folder.mkdir(exist_ok=True)
    matches = decisions = 0
    for shard in sorted((out / RECORDS_DIR).glob("records-*.jsonl.gz")):
        records = _shard_records(shard)
        target = folder / shard.name.replace("records-", "decisions-").replace(".jsonl.gz", ".npz")
        indexes = [r["match"]["index"] for r in records]
        arrays = _joined([record_decisions(r, agents) for r in records], rules)
        if target.exists():
            problem = _kept_problem(target, info, arrays, indexes)
            if problem is None:  # the file as it stands: not rewritten
                matches += len(records)
                decisions += len(arrays["action"])
                continue
            print(f"warning: {DECISIONS_DIR}/{target.name}: {problem}; written again from the "
                  "game records", file=sys.stderr)
        _save_npz(target, arrays)
        matches += len(records)
        decisions += len(arrays["action"])
    return {"matches": matches, "decisions": decisions}


def _joined(parts: list[dict[str, np.ndarray]], rules: RuleConfig) -> dict[str, np.ndarray]:
    """The rows of ``parts`` (each match's :func:`record_decisions`) as one set of arrays, of
    no rows where there are none: a records shard may hold no record (a resume drops every
    record of a shard that holds none of the schedule's matches, and leaves it empty), and
    the dataset's files are written all the same."""
    if not parts:
        return _arrays({k: [] for k in FIELDS}, rules)
    return {k: np.concatenate([p[k] for p in parts]) for k in FIELDS}


def _kept_problem(target: Path, info: dict[str, Any], want: dict[str, np.ndarray],
                  indexes: list[int]) -> str | None:
    """Why the decisions file ``target``, found on resume, is not kept (``None``: it is
    exactly ``want``, what its records shard replays to)."""
    try:
        old = read_decisions(target, info)
    except ValueError as err:  # damaged, or not this dataset's
        return str(err).removeprefix(f"{target}: ")
    held = sorted(set(old["match"].tolist()))
    if held != indexes:
        return "its matches are not those of its records shard"
    return _rows_problem(old, want, indexes)


def _rows_problem(old: dict[str, np.ndarray], want: dict[str, np.ndarray],
                  indexes: list[int]) -> str | None:
    """How the rows of a decisions file kept on resume disagree with ``want``, the arrays its
    matches' game records replay to (``None``: they agree exactly): each match's plays, one
    row each in play order, every field compared. A file with a match's last rows cut, rows
    repeated, an action changed, an observation bit flipped or an illegal action marked legal
    in a mask disagrees, even where it is readable and for the same matches, so it is never
    kept in a dataset called complete."""
    for index in indexes:
        rows, wanted = old["match"] == index, want["match"] == index
        held, plays = int(rows.sum()), int(wanted.sum())
        if held != plays:
            return f"match {index} has {held:,} decisions; its game record has {plays:,} plays"
        for key in FIELDS:
            have, column = old[key][rows], want[key][wanted]
            differs = have != column
            bad = np.flatnonzero(differs.any(axis=1) if differs.ndim > 1 else differs)
            if not bad.size:
                continue
            row = bad[0]
            if column.ndim > 1:  # obs, mask: the first column that differs
                col = int(np.flatnonzero(have[row] != column[row])[0])
                return (f"match {index}, decision {row}: {key}[{col}] is "
                        f"{float(have[row, col]):g}; its game record replays to "
                        f"{float(column[row, col]):g}")
            return (f"match {index}, decision {row}: {key} {have[row]}; its game record "
                    f"replays to {column[row]}")
    return None


def _shard_records(shard: Path) -> list[dict]:
    """The records of a tournament's shard by match index; ``RecordError`` for a damaged
    member, a record without its match index or a match recorded twice."""
    by_index: dict[int, dict] = {}
    for record in iter_records(shard):
        meta = record.get("match") if isinstance(record, dict) else None
        index = meta.get("index") if isinstance(meta, dict) else None
        if type(index) is not int:
            raise RecordError(f"{str(shard)!r} holds a record without its match index")
        if index in by_index:
            raise RecordError(f"{str(shard)!r} holds two records of match {index}; resuming "
                              "the dataset's tournament repairs it")
        by_index[index] = record
    return [by_index[i] for i in sorted(by_index)]


#: the most hands a dataset's match may run to (``max_hands``): the ``hand`` field is int16
MAX_HANDS = int(np.iinfo(np.int16).max) + 1


def check_config(config: TournamentConfig) -> None:
    """``ValueError`` unless the decision arrays can hold the games of ``config``: a
    ``max_hands`` past :data:`MAX_HANDS` (33,000, say) is refused before any game is played,
    since hand 32,768 does not fit the int16 ``hand`` field."""
    if config.max_hands > MAX_HANDS:
        raise ValueError(f"max_hands={config.max_hands:,}: a dataset's hand numbers are int16; "
                         f"allowed: at most {MAX_HANDS:,}")


def build_dataset(config: TournamentConfig, out: str | os.PathLike, *, workers: int = 1,
                  progress: bool = True, overwrite: bool = False,
                  before_writing: Callable[[], object] | None = None) -> dict[str, Any]:
    """Play the games (resuming what ``out`` already holds), write the decision arrays and
    ``dataset.json``; returns its content. ``overwrite`` and ``before_writing``: as
    :func:`run_tournament`'s (``out`` gets the output policy of make_dataset's ``--out``).
    ``ValueError`` first for a ``config`` the arrays cannot hold (:func:`check_config`)."""
    if not isinstance(config, TournamentConfig):  # None failed deep inside: no 'max_hands'
        raise TypeError(f"config must be a TournamentConfig, not {type(config).__name__}")
    check_config(config)
    out = Path(as_path("out", out))
    overwrite = as_bool("overwrite", overwrite)
    if before_writing is None:  # the command's folder policy (a tournament's folder, a link
        from dominoes_env.cli_support import run_folder_locks, start_run_folder  # refused)

        run = check_folder(out, config, PROGRAM, (*RUN_OUTPUTS, DECISIONS_DIR, INFO_FILE),
                           overwrite=overwrite)
        with run_folder_locks():
            return build_dataset(config, out, workers=workers, progress=progress,
                                 before_writing=lambda: start_run_folder(run))
    if overwrite:
        raise ValueError("overwrite=True is for a folder build_dataset checks itself; a "
                         "caller passing before_writing checked its folder already")
    folder = out / DECISIONS_DIR
    if os.path.lexists(folder) and not (folder.is_dir() and not folder.is_symlink()):
        raise ValueError(f"{str(folder)!r} is not a folder; the decision arrays go there: "
                         "remove it, or use another output folder")  # found before the games
    run = run_tournament(config, out, workers=workers, progress=progress, save_records=True,
                         before_writing=before_writing)
    counts = write_decisions(out, config)
    rules = config.rules
    info = {
        "format": FORMAT_VERSION, "obs_version": OBS_VERSION,
        "observation_size": observation_size(rules), "num_actions": rules.tiles.num_tiles * 4,
        "agents": list(config.agents), "rules": rules.to_dict(), "seed": config.seed,
        "max_hands": config.max_hands, "fields": list(FIELDS), **counts,
        "complete": run.complete,
    }  # fmt: skip
    write_json(out / INFO_FILE, info)
    return info


#: the largest ``dataset.json`` read (one is about a kilobyte)
MAX_INFO_BYTES = 1 << 20
#: the most one ``decisions-NNNN.npz`` may expand to (1,000 matches take some 100 MB)
MAX_SHARD_BYTES = 4 << 30
#: each array's dtype and, after the row, its width (``"obs"``: the observation size,
#: ``"act"``: the number of actions)
ARRAY_TYPES = {
    "obs": (np.float32, "obs"), "mask": (np.bool_, "act"), "action": (np.int64, None),
    "seat": (np.int8, None), "agent": (np.int16, None), "match": (np.int64, None),
    "hand": (np.int16, None), "points": (np.int16, None), "hand_margin": (np.int16, None),
    "outcome": (np.int8, None),
}  # fmt: skip


def _read_info(file: Path) -> Any:
    """The JSON of ``dataset.json``, read as untrusted input (a regular file, at most
    :data:`MAX_INFO_BYTES`, never blocking on a FIFO)."""
    try:
        fd = os.open(file, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as err:
        raise ValueError(err.strerror) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ValueError("not a regular file")
    with os.fdopen(fd, "rb") as f:
        data = f.read(MAX_INFO_BYTES + 1)
    if len(data) > MAX_INFO_BYTES:
        raise ValueError(f"larger than {MAX_INFO_BYTES:,} bytes")
    try:
        return parse_json(data)
    except DuplicateKeyError as err:
        raise ValueError(str(err)) from None
    except (ValueError, RecursionError) as err:
        raise ValueError(f"not JSON: {err}") from None


def specs_problem(specs: list[str]) -> str | None:
    """The first of ``specs`` (strings) that names no agent, said as
    :func:`~agents.specs.parse_spec` says it (``None``: each names one). Nothing is imported
    or built: a file may name an agent of a module this machine lacks, but not text that no
    agent spec has (``"no::such spec"``). A dataset's agents and expert iteration's teacher
    and opponents are checked here, so such text never becomes a dataset's agent or the
    teacher an expert iteration policy's card names."""
    for spec in specs:
        try:
            parse_spec(spec)
        except ValueError as err:
            return str(err)
    return None


def _info_problem(info: dict) -> str | None:
    """What in a parsed ``dataset.json`` this code cannot read (``None``: nothing)."""
    try:
        rules = RuleConfig.from_dict(info["rules"])
    except (ValueError, TypeError) as err:
        return f"rules: {err}"
    missing = [name for name in RuleConfig.field_names() if name not in info["rules"]]
    if missing:  # a default would be assumed for a rule the games may not have been played by
        return (f"rules lack {', '.join(missing)} (a dataset's rules are written whole; no "
                "default is assumed)")
    agents = info["agents"]
    if (not isinstance(agents, list) or not agents or len(set(map(str, agents))) < len(agents)
            or not all(isinstance(a, str) for a in agents)):
        return "agents must be a list of different agent specs"
    problem = specs_problem(agents)
    if problem:
        return f"agents: {problem}"
    if len(agents) > np.iinfo(np.int16).max:
        return f"{len(agents)} agents; at most {np.iinfo(np.int16).max}"
    wanted = {"observation_size": observation_size(rules),
              "num_actions": rules.tiles.num_tiles * 4, "fields": list(FIELDS)}
    for key, value in wanted.items():
        if info.get(key) != value or type(info.get(key)) is not type(value):
            return f"{key} is {short_repr(info.get(key))}; these rules need {value}"
    for key in ("matches", "decisions"):
        if not is_count(info.get(key)):
            return f"{key} must be a count (an integer >= 0), not {short_repr(info.get(key))}"
    if "complete" in info and type(info["complete"]) is not bool:  # 'yes' was taken
        return f"complete must be true or false, not {short_repr(info['complete'])}"
    try:
        as_seed(info.get("seed"))
    except (ValueError, TypeError) as err:  # NaN, a string, a negative number were taken
        return str(err)
    if not is_count(info.get("max_hands"), 1) or info["max_hands"] > MAX_HANDS:
        return (f"max_hands must be an integer in 1..{MAX_HANDS:,}, not "
                f"{short_repr(info.get('max_hands'))}")
    return None


def dataset_info(path: str | os.PathLike) -> dict[str, Any]:
    """``DIR/dataset.json``, checked as untrusted input: a ``ValueError`` names what is wrong
    with a directory that is not a dataset this code reads (missing, another format or
    observation version, fields missing or of the wrong type, sizes these rules do not
    have)."""
    path = Path(as_path("path", path))  # not '' (the working directory), bytes or None
    try:
        info = _read_info(path / INFO_FILE)
        info["rules"], info["agents"]  # noqa: B018 - the fields every reader needs
    except (ValueError, KeyError, TypeError) as err:
        raise ValueError(f"{path} is not a dataset directory ({INFO_FILE}: {err}); make one "
                         "with python -m experiments.make_dataset") from None
    for key in ("format", "obs_version"):  # "2" and 1.0 were called other versions
        if key in info and type(info[key]) is not int:
            raise ValueError(f"{path / INFO_FILE}: {key} must be an integer (a version "
                             f"number), not {short_repr(info[key])}")
    if not _same(info.get("format"), FORMAT_VERSION):
        raise ValueError(f"{path}: dataset format {short_repr(info.get('format'))}, this code "
                         f"reads {FORMAT_VERSION}")
    if not _same(info.get("obs_version"), OBS_VERSION):
        raise ValueError(f"{path}: observations of version {short_repr(info.get('obs_version'))}"
                         f", the encoder is at version {OBS_VERSION}; rebuild the dataset")
    problem = _info_problem(info)
    if problem:
        raise ValueError(f"{path / INFO_FILE}: {problem}")
    return info


def _same(value: Any, wanted: Any) -> bool:
    return type(value) is type(wanted) and value == wanted


def read_decisions(path: str | os.PathLike, info: dict[str, Any]) -> dict[str, np.ndarray]:
    """The arrays of one ``decisions-NNNN.npz``, checked as untrusted input against the
    dataset's ``info``: no pickle (``allow_pickle=False``), every field, its dtype and shape,
    finite observations, every action within the action space and legal under its row's
    mask, masks a position can have, seats, agents and outcomes within range, match indexes
    those of its records shard (``decisions-0003.npz``: 3000..3999) and, in a complete
    dataset, below its match count. ``ValueError`` naming the file and the problem otherwise.
    What only a replay of the game records tells (an observation bit flipped, seats or
    agents exchanged) is not checked here: ``make_dataset``'s resume does that."""
    path = Path(path)
    data = _read_unranged(path, info)
    problem = _match_problem(data["match"], path, info)
    if problem:
        raise ValueError(f"{path}: {problem}")
    return data


def _read_unranged(path: Path, info: dict[str, Any]) -> dict[str, np.ndarray]:
    """:func:`read_decisions` but for the range of its match indexes."""
    try:
        data = read_npz(path, max_bytes=MAX_SHARD_BYTES)
    except NpzError as err:
        raise ValueError(f"{path}: {err}") from None
    problem = _arrays_problem(data, info)
    if problem:
        raise ValueError(f"{path}: {problem}")
    return {k: data[k] for k in FIELDS}


def _match_problem(match: np.ndarray, path: Path, info: dict[str, Any]) -> str | None:
    """A match index the file at ``path`` may not hold (``None``: none): outside its records
    shard's when it is named as :func:`write_decisions` names them (``decisions-0003.npz``:
    3000..3999), or at or past ``info["matches"]`` in a complete dataset (its schedule is
    every match it holds). So a match index of 2**62, which nothing but a damaged file puts
    there, is a problem, and a copy of ``decisions-0000.npz`` as ``decisions-0001.npz`` in a
    2-match dataset is a file that dataset has no place for (it would hold matches
    1,000..1,999)."""
    if not match.size:  # no rows (a records shard without records): no index to be outside
        return None
    low, high, why = 0, int(np.iinfo(np.int64).max), ""
    shard = re.fullmatch(r"decisions-(\d+)\.npz", path.name)
    if shard:
        low = min(int(shard[1]) * SHARD_SIZE, high)
        high = min(low + SHARD_SIZE - 1, high)
        if low <= MAX_SCHEDULE_INDEX:  # past it, no records shard is named for them
            why = f" (the matches of {RECORDS_DIR}/{shard_name(low)})"
    if info.get("complete") is True and is_count(info.get("matches")) \
            and info["matches"] - 1 < high:
        if info["matches"] - 1 < low:
            return (f"a dataset of {info['matches']:,} matches has no such file: it would hold "
                    f"matches {low:,}..{high:,}{why}")
        high = info["matches"] - 1
        why = f" (the dataset holds {info['matches']:,} matches, from 0)"
    bad = np.flatnonzero((match < low) | (match > high))
    if bad.size:
        return f"row {bad[0]}: match {match[bad[0]]} is outside {low}..{high}{why}"
    return None


def _arrays_problem(data: dict[str, np.ndarray], info: dict[str, Any]) -> str | None:
    missing = [k for k in FIELDS if k not in data]
    if missing:
        return f"not a decisions file: missing {', '.join(missing)}"
    extra = sorted(set(data) - set(FIELDS))
    if extra:  # not a field dataset.json lists: not this format's, so not read as if it were
        return f"holds {', '.join(map(repr, extra))}, which is not a field of this format"
    rules = RuleConfig.from_dict(info["rules"])
    width = {"obs": info["observation_size"], "act": info["num_actions"]}
    for key, (dtype, kind) in ARRAY_TYPES.items():
        array = data[key]
        if (array.dtype != dtype or array.ndim != (1 if kind is None else 2)
                or (kind is not None and array.shape[1] != width[kind])):
            want = "(N,)" if kind is None else f"(N, {width[kind]})"
            return f"{key} is {array.dtype} {array.shape}; it must be {np.dtype(dtype)} {want}"
    lengths = {key: len(data[key]) for key in FIELDS}
    if len(set(lengths.values())) > 1:
        return "its arrays differ in length (" + ", ".join(f"{k} {n}" for k, n in
                                                          lengths.items()) + ")"
    rows = lengths["action"]
    if not np.isfinite(data["obs"]).all():
        return "obs holds NaN or infinite values"
    outside = observation_layout(rules).value_outside(data["obs"])  # the encoder's bounds
    if outside:
        return outside
    action, mask = data["action"], data["mask"]
    bad = np.flatnonzero((action < 0) | (action >= info["num_actions"]))
    if bad.size:
        return (f"row {bad[0]}: action {action[bad[0]]} is outside the action space "
                f"(0..{info['num_actions'] - 1})")
    problem = mask_problem(data["obs"], mask, rules)
    if problem:
        return problem
    bad = np.flatnonzero(~mask[np.arange(rows), action])
    if bad.size:
        return f"row {bad[0]}: action {action[bad[0]]} is not legal under its mask"
    play, hand = play_points_bound(rules), score_bound(rules, "hand")
    ranges = {"seat": (0, rules.num_players - 1, ""), "agent": (0, len(info["agents"]) - 1, ""),
              "hand": (0, info.get("max_hands", MAX_HANDS) - 1, " (max_hands)"),
              "points": (0, play, " (the most a play scores under these rules)"),
              "hand_margin": (-hand, hand, " (the most a side scores in a hand under these "
                                           "rules)"),
              "outcome": (-1, 1, "")}
    for key, (low, high, why) in ranges.items():
        bad = np.flatnonzero((data[key] < low) | (data[key] > high))
        if bad.size:
            return f"row {bad[0]}: {key} {data[key][bad[0]]} is outside {low}..{high}{why}"
    return _seat_agent_problem(data)


def _seat_agent_problem(data: dict[str, np.ndarray]) -> str | None:
    """A seat played by two agents in one match (``None``: none), which no tournament
    plays. Seats or agents exchanged throughout a file agree with themselves: only a replay
    of the game records tells them (``make_dataset``'s resume does)."""
    order = np.lexsort((data["agent"], data["seat"], data["match"]))
    match, seat, agent = data["match"][order], data["seat"][order], data["agent"][order]
    bad = np.flatnonzero((match[1:] == match[:-1]) & (seat[1:] == seat[:-1])
                         & (agent[1:] != agent[:-1]))
    if not bad.size:
        return None
    first, second = sorted(order[bad[0]:bad[0] + 2].tolist())
    return (f"rows {first} and {second}: seat {data['seat'][first]} of match "
            f"{data['match'][first]} is played by agents {data['agent'][first]} and "
            f"{data['agent'][second]}; a seat has one agent in a match")


def mask_problem(obs: np.ndarray, mask: np.ndarray, rules: RuleConfig) -> str | None:
    """A mask no position has, against its row's observed hand (``None``: none): no legal
    action (a row is a play), more than 4 per tile in hand, or a play of a tile not in hand.
    ``obs``: rows of observation version 2 (:data:`OBS_VERSION`) under ``rules``, ``mask``:
    boolean rows of their legal actions. So a mask all true (112 actions with 7 tiles in hand)
    is a problem, in a dataset and in expert iteration's demonstrations alike: both readers
    check their rows here."""
    legal = mask.sum(axis=1)
    bad = np.flatnonzero(legal == 0)
    if bad.size:
        return f"row {bad[0]}: its mask has no legal action; every decision has one"
    in_hand = obs[:, observation_layout(rules).hand] > 0  # the 0/1 hand block, one per tile
    tiles = in_hand.sum(axis=1)
    bad = np.flatnonzero(legal > tiles * 4)
    if bad.size:
        return (f"row {bad[0]}: its mask has {legal[bad[0]]} legal actions; a hand of "
                f"{tiles[bad[0]]} tiles has at most {tiles[bad[0]] * 4}")
    # [row, tile]: some end is legal (the tiles counted from the width: a file of no rows
    # had no -1 to infer)
    played = mask.reshape(len(mask), mask.shape[1] // 4, 4).any(axis=2)
    bad = np.argwhere(played & ~in_hand)
    if bad.size:
        row, tile = (int(i) for i in bad[0])
        return (f"row {row}: its mask has a legal play of tile {tile}, which is not in the "
                "hand its observation shows")
    return None


def _repeat_problem(match: np.ndarray, seen: dict[int, str]) -> str | None:
    """A match of this file already in another (``seen``: match -> file; ``None``: none): a
    match's decisions are in one file, so one copied beside the others repeats them."""
    again = [m for m in np.unique(match).tolist() if m in seen]
    if not again:
        return None
    more = len(again) - 1
    others = f" and {more:,} other{'s' if more > 1 else ''}" if more else ""
    return (f"it repeats the decisions of match {again[0]}{others}, which {seen[again[0]]} "
            "already holds; a match's decisions are in one file")


def _counts_problem(out: dict[str, np.ndarray], info: dict[str, Any]) -> str | None:
    """What in ``dataset.json`` the decisions of every file contradict (``None``: nothing):
    the number of matches (every match has plays), and, in a complete dataset, an agent
    listed that never played (a schedule plays every agent it lists)."""
    held = len(np.unique(out["match"]))
    if held != info["matches"]:
        return (f"its {DECISIONS_DIR}/ hold the decisions of {held:,} matches; {INFO_FILE} "
                f"says {info['matches']:,}")
    if info.get("complete") is True:
        idle = [a for i, a in enumerate(info["agents"]) if not (out["agent"] == i).any()]
        if idle:
            return (f"{INFO_FILE} lists the agent {idle[0]!r}, which made no decision in this "
                    "complete dataset")
    return None


class IncompleteDatasetWarning(UserWarning):
    """A dataset whose games were not all played (``"complete": false`` in ``dataset.json``):
    :func:`load_decisions` reads what it holds and warns."""


def load_decisions(path: str | os.PathLike, *, agent: str | None = None,
                   unforced: bool = False) -> dict[str, np.ndarray]:
    """Every decision of a dataset directory as one dict of arrays (shards in order).

    ``agent`` keeps only that agent's decisions (a spec listed in ``dataset.json``);
    ``unforced`` keeps only decisions with more than one legal action. Every file is
    untrusted input (:func:`dataset_info`, :func:`read_decisions`): ``ValueError`` names the
    file and what is wrong with it.

    An incomplete dataset (``"complete": false``: its tournament stopped before every match
    was played) is read with an :class:`IncompleteDatasetWarning` saying how to finish it,
    not refused: what it holds is whole (each decisions file is written whole, for whole
    matches), and ``python -m experiments.make_dataset`` run again with the same arguments
    and ``--out`` plays only the matches missing, so a partial dataset is a usable one that
    can still grow; the warning keeps it from being taken for the whole schedule."""
    unforced = as_bool("unforced", unforced)
    path = Path(as_path("path", path))  # not '' (the working directory), bytes or None
    info = dataset_info(path)
    if info.get("complete") is False:
        warnings.warn(IncompleteDatasetWarning(
            f"{path} is incomplete: it holds {info['matches']:,} matches, not all its "
            "schedule's (python -m experiments.make_dataset or build_dataset was "
            "interrupted); run it again with the same arguments and the output folder "
            f"{path} to finish it"),
            stacklevel=2)
    shards = sorted((path / DECISIONS_DIR).glob("decisions-*.npz"))
    if not shards:
        raise ValueError(f"{path} holds no {DECISIONS_DIR}/*.npz")
    parts, seen = [], {}
    for shard in shards:
        part = _read_unranged(shard, info)
        problem = (_repeat_problem(part["match"], seen)
                   or _match_problem(part["match"], shard, info))
        if problem:
            raise ValueError(f"{shard}: {problem}")
        seen.update(dict.fromkeys(np.unique(part["match"]).tolist(), shard.name))
        parts.append(part)
    out = {k: np.concatenate([p[k] for p in parts]) for k in FIELDS}
    if len(out["action"]) != info["decisions"]:
        raise ValueError(f"{path}: its {DECISIONS_DIR}/ hold {len(out['action']):,} decisions; "
                         f"{INFO_FILE} says {info['decisions']:,}")
    problem = _counts_problem(out, info)
    if problem:
        raise ValueError(f"{path}: {problem}")
    keep = np.ones(len(out["action"]), dtype=bool)
    if agent is not None:
        if agent not in info["agents"]:
            raise ValueError(f"agent {agent!r} is not in this dataset; it has: "
                             f"{', '.join(info['agents'])}")
        keep &= out["agent"] == info["agents"].index(agent)
    if unforced:
        keep &= out["mask"].sum(axis=1) > 1
    return {k: v[keep] for k, v in out.items()}
