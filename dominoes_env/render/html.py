"""The replay viewer: one self-contained HTML page that steps through a recorded match.

The page needs no server and no network: the layout pictures (:mod:`.svg`) and the tile
pictures are inline SVG, the steps (:mod:`.steps`) are a JSON block, and a small inline script
shows them: Next / Previous buttons, the arrow keys (Home / End for the first and last step,
Page Up / Page Down for the previous and next hand), a jump to hand k and a Play button.

``python -m dominoes_env replay FILE --html OUT.html`` writes it; in Jupyter,
:func:`viewer` shows the same page inline (an ``<iframe srcdoc>``, so its script runs in
JupyterLab and the classic notebook alike, without touching the notebook's own page).

>>> from dominoes_env.core import MatchState, RuleConfig
>>> m = MatchState(RuleConfig(target_score=30), seed=1)
>>> while not m.is_over:
...     _ = m.play(m.legal_actions()[0])
>>> page = replay_html(m.to_record())
>>> page.startswith("<!doctype html>") and "Content-Security-Policy" in page
True
>>> "http" not in page.replace("http://www.w3.org", "").replace("http-equiv", "")
True
>>> "<iframe srcdoc=" in viewer(m)._repr_html_()
True
"""

from __future__ import annotations

import base64
import errno
import hashlib
import json
import os
import re
from html import escape
from typing import Any

from ..core.atomic_files import atomic_write
from ..core.errors import RecordError
from ..core.rules import RuleConfig
from ..core.validation import as_bool, as_int, as_path
from .layout import PlacedTile, place_tiles
from .steps import Step, record_steps
from .svg import TABLE, TEXT, tile_parts, tile_svg

UNIT = 24.0  #: half-tile length of the layout picture, in pixels
MIN_HEIGHT, MAX_HEIGHT = 100, 10_000  #: the inline viewer's height range, in pixels

# what the embedded JSON may not hold verbatim: a `</script>` or `<!--` in a record's string
# must not end (or bend) the script element, so `<`, `>`, `&` go in as JSON escapes
_JSON_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026",
                 "\u2028": "\\u2028", "\u2029": "\\u2029"}


def page_data(record: dict, seat: int | None = None) -> dict[str, Any]:
    """What the page's script reads: the steps (with a ``seat``, the other seats' tiles are
    only counted, except at each hand's end and once the match is won), the layouts they
    point to, one picture per tile, and the names of the seats."""
    steps = record_steps(record)
    rules = RuleConfig.from_dict(record["rules"])
    n = rules.num_players
    if seat is not None:
        try:
            seat = as_int("seat", seat, 0, n - 1)
        except ValueError as err:
            raise ValueError(f"{err} (a seat of this record)") from None
    layouts: list[dict] = []
    pieces: dict[tuple, int] = {}
    index: dict[int, int] = {}
    out = []
    for st in steps:
        key = id(st.state)
        if key not in index:
            index[key] = len(layouts)
            layouts.append(_layout_json(st.state, pieces))
        out.append(_step_json(st, index[key], seat))
    ts = rules.tiles
    meta = record.get("match") if isinstance(record.get("match"), dict) else {}
    names = meta.get("seats") if isinstance(meta.get("seats"), list) else None
    if not (names and len(names) == n and all(isinstance(x, str) for x in names)):
        names = [None] * n
    return {
        "players": n,
        "sides": [list(rules.seats_of(s)) for s in range(rules.num_sides)],
        "target": rules.target_score,
        "seat": seat,
        "names": names,
        "hands": max(st.hand for st in steps) + 1,
        "steps": out,
        "layouts": layouts,
        "unit": UNIT,
        "pieces": [{"svg": "".join(tile_parts(PlacedTile(-1, a, b, 0.0, 0.0, v, sp, -1),
                                              0.0, 0.0, UNIT)), "v": v}
                   for (a, b, v, sp) in pieces],
        "tiles": [tile_svg(t.low, t.high, unit=18.0) for t in ts.tiles],
        "tileNames": [str(t) for t in ts.tiles],
        "back": _back_svg(18.0),
    }


