"""Actions as the RL faces see them: ``Discrete(T * 4)`` action codes and their masks.

``code = tile_index * 4 + end`` with ends ``left=0, right=1, up=2, down=3``; the lead is played
with end ``0`` (the core's :func:`~dominoes_env.core.code_of`, :func:`~dominoes_env.core.tile_of`
and :func:`~dominoes_env.core.end_of`). :func:`encode_action` / :func:`decode_action` convert
with checks; the action mask is 1 exactly at the core's legal codes for the seat to play. The
same for every observation version.

>>> decode_action(encode_action(5, "up"))
(5, 2)
"""

from __future__ import annotations

import operator

import numpy as np

from ..core import SeatView, code_of, end_of, tile_of
from ..core.moves import end_index
from ..core.validation import as_int, short_repr
from . import NUM_ENDS, check_out

_INT8 = np.dtype(np.int8)
#: the most action codes a mask may have (double-twelve has 364)
_MAX_CODES = 1 << 16


def action_mask(view: SeatView, out: np.ndarray | None = None) -> np.ndarray:
    """``int8`` mask over the ``T * 4`` action codes: 1 exactly at ``view.legal`` (all zeros
    when it is not this seat's turn).

    >>> from dominoes_env.core import MatchState
    >>> m = MatchState(seed=0)
    >>> np.flatnonzero(action_mask(m.view(m.turn))).tolist() == sorted(m.legal_actions())
    True
    """
    if not isinstance(view, SeatView):
        raise TypeError(f"action_mask needs a SeatView, not {type(view).__name__}")
    size = view.rules.num_tiles * NUM_ENDS
    check_out(out, size, np.int8)
    mask = mask_of(view.legal, size)
    if out is None:
        return mask
    out[:] = mask
    return out


def mask_of(codes, size: int) -> np.ndarray:
    """A new ``int8`` array of ``size`` zeros with 1 at each of ``codes``.

    >>> mask_of([1, 3], 4).tolist()
    [0, 1, 0, 1]
    >>> mask_of([-1], 4)
    Traceback (most recent call last):
    ...
    ValueError: codes=[-1] holds -1, which is no code of 0..3
    """
    if size.__class__ is not int or not 0 <= size <= _MAX_CODES:
        size = as_int("size", size, 0, _MAX_CODES)
    buf = bytearray(size)
    c = buf  # no code yet: codes is no sequence
    try:
        for c in codes:
            if c < 0 or c.__class__ is bool:  # -1 set the last code, True code 1
                raise IndexError
            buf[c] = 1
    except (IndexError, TypeError):
        what = (f"holds {short_repr(c)}, which is" if c is not buf else "is")
        raise ValueError(f"codes={short_repr(codes)} {what} no code of 0..{size - 1}") from None
    return np.frombuffer(buf, _INT8)


def encode_action(tile_index: int, end: int | str | None = None,
                  num_tiles: int | None = None) -> int:
    """The action code of a tile index and an end (``0..3`` or ``"left"``, ``"right"``,
    ``"up"``, ``"down"``; ``None`` for the lead, which uses end 0).

    >>> encode_action(27, "left"), encode_action(27, None), encode_action(3, 2)
    (108, 108, 14)
    """
    tile_index = as_int("tile_index", tile_index)
    if num_tiles is not None:
        num_tiles = as_int("num_tiles", num_tiles, 1)
    if tile_index < 0 or (num_tiles is not None and tile_index >= num_tiles):
        allowed = "a non-negative integer" if num_tiles is None else f"0..{num_tiles - 1}"
        raise ValueError(f"tile_index={tile_index} is out of range; allowed: {allowed}")
    e = 0 if end is None else end_index(end)  # the core's one reading of an end
    return code_of(int(tile_index), e)


def decode_action(code: int, num_tiles: int | None = None) -> tuple[int, int]:
    """``(tile_index, end_index)`` of an action code.

    >>> decode_action(109)
    (27, 1)
    """
    code = as_int("action code", code)
    if code < 0 or (num_tiles is not None and code >= num_tiles * NUM_ENDS):
        top = None if num_tiles is None else num_tiles * NUM_ENDS - 1
        allowed = "a non-negative integer" if top is None else f"0..{top}"
        raise ValueError(f"action code {code} is out of range; allowed: {allowed}")
    return tile_of(int(code)), end_of(int(code))


def check_action(action, num_actions: int) -> int:
    """``action`` as an ``int`` code after checking its type and range (``TypeError`` /
    ``ValueError`` naming what is allowed). Legality is the core's business.

    >>> check_action(np.int32(5), 112)
    5
    >>> check_action(112, 112)
    Traceback (most recent call last):
    ...
    ValueError: action 112 is out of range; allowed: 0..111 (tile_index * 4 + end)
    """
    if isinstance(action, (bool, np.bool_)) or (isinstance(action, np.ma.MaskedArray)
                                                and np.ma.is_masked(action)):  # was played
        raise TypeError("an action is an integer code (tile_index * 4 + end), not "
                        f"{short_repr(action)}")
    try:
        code = operator.index(action)
    except Exception:  # noqa: BLE001 - TypeError, or whatever an odd __index__ raises
        raise TypeError(
            f"an action is an integer code (tile_index * 4 + end), not {short_repr(action)} "
            f"({type(action).__name__})"
        ) from None
    if not 0 <= code < num_actions:
        raise ValueError(
            f"action {code} is out of range; allowed: 0..{num_actions - 1} (tile_index * 4 + end)"
        )
    return code


__all__ = ["NUM_ENDS", "action_mask", "check_action", "decode_action", "encode_action",
           "mask_of"]
