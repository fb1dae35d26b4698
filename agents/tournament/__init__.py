"""The tournament engine: scripted, reproducible, parallel (local processes or Ray), resumable.

>>> import tempfile
>>> config = TournamentConfig(["random", "greedy"], RuleConfig(target_score=30), matches=4, seed=1)
>>> with tempfile.TemporaryDirectory() as out:
...     summary = build_summary(run_tournament(config, out, progress=False))
>>> summary["pairs"][0]["matches"], summary["complete"]
(4, True)

The pieces: :mod:`.schedule` (who plays whom, seats, duplicate deals), :mod:`.runner` (the
run: playing into the results directory, resuming) with :mod:`.jobs` (playing one match),
:mod:`.backends` (local processes, Ray), :mod:`.results_dir` (the folder, ``config.json``) and
:mod:`.matches_file` (``matches.jsonl`` read back and checked), :mod:`.record_store` (the game
records kept in step with the results), :mod:`.stats` (Wilson intervals, points per hand,
OpenSkill ratings), :mod:`.report` (``summary.json``, plots, the printed table) and
:mod:`.paired` (two finished runs on the same deals compared match by match). One match is
:func:`agents.arena.play_match`. The command line that drives the engine is the program
``python -m experiments.tournament``.
"""

from dominoes_env.core import RuleConfig

from .report import build_summary, print_summary, write_outputs
from .runner import TournamentConfig, TournamentDirError, TournamentRun, run_tournament
from .schedule import make_schedule

__all__ = [
    "RuleConfig", "TournamentConfig", "TournamentDirError", "TournamentRun", "build_summary",
    "make_schedule", "print_summary", "run_tournament", "write_outputs",
]  # fmt: skip
