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

import operator
from typing import TYPE_CHECKING, NamedTuple

from .errors import IllegalMoveError
from .tiles import Tile
from .validation import as_int, is_bool, short_repr

if TYPE_CHECKING:
    from .tiles import TileSet

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


class _MoveFields(NamedTuple):
    tile: Tile
    end: str | None


class Move(_MoveFields):
    """A play: a tile and the end it goes on (``None`` for the lead).

    For the lead, the tile's orientation matters: ``Move(Tile(6, 4), None)`` shows 6 at ``left``
    and 4 at ``right``; the halves of a ``Tile`` built directly are kept as given. The end is
    a name, what :attr:`HandState.legal_moves <dominoes_env.core.HandState.legal_moves>`
    gives; a move built with one of the integer constants ``LEFT`` .. ``DOWN`` holds that end's
    name, so it is the same move (``move in hand.legal_moves`` agrees with ``is_legal``). An end
    that is neither is kept as given: :meth:`HandState.play
    <dominoes_env.core.HandState.play>` refuses it, naming it.

    >>> Move(Tile(1, 6), RIGHT) == Move(Tile(1, 6), "right"), str(Move(Tile(1, 6), RIGHT))
    (True, '[1|6]@right')
    """

    __slots__ = ()

    def __new__(cls, tile: Tile, end: str | int | None) -> Move:
        if end is not None and end.__class__ is not str:
            try:
                end = END_NAMES[end_index(end)]
            except ValueError:  # no end at all: kept, for play to refuse it by name
                pass
        return _MoveFields.__new__(cls, tile, end)

    @classmethod
    def _make(cls, iterable) -> Move:
        """A move from a tile and an end (NamedTuple's ``_make``, which ``_replace`` calls),
        its end normalised as the constructor does: ``move._replace(end=0)`` is the move onto
        ``"left"``."""
        return cls(*iterable)

    def __str__(self) -> str:
        return f"{self.tile} lead" if self.end is None else f"{self.tile}@{self.end}"


def end_index(end: str | int) -> int:
    """The end index of an end: its name (``"left"``, ``"right"``, ``"up"``, ``"down"``) or one
    of the integer constants ``LEFT`` .. ``DOWN`` (``0..3``, as
    :func:`~dominoes_env.obs.actions.encode_action` takes them); a ``ValueError`` naming what
    is allowed otherwise.

    >>> end_index("up"), end_index(UP)
    (2, 2)
    """
    try:
        return END_INDEX[end]
    except (KeyError, TypeError):  # TypeError: an unhashable end
        pass
    if not is_bool(end) and hasattr(end, "__index__"):  # numpy's integers too, not True
        try:
            e = operator.index(end)
        except (TypeError, ValueError, OverflowError):
            e = -1
        if 0 <= e < len(END_NAMES):
            return e
    raise ValueError(f"unknown end {short_repr(end)}; allowed: {', '.join(END_NAMES)} or "
                     f"0..{len(END_NAMES) - 1} (None for the lead)")


def parse_move(move: Move | int | tuple, tiles: TileSet, lead: bool) -> tuple[int, bool]:
    """``(action code, flipped)`` of a move in any form ``HandState.play`` takes: a
    :class:`Move`, an action code, or a ``(tile, end)`` pair with the tile as ``(a, b)`` and
    the end as :func:`end_index` takes it. ``lead``: whether the move is a hand's lead (its end
    is ``None``; ``flipped``: its tile written high half first). Only the move's form is
    checked, not the position: :class:`~dominoes_env.core.errors.IllegalMoveError` for a move
    no position of the kind allows (a tile not of the set, an unknown end, an end on the lead),
    ``TypeError`` for what is no move at all. ``HandState.check_move`` and the ``is_legal`` of
    a state and of a view read moves with it.

    >>> from dominoes_env.core import tile_set
    >>> parse_move(((6, 1), "right"), tile_set(6), lead=False) == (tile_set(6).index(1, 6) * 4
    ...                                                            + RIGHT, False)
    True
    """
    if not isinstance(move, tuple):
        try:
            move = as_int("move", move)
        except TypeError:
            raise TypeError("a move is a Move, an action code or a (tile, end) pair, not "
                            f"{short_repr(move)}") from None
    if isinstance(move, int):
        if not 0 <= move < tiles.num_tiles * 4:
            raise IllegalMoveError(move, f"action code out of range 0..{tiles.num_tiles * 4 - 1}")
        if lead and end_of(move):
            raise IllegalMoveError(Move(tiles.tiles[tile_of(move)], None),
                                   "the lead is played with end code 0 (left)")
        return move, False
    if len(move) != 2:
        raise TypeError(f"a move is a (tile, end) pair, not {short_repr(move)}")
    tile, end = move
    if not isinstance(tile, (tuple, list)) or len(tile) != 2:
        raise IllegalMoveError(move, "a tile is a pair of pip values (a, b)")
    try:
        t = tiles.index(tile[0], tile[1])
    except ValueError as err:
        raise IllegalMoveError(move, str(err)) from None
    if lead:
        if end is not None:
            raise IllegalMoveError(move, "the lead has no end (end must be None)")
        return code_of(t), tile[0] > tile[1]
    if end is None:
        raise IllegalMoveError(move, "only the lead has no end; name an end")
    try:
        e = end_index(end)
    except ValueError as err:
        raise IllegalMoveError(move, str(err)) from None
    return code_of(t, e), False
