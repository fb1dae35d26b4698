"""Straight Dominoes ("All Fives") for reinforcement-learning research.

- the game core, plain Python: :class:`RuleConfig`, :class:`MatchState`, :class:`HandState`,
  :class:`SeatView`, :class:`Move`, :class:`Tile` (re-exported here from :mod:`.core`);
- ``env()`` / ``raw_env``: the PettingZoo AEC environment (:mod:`.aec`);
- :class:`SingleAgentEnv`: a Gymnasium env for one learning seat (:mod:`.single_agent`);
- the numpy encodings (:mod:`.encoding`) and pictures (:mod:`.render`);
- ``viewer(record_or_match)``: the replay viewer, inline in Jupyter (:mod:`.render.html`).

The env faces are imported on first use, so ``import dominoes_env`` (and the core) never pulls
in numpy, Gymnasium or PettingZoo.

>>> import dominoes_env
>>> e = dominoes_env.env(num_players=3)
>>> e.reset(seed=0)
>>> e.agent_selection in e.possible_agents
True
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

from .core import (
    DOWN,
    END_NAMES,
    LEFT,
    RIGHT,
    UP,
    HandState,
    IllegalMoveError,
    MatchState,
    Move,
    RecordError,
    RuleConfig,
    SeatView,
    Tile,
    tile_set,
)

# name -> module that defines it (imported on first access)
_LAZY = {
    "env": "dominoes_env.aec",
    "raw_env": "dominoes_env.aec",
    "SingleAgentEnv": "dominoes_env.single_agent",
    "RandomPlayer": "dominoes_env.single_agent",
    "encode_observation": "dominoes_env.encoding",
    "action_mask": "dominoes_env.encoding",
    "observation_size": "dominoes_env.encoding",
    "observation_layout": "dominoes_env.encoding",
    "encode_action": "dominoes_env.encoding",
    "decode_action": "dominoes_env.encoding",
    "state_vector": "dominoes_env.encoding",
    "OBS_VERSION": "dominoes_env.encoding",
    "register_envs": "dominoes_env.registration",
    "viewer": "dominoes_env.render.html",
}

__all__ = [
    "DOWN", "END_NAMES", "LEFT", "RIGHT", "UP",
    "HandState", "IllegalMoveError", "MatchState", "Move", "RecordError", "RuleConfig",
    "SeatView", "Tile", "tile_set", *_LAZY,
]  # fmt: skip


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'dominoes_env' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


# registries: only when their library is already loaded (registering never imports it)
if "pettingzoo" in sys.modules:
    from .registration import register_pettingzoo as _register_pettingzoo

    _register_pettingzoo()
if "gymnasium" in sys.modules:
    from .registration import register_gymnasium as _register_gymnasium

    _register_gymnasium()
