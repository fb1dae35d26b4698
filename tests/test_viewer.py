"""The replay viewers: the steps of a record, ``replay --steps / --html / --extract``, Jupyter's
inline viewer, and the page driven in a real headless Chromium."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import dominoes_env
from dominoes_env.cli import main
from dominoes_env.core import MatchState, RecordError, RuleConfig
from dominoes_env.core.records import replay_record, write_record
from dominoes_env.record_io import append_records, read_record
from dominoes_env.render.html import UNIT, page_data, replay_html
from dominoes_env.render.steps import record_steps
from dominoes_env.render.svg import layout_svg

from . import helpers

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]  # fmt: skip


def random_match(seed: int, **rules) -> MatchState:
    return helpers.random_match(RuleConfig(**rules), seed)


@pytest.mark.parametrize("seed, rules", [
    (1, {"target_score": 100}),
    (2, {"num_players": 3, "target_score": 80}),
    (3, {"num_players": 4, "target_score": 80}),
    (4, {"target_score": 60, "win_check": "immediate"}),
])  # fmt: skip
def test_steps_follow_the_match(seed, rules):
    m = random_match(seed, **rules)
    record = m.to_record()
    steps = record_steps(record)
    summary = replay_record(record)
    plays = [s for s in steps if s.kind == "play"]
    assert [s.points for s in plays] == [p for h in summary["hands"] for p in h["move_points"]]
    # the end of each finished hand carries its award and the scores after it
    ends = [s for s in steps if s.kind == "end"]
    finished = [h for h in summary["hands"] if h["end"] is not None]
    assert [list(s.scores) for s in ends] == [h["scores"] for h in finished]
    assert [s.award and {"side": s.award[0], "points": s.award[1]} for s in ends] == [
        h["award"] for h in finished]
    assert steps[-1].kind == "match" and list(steps[-1].scores) == summary["scores"] == m.scores
    # tiles are conserved: hands + boneyard + layout = the set, at every step
    n_tiles = m.rules.tiles.num_tiles
    for s in steps[:-1]:
        in_hands = sum(len(t) for t in s.tiles)
        assert in_hands + s.boneyard + len(s.state.moves) == n_tiles, s
    # draws add exactly the announced number of tiles to that seat
    for a, b in zip(steps, steps[1:], strict=False):
        if b.kind == "draw":
            n = int(b.text.split("draws ")[1].split()[0])
            assert len(b.tiles[b.seat]) == len(a.tiles[b.seat]) + n
            assert b.boneyard == a.boneyard - n


def test_page_hides_other_seats_until_the_hand_ends():
    record = random_match(5, target_score=60).to_record()
    data = page_data(record, seat=1)
    assert data["steps"][-1]["k"] == "match"
    for st in data["steps"]:
        if st["k"] in ("end", "match"):  # this match was won: the last step shows all
            assert all(isinstance(t, list) for t in st["T"])
        else:
            assert isinstance(st["T"][1], list) and isinstance(st["T"][0], int)
    with pytest.raises(ValueError, match="seat=2"):
        page_data(record, seat=2)


def test_page_is_self_contained():
    page = replay_html(random_match(6, target_score=60).to_record())
    assert page.startswith("<!doctype html>")
    for forbidden in ("<script src", "<link", "https://", "@import", "url("):
        assert forbidden not in page
    data = page.split('<script type="application/json" id="data">')[1].split("</script>")[0]
    assert json.loads(data)["steps"][0]["k"] == "deal"


def test_jupyter_viewer_takes_a_match_a_record_or_a_file(tmp_path):
    m = random_match(7, target_score=50)
    v = dominoes_env.viewer(m, seat=0)
    html = v._repr_html_()
    assert "<iframe srcdoc=" in html and 'sandbox="allow-scripts"' in html
    assert "<script>" not in html  # the page is escaped into the attribute
    path = tmp_path / "m.json"
    write_record(m.to_record(), path)
    assert dominoes_env.viewer(str(path)).html == dominoes_env.viewer(m.to_record()).html
    v.save(tmp_path / "v.html")
    assert (tmp_path / "v.html").read_text() == v.html
    with pytest.raises(TypeError, match="MatchState"):
        dominoes_env.viewer(42)


def test_replay_cli_steps_html_and_extract(tmp_path, capsys):
    m = random_match(8, target_score=60)
    record = m.to_record()
    shard = tmp_path / "s.jsonl.gz"
    append_records(shard, [dict(record, match={"index": 0, "key": "a"}),
                           dict(random_match(9, target_score=60).to_record(),
                                match={"index": 1, "key": "b"})])
    assert main(["replay", str(shard), "--match", "0", "--extract", str(tmp_path / "0.json"),
                 "--html", str(tmp_path / "0.html")]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out == replay_record(record)
    assert read_record(tmp_path / "0.json")["hands"] == record["hands"]
    assert "Straight Dominoes" in (tmp_path / "0.html").read_text()
    assert main(["replay", str(tmp_path / "0.json"), "--steps", "--seat", "0"]) == 0
    text = capsys.readouterr().out
    assert text.count("-- hand ") == len(record_steps(record))
    assert f"scores: side 0 {m.scores[0]} · side 1 {m.scores[1]}" in text
    assert "seat 1: 7 tiles" in text  # seat 1's deal is hidden from seat 0


@pytest.mark.parametrize("args, message", [
    (["S", "--match", "9"], "holds no record of match '9'"),
    (["S"], "holds 2 records; choose one with --match"),
    (["R", "--match", "0"], "holds one record"),
    (["R", "--html", "{tmp}/missing/x.html"], "does not exist"),
    (["R", "--seat", "3"], "--seat 3 is not a seat"),
    (["{tmp}/nope.json"], "cannot read"),
    # said "holds one record; --match applies to .jsonl(.gz) shards"
    (["{tmp}/nope", "--match", "0"], "nope': No such file or directory"),
])  # fmt: skip
def test_replay_cli_bad_input_exits_2_with_one_line(tmp_path, args, message):
    rec = random_match(10, target_score=50).to_record()
    write_record(rec, tmp_path / "r.json")
    append_records(tmp_path / "s.jsonl.gz", [dict(rec, match={"index": i, "key": str(i)})
                                             for i in range(2)])
    sub = {"S": str(tmp_path / "s.jsonl.gz"), "R": str(tmp_path / "r.json")}
    argv = [sub.get(a, a.replace("{tmp}", str(tmp_path))) for a in args]
    r = subprocess.run([sys.executable, "-m", "dominoes_env", "replay", *argv],
                       capture_output=True, text=True, timeout=helpers.CHILD_TIMEOUT_S)
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and message in r.stderr, r.stderr
    assert not (tmp_path / "missing").exists()



@pytest.mark.parametrize("match", [None, 0])
def test_a_path_that_names_no_file_is_said_to_be_unreadable_with_or_without_match(match):
    """``read_record('/tmp/a\\x00b', 0)`` (and ``replay /tmp/nonexist --match 0``) said the
    path "holds one record; --match applies to .jsonl(.gz) shards": --match was judged
    before the path was read."""
    with pytest.raises(RecordError, match=r"cannot read '/tmp/a\\x00b': embedded null byte"):
        read_record("/tmp/a\x00b", match)


# -- the page in a real browser ----------------------------------------------------------------
def _browser():
    """Playwright driving Debian's Chromium (installed by `make test`)."""
    missing = None
    if not os.path.exists(CHROMIUM):
        missing = f"{CHROMIUM} is missing (make browser installs it)"
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing = "the playwright package is missing (pip install -e '.[dev]')"
    if missing:
        if os.environ.get("CI"):
            pytest.fail(missing)
        pytest.skip(missing)
    return sync_playwright


