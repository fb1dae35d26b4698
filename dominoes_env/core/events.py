"""Typed records of what happens in a hand: the public events and how the hand ended.

The events of a hand's public ``history`` are :class:`Play`, :class:`Draw` and :class:`Pass`
records. They are named tuples whose first field is the kind, so code written for the plain
tuples ``("play", seat, code, points)``, ``("draw", seat, n)`` and ``("pass", seat)`` reads them
unchanged (``ev[0] == "play"``, ``ev[2]``, tuple equality, JSON as lists), while new code reads
fields (``ev.seat``, ``ev.tile``, ``isinstance(ev, Play)``).

A finished hand's :attr:`~dominoes_env.core.HandState.outcome` is an :class:`Outcome`: how it
ended (``"domino"`` or ``"blocked"``), who went out, and the :class:`Award` (``None`` for a
blocked hand with tied fewest pips). ``result`` and ``award`` are 2-tuples (the named tuples
:class:`Result` and :class:`Award`), so code that unpacks them as pairs reads them unchanged.

>>> ev = Play(1, 109, 15)
>>> ev, ev == ("play", 1, 109, 15), ev.tile, ev.end
(Play(kind='play', seat=1, code=109, points=15), True, 27, 1)
>>> Draw(0, 2), Pass(3) == ("pass", 3)
(Draw(kind='draw', seat=0, n=2), True)
>>> Outcome("domino", 0, Award(0, 10)).award.points
10
"""

from __future__ import annotations

from collections import namedtuple
from typing import NamedTuple

from .moves import end_of, tile_of

PLAY, DRAW, PASS = "play", "draw", "pass"
DOMINO, BLOCKED = "domino", "blocked"


class Play(namedtuple("Play", "kind seat code points")):
    """``seat`` played action ``code`` and scored ``points`` (the count if a multiple of 5)."""

    __slots__ = ()

    def __new__(cls, seat: int, code: int, points: int):
        return tuple.__new__(cls, (PLAY, seat, code, points))

    def __getnewargs__(self):
        return self[1:]

    @property
    def tile(self) -> int:
        """The tile index played."""
        return tile_of(self[2])

    @property
    def end(self) -> int:
        """The end index it went on (``0`` for the lead)."""
        return end_of(self[2])


class Draw(namedtuple("Draw", "kind seat n")):
    """``seat`` could not play and drew ``n`` tiles from the boneyard."""

    __slots__ = ()

    def __new__(cls, seat: int, n: int):
        return tuple.__new__(cls, (DRAW, seat, n))

    def __getnewargs__(self):
        return self[1:]


class Pass(namedtuple("Pass", "kind seat")):
    """``seat`` could not play (nor draw a playable tile) and passed."""

    __slots__ = ()

    def __new__(cls, seat: int):
        return tuple.__new__(cls, (PASS, seat))

    def __getnewargs__(self):
        return self[1:]


class Award(NamedTuple):
    """The points a finished hand gives a side."""

    side: int
    points: int


class Result(NamedTuple):
    """How a hand ended: ``("domino", seat)`` or ``("blocked", None)``."""

    kind: str
    seat: int | None


class Outcome(NamedTuple):
    """A finished hand: ``kind`` (``"domino"`` / ``"blocked"``), the ``seat`` that went out
    (``None`` when blocked) and the ``award`` (``None``: nobody scores it)."""

    kind: str
    seat: int | None
    award: Award | None


def as_event(ev: tuple) -> Play | Draw | Pass:
    """The typed record of a plain event tuple (another backend's history, an old pickle).

    >>> as_event(("draw", 1, 3))
    Draw(kind='draw', seat=1, n=3)
    """
    kind = ev[0]
    if kind == PLAY:
        return Play(*ev[1:])
    if kind == DRAW:
        return Draw(*ev[1:])
    if kind == PASS:
        return Pass(*ev[1:])
    raise ValueError(f"unknown event kind {kind!r}; allowed: {PLAY!r}, {DRAW!r}, {PASS!r}")
