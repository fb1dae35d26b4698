"""``OpponentPool``: one agent that is a different member each match (or episode).

Training uses it as the opponent of ``SingleAgentEnv``: fixed agents (random, greedy, a small
search) and frozen snapshots of the learning policy, each drawn with its weight at every
``reset``. All snapshots share one weight (the ``group`` "self"), split evenly between them, so
the pool grows without drowning out the fixed agents.

>>> from agents import RandomAgent, make_agent
>>> pool = OpponentPool([(RandomAgent(), 1.0), (make_agent("greedy"), 3.0)], seed=0)
>>> sorted({type(pool.reset(seed=s) or pool.current).__name__ for s in range(20)})
['GreedyAgent', 'RandomAgent']
"""

from __future__ import annotations

import math
import random
from typing import Any

from dominoes_env.core import SeatView
from dominoes_env.core.validation import ParameterTypeError, as_float, as_int, short_repr

from .base import Agent


def _check_member(name: str, agent: Any) -> None:
    """A ``TypeError`` naming ``name`` unless ``agent`` is an agent object: callable ``act``
    and ``reset`` (:class:`~agents.base.AgentProtocol`); ``None`` and a class are refused
    here, when the pool is built, not at its next ``reset()``."""
    if isinstance(agent, type) or not all(callable(getattr(agent, method, None))
                                          for method in ("act", "reset")):
        raise ParameterTypeError(f"{name}={short_repr(agent)} is no agent: a pool member has "
                                 "act(view) and reset(seed) methods (see agents.base.Agent)")


class OpponentPool(Agent):
    """Draws one member per :meth:`reset`, by weight; acts as that member until the next reset."""

    name = "pool"

    def __init__(self, members: list[tuple[Agent, float]] | None = None, seed: int | None = None,
                 self_weight: float = 0.0):
        super().__init__(seed)
        # NaN was taken (and no snapshot ever drawn), True as 1, "2" a bare TypeError
        self.self_weight = as_float("self_weight", self_weight, 0)
        if members is None:
            members = []
        if not isinstance(members, (list, tuple)):
            raise ParameterTypeError(f"members={short_repr(members)} must be a list of "
                                     "(agent, weight) pairs")
        self.fixed: list[tuple[Agent, float]] = []
        for k, pair in enumerate(members):
            if not isinstance(pair, (list, tuple)) or len(pair) != 2:
                raise ParameterTypeError(f"members[{k}]={short_repr(pair)} must be an "
                                         "(agent, weight) pair")
            self.add(*pair)
        self.snapshots: list[Agent] = []
        self.current: Agent | None = None
        self.draws: dict[str, int] = {}

    def add(self, agent: Agent, weight: float) -> None:
        """Add a fixed member (an agent: ``act`` and ``reset`` methods) with a positive,
        finite weight."""
        _check_member("agent", agent)
        weight = as_float("weight", weight)  # inf failed at the next reset, "2" a bare error
        if not weight > 0:
            raise ValueError(f"a pool member's weight must be positive, got {weight!r}")
        if not math.isfinite(self.self_weight + sum(w for _, w in self.fixed) + weight):
            raise ValueError(f"weight={weight!r}: the pool's weights would sum past what a "
                             "float holds")
        self.fixed.append((agent, weight))

    def add_snapshot(self, agent: Agent, max_snapshots: int | None = None) -> None:
        """Add a frozen snapshot of the learner (the oldest goes beyond ``max_snapshots``)."""
        _check_member("agent", agent)
        max_snapshots = as_int("max_snapshots", max_snapshots, 0, optional=True)
        self.snapshots.append(agent)
        if max_snapshots is not None and len(self.snapshots) > max_snapshots:
            del self.snapshots[0]

    def _choose(self) -> Agent:
        agents = [a for a, _ in self.fixed]
        weights = [w for _, w in self.fixed]
        if self.snapshots and self.self_weight > 0:
            share = self.self_weight / len(self.snapshots)
            agents += self.snapshots
            weights += [share] * len(self.snapshots)
        if not agents:
            raise ValueError("the opponent pool is empty: add a member or a snapshot")
        return self.rng.choices(agents, weights)[0]

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.current = self._choose()
        key = getattr(self.current, "name", type(self.current).__name__)
        self.draws[key] = self.draws.get(key, 0) + 1
        self.current.reset(None if seed is None else random.Random(seed).getrandbits(32))

    def begin_hand(self, view: SeatView) -> None:
        if self.current is None:
            self.reset()
        begin = getattr(self.current, "begin_hand", None)  # optional in the agent protocol
        if callable(begin):
            begin(view)

    def act(self, view: SeatView) -> int:
        if self.current is None:
            self.reset()
        return self.current.act(view)
