"""``refit_hand`` / ``sample_hand_history``: a guess of the hidden tiles with a whole history of
deals and draws that makes the same moves, draws and passes happen (what OpenSpiel's
``resample_from_infostate`` is built on)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dominoes_env.core import HandState, RuleConfig, tile_set
from dominoes_env.core.hidden_history import refit_hand, sample_hand_history

TABLES = [RuleConfig(), RuleConfig(num_players=3), RuleConfig(num_players=4),
          RuleConfig(num_players=4, partnerships=False), RuleConfig(boneyard_reserve=6),
          RuleConfig(max_pip=9, hand_size=10, spinner_cross="immediately")]


def _hand_after(rules: RuleConfig, seed: int, moves: int):
    """A dealt hand, its copy as dealt, and up to ``moves`` random moves (never its end)."""
    rng = random.Random(seed)
    hand = HandState.deal(rules, rng, leader=rng.randrange(rules.num_players))
    start, codes = hand.copy(), []
    for _ in range(moves):
        code = rng.choice(hand.legal_actions())
        probe = hand.copy()
        probe.apply_unchecked(code)
        if probe.is_over:
            break
        hand.apply_unchecked(code)
        codes.append(code)
    return start, codes, hand


def _replay(rules, start, hands, drawn, codes):
    """The hand dealt ``hands``, drawing ``drawn`` first, after ``codes``."""
    held = set(drawn)
    for h in hands:
        held |= {t for t in range(rules.num_tiles) if h >> t & 1}
    rest = [t for t in range(rules.num_tiles) if t not in held]
    hand = HandState(rules, hands, drawn + rest, start.leader)
    for code in codes:
        hand.apply_unchecked(code)
    return hand


@settings(max_examples=60, deadline=None)
@given(table=st.sampled_from(range(len(TABLES))), seed=st.integers(0, 10**6),
       moves=st.integers(0, 45), other=st.booleans(), guess=st.integers(0, 10**6))
def test_a_sampled_history_replays_to_what_the_seat_saw(table, seed, moves, other, guess):
    rules = TABLES[table]
    start, codes, hand = _hand_after(rules, seed, moves)
    seat = (hand.turn + other) % rules.num_players  # the seat to play, or the next one
    view = hand.view(seat)
    rng = random.Random(guess)
    hands_now, hands, drawn = sample_hand_history(start, codes, view, rng)
    again = _replay(rules, start, hands, drawn, codes)
    assert again.history == hand.history  # the same moves, draws and passes
    assert again.hands == hands_now and again.view(seat) == view  # the seat sees the same
    assert hands[seat] == start.hands[seat]  # its own deal and draws as they were
    own = [t for t, ev in zip(drawn, _draw_seats(hand), strict=True) if ev == seat]
    seats = _draw_seats(hand)
    assert own == [t for t, s in zip(start.boneyard[:len(seats)], seats, strict=True) if s == seat]
    # the true tiles always have a history
    assert refit_hand(start, codes, seat, hand.hands, rng) is not None


def _draw_seats(hand: HandState) -> list[int]:
    """The seat that drew each tile drawn so far, in order."""
    return [ev[1] for ev in hand.history if ev[0] == "draw" for _ in range(ev[2])]


def test_guesses_differ_and_stay_in_the_unseen_tiles():
    rules = RuleConfig(num_players=3)
    start, codes, hand = _hand_after(rules, 4, 6)
    view = hand.view(hand.turn)
    rng = random.Random(0)
    guesses = {tuple(sample_hand_history(start, codes, view, rng)[0]) for _ in range(40)}
    assert len(guesses) > 30
    for hands in guesses:
        assert hands[view.seat] == view.hand
        hidden = 0
        for s, h in enumerate(hands):
            if s != view.seat:
                assert h.bit_count() == view.hand_sizes[s] and not h & hidden
                hidden |= h
        assert not hidden & ~view.unseen


def test_the_histories_of_a_forced_draw():
    """Seat 1 had no 6 for [6|6], drew [2|4] then [0|6] and played it. Seen from seat 0, the
    last tile drawn is the [0|6] it played; the first is any of its tiles now (none has a 6)."""
    ts = tile_set(6)
    rules = RuleConfig()
    seat0 = [(6, 6), (6, 3), (1, 2), (0, 0), (2, 2), (3, 3), (4, 5)]
    seat1 = [(5, 5), (0, 1), (1, 1), (2, 3), (3, 4), (0, 5), (1, 5)]
    hands = [sum(1 << ts.index(a, b) for a, b in h) for h in (seat0, seat1)]
    dealt = {ts.index(a, b) for h in (seat0, seat1) for a, b in h}
    first = [ts.index(2, 4), ts.index(0, 6)]
    rest = [t for t in range(28) if t not in dealt and t not in first]
    start = HandState(rules, hands, first + rest, 0)
    codes = [ts.index(6, 6) * 4, ts.index(0, 6) * 4]
    hand = start.copy()
    for code in codes:
        hand.apply_unchecked(code)
    assert [ev[0] for ev in hand.history] == ["play", "draw", "play"]
    firsts = set()
    for seed in range(40):
        got_hands, drawn = refit_hand(start, codes, 0, hand.hands, random.Random(seed))
        assert got_hands[0] == hands[0] and len(drawn) == 2 and drawn[1] == ts.index(0, 6)
        assert got_hands[1] | 1 << drawn[0] == hand.hands[1]
        firsts.add(drawn[0])
    assert firsts == {t for t in range(28) if hand.hands[1] >> t & 1}  # 8 tiles, all can be
    # a guess in which seat 1 holds a 6 it would have played cannot have happened
    swapped = list(hand.hands)
    six, low = ts.index(4, 6), ts.index(5, 5)
    assert swapped[1] >> low & 1 and not swapped[0] >> six & 1
    swapped[1] = swapped[1] & ~(1 << low) | 1 << six
    assert refit_hand(start, codes, 0, swapped, random.Random(1)) is None


def test_the_seat_to_play_must_hold_a_playable_tile():
    rules = RuleConfig()
    start, codes, hand = _hand_after(rules, 11, 3)
    viewer = 1 - hand.turn
    guess = list(hand.hands)
    # give the seat to play only tiles it cannot play, from the boneyard
    dead = [t for t in range(rules.num_tiles)
            if not (hand.open_mask >> t & 1) and not hand.played >> t & 1
            and not guess[viewer] >> t & 1]
    guess[hand.turn] = sum(1 << t for t in dead[:guess[hand.turn].bit_count()])
    assert refit_hand(start, codes, viewer, guess, random.Random(0)) is None


def test_bad_arguments_are_named():
    rules = RuleConfig()
    start, codes, hand = _hand_after(rules, 2, 4)
    with pytest.raises(ValueError, match="all 2 seats"):
        refit_hand(start, codes, 0, hand.hands[:1], random.Random(0))
    wrong = list(hand.hands)
    wrong[0] ^= 1 << next(t for t in range(28) if not hand.hands[0] >> t & 1)
    with pytest.raises(ValueError, match="own tiles"):
        refit_hand(start, codes, 0, wrong, random.Random(0))
