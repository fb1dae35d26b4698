"""Two tournaments on the same deals, compared match by match: a paired sign test.

Two agents that each played the same opponent on the same duplicate deals (the same ``--seed``,
rules and agent count) can be compared match by match. Most matches end the same way for both
(the cards decide them); only the matches one agent won and the other did not say which is the
stronger. Counting those (a sign test, McNemar's test for paired proportions) separates a
difference of 3 points in 1,000 matches, where the two win rates' Wilson intervals overlap.

A match of one run is paired with the match of the other on the same deal (its ``seed``) whose
seats hold the common opponent, the *reference*, at the same places; each agent's score in a
match is 1 for a win, 0.5 for an undecided match, 0 for a loss.

>>> import tempfile
>>> from agents.tournament import RuleConfig, TournamentConfig, run_tournament
>>> rules = RuleConfig(target_score=30)
>>> with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
...     _ = run_tournament(TournamentConfig(["greedy", "random"], rules, 6, seed=3), a,
...                        progress=False)
...     _ = run_tournament(TournamentConfig(["random", "search:sims=8"], rules, 6, seed=3), b,
...                        progress=False)
...     result = compare_runs(read_run(a), read_run(b))
>>> result.reference, result.agents, result.matches
('random', ('greedy', 'search:sims=8'), 6)
"""

from __future__ import annotations

import math
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from dominoes_env.cli_support import RefusedError
from dominoes_env.core import RuleConfig
from dominoes_env.core.atomic_files import path_kind
from dominoes_env.core.validation import as_int, parse_json, short_repr

from .runner import (
    CONFIG_FILE,
    MATCHES_FILE,
    SCHEME_VERSION,
    TournamentConfig,
    TournamentDirError,
    load_records,
    match_lines,
    read_config_json,
)
from .schedule import check_schedule_fits, make_schedule, scheduled_matches
from .stats import wilson_interval

#: matches in discord up to which the sign test's p-value is the exact binomial sum (above it,
#: the normal approximation with a continuity correction, within 1e-4 of it there)
EXACT_UP_TO = 10_000


@dataclass(frozen=True)
class FinishedRun:
    """A tournament's folder as :func:`read_run` read it: its configuration and its finished
    matches (``matches.jsonl``'s lines, checked against the schedule)."""

    folder: Path
    config: TournamentConfig
    records: list[dict[str, Any]]


def _read_config(folder: Path, agents: int | None = None) -> TournamentConfig:
    path = folder / CONFIG_FILE
    if not os.path.isfile(path) or os.path.islink(path):  # a FIFO blocked, /dev/zero filled
        raise TournamentDirError(f"{path} is {path_kind(path)}, not a tournament's "
                                 f"{CONFIG_FILE}")
    try:
        data = read_config_json(path)
        missing = [k for k in ("scheme", "agents", "matches", "seed", "max_hands", "rules")
                   if k not in data]
        if missing:
            raise ValueError(f"missing {', '.join(missing)}")
        if data["scheme"] != SCHEME_VERSION:
            raise ValueError(f"its schedule scheme {short_repr(data['scheme'])} is not this "
                             f"version's ({SCHEME_VERSION})")
        if not isinstance(data["agents"], list):
            raise ValueError("agents must be a list of agent specs")
        if agents is not None:  # before any spec is read or table counted: 20,000 took 3.8 GB
            _check_agent_count(folder, data["agents"], agents)
        return TournamentConfig(data["agents"], RuleConfig.from_dict(data["rules"]),
                                matches=data["matches"], seed=data["seed"],
                                max_hands=data["max_hands"])
    except TournamentDirError:
        raise
    except (OSError, ValueError, TypeError, RecursionError) as err:
        raise TournamentDirError(f"{path} is not a tournament's {CONFIG_FILE} ({err})") from None


