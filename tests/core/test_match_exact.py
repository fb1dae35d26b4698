"""A match (docs/rules.md, "A match" and "End of a hand"): who scores, when the match ends under
each ``win_check``, who leads the next hand, and what ``MatchState`` shows, with exact values."""

from __future__ import annotations

import os
import random

import pytest

from dominoes_env.core import (
    Award,
    HandState,
    IllegalMoveError,
    MatchState,
    Move,
    NoHandError,
    RuleConfig,
    Tile,
)

# two players, two tiles each, the whole boneyard in reserve: nobody ever draws
TWO = dict(hand_size=2, boneyard_reserve=24)
# seat 0 leads [5|5] (10), seat 1 cannot play and passes, seat 0 goes out with [5|0] (10);
# seat 1 still holds [4|4] + [1|0] = 9 pips: the domino is worth 10
DOMINO_DEAL = [[(5, 5), (5, 0)], [(4, 4), (1, 0)]]
# seat 0 leads [5|5] (10), seat 1 answers [5|0] (10), then nobody can play: blocked, seat 0
# holds 3 pips and seat 1 7, so side 0 takes 7 -> 5
BLOCKED_DEAL = [[(5, 5), (1, 2)], [(5, 0), (3, 4)]]


def match_on(deal, scores=None, leader=0, auto_deal=False, seed=None, **options):
    rules = RuleConfig(**{**TWO, **options})
    match = MatchState(rules, seed=seed, auto_deal=auto_deal)
    match.start_hand(leader, HandState.from_tiles(rules, deal, None, leader))
    if scores is not None:
        match.scores[:] = scores
    return match


@pytest.mark.parametrize("win_check", ["immediate", "end_of_hand"])
def test_a_domino_adds_the_play_then_the_award(win_check):
    match = match_on(DOMINO_DEAL, win_check=win_check)
    assert match.play(((5, 5), None)) == 10
    assert match.play(((5, 0), "left")) == 10  # the award is not part of the play's points
    assert match.scores == [30, 0]
    assert match.awards == [Award(0, 10)] and match.hand_scores == [[30, 0]]
    assert match.winner is None and match.finished_hands[0].result == ("domino", 0)


def test_immediate_a_last_tile_that_reaches_the_target_still_adds_the_award():
    match = match_on(DOMINO_DEAL, scores=[235, 0])
    match.play(((5, 5), None))
    assert match.scores == [245, 0] and not match.is_over
    match.play(((5, 0), "left"))
    assert match.scores == [265, 0] and match.winner == 0
    assert match.awards == [(0, 10)] and match.hand_scores == [[265, 0]]


def test_immediate_the_match_ends_in_the_middle_of_a_hand():
    match = match_on(DOMINO_DEAL, scores=[240, 0])
    assert match.play(((5, 5), None)) == 10
    assert match.winner == 0 and match.is_over and match.scores == [250, 0]
    assert match.hand.turn == 0 and match.turn == -1  # the hand did not finish
    assert match.legal_actions() == [] and match.legal_moves == []
    assert match.finished_hands == [] and match.awards == [] and match.hand_scores == []
    with pytest.raises(IllegalMoveError, match=r"the match is over \(won by side 0\)") as err:
        match.play(((5, 0), "left"))
    assert err.value.move == ((5, 0), "left")
    with pytest.raises(IllegalMoveError, match=r"the match is over \(won by side 0\)"):
        match.apply_unchecked(match.rules.tiles.index(0, 5) * 4)


def test_end_of_hand_a_play_at_the_target_finishes_the_hand_first():
    match = match_on(DOMINO_DEAL, scores=[240, 0], win_check="end_of_hand")
    match.play(((5, 5), None))
    assert match.scores == [250, 0] and match.winner is None and match.turn == 0
    match.play(((5, 0), "left"))
    assert match.scores == [270, 0] and match.winner == 0


def test_end_of_hand_the_highest_score_over_the_target_wins():
    match = match_on(BLOCKED_DEAL, scores=[200, 245], win_check="end_of_hand")
    match.play(((5, 5), None))
    match.play(((5, 0), "left"))  # side 1: 255; blocked, side 0 takes 5: 215
    assert match.scores == [215, 255] and match.winner == 1


