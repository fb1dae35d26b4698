"""``RandomPlayer``: uniformly random over the legal moves, the single-agent env's default
opponent (:mod:`.single_agent`, which re-exports it).

It has a module of its own, on the game core alone, so that ``agents.RandomAgent`` (this
class's ``act`` behind the Agent protocol) imports it without Gymnasium: ``import agents``
needs numpy and the game only, and a tournament's first random move does not pay for
importing Gymnasium.
"""

from __future__ import annotations

import random

from .core import SeatView
from .core.validation import as_seed

__all__ = ["RandomPlayer"]


class RandomPlayer:
    """Uniformly random over the legal moves: the default opponent. ``agents.RandomAgent`` is
    this class's ``act`` behind the Agent protocol (the same seed gives the same moves).

    >>> from dominoes_env.core import MatchState
    >>> m = MatchState(seed=0)
    >>> RandomPlayer(seed=1).act(m.view(m.turn)) in m.legal_actions()
    True
    """

    name = "random"

    def __init__(self, seed: int | None = None):
        # checked as every seed is: random.Random(-1) is random.Random(1), and a str or a
        # float seeded it without a word
        self.rng = random.Random(as_seed(seed, optional=True))

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.rng.seed(as_seed(seed))

    def act(self, view: SeatView) -> int:
        # agents.RandomAgent runs this method on itself: it may read only ``self.rng``
        legal = view.legal
        if not legal:
            raise ValueError(f"seat {view.seat} has no legal move: it is not its turn")
        return legal[self.rng.randrange(len(legal))]

    def __repr__(self) -> str:
        return "RandomPlayer()"
