"""A benchmark card as JSON: ``card.json``, schema ``straight-dominoes/benchmark-card`` version 1.

::

    {"schema": "straight-dominoes/benchmark-card", "schema_version": 1,
     "agent": SPEC, "panel": [SPEC, ...], "seed": S, "max_hands": H,
     "matches": N,                 # asked per opponent and table
     "rule_options": {...},        # the RuleConfig options every table shares
     "complete": bool,             # every playable cell has all its matches
     "tables": [{"name": "2p" | "3p" | "4p_partnerships" | "4p_free_for_all",
                 "format": "head_to_head" | "partnerships" | "free_for_all",
                 "rules": {...},   # RuleConfig.to_dict() of the table
                 "field": [["A", "B"], ...],   # the two-agent tables each deal is played at
                 "matches_per_field_table": M,
                 "cells": [CELL, ...]}, ...],
     "date": "2026-12-03T21:00:00+00:00", "wall_s": seconds of this invocation,
     "workers": W, "load_average": [1 min, 5 min, 15 min] (at the end),
     "versions": {"straight_dominoes", "env", "python", "numpy", "platform",
                  "policies": {file name: sha256 of the shipped policy files}}}

    CELL = {"opponent": SPEC, "status": "ok" | "n/a", "reason": null | why it is n/a,
            # with "status": "ok" only:
            "matches", "matches_scheduled", "complete", "wins", "losses", "draws",
            "win_rate", "win_rate_ci95": [low, high],
            "points_per_hand", "opponent_points_per_hand",
            "decision_ms": {"decisions", "mean", "p95"},
            "by_field_table": [{"seats": ["A", "A", "B"], "matches", "wins"}, ...]}

The win rate is the agent's (``A``) share of match wins, draws half, with its Wilson 95%
interval (:mod:`.stats`); ``decision_ms`` is the agent's wall time per ``act`` call
(:mod:`agents.decision_times`: ``p95`` to within about 6%). Everything but ``date``,
``wall_s``, ``workers``, ``load_average``, ``versions`` and ``decision_ms`` is the same for the
same arguments (and the same shipped policies).
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import platform
from pathlib import Path
from typing import Any

from dominoes_env.core.atomic_files import atomic_write

from ..tournament.schedule import format_of, tables_for
from .tables import BenchmarkConfig

SCHEMA = "straight-dominoes/benchmark-card"
SCHEMA_VERSION = 1
#: the keys of a card, of a table and of a cell (``"ok"``; ``"n/a"`` has the first three)
CARD_KEYS = ("schema", "schema_version", "agent", "panel", "seed", "max_hands", "matches",
             "rule_options", "complete", "tables", "date", "wall_s", "workers", "load_average",
             "versions")
TABLE_KEYS = ("name", "format", "rules", "field", "matches_per_field_table", "cells")
CELL_KEYS = ("opponent", "status", "reason", "matches", "matches_scheduled", "complete", "wins",
             "losses", "draws", "win_rate", "win_rate_ci95", "points_per_hand",
             "opponent_points_per_hand", "decision_ms", "by_field_table")
#: the keys whose values change from run to run
VOLATILE_KEYS = ("date", "wall_s", "workers", "load_average", "versions")


def policy_hashes() -> dict[str, str]:
    """The sha256 of every shipped policy file (``ppo`` and ``best`` play them)."""
    from ..ppo import POLICY_DIR

    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(Path(POLICY_DIR).glob("*.npz"))}


def versions() -> dict[str, Any]:
    import numpy

    import dominoes_env
    from dominoes_env.aec import ENV_NAME

    return {"straight_dominoes": dominoes_env.__version__, "env": ENV_NAME,
            "python": platform.python_version(), "numpy": numpy.__version__,
            "platform": platform.platform(), "policies": policy_hashes()}


def load_average() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):  # pragma: no cover - not POSIX
        return None


def build_card(config: BenchmarkConfig, rows: list[dict[str, Any]], *, wall_s: float,
               workers: int) -> dict[str, Any]:
    """The card of ``rows`` (one per cell, :func:`agents.benchmark.run.collect`)."""
    tables = []
    for name in config.tables:
        rules = config.rules(name)
        cells = []
        for row in rows:
            if row["table"] == name:
                cell = {k: row[k] for k in CELL_KEYS if k in row}
                cells.append(cell)
        tables.append({"name": name, "format": format_of(rules), "rules": rules.to_dict(),
                       "field": [list(t) for t in tables_for(["A", "B"], rules)],
                       "matches_per_field_table": config.per_field_table(name), "cells": cells})
    complete = all(c["status"] == "n/a" or c["complete"] for t in tables for c in t["cells"])
    return {
        "schema": SCHEMA, "schema_version": SCHEMA_VERSION, "agent": config.agent,
        "panel": list(config.panel), "seed": config.seed, "max_hands": config.max_hands,
        "matches": config.matches, "rule_options": dict(sorted(config.rule_options.items())),
        "complete": complete, "tables": tables,
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "wall_s": round(wall_s, 3), "workers": workers, "load_average": load_average(),
        "versions": versions(),
    }  # fmt: skip


def write_card(card: dict[str, Any], path: str | os.PathLike) -> Path:
    """Write ``card`` as JSON, atomically (a reader never sees half a card)."""
    with atomic_write(path) as f:
        f.write(json.dumps(card, indent=2) + "\n")
    return Path(path)
