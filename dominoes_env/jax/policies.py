"""Jittable baseline policies: uniform random over the legal moves, and greedy.

Both take the env and a ``State`` (one game; ``vmap`` them for a batch) and return an action
code. ``greedy_policy`` makes exactly the choices of the core's greedy order
(:mod:`dominoes_env.core.greedy`, which ``agents.greedy`` plays): the most points now, then the
heaviest tile, then a double, then the lowest code.

>>> import jax
>>> from dominoes_env.jax import make
>>> env = make()
>>> state = jax.jit(env.init)(jax.random.PRNGKey(1))
>>> action = jax.jit(greedy_policy, static_argnums=0)(env, state)
>>> bool(state.legal_action_mask[action])
True
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from dominoes_env.core import POINT_SCALE

from . import rng
from .env import Env, State, check_key
from .game import Game, materialize


def random_policy(env: Env, state: State, key: jax.Array) -> jax.Array:
    """A legal action code drawn uniformly at random: the ``k``-th legal code in code order,
    ``k = floor(word * count / 2**32)`` for one random 32-bit ``word`` and the ``count`` of
    legal codes (off uniform by at most ``count / 2**32``, under 1e-7 for 364 codes); 0 when
    no code is legal.

    The legal mask is packed into 32-bit words, so the ``k``-th code is found by population
    counts: the word that holds it, then a binary search of that word's bits. The packing
    moves bytes, not bits: a tile's four codes are four adjacent bytes of the mask, read as
    one 32-bit word (end ``e`` at bit ``8 e``; byte order little-endian, as XLA lays words out),
    whose four bits one product gathers to bits 0-3, and eight tiles' nibbles make a word.
    Each step is element-wise over the batch: a sum of the codes' bits over each word is a
    reduction along the mask's rows, a running sum over the codes (``cumsum``) a sequential
    scan per game and a product with a table of powers of two a library call on XLA's CPU
    backend (measured: the byte packing took the bench's batch step from 2.8 to 2.6 ms
    against the sum, with XLA on one core). (Reordering the bytes first, so that one read
    gives a word in code order, is faster still, but XLA folds that reordering wrongly when
    the mask is a constant.)

    ``state`` must be one State of ``env`` and ``key`` one PRNG key (:meth:`Env.check_state`,
    :func:`~dominoes_env.jax.env.check_key`; static shapes only, nothing added to a compiled
    step): a double-nine state with a double-six env drew code 208, out of the env's range."""
    env.check_state(state, "random_policy")
    check_key(key, "random_policy")
    mask = state.legal_action_mask
    A = mask.shape[-1]
    W = -(-A // 32)
    m = jnp.pad(mask, (0, 32 * W - A)).astype(jnp.uint8).reshape(8 * W, 4)
    u = jax.lax.bitcast_convert_type(m, jnp.uint32)  # per tile: end e at bit 8 e
    # bits 0, 8, 16, 24 to 21, 22, 23, 24: the product's partial sums never overlap
    u = (((u * jnp.uint32(0x204081)) >> jnp.uint32(21)) & jnp.uint32(0xF)).reshape(W, 8)
    words = u[:, 0]  # tile 8 w + g's codes at bits 4 g .. 4 g + 3 of word w: code order
    for g in range(1, 8):
        words = words | (u[:, g] << jnp.uint32(4 * g))
    counts = jax.lax.population_count(words).astype(jnp.int32)
    k = uniform_index(rng.bits(key), jnp.sum(counts, dtype=jnp.int32))
    # the word holding the k-th legal code, by the legal codes before each word (a static
    # loop: at most 12 words)
    word, before, w, upto = jnp.uint32(0), jnp.int32(0), jnp.int32(0), jnp.int32(0)
    for i in range(W):
        here = (upto <= k) & (k < upto + counts[i])
        word = jnp.where(here, words[i], word)
        before = jnp.where(here, upto, before)
        w = jnp.where(here, i, w)
        upto = upto + counts[i]
    # the (k - before)-th set bit of that word: halve the window five times
    r, pos = k - before, jnp.int32(0)
    for width in (16, 8, 4, 2, 1):
        low = word & jnp.uint32((1 << width) - 1)
        c = jax.lax.population_count(low).astype(jnp.int32)
        high = r >= c
        r = jnp.where(high, r - c, r)
        pos = jnp.where(high, pos + width, pos)
        word = jnp.where(high, word >> jnp.uint32(width), low)
    code = jnp.where(upto > 0, w * 32 + pos, 0).astype(jnp.int32)
    # computed once: left alone XLA fuses this chain into each of the step's reads of the
    # action and recomputes it there (measured: the step 60% slower)
    return materialize(code, never=upto < 0)


def uniform_index(word: jax.Array, count: jax.Array) -> jax.Array:
    """``floor(word * count / 2**32)`` for a ``uint32`` ``word`` and ``0 <= count < 2**16``
    (int32): the high half of a 32 x 32-bit product, from 16-bit halves (no 64-bit integers,
    no division). An index in ``0..count - 1`` for a uniform random ``word``, the ``k`` of
    :func:`random_policy` (0 where ``count`` is 0).

    >>> int(uniform_index(jnp.uint32(0xFFFFFFFF), jnp.int32(112)))
    111
    """
    c = count.astype(jnp.uint32)
    hi, lo = word >> jnp.uint32(16), word & jnp.uint32(0xFFFF)
    return ((hi * c + ((lo * c) >> jnp.uint32(16))) >> jnp.uint32(16)).astype(jnp.int32)


def greedy_policy(env: Env, state: State) -> jax.Array:
    """The greedy action code: the key ``points * POINT_SCALE + tie_rank[code]`` is largest,
    with the core's :data:`~dominoes_env.core.POINT_SCALE` and
    :func:`~dominoes_env.core.tie_rank` (tabulated in the env's tables). ``state`` must be
    one State of ``env`` (:meth:`Env.check_state`)."""
    env.check_state(state, "greedy_policy")
    points = Game.points_for_count(env.game.count_after_all(state.game_state))
    key = points * POINT_SCALE + jnp.asarray(env.tables.tie_rank)
    return jnp.argmax(jnp.where(state.legal_action_mask, key, -1)).astype(jnp.int32)
