"""``python -m experiments.tournament`` (``dominoes-tournament``): run a tournament from the
command line (:mod:`.cli`). The engine it drives is :mod:`agents.tournament`.

The engine's names (``TournamentConfig``, ``run_tournament``, ``build_summary``, ...) are still
importable from here for one version, with a ``DeprecationWarning``; import them from
:mod:`agents.tournament` instead.
"""

from dominoes_env.deprecation import moved_names

from .cli import main

__all__ = ["main"]

#: the engine's names this package exported before they moved to agents.tournament
__getattr__ = moved_names(__name__, dict.fromkeys(
    ["RuleConfig", "TournamentConfig", "TournamentDirError", "TournamentRun", "build_summary",
     "make_schedule", "print_summary", "run_tournament", "write_outputs"], "agents.tournament"))
