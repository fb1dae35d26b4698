"""Deprecated: the observation encodings moved to :mod:`dominoes_env.obs`.

Its names of release 0.1.0 stay importable from here for one version, each with a
``DeprecationWarning``: ``OBS_VERSION`` (now :data:`dominoes_env.obs.DEFAULT_VERSION`) and
``NUM_ENDS`` (:mod:`dominoes_env.obs`), version 2 (:mod:`dominoes_env.obs.v2`:
``ObservationLayout`` is ``ObservationLayoutV2``) and the action helpers
(:mod:`dominoes_env.obs.actions`).

>>> import warnings
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     from dominoes_env.encoding import observation_size
>>> caught[0].category.__name__, str(caught[0].message)
('DominoesDeprecationWarning', 'dominoes_env.encoding.observation_size is deprecated; import it from dominoes_env.obs.v2')
"""  # noqa: E501

from __future__ import annotations

import importlib
import warnings

from .core.errors import DominoesDeprecationWarning

#: old name (as released in 0.1.0) -> (new module, new name)
MOVED = {
    "OBS_VERSION": ("dominoes_env.obs", "DEFAULT_VERSION"),
    "NUM_ENDS": ("dominoes_env.obs", "NUM_ENDS"),
    "ObservationLayout": ("dominoes_env.obs.v2", "ObservationLayoutV2"),
    "SCORE_CAP": ("dominoes_env.obs.v2", "SCORE_CAP"),
    "MOVE_POINTS_DIVISOR": ("dominoes_env.obs.v2", "MOVE_POINTS_DIVISOR"),
    "observation_layout": ("dominoes_env.obs.v2", "observation_layout"),
    "observation_size": ("dominoes_env.obs.v2", "observation_size"),
    "encode_observation": ("dominoes_env.obs.v2", "encode_observation"),
    "encode_hand_state": ("dominoes_env.obs.v2", "encode_hand_state"),
    "state_vector": ("dominoes_env.obs.v2", "state_vector"),
    "state_bounds": ("dominoes_env.obs.v2", "state_bounds"),
    "action_mask": ("dominoes_env.obs.actions", "action_mask"),
    "mask_of": ("dominoes_env.obs.actions", "mask_of"),
    "encode_action": ("dominoes_env.obs.actions", "encode_action"),
    "decode_action": ("dominoes_env.obs.actions", "decode_action"),
    "check_action": ("dominoes_env.obs.actions", "check_action"),
}


def __getattr__(name: str):
    if name not in MOVED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    home, new = MOVED[name]
    value = getattr(importlib.import_module(home), new)
    where = f"import it from {home}" if new == name else f"use {home}.{new}"
    warnings.warn(f"{__name__}.{name} is deprecated; {where}", DominoesDeprecationWarning,
                  stacklevel=2)
    return value
