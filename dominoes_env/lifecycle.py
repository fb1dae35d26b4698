"""The errors every face of the environment (AEC, parallel, Gymnasium) raises when it is used
after ``close()`` (:class:`ClosedEnvironmentError`) and the AEC and Gymnasium envs raise when
one of their methods is called before ``reset()`` (:class:`ResetFirstError`).

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

__all__ = ["ClosedEnvironmentError", "ResetFirstError", "closed_error"]


class ClosedEnvironmentError(RuntimeError, gymnasium.error.ClosedEnvironmentError):
    """``reset()`` or ``step()`` after ``close()``: a ``RuntimeError`` and Gymnasium's
    ``ClosedEnvironmentError`` (what its vector envs raise there)."""


class ResetFirstError(RuntimeError, AssertionError, AttributeError):
    """A method of the environment called before ``reset()`` (the AEC env, ``SingleAgentEnv``):
    a ``RuntimeError``, as the parallel env raises there. It is also an ``AssertionError`` and an
    ``AttributeError``, what PettingZoo's order wrapper raises (the first from ``step``,
    ``observe``, ``agent_iter``..., the second from ``last``), so code that catches those
    catches it. (:mod:`dominoes_env.aec` exports it too, where it was first defined.)"""


def closed_error() -> ClosedEnvironmentError:
    """The error, with its one message."""
    return ClosedEnvironmentError("the environment is closed: make a new one to play on")
