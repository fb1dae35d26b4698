"""Bad arguments to the core's public classes (docs/api/core.md) are refused with a
``ValueError``/``TypeError`` naming them: they hung (``TileSet(10**30)``), answered for another
tile or seat (a negative code or seat read the tables from their end), or ended in
``AttributeError``/``IndexError``."""

from __future__ import annotations

import random

import pytest

from dominoes_env.core import (
    DealSampler,
    HandState,
    MatchState,
    RuleConfig,
    TileSet,
    determinize,
    iter_bits,
    tile_set,
)
from dominoes_env.core.hidden_history import refit_hand, sample_hand_history

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def hand():
    return HandState.deal(RuleConfig(), random.Random(1), 0)


@pytest.mark.parametrize("max_pip", [-1, 13, 10**30, True, 6.0, None])
def test_a_tile_set_is_one_of_the_supported_sizes(max_pip):
    with pytest.raises((ValueError, TypeError), match="max_pip="):
        TileSet(max_pip)


@pytest.mark.parametrize("mask", [-1, 1 << 28, None, True, 1.0])
def test_mask_tiles_and_mask_pips_refuse_what_is_no_set_of_tiles(mask):
    ts = RuleConfig().tiles
    for method in (ts.mask_tiles, ts.mask_pips):
        with pytest.raises((ValueError, TypeError), match="mask="):
            method(mask)
    assert ts.mask_tiles(0b11) == [ts.tiles[0], ts.tiles[1]] and ts.mask_pips(0b11) == 1


@pytest.mark.parametrize("code", [-1, -112, 112, 10**30, None, 4.0])
def test_a_code_outside_the_set_is_refused_not_read_from_the_tables_end(hand, code):
    for method in (hand.points_after, hand.count_after, hand.move_of):
        with pytest.raises((ValueError, TypeError), match="code="):
            method(code)


def test_points_after_still_answers_every_code_of_the_set(hand):
    code = hand.legal_actions()[0]
    assert hand.points_after(code) == 0 and hand.count_after(code) == hand.tile_pips[code >> 2]
    assert hand.move_of(111).tile == hand.rules.tiles.tiles[27]


@pytest.mark.parametrize("seat", [-1, 2, 10**30, True, None])
def test_hand_tiles_names_a_seat_of_the_hand(hand, seat):
    with pytest.raises((ValueError, TypeError), match="seat="):
        hand.hand_tiles(seat)
    assert hand.hand_tiles(1) == hand.rules.tiles.mask_tiles(hand.hands[1])


@pytest.mark.parametrize("rng", [None, 5, "x"])
def test_deal_needs_a_random_generator(rng):
    with pytest.raises(TypeError, match="rng=.* must be a random.Random"):
        HandState.deal(RuleConfig(), rng, 0)


def test_from_tiles_needs_rules():
    with pytest.raises(TypeError, match="rules=None must be a RuleConfig"):
        HandState.from_tiles(None, [[(0, 0)], [(1, 1)]])


def test_the_samplers_need_a_view_and_a_generator(hand):
    view, rng = hand.view(0), random.Random(0)
    for bad_view in (None, hand):
        with pytest.raises(TypeError, match="view=.* must be a SeatView"):
            determinize(bad_view, rng)
        with pytest.raises(TypeError, match="view=.* must be a SeatView"):
            DealSampler.from_view(bad_view)
        with pytest.raises(TypeError, match="view=.* must be a SeatView"):
            sample_hand_history(hand, [], bad_view, rng)
    with pytest.raises(TypeError, match="rng=None"):
        determinize(view, None)
    with pytest.raises(TypeError, match="rng=None"):
        sample_hand_history(hand, [], view, None)
    assert determinize(view, rng).hands[0] == view.hand


@pytest.mark.parametrize("code", [999, -1, None])
def test_the_history_samplers_refuse_a_code_outside_the_set(hand, code):
    view, rng = hand.view(0), random.Random(0)
    with pytest.raises((ValueError, TypeError), match="a code of codes="):
        sample_hand_history(hand, [code], view, rng)
    with pytest.raises((ValueError, TypeError), match="a code of codes="):
        refit_hand(hand, [code], 0, hand.hands, rng)
    with pytest.raises(TypeError, match="start=None must be a HandState"):
        refit_hand(None, [], 0, hand.hands, rng)


def test_iter_bits_refuses_a_negative_mask():
    """A negative mask has bits without end: the loop never ended."""
    with pytest.raises(ValueError, match=r"mask=-1 is negative"):
        list(iter_bits(-1))
    assert list(iter_bits(0b1010)) == [1, 3]


@pytest.mark.parametrize("args, problem", [
    ((-1, {1: 0}, 1), r"unseen=-1 is out of range"),  # IndexError from the tables
    ((1 << 40 | 1 << 41, {1: 1}, 1), r"unseen=\d+ is out of range; allowed: 0..268435455"),
    ((7.0, {1: 1}, 2), r"unseen=7.0 must be an integer"),  # AttributeError
    ((0b111, [1], 2), r"sizes=\[1\] must be a mapping"),  # AttributeError
    ((0b111, {-1: 1}, 2), r"a seat of sizes=-1 is out of range"),
    ((0b111, {1: 1.0}, 2), r"sizes\[1\]=1.0 must be an integer"),
    ((0b111, {1: 1}, 2.0), r"boneyard_size=2.0 must be an integer"),  # dealt as 2
    ((0b111, {1: 2}, True), r"boneyard_size=True must be an integer, not a boolean"),
])
def test_deal_sampler_checks_its_arguments(args, problem):
    with pytest.raises((ValueError, TypeError), match=problem):
        DealSampler(tile_set(6), *args)


