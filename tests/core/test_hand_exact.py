"""``HandState`` exactly: building a deal, every way a move is refused (the message names the
reason, the state is unchanged), forced draws and passes with the public inference they allow
(docs/rules.md, "A turn"), rebuilding from a view, and the hand's strings."""

from __future__ import annotations

import os
import random

import pytest

from dominoes_env.core import (
    LEFT,
    RIGHT,
    HandState,
    IllegalMoveError,
    MatchState,
    Move,
    Outcome,
    RuleConfig,
    Tile,
)


class _Index:
    """An integer of another type (what numpy's integers look like to the core)."""

    def __init__(self, value: int):
        self.value = value

    def __index__(self) -> int:
        return self.value


# the deal of docs/rules.md's record example
EXAMPLE = [[(6, 6), (6, 3), (1, 2), (0, 0), (2, 2), (3, 3), (4, 5)],
           [(5, 5), (0, 1), (1, 1), (2, 3), (3, 4), (0, 6), (1, 6)]]  # fmt: skip


def example(rules=None):
    return HandState.from_tiles(rules or RuleConfig(), EXAMPLE, leader=0)


def snapshot(hand):
    return (list(hand.hands), list(hand.ends), list(hand.contrib), hand.count, hand.turn,
            list(hand.history), list(hand.moves), hand.played, hand.drawn)  # fmt: skip


# -- building a deal ----------------------------------------------------------------------------


def test_from_tiles_fills_the_boneyard_in_index_order():
    hand = example()
    ts = hand.rules.tiles
    dealt = {ts.index(*t) for h in EXAMPLE for t in h}
    assert list(hand.boneyard) == [i for i in range(28) if i not in dealt]
    assert hand.hands[0] == sum(1 << ts.index(*t) for t in EXAMPLE[0])
    assert hand.dealt == (tuple(hand.hands), hand.boneyard)
    assert (hand.leader, hand.turn, hand.n, hand.drawn, hand.played) == (0, 0, 2, 0, 0)
    assert (hand.boneyard_left, hand.drawable, hand.hand_sizes) == (14, 14, (7, 7))
    assert hand.hand_tiles(1) == sorted(Tile(min(t), max(t)) for t in EXAMPLE[1])


def test_a_fresh_deal_shows_an_empty_layout():
    hand = example()
    assert (hand.ends, hand.contrib, hand.arm) == ([-1] * 4, [0] * 4, [0] * 4)
    assert (hand.lead, hand.lead_pips, hand.count, hand.spinner, hand.spinner_sides) == (
        -1, 0, 0, -1, 0)  # fmt: skip
    assert hand.spinner_free == [False, False] and hand.cross_open is False
    assert hand.known_lacks == [0, 0] and hand.history == [] and hand.moves == []
    assert hand.move_points == [] and hand.open_mask == 0
    assert hand.result is None and hand.award is None and hand.outcome is None
    view = hand.view(0)
    assert view.ends == (-1,) * 4 and view.arm == (0,) * 4 and view.award is None


@pytest.mark.parametrize("hands, boneyard, message", [
    (EXAMPLE[:1], None, r"^the deal needs one hand per seat: 2 hands$"),
    ("abc", None, r"^the deal needs one hand per seat: 2 hands$"),
    ([EXAMPLE[0], EXAMPLE[1][:6]], None, r"^seat 1 was dealt 6 tiles; hand_size is 7$"),
    ([EXAMPLE[0], EXAMPLE[1][:6] + [(6, 6)]], None, r"^tile \[6\|6\] is dealt twice$"),
    ([EXAMPLE[0][:6] + [(3, 3)], EXAMPLE[1]], None, r"^tile \[3\|3\] is dealt twice$"),
    (EXAMPLE, [(0, 2), (0, 2)], r"^tile \[0\|2\] is dealt twice$"),
    (EXAMPLE, [(1, 6)], r"^tile \[1\|6\] is dealt twice$"),
    (EXAMPLE, [(0, 2)], r"^the deal must hold every tile of the set exactly once; missing: "
                        r"\[0\|3\], \[0\|4\], \[0\|5\], \[1\|3\], "),
    ([EXAMPLE[0][:6] + [(1, 2, 3)], EXAMPLE[1]], None,
     r"^\(1, 2, 3\) in seat 0's hand is not a tile; a tile is a pair \[a, b\]$"),
    ([EXAMPLE[0][:6] + [7], EXAMPLE[1]], None, r"^7 in seat 0's hand is not a tile"),
    (EXAMPLE, [("a", 1)], r"^\('a', 1\) in the boneyard is not a tile; halves must be integers$"),
    ([EXAMPLE[0][:6] + [(7, 0)], EXAMPLE[1]], None, r"^\[7\|0\] is not a tile of the double-6"),
])  # fmt: skip
def test_from_tiles_refuses_a_bad_deal_naming_what_is_wrong(hands, boneyard, message):
    with pytest.raises(ValueError, match=message):
        HandState.from_tiles(RuleConfig(), hands, boneyard)