def test_page_steps_to_the_final_scores_in_chromium(tmp_path):
    sync_playwright = _browser()
    m = random_match(11, num_players=3, target_score=60)
    record = m.to_record()
    expected = replay_record(record)
    page_path = tmp_path / "match.html"
    assert main(["replay", str(_write(tmp_path, record)), "--html", str(page_path)]) == 0
    n_steps = len(record_steps(record))
    hands = len(record["hands"])
    with sync_playwright() as p:
        ctx = p.chromium.launch_persistent_context(
            str(tmp_path / "profile"), executable_path=CHROMIUM, args=CHROMIUM_ARGS,
            headless=True, viewport={"width": 1100, "height": 900})
        try:
            errors: list[str] = []
            page = ctx.new_page()
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("request", lambda r: r.url.startswith("file:") or errors.append(r.url))
            # the page's own script and style run under its CSP, here and in the <iframe srcdoc>
            page.on("console", lambda m: "Content Security Policy" in m.text
                    and errors.append(m.text))
            page.goto(page_path.as_uri())
            # the first position: the first deal, nothing scored, Previous disabled
            assert page.inner_text("#event").startswith("hand 1 dealt: seat")
            assert json.loads(page.get_attribute("#scores", "data-scores")) == [0, 0, 0]
            assert page.is_disabled("#prev") and not page.is_disabled("#next")
            assert page.locator("#seats .seat").count() == 3
            seen_points = []
            for i in range(1, n_steps):  # through every step: the button, then the arrow key
                if i % 2:
                    page.click("#next")
                else:
                    page.keyboard.press("ArrowRight")
                assert page.get_attribute("body", "data-step") == str(i)
                badge = page.locator("#event .badge")
                if badge.count():
                    seen_points.append(int(badge.inner_text().lstrip("+")))
            assert page.is_disabled("#next")
            final = json.loads(page.get_attribute("#scores", "data-scores"))
            assert final == expected["scores"] == m.scores
            assert seen_points == [p for h in expected["hands"] for p in h["move_points"] if p]
            side = expected["winner"]
            assert f"side {side}" in page.inner_text("#event") and "wins" in page.inner_text(
                "#event")
            page.screenshot(path=str(tmp_path / "viewer.png"), full_page=True)
            # the layout the script drew is svg.layout_svg's picture of the final position
            final_svg = layout_svg(record_steps(record)[-1].state, captions=False, unit=UNIT)
            drawn = page.inner_html("#layout")
            for tag in ("<rect", "<circle", "<line", "<title>"):
                assert drawn.count(tag) == final_svg.count(tag), tag
            for attr in ("width", "height", "viewBox"):
                assert f'{attr}="{page.get_attribute("#layout svg", attr)}"' in final_svg, attr
            # back one step with the key and the button; the jump to the last hand
            page.keyboard.press("ArrowLeft")
            page.click("#prev")
            assert page.get_attribute("body", "data-step") == str(n_steps - 3)
            page.select_option("#hand", str(hands - 1))
            assert page.inner_text("#event").startswith(f"hand {hands} dealt")
            assert errors == []
            # the Jupyter face: the same page inside an <iframe srcdoc> runs its script
            host = tmp_path / "notebook.html"
            host.write_text("<!doctype html><html><body><h1>cell output</h1>"
                            + dominoes_env.viewer(m)._repr_html_() + "</body></html>")
            page.goto(host.as_uri())
            frame = page.frame_locator("iframe")
            assert frame.locator("#event").inner_text().startswith("hand 1 dealt: seat")
            frame.locator("#next").click()
            assert frame.locator("body").get_attribute("data-step") == "1"
            page.screenshot(path=str(tmp_path / "jupyter.png"))
            assert errors == []
        finally:
            ctx.close()
    assert (tmp_path / "viewer.png").stat().st_size > 10_000


