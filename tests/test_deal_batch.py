"""The batch deal sampler (agents.deal_batch) against the one-deal sampler it walks
(dominoes_env.core.DealSampler): the same support, the same (uniform) distribution by a
chi-square test, deals that fit the view under every table."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest

from agents.deal_batch import DealBatchSampler, Deals, bits_to_bool, bool_to_bits
from dominoes_env.core import RuleConfig, tile_set
from dominoes_env.core.sampling import DealSampler

from .helpers import assert_deal_fits_the_view, fitting_deals, random_positions

TS = tile_set(6)


class _View:
    """The fields DealBatchSampler reads of a view, for a hand-made sampler."""

    def __init__(self, rules, seat, hand):
        self.rules, self.seat, self.hand = rules, seat, hand


def chi2_uniform(counts: Counter, cells: int, draws: int) -> float:
    expected = draws / cells
    return sum((c - expected) ** 2 / expected for c in counts.values()) + (
        cells - len(counts)) * expected


def test_batch_sampler_is_uniform_among_fitting_deals_with_lacks():
    # 3 hidden seats (4 players); 9 unseen tiles; seat 1 has no 0s or 1s, seat 2 no 6s, seat 3
    # no 2s: several groups, and deals of one batch walk through different states
    rules = RuleConfig(num_players=4)
    tiles = [(0, 0), (0, 6), (1, 2), (2, 6), (3, 4), (1, 6), (4, 5), (3, 3), (5, 6)]
    idx = [TS.index(*t) for t in tiles]
    unseen = sum(1 << i for i in idx)
    lacks = {1: 0b11, 2: 1 << 6, 3: 1 << 2}
    sizes = {1: 2, 2: 2, 3: 2}
    sampler = DealSampler(TS, unseen, sizes, 3, lacks)
    assert len(sampler.groups) > 2

    support = fitting_deals(TS, idx, sizes, lacks)
    assert sampler.num_deals == len(support) > 20

    own = 1 << TS.index(1, 1)
    batch = DealBatchSampler(_View(rules, 0, own), sampler)
    draws = 200 * len(support)
    deals = batch.sample(np.random.default_rng(0), draws)
    counts, first = Counter(), Counter()
    for hands, bone in deals.to_list():
        assert hands[0] == own
        key = tuple(frozenset(i for i in idx if hands[s] >> i & 1) for s in (1, 2, 3))
        assert key in support
        assert sorted(bone) == sorted(set(idx) - key[0] - key[1] - key[2])
        counts[key] += 1
        first[bone[0]] += 1
    assert set(counts) == support  # every fitting deal comes out
    # p < 0.001 only when not uniform (the 0.999 quantile of chi-square with df degrees)
    df = len(support) - 1
    assert chi2_uniform(counts, len(support), draws) < df + 3.1 * (2 * df) ** 0.5 + 6
    # the boneyard order: each unseen tile is drawn first as often as the one-deal sampler
    # draws it first (the boneyards differ in which tiles they may hold)
    rng, ref = random.Random(1), Counter()
    for _ in range(draws):
        ref[sampler.sample(rng)[1][0]] += 1
    for t in idx:
        p = ref[t] / draws
        assert abs(first[t] / draws - p) < 4.5 * (2 * p * (1 - p) / draws) ** 0.5 + 1e-9


def test_batch_sampler_matches_the_one_deal_sampler_without_lacks():
    # no lacks: one group; the distribution of seat 1's hand against the one-deal sampler's
    rules = RuleConfig(num_players=3)
    idx = [TS.index(*t) for t in [(0, 0), (0, 1), (1, 1), (2, 5), (3, 6), (4, 4)]]
    sampler = DealSampler(TS, sum(1 << i for i in idx), {1: 2, 2: 1}, 3)
    batch = DealBatchSampler(_View(rules, 0, 0), sampler)
    draws = 6000
    counts = Counter(hands[1] for hands, _bone in
                     batch.sample(np.random.default_rng(5), draws).to_list())
    assert len(counts) == 15  # C(6, 2) hands for seat 1
    assert chi2_uniform(counts, 15, draws) < 36.1  # 14 degrees of freedom, p < 0.001


@pytest.mark.parametrize("rules", [RuleConfig(), RuleConfig(num_players=3),
                                   RuleConfig(num_players=4, partnerships=True),
                                   RuleConfig(num_players=3, max_pip=9),
                                   RuleConfig(boneyard_reserve=2)],
                         ids=["2p", "3p", "4p", "3p-d9", "2p-reserve"])
def test_batch_deals_agree_with_the_view(rules):
    ts = rules.tiles
    rng = np.random.default_rng(3)
    for _truth, view in random_positions(rules, 150, rules.num_players, stride=100):
        deals = DealBatchSampler(view).sample(rng, 4)
        assert deals.hands.shape == (4, rules.num_players, ts.num_tiles)
        for hands, bone in deals.to_list():
            assert_deal_fits_the_view(view, hands, bone)


def test_deals_round_trip_and_take():
    masks = [0b1011, 0, 1 << 27]
    assert bool_to_bits(bits_to_bool(masks, 28)) == masks
    listed = [([0b11, 0b1100], [4, 6, 5]), ([0b101, 0b1010], [6, 4, 5])]
    deals = Deals.from_list(listed, 28)
    assert deals.to_list() == listed
    assert deals.take([1, 1, 0]).to_list() == [listed[1], listed[1], listed[0]]
    with pytest.raises(ValueError, match="not one set of deals"):
        Deals(deals.hands, deals.bone[:1])
    with pytest.raises(ValueError, match="no deals"):
        Deals.from_list([], 28)
