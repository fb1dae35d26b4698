"""The ``"rgb_array"`` render mode: an image of the real layout, drawn with Pillow.

Every frame has the same size (``SIZE``, so frames make a video): the caption (hand, count,
whose turn, scores) on top, the layout scaled to fit (tiles with pips, doubles across the line,
the spinner with a red border and its up / down arms), the ends and hand sizes below.

>>> from dominoes_env.core import MatchState
>>> m = MatchState(seed=2)
>>> _ = m.play(m.legal_actions()[0])
>>> img = render_rgb(m.hand, m.scores, hand_number=m.hand_number)
>>> img.shape, img.dtype.name
((540, 960, 3), 'uint8')
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from ..core.validation import as_int, short_repr
from .layout import captions, ends_line, half_pips, place_tiles

#: the largest width or height of a picture (an image of 100,000 pixels a side would take all
#: the memory)
MAX_SIDE = 4096

SIZE = (960, 540)  # width, height in pixels
SUPERSAMPLE = 2  # drawn this much larger, then scaled down (smooth edges)
MAX_UNIT = 34  # largest half-tile size in output pixels

TABLE = (31, 111, 74)
TILE_FILL = (255, 253, 244)
TILE_EDGE = (58, 58, 58)
SPINNER_EDGE = (200, 40, 30)
PIP = (17, 17, 17)
TEXT = (255, 255, 255)


@lru_cache(maxsize=8)
def _font(size: int) -> ImageFont.ImageFont:
    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow without FreeType sizes
        return ImageFont.load_default()


def render_rgb(state, scores=None, *, hand_number: int | None = None, winner: int | None = None,
               size: tuple[int, int] = SIZE) -> np.ndarray:
    """An ``H x W x 3`` ``uint8`` image of a hand (``HandState`` or ``SeatView``); ``size`` is
    ``(width, height)`` in pixels, each 64..4096."""
    if not isinstance(size, (list, tuple)) or len(size) != 2:
        raise ValueError(f"size must be (width, height), not {short_repr(size)}")
    size = (as_int("width", size[0], 64, MAX_SIDE), as_int("height", size[1], 64, MAX_SIDE))
    k = SUPERSAMPLE
    W, H = size[0] * k, size[1] * k
    img = Image.new("RGB", (W, H), TABLE)
    draw = ImageDraw.Draw(img)
    title, score_line, sizes = captions(state, scores, hand_number, winner)
    pad = 14 * k
    draw.text((pad, pad), title, fill=TEXT, font=_font(20 * k))
    draw.text((pad, pad + 28 * k), score_line, fill=TEXT, font=_font(16 * k))
    draw.text((pad, H - pad - 46 * k), ends_line(state), fill=TEXT, font=_font(15 * k))
    draw.text((pad, H - pad - 22 * k), sizes, fill=TEXT, font=_font(15 * k))
    top, bottom = pad + 62 * k, H - pad - 56 * k
    pic = place_tiles(state)
    if not pic.tiles:
        draw.text((W // 2, (top + bottom) // 2), "(empty layout)", fill=TEXT,
                  font=_font(18 * k), anchor="mm")
    else:
        x0, y0, x1, y1 = pic.box
        bw, bh = x1 - x0, y1 - y0
        unit = min(MAX_UNIT * k, (W - 2 * pad) / bw, (bottom - top) / bh)
        ox = (W - bw * unit) / 2 - x0 * unit
        oy = top + (bottom - top - bh * unit) / 2 - y0 * unit
        for t in pic.tiles:
            _draw_tile(draw, t, ox + t.x * unit, oy + t.y * unit, unit)
    out = img.resize(size, Image.LANCZOS) if k > 1 else img
    return np.asarray(out, dtype=np.uint8).copy()


def _draw_tile(draw: ImageDraw.ImageDraw, t, cx: float, cy: float, unit: float) -> None:
    w, h = t.width * unit, t.height * unit
    x, y = cx - w / 2, cy - h / 2
    edge = SPINNER_EDGE if t.is_spinner else TILE_EDGE
    width = max(2, round(unit * (0.12 if t.is_spinner else 0.05)))
    draw.rounded_rectangle((x, y, x + w, y + h), radius=unit * 0.15, fill=TILE_FILL,
                           outline=edge, width=width)
    inset, thin = unit * 0.12, max(1, round(unit * 0.04))
    if t.vertical:
        draw.line((x + inset, cy, x + w - inset, cy), fill=TILE_EDGE, width=thin)
    else:
        draw.line((cx, y + inset, cx, y + h - inset), fill=TILE_EDGE, width=thin)
    pips, r = half_pips(t, x, y, unit)
    for px, py in pips:
        draw.ellipse((px - r, py - r, px + r, py + r), fill=PIP)