def test_the_leader_must_be_a_seat():
    with pytest.raises(ValueError, match=r"leader=2 is out of range; allowed: 0\.\.1"):
        HandState.from_tiles(RuleConfig(), EXAMPLE, leader=2)
    assert HandState.from_tiles(RuleConfig(), EXAMPLE, leader=1).turn == 1


@pytest.mark.parametrize("options", [{}, {"num_players": 3, "hand_size": 5}, {"max_pip": 9}])
def test_deal_gives_each_seat_the_next_hand_size_shuffled_tiles(options):
    rules = RuleConfig(**options)
    hand = HandState.deal(rules, random.Random(3), leader=1)
    order = list(range(rules.num_tiles))
    random.Random(3).shuffle(order)
    h = rules.hand_size
    for s in range(rules.num_players):
        assert hand.hands[s] == sum(1 << t for t in order[s * h:(s + 1) * h])
    assert list(hand.boneyard) == order[rules.num_players * h:]
    assert hand.leader == hand.turn == 1
    assert hand.drawable == rules.boneyard_size - rules.boneyard_reserve


# -- queries --------------------------------------------------------------------------------------


def test_before_the_lead_every_tile_may_lead_on_end_code_zero():
    hand = example()
    ts = hand.rules.tiles
    codes = sorted(ts.index(*t) * 4 for t in EXAMPLE[0])
    assert hand.legal_actions() == codes and hand.open_ends() == []
    assert [m.end for m in hand.legal_moves] == [None] * 7
    assert all(hand.is_legal(c) for c in codes)
    assert not any(hand.is_legal(c + e) for c in codes for e in (1, 2, 3))
    assert not hand.is_legal(ts.index(5, 5) * 4)  # seat 1's tile
    assert not hand.is_legal(-1) and not hand.is_legal(28 * 4) and hand.is_legal(27 * 4)
    assert hand.move_of(ts.index(6, 6) * 4) == Move(Tile(6, 6), None)
    assert hand.count_after(ts.index(4, 5) * 4) == 9 and hand.points_after(ts.index(6, 6) * 4) == 0


def test_after_the_lead_moves_have_ends():
    hand = example()
    ts = hand.rules.tiles
    hand.play(((6, 6), None))
    assert hand.open_ends() == [0, 1]
    assert hand.legal_actions() == [ts.index(0, 6) * 4, ts.index(1, 6) * 4,
                                    ts.index(0, 6) * 4 + 1, ts.index(1, 6) * 4 + 1]
    assert hand.move_of(ts.index(1, 6) * 4 + 1) == Move(Tile(1, 6), "right")
    assert hand.count_after(ts.index(1, 6) * 4) == 13 and hand.points_after(ts.index(1, 6) * 4) == 0
    assert hand.count_after(ts.index(0, 6) * 4) == 12 and hand.points_after(ts.index(0, 6) * 4) == 0
    assert not hand.is_legal(ts.index(0, 6) * 4 + 2)  # the cross is not open
    assert not hand.is_legal(ts.index(0, 1) * 4)  # [0|1] does not fit


# -- playing and refusing -------------------------------------------------------------------------


def test_every_move_form_plays_the_same():
    ts = RuleConfig().tiles
    forms = [
        (((6, 6), None), ((1, 6), "left")),
        ((Tile(6, 6), None), Move(Tile(1, 6), "left")),
        (ts.index(6, 6) * 4, ts.index(1, 6) * 4),
    ]
    results = []
    for lead, reply in forms:
        hand = example()
        results.append((hand.play(lead), hand.push(reply), snapshot(hand)))
    assert results[0] == results[1] == results[2]
    assert results[0][2][1] == [1, 6, 6, 6] and results[0][2][3] == 13


