"""The error every face of the environment (AEC, parallel, Gymnasium) raises when it is used
after ``close()``.

>>> from dominoes_env import SingleAgentEnv
>>> env = SingleAgentEnv(num_players=2, seat=0)
>>> env.close()
>>> env.reset()
Traceback (most recent call last):
...
dominoes_env.lifecycle.ClosedEnvironmentError: the environment is closed: make a new one to play on
"""

from __future__ import annotations

import gymnasium

__all__ = ["ClosedEnvironmentError", "closed_error"]


class ClosedEnvironmentError(RuntimeError, gymnasium.error.ClosedEnvironmentError):
    """``reset()`` or ``step()`` after ``close()``: a ``RuntimeError`` and Gymnasium's
    ``ClosedEnvironmentError`` (what its vector envs raise there)."""


def closed_error() -> ClosedEnvironmentError:
    """The error, with its one message."""
    return ClosedEnvironmentError("the environment is closed: make a new one to play on")
