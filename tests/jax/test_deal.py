"""The JAX game's random deal (``Game.random_deal``): a permutation for every key, and over many
keys each tile's place, the first two places together, and the leader look uniform
(chi-square against the uniform counts, fixed keys, a bound about six standard deviations
above the statistic's mean: a wrong shuffle fails, a right one practically never)."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")

from dominoes_env.jax import make  # noqa: E402

KEYS = 40_000


def _chi2(counts: np.ndarray, expected: float) -> float:
    return float(((counts - expected) ** 2 / expected).sum())


def _bound(df: int) -> float:
    """About six standard deviations above a chi-square statistic's mean (``df``, sd
    ``sqrt(2 df)``)."""
    return df + 6.0 * (2.0 * df) ** 0.5


@pytest.fixture(scope="module", params=[2, 3])
def deals(request):
    env = make(num_players=request.param)
    keys = jax.random.split(jax.random.PRNGKey(2026), KEYS)
    deal = jax.jit(jax.vmap(env.game.random_deal))(keys)
    order, leader, position = (np.asarray(x) for x in jax.device_get(deal))
    return env, order, leader, position


def test_every_deal_is_a_permutation_with_its_inverse(deals):
    env, order, _, position = deals
    T = env.tables.T
    assert (np.sort(order, axis=1) == np.arange(T)).all()
    assert (np.take_along_axis(position, order, axis=1) == np.arange(T)).all()
    assert len({row.tobytes() for row in order}) == KEYS  # no two keys deal alike here


def test_each_tile_lands_in_each_place_uniformly(deals):
    env, order, _, _ = deals
    T = env.tables.T
    counts = np.zeros((T, T))  # [place, tile]
    np.add.at(counts, (np.broadcast_to(np.arange(T), order.shape), order), 1)
    # each place holds every tile once per deal, so the free cells are (T - 1) ** 2
    assert _chi2(counts, KEYS / T) < _bound((T - 1) ** 2)


def test_the_first_two_places_are_a_uniform_pair(deals):
    env, order, _, _ = deals
    T = env.tables.T
    counts = np.zeros((T, T))
    np.add.at(counts, (order[:, 0], order[:, 1]), 1)
    off = ~np.eye(T, dtype=bool)
    assert (counts[~off] == 0).all()
    assert _chi2(counts[off], KEYS / (T * (T - 1))) < _bound(T * (T - 1) - 1)


def test_the_leader_is_uniform_over_the_seats(deals):
    env, _, leader, _ = deals
    n = env.tables.n
    counts = np.bincount(leader, minlength=n)
    assert counts.shape == (n,)
    assert _chi2(counts, KEYS / n) < _bound(n - 1)