def test_a_lead_written_high_half_first_is_kept_flipped():
    hand = example()
    assert hand.play(((5, 4), None)) == 0
    assert hand.moves == [(0, hand.rules.tiles.index(4, 5) * 4, True)]
    assert hand.ends[:2] == [5, 4] and hand.move_stack == [Move(Tile(5, 4), None)]
    hand = example()
    hand.play(((4, 5), None))
    assert hand.moves[0][2] is False and hand.ends[:2] == [4, 5]


@pytest.mark.parametrize("move, error, message", [
    ("x", TypeError, r"^a move is a Move, an action code or a \(tile, end\) pair, not 'x'$"),
    (1.5, TypeError, r"^a move is a Move, an action code or a \(tile, end\) pair, not 1\.5$"),
    (112, IllegalMoveError, r"^illegal move 112: action code out of range 0\.\.111$"),
    (-1, IllegalMoveError, r"action code out of range 0\.\.111$"),
    (27 * 4 + 1, IllegalMoveError, r"^illegal move \[6\|6\] lead: the lead is played with end "
                                   r"code 0 \(left\)$"),
    (((6, 6), None, 1), TypeError, r"^a move is a \(tile, end\) pair, not \(\(6, 6\), None, 1\)"),
    ((6, None), IllegalMoveError, r"a tile is a pair of pip values \(a, b\)$"),
    (((6, 6, 6), None), IllegalMoveError, r"a tile is a pair of pip values \(a, b\)$"),
    (((7, 7), None), IllegalMoveError, r"\[7\|7\] is not a tile of the double-6 set"),
    (((6, 6), "left"), IllegalMoveError, r"the lead has no end \(end must be None\)$"),
    (((5, 5), None), IllegalMoveError, r"\[5\|5\] is not in seat 0's hand$"),
])  # fmt: skip
def test_a_refused_lead_names_the_reason_and_changes_nothing(move, error, message):
    hand = example()
    before = snapshot(hand)
    with pytest.raises(error, match=message):
        hand.play(move)
    assert snapshot(hand) == before


@pytest.mark.parametrize("move, message", [
    (((1, 6), None), r"only the lead has no end; name an end$"),
    (((1, 6), "middle"), r"unknown end 'middle'"),
    (((6, 6), "left"), r"\[6\|6\] is already in the layout$"),
    (((6, 3), "left"), r"\[3\|6\] is not in seat 1's hand$"),
    (((1, 1), "left"), r"\[1\|1\] does not fit the left end \(showing 6\)$"),
    (((1, 6), "up"), r"the up end is not open: the spinner's up and down open only once both "
                     r"its long sides have a tile$"),
    (((1, 6), "down"), r"the down end is not open"),
    (27 * 4 + 1, r"\[6\|6\] is already in the layout"),
])  # fmt: skip
def test_a_refused_reply_names_the_reason_and_changes_nothing(move, message):
    hand = example()
    hand.play(((6, 6), None))
    before = snapshot(hand)
    with pytest.raises(IllegalMoveError, match=message):
        hand.play(move)
    assert snapshot(hand) == before


def test_the_integer_end_constants_play_as_the_end_names():
    """``Move(tile, LEFT)`` with the exported constants was refused: "unknown end 0; allowed:
    left, ... (or null for the lead)", JSON's word in a Python error."""
    by_name, by_constant = example(), example()
    for hand in (by_name, by_constant):
        hand.play(((6, 6), None))
    assert by_constant.play(Move(Tile(1, 6), LEFT)) == by_name.play(((1, 6), "left"))
    assert by_constant.push(((3, 6), RIGHT)) == by_name.push(((3, 6), "right"))
    assert snapshot(by_constant) == snapshot(by_name)
    assert by_constant.move_stack == by_name.move_stack  # written with the names
    with pytest.raises(IllegalMoveError, match=r"unknown end 4; allowed: left, right, up, down "
                                               r"or 0\.\.3 \(None for the lead\)$"):
        by_constant.play(((1, 1), 4))
    with pytest.raises(IllegalMoveError, match=r"the lead has no end \(end must be None\)$"):
        example().play(((6, 6), LEFT))


