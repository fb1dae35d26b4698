"""Observation version 3: version 2 (:mod:`dominoes_env.obs.v2`) plus one block,
``reply_points``, the next seat's best answer to each legal move (:mod:`dominoes_env.lookahead`).

================  =========  =========  ==========  ===============================================
block             size       2p d6      4p d6       meaning
================  =========  =========  ==========  ===============================================
(version 2)       D2         0:234      0:252       every block of version 2, unchanged
reply_points      T*4        234:346    252:364     per action code, the most points the next seat
                                                    could score with one play right after that
                                                    legal move, from the tiles it may hold / 20
                                                    (0 for the others and when it is not this
                                                    seat's turn)
================  =========  =========  ==========  ===============================================

Pick it with ``obs_version=3`` (the environments' option, ``train_jax --obs-version 3``);
policies trained on it record ``"obs_version": 3`` and ``ppo:PATH`` encodes it for them. The JAX
game computes the same float32 values (:mod:`dominoes_env.jax.observation`).

>>> from dominoes_env.core import MatchState
>>> match = MatchState(seed=3)
>>> obs = encode_observation_v3(match.view(match.turn))
>>> lay = observation_layout_v3(match.rules)
>>> obs.shape, lay.reply_points
((346,), slice(234, 346, None))
"""

from __future__ import annotations

from types import MappingProxyType

import numpy as np

from ..core import RuleConfig, SeatView
from ..lookahead import reply_points
from . import ObservationSpec, cached_layout, register
from .v2 import MOVE_POINTS_DIVISOR, ObservationLayoutV2, extend_hand_state, extend_view

VERSION = 3

#: block -> what it holds: version 2's blocks, then this version's
MEANINGS = MappingProxyType({
    **ObservationLayoutV2.MEANINGS,
    "reply_points": "per action code, the next seat's best reply to that move / 20",
})


class ObservationLayoutV3(ObservationLayoutV2):
    """Version 2's :class:`~dominoes_env.obs.v2.ObservationLayoutV2` plus the ``reply_points``
    slice at its end (``v2_size``: where version 2 ends). Get the shared instance with
    :func:`observation_layout_v3`."""

    version = VERSION
    MEANINGS = MEANINGS

    def __init__(self, rules: RuleConfig):
        super().__init__(rules)
        self.v2_size = self.size
        self.add_block("reply_points", self.num_actions,
                       np.float32(8 * rules.max_pip / MOVE_POINTS_DIVISOR))


def observation_layout_v3(rules: RuleConfig) -> ObservationLayoutV3:
    """The (cached) :class:`ObservationLayoutV3` of ``rules``."""
    return cached_layout(ObservationLayoutV3, rules)


def fill_reply_points(lay: ObservationLayoutV3, out: np.ndarray, src, seat: int, own: int,
                      legal) -> None:
    """Write version 3's ``reply_points`` block into ``out`` (a :data:`~.v2.Fill`)."""
    start = lay.v2_size
    for code, p in reply_points(src, seat, own, legal).items():
        if p:
            out[start + code] = p / MOVE_POINTS_DIVISOR


def encode_observation_v3(view: SeatView, out: np.ndarray | None = None) -> np.ndarray:
    """Version 3 of a seat's view: :func:`~dominoes_env.obs.v2.encode_observation`, then
    ``reply_points`` (``out`` as there, of this version's size)."""
    lay = observation_layout_v3(view.rules) if isinstance(view, SeatView) else None
    return extend_view(view, lay, fill_reply_points, out)


def encode_hand_state_v3(lay: ObservationLayoutV3, hand, seat: int, scores, over: bool,
                         out: np.ndarray | None = None, legal=None) -> np.ndarray:
    """Version 3 straight from a full state (the environments' fast path; equal to
    :func:`encode_observation_v3` of the view)."""
    return extend_hand_state(lay, hand, seat, scores, over, fill_reply_points, out, legal)


register(ObservationSpec(
    version=VERSION,
    summary="version 2 plus reply_points: the next seat's best answer to each legal move",
    layout=observation_layout_v3,
    encode=encode_observation_v3,
    encode_state=encode_hand_state_v3,
    takes_legal=True,
))