def _check_agent_count(folder: Path, agents: list, count: int) -> None:
    """:class:`TournamentDirError` unless ``agents`` (as config.json lists them) are ``count``
    agents."""
    distinct = len({a if isinstance(a, str) else repr(a) for a in agents})
    if distinct != count:
        shown = ", ".join(map(short_repr, agents[:4])) + (", ..." if len(agents) > 4 else "")
        raise TournamentDirError(
            f"{folder} played {distinct:,} agent{'' if distinct == 1 else 's'} ({shown}); a "
            f"paired comparison takes two tournaments of {count} agents each, one of them the "
            "same")


def _last_deal(path: Path, matches: int) -> tuple[int | None, int]:
    """The largest deal that a line of ``matches.jsonl`` names in its key (``None``: none),
    and the offset of the end of its last complete line, read line by line."""
    deal, end = None, 0
    for _, line, offset in match_lines(path, matches):
        end = offset
        try:
            key = parse_json(parse_json(line)["key"])
        except (ValueError, RecursionError, TypeError, KeyError, IndexError):
            continue  # load_records names what is wrong with the line
        if isinstance(key, list) and key and type(key[0]) is int and key[0] >= 0:
            deal = key[0] if deal is None else max(deal, key[0])
    return deal, end


def read_run(folder: str | os.PathLike, *, agents: int | None = None) -> FinishedRun:
    """The finished matches of the tournament in ``folder`` (a run of ``python -m
    experiments.tournament``, finished or not). Nothing is written: a half-written last line
    (a run writing it now, or one killed while writing it) is left out. A folder that is no
    tournament's, or whose files are damaged, is a :class:`TournamentDirError` naming it; so
    is, with ``agents``, a run of another number of agents (checked before anything else).

    Only as much of the schedule is built as the deals in ``matches.jsonl`` reach (a
    ``config.json`` saying ``"matches": 10000000`` built 10**7 jobs, some 5 GB, to read two
    lines), and a schedule that would not fit in this machine's memory is refused."""
    if not isinstance(folder, (str, os.PathLike)):
        raise TypeError(f"folder must be a path, not {type(folder).__name__}")
    if agents is not None:
        agents = as_int("agents", agents, 2)
    folder = Path(folder)
    if not folder.is_dir():
        raise TournamentDirError(f"{str(folder)!r} is {path_kind(folder)}, not a tournament's "
                                 "folder")
    config = _read_config(folder, agents)
    path = folder / MATCHES_FILE
    if os.path.lexists(path) and (not path.is_file() or path.is_symlink()):
        raise TournamentDirError(f"{path} is {path_kind(path)}, not a regular file")
    total = scheduled_matches(config.agents, config.rules, config.matches)
    try:
        deal, end = _last_deal(path, total) if path.exists() else (None, 0)
        if deal is None:  # no line names a deal: no match to read (or the first is damaged)
            matches = min(config.matches, config.rules.num_players)
        else:  # a deal has at most num_players seatings: every table reaches deal ``deal``
            matches = min(config.matches, (deal + 1) * config.rules.num_players)
        # a schedule that would not fit is refused, not built
        check_schedule_fits(config.agents, config.rules, matches, f"{path}'s schedule")
        schedule = make_schedule(config.agents, config.rules, matches, config.seed)
        records = load_records(path, schedule, config.rules, config.max_hands, repair=False,
                               end=end)
    except OSError as err:
        raise TournamentDirError(f"{path}: {err.strerror or err}") from None
    except RefusedError as err:
        raise TournamentDirError(str(err)) from None
    return FinishedRun(folder, config, records)


