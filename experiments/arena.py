"""Deprecated: the match arena moved to :mod:`agents.arena` (issue 31).

Importing a name from here still works for one version and emits a ``DeprecationWarning``;
import it from :mod:`agents.arena` instead.
"""

from __future__ import annotations

import importlib
import warnings

#: the names that moved (each still importable from here, with a warning)
_MOVED = frozenset(["DEFAULT_MAX_HANDS", "DEFAULT_MOVE_TIMEOUT", "AgentError",
                    "DuplicateDealMatch", "MatchResult", "MoveTimeout", "agent_seed", "as_seed",
                    "derive_seed", "play_match", "play_match_with"])


def __getattr__(name: str):
    if name in _MOVED:
        warnings.warn(f"experiments.arena.{name} is deprecated; import it from agents.arena",
                      DeprecationWarning, stacklevel=2)
        return getattr(importlib.import_module("agents.arena"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