def test_a_replaced_end_is_named_as_the_constructor_names_it():
    """``move._replace(end=0)`` (NamedTuple's ``_make``) skipped the constructor and kept the
    integer, so the move was not equal to the same move built with ``Move``."""
    move = Move(Tile(1, 6), "right")
    assert move._replace(end=LEFT) == Move(Tile(1, 6), "left")
    assert move._replace(end=LEFT).end == "left" and Move._make((Tile(1, 6), 1)).end == "right"
    assert move._replace(end=None) == Move(Tile(1, 6), None)


def test_is_legal_takes_every_form_play_takes():
    """``is_legal(Move(...))`` was a bare ``TypeError: '<=' not supported ...``."""
    hand = example()
    ts = hand.rules.tiles
    assert hand.is_legal(Move(Tile(6, 6), None)) and hand.is_legal(((6, 6), None))
    assert hand.is_legal(((6, 4), None)) is False  # not seat 0's tile: False, as play refuses
    assert hand.is_legal(((4, 5), "left")) is False  # the lead has no end
    assert hand.is_legal(((7, 7), None)) is False  # no tile of the set
    assert hand.is_legal(_Index(ts.index(6, 6) * 4)) is True  # numpy's integers too
    hand.play(((6, 6), None))
    for move in hand.legal_moves:
        assert hand.is_legal(move) and hand.is_legal(tuple(move))
    assert hand.is_legal(Move(Tile(1, 6), LEFT)) and hand.is_legal(((6, 1), "right"))
    assert not hand.is_legal(((1, 6), "up")) and not hand.is_legal(((1, 1), "left"))
    assert not hand.is_legal(((1, 6), "middle")) and not hand.is_legal(((1, 6), None))
    assert not hand.is_legal(Move(Tile(3, 6), "left"))  # seat 0's tile, seat 1 to play
    for move in ("left", 1.0, True, None, ((1, 6), "left", 0)):  # no move at all: as play
        with pytest.raises(TypeError, match="a move is a"):
            hand.is_legal(move)
        with pytest.raises(TypeError, match="a move is a"):
            hand.play(move)
    while not hand.is_over:
        hand.play(hand.legal_actions()[0])
    assert not hand.is_legal(Move(Tile(0, 0), "left")) and not hand.is_legal(0)


def test_push_is_play(monkeypatch):
    """``push`` and ``play`` had two copies of one body: ``push`` now plays through ``play``,
    so the two cannot drift apart."""
    calls = []
    play = HandState.play
    monkeypatch.setattr(HandState, "play", lambda self, move: calls.append(move) or play(self,
                                                                                         move))
    hand = example()
    assert hand.push(((6, 6), None)) == 0 and calls == [((6, 6), None)]
    assert hand.move_stack == [Move(Tile(6, 6), None)]


def test_up_without_a_spinner_says_there_is_none():
    hand = example()
    hand.play(((4, 5), None))
    with pytest.raises(IllegalMoveError, match="the up end is not open: there is no spinner in "
                                               "this hand$"):
        hand.play(((3, 4), "up"))


def test_apply_unchecked_after_the_hand_and_the_deprecated_apply():
    rules = RuleConfig(hand_size=1, boneyard_reserve=26)
    hand = HandState.from_tiles(rules, [[(5, 5)], [(0, 0)]])
    message = r"^HandState\.apply is renamed apply_unchecked \(it does not check the move\)$"
    with pytest.warns(DeprecationWarning, match=message):
        assert hand.apply(rules.tiles.index(5, 5) * 4) == 10
    assert hand.is_over and hand.outcome == Outcome("domino", 0, (0, 0))
    assert hand.legal_actions() == [] and not hand.is_legal(0)
    with pytest.raises(IllegalMoveError, match="the hand is over") as err:
        hand.apply_unchecked(0)
    assert err.value.move == 0 and str(err.value) == "illegal move 0: the hand is over"
    with pytest.raises(IllegalMoveError, match="the hand is over"):
        hand.play(0)


# -- forced draws and passes ----------------------------------------------------------------------


def open_values(hand):
    values = 0
    for e in hand.open_ends():
        values |= 1 << hand.ends[e]
    return values


