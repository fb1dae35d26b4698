"""The ``"ansi"`` render mode: a text picture of the layout with the spinner cross.

The line of play reads left to right; doubles are written like other tiles, the spinner in
braces ``{6|6}``; the up arm is written above the spinner and the down arm below it, each
vertical tile as ``[top|bottom]``.

>>> from dominoes_env.core import HandState, RuleConfig
>>> hand = HandState.from_tiles(RuleConfig(), leader=0, hands=[
...     [(6, 6), (6, 3), (1, 2), (0, 0), (2, 2), (3, 3), (4, 5)],
...     [(5, 5), (0, 1), (1, 1), (2, 3), (3, 4), (0, 6), (1, 6)]])
>>> for move in [((6, 6), None), ((6, 1), "left"), ((6, 3), "right")]:
...     _ = hand.play(move)
>>> print(render_ansi(hand, scores=[15, 0], hand_number=0))
Straight Dominoes · hand 1 · count 4 · seat 1 to play
scores to 250: side 0 15 · side 1 0
<BLANKLINE>
[1|6]{6|6}[6|3]
<BLANKLINE>
ends: left 1 · right 3 · up 6 · down 6
tiles in hand: seat 0 5 · seat 1 6 · boneyard 14
"""

from __future__ import annotations

from .layout import captions, ends_line, place_tiles


def _tile_text(t) -> str:
    text = f"{t.first}|{t.second}"
    return f"{{{text}}}" if t.is_spinner else f"[{text}]"


def layout_text(state) -> str:
    """Just the picture of the layout (several lines), or ``(empty layout)``."""
    pic = place_tiles(state)
    if not pic.line:
        return "(empty layout)"
    parts = [_tile_text(t) for t in pic.line]
    line = "".join(parts)
    col = 0
    for t, text in zip(pic.line, parts, strict=True):
        if t.is_spinner:
            break
        col += len(text)
    pad = " " * col
    above = [pad + _tile_text(t) for t in reversed(pic.up)]
    below = [pad + _tile_text(t) for t in pic.down]
    return "\n".join(above + [line] + below)


def render_ansi(state, scores=None, *, hand_number: int | None = None,
                winner: int | None = None) -> str:
    """The text picture of a hand (a ``HandState`` or a ``SeatView``) with match facts."""
    title, score_line, sizes = captions(state, scores, hand_number, winner)
    return "\n".join([title, score_line, "", layout_text(state), "", ends_line(state), sizes])
