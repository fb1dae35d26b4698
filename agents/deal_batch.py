"""Many sampled deals of the hidden tiles at once, as numpy arrays: what the search agents
(:mod:`agents.search`, :mod:`agents.guided`) draw for a decision.

:class:`~dominoes_env.core.DealSampler` draws one deal at a time in Python (its shuffles were
a sixth of a ``guided`` decision). :class:`DealBatchSampler` walks the same counts for a whole
batch: per group of tiles that the same seats may hold, it picks how many tiles each seat gets
with the sampler's probabilities (for all deals in the same state at once), deals the group's
tiles to those places in a uniformly random order (``Generator.permuted``), and shuffles the
boneyard; so its deals have the sampler's distribution (uniform among the deals that fit the
view, in a uniformly random boneyard order), which ``tests/test_deal_batch.py`` checks by a
chi-square test. The walk's probabilities are the sampler's exact counts rounded to float64.

>>> from dominoes_env.core import MatchState
>>> view = MatchState(seed=3).view(0)
>>> deals = DealBatchSampler(view).sample(np.random.default_rng(0), 5)
>>> deals.hands.shape, deals.bone.shape  # 5 deals, 2 seats, 28 tiles; 14 in the boneyard
((5, 2, 28), (5, 14))
>>> hands, bone = deals.to_list()[0]  # as DealSampler.sample gives one
>>> hands[0] == view.hand, [h.bit_count() for h in hands] == list(view.hand_sizes)
(True, True)
"""

from __future__ import annotations

import numpy as np

from dominoes_env.core import DealSampler, SeatView


def bits_to_bool(masks: list[int], width: int) -> np.ndarray:
    """Bitmasks as a ``bool[len(masks), width]`` array (bit ``i`` of mask ``k`` at ``[k, i]``)."""
    nbytes = (width + 7) // 8
    raw = b"".join(m.to_bytes(nbytes, "little") for m in masks)
    out = np.unpackbits(np.frombuffer(raw, np.uint8).reshape(len(masks), nbytes), axis=1,
                        count=width, bitorder="little")
    return out.astype(bool)


def bool_to_bits(rows: np.ndarray) -> list[int]:
    """The rows of a ``bool[k, width]`` array as bitmasks (the inverse of
    :func:`bits_to_bool`)."""
    packed = np.packbits(rows, axis=1, bitorder="little")
    return [int.from_bytes(row, "little") for row in packed.tolist()]


class Deals:
    """``len(bone)`` deals of one view's tiles: ``hands[d, seat, tile]`` (every seat's, the
    viewer's own included) and ``bone[d, k]``, the boneyard in draw order."""

    __slots__ = ("hands", "bone")

    def __init__(self, hands: np.ndarray, bone: np.ndarray):
        if hands.ndim != 3 or bone.ndim != 2 or len(hands) != len(bone):
            raise ValueError(f"hands of shape {hands.shape} and a boneyard of shape "
                             f"{bone.shape} are not one set of deals")
        self.hands, self.bone = hands, bone

    def __len__(self) -> int:
        return len(self.bone)

    @classmethod
    def from_list(cls, deals, num_tiles: int) -> Deals:
        """``deals`` as :meth:`DealSampler.sample <dominoes_env.core.DealSampler.sample>`
        gives them (``(hands, boneyard)``, ``hands`` a bitmask per seat) as arrays."""
        deals = list(deals)
        if not deals:
            raise ValueError("no deals")
        n, B = len(deals[0][0]), len(deals[0][1])
        hands = bits_to_bool([h for hs, _bone in deals for h in hs], num_tiles)
        bone = np.array([list(b) for _hs, b in deals], np.int64).reshape(len(deals), B)
        return cls(hands.reshape(len(deals), n, num_tiles), bone)

    def to_list(self) -> list[tuple[list[int], list[int]]]:
        """The deals as :meth:`DealSampler.sample <dominoes_env.core.DealSampler.sample>` gives
        them: ``(hands, boneyard)``, ``hands`` a bitmask per seat, ``boneyard`` a list."""
        D, n, T = self.hands.shape
        masks = bool_to_bits(self.hands.reshape(D * n, T))
        bones = self.bone.tolist()
        return [(masks[d * n:(d + 1) * n], bones[d]) for d in range(D)]

    @classmethod
    def concat(cls, parts: list[Deals]) -> Deals:
        """The deals of ``parts``, one after the other."""
        if len(parts) == 1:
            return parts[0]
        return cls(np.concatenate([p.hands for p in parts]),
                   np.concatenate([p.bone for p in parts]))

    def take(self, idx) -> Deals:
        """The deals at positions ``idx`` (repeats allowed), in that order."""
        idx = np.asarray(idx, np.intp)
        return Deals(self.hands.take(idx, axis=0), self.bone.take(idx, axis=0))


