"""The parameter checks every layer uses (dominoes_env.core.validation: exact messages and bounds),
the rule options' boundaries (dominoes_env.core.rules) and what a seat's view shows
(dominoes_env.core.view)."""

from __future__ import annotations

import pytest

from dominoes_env.core import HandState, MatchState, Move, RuleConfig, Tile
from dominoes_env.core.validation import (
    ParameterTypeError,
    as_bool,
    as_float,
    as_int,
    is_bool,
    short_repr,
)
from dominoes_env.core.view import make_view


class Index:
    """An integer type of another library (as numpy's): it has ``__index__``."""

    def __index__(self):
        return 3


# -- checks ---------------------------------------------------------------------------------------


def test_as_int_bounds_are_inclusive_and_named():
    assert as_int("n", 2, 2, 4) == 2 and as_int("n", 4, 2, 4) == 4
    assert as_int("n", Index(), 3, 3) == 3 and type(as_int("n", Index())) is int
    assert as_int("n", -7) == -7 and as_int("n", None, optional=True) is None
    for value, low, high, allowed in [(1, 2, 4, "2..4"), (5, 2, 4, "2..4"), (0, 1, None, ">= 1"),
                                      (5, None, 4, "<= 4")]:  # fmt: skip
        with pytest.raises(ValueError, match=f"^n={value} is out of range; allowed: {allowed}$"):
            as_int("n", value, low, high)


@pytest.mark.parametrize("value, message", [
    (True, "^n=True must be an integer, not a boolean$"),
    (None, "^n=None must be an integer, not NoneType$"),
    (2.0, "^n=2.0 must be an integer, not float$"),
    ("2", "^n='2' must be an integer, not str$"),
])  # fmt: skip
def test_as_int_refuses_other_types_with_a_type_and_value_error(value, message):
    with pytest.raises(ParameterTypeError, match=message) as err:
        as_int("n", value)
    assert isinstance(err.value, TypeError) and isinstance(err.value, ValueError)


def test_as_bool():
    assert as_bool("p", True) is True and as_bool("p", False) is False
    assert as_bool("p", None, optional=True) is None
    for value, kind in [(1, "int"), (None, "NoneType"), ("yes", "str")]:
        with pytest.raises(ParameterTypeError, match=f"must be true or false, not {kind}$"):
            as_bool("p", value)
    assert is_bool(True) and not is_bool(1) and not is_bool(None)


def test_as_float_bounds_open_and_closed():
    assert as_float("x", 0, 0, 1) == 0.0 and as_float("x", 1, 0, 1) == 1.0
    assert type(as_float("x", 3)) is float and as_float("x", -2.5) == -2.5
    cases = [
        (dict(value=0, low=0, low_open=True), "^x=0.0 is out of range; allowed: > 0$"),
        (dict(value=1, high=1, high_open=True), "^x=1.0 is out of range; allowed: < 1$"),
        (dict(value=-0.5, low=0, high=1), "^x=-0.5 is out of range; allowed: >= 0 and <= 1$"),
        (dict(value=1.5, low=0, high=1), "^x=1.5 is out of range; allowed: >= 0 and <= 1$"),
        (dict(value=2, high=1), "^x=2.0 is out of range; allowed: <= 1$"),
    ]
    for kwargs, message in cases:
        value = kwargs.pop("value")
        with pytest.raises(ValueError, match=message):
            as_float("x", value, **kwargs)
    assert as_float("x", 0.5, 0, 1, low_open=True, high_open=True) == 0.5


@pytest.mark.parametrize("value, message, kind", [
    (True, "^x=True must be a number$", ParameterTypeError),
    ("1", "^x='1' must be a number$", ParameterTypeError),
    (b"1", "^x=b'1' must be a number$", ParameterTypeError),
    (None, "^x=None must be a number$", ParameterTypeError),
    (float("nan"), "^x=nan must be a finite number$", ValueError),
    (float("inf"), "^x=inf must be a finite number$", ValueError),
])  # fmt: skip
def test_as_float_refuses(value, message, kind):
    with pytest.raises(kind, match=message):
        as_float("x", value)


