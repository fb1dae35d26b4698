"""Every worked example of docs/rules.md, with its exact expected values."""

import pytest

from dominoes_env.core import HandState, IllegalMoveError, RuleConfig, round_to_five
from dominoes_env.core.scoring import blocked_award

from .helpers import play_script, scripted_hand

L = None


@pytest.mark.parametrize(
    "lead, count, points", [((6, 4), 10, 10), ((5, 5), 10, 10), ((6, 6), 12, 0)]
)
def test_example_1_leads(lead, count, points):
    _, counts, pts = play_script([(lead, None)])
    assert (counts, pts) == ([count], [points])


EXAMPLES = {
    2: (
        [
            ((6, 6), L),
            ((6, 3), "left"),
            ((6, 2), "right"),
            ((6, 5), "up"),
            ((6, 0), "down"),
            ((5, 5), "up"),
            ((5, 1), "up"),
        ],
        [12, 15, 5, 10, 10, 15, 6],
        [0, 15, 5, 10, 10, 15, 0],
    ),
    3: ([((4, 4), L), ((4, 1), "left"), ((1, 1), "left")], [8, 9, 10], [0, 0, 10]),
    4: ([((4, 4), L), ((4, 1), "left"), ((4, 6), "right")], [8, 9, 7], [0, 0, 0]),
    6: (
        [((3, 5), L), ((5, 5), "right"), ((5, 2), "right"), ((5, 0), "up"), ((5, 4), "down")],
        [8, 13, 5, 5, 9],
        [0, 0, 5, 5, 0],
    ),
    7: (
        [
            ((4, 1), L),
            ((1, 1), "right"),
            ((4, 4), "left"),
            ((4, 3), "left"),
            ((1, 2), "right"),
            ((1, 5), "up"),
            ((5, 5), "up"),
            ((5, 0), "up"),
        ],
        [5, 6, 10, 5, 5, 10, 15, 5],
        [5, 0, 10, 5, 5, 10, 15, 5],
    ),
}


@pytest.mark.parametrize("number", sorted(EXAMPLES))
def test_worked_examples(number):
    moves, counts, points = EXAMPLES[number]
    _, got_counts, got_points = play_script(moves)
    assert got_counts == counts
    assert got_points == points


def test_example_6_spinner_is_first_double_not_lead():
    hand, _, _ = play_script(EXAMPLES[6][0][:2])
    assert hand.rules.tiles.tiles[hand.spinner] == (5, 5)
    assert not hand.cross_open  # its outer long side is still free


def test_example_5_up_is_illegal_until_both_sides_have_a_tile():
    moves = [((5, 5), L), ((5, 2), "left"), ((5, 0), "right")]
    hand = scripted_hand(moves)
    assert hand.play(moves[0]) == 10 and hand.count == 10
    assert hand.play(moves[1]) == 0 and hand.count == 12
    before = (list(hand.hands), list(hand.ends), hand.count, hand.turn, len(hand.history))
    assert hand.turn == 0
    with pytest.raises(IllegalMoveError, match="up end is not open") as err:
        hand.play(((5, 0), "up"))
    assert "[0|5]@up" in str(err.value) or "up" in str(err.value)
    assert (list(hand.hands), list(hand.ends), hand.count, hand.turn, len(hand.history)) == before
    assert hand.play(((5, 0), "right")) == 0 and hand.count == 2


def test_spinner_cross_immediately_opens_up_at_once():
    rules = RuleConfig(spinner_cross="immediately")
    hand, counts, points = play_script([((5, 5), L), ((5, 2), "up")], rules=rules)
    # the lone spinner still counts 2d once, plus the 2 on up
    assert counts == [10, 12] and points == [10, 0]


