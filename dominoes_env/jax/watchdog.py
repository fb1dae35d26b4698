"""A watchdog for compiled computations that never return.

XLA's CPU runtime can wedge: a jitted update that takes a second and a half ran for over ten
minutes without finishing (its threads busy, no error), 10 million steps into a training run,
and the same stretch resumed from the checkpoint before it ran through. Python cannot interrupt
the wait (the computation holds no Python frame), so :class:`Watchdog` watches from a thread of
its own: a call that runs far longer than the calls before it ends the process with one line
that says what to do, instead of a silent hang.

>>> import time
>>> with Watchdog(on_stall=lambda seconds: print("stalled"), first_s=0.05) as dog:
...     with dog.watch():  # a block that never ends by itself
...         while not dog.fired:
...             time.sleep(0.01)
stalled
"""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager


class Watchdog:
    """Calls ``on_stall(seconds)`` (once) when a :meth:`watch`-ed block runs longer than its
    limit (:meth:`limit`: ``first_s`` for the first two blocks, the first of which compiles,
    then ``max(floor_s, factor x the median of the blocks after the first)``). ``on_stall``
    runs on the watchdog's thread; it usually prints a line and ends the process
    (``os._exit``)."""

    def __init__(self, on_stall: Callable[[float], None], *, first_s: float = 3600.0,
                 floor_s: float = 600.0, factor: float = 50.0, poll_s: float = 0.01):
        for name, value in (("first_s", first_s), ("floor_s", floor_s), ("factor", factor),
                            ("poll_s", poll_s)):
            if not value > 0:
                raise ValueError(f"{name}={value!r} must be a positive number of seconds")
        self.on_stall = on_stall
        self.first_s, self.floor_s, self.factor, self.poll_s = first_s, floor_s, factor, poll_s
        self.durations: list[float] = []
        self._started: float | None = None
        self._limit = first_s
        self._fired = False
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="watchdog", daemon=True)

    def start(self) -> Watchdog:
        """Start watching (its thread)."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop watching (and wait for its thread)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def __enter__(self) -> Watchdog:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def fired(self) -> bool:
        """Whether ``on_stall`` was called."""
        return self._fired

    def limit(self) -> float:
        """The seconds the next block may take: ``first_s`` until a block after the first
        (which compiles) has been timed, then ``factor`` times their median, at least
        ``floor_s``."""
        if len(self.durations) < 2:
            return self.first_s
        return max(self.floor_s, self.factor * statistics.median(self.durations[1:]))

    @contextmanager
    def watch(self) -> Iterator[None]:
        """Watch the block inside (its duration counts for the later limits)."""
        with self._lock:
            self._limit = self.limit()
            self._started = time.monotonic()
        try:
            yield
        finally:
            with self._lock:
                self.durations.append(time.monotonic() - self._started)
                self._started = None

    def _run(self) -> None:
        while not self._stop.wait(self.poll_s):
            with self._lock:
                started, limit = self._started, self._limit
            if started is None or self._fired:
                continue
            elapsed = time.monotonic() - started
            if elapsed > limit:
                self._fired = True
                self.on_stall(elapsed)
