"""Agents used by the tournament tests (importable as ``tests.tournament_agents:Name``)."""

from __future__ import annotations

import time

from agents.base import RandomAgent


class SlowRandomAgent(RandomAgent):
    """A random agent that sleeps ``delay`` seconds per move, so a run can be caught mid-way."""

    name = "slow-random"

    def __init__(self, seed: int | None = None, delay: float = 0.002):
        super().__init__(seed)
        self.delay = delay

    def act(self, view):
        time.sleep(self.delay)
        return super().act(view)


class FirstLegalAgent(RandomAgent):
    """Always the first legal action: deterministic whatever its seed."""

    name = "first-legal"

    def act(self, view):
        return view.legal[0]
