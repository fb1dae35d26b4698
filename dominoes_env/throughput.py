"""What the benchmarks share: how fast an environment's AEC loop runs (decision steps per CPU
second of a PettingZoo AEC env driven with uniformly random legal actions, the observation of
the agent to act read every step: the loop that ``python -m experiments.bench_env`` and
``python -m experiments.bench_jax`` time and print), and the machine's load average, which
every benchmark prints at its start and its end so that a figure taken on a busy machine says
so (:func:`load_average`, :func:`load_line`).

>>> import dominoes_env
>>> run_aec(lambda: dominoes_env.env(num_players=2), 0.01) > 0
True
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable

from .core.validation import as_float

__all__ = ["clock", "cpus_line", "load_average", "load_line", "run_aec"]

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


def load_average() -> list[float] | None:
    """The machine's load averages over the last 1, 5 and 15 minutes (``os.getloadavg``),
    rounded to two decimals; ``None`` where the system keeps none (Windows).

    >>> figures = load_average()
    >>> figures is None or (len(figures) == 3 and min(figures) >= 0)
    True
    """
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):  # no getloadavg, or the system cannot say
        return None


def load_line(when: str, figures: list[float] | None = None) -> str:
    """One line a benchmark prints at its ``when`` (``"start"``, ``"end"``): the load averages
    ``figures`` (default: :func:`load_average` now) and the CPUs they compare with.

    >>> load_line("start", [1.5, 1.25, 0.75]).split(" on ")[0]
    'load average at start (1, 5, 15 min): 1.50, 1.25, 0.75'
    """
    if figures is None:
        figures = load_average()
    cpus = os.cpu_count()
    if figures is None:
        return f"load average at {when}: not available on this system ({cpus or '?'} CPUs)"
    return (f"load average at {when} (1, 5, 15 min): "
            f"{', '.join(f'{x:.2f}' for x in figures)} on {cpus or '?'} CPUs")


def cpus_line(mine: int | None = None, total: int | None = None) -> str:
    """The CPUs this process may run on (``mine``, default its affinity) of the machine's
    (``total``), as the header says it: XLA spreads a step over them, and its hand-offs between
    threads cost CPU time of their own (pinned to one core with ``taskset -c 0``, a step takes
    about a fifth less CPU time: docs/results.md).

    >>> cpus_line(1, 2)
    "1 of 2 CPUs for XLA's threads"
    """
    total = total or os.cpu_count() or 1
    if mine is None:
        mine = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else total
    return f"{mine} of {total} CPU{'s' if total > 1 else ''} for XLA's threads"
