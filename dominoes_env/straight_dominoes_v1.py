"""Straight Dominoes, env version 1 (PettingZoo classic layout: ``env``, ``raw_env``,
``parallel_env``).

Import this module to pin the version your results depend on::

    from dominoes_env import straight_dominoes_v1
    env = straight_dominoes_v1.env(num_players=4)

The ids ``dominoes/straight_dominoes-v1`` (``pettingzoo.make("aec" | "parallel", ...)``) and
``dominoes/StraightDominoes-v1`` (``gymnasium.make``, the single-agent env) make the same
environments. The version history is on the environment card (``docs/environment.md``,
"Version history").

>>> raw_env.metadata["name"], parallel_env.metadata["name"]
('straight_dominoes_v1', 'straight_dominoes_v1')
"""

from __future__ import annotations

from .aec import ENV_NAME as VERSION_NAME
from .aec import env, raw_env
from .parallel import parallel_env

__all__ = ["VERSION_NAME", "env", "parallel_env", "raw_env"]