def _write(tmp_path, record):
    path = tmp_path / "match.json"
    write_record(record, path)
    return path


def test_an_unfinished_match_can_be_watched_and_an_empty_record_is_refused():
    m = MatchState(RuleConfig(), seed=3)
    for _ in range(5):
        m.play(m.legal_actions()[0])
    steps = record_steps(m.to_record())
    assert steps[0].kind == "deal" and steps[-1].kind == "match"
    assert {s.kind for s in steps[1:-1]} <= {"play", "draw", "pass"}
    assert sum(s.kind == "play" for s in steps) == 5
    assert steps[-1].text == "the record stops here, scores 0 - 0"
    assert [len(t) for t in steps[-1].tiles] == list(m.hand.hand_sizes)
    data = page_data(m.to_record(), seat=1)
    assert data["steps"][-1]["T"][0] == len(steps[-1].tiles[0])  # seat 0 face down: a count
    # a record of no hand was shown as a match, "the record stops here, scores 0 - 0"
    for show in (record_steps, replay_html, replay_record):
        with pytest.raises(RecordError, match=r"^'hands' is empty: a match record holds at "
                                              r"least one hand$"):
            show({"rules": {}, "hands": []})


# -- records are untrusted (issue 33 item 5) ---------------------------------------------------
PAYLOADS = [
    '<img src=x onerror="window.__pwned=1;document.title=\'pwned\'">',
    "</script><script>window.__pwned=2;document.title='pwned'</script>",
    "javascript:window.__pwned=3",
    '"><svg onload="window.__pwned=4"><!--',
]


def hostile_record(seed: int = 12) -> dict:
    record = random_match(seed, num_players=4, target_score=60).to_record()
    record["match"] = {"seats": PAYLOADS, "key": PAYLOADS[1], "index": 0}
    return record


def _data_block(page: str) -> str:
    return page.split('<script type="application/json" id="data">')[1].split("</script>")[0]