def _layout_json(state, pieces: dict[tuple, int]) -> dict[str, Any]:
    """The layout as the script draws it: the bounding box and, per placed tile, its picture
    (an index into ``pieces``, drawn once by :mod:`.svg`) and its centre. The script lays the
    pictures out exactly as :func:`.svg.layout_svg` with ``captions=False`` does."""
    if state is None:
        return {"box": [0, 0, 0, 0], "t": []}
    pic = place_tiles(state)
    placed = []
    for t in pic.tiles:
        k = pieces.setdefault((t.first, t.second, t.vertical, t.is_spinner), len(pieces))
        placed.append([k, round(t.x, 3), round(t.y, 3)])
    return {"box": [round(v, 3) for v in pic.box], "t": placed}


def _step_json(st: Step, layout: int, seat: int | None) -> dict[str, Any]:
    # the hands are shown when a hand ends and when the match is won, never mid-hand
    reveal = seat is None or st.kind == "end" or (st.kind == "match" and st.winner is not None)
    tiles = [list(t) if reveal or s == seat else len(t) for s, t in enumerate(st.tiles)]
    return {
        "k": st.kind, "h": st.hand, "m": st.move, "s": st.seat, "x": st.text, "T": tiles,
        "b": st.boneyard, "sc": list(st.scores), "c": st.count, "p": st.points, "t": st.turn,
        "L": layout, "tile": list(st.tile) if st.tile else None,
        "a": list(st.award) if st.award else None,
    }  # fmt: skip


def _back_svg(unit: float) -> str:
    w, h = unit, 2 * unit
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{w + 2:.0f}" height="{h + 2:.0f}" '
            f'viewBox="-1 -1 {w + 2:.1f} {h + 2:.1f}"><rect x="0" y="0" width="{w:.1f}" '
            f'height="{h:.1f}" rx="{unit * 0.15:.1f}" fill="#2c3e50" stroke="#10181f"/>'
            f'<circle cx="{w / 2:.1f}" cy="{h / 2:.1f}" r="{unit * 0.18:.1f}" fill="#7f8c8d"/>'
            "</svg>")


def replay_html(record: dict, *, seat: int | None = None, title: str | None = None) -> str:
    """The viewer page for a record (a dict in the records format), face up or from ``seat``'s
    view. Raises :class:`RecordError` on a bad record, ``ValueError`` on a bad seat."""
    data = page_data(record, seat)
    if title is None:
        names = [x for x in data["names"] if x]
        title = "Straight Dominoes replay" + (": " + " vs ".join(names) if names else "")
    elif not isinstance(title, str):
        raise TypeError(f"title must be a string, not {type(title).__name__}")
    # a name that is no UTF-8 text (an agent spec naming a file whose name is not: Python
    # holds its bytes as '\udcff') is written as an escape: the page could not be written
    title = title.encode("utf-8", "backslashreplace").decode("utf-8")
    payload = embed_json(data)
    script = _SCRIPT.replace("__TABLE__", TABLE).replace("__TEXT__", TEXT)
    style = _STYLE.replace("__TABLE__", TABLE)
    parts = {"TITLE": escape(title, quote=True), "DATA": payload, "SCRIPT": script,
             "STYLE": style, "CSP": escape(content_security_policy(script, style), quote=True)}
    # one pass, so nothing inserted (a name in the title, say) is substituted again
    return re.sub(r"__(TITLE|DATA|SCRIPT|STYLE|CSP)__", lambda m: parts[m.group(1)], _PAGE)


def embed_json(data: Any) -> str:
    """``data`` as JSON that is safe inside a ``<script type="application/json">`` element:
    ``<``, ``>`` and ``&`` are written as JSON escapes, so no string can close the element.

    >>> embed_json({"name": "</script><script>alert(1)</script>"})
    '{"name":"\\\\u003c/script\\\\u003e\\\\u003cscript\\\\u003ealert(1)\\\\u003c/script\\\\u003e"}'
    >>> json.loads(embed_json({"a": "<&>"})) == {"a": "<&>"}
    True
    """
    text = json.dumps(data, separators=(",", ":"))
    return re.sub("[<>&\u2028\u2029]", lambda m: _JSON_ESCAPES[m.group()], text)


