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

#: fields that programs set through their own options (the table and the seating)
TABLE_FIELDS = ("num_players", "partnerships")


def rule_fields(exclude: tuple[str, ...] = TABLE_FIELDS) -> list[dataclasses.Field]:
    return [f for f in dataclasses.fields(RuleConfig) if f.init and f.name not in exclude]


def add_rule_arguments(parser: argparse.ArgumentParser,
                       exclude: tuple[str, ...] = TABLE_FIELDS) -> argparse._ArgumentGroup:
    """Add one flag per rule option (stored as ``rule_<field>``, ``None`` when not given)."""
    group = parser.add_argument_group("rule options (RuleConfig; defaults as in the rules)")
    for f in rule_fields(exclude):
        choices = getattr(rules_module, f.name.upper(), None)
        group.add_argument("--" + f.name.replace("_", "-"), dest="rule_" + f.name, default=None,
                           type=type(f.default), choices=choices, help=f"default {f.default!r}")
    return group


def rule_options(args: argparse.Namespace,
                 exclude: tuple[str, ...] = TABLE_FIELDS) -> dict[str, Any]:
    """The rule options given on the command line, as ``RuleConfig`` keyword arguments."""
    options = {f.name: getattr(args, "rule_" + f.name, None) for f in rule_fields(exclude)}
    return {k: v for k, v in options.items() if v is not None}
