"""The one Agent protocol every player follows: in a PettingZoo loop, as an opponent inside
``SingleAgentEnv``, and in tournaments.

An agent sees only its seat's :class:`~dominoes_env.core.SeatView` (own tiles plus public
information) and returns an action code from ``view.legal``. It owns a seeded generator, so the
same seed gives the same choices.

Writing a new agent is one small class (``tile_of`` gives the tile index of an action code)::

    from agents import Agent
    from dominoes_env.core import tile_of

    class HeaviestFirst(Agent):
        name = "heaviest"

        def act(self, view):
            pips = view.rules.tiles.pips
            return max(view.legal, key=lambda code: (pips[tile_of(code)], code))
"""

from __future__ import annotations

import functools
import random
from typing import Protocol, runtime_checkable

from dominoes_env.core import SeatView
from dominoes_env.core.validation import as_seed, short_repr
from dominoes_env.random_player import RandomPlayer  # the game alone: no gymnasium

#: the most rollouts (``sims``) a searching agent may be given per decision: about a minute
#: of a decision on one core; beyond it a decision would, in effect, never end
MAX_SIMS = 1_000_000
#: the longest ``time_ms`` a searching agent may be given per decision (ten minutes)
MAX_TIME_MS = 600_000.0


@runtime_checkable
class AgentProtocol(Protocol):
    """The shape the environment and tournaments rely on (duck typing is enough)."""

    def act(self, view: SeatView) -> int: ...

    def reset(self, seed: int | None = None) -> None: ...


def _checks_its_view(act):
    """``act`` behind a check that its ``view`` is a :class:`SeatView`: anything else (``None``
    too) is a ``TypeError`` saying what ``act`` expects, before the agent reads it."""

    @functools.wraps(act)
    def checked_act(self, view):
        if not isinstance(view, SeatView):
            raise TypeError(f"{type(self).__name__}.act: view must be a SeatView (match.view("
                            f"seat)), got {short_repr(view)} ({type(view).__name__})")
        return act(self, view)

    checked_act.checks_view = True
    return checked_act


class Agent:
    """Base class with the bookkeeping: a seeded ``self.rng`` and no-op hooks.

    - ``reset(seed)``: a new match begins (reseeds the generator when ``seed`` is given).
    - ``begin_hand(view)``: a new hand (deal) has begun; ``view`` is this seat's first view of it.
    - ``act(view)``: return one of ``view.legal``.

    A subclass's ``act`` is checked to be given a :class:`SeatView` (a ``TypeError`` naming
    ``view`` otherwise): one ``isinstance`` per decision, for every agent alike.
    """

    name = "agent"

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        act = cls.__dict__.get("act")
        if callable(act) and not getattr(act, "checks_view", False):
            cls.act = _checks_its_view(act)

    def __init__(self, seed: int | None = None):
        self.rng = random.Random(as_seed(seed, optional=True))

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.rng.seed(as_seed(seed))

    def begin_hand(self, view: SeatView) -> None:  # noqa: B027 - optional hook
        pass

    def act(self, view: SeatView) -> int:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class RandomAgent(Agent):
    """Uniform over the legal moves: :class:`dominoes_env.RandomPlayer`, the single-agent env's
    default opponent, as an :class:`Agent`. Its ``act`` is ``RandomPlayer.act`` run on this
    agent's ``rng``, so the same seed gives the same moves as a ``RandomPlayer``."""

    name = "random"

    def act(self, view: SeatView) -> int:
        return RandomPlayer.act(self, view)
