"""Pictures: the shared geometry, text, SVG (Jupyter) and RGB images."""

from __future__ import annotations

import random
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from dominoes_env.core import HandState, MatchState, RuleConfig
from dominoes_env.render.ansi import layout_text, render_ansi
from dominoes_env.render.image import SIZE, SPINNER_EDGE, TILE_FILL, render_rgb
from dominoes_env.render.layout import PIP_POSITIONS, place_tiles
from dominoes_env.render.svg import layout_svg, match_svg
from tests.helpers import scripted_hand

EXAMPLE_7 = [((4, 1), None), ((1, 1), "right"), ((4, 4), "left"), ((4, 3), "left"),
             ((1, 2), "right"), ((1, 5), "up"), ((5, 5), "up"), ((5, 0), "up")]


def example_7() -> HandState:
    hand = scripted_hand(EXAMPLE_7)
    for move in EXAMPLE_7:
        hand.play(move)
    return hand


def random_hands(options: dict, count: int, seed: int):
    rules = RuleConfig(**options)
    rng = random.Random(seed)
    for k in range(count):
        hand = HandState.deal(rules, rng, leader=k % rules.num_players)
        stop = rng.randrange(1, 40)
        while hand.turn >= 0 and stop:
            legal = hand.legal_moves
            hand.play(legal[rng.randrange(len(legal))])  # play() keeps the lead's orientation
            stop -= 1
        yield hand


def test_pip_patterns_have_the_right_counts():
    assert [len(p) for p in PIP_POSITIONS] == list(range(13))
    for pattern in PIP_POSITIONS:
        assert len(set(pattern)) == len(pattern)
        assert all(0 < x < 1 and 0 < y < 1 for x, y in pattern)


def test_example_7_geometry():
    pic = place_tiles(example_7())
    line = [(t.first, t.second, t.vertical, t.is_spinner) for t in pic.line]
    assert line == [(3, 4, False, False), (4, 4, True, False), (4, 1, False, False),
                    (1, 1, True, True), (1, 2, False, False)]
    # up from the spinner: [1|5] vertical (5 on top), [5|5] across, [5|0] vertical (0 on top)
    assert [(t.first, t.second, t.vertical) for t in pic.up] == [(5, 1, True), (5, 5, False),
                                                                 (0, 5, True)]
    assert pic.down == () and all(t.x == pic.line[3].x for t in pic.up)
    assert all(t.y < 0 for t in pic.up)


@pytest.mark.parametrize("options", [dict(), dict(num_players=4), dict(max_pip=9),
                                     dict(num_players=3, spinner_cross="immediately"),
                                     dict(num_players=3, max_pip=12, hand_size=12)])
def test_tiles_never_overlap_and_views_draw_the_same_layout(options):
    for hand in random_hands(options, 25, seed=1):
        pic = place_tiles(hand)
        boxes = [(t.x - t.width / 2, t.y - t.height / 2, t.x + t.width / 2, t.y + t.height / 2)
                 for t in pic.tiles]
        for i, a in enumerate(boxes):
            for b in boxes[i + 1:]:
                assert a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1]
        played = {t.tile for t in pic.tiles}
        assert played == {i for i in range(hand.rules.num_tiles) if hand.played >> i & 1}
        # a view has no record of the lead's orientation: it is worked out from the history
        assert place_tiles(hand.view(0)) == pic
        # neighbours on the line touch with equal pips
        for left, right in zip(pic.line, pic.line[1:], strict=False):
            assert left.second == right.first


def test_ansi_text():
    hand = example_7()
    assert layout_text(hand).splitlines() == [
        "               [0|5]",
        "               [5|5]",
        "               [5|1]",
        "[3|4][4|4][4|1]{1|1}[1|2]",
    ]
    text = render_ansi(hand, scores=[30, 20], hand_number=2)
    assert text.splitlines()[0] == "Straight Dominoes · hand 3 · count 5 · seat 0 to play"
    assert "scores to 250: side 0 30 · side 1 20" in text
    assert "ends: left 3 · right 2 · up 0 · down 1" in text
    assert render_ansi(HandState.deal(RuleConfig(), random.Random(0), 0)).count("empty layout") == 1


def test_ansi_tells_how_a_match_and_hand_ended():
    match = MatchState(RuleConfig(target_score=30), seed=4)
    rng = random.Random(0)
    while not match.is_over:
        legal = match.legal_actions()
        match.play(legal[rng.randrange(len(legal))])
    text = render_ansi(match.hand, match.scores, hand_number=match.hand_number,
                       winner=match.winner)
    assert f"match won by side {match.winner}" in text
    done = match.finished_hands[0]
    assert "hand over:" in render_ansi(done)


