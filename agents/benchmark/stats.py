"""The figures of one cell of a card (one agent, one opponent, one table) from its matches.

The win rate is the agent's share of match wins, a draw counting half, at every table: with two
sides (2 players; 4 in partnerships) the matches its side won, in the free-for-all two-agent
field (``(A, A, B)`` and ``(A, B, B)`` at 3 players; ``(A, A, A, B)``, ``(A, A, B, B)`` and
``(A, B, B, B)`` at 4) the matches one of its seats won. Between equals it is 50% at every
table: each deal is played in every rotation of each field table, so every seat is the agent's
in half of the matches (and the two field tables where one agent holds more seats than the
other are played equally often).

>>> from dominoes_env.core import RuleConfig
>>> recs = [{"seats": ["a", "b"], "scores": [60, 20], "winner": 0, "hands": 4, "table": ["a", "b"]},
...         {"seats": ["b", "a"], "scores": [55, 30], "winner": 0, "hands": 5, "table": ["a", "b"]}]
>>> s = cell_stats(recs, "a", RuleConfig())
>>> s["matches"], s["wins"], s["losses"], s["win_rate"], s["points_per_hand"]
(2, 1, 1, 0.5, 10.0)
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from dominoes_env.core import RuleConfig

from ..decision_times import DecisionTimes
from ..tournament.stats import side_agents, wilson_interval


def _times(rec: dict, agent: str) -> list[DecisionTimes]:
    raw = rec.get("decision_times")
    if raw is None:  # a line written before decisions were timed
        return []
    if not isinstance(raw, list) or len(raw) != len(rec["seats"]):
        raise ValueError(f"match {rec.get('key')!r}: decision_times must hold one entry per seat")
    try:
        return [DecisionTimes.from_dict(t) for s, t in zip(rec["seats"], raw, strict=True)
                if s == agent]
    except ValueError as err:
        raise ValueError(f"match {rec.get('key')!r}: {err}") from None


def cell_stats(records: Iterable[dict], agent: str, rules: RuleConfig) -> dict[str, Any]:
    """``matches``, ``wins``, ``losses``, ``draws``, ``win_rate`` (draws half) with
    ``win_rate_ci95`` (Wilson), ``points_per_hand`` and ``opponent_points_per_hand`` (the
    final scores of each agent's sides over the hands those sides played), ``decision_ms``
    (the agent's ``mean`` and ``p95`` milliseconds per decision over its ``decisions``) and
    ``by_field_table`` (matches and wins at each table of the field)."""
    matches = wins = draws = 0
    points = {True: 0, False: 0}
    hands = {True: 0, False: 0}
    times = DecisionTimes()
    by_table: dict[tuple[str, ...], list[int]] = {}
    for rec in records:
        owners = side_agents(rec, rules)
        matches += 1
        won = rec["winner"] is not None and owners[rec["winner"]] == agent
        wins += won
        draws += rec["winner"] is None
        row = by_table.setdefault(tuple(rec["table"]), [0, 0])
        row[0] += 1
        row[1] += won
        for side, owner in enumerate(owners):
            points[owner == agent] += rec["scores"][side]
            hands[owner == agent] += rec["hands"]
        for t in _times(rec, agent):
            times.merge(t)
    score = wins + 0.5 * draws
    low, high = wilson_interval(score, matches)
    return {
        "matches": matches, "wins": wins, "losses": matches - wins - draws, "draws": draws,
        "win_rate": score / matches if matches else None, "win_rate_ci95": [low, high],
        "points_per_hand": points[True] / hands[True] if hands[True] else None,
        "opponent_points_per_hand": points[False] / hands[False] if hands[False] else None,
        "decision_ms": {"decisions": times.decisions, "mean": times.mean_ms(),
                        "p95": times.quantile_ms(0.95)},
        "by_field_table": [{"seats": ["A" if x == agent else "B" for x in t], "matches": n,
                            "wins": w}
                           for t, (n, w) in by_table.items()],
    }  # fmt: skip
