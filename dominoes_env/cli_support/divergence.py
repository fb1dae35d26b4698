"""A trainer's diverged update, said one way by the three trainers (``experiments.train_ppo``,
``train_jax``, ``train_rllib``): :func:`divergence_line`.

Each trainer checks every update before anything counts it (logged, kept, saved, exported):
its losses must be finite and its weights must pass the policy file's own rule
(:func:`~dominoes_env.policy_format.magnitudes_problem`: finite, none above
:data:`~dominoes_env.policy_format.MAX_WEIGHT`), read as one number per array. An update that
fails ends the run with this line, to which the trainer adds what it kept, and status 1."""

from __future__ import annotations

import math
from collections.abc import Mapping

from ..policy_format import magnitudes_problem

__all__ = ["divergence_line"]


def divergence_line(which: str, largest: Mapping[str, float],
                    losses: Mapping[str, float] | None = None, flags: str = "") -> str | None:
    """The line that ends a run whose update diverged, or ``None`` when the update is sound.

    ``which`` names the work that made the weights ("the update reaching 4,096 steps");
    ``largest``: each weight array's largest magnitude, NaN where it holds one; ``losses``: the
    update's losses by name (the line names those that are not finite, in their order);
    ``flags``: the flags worth making smaller ("--lr or --vf-coef"; "" for none).

    >>> divergence_line("the update reaching 8 steps", {"w": 0.5}, {"loss": 0.1}, "--lr")
    >>> divergence_line("the update reaching 8 steps", {"w": float("nan")},
    ...                 {"vf_loss": float("inf"), "entropy": 1.9}, "--lr")
    'the update reaching 8 steps made non-finite vf_loss, weights (NaN or infinite: the training diverged; try a smaller --lr); nothing of it was saved'
    >>> divergence_line("the behaviour cloning", {"w": 3e6})
    "the behaviour cloning made weights too large for a policy file (w holds a value of magnitude 3e+06; a policy's weights are at most 1e+06: the training diverged); nothing of it was saved"
    """  # noqa: E501
    bad = [name for name, value in (losses or {}).items() if not math.isfinite(value)]
    problem, finite = magnitudes_problem(largest)
    if not finite:
        bad.append("weights")
    if bad:
        what = f"non-finite {', '.join(bad)} (NaN or infinite: "
    elif problem is not None:  # finite, but more than a policy file holds
        what = f"weights too large for a policy file ({problem}: "
    else:
        return None
    hint = f"; try a smaller {flags}" if flags else ""
    return f"{which} made {what}the training diverged{hint}); nothing of it was saved"
