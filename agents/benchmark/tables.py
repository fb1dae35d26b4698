"""The tables a benchmark card plays at, the panel of opponents, and a card's configuration.

The tables are :data:`agents.tables.TABLES`: ``2p``, ``3p``, ``4p_partnerships``,
``4p_free_for_all``.

>>> [rules_at(name).num_sides for name in TABLES]
[2, 3, 2, 4]
>>> BenchmarkConfig("greedy", tables=["3p"], matches=5).per_field_table("3p")
3
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dominoes_env.cli_support import MAX_MATCHES as MAX_SCHEDULED
from dominoes_env.core import RuleConfig
from dominoes_env.core.validation import as_int, as_seed, short_repr
from dominoes_env.rule_args import TABLE_FIELDS

from ..arena import DEFAULT_MAX_HANDS
from ..specs import repeated
from ..tables import TABLES, check_table, table_rules
from ..tournament.schedule import scheduled_matches, tables_for

#: the fixed panel every agent is measured against, weakest first
PANEL = ("random", "greedy", "search", "ppo", "best")
#: the most matches per opponent and table (their results are held in memory)
MAX_MATCHES = 10**7


def rules_at(table: str, options: Mapping[str, Any] | None = None) -> RuleConfig:
    """The rules of ``table`` (:data:`agents.tables.TABLES`) with the rule ``options``
    (RuleConfig fields but the table's own, ``num_players`` and ``partnerships``)."""
    seats = table_rules(table)
    options = dict(options or {})
    fixed = sorted(set(options) & set(TABLE_FIELDS))
    if fixed:
        raise ValueError(f"the rule options {', '.join(fixed)} are set by the table; leave "
                         "them out")
    return RuleConfig(num_players=seats.num_players, partnerships=seats.partnerships, **options)


def _specs(name: str, value: Any, allow_empty: bool = False) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise TypeError(f"{name} must be a list of strings, got {short_repr(value)}")
    out = tuple(value)
    for item in out:
        if not isinstance(item, str) or not item.strip():
            raise ValueError(f"{name}: every entry is a non-empty string, got {short_repr(item)}")
    if not out and not allow_empty:
        raise ValueError(f"{name} is empty; give at least one")
    twice = repeated(out)
    if twice:
        raise ValueError(f"{name}: {', '.join(twice)} given twice; list each once")
    return out


@dataclass(frozen=True)
class BenchmarkConfig:
    """What decides a card's results: the agent, the panel, the tables, matches per opponent
    and table, the seed, the rule options every table shares and ``max_hands``. ``matches``
    is split evenly over the two-agent field of a table (2 tables at 3 players, 3 at 4 without
    partnerships; 1 with two sides) and rounded up to whole duplicate deals there."""

    agent: str
    panel: Sequence[str] = PANEL
    tables: Sequence[str] = tuple(TABLES)
    matches: int = 100
    seed: int = 0
    rule_options: Mapping[str, Any] = field(default_factory=dict)
    max_hands: int = DEFAULT_MAX_HANDS

    def __post_init__(self) -> None:
        if not isinstance(self.agent, str) or not self.agent.strip():
            raise ValueError(f"agent must be a non-empty agent spec, got {short_repr(self.agent)}")
        object.__setattr__(self, "panel", _specs("panel", self.panel))
        tables = _specs("tables", self.tables)
        for name in tables:
            check_table(name)
        object.__setattr__(self, "tables", tables)
        object.__setattr__(self, "matches", as_int("matches", self.matches, 1, MAX_MATCHES))
        object.__setattr__(self, "seed", as_seed(self.seed))
        object.__setattr__(self, "max_hands", as_int("max_hands", self.max_hands, 1))
        if not isinstance(self.rule_options, Mapping):
            raise TypeError(f"rule_options must be a dict of RuleConfig fields, got "
                            f"{short_repr(self.rule_options)}")
        object.__setattr__(self, "rule_options", dict(self.rule_options))
        for name in self.tables:  # every table's rules are valid before anything is played
            rules_at(name, self.rule_options)
            # and every cell's tournament within its bound (MAX_MATCHES in all), or the card
            # stopped at that table's first cell, its folder written
            total = scheduled_matches(("A", "B"), self.rules(name), self.per_field_table(name))
            if total > MAX_SCHEDULED:
                raise ValueError(f"matches={self.matches} plays {total:,} matches against each "
                                 f"opponent at {name} (rounded up to whole deals); a "
                                 f"tournament schedules at most {MAX_SCHEDULED:,}: lower "
                                 "matches")

    def rules(self, table: str) -> RuleConfig:
        return rules_at(table, self.rule_options)

    def per_field_table(self, table: str) -> int:
        """Matches asked of each two-agent table of ``table``'s field (``tables_for``)."""
        count = len(tables_for(["A", "B"], self.rules(table)))
        return math.ceil(self.matches / count)

    def to_dict(self) -> dict[str, Any]:
        return {"agent": self.agent, "panel": list(self.panel), "tables": list(self.tables),
                "matches": self.matches, "seed": self.seed,
                "rule_options": dict(sorted(self.rule_options.items())),
                "max_hands": self.max_hands}