def content_security_policy(script: str, style: str) -> str:
    """The page's Content-Security-Policy: nothing may load (``default-src 'none'``, so no
    network, no images, no frames, no fonts), the one inline script and the one inline style
    element run by their sha256 hashes (no ``'unsafe-inline'``: the page has no style
    attributes), and no ``<base>`` or form can redirect it.

    >>> content_security_policy("x", "y").split("; ")[0]
    "default-src 'none'"
    """
    def digest(text: str) -> str:
        return base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")

    return (f"default-src 'none'; script-src 'sha256-{digest(script)}'; "
            f"style-src 'sha256-{digest(style)}'; connect-src 'none'; img-src 'none'; "
            "base-uri 'none'; form-action 'none'")


def write_html(page: str, path: str | os.PathLike, *, overwrite: bool = True) -> None:
    """Write the page atomically (a temporary file renamed into place: never half a file).

    ``path`` is a new or existing regular file in a folder that exists: a missing folder, a
    folder, a symbolic link or a device is a ``ValueError`` naming the path, before anything
    is written. An existing file is replaced, as :func:`~dominoes_env.core.records.write_record`
    replaces one; ``overwrite=False`` never replaces it: ``FileExistsError`` instead."""
    check_page_path(path, overwrite=overwrite)
    with atomic_write(path, overwrite=overwrite) as f:
        f.write(page)


def check_page_path(path: Any, inputs: tuple[str | os.PathLike, ...] = (), *,
                    overwrite: bool = True, name: str = "path") -> None:
    """The output rules of :func:`dominoes_env.cli_support.check_output_file` (an existing
    regular file may be replaced, never one of ``inputs``) as a ``ValueError`` (``TypeError``
    for a non-path) naming the parameter ``name``; with ``overwrite=False`` an existing file is
    a ``FileExistsError``.

    >>> check_page_path("/no/such/folder/page.html")
    Traceback (most recent call last):
    ...
    ValueError: path '/no/such/folder/page.html': the folder '/no/such/folder' does not exist
    """
    from ..cli_support import CommandError, check_output_file

    # a str or os.PathLike of text, not empty, no null character ("embedded null byte",
    # naming nothing, came from deep in os.path)
    path = as_path(name, path)
    try:
        check_output_file(path, name, overwrite=True, inputs=inputs)
    except CommandError as err:
        raise ValueError(str(err)) from None
    if not overwrite and os.path.lexists(path):
        raise FileExistsError(errno.EEXIST, "the file exists; pass overwrite=True to replace "
                              "it", os.fspath(path))


class ReplayViewer:
    """The viewer of one match; Jupyter shows it inline (``_repr_html_``).

    ``html`` is the whole page, :meth:`save` writes it to a file."""

    def __init__(self, record: dict, *, seat: int | None = None, height: int = 760):
        self.record = record
        self.seat = seat
        self.height = as_int("height", height, MIN_HEIGHT, MAX_HEIGHT)
        self.html = replay_html(record, seat=seat)

    def save(self, path: str | os.PathLike, *, overwrite: bool = True) -> None:
        """Write the page to ``path`` (:func:`write_html`: an existing file is replaced, unless
        ``overwrite=False``, which raises ``FileExistsError``)."""
        write_html(self.html, path, overwrite=as_bool("overwrite", overwrite))

    def _repr_html_(self) -> str:
        # an <iframe srcdoc>: the page's script runs inside it in JupyterLab and the classic
        # notebook alike (trusted output); in an untrusted notebook the frame is stripped and
        # the note behind it shows instead
        return (f'<div style="position:relative;width:100%;height:{self.height}px">'
                '<span style="color:#565656">Trust this notebook to show the replay viewer '
                "(File &gt; Trust Notebook)</span>"
                f'<iframe srcdoc="{escape(self.html, quote=True)}" style="position:absolute;'
                'left:0;top:0;width:100%;height:100%;border:0;background:#fff" '
                'sandbox="allow-scripts" title="Straight Dominoes replay"></iframe></div>')

    def __repr__(self) -> str:
        hands = len(self.record.get("hands", []))
        return f"<ReplayViewer {hands} hand(s), seat={self.seat}>"


