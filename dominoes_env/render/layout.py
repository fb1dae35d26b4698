"""Where every tile of the layout lies: the geometry the text, SVG and image renderers share.

Plain Python (no numpy). Reads only the :class:`~dominoes_env.core.PublicState` protocol, so
it draws a :class:`~dominoes_env.core.HandState`, a :class:`~dominoes_env.core.SeatView` or any
other backend's state alike.

Coordinates are in tile units: a tile is 2 x 1, the line of play runs along ``y = 0`` (left to
right: the left arm from its outer tile in, the lead, the right arm), doubles stand across the
line, and the spinner's up and down arms run up (negative ``y``) and down from it.

>>> from dominoes_env.core import HandState, RuleConfig
>>> hand = HandState.from_tiles(RuleConfig(), leader=0, hands=[
...     [(6, 6), (6, 3), (1, 2), (0, 0), (2, 2), (3, 3), (4, 5)],
...     [(5, 5), (0, 1), (1, 1), (2, 3), (3, 4), (0, 6), (1, 6)]])
>>> for move in [((6, 6), None), ((6, 1), "left"), ((6, 3), "right")]:
...     _ = hand.play(move)
>>> [(str(t), t.first, t.second, t.vertical, t.is_spinner) for t in place_tiles(hand).tiles]
[('[1|6]', 1, 6, False, False), ('[6|6]', 6, 6, True, True), ('[3|6]', 6, 3, False, False)]
"""

from __future__ import annotations

from dataclasses import dataclass

from dominoes_env.core.layout import open_ends
from dominoes_env.core.moves import end_of, tile_of
from dominoes_env.core.state import PublicState
from dominoes_env.core.validation import as_int, short_repr

GAP = 0.12  # space between neighbouring tiles, in tile units


@dataclass(frozen=True)
class PlacedTile:
    """One tile of the picture. ``first`` is the half on the left (horizontal tile) or on top
    (vertical tile), ``second`` the other; ``x, y`` the centre."""

    tile: int
    first: int
    second: int
    x: float
    y: float
    vertical: bool
    is_spinner: bool
    arm: int  # -1 for the lead, else the end index (0 left, 1 right, 2 up, 3 down)

    @property
    def width(self) -> float:
        return 1.0 if self.vertical else 2.0

    @property
    def height(self) -> float:
        return 2.0 if self.vertical else 1.0

    def __str__(self) -> str:
        lo, hi = sorted((self.first, self.second))
        return f"[{lo}|{hi}]"


@dataclass(frozen=True)
class LayoutPicture:
    """The placed tiles and their bounding box ``(x0, y0, x1, y1)``; empty before the lead."""

    tiles: tuple[PlacedTile, ...]
    box: tuple[float, float, float, float]
    line: tuple[PlacedTile, ...]  #: the line of play, left to right
    up: tuple[PlacedTile, ...]  #: from the spinner outwards
    down: tuple[PlacedTile, ...]


def _lead_left_value(state, lead: int, plays: list[int]) -> int:
    """The pip value the lead shows on its left."""
    ts = state.rules.tiles
    lo, hi = ts.low[lead], ts.high[lead]
    if lo == hi:
        return lo
    for end in (0, 1):  # the first tile on a side holds the lead half it matched
        for code in plays[1:]:
            if end_of(code) == end:
                t = tile_of(code)
                touching = lo if lo in (ts.low[t], ts.high[t]) else hi
                return touching if end == 0 else (lo if touching == hi else hi)
    return state.ends[0]