def expected_lacks(lacks, events, values):
    """Public inference from the draws and passes that followed one play (docs/rules.md:
    every player sees how many tiles each player drew and that a player passed)."""
    lacks = list(lacks)
    for i, ev in enumerate(events):
        nxt = events[i + 1] if i + 1 < len(events) else None
        if ev[0] == "draw":
            passed = nxt is not None and nxt[0] == "pass" and nxt[1] == ev[1]
            if passed or ev[2] > 1:
                lacks[ev[1]] = values  # the earlier tiles drawn lack them too; the old lacks
            else:  # may no longer hold for the new tiles
                lacks[ev[1]] |= values
        elif ev[0] == "pass" and not (i and events[i - 1][0] == "draw"
                                      and events[i - 1][1] == ev[1]):
            lacks[ev[1]] |= values
    return lacks


@pytest.mark.parametrize("options", [
    {}, {"num_players": 3}, {"boneyard_reserve": 4, "hand_size": 5},
    {"num_players": 4, "hand_size": 5}, {"spinner_cross": "immediately"},
])  # fmt: skip
def test_draws_passes_and_known_lacks_follow_the_rules(options):
    rules = RuleConfig(**options)
    rng = random.Random(7)
    for game in range(25):
        match = MatchState(rules, seed=game)
        while not match.is_over:
            hand, seat = match.hand, match.turn
            lacks, n_events = list(hand.known_lacks), len(hand.history)
            drawn, sizes = hand.drawn, hand.hand_sizes
            code = rng.choice(hand.legal_actions())
            match.play(code)
            events = hand.history[n_events:]
            assert events[0] == ("play", seat, code, hand.move_points[-1])
            draws = [e for e in events if e[0] == "draw"]
            assert hand.drawn - drawn == sum(e[2] for e in draws)
            assert hand.drawn <= hand.draw_limit
            if hand.is_over:
                continue
            events = events[1:]
            values = open_values(hand)
            assert hand.boneyard_left == len(hand.boneyard) - hand.drawn
            assert match.view(seat).boneyard_left == hand.boneyard_left
            assert match.view(seat).drawable == hand.drawable == hand.draw_limit - hand.drawn
            assert hand.known_lacks == expected_lacks(lacks, events, values)
            # whoever is to play holds a tile that fits; every seat passed over holds none
            assert hand.hands[hand.turn] & hand.open_mask
            for e in events:
                if e[0] == "pass":
                    assert not hand.hands[e[1]] & hand.open_mask
                    assert hand.drawable == 0
            assert hand.hand_sizes[seat] == sizes[seat] - 1


def test_a_blocked_hand_ends_after_every_seat_passed():
    # seat 0 leads [5|5], seat 1 answers [5|0]: neither can play on 0 and 5 again
    rules = RuleConfig(hand_size=2, boneyard_reserve=24)
    hand = HandState.from_tiles(rules, [[(5, 5), (1, 2)], [(5, 0), (3, 4)]])
    hand.play(((5, 5), None))
    hand.play(((5, 0), "left"))
    assert hand.history[-2:] == [("pass", 0), ("pass", 1)]
    assert hand.turn == -1 and hand.is_over and hand.result == ("blocked", None)
    assert hand.side_pips() == [3, 7] and hand.award == (0, 5)
    assert hand.outcome == ("blocked", None, (0, 5))
    assert hand.known_lacks == [1 << 0 | 1 << 5] * 2


# -- copies, views, strings -----------------------------------------------------------------------


def test_copy_is_independent():
    hand = example()
    hand.play(((6, 6), None))
    twin = hand.copy()
    assert snapshot(twin) == snapshot(hand) and twin.move_stack == hand.move_stack
    twin.play(((1, 6), "left"))
    assert hand.count == 12 and hand.ends == [6, 6, 6, 6] and len(hand.moves) == 1
    assert twin.count == 13 and len(twin.moves) == 2