def test_a_blocked_hand_gives_its_award_and_a_random_leader():
    match = match_on(BLOCKED_DEAL, auto_deal=True, seed=11)
    twin = random.Random()
    twin.setstate(match.rng.getstate())
    match.play(((5, 5), None))
    match.play(((5, 0), "left"))
    first = match.finished_hands[0]
    assert first.result == ("blocked", None) and first.award == (0, 5)
    assert match.scores == [15, 10] and match.awards == [(0, 5)]
    # the next leader is drawn first, then the deal is shuffled, from the match's generator
    leader = twin.randrange(2)
    expected = HandState.deal(match.rules, twin, leader)
    assert match.hand.leader == leader and match.hand.hands == expected.hands
    assert match.hand.boneyard == expected.boneyard and match.hand_number == 2


@pytest.mark.parametrize("next_leader, leader", [("domino_else_random", 1), ("rotate", 0)])
def test_who_leads_after_a_domino(next_leader, leader):
    # seat 1 leads and goes out: it leads again, unless the lead rotates to seat 0
    deal = [DOMINO_DEAL[1], DOMINO_DEAL[0]]
    match = match_on(deal, leader=1, auto_deal=True, seed=2, next_leader=next_leader)
    assert match.next_leader() == (0 if next_leader == "rotate" else None)
    match.play(((5, 5), None))
    match.play(((5, 0), "left"))
    assert match.scores == [0, 30]
    assert match.hand.leader == leader and match.hand_number == 2  # its own deal was hand 0
    assert match.hand is not match.finished_hands[0]


def test_rotate_moves_the_lead_after_a_blocked_hand_too():
    match = match_on(BLOCKED_DEAL, leader=0, auto_deal=True, seed=2, next_leader="rotate")
    assert match.next_leader() == 1
    match.play(((5, 5), None))
    match.play(((5, 0), "left"))
    assert match.hand.leader == 1


# four seats, one tile each, nothing to draw: whoever leads goes out at once
FOUR_DEAL = [[(5, 5)], [(5, 0)], [(6, 6)], [(4, 3)]]
FOUR = dict(num_players=4, hand_size=1, boneyard_reserve=24)


@pytest.mark.parametrize("leader, scores", [
    (0, [20, 0]),  # 10 for the lead; seats 1 and 3 hold 5 + 7 = 12 -> 10 (seat 2's 12 ignored)
    (1, [0, 25]),  # 5 for the lead; seats 0 and 2 hold 10 + 12 = 22 -> 20 (seat 3's 7 ignored)
    (3, [0, 20]),  # [4|3] scores nothing; seats 0 and 2: 22 -> 20
])  # fmt: skip
def test_partnerships_score_by_side_and_ignore_the_partners_pips(leader, scores):
    match = match_on(FOUR_DEAL, leader=leader, **FOUR)
    match.play((FOUR_DEAL[leader][0], None))
    assert match.scores == scores and match.finished_hands[0].result == ("domino", leader)


def test_without_partnerships_every_opponent_pays():
    match = match_on(FOUR_DEAL, partnerships=False, **FOUR)
    match.play(((5, 5), None))
    assert match.awards == [(0, 25)]  # 5 + 12 + 7 = 24 -> 25
    assert match.scores == [35, 0, 0, 0]


def test_a_tied_block_adds_no_award():
    # seat 0 leads [5|5] and seat 1 answers [5|0]; both keep 4 pips: nobody scores the block
    match = match_on([[(5, 5), (1, 3)], [(5, 0), (2, 2)]])
    match.play(((5, 5), None))
    match.play(((5, 0), "left"))
    assert match.finished_hands[0].award is None
    assert match.awards == [None] and match.scores == [10, 10] and match.hand_scores == [[10, 10]]


def test_hand_scores_are_copies():
    match = match_on(DOMINO_DEAL)
    match.play(((5, 5), None))
    match.play(((5, 0), "left"))
    match.hand_scores[0][0] = 999
    assert match.hand_scores == [[30, 0]]


def test_the_view_carries_the_match():
    match = match_on(DOMINO_DEAL, scores=[15, 5])
    view = match.view(0)
    assert (view.scores, view.target_score, view.hand_number, view.winner) == ((15, 5), 250, 0,
                                                                               None)
    assert view.legal == tuple(match.legal_actions()) and match.view(1).legal == ()
    match.scores[:] = [240, 0]
    match.play(((5, 5), None))
    assert match.view(1).legal == () and match.view(1).winner == 0