class DealBatchSampler:
    """Draws batches of the deals of the tiles ``view.seat`` cannot see, each as
    :class:`~dominoes_env.core.DealSampler` draws one (its counts, built here or given as
    ``sampler``)."""

    def __init__(self, view: SeatView, sampler: DealSampler | None = None):
        self.sampler = sampler = DealSampler.from_view(view) if sampler is None else sampler
        rules = view.rules
        self.n, self.T = rules.num_players, rules.tiles.num_tiles
        self.B = sampler.boneyard_size
        self.groups = sampler.groups
        #: the unseen tiles, group after group: a deal gives position p a label (below)
        self.order = np.array([t for _seats, tiles in self.groups for t in tiles], np.int64)
        #: label -> seat: a label i < k is the hidden seat sampler.seats[i]; k, the boneyard,
        #: is row n of the work array (dropped)
        self.seat_of = np.array([*sampler.seats, self.n], np.int64)
        self.k = len(sampler.seats)
        self.seat = view.seat
        self.own = bits_to_bool([view.hand], self.T)[0]

    def sample(self, rng: np.random.Generator, count: int) -> Deals:
        """``count`` deals drawn independently from ``rng``."""
        D, k, sampler = count, self.k, self.sampler
        U = len(self.order)
        label = np.empty((D, U), np.int64)
        states = [sampler.need]  # the needs the deals are in, by id
        state = np.zeros(D, np.intp)
        pos = 0
        for j, (_seats, tiles) in enumerate(self.groups):
            given = np.empty((D, k), np.int64)
            after: dict[tuple[int, ...], int] = {}
            new_state = np.empty(D, np.intp)
            for sid, need in enumerate(states):
                rows = (np.arange(D) if len(states) == 1
                        else np.flatnonzero(state == sid))
                if not len(rows):
                    continue
                givens, rests, cumulative = sampler.splits(j, need)
                if len(givens) == 1:
                    pick = np.zeros(len(rows), np.intp)
                else:
                    cum = np.array([float(c) for c in cumulative])
                    pick = np.minimum(cum.searchsorted(rng.random(len(rows)) * cum[-1], "right"),
                                      len(givens) - 1)
                given[rows] = np.array(givens, np.int64).reshape(len(givens), k)[pick]
                ids = np.array([after.setdefault(rest, len(after)) for rest in rests], np.intp)
                new_state[rows] = ids[pick]
            states, state = list(after), new_state
            # the group's places: seat i for given[i] of them, in seat order, then the
            # boneyard's; the tiles go to the places in a uniformly random order
            m = len(tiles)
            bounds = given.cumsum(axis=1)
            places = (np.arange(m)[None, :, None] >= bounds[:, None, :]).sum(axis=2)
            label[:, pos:pos + m] = rng.permuted(places, axis=1)
            pos += m
        hands = np.zeros((D, self.n + 1, self.T), bool)
        hands[np.arange(D)[:, None], self.seat_of[label], self.order] = True
        hands[:, self.seat] = self.own
        bone = np.broadcast_to(self.order, (D, U))[label == k].reshape(D, self.B)
        return Deals(np.ascontiguousarray(hands[:, :self.n]), rng.permuted(bone, axis=1))