@pytest.mark.parametrize(
    "spinner, is_spinner", [("first_double", True), ("lead_double_only", False), ("none", False)]
)
def test_spinner_options_for_a_later_double(spinner, is_spinner):
    rules = RuleConfig(spinner=spinner)
    hand, counts, _ = play_script([((3, 5), L), ((5, 5), "right"), ((5, 2), "right")], rules=rules)
    assert (hand.spinner >= 0) == is_spinner
    assert hand.cross_open == is_spinner
    assert counts == [8, 13, 5]  # a double at the end of a line counts 2d either way


def test_lead_double_only_and_none_for_a_double_lead():
    assert scripted_hand([((6, 6), L)], rules=RuleConfig(spinner="lead_double_only")).spinner == -1
    h = scripted_hand([((6, 6), L)], rules=RuleConfig(spinner="lead_double_only"))
    h.play(((6, 6), None))
    assert h.spinner >= 0
    h = scripted_hand(
        [((6, 6), L), ((6, 1), "left"), ((6, 2), "right")], rules=RuleConfig(spinner="none")
    )
    for move in [((6, 6), None), ((6, 1), "left"), ((6, 2), "right")]:
        h.play(move)
    assert h.spinner == -1 and not h.cross_open and h.open_ends() == [0, 1]


def _draw_deal(rules, boneyard_front):
    """Seat 0 leads [6|2]; seat 1 holds no 6 and no 2."""
    ts = rules.tiles
    front = [ts.index(*t) for t in boneyard_front]
    lead = ts.index(6, 2)
    no62 = [i for i, t in enumerate(ts.tiles) if 6 not in t and 2 not in t and i not in front]
    seat1 = no62[: rules.hand_size]
    rest = [i for i in range(ts.num_tiles) if i not in seat1 and i not in front and i != lead]
    seat0 = [lead] + rest[: rules.hand_size - 1]
    bone = front + rest[rules.hand_size - 1 :]
    tiles = ts.tiles
    return HandState.from_tiles(
        rules,
        [[tiles[i] for i in seat0], [tiles[i] for i in seat1]],
        [tiles[i] for i in bone],
        leader=0,
    )


def test_drawing_until_playable():
    hand = _draw_deal(RuleConfig(), [(0, 1), (3, 4), (2, 5)])
    hand.play(((6, 2), None))
    assert hand.history[-1] == ("draw", 1, 3)
    assert hand.turn == 1
    assert [str(m) for m in hand.legal_moves] == ["[2|5]@right"]
    assert hand.known_lacks[1] == (1 << 6 | 1 << 2)  # it lacked both end values


def test_drawing_with_boneyard_reserve_passes():
    # double-nine, 2 players x 26 tiles: a boneyard of exactly three tiles
    rules = RuleConfig(max_pip=9, hand_size=26, boneyard_reserve=2)
    assert rules.boneyard_size == 3
    hand = _draw_deal(rules, [(0, 1), (3, 4), (2, 5)])
    hand.play(((6, 2), None))
    assert hand.history[1:3] == [("draw", 1, 1), ("pass", 1)]
    assert hand.hands[1] >> rules.tiles.index(0, 1) & 1
    assert hand.drawable == 0 and hand.boneyard_left == 2
    assert hand.turn == 0


def test_domino_award_example():
    # seat 0 leads [5|5] (10), seat 1 cannot play nor draw and passes, seat 0 goes out with
    # [5|0] (count 10) and scores the opponent's [4|4] + [1|0] = 9 pips, rounded to 10.
    rules = RuleConfig(hand_size=2, boneyard_reserve=24)
    hand = HandState.from_tiles(rules, [[(5, 5), (5, 0)], [(4, 4), (1, 0)]], None, leader=0)
    assert hand.play(((5, 5), None)) == 10
    assert hand.history[-1] == ("pass", 1) and hand.turn == 0
    assert hand.play(((5, 0), "left")) == 10
    assert hand.result == ("domino", 0)
    assert hand.award == (0, 10)