def test_short_repr_cuts_at_the_limit():
    assert short_repr("abc") == "'abc'"
    assert short_repr("x" * 58) == "'" + "x" * 58 + "'"  # 60 characters: kept
    assert short_repr("x" * 59) == "'" + "x" * 56 + "..."  # 61: cut to 60
    assert short_repr(list(range(30)), 10) == "[0, 1, ..."
    assert short_repr(10**5000) == "<integer of about 5000 digits>"
    assert short_repr([10**5000]) == "<list holding a huge integer>"
    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    assert short_repr(deep) == "<deeply nested list>"


# -- rule options at their boundaries -------------------------------------------------------------


def test_rule_boundaries_are_allowed():
    assert RuleConfig(num_players=4, hand_size=7).boneyard_size == 0  # exactly the 28 tiles
    assert RuleConfig(hand_size=14).boneyard_size == 0
    assert RuleConfig(boneyard_reserve=14).boneyard_size == 14
    assert RuleConfig(target_score=1).target_score == 1
    assert RuleConfig(max_pip=12, num_players=4, hand_size=22).boneyard_size == 3
    with pytest.raises(ValueError, match=r"^hand_size=15 is too large: 2 players x 15 tiles "
                                         r"exceeds the 28 tiles of the double-6 set; allowed: at "
                                         r"most 14$"):
        RuleConfig(hand_size=15)
    with pytest.raises(ValueError, match=r"^max_pip=7 is not allowed; allowed: 6, 9, 12$"):
        RuleConfig(max_pip=7)
    with pytest.raises(ValueError, match=r"^max_pip=-1 is out of range; allowed: >= 0$"):
        RuleConfig(max_pip=-1)
    with pytest.raises(ValueError, match=r"^partnerships=True is not allowed with num_players=2; "
                                         r"partnerships need exactly 4 players$"):
        RuleConfig(partnerships=True)
    with pytest.raises(ValueError, match=r"^next_leader='x' is not allowed; allowed: "
                                         r"'domino_else_random', 'rotate'$"):
        RuleConfig(next_leader="x")
    with pytest.raises(ValueError, match=r"^spinner=3 is not allowed"):
        RuleConfig(spinner=3)


def test_replace_works_on_a_config_pickled_before_defaulted_fields_were_kept():
    old = RuleConfig(num_players=4)
    object.__delattr__(old, "_defaulted")  # as an old pickle loads: no such attribute
    assert old.replace(target_score=100) == RuleConfig(num_players=4, target_score=100)
    # without the record of what was defaulted, partnerships=True is kept as given
    with pytest.raises(ValueError, match="partnerships=True is not allowed with num_players=3"):
        old.replace(num_players=3)


@pytest.mark.parametrize("field, allowed", [
    ("next_leader", "'domino_else_random', 'rotate'"),
    ("win_check", "'immediate', 'end_of_hand'"),
    ("spinner", "'first_double', 'lead_double_only', 'none'"),
    ("spinner_cross", "'after_both_sides', 'immediately'"),
    ("blocked_award", "'opponents_total', 'difference'"),
])  # fmt: skip
def test_every_choice_names_itself_and_what_is_allowed(field, allowed):
    with pytest.raises(ValueError) as err:
        RuleConfig(**{field: "nothing"})
    assert str(err.value) == f"{field}='nothing' is not allowed; allowed: {allowed}"


def test_numpy_booleans_are_booleans():
    np = pytest.importorskip("numpy")
    assert is_bool(np.True_) and is_bool(np.bool_(False))
    with pytest.raises(ParameterTypeError, match="must be an integer, not a boolean"):
        as_int("n", np.True_)
    assert as_bool("p", np.False_) is False