def viewer(game: Any, *, seat: int | None = None, height: int = 760,
           save: str | os.PathLike | None = None, overwrite: bool = True) -> ReplayViewer:
    """The replay viewer of ``game``: a record (a dict, or the path of a ``.json`` record or of
    a one-record shard) or
    anything with ``to_record()`` (a ``MatchState``). In Jupyter it shows inline.

    ``seat`` shows the match from that seat's view (the other hands face down until each hand
    ends), ``height`` is the inline frame's height in pixels (an int, 100..10000), and
    ``save`` a file to write the page to (as :meth:`ReplayViewer.save`: a file there is
    replaced, unless ``overwrite=False``, which raises ``FileExistsError`` before anything is
    read or written). Raises ``TypeError`` for other objects, :class:`RecordError` for a bad
    record and ``ValueError`` for a bad ``seat``, ``height`` or ``save`` path.
    """
    height = as_int("height", height, MIN_HEIGHT, MAX_HEIGHT)
    overwrite = as_bool("overwrite", overwrite)
    if save is not None:  # never over the record it shows
        check_page_path(save, (game,) if isinstance(game, str | os.PathLike) else (),
                        overwrite=overwrite, name="save")
    if isinstance(game, str | os.PathLike):
        from ..record_io import read_record

        game = read_record(game)
    elif callable(getattr(game, "to_record", None)):
        game = game.to_record()
    if not isinstance(game, dict):
        raise TypeError(f"viewer() takes a game record (dict or file path) or a MatchState, "
                        f"got {type(game).__name__}")
    shown = ReplayViewer(game, seat=seat, height=height)
    if save is not None:
        shown.save(save, overwrite=overwrite)
    return shown


__all__ = ["ReplayViewer", "RecordError", "check_page_path", "content_security_policy",
           "embed_json", "page_data", "replay_html", "viewer", "write_html"]

_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="__CSP__">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>__TITLE__</title>
<style>__STYLE__</style>
</head>
<body>
<div class="app">
<header><h1 id="title">__TITLE__</h1><div class="meta" id="meta"></div></header>
<div class="bar"><div id="scores" class="bar"></div>
  <div class="facts"><div class="fact"><b id="count">0</b><span>count</span></div>
  <div class="fact"><b id="boneyard">0</b><span>boneyard</span></div></div></div>
<div class="controls">
  <button id="first" title="first step (Home)">&#x00AB; First</button>
  <button id="prev" title="previous step (&#x2190;)">&#x25C0; Previous</button>
  <button id="next" class="primary" title="next step (&#x2192;)">Next &#x25B6;</button>
  <button id="last" title="last step (End)">Last &#x00BB;</button>
  <span id="pos"></span>
  <label>Hand <select id="hand"></select></label>
  <button id="play" title="play the steps one by one">&#x25B6; Play</button>
  <span class="keys">keys: &#x2190; &#x2192; step, PgUp / PgDn hand, Home / End</span>
