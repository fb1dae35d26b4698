"""The layout rules of docs/rules.md ("The layout: ends and the spinner", "Counting the open
ends") for every spinner option, with exact ends, counts and points after each play."""

from __future__ import annotations

import random

import pytest

from dominoes_env.core import HandState, IllegalMoveError, RuleConfig
from dominoes_env.core.layout import Layout, place
from tests.helpers import play_script, scripted_hand

L = None


def test_a_lead_shows_its_halves_as_written():
    hand, counts, points = play_script([((6, 4), L)])
    assert hand.ends[:2] == [6, 4] and (counts, points) == ([10], [10])
    hand, _, _ = play_script([((4, 6), L)])
    assert hand.ends[:2] == [4, 6]
    # the end that shows 4 takes [4|1]; the one that shows 6 does not
    hand = scripted_hand([((4, 6), L), ((4, 1), "left")])
    hand.play(((4, 6), None))
    with pytest.raises(IllegalMoveError, match=r"\[1\|4\] does not fit the right end \(showing 6"):
        hand.play(((4, 1), "right"))
    assert hand.play(((4, 1), "left")) == 0 and hand.ends[:2] == [1, 6] and hand.count == 7


def _play_all(moves, rules):
    hand = scripted_hand(moves, rules=rules)
    out = []
    for move in moves:
        out.append((hand.play(move), hand.count))
    return hand, out


def test_a_double_lead_under_first_double_is_the_spinner_with_four_ends():
    hand = scripted_hand([((5, 5), L)])
    assert hand.play(((5, 5), None)) == 10
    assert hand.spinner == hand.rules.tiles.index(5, 5)
    assert hand.ends == [5, 5, 5, 5] and hand.contrib == [10, 10, 0, 0]
    assert hand.spinner_free == [True, True] and hand.spinner_sides == 0
    assert not hand.cross_open and hand.open_ends() == [0, 1]


def test_the_cross_opens_when_the_second_long_side_is_covered():
    moves = [((5, 5), L), ((5, 2), "left"), ((5, 1), "right"), ((5, 0), "up"), ((5, 3), "down")]
    hand, out = _play_all(moves, RuleConfig())
    # 10; 10 + 2 (the spinner with one side still counts 10); 2 + 1; 2 + 1 + 0; 2 + 1 + 0 + 3
    assert out == [(10, 10), (0, 12), (0, 3), (0, 3), (0, 6)]
    assert hand.spinner_sides == 2 and hand.spinner_free == [False, False]
    assert hand.ends == [2, 1, 0, 3] and hand.arm == [1, 1, 1, 1]


def test_spinner_cross_immediately_counts_the_lone_spinner_once():
    rules = RuleConfig(spinner_cross="immediately")
    moves = [((5, 5), L), ((5, 0), "up"), ((0, 0), "up"), ((5, 3), "down"), ((5, 2), "left"),
             ((5, 1), "right")]  # fmt: skip
    hand, out = _play_all(moves, rules)
    # 10; 10 + 0; 10 + 0 (a double [0|0]); 10 + 0 + 3; 10 + 2 + 0 + 3; the spinner covered: 6
    assert out == [(10, 10), (10, 10), (10, 10), (0, 13), (15, 15), (0, 6)]
    assert hand.cross_open and hand.spinner_sides == 2


def test_spinner_cross_immediately_on_a_later_double():
    rules = RuleConfig(spinner_cross="immediately")
    hand, out = _play_all([((3, 5), L), ((5, 5), "right"), ((5, 0), "up")], rules)
    assert hand.spinner == rules.tiles.index(5, 5) and hand.cross_open
    assert hand.spinner_free == [False, True] and hand.spinner_sides == 1
    # 8; 3 + 10 (the spinner, one long side covered); 3 + 10 + 0
    assert out == [(0, 8), (0, 13), (0, 13)]
    assert hand.ends == [3, 5, 0, 5]


def test_a_later_double_becomes_the_spinner_on_the_left_too():
    hand, out = _play_all([((5, 3), L), ((5, 5), "left"), ((5, 1), "left"), ((5, 2), "up")],
                          RuleConfig())  # fmt: skip
    assert hand.spinner == hand.rules.tiles.index(5, 5)
    assert out == [(0, 8), (0, 13), (0, 4), (0, 6)]
    assert hand.ends == [1, 3, 2, 5] and hand.cross_open


