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

from .layout import captions, ends_line, half_pips, place_tiles

TILE_FILL = "#fffdf4"
TILE_EDGE = "#3a3a3a"
SPINNER_EDGE = "#c0392b"
TABLE = "#1f6f4a"
TEXT = "#ffffff"


def layout_svg(state, scores=None, *, hand_number: int | None = None, winner: int | None = None,
               unit: float = 22.0) -> str:
    """An SVG document of a hand (``HandState`` or ``SeatView``): caption, layout, hand sizes.

    ``unit`` is the length of a half tile in pixels."""
    pic = place_tiles(state)
    x0, y0, x1, y1 = pic.box
    margin, line_h = 14.0, 18.0
    title, score_line, sizes = captions(state, scores, hand_number, winner)
    text_w = 8.0 * max(len(title), len(score_line), len(sizes))  # ~8 px a bold 13 px glyph
    width = max((x1 - x0) * unit + 2 * margin, text_w + 2 * margin, 320.0)
    top = margin + 2 * line_h + 8
    area_h = max((y1 - y0) * unit, 2 * unit)
    height = top + area_h + 2 * line_h + margin + 8
    ox = (width - (x1 - x0) * unit) / 2 - x0 * unit
    oy = top + (area_h - (y1 - y0) * unit) / 2 - y0 * unit
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.1f} {height:.1f}" font-family="sans-serif" font-size="13">',
        f'<rect x="0" y="0" width="{width:.1f}" height="{height:.1f}" fill="{TABLE}" rx="8"/>',
        _text(margin, margin + 12, title, bold=True),
        _text(margin, margin + 12 + line_h, score_line),
    ]
    if not pic.tiles:
        out.append(_text(width / 2, top + area_h / 2 + 4, "(empty layout)", anchor="middle"))
    for t in pic.tiles:
        w, h = t.width * unit, t.height * unit
        tx, ty = ox + t.x * unit - w / 2, oy + t.y * unit - h / 2
        edge = SPINNER_EDGE if t.is_spinner else TILE_EDGE
        sw = 2.2 if t.is_spinner else 1.0
        out.append(
            f'<rect x="{tx:.1f}" y="{ty:.1f}" width="{w:.1f}" height="{h:.1f}" '
            f'rx="{unit * 0.15:.1f}" fill="{TILE_FILL}" stroke="{edge}" stroke-width="{sw}">'
            f"<title>{t}</title></rect>"
        )
        if t.vertical:
            out.append(_line(tx + 3, ty + h / 2, tx + w - 3, ty + h / 2))
        else:
            out.append(_line(tx + w / 2, ty + 3, tx + w / 2, ty + h - 3))
        pips, r = half_pips(t, tx, ty, unit)
        out.extend(f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="{r:.1f}" fill="#111"/>'
                   for cx, cy in pips)
    base = top + area_h + 8
    out.append(_text(margin, base + 12, ends_line(state)))
    out.append(_text(margin, base + 12 + line_h, sizes))
    out.append("</svg>")
    return "\n".join(out)


def match_svg(match, unit: float = 22.0) -> str:
    """The SVG of a ``MatchState``'s current hand with the match scores."""
    return layout_svg(match.hand, match.scores, hand_number=match.hand_number,
                      winner=match.winner, unit=unit)


def _text(x: float, y: float, text: str, bold: bool = False, anchor: str = "start") -> str:
    weight = ' font-weight="bold"' if bold else ""
    return (f'<text x="{x:.1f}" y="{y:.1f}" fill="{TEXT}" text-anchor="{anchor}"{weight}>'
            f"{escape(text)}</text>")


def _line(xa: float, ya: float, xb: float, yb: float) -> str:
    return (f'<line x1="{xa:.1f}" y1="{ya:.1f}" x2="{xb:.1f}" y2="{yb:.1f}" '
            f'stroke="{TILE_EDGE}" stroke-width="1"/>')
