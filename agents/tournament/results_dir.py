"""A tournament's results directory: the names of its files, the arguments that decide its
results (:class:`TournamentConfig`, kept as ``config.json`` and checked when a run resumes)
and the output policy for the folder (a tournament's own is resumed, overwritten or cleared;
another program's, or a folder of other files, is refused)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dominoes_env.cli_support import MAX_MATCHES
from dominoes_env.core import RuleConfig
from dominoes_env.core.atomic_files import check_folder_there, file_sha256, path_kind, write_json
from dominoes_env.core.validation import as_int, as_seed, parse_json, utf8_text
from dominoes_env.record_io import RECORDS_DIR

from ..arena import DEFAULT_MAX_HANDS
from .schedule import Schedule, check_agents, check_schedule_size, make_schedule

CONFIG_FILE = "config.json"
MATCHES_FILE = "matches.jsonl"
#: the largest config.json read back (one is a few hundred bytes)
MAX_CONFIG_BYTES = 1 << 20
SUMMARY_FILE = "summary.json"
HEATMAP_FILE = "winrate_heatmap.png"
RATINGS_FILE = "ratings.png"
#: bump when the schedule or seeding scheme changes, so old directories are refused
SCHEME_VERSION = 1

#: every file a run writes into its directory (the report adds summary.json and the plots)
OUTPUT_FILES = (CONFIG_FILE, MATCHES_FILE, SUMMARY_FILE, HEATMAP_FILE, RATINGS_FILE)
#: the program whose run a tournament's folder holds (its run marker names it)
PROGRAM = "experiments.tournament"
#: what a tournament writes into its folder
RUN_OUTPUTS = (*OUTPUT_FILES, RECORDS_DIR)
#: the programs whose run folder is a tournament's (a demo plays one)
TOURNAMENT_PROGRAMS = ("experiments.tournament", "experiments.demo")


class TournamentDirError(ValueError):
    """The results directory cannot be used for this run (other arguments, corrupt file, busy)."""


@dataclass(frozen=True)
class TournamentConfig:
    """The arguments that decide a tournament's results. ``workers`` and ``backend`` are not
    among them: they change how fast, never what."""

    agents: Sequence[str]
    rules: RuleConfig = field(default_factory=RuleConfig)
    #: per pairing (rounded up to whole duplicate groups), 1..MAX_MATCHES (10**7), and at most
    #: MAX_MATCHES in all pairings together: the schedule is built whole, in memory (10**9
    #: matches would not fit, and 5 agents at four players with 10**7 each would need 45 GB)
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


# -- config.json ----------------------------------------------------------------------------
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
    with the sha256 of its bytes, so that a tournament resumed after one is replaced does not
    add the new policy's matches to the old one's under the same name."""
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


# -- the output policy ------------------------------------------------------------------------
def check_folder(out: str | os.PathLike, config: TournamentConfig, program: str,
                 outputs: Sequence[str], *, overwrite: bool = False):
    """The command's output policy for a run folder ``out`` given to a function
    (:func:`dominoes_env.cli_support.check_run_folder`, its refusals a ``ValueError`` naming
    ``out`` and ``overwrite=True``, never a flag; a :class:`TournamentDirError`): a symbolic
    link, another program's run (a trainer's, a dataset's) or a folder of other files is
    refused, as the command refuses them, never written through nor diffed as "a tournament
    with different arguments"."""
    from dominoes_env.cli_support import RefusedError, check_run_folder, paths_in_specs

    try:
        return check_run_folder(out, program, config.to_dict(), rerun_resumes=True,
                                overwrite=overwrite, outputs=outputs,
                                inputs=paths_in_specs(config.agents), flag="out")
    except RefusedError as err:
        raise TournamentDirError(str(err)) from None


def matches_kept(out: str | os.PathLike) -> bool:
    """Whether the run folder ``out`` keeps a finished match (a line of its matches.jsonl)."""
    try:
        return os.path.getsize(os.path.join(out, MATCHES_FILE)) > 0
    except OSError:
        return False


def interrupted_note(out: str | os.PathLike) -> str:
    """What a command that plays a tournament into ``out`` says when it is stopped (after
    its stop line: :func:`dominoes_env.cli_support.stop_note`): where the finished matches
    are and how to play the rest, or that no match had finished."""
    if matches_kept(out):
        return (f"finished matches are saved in {os.fspath(out)}; run the same command again "
                "to play the rest")
    return "no match had finished"


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
