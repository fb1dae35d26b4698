"""Tiles of a double-N set, their stable indices and the bitmask tables the engine runs on.

A set with ``max_pip = m`` holds every tile ``[a|b]`` with ``0 <= a <= b <= m``:
28 tiles for double-six, 55 for double-nine, 91 for double-twelve.

Tile indices are stable and documented: tiles are numbered in lexicographic order of
``(low, high)``::

    index 0 = [0|0], 1 = [0|1], ..., m = [0|m], m+1 = [1|1], ..., last = [m|m]

so ``index(a, b) = a*(m+1) - a*(a-1)//2 + (b - a)`` for ``a <= b``. A set of tiles (a hand,
the tiles played) is an ``int`` bitmask with bit ``i`` for tile ``i``.

>>> ts = tile_set(6)
>>> ts.num_tiles, ts.index(2, 5), ts.tiles[ts.index(5, 2)]
(28, 16, Tile(low=2, high=5))
>>> str(ts.tiles[27]), ts.pips[27]
('[6|6]', 12)
"""

from __future__ import annotations

from functools import cache
from typing import NamedTuple

from .validation import as_int, short_repr

SUPPORTED_MAX_PIPS = (6, 9, 12)


class Tile(NamedTuple):
    """A tile ``[low|high]`` with ``low <= high``."""

    low: int
    high: int

    @property
    def pips(self) -> int:
        """The tile's pips, both halves together (what it adds to a hand's count of pips).

        >>> Tile(3, 6).pips, Tile(5, 5).is_double
        (9, True)
        """
        return self.low + self.high

    @property
    def is_double(self) -> bool:
        """Whether both halves show the same value (a double: it stands across the line of
        play, and only a double can be the spinner)."""
        return self.low == self.high

    def __str__(self) -> str:
        return f"[{self.low}|{self.high}]"


class TileSet:
    """Precomputed tables for one ``max_pip``; get the shared instance with :func:`tile_set`."""

    __slots__ = (
        "max_pip",
        "num_values",
        "num_tiles",
        "tiles",
        "pips",
        "low",
        "high",
        "is_double",
        "suit_mask",
        "full_mask",
        "double_mask",
        "_index",
    )

    def __init__(self, max_pip: int):
        # a size outside SUPPORTED_MAX_PIPS built tables no rule reads (13, -1, True), and
        # 10**30 never finished building them
        max_pip = as_int("max_pip", max_pip)
        if max_pip not in SUPPORTED_MAX_PIPS:
            raise ValueError(f"max_pip={short_repr(max_pip)} is not supported; allowed: "
                             f"{SUPPORTED_MAX_PIPS}")
        self.max_pip = max_pip
        self.num_values = max_pip + 1
        self.tiles: tuple[Tile, ...] = tuple(
            Tile(a, b) for a in range(max_pip + 1) for b in range(a, max_pip + 1)
        )
        self.num_tiles = len(self.tiles)
        self.pips = tuple(t.low + t.high for t in self.tiles)
        self.low = tuple(t.low for t in self.tiles)
        self.high = tuple(t.high for t in self.tiles)
        self.is_double = tuple(t.low == t.high for t in self.tiles)
        self._index = {}
        for i, t in enumerate(self.tiles):
            self._index[(t.low, t.high)] = i
            self._index[(t.high, t.low)] = i
        #: suit_mask[v]: bitmask of every tile with a half equal to v
        self.suit_mask = tuple(
            sum(1 << i for i, t in enumerate(self.tiles) if v in t) for v in range(max_pip + 1)
        )
        self.full_mask = (1 << self.num_tiles) - 1
        self.double_mask = sum(1 << i for i, t in enumerate(self.tiles) if t.low == t.high)

    def index(self, a: int, b: int) -> int:
        """Index of tile ``[a|b]`` (halves in either order); ``ValueError`` if not in the set."""
        try:
            if type(a) is not int or type(b) is not int:  # numpy ints pass; 1.0, True do not
                a, b = as_int("a", a), as_int("b", b)
            return self._index[(a, b)]
        except (KeyError, TypeError, ValueError):
            a, b = short_repr(a, 20), short_repr(b, 20)
            raise ValueError(
                f"[{a}|{b}] is not a tile of the double-{self.max_pip} set "
                f"(halves must be integers 0..{self.max_pip})"
            ) from None

    def mask_tiles(self, mask: int) -> list[Tile]:
        """The tiles of a bitmask, in index order."""
        return [self.tiles[i] for i in iter_bits(self._mask(mask))]

    def mask_pips(self, mask: int) -> int:
        """Total pips of the tiles in a bitmask."""
        pips = self.pips
        return sum(pips[i] for i in iter_bits(self._mask(mask)))

    def _mask(self, mask: int) -> int:
        # a negative mask never ran out of bits, one past full_mask named tiles the set lacks,
        # and None read as no tiles
        return as_int("mask", mask, 0, self.full_mask)

    def __repr__(self) -> str:
        return f"TileSet(max_pip={self.max_pip}, num_tiles={self.num_tiles})"


@cache
def tile_set(max_pip: int = 6) -> TileSet:
    """The shared :class:`TileSet` for a double-``max_pip`` set."""
    if max_pip not in SUPPORTED_MAX_PIPS:
        raise ValueError(f"max_pip={max_pip!r} is not supported; allowed: {SUPPORTED_MAX_PIPS}")
    return TileSet(max_pip)


def iter_bits(mask: int):
    """Yield the indices of the set bits of ``mask``, lowest first. ``mask`` must be >= 0: a
    negative one (bits without end) is a ``ValueError`` when the first index is asked for.

    >>> list(iter_bits(0b1010))
    [1, 3]
    """
    if mask < 0:
        raise ValueError(f"mask={short_repr(mask)} is negative; a set of tiles is a mask >= 0")
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def popcount(mask: int) -> int:
    return mask.bit_count()
