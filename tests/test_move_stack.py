"""One move stack (python-chess style) and the unchecked fast path guarded once play is over."""

from __future__ import annotations

import random

import pytest

from dominoes_env.core import HandState, IllegalMoveError, MatchState, Move, RuleConfig, Tile
from tests.helpers import random_positions

HANDS = [[(6, 6), (6, 3), (1, 2), (0, 0), (2, 2), (3, 3), (4, 5)],
         [(5, 5), (0, 1), (1, 1), (2, 3), (3, 4), (0, 6), (1, 6)]]


def fresh() -> HandState:
    return HandState.from_tiles(RuleConfig(), HANDS, leader=0)


def state_of(hand: HandState) -> tuple:
    """A copy of the position's facts (lists copied: they change in place)."""
    return (list(hand.hands), list(hand.history), list(hand.moves), list(hand.ends),
            list(hand.contrib), list(hand.arm), hand.turn, hand.count, hand.drawn,
            list(hand.known_lacks), hand.spinner, hand.cross_open, hand.result, hand.award)


def test_push_play_pop_takes_back_only_the_last_move():
    hand = fresh()
    hand.push(((6, 6), None))
    after_a = state_of(hand)
    hand.play(((6, 1), "left"))
    assert hand.pop() == Move(Tile(1, 6), "left")
    assert state_of(hand) == after_a
    assert hand.move_stack == [Move(Tile(6, 6), None)]
    assert hand.pop() == Move(Tile(6, 6), None)
    assert state_of(hand) == state_of(fresh()) and hand.move_stack == []
    with pytest.raises(IndexError, match="no moves played"):
        hand.pop()


def test_move_stack_lists_every_move_however_played():
    hand = fresh()
    hand.play(((6, 3), None))  # a lead given high half first keeps that orientation
    hand.apply_unchecked(hand.legal_actions()[0])
    hand.push(hand.legal_moves[0])
    stack = hand.move_stack
    assert len(stack) == 3 and stack[0] == Move(Tile(6, 3), None)
    assert [m.end for m in stack[1:]] == [
        ("left", "right", "up", "down")[code & 3] for _, code, _ in hand.moves[1:]]


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_pop_restores_every_position_of_random_hands(num_players):
    rng = random.Random(num_players)
    rules = RuleConfig(num_players=num_players)
    for _ in range(10):
        hand = HandState.deal(rules, rng, leader=0)
        seen = []
        while hand.turn >= 0:
            seen.append(state_of(hand))
            hand.play(rng.choice(hand.legal_actions()))
        while seen:
            hand.pop()
            assert state_of(hand) == seen.pop()


def test_pop_on_a_state_rebuilt_from_a_view_stops_at_the_view():
    for hand, view in random_positions(RuleConfig(), 5, seed=3):
        if view.turn < 0 or view.lead < 0:
            continue
        rebuilt = HandState.from_view(view, hand.hands, hand.boneyard_tiles)
        before = state_of(rebuilt)
        rebuilt.play(rebuilt.legal_actions()[0])
        rebuilt.pop()
        assert state_of(rebuilt) == before and rebuilt.move_stack == []


def test_apply_unchecked_after_the_hand_is_over_is_refused():
    hand = fresh()
    while hand.turn >= 0:
        hand.apply_unchecked(hand.legal_actions()[0])
    with pytest.raises(IllegalMoveError, match="the hand is over"):
        hand.apply_unchecked(0)


def test_match_apply_unchecked_after_the_match_is_over_is_a_clear_error():
    match = MatchState(RuleConfig(target_score=30), seed=1)
    while not match.is_over:
        match.apply_unchecked(match.legal_actions()[0])
    scores = list(match.scores)
    with pytest.raises(IllegalMoveError, match="the match is over"):
        match.apply_unchecked(0)
    assert match.scores == scores


def test_apply_is_a_deprecated_alias():
    # the alias warns and does what apply_unchecked does: the [4|6] lead scores 10 in both
    match, twin = MatchState(seed=5), MatchState(seed=5)
    code = match.rules.tiles.index(4, 6) * 4
    with pytest.warns(DeprecationWarning, match="apply_unchecked"):
        assert match.apply(code) == twin.apply_unchecked(code) == 10
    code = match.legal_actions()[-1]
    with pytest.warns(DeprecationWarning, match="apply_unchecked"):
        assert match.hand.apply(code) == twin.hand.apply_unchecked(code)
    assert match.hand.history == twin.hand.history and match.scores == twin.scores == [0, 10]
