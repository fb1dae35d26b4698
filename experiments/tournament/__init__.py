"""``python -m experiments.tournament`` (``dominoes-tournament``): run a tournament from the
command line (:mod:`.cli`). The engine it drives is :mod:`agents.tournament`.

The engine's names (``TournamentConfig``, ``run_tournament``, ``build_summary``, ...) are still
importable from here for one version, with a ``DeprecationWarning``; import them from
:mod:`agents.tournament` instead.
"""

from __future__ import annotations

import importlib
import warnings

from .cli import main

__all__ = ["main"]

#: the engine's names this package exported before they moved to agents.tournament
_MOVED = frozenset(["RuleConfig", "TournamentConfig", "TournamentDirError", "TournamentRun",
                    "build_summary", "make_schedule", "print_summary", "run_tournament",
                    "write_outputs"])


def __getattr__(name: str):
    if name in _MOVED:
        warnings.warn(f"experiments.tournament.{name} is deprecated; import it from "
                      "agents.tournament", DeprecationWarning, stacklevel=2)
        return getattr(importlib.import_module("agents.tournament"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
