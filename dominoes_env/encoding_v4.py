"""Deprecated: observation version 4 moved to :mod:`dominoes_env.obs.v4`.

This module re-exports the old names for one version, each with a ``DeprecationWarning``.
"""

from __future__ import annotations

from .encoding import moved

#: old name -> (new module, new name)
MOVED = {name: ("dominoes_env.obs.v4", name) for name in (
    "ObservationLayoutV4", "observation_layout_v4", "encode_observation_v4",
    "encode_hand_state_v4")}


def __getattr__(name: str):
    return moved(__name__, MOVED, name)