def test_partnership_blocked_award_example():
    rules = RuleConfig(num_players=4, max_pip=9, hand_size=2, boneyard_reserve=47)
    hand = HandState.from_tiles(
        rules, [[(7, 8), (2, 1)], [(8, 9), (4, 4)], [(7, 9), (6, 5)], [(9, 9), (3, 1)]], None, 0
    )
    for move in [((7, 8), None), ((8, 9), "right"), ((7, 9), "left"), ((9, 9), "right")]:
        hand.play(move)
    assert hand.result == ("blocked", None)
    assert hand.history[-4:] == [("pass", 0), ("pass", 1), ("pass", 2), ("pass", 3)]
    assert hand.side_pips() == [14, 12]
    assert hand.award == (1, 15)


def test_blocked_award_options_and_ties():
    assert blocked_award([14, 12]) == (1, 15)
    assert blocked_award([14, 12], "difference") == (1, 0)
    assert blocked_award([30, 12, 21], "difference") == (1, 25)  # 18 + 9 = 27 -> 25
    assert blocked_award([30, 12, 21]) == (1, 50)  # 51 -> 50
    assert blocked_award([12, 12, 30]) is None


@pytest.mark.parametrize(
    "pips, expected",
    [
        (0, 0),
        (1, 0),
        (2, 0),
        (3, 5),
        (4, 5),
        (5, 5),
        (6, 5),
        (7, 5),
        (8, 10),
        (9, 10),
        (10, 10),
        (11, 10),
        (12, 10),
        (13, 15),
        (14, 15),
        (15, 15),
        (16, 15),
        (17, 15),
        (18, 20),
        (19, 20),
        (20, 20),
        (21, 20),
        (22, 20),
        (23, 25),
        (24, 25),
        (25, 25),
        (26, 25),
        (27, 25),
        (28, 30),
        (29, 30),
        (30, 30),
    ],
)
def test_rounding_to_five(pips, expected):
    assert round_to_five(pips) == expected


def _blocking_play_match(win_check="immediate"):
    """Seat 0 leads [5|5] (10), seat 1 answers [5|0] (10) and nobody can play again: blocked,
    seat 0 holding 3 pips, seat 1 7 pips, so side 0 would take the award of 5."""
    from dominoes_env.core import MatchState

    rules = RuleConfig(hand_size=2, boneyard_reserve=24, win_check=win_check)
    match = MatchState(rules, auto_deal=False)
    match.start_hand(0, HandState.from_tiles(rules, [[(5, 5), (1, 2)], [(5, 0), (3, 4)]], None, 0))
    match.scores[:] = [235, 240]
    return match


def test_immediate_win_on_a_blocking_play_ignores_the_award():
    # side 1 reaches 250 with the play that also blocks the hand: the match ends at that
    # moment; unlike a domino, the blocked hand's award (5 to side 0) is not added
    match = _blocking_play_match()
    assert match.play(((5, 5), None)) == 10
    assert match.play(((5, 0), "left")) == 10
    assert match.hand.result == ("blocked", None) and match.hand.award == (0, 5)
    assert match.winner == 1 and match.scores == [245, 250]


def test_end_of_hand_win_counts_the_blocked_award():
    match = _blocking_play_match("end_of_hand")
    match.play(((5, 5), None))
    match.play(((5, 0), "left"))
    assert match.scores == [250, 250] and match.winner is None  # tied at the top: play on


def test_is_legal_agrees_with_legal_actions_and_play():
    import random

    from dominoes_env.core import MatchState

    rng = random.Random(0)
    for options in ({}, {"num_players": 4, "spinner_cross": "immediately"}, {"max_pip": 9}):
        match = MatchState(RuleConfig(**options), seed=1)
        for _ in range(300):
            if match.is_over:
                break
            hand = match.hand
            legal = set(hand.legal_actions())
            for code in range(-1, hand.rules.num_tiles * 4 + 1):
                assert hand.is_legal(code) == (code in legal), code
            illegal = next(c for c in range(hand.rules.num_tiles * 4) if c not in legal)
            with pytest.raises(IllegalMoveError):
                match.play(illegal)
            match.apply_unchecked(rng.choice(sorted(legal)))
