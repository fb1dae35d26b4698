"""Who plays whom, in which seats, on which deals: a tournament as a deterministic list of jobs.

Formats (chosen by the rules):

- ``head_to_head`` (2 players): every pair of agents; each deal is played twice, the agents'
  seats exchanged.
- ``partnerships`` (4 players in partnerships): every pair of agents as the two sides (one agent
  holds seats 0 and 2, the other 1 and 3); each deal is played twice, the sides exchanged.
- ``free_for_all`` (3 or 4 players, every seat its own side): every combination of agents around
  the table (when there are fewer agents than seats, every multiset of agents that uses all of
  them); each deal is played once per rotation of the seats, so every agent gets every seat's
  tiles. Successive deals walk through the distinct circular orders of the table, so over many
  matches each agent sits before and after each other equally often.

``--matches N`` per pairing is rounded up to a whole number of deals (a *duplicate group*: 2
matches for head-to-head and partnerships, the distinct rotations of the seating for
free-for-all: 3 or 4 for distinct agents, fewer when an agent repeats, e.g. 2 for ``abab``).
Deal ``d`` has the seed ``derive_seed(seed, "deal", d)`` in every pairing, so all pairings face the
same deals too.

>>> s = make_schedule(["random", "greedy"], RuleConfig(), matches=4, seed=0)
>>> s.format, s.group_size, s.deals, len(s.jobs)
('head_to_head', 2, 2, 4)
>>> [j.seats for j in s.jobs]
[('random', 'greedy'), ('greedy', 'random'), ('random', 'greedy'), ('greedy', 'random')]
>>> s.jobs[0].seed == s.jobs[1].seed != s.jobs[2].seed
True
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass

from dominoes_env.cli_support import MAX_MATCHES, check_fits_in_memory
from dominoes_env.core import RuleConfig
from dominoes_env.core.validation import as_int, as_seed

from ..arena import derive_seed
from ..specs import check_spec_text, repeated

FORMATS = ("head_to_head", "partnerships", "free_for_all")

#: the most agents a tournament takes: 3,162, the most that :data:`MAX_MATCHES` matches can
#: seat (at two players, ``n`` agents play ``n (n - 1) / 2`` pairings of 2 matches at least;
#: more players, fewer agents), so no tournament that could be scheduled is refused. Checked
#: first, before any spec is read (20,000 agents take 22 s to read, measured, before their
#: schedule would be refused).
MAX_AGENTS = (1 + math.isqrt(1 + 4 * MAX_MATCHES)) // 2


@dataclass(frozen=True)
class MatchJob:
    """One match to play. ``key`` is stable and unique within the tournament (it names the deal
    and the seating), ``index`` is the job's place in the schedule (the order ratings use)."""

    index: int
    key: str
    table: tuple[str, ...]  #: the pairing or table this match belongs to (schedule order)
    deal: int
    seats: tuple[str, ...]  #: agent spec by seat
    seed: int  #: the match seed (same for every seating of one deal)


@dataclass(frozen=True)
class Schedule:
    format: str
    tables: tuple[tuple[str, ...], ...]
    group_size: int  #: matches per deal (the largest, for free-for-all tables)
    deals: int  #: deals used (per table, the most)
    matches_per_table: tuple[int, ...]  #: aligned with ``tables``
    jobs: tuple[MatchJob, ...]


def format_of(rules: RuleConfig) -> str:
    """The tournament format the rules call for.

    >>> format_of(RuleConfig(num_players=4)), format_of(RuleConfig(num_players=3))
    ('partnerships', 'free_for_all')
    """
    if rules.num_players == 2:
        return "head_to_head"
    return "partnerships" if rules.partnerships else "free_for_all"


def check_agents(agents: Sequence[str], rules: RuleConfig | None = None) -> tuple[str, ...]:
    """Agent specs as a tuple, refusing more than :data:`MAX_AGENTS`, non-strings, spaces
    around a spec (:func:`~agents.specs.check_spec_text`), fewer than two and repeats (one
    agent spelt twice, ``ppo:PATH`` of the shipped policy for ``rules``' table next to ``ppo``
    too: :func:`~agents.specs.repeated`). The one check of a tournament's agents, the
    command's and :class:`~agents.tournament.TournamentConfig`'s."""
    if isinstance(agents, str) or not isinstance(agents, Sequence):
        raise TypeError(f"agents must be a list of agent specs, got {agents!r}")
    agents = tuple(agents)
    if len(agents) > MAX_AGENTS:
        raise ValueError(f"a tournament takes at most {MAX_AGENTS:,} agents (MAX_AGENTS: more "
                         f"play more than {MAX_MATCHES:,} matches), got {len(agents):,}")
    for a in agents:
        check_spec_text(a)
    if len(agents) < 2:
        raise ValueError(f"a tournament needs at least 2 agents, got {len(agents)}: {list(agents)}")
    twice = repeated(agents, rules)
    if twice:
        raise ValueError(f"agent spec(s) given twice: {', '.join(twice)}; list each agent once")
    return agents