def test_rule_facts():
    r = RuleConfig(num_players=3, max_pip=9)
    assert (r.num_tiles, r.boneyard_size, r.num_sides, r.tiles.max_pip) == (55, 34, 3, 9)
    assert [r.side_of(s) for s in range(3)] == [0, 1, 2] and r.seats_of(2) == (2,)
    assert RuleConfig(num_players=4).seats_of(0) == (0, 2)
    assert RuleConfig.field_names() == tuple(RuleConfig().to_dict())
    assert RuleConfig.field_names()[0] == "num_players" and len(RuleConfig.field_names()) == 11
    with pytest.raises(ValueError, match=r"^rules must be an object of RuleConfig fields, got "
                                         r"list$"):
        RuleConfig.from_dict([])
    with pytest.raises(ValueError, match=r"^unknown rule option\(s\) a, b; allowed: num_players, "
                                         r"max_pip, partnerships, hand_size"):
        RuleConfig.from_dict({"b": 1, "a": 2})


# -- a seat's view --------------------------------------------------------------------------------


def test_a_view_shows_the_seat_and_the_public_facts_only():
    hand = HandState.from_tiles(RuleConfig(), [
        [(6, 6), (6, 3), (1, 2), (0, 0), (2, 2), (3, 3), (4, 5)],
        [(5, 5), (0, 1), (1, 1), (2, 3), (3, 4), (0, 6), (1, 6)]])  # fmt: skip
    ts = hand.rules.tiles
    view = hand.view(1)
    assert view.legal == () and view.legal_moves == [] and view.open_ends == ()
    assert view.side == 1 and view.hand == hand.hands[1] and view.turn == 0
    assert view.hand_tiles == ts.mask_tiles(hand.hands[1])
    assert view.unseen == ts.full_mask & ~hand.hands[1]
    hand.play(((6, 6), None))
    view = hand.view(1)
    assert view.open_ends == (0, 1) and view.turn == 1
    assert view.legal == tuple(hand.legal_actions())
    assert [str(m) for m in view.legal_moves] == ["[0|6]@left", "[1|6]@left", "[0|6]@right",
                                                  "[1|6]@right"]
    assert view.unseen == ts.full_mask & ~hand.hands[1] & ~(1 << ts.index(6, 6))
    assert view.hand_sizes == (6, 7) and view.boneyard_left == 14 and view.drawable == 14
    assert (view.lead, view.lead_pips, view.count, view.spinner) == (27, 12, 12, 27)
    assert view.ends == (6, 6, 6, 6) and view.contrib == (12, 12, 0, 0)
    assert view.spinner_free == (True, True) and view.spinner_sides == 0
    assert view.arm == (0, 0, 0, 0) and not view.cross_open
    assert view.history == (("play", 0, 108, 0),) and view.known_lacks == (0, 0)
    assert view.played == 1 << 27 and view.leader == 0
    assert (view.result, view.award, view.scores, view.winner) == (None, None, (0, 0), None)
    assert hand.view(0).legal == () and hand.view(0).hand_tiles[0] == Tile(0, 0)
    with pytest.raises(ValueError, match=r"seat=2 is out of range; allowed: 0\.\.1"):
        hand.view(2)
    with pytest.raises(ValueError, match=r"seat=-1 is out of range"):
        make_view(hand, -1, (0, 0), 250, 0, None)


def test_a_view_has_no_legal_moves_once_the_match_is_won():
    match = MatchState(RuleConfig(target_score=5), seed=0)
    while not match.is_over:
        match.play(match.legal_actions()[0])
    hand = match.hand
    assert match.view(hand.turn if hand.turn >= 0 else 0).legal == ()
    assert match.view(0).winner == match.winner and match.view(0).scores == tuple(match.scores)