def arms_of(state):
    """``(lead, left_value, arms, spinner_place)``: ``arms[e]`` lists ``(tile, inner, outer)``
    from the centre outwards; ``spinner_place`` is ``None``, ``(-1, 0)`` for the lead or
    ``(end, position)``. ``lead`` is ``-1`` before the lead."""
    plays = [ev[2] for ev in state.history if ev[0] == "play"]
    arms: list[list[tuple[int, int, int]]] = [[], [], [], []]
    if not plays:
        return -1, -1, arms, None
    ts = state.rules.tiles
    lead = tile_of(plays[0])
    left = _lead_left_value(state, lead, plays)
    ends = [left, ts.pips[lead] - left, -1, -1]
    spinner = state.spinner
    place = None
    if spinner == lead:
        place = (-1, 0)
        ends[2] = ends[3] = left
    for code in plays[1:]:
        t, e = tile_of(code), end_of(code)
        inner = ends[e]
        outer = ts.pips[t] - inner
        arms[e].append((t, inner, outer))
        ends[e] = outer
        if t == spinner:
            place = (e, len(arms[e]) - 1)
            ends[2] = ends[3] = inner
    return lead, left, arms, place


def check_state(state) -> None:
    """``TypeError`` unless ``state`` is a hand a picture can be drawn of: a ``HandState`` or a
    ``SeatView`` (the :class:`~dominoes_env.core.state.PublicState` protocol), checked before
    any drawing starts (``None`` too)."""
    if not isinstance(state, PublicState):
        raise TypeError(f"state must be a HandState or a SeatView, not {type(state).__name__}")


def place_tiles(state) -> LayoutPicture:
    """The picture of ``state``'s layout (see the module docstring)."""
    check_state(state)
    lead, left, arms, place = arms_of(state)
    if lead < 0:
        return LayoutPicture((), (0.0, 0.0, 0.0, 0.0), (), (), ())
    ts = state.rules.tiles
    # the line, left to right: (tile, first, second, arm, is_spinner)
    row = [(t, outer, inner, 0, place == (0, i)) for i, (t, inner, outer) in enumerate(arms[0])]
    row.reverse()
    row.append((lead, left, ts.pips[lead] - left, -1, place == (-1, 0)))
    row += [(t, inner, outer, 1, place == (1, i)) for i, (t, inner, outer) in enumerate(arms[1])]
    line, x = [], 0.0
    spinner_x = None
    for t, a, b, arm, is_sp in row:
        vertical = a == b
        w = 1.0 if vertical else 2.0
        cx = x + w / 2
        line.append(PlacedTile(t, a, b, cx, 0.0, vertical, is_sp, arm))
        if is_sp:
            spinner_x = cx
        x += w + GAP
    up: list[PlacedTile] = []
    down: list[PlacedTile] = []
    if spinner_x is not None:
        for e, sign, out in ((2, -1.0, up), (3, 1.0, down)):
            edge = 1.0 + GAP  # the spinner stands across the line: 2 long, centred on y = 0
            for t, inner, outer in arms[e]:
                vertical = inner != outer
                h = 2.0 if vertical else 1.0
                first, second = (outer, inner) if sign < 0 else (inner, outer)
                cy = sign * (edge + h / 2)
                out.append(PlacedTile(t, first, second, spinner_x, cy, vertical, False, e))
                edge += h + GAP
    tiles = tuple(line + up + down)
    box = (
        min(p.x - p.width / 2 for p in tiles), min(p.y - p.height / 2 for p in tiles),
        max(p.x + p.width / 2 for p in tiles), max(p.y + p.height / 2 for p in tiles),
    )
    return LayoutPicture(tiles, box, tuple(line), tuple(up), tuple(down))


#: pip centres of one half, in a unit square, for values 0..12
_C3 = (0.22, 0.5, 0.78)
_R4 = (0.2, 0.4, 0.6, 0.8)
PIP_POSITIONS: tuple[tuple[tuple[float, float], ...], ...] = (
    (),
    ((0.5, 0.5),),
    ((0.25, 0.25), (0.75, 0.75)),
    ((0.25, 0.25), (0.5, 0.5), (0.75, 0.75)),
    ((0.25, 0.25), (0.75, 0.25), (0.25, 0.75), (0.75, 0.75)),
    ((0.25, 0.25), (0.75, 0.25), (0.5, 0.5), (0.25, 0.75), (0.75, 0.75)),
    tuple((x, y) for x in (0.25, 0.75) for y in _C3),
    tuple((x, y) for x in (0.25, 0.75) for y in _C3) + ((0.5, 0.5),),
    tuple((x, y) for x in _C3 for y in _C3 if (x, y) != (0.5, 0.5)),
    tuple((x, y) for x in _C3 for y in _C3),
    tuple((x, y) for x in (0.22, 0.78) for y in _R4) + ((0.5, 0.3), (0.5, 0.7)),
    tuple((x, y) for x in (0.22, 0.78) for y in _R4) + ((0.5, 0.3), (0.5, 0.5), (0.5, 0.7)),
    tuple((x, y) for x in _C3 for y in _R4),
)