def tables_for(agents: Sequence[str], rules: RuleConfig) -> list[tuple[str, ...]]:
    """The pairings (two sides) or tables (free-for-all) of a tournament, in a fixed order.

    >>> tables_for(["a", "b", "c"], RuleConfig())
    [('a', 'b'), ('a', 'c'), ('b', 'c')]
    >>> tables_for(["a", "b"], RuleConfig(num_players=3))
    [('a', 'a', 'b'), ('a', 'b', 'b')]
    """
    if format_of(rules) != "free_for_all":
        return list(itertools.combinations(agents, 2))
    n = rules.num_players
    if len(agents) >= n:
        return list(itertools.combinations(agents, n))
    multisets = itertools.combinations_with_replacement(agents, n)
    return [t for t in multisets if len(set(t)) == len(agents)]


def _rotations(order: tuple[str, ...]) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = []
    for i in range(len(order)):
        r = order[i:] + order[:i]
        if r not in out:
            out.append(r)
    return out


def circular_orders(table: tuple[str, ...]) -> list[tuple[str, ...]]:
    """The distinct ways to sit ``table`` around the table up to rotation (canonical forms).

    >>> circular_orders(("a", "b", "c"))
    [('a', 'b', 'c'), ('a', 'c', 'b')]
    >>> circular_orders(("a", "a", "b"))
    [('a', 'a', 'b')]
    """
    seen = set()
    for p in sorted(set(itertools.permutations(table))):
        seen.add(min(_rotations(p)))
    return sorted(seen)


def seatings(table: tuple[str, ...], rules: RuleConfig, deal: int) -> list[tuple[str, ...]]:
    """The seatings that play deal ``deal`` of ``table`` (one duplicate group).

    >>> seatings(("a", "b"), RuleConfig(num_players=4), 0)
    [('a', 'b', 'a', 'b'), ('b', 'a', 'b', 'a')]
    >>> seatings(("a", "b", "c"), RuleConfig(num_players=3), 1)
    [('a', 'c', 'b'), ('c', 'b', 'a'), ('b', 'a', 'c')]
    """
    fmt = format_of(rules)
    if fmt == "head_to_head":
        a, b = table
        return [(a, b), (b, a)]
    if fmt == "partnerships":
        a, b = table
        return [(a, b, a, b), (b, a, b, a)]
    orders = circular_orders(table)
    return _rotations(orders[deal % len(orders)])


def job_key(deal: int, seats: Sequence[str]) -> str:
    """The stable key of a match: its deal and seating, as compact JSON."""
    return json.dumps([deal, list(seats)], separators=(",", ":"))


def table_matches(table: tuple[str, ...], rules: RuleConfig, matches: int) -> int:
    """The matches :func:`make_schedule` plays at ``table``: ``matches`` rounded up to whole
    deals (a deal is played in each of its :func:`seatings`), without building them.

    >>> table_matches(("a", "b"), RuleConfig(), 5), table_matches(("a", "b", "c"), RuleConfig(
    ...     num_players=3), 5)
    (6, 6)
    """
    cycle = [len(seatings(table, rules, d))
             for d in range(len(circular_orders(table)) if format_of(rules) == "free_for_all"
                            else 1)]
    rounds, left = divmod(matches, sum(cycle))
    count = rounds * sum(cycle)
    for size in cycle:  # the deals of the last, partial round, while matches are missing
        if left <= 0:
            break
        count += size
        left -= size
    return count


