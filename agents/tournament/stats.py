"""Statistics over finished matches: win rates with Wilson intervals, points per hand, ratings.

Every function takes match *records* (the dicts stored one per line in ``matches.jsonl``: at
least ``index``, ``table``, ``seats``, ``scores``, ``winner``, ``hands``) and the tournament's
:class:`RuleConfig`.

Draws: a match with ``winner`` null (stopped undecided after ``max_hands``; with the default
``win_check="immediate"`` every finished match has a winner) counts as half a win for each side
in every win rate, and as a tie in the ratings.

>>> lo, hi = wilson_interval(8, 10)
>>> round(lo, 4), round(hi, 4)
(0.4902, 0.9433)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from itertools import combinations
from typing import Any

from dominoes_env.core import RuleConfig
from dominoes_env.core.validation import as_float, as_int, short_repr
from dominoes_env.optional import require

#: the two-sided 95% normal quantile, norm.ppf(0.975)
Z95 = 1.959963984540054


def wilson_interval(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval for a proportion ``successes / n`` (``successes`` may be a
    half-integer: draws count half). ``n == 0`` gives the vacuous ``(0.0, 1.0)``.

    >>> wilson_interval(0, 0)
    (0.0, 1.0)
    >>> [round(x, 4) for x in wilson_interval(5, 10)]
    [0.2366, 0.7634]
    >>> wilson_interval(11, 10)
    Traceback (most recent call last):
    ...
    ValueError: successes=11 must lie in 0..n=10
    """
    n = as_int("n", n, 0)
    as_float("n", n)  # an int past what a float holds: the arithmetic below overflowed
    wins = as_float("successes", successes)  # True was one win, "3" a bare TypeError
    if not 0 <= wins <= n:
        raise ValueError(f"successes={short_repr(successes)} must lie in 0..n={n}")
    successes = wins
    z = as_float("z", z, 0, low_open=True)  # -1.96 gave low > high, NaN (0, 1) silently
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    z2 = z * z
    denom = 1 + z2 / n
    center = (p + z2 / (2 * n)) / denom
    half = z / denom * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    low = 0.0 if successes == 0 else max(0.0, center - half)
    high = 1.0 if successes == n else min(1.0, center + half)
    return (low, high)


def side_agents(record: dict, rules: RuleConfig) -> list[str]:
    """The agent holding each side of a match (a partnership's two seats hold one agent)."""
    seats = record["seats"]
    return [seats[rules.seats_of(side)[0]] for side in range(rules.num_sides)]


def side_ranks(record: dict) -> list[int]:
    """Finishing rank of each side, 1 best: the winner first, the others by score (equal scores
    share a rank); an undecided match ranks every side 1.

    >>> side_ranks({"scores": [250, 40, 90], "winner": 0})
    [1, 3, 2]
    >>> side_ranks({"scores": [30, 30], "winner": None})
    [1, 1]
    """
    scores, winner = record["scores"], record["winner"]
    if winner is None:
        return [1] * len(scores)
    others = [s for i, s in enumerate(scores) if i != winner]
    return [1 if i == winner else 2 + sum(o > s for o in others) for i, s in enumerate(scores)]


def agent_ranks(record: dict, rules: RuleConfig) -> dict[str, int]:
    """Each agent's best finishing rank in a match (an agent may hold several free-for-all
    seats)."""
    out: dict[str, int] = {}
    for agent, rank in zip(side_agents(record, rules), side_ranks(record), strict=True):
        out[agent] = min(rank, out.get(agent, rank))
    return out


def _pair_entry(a: str, b: str, a_wins: int, b_wins: int, draws: int) -> dict[str, Any]:
    n = a_wins + b_wins + draws
    score = a_wins + 0.5 * draws
    lo, hi = wilson_interval(score, n)
    return {
        "a": a, "b": b, "matches": n, "a_wins": a_wins, "b_wins": b_wins, "draws": draws,
        "a_win_rate": score / n if n else None, "a_win_rate_ci95": [lo, hi],
    }  # fmt: skip