def test_a_state_rebuilt_from_a_view_plays_on_identically():
    rules = RuleConfig(num_players=3)
    match = MatchState(rules, seed=4)
    rng = random.Random(1)
    for _ in range(6):
        match.play(rng.choice(match.legal_actions()))
    hand = match.hand
    seat = hand.turn
    view = hand.view(seat)
    assert view.scores == (0, 0, 0) and view.hand_number == 0
    rebuilt = HandState.from_view(view, list(hand.hands), list(hand.boneyard_tiles))
    assert rebuilt.legal_actions() == hand.legal_actions()
    assert rebuilt.open_mask == hand.open_mask and rebuilt.drawn == hand.drawn
    assert rebuilt.boneyard_tiles == hand.boneyard_tiles
    for name in ("ends", "contrib", "arm", "spinner_free", "known_lacks", "history"):
        assert list(getattr(rebuilt, name)) == list(getattr(hand, name)), name
    for name in ("played", "lead", "lead_pips", "count", "spinner", "spinner_sides",
                 "cross_open", "turn", "leader", "result", "award"):  # fmt: skip
        assert getattr(rebuilt, name) == getattr(hand, name), name
    while not hand.is_over:
        code = rng.choice(hand.legal_actions())
        assert rebuilt.apply_unchecked(code) == hand.apply_unchecked(code)
        assert snapshot(rebuilt)[:6] == snapshot(hand)[:6]
    assert rebuilt.award == hand.award and rebuilt.result == hand.result


def test_from_view_refuses_a_guess_that_contradicts_the_view():
    hand = example()
    hand.play(((6, 6), None))
    view = hand.view(1)
    hands, bone = list(hand.hands), list(hand.boneyard_tiles)
    message = "hands must give every seat, with the viewer's own tiles as in the view"
    with pytest.raises(ValueError, match=message):
        HandState.from_view(view, hands[:1], bone)
    with pytest.raises(ValueError, match=message):
        HandState.from_view(view, [hands[0], hands[0]], bone)
    with pytest.raises(ValueError, match="the boneyard must hold 14 tiles, got 13"):
        HandState.from_view(view, hands, bone[1:])


def test_strings():
    hand = example()
    assert hand.layout_str() == "(empty layout)"
    assert repr(hand) == "<HandState turn=0 (empty layout)>"
    hand.play(((6, 6), None))
    hand.play(((1, 6), "left"))
    assert hand.layout_str() == "ends left=1 right=6, count 13, spinner [6|6]"
    assert str(hand).splitlines() == [
        "Hand (leader seat 0): ends left=1 right=6, count 13, spinner [6|6]",
        "* seat 0: [0|0] [1|2] [2|2] [3|3] [3|6] [4|5]",
        "  seat 1: [0|1] [0|6] [1|1] [2|3] [3|4] [5|5]",
        "  boneyard: 14 tiles",
    ]
    hand = HandState.from_tiles(RuleConfig(hand_size=1, boneyard_reserve=26), [[(2, 3)], [(0, 0)]])
    hand.play(((3, 2), None))
    assert hand.layout_str() == "ends left=3 right=2, count 5"
    assert str(hand).splitlines()[-1] == "  over: domino, award Award(side=0, points=0)"


def test_apply_leads_low_half_left_unless_told_to_flip():
    for flip, ends in ((None, [4, 5]), (False, [4, 5]), (True, [5, 4])):
        hand = example()
        code = hand.rules.tiles.index(4, 5) * 4
        with pytest.warns(DeprecationWarning):
            hand.apply(code) if flip is None else hand.apply(code, flip)
        assert hand.ends[:2] == ends


def test_is_legal_after_a_lead_of_tile_zero():
    # [0|0] is tile index 0: the lead is placed even though its index is 0
    hand = HandState.from_tiles(RuleConfig(), [[(0, 0), (0, 2), (1, 2), (2, 2), (3, 3), (4, 4),
                                                (4, 5)], EXAMPLE[1]])  # fmt: skip
    hand.play(((0, 0), None))
    hand.play(((0, 6), "left"))
    legal = set(hand.legal_actions())
    assert legal == {hand.rules.tiles.index(0, 2) * 4 + 1}
    for code in range(28 * 4):
        assert hand.is_legal(code) == (code in legal), code


def test_hand_sizes_called_as_a_method_warns_exactly():
    hand = example()
    with pytest.warns(DeprecationWarning, match=r"^HandState\.hand_sizes is a property now \(a "
                                                r"PublicState field\); call-style hand_sizes\(\) "
                                                r"is deprecated$"):
        assert hand.hand_sizes() == [7, 7]