def test_a_second_double_on_a_line_is_no_spinner():
    hand, out = _play_all([((6, 6), L), ((6, 3), "left"), ((3, 3), "left"), ((6, 1), "right"),
                           ((6, 4), "up")], RuleConfig())  # fmt: skip
    assert hand.spinner == hand.rules.tiles.index(6, 6)
    # 12; 12 + 3; 12 + 6 ([3|3] at the end of a line counts 2d); 6 + 1; 6 + 1 + 4
    assert out == [(0, 12), (15, 15), (0, 18), (0, 7), (0, 11)]
    assert hand.contrib == [6, 1, 4, 0]


@pytest.mark.parametrize("spinner", ["lead_double_only", "none"])
def test_without_a_spinner_a_later_double_keeps_two_ends(spinner):
    rules = RuleConfig(spinner=spinner)
    moves = [((3, 5), L), ((5, 5), "right"), ((5, 2), "right"), ((3, 0), "left")]
    hand, out = _play_all(moves, rules)
    assert out == [(0, 8), (0, 13), (5, 5), (0, 2)]
    assert hand.spinner == -1 and not hand.cross_open and hand.open_ends() == [0, 1]
    assert hand.ends[2:] == [-1, -1]
    assert not any(c & 3 >= 2 for c in hand.legal_actions())


def test_spinner_none_double_lead_has_two_ends_and_no_cross():
    rules = RuleConfig(spinner="none")
    hand, out = _play_all([((5, 5), L), ((5, 0), "left"), ((5, 1), "right")], rules)
    # a lone double counts 10; covered on one side it is a double at the end of a line
    assert out == [(10, 10), (10, 10), (0, 1)]
    assert hand.spinner == -1 and hand.ends == [0, 1, -1, -1]
    hand = scripted_hand([((5, 5), L), ((5, 0), "left"), ((5, 1), "right"), ((5, 2), "up")],
                         rules=rules)  # fmt: skip
    for move in [((5, 5), L), ((5, 0), "left"), ((5, 1), "right")]:
        hand.play(move)
    with pytest.raises(IllegalMoveError, match="up end is not open: there is no spinner"):
        hand.play(((5, 2), "up"))


def test_lead_double_only_makes_a_double_lead_the_spinner():
    rules = RuleConfig(spinner="lead_double_only")
    hand, out = _play_all([((4, 4), L), ((4, 1), "left"), ((4, 2), "right"), ((4, 5), "up")],
                          rules)  # fmt: skip
    assert hand.spinner == rules.tiles.index(4, 4) and hand.cross_open
    assert out == [(0, 8), (0, 9), (0, 3), (0, 8)]


def test_place_on_a_layout_copy_moves_the_copy_only():
    hand = scripted_hand([((3, 5), L), ((5, 5), "right")])
    hand.play(((3, 5), None))
    before = (list(hand.ends), list(hand.contrib), hand.count, hand.spinner)
    copy = Layout.of(hand)
    assert place(copy, hand.rules.tiles.index(5, 5) * 4 + 1) == 13
    assert copy.spinner == hand.rules.tiles.index(5, 5) and copy.spinner_free == [False, True]
    assert copy.ends == [3, 5, 5, 5] and copy.contrib == [3, 10, 0, 0] and copy.count == 13
    assert (list(hand.ends), list(hand.contrib), hand.count, hand.spinner) == before
    again = copy.copy()
    assert place(again, hand.rules.tiles.index(3, 0) * 4 + 0) == 10
    assert copy.count == 13 and copy.ends[0] == 3 and again.ends[0] == 0


def test_place_leads_flipped_and_unflipped():
    rules = RuleConfig()
    t = rules.tiles.index(2, 6)
    for flip, ends in ((False, [2, 6]), (True, [6, 2])):
        lay = Layout.of(HandState.deal(rules, random.Random(0), 0))
        assert place(lay, t * 4, flip) == 8
        assert lay.ends[:2] == ends and lay.contrib[:2] == ends
        assert lay.lead == t and lay.lead_pips == 8 and lay.spinner == -1
