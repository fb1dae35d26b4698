"""How long agents think: the wall time of every ``act`` call, per seat, in a form that adds up.

:func:`agents.arena.play_match` times each decision of each seat and stores, per seat, a
:class:`DecisionTimes` in its result (``decision_times``; in a tournament's ``matches.jsonl`` as
``{"decisions", "seconds", "histogram"}``). Summing them over matches gives an agent's mean
time per decision exactly, and its 95th percentile to within a bin: times are counted in
logarithmic bins, :data:`BINS_PER_DECADE` per factor of ten (about 12% wide), so a match's line
stays a few hundred bytes whatever its length. The percentile is the geometric middle of the
bin that holds it (at most about 6% off).

>>> t = DecisionTimes()
>>> for seconds in (0.001, 0.001, 0.002, 0.010):
...     t.add(seconds)
>>> t.decisions, round(t.mean_ms(), 4)
(4, 3.5)
>>> 9.4 < t.quantile_ms(0.95) < 10.6
True
>>> DecisionTimes.from_dict(t.to_dict()) == t
True
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from dominoes_env.core.validation import is_finite_number, short_repr

#: histogram bins per factor of ten of seconds
BINS_PER_DECADE = 20
#: the bin of times at or below a nanosecond (a clock that did not move)
LOWEST_BIN = -9 * BINS_PER_DECADE
#: the bin of times at or above a day (nothing legitimate thinks that long)
HIGHEST_BIN = round(math.log10(86_400) * BINS_PER_DECADE)


def bin_of(seconds: float) -> int:
    """The histogram bin of a decision that took ``seconds`` (clamped to the bins' range).

    >>> bin_of(0.001), bin_of(0.0), bin_of(1e9)
    (-60, -180, 99)
    """
    if not seconds > 10.0**(LOWEST_BIN / BINS_PER_DECADE):
        return LOWEST_BIN
    if seconds >= 10.0**(HIGHEST_BIN / BINS_PER_DECADE):
        return HIGHEST_BIN
    return max(LOWEST_BIN, min(HIGHEST_BIN, math.floor(math.log10(seconds) * BINS_PER_DECADE)))


def bin_middle(index: int) -> float:
    """The geometric middle of bin ``index``, in seconds."""
    return 10.0 ** ((index + 0.5) / BINS_PER_DECADE)


@dataclass
class DecisionTimes:
    """Decisions counted, their total wall time and their histogram (bin -> decisions)."""

    decisions: int = 0
    seconds: float = 0.0
    histogram: dict[int, int] = field(default_factory=dict)

    def add(self, seconds: float) -> None:
        """Count one decision that took ``seconds``."""
        self.decisions += 1
        self.seconds += seconds
        b = bin_of(seconds)
        self.histogram[b] = self.histogram.get(b, 0) + 1

    def merge(self, other: DecisionTimes) -> None:
        """Add ``other``'s decisions to these."""
        self.decisions += other.decisions
        self.seconds += other.seconds
        for b, n in other.histogram.items():
            self.histogram[b] = self.histogram.get(b, 0) + n

    def mean_ms(self) -> float | None:
        """Mean milliseconds per decision (``None`` without decisions)."""
        return 1000 * self.seconds / self.decisions if self.decisions else None

    def quantile_ms(self, q: float) -> float | None:
        """The ``q`` quantile (nearest rank) in milliseconds, as the middle of its bin."""
        if not self.decisions:
            return None
        rank = max(1, math.ceil(q * self.decisions))
        seen = 0
        for b in sorted(self.histogram):
            seen += self.histogram[b]
            if seen >= rank:
                return 1000 * bin_middle(b)
        raise AssertionError("histogram counts do not add up")  # pragma: no cover

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``{"decisions", "seconds", "histogram": [[bin, count], ...]}``."""
        return {"decisions": self.decisions, "seconds": round(self.seconds, 9),
                "histogram": [[b, n] for b, n in sorted(self.histogram.items())]}

    @classmethod
    def from_dict(cls, data: Any) -> DecisionTimes:
        """Read :meth:`to_dict`'s form back (untrusted: ``ValueError`` naming what is wrong)."""
        if not isinstance(data, Mapping) or set(data) != {"decisions", "seconds", "histogram"}:
            raise ValueError(f"decision times must be an object with decisions, seconds and "
                             f"histogram, got {short_repr(data)}")
        decisions, seconds, hist = data["decisions"], data["seconds"], data["histogram"]
        if type(decisions) is not int or decisions < 0:
            raise ValueError(f"decisions must be an integer >= 0, got {short_repr(decisions)}")
        if not is_finite_number(seconds) or seconds < 0:  # 10**400: math.isfinite overflowed
            raise ValueError(f"seconds must be a finite number >= 0, got {short_repr(seconds)}")
        out = cls(decisions, float(seconds))
        if not isinstance(hist, list):
            raise ValueError(f"histogram must be a list of [bin, count], got {short_repr(hist)}")
        for item in hist:
            if (not isinstance(item, list) or len(item) != 2
                    or any(type(x) is not int for x in item)
                    or not LOWEST_BIN <= item[0] <= HIGHEST_BIN or item[1] < 1
                    or item[0] in out.histogram):
                raise ValueError(f"histogram entry {short_repr(item)} is not [bin, count] with "
                                 f"a bin in {LOWEST_BIN}..{HIGHEST_BIN}, once, and a count >= 1")
            out.histogram[item[0]] = item[1]
        if sum(out.histogram.values()) != decisions:
            raise ValueError(f"the histogram counts {sum(out.histogram.values())} decisions, "
                             f"not {decisions}")
        return out


def pooled(times: Iterable[DecisionTimes]) -> DecisionTimes:
    """All of ``times`` added up."""
    total = DecisionTimes()
    for t in times:
        total.merge(t)
    return total