@pytest.mark.parametrize("move, reason", [
    (((1, 1), "left"), "[1|1] does not fit the left end (showing 6)"),
    (((6, 3), "right"), "[3|6] is not in seat 1's hand"),
    (((1, 6), "up"), "the up end is not open: the spinner's up and down open only once both its "
                     "long sides have a tile"),
    (7 * 4, "[1|1] does not fit the left end (showing 6)"),
    (112, "action code out of range 0..111"),
    (((7, 7), "left"), "[7|7] is not a tile of the double-6 set (halves must be integers 0..6)"),
])  # fmt: skip
def test_the_error_carries_the_move_as_given_and_the_reason(move, reason):
    hand = example()
    hand.play(((6, 6), None))
    with pytest.raises(IllegalMoveError) as err:
        hand.play(move)
    assert err.value.move == move and err.value.reason == reason
    assert str(err.value) == f"illegal move {move}: {reason}"


def test_a_move_too_long_to_print_is_shown_short():
    hand = example()
    with pytest.raises(IllegalMoveError) as err:
        hand.play(10**5000)
    assert str(err.value) == ("illegal move <integer of about 5000 digits>: action code out of "
                              "range 0..111")
    assert err.value.move == 10**5000


def test_after_a_lead_of_tile_zero_the_layout_and_a_rebuilt_state_see_it():
    hand = HandState.from_tiles(RuleConfig(), [[(0, 0), (0, 2), (1, 2), (2, 2), (3, 3), (4, 4),
                                                (4, 5)], EXAMPLE[1]])  # fmt: skip
    hand.play(((0, 0), None))
    assert hand.layout_str() == "ends left=0 right=0, count 0, spinner [0|0]"
    rebuilt = HandState.from_view(hand.view(1), list(hand.hands), list(hand.boneyard_tiles))
    assert rebuilt.open_mask == hand.open_mask == hand.rules.tiles.suit_mask[0]
    assert rebuilt.legal_actions() == hand.legal_actions()


def test_a_rebuilt_state_marks_the_tiles_drawn_before_as_unknown():
    hand = HandState.from_tiles(RuleConfig(), [
        [(6, 2), (0, 0), (1, 1), (3, 3), (4, 4), (5, 5), (0, 1)],
        [(0, 3), (0, 4), (0, 5), (1, 3), (1, 4), (1, 5), (3, 4)]])  # fmt: skip
    hand.play(((6, 2), None))  # seat 1 holds no 6 and no 2: it draws [0|2] and must play
    assert hand.drawn == 1 and hand.history[-1] == ("draw", 1, 1)
    seat = hand.turn
    rebuilt = HandState.from_view(hand.view(seat), list(hand.hands), list(hand.boneyard_tiles))
    assert rebuilt.boneyard == (-1,) * hand.drawn + tuple(hand.boneyard_tiles)
    assert rebuilt.drawn == hand.drawn and rebuilt.boneyard_tiles == hand.boneyard_tiles


def test_a_finished_hand_has_turn_minus_one():
    rules = RuleConfig(hand_size=1, boneyard_reserve=26)
    hand = HandState.from_tiles(rules, [[(5, 5)], [(0, 0)]])
    hand.play(((5, 5), None))
    assert hand.turn == -1 and hand.view(1).turn == -1
    hand = HandState.from_tiles(RuleConfig(hand_size=2, boneyard_reserve=24),
                                [[(5, 5), (1, 2)], [(5, 0), (3, 4)]])  # fmt: skip
    hand.play(((5, 5), None))
    hand.play(((5, 0), "left"))
    assert hand.result == ("blocked", None) and hand.turn == -1


# under mutation testing every call passes through a mutmut trampoline: one frame more
UNDER_MUTMUT = pytest.mark.skipif("MUTANT_UNDER_TEST" in os.environ,
                                  reason="mutmut's trampolines add a stack frame")


@UNDER_MUTMUT
def test_deprecation_warnings_point_at_the_caller():
    hand = example()
    with pytest.warns(DeprecationWarning) as caught:
        hand.hand_sizes()
    with pytest.warns(DeprecationWarning) as caught2:
        hand.apply(hand.rules.tiles.index(6, 6) * 4)
    assert caught[0].filename == caught2[0].filename == __file__