</div>
<div id="event" class="event"></div>
<div id="layout" class="table"></div>
<div id="seats" class="seats"></div>
<details open><summary>This hand, step by step</summary><ol id="log"></ol></details>
</div>
<script type="application/json" id="data">__DATA__</script>
<script>__SCRIPT__</script>
</body>
</html>
"""

_STYLE = """
:root { --felt: __TABLE__; --ink: #1d2a24; --muted: #5d6d66; --gold: #f1c40f; --card: #ffffff; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
       color: var(--ink); background: #eef2ef; }
.app { max-width: 1100px; margin: 0 auto; padding: 14px 16px 24px; }
header { display: flex; align-items: baseline; gap: 14px; flex-wrap: wrap; }
h1 { font-size: 19px; margin: 0; }
.meta { color: var(--muted); }
.bar { display: flex; gap: 10px; align-items: stretch; flex-wrap: wrap; margin: 10px 0; }
.side { background: var(--card); border-radius: 10px; padding: 6px 14px; min-width: 150px;
        box-shadow: 0 1px 3px rgba(0,0,0,.12); position: relative; }
.side .who { color: var(--muted); font-size: 12px; }
.side .pts { font-size: 26px; font-weight: 700; }
.side .pts small { font-size: 13px; color: var(--muted); font-weight: 400; }
.side.lead { outline: 2px solid var(--gold); }
.gain { position: absolute; right: 10px; top: 8px; background: #27ae60; color: #fff;
        border-radius: 10px; padding: 0 8px; font-weight: 700; }
.facts { margin-left: auto; display: flex; gap: 10px; }
.fact { background: var(--card); border-radius: 10px; padding: 6px 14px; text-align: center;
        box-shadow: 0 1px 3px rgba(0,0,0,.12); }
.fact b { display: block; font-size: 22px; }
.fact span { color: var(--muted); font-size: 12px; }
.controls { display: flex; gap: 6px; align-items: center; flex-wrap: wrap; margin: 8px 0; }
button, select { font: inherit; padding: 5px 12px; border-radius: 8px; border: 1px solid #b8c4be;
                 background: #fff; cursor: pointer; }
button:hover:not(:disabled) { background: #f5f8f6; }
button.primary:hover:not(:disabled) { background: #185c3d; }
button:disabled { opacity: .4; cursor: default; }
button.primary { background: var(--felt); color: #fff; border-color: var(--felt); }
#pos { color: var(--muted); margin: 0 6px; min-width: 190px; text-align: center; }
.keys { color: var(--muted); font-size: 12px; margin-left: auto; }
.event { border-radius: 10px; padding: 9px 14px; margin: 6px 0 10px; font-size: 16px;
         background: #fff; border-left: 6px solid #95a5a6; display: flex; align-items: center;
         gap: 10px; min-height: 44px; }
.event.play { border-color: #2980b9; } .event.draw { border-color: #e67e22; }
.event.pass { border-color: #c0392b; } .event.end, .event.match { border-color: var(--gold);
  background: #fffbe6; font-weight: 600; } .event.deal { border-color: var(--felt); }
.badge { background: #27ae60; color: #fff; border-radius: 10px; padding: 1px 9px;
         font-weight: 700; font-size: 14px; }
.table { background: var(--felt); border-radius: 12px; padding: 8px; overflow-x: auto;
         display: flex; align-items: center; min-height: 140px; }
.table svg { margin: auto; flex: none; }
.seats { display: grid; grid-template-columns: repeat(auto-fit, minmax(320px, 1fr)); gap: 10px;
         margin-top: 10px; }
.seat { background: var(--card); border-radius: 10px; padding: 8px 12px;
        border: 2px solid transparent; box-shadow: 0 1px 3px rgba(0,0,0,.12); }
.seat.turn { border-color: #2980b9; }
.seat.actor { border-color: var(--gold); }
.seat .head { display: flex; gap: 8px; align-items: baseline; }
.seat .head b { font-size: 15px; }
.seat .head span { color: var(--muted); font-size: 12px; }
.seat .head .tag { margin-left: auto; font-size: 12px; border-radius: 8px; padding: 1px 9px;
       color: #fff; background: #2980b9; font-weight: 600; }
.seat.actor .tag { background: #b7950b; }
.tiles { display: flex; flex-wrap: wrap; gap: 3px; margin-top: 6px; min-height: 34px; }
.tiles svg { display: block; }
.tiles .new { outline: 2px solid #e67e22; border-radius: 3px; }
.empty { color: var(--muted); font-style: italic; }
details { margin-top: 12px; background: #fff; border-radius: 10px; padding: 6px 12px; }
summary { cursor: pointer; font-weight: 600; }
#log { margin: 6px 0; padding-left: 26px; max-height: 220px; overflow-y: auto; }
#log li { cursor: pointer; padding: 1px 4px; border-radius: 4px; }
#log li:hover { background: #eef2ef; }
#log li.cur { background: #fff3c4; font-weight: 600; }
#scores { margin: 0; }
"""

_SCRIPT = r"""
(function () {
  "use strict";
  const D = JSON.parse(document.getElementById("data").textContent);
  const S = D.steps, N = S.length;
  const $ = (id) => document.getElementById(id);
  const handStart = [];
  S.forEach((st, i) => { if (handStart[st.h] === undefined) handStart[st.h] = i; });
  let cur = 0, timer = null;

  const sideOf = (seat) => D.sides.findIndex((seats) => seats.includes(seat));
  const seatName = (s) => "seat " + s + (D.names[s] ? " \u00b7 " + D.names[s] : "") +
    (D.seat === s ? " (view)" : "");
  const DONE = { play: "played", draw: "drew", pass: "passed", end: "went out" };
  $("meta").textContent = D.players + " players \u00b7 to " + D.target +
    (D.seat === null ? " \u00b7 all hands face up" : " \u00b7 seen by seat " + D.seat);
  for (let h = 0; h < D.hands; h++) {
    const o = document.createElement("option");
    o.value = h; o.textContent = (h + 1) + " of " + D.hands;
    $("hand").appendChild(o);
  }

  function tilePic(t, isNew) {
    const span = document.createElement("span");
    span.innerHTML = D.tiles[t];
    span.title = D.tileNames[t];
    if (isNew) span.className = "new";
    return span;
  }

  function renderScores(st) {
    const prev = cur > 0 ? S[cur - 1].sc : st.sc.map(() => 0);
    const top = Math.max(...st.sc);
    const box = $("scores");
    box.innerHTML = "";
    box.dataset.scores = JSON.stringify(st.sc);
    st.sc.forEach((pts, side) => {
      const d = document.createElement("div");
      d.className = "side" + (pts === top && pts > 0 ? " lead" : "");
      const seats = D.sides[side];
      const who = seats.map((s) => "seat " + s + (D.names[s] ? " " + D.names[s] : "")).join(" + ");
      d.innerHTML = '<div class="who"></div><div class="pts"><span class="num"></span>' +
        ' <small>/ ' + D.target + "</small></div>";
      d.querySelector(".who").textContent = "side " + side + " \u00b7 " + who;
      d.querySelector(".num").textContent = pts;
      if (pts > prev[side]) {
        const g = document.createElement("span");
        g.className = "gain"; g.textContent = "+" + (pts - prev[side]);
        d.appendChild(g);
      }
      box.appendChild(d);
    });
  }

  function renderSeats(st) {
    const prevTiles = cur > 0 && S[cur - 1].h === st.h ? S[cur - 1].T : null;
    const box = $("seats");
    box.innerHTML = "";
    st.T.forEach((tiles, s) => {
      const d = document.createElement("div");
      const acting = st.s === s && st.k in DONE && !(st.k === "end" && st.T[s].length);
      d.className = "seat" + (acting ? " actor" : st.t === s ? " turn" : "");
      const count = typeof tiles === "number" ? tiles : tiles.length;
      d.innerHTML = '<div class="head"><b></b><span></span></div><div class="tiles"></div>';
      d.querySelector("b").textContent = seatName(s);
      d.querySelector(".head span").textContent = "side " + sideOf(s) + " \u00b7 " + count +
        " tile" + (count === 1 ? "" : "s");
      if (acting || st.t === s) {
        const tag = document.createElement("span");
        tag.className = "tag"; tag.textContent = acting ? DONE[st.k] : "to play";
        d.querySelector(".head").appendChild(tag);
      }
      const row = d.querySelector(".tiles");
      if (typeof tiles === "number") {
        for (let i = 0; i < tiles; i++) {
          const span = document.createElement("span");
          span.innerHTML = D.back;
          row.appendChild(span);
        }
      } else if (!tiles.length) {
        row.innerHTML = '<span class="empty">no tiles left</span>';
      } else {
        const before = prevTiles && Array.isArray(prevTiles[s]) ? new Set(prevTiles[s]) : null;
        tiles.forEach((t) => row.appendChild(tilePic(t, before !== null && !before.has(t))));
      }
      box.appendChild(d);
    });
  }

  // the layout as svg.layout_svg(state, captions=False) draws it, from the placed pictures
  function layoutSvg(L) {
    const U = D.unit, M = 14;
    const [x0, y0, x1, y1] = L.box;
    const w = Math.max((x1 - x0) * U + 2 * M, 320), area = Math.max((y1 - y0) * U, 2 * U);
    const h = M + area + M;
    const ox = (w - (x1 - x0) * U) / 2 - x0 * U, oy = M + (area - (y1 - y0) * U) / 2 - y0 * U;
    let s = '<svg xmlns="http://www.w3.org/2000/svg" width="' + w.toFixed(0) + '" height="' +
      h.toFixed(0) + '" viewBox="0 0 ' + w.toFixed(1) + " " + h.toFixed(1) +
      '" font-family="sans-serif" font-size="13"><rect x="0" y="0" width="' + w.toFixed(1) +
      '" height="' + h.toFixed(1) + '" fill="__TABLE__" rx="8"/>';
    if (!L.t.length) {
      s += '<text x="' + (w / 2).toFixed(1) + '" y="' + (M + area / 2 + 4).toFixed(1) +
        '" fill="__TEXT__" text-anchor="middle">(empty layout)</text>';
    }
    for (const [k, x, y] of L.t) {
      const p = D.pieces[k];
      const pw = (p.v ? 1 : 2) * U, ph = (p.v ? 2 : 1) * U;
      s += '<g transform="translate(' + (ox + x * U - pw / 2).toFixed(1) + "," +
        (oy + y * U - ph / 2).toFixed(1) + ')">' + p.svg + "</g>";
    }
    return s + "</svg>";
  }

  function renderLayout(st) {
    const box = $("layout");
    box.innerHTML = layoutSvg(D.layouts[st.L]);
    if (st.k === "play" && st.tile) {
      const name = "[" + Math.min(...st.tile) + "|" + Math.max(...st.tile) + "]";
      box.querySelectorAll("rect").forEach((r) => {
        const t = r.querySelector("title");
        if (t && t.textContent === name) {
          r.setAttribute("stroke", "#f1c40f"); r.setAttribute("stroke-width", "3.5");
        }
      });
    }
  }

  function renderLog(st) {
    const log = $("log");
    log.innerHTML = "";
    for (let i = handStart[st.h]; i < N && S[i].h === st.h; i++) {
      const li = document.createElement("li");
      li.textContent = S[i].x;
      if (i === cur) li.className = "cur";
      li.addEventListener("click", () => go(i));
      log.appendChild(li);
    }
    const c = log.querySelector(".cur");
    if (c) log.scrollTop = c.offsetTop - log.offsetTop - 60;
  }

  function go(i) {
    cur = Math.max(0, Math.min(N - 1, i));
    const st = S[cur];
    renderScores(st);
    renderLayout(st);
    renderSeats(st);
    renderLog(st);
    const ev = $("event");
    ev.className = "event " + st.k;
    ev.textContent = st.x;
    if (st.p) {
      const b = document.createElement("span");
      b.className = "badge"; b.textContent = "+" + st.p;
      ev.prepend(b);
    }
    $("count").textContent = st.c;
    $("boneyard").textContent = st.b;
    $("pos").textContent = "step " + (cur + 1) + " / " + N + " \u00b7 hand " + (st.h + 1) +
      " \u00b7 play " + st.m;
    $("hand").value = st.h;
    $("first").disabled = $("prev").disabled = cur === 0;
    $("last").disabled = $("next").disabled = cur === N - 1;
    document.body.dataset.step = cur;
    if (cur === N - 1) stop();
  }

  function stop() {
    if (!timer) return;
    clearInterval(timer);
    timer = null;
    $("play").innerHTML = "&#x25B6; Play";
  }
  function toggle() {
    if (timer) { stop(); return; }
    if (cur === N - 1) go(0);
    timer = setInterval(() => go(cur + 1), 800);
    $("play").innerHTML = "&#x275A;&#x275A; Pause";
  }
  const hand = (d) => go(handStart[Math.max(0, Math.min(D.hands - 1, S[cur].h + d))]);

  $("first").addEventListener("click", () => { stop(); go(0); });
  $("prev").addEventListener("click", () => { stop(); go(cur - 1); });
  $("next").addEventListener("click", () => { stop(); go(cur + 1); });
  $("last").addEventListener("click", () => { stop(); go(N - 1); });
  $("play").addEventListener("click", toggle);
  $("hand").addEventListener("change", (e) => { stop(); go(handStart[+e.target.value]); });
  document.addEventListener("keydown", (e) => {
    if (e.target.tagName === "SELECT") return;
    const keys = { ArrowRight: () => go(cur + 1), ArrowLeft: () => go(cur - 1),
                   Home: () => go(0), End: () => go(N - 1),
                   PageDown: () => hand(1), PageUp: () => hand(-1), " ": toggle };
    if (keys[e.key]) { if (e.key !== " ") stop(); keys[e.key](); e.preventDefault(); }
  });
  go(0);
})();
"""