@dataclass(frozen=True)
class PairedComparison:
    """Two agents' results on the same matches (:func:`compare_runs`)."""

    reference: str  #: the opponent both played
    agents: tuple[str, str]  #: the agent of run A, of run B
    runs: tuple[str, str]  #: their folders
    matches: int  #: matches paired
    scores: tuple[float, float]  #: each agent's wins in them (an undecided match: half)
    better: tuple[int, int]  #: matches where A scored more than B, where B scored more than A
    unpaired: tuple[int, int]  #: finished matches of A, of B, with no match in the other run
    z: float  #: (A better - B better) / sqrt(their sum); 0 when no match differs
    p_value: float  #: two-sided sign test of "A and B are as strong"

    @property
    def shares(self) -> tuple[float, float]:
        """Each agent's share of the paired matches."""
        return tuple(s / self.matches for s in self.scores)  # type: ignore[return-value]

    @property
    def intervals(self) -> tuple[tuple[float, float], tuple[float, float]]:
        """Each share's Wilson 95% interval."""
        a, b = (wilson_interval(s, self.matches) for s in self.scores)
        return a, b

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: the fields, the shares and their intervals."""
        return {**asdict(self), "shares": list(self.shares),
                "intervals": [list(i) for i in self.intervals]}


def sign_test_p(a: int, b: int) -> float:
    """Two-sided p-value of ``a`` successes against ``b`` failures where each is as likely
    (the binomial with p = 1/2): exact up to :data:`EXACT_UP_TO` trials.

    >>> sign_test_p(0, 0), sign_test_p(3, 3)
    (1.0, 1.0)
    >>> round(sign_test_p(9, 1), 4)  # 2 * (1 + 10 + ...) / 2**10: 2 * 11 / 1024
    0.0215
    """
    n, low = a + b, min(a, b)
    if n == 0 or a == b:
        return 1.0
    if n <= EXACT_UP_TO:  # the tail's terms by C(n, i + 1) = C(n, i) (n - i) / (i + 1), exact
        term = tail = 1
        for i in range(low):
            term = term * (n - i) // (i + 1)
            tail += term
        return min(1.0, 2 * tail / 2**n)
    z = (abs(a - b) - 1) / math.sqrt(n)
    return min(1.0, math.erfc(z / math.sqrt(2)))


def _reference(a: FinishedRun, b: FinishedRun, reference: str | None) -> str:
    """The agent both runs played: ``reference`` if given (it must be in both), else the one
    agent the two runs share."""
    for run in (a, b):
        if len(set(run.config.agents)) != 2:
            raise ValueError(f"{run.folder} played {len(set(run.config.agents))} agents "
                             f"({', '.join(map(repr, run.config.agents))}); a paired comparison "
                             "takes two tournaments of two agents each, one of them the same")
    common = sorted(set(a.config.agents) & set(b.config.agents))
    if reference is None:
        if len(common) != 1:
            played = (f"({', '.join(map(repr, a.config.agents))} and "
                      f"{', '.join(map(repr, b.config.agents))})")
            if common:
                raise ValueError(f"the runs share both agents {played}; give the reference "
                                 "both played against (--reference)")
            raise ValueError(f"the runs share no agent {played}: a paired comparison takes "
                             "two runs against the same reference agent")
        return common[0]
    if not isinstance(reference, str):
        raise TypeError(f"reference must be an agent spec, not {type(reference).__name__}")
    if reference not in common:
        raise ValueError(f"reference {short_repr(reference)} is not an agent of both runs "
                         f"(they share: {', '.join(map(repr, common)) or 'none'})")
    return reference


def _other(run: FinishedRun, reference: str) -> str:
    """The agent of ``run`` that is not ``reference``."""
    return next(x for x in run.config.agents if x != reference)


def _by_match(run: FinishedRun, reference: str) -> dict[tuple, float]:
    """Each finished match's score for the run's other agent, keyed by its deal's seed and the
    seats the reference holds."""
    other = _other(run, reference)
    found: dict[tuple, float] = {}
    for rec in run.records:
        key = (rec["seed"], tuple(seat == reference for seat in rec["seats"]))
        if key in found:  # a schedule deals each seed once per seating
            raise TournamentDirError(f"{run.folder / MATCHES_FILE} holds two matches on the "
                                     f"deal of seed {rec['seed']} with the same seats")
        winner = rec["winner_agent"]
        found[key] = 0.5 if winner is None else float(winner == other)
    return found


def _same_folder(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """Whether ``a`` and ``b`` name one folder (through links, ``..``, another spelling)."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):  # not there (a FinishedRun made by hand)
        return False


