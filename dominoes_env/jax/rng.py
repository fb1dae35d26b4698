"""``jax.random.split`` and ``jax.random.bits`` for one key, the same numbers, fused.

On XLA's CPU backend JAX runs each Threefry call as a loop of five rounds (it lowers the hash
with "rolled loops" there to keep compile times short): under ``vmap`` every call is a loop
whose carried state is written out at each round, and the step made four such calls (the
caller's split, the policy's word, the step's split, the deal's words), about a fifth of a
batch step's time (measured at batch 4,096). These functions compute the same Threefry-2x32
hash unrolled, as plain element-wise operations that XLA fuses with their neighbours.

They return exactly what ``jax.random`` returns for the same key (``tests/jax/test_rng.py``),
so a seed deals the same cards with either. That holds for Threefry keys (the default) with
``jax_threefry_partitionable`` on (JAX's default since 0.5); for any other key (another
``impl``, or the flag turned off) they call ``jax.random`` itself.

>>> import jax
>>> key = jax.random.PRNGKey(3)
>>> bool((split(key) == jax.random.split(key)).all())
True
>>> bool((bits(key, 2) == jax.random.bits(key, (2,), jnp.uint32)).all())
True
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["bits", "split", "threefry2x32"]

_U32 = jnp.uint32
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))


def _rotate_left(x: jax.Array, d: int) -> jax.Array:
    return (x << _U32(d)) | (x >> _U32(32 - d))


def threefry2x32(
    k1: jax.Array, k2: jax.Array, x1: jax.Array, x2: jax.Array
) -> tuple[jax.Array, jax.Array]:
    """The Threefry-2x32 block cipher (20 rounds) of the counter ``(x1, x2)`` under the key
    ``(k1, k2)``, element-wise on ``uint32`` arrays: JAX's own hash (``jax._src.random``'s
    unrolled lowering, the one it uses off CPU), written out."""
    ks = (k1, k2, k1 ^ k2 ^ _U32(0x1BD11BDA))
    x = [x1 + ks[0], x2 + ks[1]]
    for i in range(5):
        for r in _ROTATIONS[i % 2]:
            x[0] = x[0] + x[1]
            x[1] = x[0] ^ _rotate_left(x[1], r)
        x[0] = x[0] + ks[(i + 1) % 3]
        x[1] = x[1] + ks[(i + 2) % 3] + _U32(i + 1)
    return x[0], x[1]


def _fast(key: jax.Array) -> bool:
    """Whether ``key`` is a Threefry key this module reproduces (else ``jax.random`` is
    called)."""
    if not jax.config.jax_threefry_partitionable:
        return False
    if jnp.issubdtype(key.dtype, jax.dtypes.prng_key):
        return key.shape == () and str(jax.random.key_impl(key)) == "threefry2x32"
    return (key.shape == (2,) and key.dtype == jnp.uint32
            and jax.config.jax_default_prng_impl == "threefry2x32")  # fmt: skip


def _blocks(key: jax.Array, n: int) -> tuple[jax.Array, jax.Array]:
    """The hash of counters ``(0, i)``, ``i < n`` (what ``split`` and ``bits`` draw under
    ``jax_threefry_partitionable``): two ``uint32[n]`` words."""
    data = jax.random.key_data(key) if jnp.issubdtype(key.dtype, jax.dtypes.prng_key) else key
    counts = jnp.asarray(np.arange(n, dtype=np.uint32))
    return threefry2x32(data[0], data[1], jnp.zeros(n, _U32), counts)


def split(key: jax.Array) -> jax.Array:
    """``jax.random.split(key)`` (two keys, of ``key``'s kind) for one key."""
    if not _fast(key):
        return jax.random.split(key)
    b1, b2 = _blocks(key, 2)
    data = jnp.stack([b1, b2], axis=1)
    if jnp.issubdtype(key.dtype, jax.dtypes.prng_key):
        return jax.random.wrap_key_data(data, impl=jax.random.key_impl(key))
    return data


def bits(key: jax.Array, n: int | None = None) -> jax.Array:
    """``jax.random.bits(key, (n,), uint32)`` for one key; with ``n=None`` one word,
    ``jax.random.bits(key, (), uint32)``."""
    if not _fast(key):
        return jax.random.bits(key, () if n is None else (n,), _U32)
    b1, b2 = _blocks(key, 1 if n is None else n)
    words = b1 ^ b2
    return words[0] if n is None else words
