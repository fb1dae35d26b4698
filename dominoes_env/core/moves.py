"""Moves and ends: the value types players and records use.

An *action code* is the compact integer form the engine and the RL faces use:
``code = tile_index * 4 + end_index`` with ends ``left=0, right=1, up=2, down=3``. The lead is
played with the end index of ``left`` (code ``tile_index * 4``). :func:`tile_of`,
:func:`end_of` and :func:`code_of` convert; only the engine's innermost loops spell the
arithmetic out.

>>> from dominoes_env.core.tiles import Tile
>>> str(Move(Tile(1, 6), "left")), str(Move(Tile(6, 6), None))
('[1|6]@left', '[6|6] lead')
"""

from __future__ import annotations

from typing import NamedTuple

from .tiles import Tile
from .validation import short_repr

LEFT, RIGHT, UP, DOWN = 0, 1, 2, 3
END_NAMES = ("left", "right", "up", "down")
END_INDEX = {name: i for i, name in enumerate(END_NAMES)}


def tile_of(code: int) -> int:
    """The tile index of an action code.

    >>> tile_of(109), end_of(109), code_of(27, RIGHT)
    (27, 1, 109)
    """
    return code >> 2


def end_of(code: int) -> int:
    """The end index of an action code (``LEFT`` for a lead)."""
    return code & 3


def code_of(tile: int, end: int = LEFT) -> int:
    """The action code of a tile index played on an end index (the lead: ``LEFT``)."""
    return tile << 2 | end


class Move(NamedTuple):
    """A play: a tile and the end it goes on (``None`` for the lead).

    For the lead, the tile's orientation matters: ``Move(Tile(6, 4), None)`` shows 6 at ``left``
    and 4 at ``right``; the halves of a ``Tile`` built directly are kept as given.
    """

    tile: Tile
    end: str | None

    def __str__(self) -> str:
        return f"{self.tile} lead" if self.end is None else f"{self.tile}@{self.end}"


def end_index(end: str) -> int:
    try:
        return END_INDEX[end]
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown end {short_repr(end)}; allowed: {', '.join(END_NAMES)} (or null for the lead)"
        ) from None
