"""A trainer's run clock (:class:`RunClock`): the run's wall seconds of training, across
``--resume``.

The three trainers (``experiments.train_ppo``, ``train_jax``, ``train_rllib``) record these
seconds as ``wall_s`` (in ``eval.csv``, in ``policy.json`` and in each checkpoint; ``seconds``
in train_rllib's ``progress.csv``), and all three count them by this one rule:

- the run's seconds = the seconds the ``--resume`` checkpoint recorded (0 for a new run) +
  this process's seconds since :meth:`RunClock.start`;
- a trainer starts its clock once, when its run is set up and loaded, just before its first
  work of training: its flags, folder and ``--resume`` checkpoint checked, the folder started,
  the environments, networks or algorithm built and a resumed checkpoint restored. So the
  seconds count what trains the run (its step-0 evaluation, train_ppo's behaviour cloning,
  the rollouts and updates, JAX's compilation of its first update, the evaluations,
  checkpoints and logs between updates), not the start-up that each process repeats (torch's
  or JAX's import, Ray's start, forking the environments, loading a checkpoint): a run
  stopped and resumed ten times records about the seconds one uninterrupted run would;
- a ``--resume`` that has nothing left to train marks its clock idle (:meth:`RunClock.mark_idle`)
  instead of starting it: its seconds stay as the checkpoint recorded them.

>>> ticks = iter([10.0, 12.5, 14.0])
>>> clock = RunClock(recorded=100.0, timer=lambda: next(ticks))
>>> clock.seconds()  # not started: the seconds recorded
100.0
>>> clock.start()  # reads 10.0
>>> clock.seconds(), clock.elapsed()  # read at 12.5, then at 14.0
(102.5, 4.0)
>>> idle = RunClock(recorded=100.0)
>>> idle.mark_idle()
>>> idle.seconds(), idle.elapsed(), idle.idle
(100.0, 0.0, True)
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable


class RunClock:
    """The run's wall seconds of training (the module says when it starts and what it counts):
    ``recorded`` (those the checkpoint that ``--resume`` continues recorded; 0 for a new run)
    plus this process's since :meth:`start` (none before it, and none for an idle run:
    :meth:`mark_idle`). ``timer``: the clock read, in seconds (``time.perf_counter``).

    ``ValueError`` for ``recorded`` that is no number of seconds (negative, NaN, infinite);
    ``RuntimeError`` for a clock started twice, or started after it was marked idle (or marked
    idle once started)."""

    def __init__(self, recorded: float = 0.0, *,
                 timer: Callable[[], float] = time.perf_counter) -> None:
        if (isinstance(recorded, bool) or not isinstance(recorded, (int, float))
                or not math.isfinite(recorded) or recorded < 0):
            raise ValueError(f"recorded seconds must be a finite number >= 0, not {recorded!r}")
        self.recorded = float(recorded)
        self._timer = timer
        self._started: float | None = None
        self._idle = False

    @property
    def idle(self) -> bool:
        """Whether the run has nothing to train (:meth:`mark_idle`)."""
        return self._idle

    @property
    def started(self) -> bool:
        """Whether :meth:`start` was called."""
        return self._started is not None

    def start(self) -> None:
        """Count this process's seconds from now on (once: the run is set up and loaded)."""
        if self._idle:
            raise RuntimeError("an idle run's clock does not start: it trains nothing")
        if self._started is not None:
            raise RuntimeError("the run's clock was started already")
        self._started = self._timer()

    def mark_idle(self) -> None:
        """The run has nothing to train (a ``--resume`` at or past its end): its seconds stay
        as recorded, whatever this process does."""
        if self._started is not None:
            raise RuntimeError("the run's clock was started: the run is not idle")
        self._idle = True

    def elapsed(self) -> float:
        """This process's seconds of training: since :meth:`start` (0 before it, and for an
        idle run)."""
        if self._started is None:
            return 0.0
        return self._timer() - self._started

    def seconds(self) -> float:
        """The run's wall seconds of training so far: :attr:`recorded` + :meth:`elapsed`."""
        return self.recorded + self.elapsed()
