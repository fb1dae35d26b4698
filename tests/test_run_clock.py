"""The trainers' one run clock, :class:`~dominoes_env.cli_support.RunClock`: the run's wall
seconds of training = the seconds its ``--resume`` checkpoint recorded + this process's since
the clock started; an idle run (nothing left to train) keeps the seconds recorded. (Each
trainer's use of it, where it starts and what an idle resume writes, is tested with the
trainer.)"""

from __future__ import annotations

import math

import pytest

from dominoes_env.cli_support import RunClock


class Ticks:
    """A timer the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_seconds_are_those_recorded_plus_this_process_s_since_the_start():
    ticks = Ticks()
    clock = RunClock(12.5, timer=ticks)
    ticks.now += 60  # set-up and loading: not counted
    assert (clock.seconds(), clock.elapsed(), clock.started) == (12.5, 0.0, False)
    clock.start()
    ticks.now += 3
    assert (clock.seconds(), clock.elapsed(), clock.started) == (15.5, 3.0, True)
    assert RunClock().seconds() == 0.0


def test_an_idle_run_keeps_the_seconds_recorded():
    ticks = Ticks()
    clock = RunClock(7.0, timer=ticks)
    clock.mark_idle()
    ticks.now += 100
    assert (clock.seconds(), clock.elapsed(), clock.idle) == (7.0, 0.0, True)
    with pytest.raises(RuntimeError, match="an idle run's clock does not start"):
        clock.start()


def test_a_clock_starts_once_and_a_started_one_is_not_idle():
    clock = RunClock()
    clock.start()
    with pytest.raises(RuntimeError, match="started already"):
        clock.start()
    with pytest.raises(RuntimeError, match="the run is not idle"):
        clock.mark_idle()


@pytest.mark.parametrize("recorded", [-1.0, math.nan, math.inf, True, "3"])
def test_recorded_seconds_must_be_seconds(recorded):
    with pytest.raises(ValueError, match="recorded seconds must be a finite number >= 0"):
        RunClock(recorded)
