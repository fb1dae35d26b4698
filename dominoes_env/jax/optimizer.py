"""The optimizer of `train_jax`'s PPO update, in one place: the trainer builds it, and a warm
start (`checkpoints.checkpoint_networks`) reads the optimizer state of a checkpoint that
another run's settings wrote.

Needs the `jax` extra.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import optax

#: Adam's epsilon (CleanRL's and PureJaxRL's PPO)
ADAM_EPS = 1e-5


def make_optimizer(lr: float, max_grad_norm: float, anneal_lr: bool, num_updates: int,
                   steps_per_update: int) -> optax.GradientTransformation:
    """Adam after a clip of the gradients' global norm to `max_grad_norm`. With `anneal_lr`
    the rate falls linearly from `lr`, one step down per update of `steps_per_update` optimizer
    steps, to `lr / num_updates` for the last of `num_updates` updates (and stays there)."""

    def schedule(count):
        done = count // steps_per_update
        return lr * (1.0 - jnp.minimum(done, num_updates - 1) / num_updates)

    return optax.chain(optax.clip_by_global_norm(max_grad_norm),
                       optax.adam(schedule if anneal_lr else lr, eps=ADAM_EPS))


def optimizer_state_shapes(anneal_lr: bool, params: Any) -> Any:
    """The shapes and dtypes (`jax.ShapeDtypeStruct`) of the optimizer state for `params`
    (arrays or shapes): the state's structure depends on `anneal_lr` alone (the schedule keeps
    a step count of its own), not on the rates."""
    return jax.eval_shape(make_optimizer(1.0, 1.0, anneal_lr, 1, 1).init, params)
