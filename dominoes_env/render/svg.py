"""SVG pictures of the layout (plain Python): what ``HandState`` and ``MatchState`` show in
Jupyter through ``_repr_svg_``.

Tiles are drawn where they lie (the line of play, doubles across it, the spinner's up and down
arms), with their pips; the spinner has a red border. Only pips are drawn as ``<circle>``.

>>> from dominoes_env.core import MatchState
>>> m = MatchState(seed=2)
>>> _ = m.play(m.legal_actions()[0])
>>> svg = match_svg(m)
>>> svg.startswith("<svg") and svg.count("<rect") >= 2
True
"""

from __future__ import annotations

from html import escape

from ..core import MatchState
from ..core.tiles import SUPPORTED_MAX_PIPS
from ..core.validation import as_float, as_int
from .layout import PlacedTile, ends_line, half_pips, place_tiles
from .layout import captions as _captions

#: the most pips a half of a tile shows (double-twelve's)
MAX_PIPS = max(SUPPORTED_MAX_PIPS)

TILE_FILL = "#fffdf4"
TILE_EDGE = "#3a3a3a"
SPINNER_EDGE = "#c0392b"
TABLE = "#1f6f4a"
TEXT = "#ffffff"
#: the range of ``unit`` (pixels a half tile takes): at the largest a double-twelve layout is
#: some 100,000 pixels across. 0, a negative, NaN or infinite unit drew an SVG of ``nan`` and
#: ``inf`` coordinates or negative sizes, which no viewer shows, and 1e-300 one of zeros
MIN_UNIT, MAX_UNIT = 1.0, 1000.0


def check_unit(unit: float) -> float:
    """``unit`` as a float in ``MIN_UNIT..MAX_UNIT`` (``ValueError`` / ``TypeError`` naming
    it).

    >>> check_unit(float("nan"))
    Traceback (most recent call last):
    ...
    ValueError: unit=nan must be a finite number
    """
    return as_float("unit", unit, MIN_UNIT, MAX_UNIT)


def layout_svg(state, scores=None, *, hand_number: int | None = None, winner: int | None = None,
               unit: float = 22.0, captions: bool = True) -> str:
    """An SVG document of a hand (``HandState`` or ``SeatView``): caption, layout, hand sizes.

    ``unit`` is the length of a half tile in pixels; ``captions=False`` draws the table and
    its tiles only (the replay viewer writes its own captions around it)."""
    unit = check_unit(unit)
    pic = place_tiles(state)
    x0, y0, x1, y1 = pic.box
    margin, line_h = 14.0, 18.0
    if captions:
        title, score_line, sizes = _captions(state, scores, hand_number, winner)
        text_w = 8.0 * max(len(title), len(score_line), len(sizes))  # ~8 px a bold 13 px glyph
        top, bottom = margin + 2 * line_h + 8, 2 * line_h + margin + 8
    else:
        text_w, top, bottom = 0.0, margin, margin
    width = max((x1 - x0) * unit + 2 * margin, text_w + 2 * margin, 320.0)
    area_h = max((y1 - y0) * unit, 2 * unit)
    height = top + area_h + bottom
    ox = (width - (x1 - x0) * unit) / 2 - x0 * unit
    oy = top + (area_h - (y1 - y0) * unit) / 2 - y0 * unit
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.1f} {height:.1f}" font-family="sans-serif" font-size="13">',
        f'<rect x="0" y="0" width="{width:.1f}" height="{height:.1f}" fill="{TABLE}" rx="8"/>',
    ]
    if captions:
        out.append(_text(margin, margin + 12, title, bold=True))
        out.append(_text(margin, margin + 12 + line_h, score_line))
    if not pic.tiles:
        out.append(_text(width / 2, top + area_h / 2 + 4, "(empty layout)", anchor="middle"))
    for t in pic.tiles:
        out.extend(tile_parts(t, ox + t.x * unit - t.width * unit / 2,
                               oy + t.y * unit - t.height * unit / 2, unit))
    if captions:
        base = top + area_h + 8
        out.append(_text(margin, base + 12, ends_line(state)))
        out.append(_text(margin, base + 12 + line_h, sizes))
    out.append("</svg>")
    return "\n".join(out)


def tile_svg(first: int, second: int, unit: float = 16.0, *, vertical: bool = True) -> str:
    """One tile on its own, ``first`` on top (or on the left when not ``vertical``): the
    pictures of the tiles in a hand.

    >>> tile_svg(6, 1).count("<circle")
    7
    """
    unit = check_unit(unit)
    first, second = as_int("first", first, 0, MAX_PIPS), as_int("second", second, 0, MAX_PIPS)
    t = PlacedTile(-1, first, second, 0.0, 0.0, vertical, False, -1)
    w, h = t.width * unit, t.height * unit
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{w + 2:.0f}" height="{h + 2:.0f}" '
            f'viewBox="-1 -1 {w + 2:.1f} {h + 2:.1f}">' + "".join(tile_parts(t, 0.0, 0.0, unit))
            + "</svg>")


def tile_parts(t: PlacedTile, tx: float, ty: float, unit: float) -> list[str]:
    """The SVG elements of one placed tile (:class:`~.layout.PlacedTile`), top-left at
    ``(tx, ty)`` with ``unit`` pixels per half: its rectangle (the spinner's edge if it is one),
    the dividing line and the pips. The layout pictures and the replay viewer draw tiles with it.

    >>> parts = tile_parts(PlacedTile(-1, 6, 1, 0.0, 0.0, True, False, -1), 0.0, 0.0, 16.0)
    >>> parts[0].startswith("<rect"), sum(p.startswith("<circle") for p in parts)
    (True, 7)
    """
    w, h = t.width * unit, t.height * unit
    edge = SPINNER_EDGE if t.is_spinner else TILE_EDGE
    sw = 2.2 if t.is_spinner else 1.0
    out = [
        f'<rect x="{tx:.1f}" y="{ty:.1f}" width="{w:.1f}" height="{h:.1f}" '
        f'rx="{unit * 0.15:.1f}" fill="{TILE_FILL}" stroke="{edge}" stroke-width="{sw}">'
        f"<title>{t}</title></rect>"
    ]
    if t.vertical:
        out.append(_line(tx + 3, ty + h / 2, tx + w - 3, ty + h / 2))
    else:
        out.append(_line(tx + w / 2, ty + 3, tx + w / 2, ty + h - 3))
    pips, r = half_pips(t, tx, ty, unit)
    out.extend(f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="{r:.1f}" fill="#111"/>' for cx, cy in pips)
    return out


def match_svg(match, unit: float = 22.0) -> str:
    """The SVG of a ``MatchState``'s current hand with the match scores."""
    if not isinstance(match, MatchState):
        raise TypeError(f"match must be a MatchState, not {type(match).__name__}")
    return layout_svg(match.hand, match.scores, hand_number=match.hand_number,
                      winner=match.winner, unit=unit)


def _text(x: float, y: float, text: str, bold: bool = False, anchor: str = "start") -> str:
    weight = ' font-weight="bold"' if bold else ""
    return (f'<text x="{x:.1f}" y="{y:.1f}" fill="{TEXT}" text-anchor="{anchor}"{weight}>'
            f"{escape(text)}</text>")


def _line(xa: float, ya: float, xb: float, yb: float) -> str:
    return (f'<line x1="{xa:.1f}" y1="{ya:.1f}" x2="{xb:.1f}" y2="{yb:.1f}" '
            f'stroke="{TILE_EDGE}" stroke-width="1"/>')
