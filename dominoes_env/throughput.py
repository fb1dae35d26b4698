"""How fast an environment's AEC loop runs: decision steps per CPU second of a PettingZoo AEC
env driven with uniformly random legal actions, the observation of the agent to act read every
step (the loop that ``python -m experiments.bench_env`` and ``python -m experiments.bench_jax``
time and print).

>>> import dominoes_env
>>> run_aec(lambda: dominoes_env.env(num_players=2), 0.01) > 0
True
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

from .core.validation import as_float

__all__ = ["clock", "run_aec"]

#: the clock the loop is timed with: this process's CPU time, so other load on a shared machine
#: skews the figures less than wall time would (on an idle machine the two agree)
clock = time.process_time


def run_aec(make: Callable, seconds: float, seed: int = 0) -> float:
    """Decision steps per CPU second of the AEC loop on the env ``make()`` builds, for about
    ``seconds``: ``env.last()`` every step, a uniformly random legal action from its
    ``action_mask`` (seeded ``seed``), ``step``; whole episodes until the time is up (resets
    included in the time). A step is one decision: what ``step`` does by itself (our forced
    draws and passes) and a finished agent's closing ``step(None)`` are not counted.

    >>> run_aec(list, 0)
    Traceback (most recent call last):
    ...
    ValueError: seconds=0.0 is out of range; allowed: > 0
    """
    seconds = as_float("seconds", seconds, 0, low_open=True)
    env = make()
    env.reset(seed=seed)
    rng = random.Random(seed)
    steps = 0
    start = clock()
    deadline = start + seconds
    while True:
        for _agent in env.agent_iter():
            obs, _reward, terminated, truncated, _info = env.last()
            if terminated or truncated:
                action = None
            else:
                legal = obs["action_mask"].nonzero()[0]
                action = int(legal[rng.randrange(len(legal))])
                steps += 1
            env.step(action)
        if clock() > deadline:
            break
        env.reset()
    env.close()
    return steps / (clock() - start)
