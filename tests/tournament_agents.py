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


def _unlucky(agent) -> bool:
    """True for about a third of the matches (by the agent's seed, so reproducibly)."""
    return agent.rng.random() < 0.34


class RaisingAgent(RandomAgent):
    """Raises ``RuntimeError`` on its first move in about a third of its matches."""

    name = "raising"

    def reset(self, seed=None):
        super().reset(seed)
        self.fail = _unlucky(self)

    def act(self, view):
        if self.fail:
            raise RuntimeError("boom from a test agent")
        return super().act(view)


class FloatAgent(RandomAgent):
    """Answers a legal code as a float (``3.0``): not an action code."""

    name = "float"

    def act(self, view):
        return float(super().act(view))


class ExitingAgent(RandomAgent):
    """Calls ``sys.exit(5)`` on its first move."""

    name = "exiting"

    def act(self, view):
        raise SystemExit(5)


class HangingAgent(RandomAgent):
    """Never answers in about a third of its matches (sleeps, and swallows exceptions)."""

    name = "hanging"

    def reset(self, seed=None):
        super().reset(seed)
        self.hang = _unlucky(self)

    def act(self, view):
        while self.hang:
            try:
                time.sleep(3600)
            except Exception:  # a badly written agent: an Exception timeout would not stop it
                pass
        return super().act(view)


class LateRaisingAgent(RandomAgent):
    """Plays ``moves`` moves, then raises ``RuntimeError``."""

    name = "late-raising"

    def __init__(self, seed=None, moves: int = 3):
        super().__init__(seed)
        self.moves = moves

    def act(self, view):
        if self.moves <= 0:
            raise RuntimeError("late boom")
        self.moves -= 1
        return super().act(view)


class AnnouncingSleeper(RandomAgent):
    """Writes ``thinking`` to stderr, then sleeps ``delay`` seconds on every move (a readiness
    marker for tests that interrupt a run while an agent thinks)."""

    name = "announcing-sleeper"

    def __init__(self, seed=None, delay: float = 30.0):
        super().__init__(seed)
        self.delay = delay

    def act(self, view):
        import sys

        print("thinking", file=sys.stderr, flush=True)
        time.sleep(self.delay)
        return super().act(view)


class ProcessKillingAgent(RandomAgent):
    """Ends the process it plays in (``os._exit``) on its first move in a third of its matches."""

    name = "process-killing"

    def reset(self, seed=None):
        super().reset(seed)
        self.kill = _unlucky(self)

    def act(self, view):
        if self.kill:
            import os

            os._exit(3)
        return super().act(view)


class BadAnswerAgent(RandomAgent):
    """Plays ``moves`` legal moves, then answers what is no legal action code: ``answer=huge``
    an integer no move has, ``none`` ``None``, ``bool`` ``True``."""

    name = "bad-answer"

    def __init__(self, seed=None, answer: str = "huge", moves: int = 0):
        super().__init__(seed)
        self.answer = {"huge": 10**6, "none": None, "bool": True}[answer]
        self.moves = moves

    def act(self, view):
        if self.moves <= 0:
            return self.answer
        self.moves -= 1
        return super().act(view)
