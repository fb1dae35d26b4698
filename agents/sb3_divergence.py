"""Whether a MaskablePPO run (``python -m experiments.train_ppo``) diverged: the weights of its
policy checked against the policy file's own rule.

Each update, the behaviour cloning before the first and a ``--resume`` checkpoint's networks
must leave weights that pass :func:`~dominoes_env.policy_format.magnitudes_problem` (finite,
and none above :data:`~dominoes_env.policy_format.MAX_WEIGHT`), as train_jax and train_rllib
check theirs: :func:`check_weights` raises :class:`Diverged` otherwise, with the line
(:func:`~dominoes_env.cli_support.divergence_line`) that ends the run. The weights are read one
number per tensor (:func:`largest_magnitudes`), not copied; torch is imported only when they
are read.
"""

from __future__ import annotations

from dominoes_env.cli_support import divergence_line


class Diverged(Exception):
    """The training diverged: an update (or the behaviour cloning) made weights that are not
    finite (NaN or infinite) or that a policy file cannot hold (above
    :data:`~dominoes_env.policy_format.MAX_WEIGHT`): :func:`check_weights`. Its message is the
    run's one line, to which the trainer adds what it kept; the trainer ends with status 1."""


def check_weights(policy, steps: int | None) -> None:
    """:class:`Diverged` unless every weight of ``policy`` (its actor and value networks, all
    that a checkpoint saves; the actor is what an export writes) passes the policy file's own
    rule (:func:`~dominoes_env.policy_format.weights_problem`: finite, and none above
    :data:`~dominoes_env.policy_format.MAX_WEIGHT`), as train_jax's and train_rllib's
    ``check_finite`` hold theirs. ``steps``: those the update that made them reached
    (``None``: the behaviour cloning made them). One number read per tensor, its largest
    magnitude (NaN where it holds one), not a copy of the networks."""
    diverged = divergence(policy, steps)
    if diverged is not None:
        raise diverged


def divergence(policy, steps: int | None) -> Diverged | None:
    """The :class:`Diverged` that :func:`check_weights` raises for ``policy`` (its line:
    which work made which problem, ``steps`` as there), or ``None`` when its weights pass."""
    line = divergence_line("the behaviour cloning" if steps is None
                           else f"the update reaching {steps:,} steps",
                           largest_magnitudes(policy.named_parameters()),
                           flags="" if steps is None else "--learning-rate")
    return None if line is None else Diverged(line)


def largest_magnitudes(named) -> dict[str, float]:
    """Each float tensor's largest magnitude (NaN where it holds one) among ``named``
    (``(name, tensor)`` pairs; others are not weights): what the policy file's rule
    (:func:`~dominoes_env.policy_format.magnitudes_problem`) reads, without a copy of them."""
    import torch

    with torch.no_grad():
        return {name: float(t.detach().abs().max()) for name, t in named
                if torch.is_tensor(t) and torch.is_floating_point(t) and t.numel()}