def test_record_strings_cannot_leave_the_json_block_or_the_title():
    page = replay_html(hostile_record())
    # one JSON block, one script, whatever the names hold
    assert page.count("</script>") == 2 and page.count("<script") == 2
    assert page.count("<img") == page.count("<svg onload") == 0
    data = _data_block(page)
    assert "<" not in data and ">" not in data and "&" not in data
    assert json.loads(data)["names"] == PAYLOADS
    title = page.split("<title>")[1].split("</title>")[0]
    assert "<" not in title and "&lt;img src=x onerror=" in title
    # a title given by the caller is escaped too
    page = replay_html(hostile_record(), title="</title><script>alert(1)</script>")
    assert "<title>&lt;/title&gt;&lt;script&gt;alert(1)&lt;/script&gt;</title>" in page
    with pytest.raises(TypeError, match="title"):
        replay_html(hostile_record(), title=b"x")


def test_page_carries_a_csp_that_allows_only_its_own_script_and_style():
    import base64
    import hashlib

    page = replay_html(random_match(13, target_score=50).to_record())
    head = page.split("<style>")[0]
    csp = head.split('http-equiv="Content-Security-Policy" content="')[1].split('"')[0]
    csp = csp.replace("&#x27;", "'")
    rules = dict(part.split(" ", 1) for part in csp.split("; "))
    assert rules["default-src"] == rules["connect-src"] == rules["img-src"] == "'none'"
    assert "unsafe" not in csp and "http" not in csp

    def sha(text):
        return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"

    script = page.split("<script>")[1].split("</script>")[0]
    style = page.split("<style>")[1].split("</style>")[0]
    assert rules["script-src"] == sha(script) and rules["style-src"] == sha(style)
    assert " style=" not in page  # no style attributes: the style element is all there is


@pytest.mark.parametrize("height, error", [
    ("100px;background:url(//x)", TypeError),
    ("760", TypeError),
    (True, TypeError),
    (7.5, TypeError),
    (99, ValueError),
    (10**6, ValueError),
    (-1, ValueError),
])  # fmt: skip
def test_viewer_height_is_an_int_in_range(height, error):
    m = random_match(14, target_score=50)
    with pytest.raises(error, match="height"):
        dominoes_env.viewer(m, height=height)
    assert "height:400px" in dominoes_env.viewer(m, height=400)._repr_html_()


def test_save_paths_are_checked_before_writing(tmp_path):
    m = random_match(15, target_score=50)
    v = dominoes_env.viewer(m)
    (tmp_path / "folder").mkdir()
    (tmp_path / "target.html").write_text("keep")
    (tmp_path / "link.html").symlink_to(tmp_path / "target.html")
    bad = {tmp_path / "missing" / "v.html": "does not exist",
           tmp_path / "folder": "is a directory",
           tmp_path / "link.html": "symbolic link"}
    for path, why in bad.items():
        with pytest.raises(ValueError, match=why) as err:
            v.save(path)
        assert str(path) in str(err.value)
        with pytest.raises(ValueError, match=why):
            dominoes_env.viewer(m, save=path)
    assert not (tmp_path / "missing").exists()
    assert (tmp_path / "target.html").read_text() == "keep"
    with pytest.raises(TypeError, match="path"):
        v.save(42)
    # a new file, then the same file again (an existing regular file is replaced)
    for _ in range(2):
        assert dominoes_env.viewer(m, save=tmp_path / "ok.html").html == (
            tmp_path / "ok.html").read_text()


@pytest.mark.parametrize(("save", "error", "says"), [
    ("x\0", ValueError, "save='x\\x00' holds a null character; no path can"),
    ("", ValueError, "save='' is empty"),
    (b"page.html", TypeError, "save=b'page.html' must be a path"),
    (42, TypeError, "save=42 must be a path"),
])
def test_a_bad_save_path_is_named_as_save(tmp_path, monkeypatch, save, error, says):
    """``viewer(m, save="x\0")`` raised "embedded null byte" from deep in os.path, naming
    neither the parameter nor the path."""
    monkeypatch.chdir(tmp_path)
    m = random_match(15, target_score=50)
    with pytest.raises(error) as err:
        dominoes_env.viewer(m, save=save)
    assert str(err.value).startswith(says), err.value
    assert list(tmp_path.iterdir()) == []


