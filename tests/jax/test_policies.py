"""``random_policy``: always a legal code, and uniform over the legal codes (chi-square over
many keys, a bound about six standard deviations above the statistic's mean, as in
``test_deal``), for masks with legal codes spread over the tiles and the ends, at both ends of
the code range, and for one legal code."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

from dominoes_env.jax import make, random_policy  # noqa: E402

DRAWS = 30_000


def _draws(env, mask: np.ndarray) -> np.ndarray:
    state = jax.jit(env.init)(jax.random.PRNGKey(0))
    state = state.replace(legal_action_mask=jnp.asarray(mask))
    keys = jax.random.split(jax.random.PRNGKey(7), DRAWS)
    draw = jax.jit(jax.vmap(lambda k: random_policy(env, state, k)))
    return np.asarray(draw(keys))


@pytest.mark.parametrize("codes", [
    [0, 1, 2, 3, 9, 40, 41, 63, 110, 111],  # several ends of one tile, first and last codes
    [5, 6, 17, 28, 100],
    [0, 4, 8, 12, 16, 20, 24],  # leads: end 0 of seven tiles
    [57],
])  # fmt: skip
def test_random_policy_is_uniform_over_the_legal_codes(codes):
    env = make(num_players=2)
    mask = np.zeros(env.num_actions, bool)
    mask[codes] = True
    got = _draws(env, mask)
    assert mask[got].all(), f"illegal codes drawn: {sorted(set(got[~mask[got]].tolist()))}"
    counts = np.bincount(got, minlength=env.num_actions)[codes]
    expected = DRAWS / len(codes)
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    df = len(codes) - 1
    assert chi2 <= df + 6.0 * (2.0 * df) ** 0.5, (counts.tolist(), chi2)


def test_random_policy_on_double_nine_reaches_every_tile():
    # 55 tiles: the triangular sum over tiles is longer than double-six's
    env = make(num_players=2, max_pip=9)
    mask = np.zeros(env.num_actions, bool)
    codes = [0, 3, 101, 202, 218, 219]
    mask[codes] = True
    got = _draws(env, mask)
    assert set(got.tolist()) == set(codes)


@pytest.mark.parametrize("options", [{}, {"max_pip": 12, "num_players": 4, "hand_size": 15}])
def test_random_policy_plays_the_kth_legal_code_for_k_its_word_scaled_to_the_count(options):
    """Exactly the ``k``-th legal code in code order, ``k = floor(word * count / 2**32)`` for the
    key's word and the number of legal codes; across word boundaries (codes 31, 32, 63, 64 and
    the last), on double-six's 112 codes and double-twelve's 364; 0 when no code is legal."""
    from dominoes_env.jax import rng

    env = make(**options)
    A = env.num_actions
    state = jax.jit(env.init)(jax.random.PRNGKey(0))
    gen = np.random.default_rng(5)
    masks = [gen.random(A) < p for p in (0.02, 0.1, 0.5, 0.97) for _ in range(8)]
    edges = np.zeros(A, bool)
    edges[[31, 32, 63, 64, A - 1]] = True
    masks += [edges, np.ones(A, bool), np.zeros(A, bool)]
    keys = jax.random.split(jax.random.PRNGKey(11), len(masks))
    states = jax.tree.map(lambda x: jnp.stack([x] * len(masks)), state)
    states = states.replace(legal_action_mask=jnp.asarray(np.stack(masks)))
    got = np.asarray(jax.jit(jax.vmap(lambda s, k: random_policy(env, s, k)))(states, keys))
    words = np.asarray(jax.vmap(rng.bits)(keys))
    for mask, word, code in zip(masks, words, got, strict=True):
        legal = np.flatnonzero(mask)
        assert code == (legal[(int(word) * len(legal)) >> 32] if len(legal) else 0)


@pytest.mark.parametrize("options", [{}, {"max_pip": 9}])
def test_random_policy_draws_the_same_codes_whether_xla_folds_the_mask_or_not(options):
    """A state known when the policy is compiled (XLA folds the packing of its mask into a
    constant) and the same state passed in draw the same codes: XLA folds a reordering of the
    mask's bytes wrongly (a packing that read the mask through one drew codes past the last
    here), so the packing must not rely on one."""
    env = make(num_players=2, **options)
    A = env.num_actions
    state = jax.jit(env.init)(jax.random.PRNGKey(0))
    mask = np.zeros(A, bool)
    mask[[0, 1, 2, 3, 9, 40, 41, 63, A - 2, A - 1]] = True
    state = state.replace(legal_action_mask=jnp.asarray(mask))
    keys = jax.random.split(jax.random.PRNGKey(3), 256)
    folded = jax.jit(jax.vmap(lambda k: random_policy(env, state, k)))(keys)
    passed = jax.jit(jax.vmap(lambda s, k: random_policy(env, s, k), in_axes=(None, 0)))(
        state, keys)
    assert np.asarray(folded).tolist() == np.asarray(passed).tolist()
    assert mask[np.asarray(folded)].all()


def test_the_random_index_is_the_high_half_of_the_product_at_the_extremes():
    from dominoes_env.jax.policies import uniform_index

    words = np.array([0, 1, 0xFFFF, 0x10000, 0x7FFFFFFF, 0x80000000, 0xFFFF0000, 0xFFFFFFFF],
                     np.uint32)
    for count in (0, 1, 2, 3, 112, 364, 0xFFFF):
        got = np.asarray(jax.vmap(lambda w, c=count: uniform_index(w, jnp.int32(c)))(words))
        assert got.tolist() == [(int(w) * count) >> 32 for w in words], count


def test_the_policies_refuse_a_state_or_key_of_another_kind():
    """A double-nine state given to a double-six env's random_policy drew code 208, out of
    the env's 0..111, without a word; greedy_policy ended in JAX's "Incompatible shapes for
    broadcasting", a batched state in shape errors, a GameState or an int key in an
    AttributeError. Each is a TypeError naming the policy."""
    from dominoes_env.jax import greedy_policy

    env, nine = make(num_players=2), make(num_players=2, max_pip=9)
    key = jax.random.PRNGKey(0)
    # compiled: run op by op, the two inits and the policies took most of a minute
    state, other = jax.jit(env.init)(key), jax.jit(nine.init)(key)
    batch = jax.jit(jax.vmap(env.init))(jax.random.split(key, 3))
    for policy, call in (("random_policy", lambda s, k=key: random_policy(env, s, k)),
                         ("greedy_policy", lambda s, k=key: greedy_policy(env, s))):
        for bad in (other, batch, state.game_state, None):  # refused as it is traced
            with pytest.raises(TypeError, match=f"^{policy}'s state"):
                call(bad)
        assert bool(state.legal_action_mask[jax.jit(call)(state)])  # the env's own state plays
    for bad in (3, None, jax.random.split(key, 2)):
        with pytest.raises(TypeError, match="^random_policy's key must be one PRNG key"):
            random_policy(env, state, bad)
