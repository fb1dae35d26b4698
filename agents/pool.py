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

import random

from dominoes_env.core import SeatView

from .base import Agent


class OpponentPool(Agent):
    """Draws one member per :meth:`reset`, by weight; acts as that member until the next reset."""

    name = "pool"

    def __init__(self, members: list[tuple[Agent, float]] | None = None, seed: int | None = None,
                 self_weight: float = 0.0):
        super().__init__(seed)
        self.fixed: list[tuple[Agent, float]] = []
        for agent, weight in members or []:
            self.add(agent, weight)
        self.snapshots: list[Agent] = []
        if self_weight < 0:
            raise ValueError(f"self_weight={self_weight!r} must be >= 0")
        self.self_weight = float(self_weight)
        self.current: Agent | None = None
        self.draws: dict[str, int] = {}

    def add(self, agent: Agent, weight: float) -> None:
        """Add a fixed member with a positive weight."""
        if not weight > 0:
            raise ValueError(f"a pool member's weight must be positive, got {weight!r}")
        self.fixed.append((agent, float(weight)))

    def add_snapshot(self, agent: Agent, max_snapshots: int | None = None) -> None:
        """Add a frozen snapshot of the learner (the oldest goes beyond ``max_snapshots``)."""
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
        self.current.begin_hand(view)

    def act(self, view: SeatView) -> int:
        if self.current is None:
            self.reset()
        return self.current.act(view)