def half_pips(tile: PlacedTile, x0: float, y0: float, unit: float):
    """Pip centres (in output units) of both halves of a tile whose top-left corner is at
    ``(x0, y0)``, and the pip radius: ``[(cx, cy), ...], radius``."""
    side = unit  # each half is a unit square
    out = []
    for k, value in enumerate((tile.first, tile.second)):
        hx = x0 + (0 if tile.vertical else k * side)
        hy = y0 + (k * side if tile.vertical else 0)
        for fx, fy in PIP_POSITIONS[value]:
            out.append((hx + fx * side, hy + fy * side))
    return out, side * (0.075 if max(tile.first, tile.second) > 9 else 0.09)


def captions(state, scores=None, hand_number=None, winner=None) -> tuple[str, str, str]:
    """Three lines of text around a picture: the title (hand, counted from 1 for people;
    count; whose turn or how the hand ended), the scores, and the hand sizes with the
    boneyard."""
    check_state(state)
    rules = state.rules
    if hand_number is not None:  # True was "hand 2"
        hand_number = as_int("hand_number", hand_number, 0)
    if scores is not None:  # None was written as a score
        if (isinstance(scores, (str, bytes, dict)) or not hasattr(scores, "__len__")
                or len(scores) != rules.num_sides):
            raise ValueError(f"scores must be {rules.num_sides} integers, one per side; got "
                             f"{short_repr(scores)}")
        scores = [as_int(f"scores[{side}]", pts, 0) for side, pts in enumerate(scores)]
    title = ["Straight Dominoes"]
    if hand_number is not None:
        title.append(f"hand {hand_number + 1}")
    title.append(f"count {state.count}" if state.lead >= 0 else "no tile played yet")
    if winner is not None:
        seats = ", ".join(map(str, rules.seats_of(winner)))
        title.append(f"match won by side {winner} (seat{'s' if ',' in seats else ''} {seats})")
    elif state.result is not None:
        kind, seat = state.result
        how = f"domino by seat {seat}" if kind == "domino" else "blocked"
        award = state.award
        got = f", side {award[0]} scores {award[1]}" if award else ", no award"
        title.append(f"hand over: {how}{got}")
    elif state.turn >= 0:
        title.append(f"seat {state.turn} to play")
    if scores is None:
        score_line = f"target {rules.target_score}"
    else:
        parts = []
        for side, pts in enumerate(scores):
            seats = rules.seats_of(side)
            who = f"side {side}"
            if len(seats) > 1:
                who += f" (seats {'+'.join(map(str, seats))})"
            parts.append(f"{who} {pts}")
        score_line = f"scores to {rules.target_score}: " + " · ".join(parts)
    sizes = " · ".join(f"seat {s} {k}" for s, k in enumerate(state.hand_sizes))
    bone = f"boneyard {state.boneyard_left}"
    if state.drawable != state.boneyard_left:
        bone += f" ({state.drawable} drawable)"
    return " · ".join(title), score_line, f"tiles in hand: {sizes} · {bone}"


def ends_line(state) -> str:
    """The value at each end that has one, marking the ends that do not take tiles yet."""
    if state.lead < 0:
        return "ends: none (the next tile is the lead)"
    names = ("left", "right", "up", "down")
    taking = open_ends(state)
    parts = []
    for e in range(4):
        v = state.ends[e]
        if v >= 0:
            parts.append(f"{names[e]} {v}" + ("" if e in taking else " (not open yet)"))
    return "ends: " + " · ".join(parts)
