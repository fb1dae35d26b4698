"""A trainer's ``--resume``: the run folder its checkpoint lies in (:func:`run_of_checkpoint`),
where the run continues without ``--out``, and the note when the checkpoint has nothing left to
train (:func:`nothing_to_train`)."""

from __future__ import annotations

import os


def run_of_checkpoint(checkpoint: str) -> str:
    """The run folder of a trainer's checkpoint: ``X`` for ``X/checkpoint.npz`` (train_jax)
    and for ``X/checkpoints/last.zip`` (train_ppo), where ``--resume`` without ``--out``
    continues the run (a stopped run says "continue with --resume X/checkpoint.npz", and that
    command continues in ``X``, not in the trainer's default folder).

    >>> run_of_checkpoint("runs/a/checkpoint.npz"), run_of_checkpoint("r/checkpoints/last.zip")
    ('runs/a', 'r')
    >>> run_of_checkpoint("checkpoint.npz")
    '.'

    A folder is refused (``ValueError`` naming it, with a hint to name the checkpoint file in
    it), not taken for a checkpoint whose run is its parent.
    """
    if os.path.isdir(checkpoint):
        raise ValueError(f"--resume {checkpoint!r} is a folder; name the checkpoint file in it "
                         "(the line that stopped its run says which)")
    folder = os.path.dirname(checkpoint) or "."
    if os.path.basename(os.path.normpath(folder)) == "checkpoints":
        folder = os.path.dirname(os.path.normpath(folder)) or "."
    return folder


def nothing_to_train(resume: str, steps: int, total: int) -> str | None:
    """What to say when ``--resume`` is at ``--total-steps`` or past it (``None`` below it):
    nothing is trained, and the note says so and how to train on, so that the run's last line
    ("trained 300,000 steps" for --total-steps 200000) is not read as new training."""
    if steps < total:
        return None
    return (f"note: --resume {resume} is at step {steps:,}, not below --total-steps {total:,}: "
            "nothing is trained (give a larger --total-steps to train on)")
