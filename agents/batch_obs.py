"""The observation (version 2, :mod:`dominoes_env.obs.v2`) of the seat to play in many rows of
a :class:`~agents.hand_batch.HandBatch` at once: what the ``guided`` agent's policy reads in its
batched rollouts (:mod:`agents.guided`). Versions 3 to 5 are these blocks plus the lookahead
ones, :mod:`agents.batch_lookahead` (its :func:`~agents.batch_lookahead.batch_encoder` picks the
encoder of a version).

A deliberate twin of the numpy encoder's ``encode_hand_state`` for a seat to play in a running
hand, written over arrays: the same float32 values, bit for bit, held equal to it by the
differential tests in ``tests/test_hand_batch.py``. The block layout is read from
:func:`~dominoes_env.obs.v2.observation_layout`; the scales are the module table's.

>>> import random
>>> from dominoes_env.core import DealSampler, MatchState
>>> from dominoes_env.obs.v2 import encode_observation
>>> from agents.hand_batch import HandBatch
>>> view = MatchState(seed=1).view(0)
>>> batch = HandBatch(view, [DealSampler.from_view(view).sample(random.Random(0))], [0])
>>> idx = batch.running()
>>> x = BatchEncoder(view.rules).encode(batch, idx, *batch.moves(idx))
>>> bool((x[0] == encode_observation(view)).all())
True
"""

from __future__ import annotations

import numpy as np

from dominoes_env.core import RuleConfig
from dominoes_env.obs.v2 import MOVE_POINTS_DIVISOR, SCORE_CAP, observation_layout

from .hand_batch import HandBatch


class BatchEncoder:
    """The version 2 observation of the seat to play, for rows of a :class:`HandBatch` of
    ``rules``."""

    version = 2

    def __init__(self, rules: RuleConfig):
        lay = self.layout = observation_layout(rules)
        self.size = lay.size
        n, T, V = lay.num_players, lay.num_tiles, lay.num_values
        self.n, self.T, self.V = n, T, V
        b = lay.blocks
        self.at = {name: s.start for name, s in b.items()}
        #: [seat, k]: relative seat k + 1 of seat (the others, in turn order)
        self.others = np.array([rules.relative_seats(s)[1:] for s in range(n)], np.int64)
        #: [seat, k]: the k-th relative side of seat (own side first)
        self.rel_sides = np.array([rules.relative_sides(s) for s in range(n)], np.int64)
        self.count_scale = 1.0 / (8 * rules.max_pip)
        self.hand_scale = 1.0 / rules.hand_size
        self.bone_scale = 1.0 / max(1, rules.boneyard_size)
        self.score_scale = 1.0 / rules.target_score
        self.value_bits = (1 << np.arange(V)).astype(np.int64)
        self.low = np.array(rules.tiles.low, np.int64)
        self.end_offsets = np.arange(4) * V  # end e's values start at end_value + e * V

    def encode(self, batch: HandBatch, idx: np.ndarray, which: np.ndarray, codes: np.ndarray,
               counts: np.ndarray) -> np.ndarray:
        """``float32[len(idx), size]``: the observation of the seat to play in rows ``idx``
        (running, each seat on its own turn), with ``(which, codes, counts)`` the rows' legal
        moves from :meth:`HandBatch.moves` (they fill the ``move_points`` block)."""
        at, n, T, V, size = self.at, self.n, self.T, self.V, self.size
        k = len(idx)
        x = np.zeros((k, size), np.float32)
        xf = x.ravel()  # (ones are put at flat indices: faster than 2-d fancy indexing)
        base = np.arange(k) * size
        seat = batch.turn.take(idx)
        # (rows are gathered with take: much faster than numpy's fancy indexing of rows)
        x[:, at["hand"]:at["hand"] + T] = batch.hands.reshape(-1, T).take(idx * n + seat,
                                                                          axis=0)
        x[:, at["played"]:at["played"] + T] = batch.played.take(idx, axis=0)
        led = batch.lead.take(idx) >= 0
        ends = batch.ends.take(idx, axis=0)
        spinner = batch.spinner.take(idx)
        has_spinner = spinner >= 0
        cross = batch.cross_open.take(idx)
        # end_value: left / right once led; up / down once there is a spinner
        shows = np.empty((k, 4), bool)
        shows[:, :2] = led[:, None]
        shows[:, 2:] = has_spinner[:, None]
        xf.put(((base + at["end_value"])[:, None] + self.end_offsets + ends)[shows], 1.0)
        x[:, at["end_open"]:at["end_open"] + 2] = led[:, None]
        x[:, at["end_open"] + 2:at["end_open"] + 4] = (led & cross)[:, None]
        x[:, at["end_double"]:at["end_double"] + 4] = (batch.outer_double.take(idx, axis=0)
                                                         & shows)
        x[:, at["spinner"]] = has_spinner
        xf.put((base + at["spinner_value"] + self.low.take(np.maximum(spinner, 0)))[has_spinner],
               1.0)
        x[:, at["spinner_free"]:at["spinner_free"] + 2] = (batch.spinner_free.take(idx, axis=0)
                                                           & has_spinner[:, None])
        count = batch.count.take(idx)
        xf.put((base + at["count_mod5"] + count % 5)[led], 1.0)
        x[:, at["turn"]] = 1.0  # the seat to play is relative seat 0
        others = self.others.take(seat, axis=0)  # [k, n - 1]
        rel_seats = (idx * n)[:, None] + others
        lacks = batch.known_lacks.ravel().take(rel_seats)  # [k, n - 1] value bitmasks
        bits = (lacks[:, :, None] & self.value_bits) > 0
        x[:, at["others_lacks"]:at["others_lacks"] + (n - 1) * V] = bits.reshape(k, -1)
        x[:, at["count"]] = np.where(led, count, 0) * self.count_scale
        sizes = batch.sizes.ravel().take(rel_seats)
        x[:, at["others_hand_size"]:at["others_hand_size"] + n - 1] = sizes * self.hand_scale
        drawn = batch.drawn.take(idx)
        x[:, at["boneyard"]] = (batch.bone.shape[1] - drawn) * self.bone_scale
        x[:, at["boneyard"] + 1] = (batch.limit - drawn) * self.bone_scale
        S = batch.gains.shape[1]
        rel_sides = self.rel_sides.take(seat, axis=0)  # [k, S]
        scores = batch.scores.take(rel_sides) + batch.gains.ravel().take(
            (idx * S)[:, None] + rel_sides)
        rel = scores * self.score_scale
        x[:, at["scores"]:at["scores"] + S] = np.minimum(rel, SCORE_CAP)
        points = batch.tb.points.take(counts)
        xf.put(which * size + at["move_points"] + codes, points / MOVE_POINTS_DIVISOR)
        return x
