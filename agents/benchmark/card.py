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

from dominoes_env.core.atomic_files import atomic_write, check_output_path
from dominoes_env.core.validation import (
    is_count,
    is_finite_number,
    is_interval,
    is_rate,
    short_repr,
)
from dominoes_env.throughput import load_average

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


def card_problem(card: Any) -> str | None:
    """What keeps ``card`` from being a card of this schema (``None``: nothing): its keys
    (:data:`CARD_KEYS`), its schema and version, each table's keys (:data:`TABLE_KEYS`) and
    each cell's (:data:`CELL_KEYS`; an ``n/a`` cell the first three).

    >>> card_problem({})
    "keys missing: 'schema', 'schema_version', 'agent'..."
    """
    if not isinstance(card, dict):
        return f"not a dict but {type(card).__name__}"
    missing = [k for k in CARD_KEYS if k not in card]
    unknown = [k for k in card if k not in CARD_KEYS]
    if missing or unknown:
        shown = missing or unknown
        return (f"keys {'missing' if missing else 'unknown'}: "
                f"{', '.join(map(short_repr, shown[:3]))}{'...' if len(shown) > 3 else ''}")
    if (card["schema"], card["schema_version"]) != (SCHEMA, SCHEMA_VERSION):
        return (f"schema {short_repr(card['schema'])} version "
                f"{short_repr(card['schema_version'])}, not {SCHEMA!r} version {SCHEMA_VERSION}")
    if not isinstance(card["tables"], list):
        return "'tables' is not a list"
    for t, table in enumerate(card["tables"]):
        if not isinstance(table, dict) or set(table) != set(TABLE_KEYS):
            return f"table {t} is not a dict of the keys {', '.join(TABLE_KEYS)}"
        if not isinstance(table["cells"], list):
            return f"table {t}: 'cells' is not a list"
        for c, cell in enumerate(table["cells"]):
            status = cell.get("status") if isinstance(cell, dict) else None
            keys = CELL_KEYS if status == "ok" else CELL_KEYS[:3]
            if status not in ("ok", "n/a") or set(cell) != set(keys):
                return (f"table {t}, cell {c} is not a cell (the keys {', '.join(keys)}, "
                        "'status' 'ok' or 'n/a')")
    return tables_problem(card["tables"])


def tables_problem(tables: Any) -> str | None:
    """What keeps ``tables`` from being a card's tables as the card's readers
    (:mod:`.render`) read them (``None``: nothing): a list of objects, each with a ``name``
    (text) and a list of ``cells``, each a cell of the values :func:`cell_problem` allows. A
    card is a file, read back as untrusted input, so a cell's ``"win_rate": 7``,
    ``"decision_ms": null``, a short interval or an ``n/a`` cell without its reason is a
    problem named here, never a table printed wrong or cut short by a ``TypeError``."""
    if not isinstance(tables, list):
        return f"'tables' is not a list but {short_repr(tables)}"
    for t, table in enumerate(tables):
        if not (isinstance(table, dict) and isinstance(table.get("name"), str)
                and isinstance(table.get("cells"), list)):
            return f"table {t} is not an object with a 'name' (text) and a list of 'cells'"
        for c, cell in enumerate(table["cells"]):
            problem = cell_problem(cell)
            if problem:
                return f"table {t}, cell {c}: {problem}"
    return None


def cell_problem(cell: Any) -> str | None:
    """What keeps ``cell`` from being a card's cell as its readers read it (``None``:
    nothing): an ``n/a`` cell names its opponent and the reason (text); an ``ok`` cell its
    counts (whole numbers >= 0), ``complete`` (true or false), ``win_rate`` (``null`` or in
    0..1) and its 95% interval ``[low, high]`` within 0..1, the points per hand (``null`` or
    finite numbers) and ``decision_ms`` (an object whose ``mean`` and ``p95`` are ``null`` or
    finite numbers >= 0)."""
    if not isinstance(cell, dict) or cell.get("status") not in ("ok", "n/a"):
        return "not a cell (an object whose 'status' is 'ok' or 'n/a')"
    if not isinstance(cell.get("opponent"), str):
        return f"its opponent {short_repr(cell.get('opponent'))} is not text"
    if cell["status"] == "n/a":
        return None if isinstance(cell.get("reason"), str) else "an n/a cell gives its reason"
    for key in ("matches", "matches_scheduled", "wins", "losses", "draws"):
        if not is_count(cell.get(key)):
            return f"{key}={short_repr(cell.get(key))} is not a whole number >= 0"
    if type(cell.get("complete")) is not bool:
        return f"complete={short_repr(cell.get('complete'))} is not true or false"
    rate, ci = cell.get("win_rate"), cell.get("win_rate_ci95")
    if not (rate is None or is_rate(rate)) or not is_interval(ci, is_rate):
        return (f"win_rate={short_repr(rate)} with win_rate_ci95={short_repr(ci)} is not a "
                "rate in 0..1 (or null) with its interval [low, high] within 0..1")
    for key in ("points_per_hand", "opponent_points_per_hand"):
        if not (cell.get(key) is None or is_finite_number(cell.get(key))):
            return f"{key}={short_repr(cell.get(key))} is not a finite number (or null)"
    ms = cell.get("decision_ms")
    if not (isinstance(ms, dict) and all(ms.get(k) is None
                                         or (is_finite_number(ms.get(k)) and ms[k] >= 0)
                                         for k in ("mean", "p95"))):
        return (f"decision_ms={short_repr(ms)} is not an object of 'mean' and 'p95' "
                "milliseconds (finite numbers >= 0, or null)")
    return None


def write_card(card: dict[str, Any], path: str | os.PathLike, *,
               overwrite: bool = True) -> Path:
    """Write ``card`` as JSON, atomically (a reader never sees half a card).

    ``card`` is a card (:func:`card_problem`, as :func:`build_card` makes one) and JSON (no
    NaN): a ``ValueError`` naming the problem otherwise (``{}``, ``{"x": NaN}``), and nothing
    is written; a ``TypeError`` for a non-dict. ``path`` follows
    :func:`~dominoes_env.core.atomic_files.check_output_path`: a symbolic link, a folder, a
    device or a FIFO is a ``ValueError`` (never replaced by the card), and ``overwrite=False``
    never replaces an existing file: ``FileExistsError``."""
    check_output_path(path, overwrite=overwrite)
    if not isinstance(card, dict):
        raise TypeError(f"card must be a benchmark card (a dict), not {type(card).__name__}")
    problem = card_problem(card)
    if problem is not None:
        raise ValueError(f"card is not a benchmark card: {problem}")
    try:
        text = json.dumps(card, indent=2, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as err:
        raise ValueError(f"card is not JSON ({err})") from None
    with atomic_write(path, overwrite=overwrite) as f:
        f.write(text + "\n")
    return Path(path)
