"""Observation version 4: version 3 (:mod:`dominoes_env.obs.v3`) plus two more lookahead
blocks per legal move (:func:`dominoes_env.lookahead.move_lookahead`): how likely the next seat
is to hold a scoring answer, and what this seat could score next with the tiles it keeps.

================  =========  =========  ==========  ===============================================
block             size       2p d6      4p d6       meaning
================  =========  =========  ==========  ===============================================
(version 3)       D3         0:346      0:364       every block of version 3, unchanged
reply_chance      T*4        346:458    364:476     per action code, the chance that the next seat
                                                    holds a tile that would score right after that
                                                    legal move: its hand drawn at random from the
                                                    tiles it may hold (0 for the others and when it
                                                    is not this seat's turn)
follow_up         T*4        458:570    476:588     per action code, the most points this seat
                                                    could score with one of the tiles it keeps
                                                    after that legal move, on the layout the move
                                                    leaves / 20 (0 likewise)
================  =========  =========  ==========  ===============================================

Pick it with ``obs_version=4`` (the environments' option, ``train_jax --obs-version 4``). The JAX
game computes the same float32 values (:mod:`dominoes_env.jax.observation`).

>>> from dominoes_env.core import MatchState
>>> match = MatchState(seed=3)
>>> obs = encode_observation_v4(match.view(match.turn))
>>> lay = observation_layout_v4(match.rules)
>>> obs.shape, lay.reply_chance, lay.follow_up
((570,), slice(346, 458, None), slice(458, 570, None))
"""

from __future__ import annotations

from types import MappingProxyType

import numpy as np

from ..core import RuleConfig, SeatView
from ..lookahead import move_lookahead, reply_chance_table
from . import ObservationSpec, cached_layout, register
from .v2 import MOVE_POINTS_DIVISOR, extend_hand_state, extend_view
from .v3 import ObservationLayoutV3

VERSION = 4

#: block -> what it holds: version 3's blocks, then this version's
MEANINGS = MappingProxyType({
    **ObservationLayoutV3.MEANINGS,
    "reply_chance": ("per action code, the chance the next seat holds a tile that scores right "
                     "after that move"),
    "follow_up": ("per action code, this seat's best next play with the tiles it keeps, on the "
                  "layout that move leaves / 20"),
})


class ObservationLayoutV4(ObservationLayoutV3):
    """Version 3's layout plus the ``reply_chance`` and ``follow_up`` slices at its end. Get the
    shared instance with :func:`observation_layout_v4`."""

    version = VERSION
    MEANINGS = MEANINGS

    def __init__(self, rules: RuleConfig):
        super().__init__(rules)
        self.v3_size = self.size
        self.add_block("reply_chance", self.num_actions, 1.0)
        self.add_block("follow_up", self.num_actions,
                       np.float32(8 * rules.max_pip / MOVE_POINTS_DIVISOR))


def observation_layout_v4(rules: RuleConfig) -> ObservationLayoutV4:
    """The (cached) :class:`ObservationLayoutV4` of ``rules``."""
    return cached_layout(ObservationLayoutV4, rules)


def fill_lookahead(lay: ObservationLayoutV4, out: np.ndarray, src, seat: int, own: int,
                   legal) -> None:
    """Write the ``reply_points``, ``reply_chance`` and ``follow_up`` blocks into ``out`` (a
    :data:`~.v2.Fill`; one lookahead pass per move serves all three)."""
    reply, chance, follow = lay.reply_points.start, lay.reply_chance.start, lay.follow_up.start
    held = src.hand_sizes[(seat + 1) % lay.num_players]
    table = reply_chance_table(lay.num_tiles)
    for code, (points, scoring, possible, mine) in move_lookahead(src, seat, own, legal).items():
        out[reply + code] = points / MOVE_POINTS_DIVISOR
        out[chance + code] = table[held, possible, scoring]
        out[follow + code] = mine / MOVE_POINTS_DIVISOR


def encode_observation_v4(view: SeatView, out: np.ndarray | None = None) -> np.ndarray:
    """Version 4 of a seat's view: :func:`~dominoes_env.obs.v2.encode_observation`, then
    ``reply_points``, ``reply_chance`` and ``follow_up`` (``out`` as there, of this version's
    size)."""
    lay = observation_layout_v4(view.rules) if isinstance(view, SeatView) else None
    return extend_view(view, lay, fill_lookahead, out)


def encode_hand_state_v4(lay: ObservationLayoutV4, hand, seat: int, scores, over: bool,
                         out: np.ndarray | None = None, legal=None) -> np.ndarray:
    """Version 4 straight from a full state (the environments' fast path; equal to
    :func:`encode_observation_v4` of the view)."""
    return extend_hand_state(lay, hand, seat, scores, over, fill_lookahead, out, legal)


register(ObservationSpec(
    version=VERSION,
    summary="version 3 plus reply_chance and follow_up: how likely the next seat can score "
            "after each legal move, and this seat's best next play",
    layout=observation_layout_v4,
    encode=encode_observation_v4,
    encode_state=encode_hand_state_v4,
    takes_legal=True,
))