def test_deal_sampler_checks_lacks_tiles_and_the_generator():
    ts = tile_set(6)
    with pytest.raises(ValueError, match=r"lacks names seat 7, which is not a seat of sizes"):
        DealSampler(ts, 0b111, {1: 1}, 2, lacks={7: 1})  # was ignored
    with pytest.raises(ValueError, match=r"lacks\[1\]=128 is out of range; allowed: 0..127"):
        DealSampler(ts, 0b111, {1: 1}, 2, lacks={1: 128})
    with pytest.raises(TypeError, match=r"tiles=None must be a TileSet"):
        DealSampler(None, 0b111, {1: 1}, 2)
    unseen = 1 << ts.index(0, 0) | 1 << ts.index(0, 1) | 1 << ts.index(2, 3)
    sampler = DealSampler(ts, unseen, {1: 1}, 2, lacks={1: 0b1})  # seat 1 holds no 0
    with pytest.raises(TypeError, match=r"rng=None must be a random.Random"):
        sampler.sample(None)  # AttributeError: no 'randrange'
    with pytest.raises(ValueError, match=r"group 5 with needs \(1,\) is no state the walk"):
        sampler.splits(5, (1,))  # a KeyError naming the pair
    assert sampler.sample(random.Random(0))[0] == {1: 1 << ts.index(2, 3)}
    view = MatchState(seed=1).view(0)
    with pytest.raises(TypeError, match=r"sampler='x' must be a DealSampler or None"):
        determinize(view, random.Random(0), "x")


@pytest.mark.parametrize("call", [
    lambda r: r.side_of(2), lambda r: r.side_of(-1), lambda r: r.side_of("x"),
    lambda r: r.side_of(1.0), lambda r: r.seats_of(2), lambda r: r.relative_seats(7),
    lambda r: r.relative_sides(-1), lambda r: r.relative_seats(None),
])
def test_the_seat_questions_of_the_rules_name_a_seat_they_have(call):
    """Seat 99 was side 99, "x" side "x", side 99 had no seats, and seat 7 of two was read
    as seat 1."""
    with pytest.raises((ValueError, TypeError), match=r"^(seat|side)=.* (is out of range; "
                                                      r"allowed: 0..1|must be an integer)"):
        call(RuleConfig())


def test_the_seat_questions_answer_every_seat():
    four, three = RuleConfig(num_players=4), RuleConfig(num_players=3)
    assert [four.side_of(s) for s in range(4)] == [0, 1, 0, 1]
    assert [three.side_of(s) for s in range(3)] == [0, 1, 2]
    assert four.seats_of(1) == (1, 3) and three.relative_sides(2) == (2, 0, 1)


@pytest.mark.parametrize("hands, boneyard, problem", [
    ([-1, 0b1111111 << 7], list(range(14, 28)), r"hands\[0\]=-1 is out of range"),  # hung
    ([0b1111111, 0b1111111], list(range(7, 28)), r"tile \[0\|6\] is dealt twice"),
    ([1, 2, 4], [], r"hands must be 2 bitmasks, one per seat"),  # a third hand was played
    ([0b1111111, 0b1111111 << 7], [99], r"a boneyard tile=99 is out of range"),
    ([0b1111111, 0b1111111 << 7], list(range(14, 27)), r"missing: \[6\|6\]"),
    ([0b111, 0b111 << 3], list(range(6, 28)), r"seat 0 was dealt 3 tiles; hand_size is 7"),
    ([1.0, 2], [], r"hands\[0\]=1.0 must be an integer"),
    ([0b1111111, 0b1111111 << 7], "abc", r"boneyard must be a list of tile indices"),
])
def test_the_low_level_constructor_checks_its_deal(hands, boneyard, problem):
    with pytest.raises((ValueError, TypeError), match=problem):
        HandState(RuleConfig(), hands, boneyard, 0)


def test_the_low_level_constructor_takes_every_deal_and_leader_after_a_hand():
    from dominoes_env.core import leader_after

    dealt = HandState.deal(RuleConfig(), random.Random(3), 1)
    again = HandState(dealt.rules, *dealt.dealt, 1)
    assert again.legal_actions() == dealt.legal_actions() and again.dealt == dealt.dealt
    with pytest.raises(TypeError, match=r"^leader_after needs a HandState .*, not NoneType"):
        leader_after(None)  # an AttributeError


def test_from_view_takes_only_a_guess_that_fits_the_view():
    """Hands holding tiles of the layout, a hand short of its tiles and a boneyard of one
    tile repeated were played out as a position; a view of None was an AttributeError."""
    match = MatchState(RuleConfig(), seed=2)
    rng = random.Random(0)
    for _ in range(4):
        match.play(rng.choice(match.legal_actions()))
    view = match.view(match.turn)
    hands, bone = DealSampler.from_view(view).sample(random.Random(1))
    other = 1 - view.seat
    for change, problem in [
        (lambda h, b: h.__setitem__(other, h[other] | view.played), r"seat 1 holds 9 tiles"),
        (lambda h, b: h.__setitem__(other, 0), r"seat 1 holds 0 tiles; the view says 5"),
        (lambda h, b: b.__setitem__(0, b[1]), r"the boneyard holds \[\d\|\d\], seen elsewhere"),
        (lambda h, b: h.__setitem__(other, -1), r"hands\[1\]=-1 is out of range"),
        (lambda h, b: b.__setitem__(0, 99), r"a boneyard tile=99 is out of range"),
    ]:
        h, b = list(hands), list(bone)
        change(h, b)
        with pytest.raises(ValueError, match=problem):
            HandState.from_view(view, h, b)
    with pytest.raises(TypeError, match=r"^view=None must be a SeatView"):
        HandState.from_view(None, hands, bone)
    assert HandState.from_view(view, hands, bone).legal_actions() == list(view.legal)
