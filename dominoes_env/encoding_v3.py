"""Deprecated: observation version 3 moved to :mod:`dominoes_env.obs.v3`.

This module re-exports the old names for one version, each with a ``DeprecationWarning``.
"""

from __future__ import annotations

from .encoding import moved

#: old name -> (new module, new name)
MOVED = {name: ("dominoes_env.obs.v3", name) for name in (
    "ObservationLayoutV3", "observation_layout_v3", "encode_observation_v3",
    "encode_hand_state_v3")}


def __getattr__(name: str):
    return moved(__name__, MOVED, name)
