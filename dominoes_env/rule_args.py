"""Command-line flags for the rule options, shared by every program that takes them.

Each :class:`~dominoes_env.core.RuleConfig` field becomes ``--field-name`` (underscores as
dashes), with the allowed values as choices where the field has a fixed set.

>>> import argparse
>>> p = argparse.ArgumentParser()
>>> _ = add_rule_arguments(p)
>>> rule_options(p.parse_args(["--target-score", "150", "--spinner", "none"]))
{'target_score': 150, 'spinner': 'none'}
"""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

from .core import RuleConfig
from .core import rules as rules_module
from .core.validation import int_text

#: fields that programs set through their own options (the table and the seating)
TABLE_FIELDS = ("num_players", "partnerships")


#: what each rule option means (``docs/rules.md``), for ``--help``
RULE_HELP = {
    "num_players": "seats at the table: 2, 3 or 4",
    "partnerships": "4 players in two partnerships (seats 0+2 against 1+3)",
    "max_pip": "the set: double-6, double-9 or double-12 (6, 9 or 12)",
    "hand_size": "tiles dealt to each seat",
    "target_score": "points that win the match (1 to 65,536)",
    "next_leader": "who leads the next hand: the seat that dominoed (else a random seat), or "
                   "the next seat in turn",
    "win_check": "when a side reaching the target wins: at once, or at the end of the hand",
    "boneyard_reserve": "tiles that stay in the boneyard, never drawn",
    "spinner": "which double becomes the spinner (its four sides open): the first double "
               "played, only a double lead, or none",
    "spinner_cross": "when the spinner's up/down ends open: after both its sides are played "
                     "on, or at once",
    "blocked_award": "a blocked hand's award: the opponents' pip total, or the difference",
}


def rule_fields(exclude: tuple[str, ...] = TABLE_FIELDS) -> list[dataclasses.Field]:
    return [f for f in dataclasses.fields(RuleConfig) if f.init and f.name not in exclude]


def add_rule_arguments(parser: argparse.ArgumentParser,
                       exclude: tuple[str, ...] = TABLE_FIELDS) -> argparse._ArgumentGroup:
    """Add one flag per rule option (stored as ``rule_<field>``, ``None`` when not given)."""
    group = parser.add_argument_group("rule options (RuleConfig; defaults as in the rules)")
    for f in rule_fields(exclude):
        choices = getattr(rules_module, f.name.upper(), None)
        metavar = None if choices else "N"
        group.add_argument("--" + f.name.replace("_", "-"), dest="rule_" + f.name, default=None,
                           type=_ascii(type(f.default)), choices=choices, metavar=metavar,
                           help=f"{RULE_HELP.get(f.name, f.name)} (default {f.default})")
    return group


def _ascii(kind: type) -> type | object:
    """A rule flag's type: ``int`` reads ASCII digits only (:func:`int_text`)."""
    if kind is not int:
        return kind

    def parse(text: str) -> int:
        return int_text(text)

    parse.__name__ = "int"  # argparse names the type in its messages
    return parse


def rule_options(args: argparse.Namespace,
                 exclude: tuple[str, ...] = TABLE_FIELDS) -> dict[str, Any]:
    """The rule options given on the command line, as ``RuleConfig`` keyword arguments."""
    options = {f.name: getattr(args, "rule_" + f.name, None) for f in rule_fields(exclude)}
    return {k: v for k, v in options.items() if v is not None}