def test_a_match_answers_is_legal_and_move_of_as_its_hand():
    """``MatchState`` had ``legal_actions`` and ``legal_moves`` but no ``is_legal`` or
    ``move_of``, so code written against a hand did not run on a match."""
    match = match_on(DOMINO_DEAL)
    hand, ts = match.hand, match.rules.tiles
    for code in range(ts.num_tiles * 4):
        assert match.is_legal(code) == hand.is_legal(code) == (code in match.legal_actions())
        assert match.move_of(code) == hand.move_of(code)
    assert match.is_legal(Move(Tile(5, 5), None)) and match.is_legal(((0, 5), None))
    assert not match.is_legal(((4, 4), None)) and not match.is_legal(((5, 5), "left"))
    assert [match.move_of(c) for c in match.legal_actions()] == match.legal_moves
    with pytest.raises(TypeError, match="a move is a"):
        match.is_legal("left")
    with pytest.raises(ValueError, match=r"code=112 is out of range; allowed: 0\.\.111"):
        match.move_of(112)
    match.scores[:] = [240, 0]
    match.play(((5, 5), None))  # side 0 reaches 250: the match is over, its hand is not
    code = match.hand.legal_actions()[0]
    assert match.is_over and match.hand.is_legal(code) and not match.is_legal(code)
    assert not match.is_legal(((0, 5), "left")) and match.legal_actions() == []
    with pytest.raises(TypeError, match="a move is a"):  # a wrong type whatever the state
        match.is_legal(1.5)


def test_a_match_without_a_hand_says_deal_one_first():
    match = MatchState(auto_deal=False)
    for call in (lambda: match.is_legal(0), lambda: match.move_of(0), match.legal_actions):
        with pytest.raises(NoHandError, match=r"call start_hand\(leader\) first"):
            call()


def test_no_hand_error_is_exported_with_the_other_errors():
    """``NoHandError``, which a caller of ``MatchState(auto_deal=False)`` must catch, was
    importable only from ``dominoes_env.core.errors``."""
    import dominoes_env
    import dominoes_env.core as core
    from dominoes_env.core import errors

    assert core.NoHandError is errors.NoHandError is dominoes_env.NoHandError
    assert "NoHandError" in core.__all__ and "NoHandError" in dominoes_env.__all__
    assert issubclass(NoHandError, RuntimeError) and issubclass(NoHandError, ValueError)


def test_construction_options_and_errors():
    assert MatchState(seed=1, num_players=3).rules == RuleConfig(num_players=3)
    assert MatchState(RuleConfig(num_players=4), seed=1, num_players=2).rules.partnerships is False
    with pytest.raises(TypeError, match=r"^rules must be a RuleConfig \(or None\), not dict; build "
                                        r"one with RuleConfig\(\*\*fields\) or "
                                        r"RuleConfig\.from_dict\(d\)$"):
        MatchState({"num_players": 2})
    with pytest.raises(TypeError, match="seed"):
        MatchState(seed="7")
    m = MatchState(auto_deal=False)
    assert m.hand is None and m.hand_number == 0 and m.scores == [0, 0]
    # the first leader is drawn from the seeded generator, then the deal
    m, twin = MatchState(seed=5), random.Random(5)
    leader = twin.randrange(2)
    assert m.hand.leader == leader
    assert m.hand.hands == HandState.deal(m.rules, twin, leader).hands


def test_strings():
    match = match_on(DOMINO_DEAL, scores=[15, 5])
    assert repr(match) == "<MatchState scores=[15, 5] hand=0 winner=None>"
    assert str(match).splitlines()[0] == "Match to 250, scores [15, 5], hand 0"
    assert str(match).splitlines()[1:] == str(match.hand).splitlines()
    match.scores[:] = [240, 0]
    match.play(((5, 5), None))
    assert str(match).startswith("Match to 250, scores [250, 0], won by side 0\n")
    assert repr(match) == "<MatchState scores=[250, 0] hand=0 winner=0>"


def test_pictures_in_jupyter():
    from dominoes_env.render.svg import layout_svg, match_svg

    match = match_on(DOMINO_DEAL, scores=[15, 5])
    match.play(((5, 5), None))
    assert match._repr_svg_() == match_svg(match) and "<svg" in match._repr_svg_()
    assert match.hand._repr_svg_() == layout_svg(match.hand)


def test_apply_is_deprecated():
    match = match_on(DOMINO_DEAL)
    message = r"^MatchState\.apply is renamed apply_unchecked \(it does not check the move\)$"
    with pytest.warns(DeprecationWarning, match=message):
        assert match.apply(match.rules.tiles.index(5, 5) * 4) == 10
    assert match.scores == [10, 0]


@pytest.mark.skipif("MUTANT_UNDER_TEST" in os.environ,
                    reason="under mutation testing, mutmut's trampolines add a stack frame")
def test_the_deprecation_warning_points_at_the_caller():
    match = match_on(DOMINO_DEAL)
    with pytest.warns(DeprecationWarning) as caught:
        match.apply(match.rules.tiles.index(5, 5) * 4)
    assert caught[0].filename == __file__