def test_save_keeps_an_existing_file_when_asked(tmp_path):
    """``viewer(..., save=PATH)`` replaced an existing file without a word, where the command
    needs --overwrite: the API replaces it as write_record does, and ``overwrite=False``
    keeps it (``FileExistsError``, before the record is read)."""
    m = random_match(15, target_score=50)
    page = tmp_path / "page.html"
    page.write_text("mine")
    with pytest.raises(FileExistsError, match="overwrite=True") as err:
        dominoes_env.viewer(tmp_path / "no-such-record.json", save=page, overwrite=False)
    assert err.value.filename == str(page)
    with pytest.raises(FileExistsError):
        dominoes_env.viewer(m).save(page, overwrite=False)
    assert page.read_text() == "mine"
    with pytest.raises(TypeError, match="overwrite"):
        dominoes_env.viewer(m, save=page, overwrite="no")
    assert dominoes_env.viewer(m, save=tmp_path / "new.html", overwrite=False).html == (
        tmp_path / "new.html").read_text()
    dominoes_env.viewer(m).save(page)  # the default replaces it, as write_record does
    assert page.read_text().startswith("<!doctype html>")


def test_save_never_replaces_the_record_it_shows(tmp_path):
    # viewer("r.json", save="r.json") replaced the record by its page
    record = tmp_path / "r.json"
    write_record(random_match(16, target_score=50).to_record(), record)
    kept = record.read_bytes()
    (tmp_path / "link.json").symlink_to(record)
    for game in (record, str(record), tmp_path / "link.json"):
        with pytest.raises(ValueError, match="is an input"):
            dominoes_env.viewer(game, save=record)
    assert record.read_bytes() == kept
    assert dominoes_env.viewer(record, save=tmp_path / "r.html").html == (
        tmp_path / "r.html").read_text()


def test_hostile_names_run_nothing_and_load_nothing_in_chromium(tmp_path):
    sync_playwright = _browser()
    record = hostile_record()
    page_path = tmp_path / "hostile.html"
    page_text = replay_html(record)
    page_path.write_text(page_text)
    n_steps = len(record_steps(record))
    with sync_playwright() as p:
        ctx = p.chromium.launch_persistent_context(
            str(tmp_path / "profile"), executable_path=CHROMIUM, args=CHROMIUM_ARGS,
            headless=True, viewport={"width": 1100, "height": 900})
        try:
            errors: list[str] = []
            console: list[str] = []
            requests: list[str] = []
            failed: list[tuple[str, str | None]] = []
            page = ctx.new_page()
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("console", lambda msg: console.append(msg.text))
            page.on("request", lambda r: requests.append(r.url))
            page.on("requestfailed", lambda r: failed.append((r.url, r.failure)))
            page.goto(page_path.as_uri())
            for i in range(1, n_steps):
                page.click("#next") if i % 2 else page.keyboard.press("ArrowRight")
                assert page.get_attribute("body", "data-step") == str(i)
            page.keyboard.press("Home")
            page.select_option("#hand", "0")
            # the names are shown as text, verbatim; none of them became markup or ran
            seats = page.inner_text("#seats")
            for name in PAYLOADS:
                assert name in seats
            assert page.evaluate("() => window.__pwned") is None
            assert page.locator("img").count() == 0 and page.locator("svg[onload]").count() == 0
            assert page.title().startswith("Straight Dominoes replay: <img src=x onerror=")
            # the page's own script ran (it stepped) and its own style applied, under the CSP
            assert page.evaluate(
                "() => getComputedStyle(document.getElementById('scores')).marginTop") == "0px"
            assert page.evaluate(
                "() => getComputedStyle(document.body).backgroundColor") == "rgb(238, 242, 239)"
            assert errors == []
            assert not [c for c in console if "Content Security Policy" in c], console
            assert requests == [page_path.as_uri()]
            # the CSP holds even for script that got into the page: no inline script, no fetch
            ran = page.evaluate("""async () => {
                const s = document.createElement("script");
                s.textContent = "window.__pwned = 5";
                document.body.appendChild(s);
                let fetched = "yes";
                try { await fetch("http://127.0.0.1:9/leak"); } catch (e) { fetched = "no"; }
                const img = document.createElement("img");
                img.src = "http://127.0.0.1:9/leak.png";
                document.body.appendChild(img);
                await new Promise((r) => setTimeout(r, 200));
                return [window.__pwned === undefined ? null : window.__pwned, fetched];
            }""")
            assert ran == [None, "no"]
            # the <img> is announced to Playwright, then refused by the CSP before it leaves
            assert requests == [page_path.as_uri(), "http://127.0.0.1:9/leak.png"]
            assert len(failed) == 1 and failed[0][0].endswith("leak.png")
            assert "csp" in failed[0][1].lower()  # Chromium: "csp" / "net::ERR_BLOCKED_BY_CSP"
            assert any("Content Security Policy" in c for c in console)  # the injected code's
        finally:
            ctx.close()