def pair_stats(records: Iterable[dict], agents: Sequence[str], rules: RuleConfig) -> list[dict]:
    """One entry per pair of agents ``(a, b)`` in ``agents`` order.

    Head-to-head and partnerships: ``a_wins`` counts the matches of that pairing that ``a``'s
    side won. Free-for-all: over matches where both sat, ``a_wins`` counts those where ``a``
    finished ahead of ``b`` (best rank of its seats), a tie in rank is a draw.
    ``a_win_rate = (a_wins + draws / 2) / matches`` with its 95% Wilson interval.
    """
    tally = {pair: [0, 0, 0] for pair in combinations(agents, 2)}
    for rec in records:
        ranks = agent_ranks(rec, rules)
        for (a, b), t in tally.items():
            if a in ranks and b in ranks:
                t[0 if ranks[a] < ranks[b] else 1 if ranks[b] < ranks[a] else 2] += 1
    return [_pair_entry(a, b, *t) for (a, b), t in tally.items() if sum(t)]


def agent_stats(records: Iterable[dict], agents: Sequence[str],
                rules: RuleConfig) -> dict[str, dict]:
    """Per agent: matches, wins, draws, win rate (draws half) with its Wilson interval, hands
    and mean points per hand.

    Points per hand: the points of the agent's side(s), summed over its matches, divided by the
    hands those sides played (a free-for-all agent holding two seats counts both).
    """
    acc = {a: {"matches": 0, "wins": 0, "draws": 0, "points": 0, "side_hands": 0} for a in agents}
    for rec in records:
        owners = side_agents(rec, rules)
        for agent in set(owners):
            row = acc[agent]
            row["matches"] += 1
            if rec["winner"] is None:
                row["draws"] += 1
            elif owners[rec["winner"]] == agent:
                row["wins"] += 1
        for side, agent in enumerate(owners):
            acc[agent]["points"] += rec["scores"][side]
            acc[agent]["side_hands"] += rec["hands"]
    out = {}
    for agent, row in acc.items():
        n = row["matches"]
        score = row["wins"] + 0.5 * row["draws"]
        lo, hi = wilson_interval(score, n)
        out[agent] = {
            "matches": n, "wins": row["wins"], "draws": row["draws"],
            "win_rate": score / n if n else None, "win_rate_ci95": [lo, hi],
            "points_per_hand": row["points"] / row["side_hands"] if row["side_hands"] else None,
        }  # fmt: skip
    return out


def ratings(records: Iterable[dict], agents: Sequence[str], rules: RuleConfig) -> dict[str, dict]:
    """OpenSkill (Plackett-Luce) ratings, updated match by match in schedule order (``index``),
    so they do not depend on the order matches finished in.

    Each side is a team of one (the agent holding it), ranked by :func:`side_ranks`. An agent
    holding several free-for-all seats gets the mean of its seats' updates. Returns per agent
    ``mu``, ``sigma``, ``ordinal`` (``mu - 3 sigma``, a conservative skill) and ``ci95``
    (``mu -/+ 1.96 sigma``).
    """
    PlackettLuce = require("openskill.models", "tournament", "rating").PlackettLuce

    model = PlackettLuce()
    current = {a: model.rating(name=a) for a in agents}
    for rec in sorted(records, key=lambda r: r["index"]):
        owners = side_agents(rec, rules)
        if len(set(owners)) < 2:
            continue
        new = model.rate([[current[a]] for a in owners], ranks=side_ranks(rec))
        updates: dict[str, list] = {}
        for agent, (rating,) in zip(owners, new, strict=True):
            updates.setdefault(agent, []).append(rating)
        for agent, rs in updates.items():
            current[agent] = model.rating(
                mu=sum(r.mu for r in rs) / len(rs), sigma=sum(r.sigma for r in rs) / len(rs),
                name=agent,
            )
    out = {}
    for agent, r in current.items():
        out[agent] = {
            "mu": r.mu, "sigma": r.sigma, "ordinal": r.mu - 3 * r.sigma,
            "ci95": [r.mu - Z95 * r.sigma, r.mu + Z95 * r.sigma],
        }  # fmt: skip
    return out


def table_stats(records: Iterable[dict], tables: Sequence[Sequence[str]],
                rules: RuleConfig) -> list[dict]:
    """Free-for-all: per table, matches and wins by agent (a win for the agent holding the
    winning seat) and draws."""
    rows = {tuple(t): {"agents": list(t), "matches": 0, "wins": dict.fromkeys(t, 0), "draws": 0}
            for t in tables}  # fmt: skip
    for rec in records:
        row = rows[tuple(rec["table"])]
        row["matches"] += 1
        if rec["winner"] is None:
            row["draws"] += 1
        else:
            row["wins"][side_agents(rec, rules)[rec["winner"]]] += 1
    return list(rows.values())