def test_a_view_answers_the_questions_a_state_does():
    """A view had ``legal`` and ``legal_moves`` only: code written against a state
    (``legal_actions()``, ``is_legal``, ``move_of``) did not run on a view."""
    hand = HandState.from_tiles(RuleConfig(), [
        [(6, 6), (6, 3), (1, 2), (0, 0), (2, 2), (3, 3), (4, 5)],
        [(5, 5), (0, 1), (1, 1), (2, 3), (3, 4), (0, 6), (1, 6)]])  # fmt: skip
    hand.play(((6, 6), None))
    mover, other = hand.view(1), hand.view(0)
    assert mover.legal_actions() == hand.legal_actions() and other.legal_actions() == []
    for code in range(hand.rules.num_tiles * 4):
        assert mover.is_legal(code) == hand.is_legal(code), code
        assert not other.is_legal(code)  # not seat 0's turn
        assert mover.move_of(code) == other.move_of(code) == hand.move_of(code)
    for move in hand.legal_moves:
        assert mover.is_legal(move) and mover.is_legal(tuple(move)) and not other.is_legal(move)
    assert mover.is_legal(((6, 0), "right")) and not mover.is_legal(((1, 1), "left"))
    assert not mover.is_legal(((1, 6), "middle")) and not mover.is_legal(((5, 5), None))
    with pytest.raises(TypeError, match="a move is a"):
        other.is_legal("left")  # no move at all, whoever's turn it is
    with pytest.raises(ValueError, match=r"code=112 is out of range"):
        mover.move_of(112)
    lead = HandState.from_tiles(RuleConfig(), [[(6, 6), (6, 3), (1, 2), (0, 0), (2, 2), (3, 3),
                                                (4, 5)], [(5, 5), (0, 1), (1, 1), (2, 3), (3, 4),
                                                          (0, 6), (1, 6)]]).view(0)
    # a code names a tile whoever holds it: nothing hidden is read
    assert lead.move_of(hand.rules.tiles.index(5, 5) * 4) == Move(Tile(5, 5), None)
    assert lead.is_legal(((6, 6), None)) and not lead.is_legal(((5, 5), None))


def test_a_view_prints_as_its_hand_and_draws_in_jupyter():
    """``str(view)`` was a 700-character dataclass repr of raw bitmasks, and Jupyter had no
    picture of a view (a hand and a match have both)."""
    from dominoes_env.render.ansi import render_ansi
    from dominoes_env.render.svg import layout_svg

    match = MatchState(seed=1)
    match.scores[:] = [15, 5]
    match.play(match.legal_actions()[0])
    mover, other = match.view(match.turn), match.view(1 - match.turn)
    lines = str(mover).splitlines()
    picture = render_ansi(mover, (15, 5), hand_number=0).splitlines()
    assert lines[:len(picture)] == picture and "scores to 250: side 0 15 · side 1 5" in lines
    assert lines[-2] == f"seat {mover.seat}'s tiles: " + " ".join(map(str, mover.hand_tiles))
    assert lines[-1] == "legal moves: " + ", ".join(map(str, mover.legal_moves))
    assert str(other).splitlines()[-1].startswith(f"seat {other.seat}'s tiles: ")  # no moves
    assert str(other).splitlines()[:len(picture)] == picture  # the same public picture
    for view in (mover, other):
        text = repr(view)
        assert len(text) < 120 and text.startswith(f"<SeatView seat={view.seat} turn=")
        assert f"{len(view.legal)} legal>" in text and str(view.hand) not in text
    assert mover._repr_svg_() == layout_svg(mover, (15, 5), hand_number=0)
    assert "<svg" in mover._repr_svg_()


def test_a_view_of_a_match_won_mid_hand_says_who_won_not_whose_turn():
    """A match won mid-hand leaves the hand's turn as it was (``match.turn`` is -1): the repr
    showed that seat's turn as if the match went on."""
    from dominoes_env.core import MatchState

    for seed in range(40):
        match = MatchState(seed=seed)
        match.scores[:] = [245, 245]
        scoring = [c for c in match.legal_actions() if match.hand.points_after(c) > 0]
        if scoring:
            break
    match.play(scoring[0])
    assert match.winner is not None and match.turn == -1 and match.hand.turn >= 0
    for seat in range(2):
        text = repr(match.view(seat))
        assert text.startswith(f"<SeatView seat={seat} won by side {match.winner} ")
        assert "turn=" not in text and text.endswith("0 legal>")