def test_svg_is_well_formed_with_one_circle_per_pip():
    for hand in random_hands(dict(num_players=3, max_pip=12, hand_size=12), 10, seed=2):
        svg = layout_svg(hand, scores=[1, 2, 3], hand_number=0)
        root = ET.fromstring(svg)
        ns = "{http://www.w3.org/2000/svg}"
        circles = root.findall(f".//{ns}circle")
        pips = sum(hand.rules.tiles.pips[t.tile] for t in place_tiles(hand).tiles)
        assert len(circles) == pips
        tiles = [r for r in root.findall(f".//{ns}rect") if r.find(f"{ns}title") is not None]
        assert len(tiles) == len(place_tiles(hand).tiles)


def test_jupyter_pictures():
    hand = example_7()
    svg = hand._repr_svg_()
    assert svg.startswith("<svg") and "#c0392b" in svg  # the spinner's border
    match = MatchState(seed=3)
    match.play(match.legal_actions()[0])
    assert match._repr_svg_() == match_svg(match)
    assert "scores to 250" in match._repr_svg_()
    ET.fromstring(match._repr_svg_())


def test_rgb_image():
    hand = example_7()
    img = render_rgb(hand, scores=[30, 20], hand_number=2)
    assert img.shape == (SIZE[1], SIZE[0], 3) and img.dtype == np.uint8
    assert np.all(img == TILE_FILL, axis=2).sum() > 5000  # tile faces
    assert np.all(img < 40, axis=2).sum() > 300  # pips
    red = np.all(np.abs(img.astype(int) - SPINNER_EDGE) < 30, axis=2)
    assert red.sum() > 50  # the spinner's border is drawn
    # same state, same picture; a different state, a different picture
    assert np.array_equal(img, render_rgb(hand, scores=[30, 20], hand_number=2))
    assert not np.array_equal(img, render_rgb(hand, scores=[35, 20], hand_number=2))


def test_rgb_image_fits_a_long_layout():
    rules = RuleConfig(max_pip=12, hand_size=20)
    longest = max(random_hands(dict(max_pip=12, hand_size=20), 10, seed=3),
                  key=lambda h: len(place_tiles(h).tiles))
    assert longest.rules == rules and len(place_tiles(longest).tiles) > 20
    img = render_rgb(longest)
    border = np.concatenate([img[:, :3].reshape(-1, 3), img[:, -3:].reshape(-1, 3)])
    assert not np.any(np.all(border == TILE_FILL, axis=1))  # no tile runs off the picture


@pytest.mark.parametrize("where, message", [
    ("after the match", "the match was already won"),
    ("after a hand", "the hand is already over"),
])
def test_viewer_steps_refuse_a_move_the_replay_refuses(where, message):
    """The viewer's steps read a record through the core's replay (replay_steps), so a move
    written after the match was won or after its hand ended is refused as `replay` refuses it
    (the steps used to stop there and show the record as valid)."""
    from dominoes_env.core import RecordError
    from dominoes_env.core.records import replay_record
    from dominoes_env.render.steps import record_steps

    m = MatchState(RuleConfig(target_score=100), seed=5)
    while not m.is_over:
        m.play(m.legal_actions()[0])
    record = m.to_record()
    finished = [h for h, hand in zip(record["hands"], m.finished_hands, strict=False)
                if hand.is_over]
    entry = record["hands"][-1] if where == "after the match" else finished[0]
    assert len(record["hands"]) > 1
    entry["moves"].append(list(entry["moves"][-1]))
    with pytest.raises(RecordError, match=message) as replayed:
        replay_record(record)
    with pytest.raises(RecordError, match=message) as stepped:
        record_steps(record)
    assert str(stepped.value) == str(replayed.value)


@pytest.mark.parametrize("unit", [0, -5, float("nan"), float("inf"), 1e300, 1e-300, "22", None])
def test_a_picture_size_that_draws_nothing_is_refused(unit):
    """unit=NaN, inf, 0 or negative drew SVGs of 'nan' and 'inf' coordinates or negative
    sizes, 1e-300 one of zeros and 1e300 numbers of 300 digits: none a viewer shows."""
    from dominoes_env.render.svg import MAX_UNIT, MIN_UNIT, tile_svg

    match = MatchState(seed=2)
    for draw in (lambda: tile_svg(1, 2, unit), lambda: layout_svg(match.hand, unit=unit),
                 lambda: match_svg(match, unit)):
        with pytest.raises((ValueError, TypeError), match=r"^unit="):
            draw()
    for fine in (MIN_UNIT, MAX_UNIT):
        assert "nan" not in tile_svg(1, 2, fine) + match_svg(match, fine)
