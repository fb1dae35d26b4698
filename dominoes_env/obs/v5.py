"""Observation version 5: version 4 (:mod:`dominoes_env.obs.v4`) plus the lookahead of the seats
after the next one (:func:`dominoes_env.lookahead.later_replies`): at three and four seats, what
each later seat could score right after each legal move, as if the seats between it passed.

Version 4 looks one seat ahead: the next seat's best answer to a move, how likely it holds one,
and what the move sets up for this seat. At three and four seats the seat after the next plays
before this one again too (in partnerships it is the partner: its answers are this side's
chances), and the layout a move leaves is what it sees unless the next seat changes it.

===================  =========  =========  ==========  ============================================
block                size       2p d6      4p d6       meaning
===================  =========  =========  ==========  ============================================
(version 4)          D4         0:570      0:588       every block of version 4, unchanged
later_reply_points   (n-2)*T*4  570:570    588:812     per later seat (``seat + 2``, then
                                                       ``seat + 3``) and action code, the most
                                                       points it could score with one play of the
                                                       tiles it may hold on the layout that legal
                                                       move leaves / 20 (0 for the others and when
                                                       it is not this seat's turn)
later_reply_chance   (n-2)*T*4  570:570    812:1036    per later seat and action code, the chance
                                                       it holds a tile that would score there: its
                                                       hand drawn at random from the tiles it may
                                                       hold (0 likewise)
===================  =========  =========  ==========  ============================================

With two seats there is no later seat: version 5 is version 4 there. Pick it with
``obs_version=5`` (the environments' option, ``train_jax --obs-version 5``). The JAX game
computes the same float32 values (:mod:`dominoes_env.jax.observation`).

>>> from dominoes_env.core import MatchState, RuleConfig
>>> match = MatchState(RuleConfig(num_players=3), seed=3)
>>> obs = encode_observation_v5(match.view(match.turn))
>>> lay = observation_layout_v5(match.rules)
>>> obs.shape, lay.later_reply_points, lay.later_reply_chance
((804,), slice(580, 692, None), slice(692, 804, None))
"""

from __future__ import annotations

from types import MappingProxyType

import numpy as np

from ..core import RuleConfig, SeatView
from ..lookahead import later_replies, reply_chance_table
from . import ObservationSpec, cached_layout, register
from .v2 import MOVE_POINTS_DIVISOR, extend_hand_state, extend_view
from .v4 import ObservationLayoutV4, fill_lookahead

VERSION = 5

#: block -> what it holds: version 4's blocks, then this version's
MEANINGS = MappingProxyType({
    **ObservationLayoutV4.MEANINGS,
    "later_reply_points": ("per later seat and action code, its best play on the layout that "
                           "move leaves / 20"),
    "later_reply_chance": ("per later seat and action code, the chance it holds a tile that "
                           "scores there"),
})


class ObservationLayoutV5(ObservationLayoutV4):
    """Version 4's layout plus the ``later_reply_points`` and ``later_reply_chance`` slices at
    its end, each ``num_players - 2`` rows of ``num_actions`` values (seat ``seat + 2`` first;
    empty at two seats). Get the shared instance with :func:`observation_layout_v5`."""

    version = VERSION
    MEANINGS = MEANINGS

    def __init__(self, rules: RuleConfig):
        super().__init__(rules)
        self.v4_size = self.size
        later = (rules.num_players - 2) * self.num_actions
        self.add_block("later_reply_points", later,
                       np.float32(8 * rules.max_pip / MOVE_POINTS_DIVISOR))
        self.add_block("later_reply_chance", later, 1.0)


def observation_layout_v5(rules: RuleConfig) -> ObservationLayoutV5:
    """The (cached) :class:`ObservationLayoutV5` of ``rules``."""
    return cached_layout(ObservationLayoutV5, rules)


def fill_later_lookahead(lay: ObservationLayoutV5, out: np.ndarray, src, seat: int, own: int,
                         legal) -> None:
    """Write version 4's lookahead blocks, then ``later_reply_points`` and
    ``later_reply_chance``, into ``out`` (a :data:`~.v2.Fill`)."""
    fill_lookahead(lay, out, src, seat, own, legal)
    n, actions = lay.num_players, lay.num_actions
    if n <= 2:
        return
    sizes, replies = later_replies(src, seat, own, legal)
    held = [src.hand_sizes[(seat + k) % n] for k in range(2, n)]
    table = reply_chance_table(lay.num_tiles)
    points, chance = lay.later_reply_points.start, lay.later_reply_chance.start
    for code, per_seat in replies.items():
        for i, (reply, scoring) in enumerate(per_seat):
            out[points + i * actions + code] = reply / MOVE_POINTS_DIVISOR
            out[chance + i * actions + code] = table[held[i], sizes[i], scoring]


def encode_observation_v5(view: SeatView, out: np.ndarray | None = None) -> np.ndarray:
    """Version 5 of a seat's view: :func:`~dominoes_env.obs.v4.encode_observation_v4`, then
    ``later_reply_points`` and ``later_reply_chance`` (``out`` as there, of this version's
    size)."""
    lay = observation_layout_v5(view.rules) if isinstance(view, SeatView) else None
    return extend_view(view, lay, fill_later_lookahead, out)


def encode_hand_state_v5(lay: ObservationLayoutV5, hand, seat: int, scores, over: bool,
                         out: np.ndarray | None = None, legal=None) -> np.ndarray:
    """Version 5 straight from a full state (the environments' fast path; equal to
    :func:`encode_observation_v5` of the view)."""
    return extend_hand_state(lay, hand, seat, scores, over, fill_later_lookahead, out, legal)


register(ObservationSpec(
    version=VERSION,
    summary="version 4 plus later_reply_points and later_reply_chance: at 3 and 4 seats, what "
            "each seat after the next could score right after each legal move",
    layout=observation_layout_v5,
    encode=encode_observation_v5,
    encode_state=encode_hand_state_v5,
    takes_legal=True,
))