def compare_runs(a: FinishedRun, b: FinishedRun, reference: str | None = None
                 ) -> PairedComparison:
    """Run ``a``'s agent and run ``b``'s compared on the matches both runs finished on the same
    deals against ``reference`` (default: the one agent both runs played). The runs must be two
    folders of the same rules and hand limit, and share at least one match: ``ValueError``
    naming what differs otherwise."""
    for run in (a, b):
        if not isinstance(run, FinishedRun):
            raise TypeError(f"compare_runs takes FinishedRun objects (read_run), not "
                            f"{type(run).__name__}")
    if _same_folder(a.folder, b.folder):  # compared with itself: p = 1, and nothing said
        raise ValueError(f"{a.folder} and {b.folder} are the same run: a paired comparison "
                         "takes two runs, one for each agent")
    if a.config.rules != b.config.rules:
        diff = sorted(k for k, v in a.config.rules.to_dict().items()
                      if b.config.rules.to_dict().get(k) != v)
        raise ValueError(f"{a.folder} and {b.folder} were played under other rules "
                         f"({', '.join(diff)} differ): their deals are not the same")
    if a.config.max_hands != b.config.max_hands:
        raise ValueError(f"{a.folder} and {b.folder} stop an undecided match after another "
                         f"number of hands ({a.config.max_hands} and {b.config.max_hands})")
    ref = _reference(a, b, reference)
    agents = (_other(a, ref), _other(b, ref))
    score_a, score_b = _by_match(a, ref), _by_match(b, ref)
    paired = sorted(score_a.keys() & score_b.keys())
    if not paired:
        why = (f"their --seed differ ({a.config.seed} and {b.config.seed})"
               if a.config.seed != b.config.seed else "one of them has no finished match")
        raise ValueError(f"{a.folder} and {b.folder} have no match on the same deal with the "
                         f"same seats: {why}")
    a_better = sum(score_a[k] > score_b[k] for k in paired)
    b_better = sum(score_a[k] < score_b[k] for k in paired)
    discord = a_better + b_better
    return PairedComparison(
        reference=ref, agents=agents, runs=(str(a.folder), str(b.folder)), matches=len(paired),
        scores=(sum(score_a[k] for k in paired), sum(score_b[k] for k in paired)),
        better=(a_better, b_better),
        unpaired=(len(score_a) - len(paired), len(score_b) - len(paired)),
        z=(a_better - b_better) / math.sqrt(discord) if discord else 0.0,
        p_value=sign_test_p(a_better, b_better),
    )  # fmt: skip


def format_comparison(result: PairedComparison) -> str:
    """The comparison as a few lines of text (``python -m experiments.paired``)."""
    width = max(len(x) for x in result.agents) + 2
    lines = [f"{result.matches:,} matches paired (the same deals and seats against "
             f"{result.reference!r})"]
    for name, agent, score, share, (lo, hi), unpaired in zip(
            "AB", result.agents, result.scores, result.shares, result.intervals,
            result.unpaired, strict=True):
        extra = f"; {unpaired:,} unpaired" if unpaired else ""
        lines.append(f"  {name}  {agent:<{width}}won {score:g} ({100 * share:.1f}%, Wilson "
                     f"{100 * lo:.1f}-{100 * hi:.1f}%){extra}")
    lines.append(f"won only by A (scored more): {result.better[0]:,}; only by B: "
                 f"{result.better[1]:,}; z = {result.z:+.2f}, two-sided sign test p = "
                 f"{result.p_value:.3g}")
    return "\n".join(lines)


__all__ = ["FinishedRun", "PairedComparison", "compare_runs", "format_comparison", "read_run",
           "sign_test_p"]
