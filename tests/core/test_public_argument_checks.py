"""Bad arguments to the core's public classes (docs/api/core.md) are refused with a
``ValueError``/``TypeError`` naming them: they hung (``TileSet(10**30)``), answered for another
tile or seat (a negative code or seat read the tables from their end), or ended in
``AttributeError``/``IndexError``."""

from __future__ import annotations

import random

import pytest

from dominoes_env.core import DealSampler, HandState, RuleConfig, TileSet, determinize
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