def scheduled_matches(agents: Sequence[str], rules: RuleConfig, matches: int) -> int:
    """How many matches :func:`make_schedule` schedules for ``agents`` (distinct, as
    :func:`check_agents` leaves them) with ``matches`` per table, without building them (the
    tables are counted, not listed, where every one seats distinct agents).

    >>> scheduled_matches(["a", "b", "c", "d", "e"], RuleConfig(num_players=4,
    ...                   partnerships=False), 10**7)
    50000000
    """
    n = rules.num_players
    if format_of(rules) != "free_for_all":
        return math.comb(len(agents), 2) * table_matches(tuple(agents[:2]), rules, matches)
    if len(agents) >= n:  # every table n distinct agents: each alike
        return math.comb(len(agents), n) * table_matches(tuple(agents[:n]), rules, matches)
    return sum(table_matches(t, rules, matches) for t in tables_for(agents, rules))


def check_schedule_size(agents: Sequence[str], rules: RuleConfig, matches: int) -> int:
    """:func:`scheduled_matches`, or a ``ValueError`` where it is more than
    :data:`~dominoes_env.cli_support.MAX_MATCHES` (10**7): ``matches`` is bounded per table,
    and the whole schedule must be bounded too (5 agents at four players with 10**7 each would
    need some 45 GB to hold it)."""
    total = scheduled_matches(agents, rules, matches)
    if total > MAX_MATCHES:
        count = len(tables_for(agents, rules)) if len(agents) < rules.num_players else (
            math.comb(len(agents), 2 if format_of(rules) != "free_for_all"
                      else rules.num_players))
        tables = "tables" if format_of(rules) == "free_for_all" else "pairings"
        raise ValueError(f"matches={matches} at each of the {count:,} {tables} of these "
                         f"{len(agents)} agents schedules {total:,} matches; a tournament "
                         f"schedules at most {MAX_MATCHES:,} (MAX_MATCHES): lower matches")
    return total


#: the memory a scheduled match is counted to take while a tournament runs (its schedule entry,
#: its result and its summary rows: about 300 bytes of schedule measured, rounded up generously)
BYTES_PER_MATCH = 2048


def check_schedule_fits(agents: Sequence[str], rules: RuleConfig, matches: int,
                        what: str | None = None) -> int:
    """:func:`scheduled_matches`, or a ``ValueError`` (:class:`~dominoes_env.cli_support.
    RefusedError`) where that many matches, at :data:`BYTES_PER_MATCH` each, would not fit in
    this machine's memory: the schedule and the results are held in memory (10**20 matches
    would fill it before failing). ``what`` names the request in the message (default: ``--matches
    MATCHES``, the flag of the programs that play tournaments).

    >>> check_schedule_fits(["random", "greedy"], RuleConfig(), 3)
    4
    """
    total = scheduled_matches(agents, rules, matches)  # counted, not listed
    check_fits_in_memory(what or f"--matches {matches}", total, BYTES_PER_MATCH,
                         f"{total:,} matches")
    return total


def make_schedule(agents: Sequence[str], rules: RuleConfig, matches: int, seed: int) -> Schedule:
    """Every match of a tournament, ordered deal by deal (so an interrupted run has played the
    pairings evenly); at most :data:`~dominoes_env.cli_support.MAX_MATCHES` in all
    (:func:`check_schedule_size`)."""
    agents = check_agents(agents)
    matches = as_int("matches", matches, 1, MAX_MATCHES)  # 10**30 filled memory for ever
    seed = as_seed(seed)
    check_schedule_size(agents, rules, matches)
    tables = tables_for(agents, rules)
    plan: list[list[list[tuple[str, ...]]]] = []  # per table, per deal: the seatings
    for t in tables:
        per_deal, count, d = [], 0, 0
        while count < matches:
            per_deal.append(seatings(t, rules, d))
            count += len(per_deal[-1])
            d += 1
        plan.append(per_deal)
    jobs: list[MatchJob] = []
    for d in range(max(len(p) for p in plan)):
        match_seed = derive_seed(seed, "deal", d)
        for t, per_deal in zip(tables, plan, strict=True):
            for seats in per_deal[d] if d < len(per_deal) else ():
                jobs.append(MatchJob(len(jobs), job_key(d, seats), t, d, seats, match_seed))
    if len({j.key for j in jobs}) != len(jobs):  # pragma: no cover - a scheduling bug
        raise RuntimeError("match keys are not unique")
    return Schedule(
        format=format_of(rules),
        tables=tuple(tables),
        group_size=max(len(seatings(t, rules, d)) for t in tables for d in range(2)),
        deals=max(len(p) for p in plan),
        matches_per_table=tuple(sum(map(len, p)) for p in plan),
        jobs=tuple(jobs),
    )
