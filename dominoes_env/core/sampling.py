"""Sampling the tiles a seat cannot see, consistently with what it has seen: the game logic
behind every search agent's guess of the hidden hands and the OpenSpiel state's
``resample_from_infostate``.

From a :class:`~dominoes_env.core.SeatView` the unseen tiles (other hands plus the boneyard) are
known as a set, and so is how many each other seat holds, how many lie in the boneyard, and
which pip values each seat is known to lack (from its draws and passes). :class:`DealSampler`
draws an assignment of the unseen tiles to the other hands and the boneyard **uniformly** among
all assignments that fit those facts, then a uniformly random boneyard order. It is exact in
its support (every fitting deal can come out, no other can) and never loops: it counts the
fitting deals once (a small dynamic programme over groups of tiles that the same seats may hold)
and then samples by walking the counts.

>>> from dominoes_env.core import MatchState
>>> import random
>>> match = MatchState(seed=3)
>>> view = match.view(match.turn)
>>> sampler = DealSampler.from_view(view)
>>> hands, boneyard = sampler.sample(random.Random(0))
>>> [h.bit_count() for h in hands] == list(view.hand_sizes), len(boneyard) == view.boneyard_left
(True, True)
>>> state = determinize(view, random.Random(0))  # a full HandState to simulate from
>>> state.turn == view.turn, state.hands[view.seat] == view.hand
(True, True)
"""

from __future__ import annotations

import random
from bisect import bisect_right
from collections.abc import Mapping
from math import comb

from .hand import HandState
from .tiles import TileSet, iter_bits
from .validation import ParameterTypeError, as_int, check_rng, short_repr
from .view import SeatView


def check_view(view: SeatView, name: str = "view") -> SeatView:
    """``view`` if it is a :class:`SeatView`, else a ``TypeError`` naming what came instead
    (``None``, or a ``HandState``, with a hint to take ``hand.view(seat)``)."""
    if not isinstance(view, SeatView):
        hint = "; take one with hand.view(seat)" if isinstance(view, HandState) else ""
        raise TypeError(f"{name}={short_repr(view)} must be a SeatView, not "
                        f"{type(view).__name__}{hint}")
    return view


def _checked(tiles: TileSet, unseen: int, sizes: Mapping[int, int], boneyard_size: int,
             lacks: Mapping[int, int] | None) -> tuple[int, dict[int, int], int, dict[int, int]]:
    """:class:`DealSampler`'s arguments as Python ints, checked: ``tiles`` a :class:`TileSet`,
    ``unseen`` a mask of its tiles, ``sizes`` and ``lacks`` mappings from seats (integers
    >= 0; a seat in ``lacks`` is one of ``sizes``) to integers, ``lacks`` masks of its pip
    values; a ``TypeError`` / ``ValueError`` naming the argument otherwise (``unseen=-1``,
    ``unseen=7.0``, ``sizes=[1]``, a seat of ``lacks`` that is no seat of ``sizes``)."""
    if not isinstance(tiles, TileSet):
        raise ParameterTypeError(f"tiles={short_repr(tiles)} must be a TileSet (rules.tiles or "
                                 f"tile_set(max_pip)), not {type(tiles).__name__}")
    unseen = as_int("unseen", unseen, 0, (1 << tiles.num_tiles) - 1)
    for name, value in (("sizes", sizes), ("lacks", lacks)):
        if not isinstance(value, Mapping) and not (name == "lacks" and value is None):
            raise ParameterTypeError(f"{name}={short_repr(value)} must be a mapping from seats "
                                     f"to integers, not {type(value).__name__}")
    sizes = {as_int("a seat of sizes", seat, 0): as_int(f"sizes[{seat!r}]", n)
             for seat, n in sizes.items()}
    boneyard_size = as_int("boneyard_size", boneyard_size)
    top = (1 << tiles.num_values) - 1
    checked = {}
    for seat, mask in (lacks or {}).items():
        if as_int("a seat of lacks", seat, 0) not in sizes:
            raise ValueError(f"lacks names seat {seat!r}, which is not a seat of sizes "
                             f"({', '.join(map(str, sizes)) or 'none'})")
        checked[int(seat)] = as_int(f"lacks[{seat!r}]", mask, 0, top)
    return unseen, sizes, boneyard_size, checked


class DealSampler:
    """Uniform sampler of hidden deals.

    ``unseen``: bitmask of the hidden tiles; ``sizes``: tiles held per hidden seat
    (``{seat: count}``); ``boneyard_size``: tiles in the boneyard; ``lacks``: per seat, a bitmask
    of pip values it cannot hold. The unseen tiles must number exactly ``sum(sizes) +
    boneyard_size``. Raises ``ValueError`` when the numbers disagree or no deal fits.

    >>> from dominoes_env.core import tile_set
    >>> ts = tile_set(6)
    >>> unseen = (1 << ts.index(0, 0)) | (1 << ts.index(0, 1)) | (1 << ts.index(2, 3))
    >>> s = DealSampler(ts, unseen, {1: 1}, 2, lacks={1: 0b1})  # seat 1 holds no 0
    >>> s.num_deals  # seat 1 must hold [2|3]; the boneyard holds the other two
    1
    >>> hands, bone = s.sample(random.Random(5))
    >>> ts.mask_tiles(hands[1]), sorted(bone)
    ([Tile(low=2, high=3)], [0, 1])
    """

    def __init__(self, tiles: TileSet, unseen: int, sizes: Mapping[int, int], boneyard_size: int,
                 lacks: Mapping[int, int] | None = None):
        unseen, sizes, boneyard_size, lacks = _checked(tiles, unseen, sizes, boneyard_size, lacks)
        total = unseen.bit_count()
        if any(n < 0 for n in sizes.values()) or boneyard_size < 0:
            raise ValueError(
                f"hand sizes {dict(sizes)} and boneyard size {boneyard_size} must be >= 0")
        if sum(sizes.values()) + boneyard_size != total:
            raise ValueError(
                f"{total} unseen tiles cannot fill hands of {dict(sizes)} tiles plus a boneyard "
                f"of {boneyard_size}"
            )
        self.tiles = tiles
        self.unseen = unseen
        self.boneyard_size = boneyard_size
        # only seats that hold tiles take part; they are numbered 0..k-1 in `self.seats`
        self.seats = tuple(s for s in sorted(sizes) if sizes[s] > 0)
        self._need = tuple(sizes[s] for s in self.seats)
        self._all_seats = tuple(sorted(sizes))
        # (seat, own hand, players) when built from a view
        self._view_seat: tuple[int, int, int] | None = None
        groups: dict[int, list[int]] = {}
        low, high = tiles.low, tiles.high
        for t in iter_bits(unseen):
            values = 1 << low[t] | 1 << high[t]
            allowed = 0
            for i, s in enumerate(self.seats):
                if not values & lacks.get(s, 0):
                    allowed |= 1 << i
            groups.setdefault(allowed, []).append(t)
        # groups that fewer seats may hold come first, so the last groups are the flexible ones
        # and the capacity bounds below leave them few choices
        k = len(self.seats)
        self._groups = sorted(
            ((tuple(i for i in range(k) if allowed >> i & 1), tuple(ts))
             for allowed, ts in groups.items()),
            key=lambda g: (len(g[0]), g[0]),
        )
        # _cap[j][i]: tiles of groups j.. that seat i may hold; _left[j]: tiles of groups j..
        self._cap = [[0] * k for _ in range(len(self._groups) + 1)]
        self._left = [0] * (len(self._groups) + 1)
        for j in range(len(self._groups) - 1, -1, -1):
            seats, ts = self._groups[j]
            self._left[j] = self._left[j + 1] + len(ts)
            self._cap[j] = list(self._cap[j + 1])
            for i in seats:
                self._cap[j][i] += len(ts)
        self._ways: dict[tuple[int, tuple[int, ...]], int] = {}
        self._choices: dict[tuple[int, tuple[int, ...]], tuple] = {}
        #: the number of ways to split the unseen tiles between hands and boneyard (as sets)
        self.num_deals = self._count(0, self._need)
        if self.num_deals == 0:
            raise ValueError(
                "no deal of the unseen tiles fits the hand sizes and the values the seats are "
                "known to lack; the view is inconsistent"
            )

    @classmethod
    def from_view(cls, view: SeatView) -> DealSampler:
        """The sampler of what ``view.seat`` cannot see."""
        check_view(view)
        others = {s: n for s, n in enumerate(view.hand_sizes) if s != view.seat}
        lacks = {s: view.known_lacks[s] for s in others}
        sampler = cls(view.rules.tiles, view.unseen, others, view.boneyard_left, lacks)
        sampler._view_seat = (view.seat, view.hand, len(view.hand_sizes))
        return sampler

    # -- counting --------------------------------------------------------------------------
    def _splits(self, j: int, need: tuple[int, ...]):
        """Every way ``(x, weight)`` to give ``x[i]`` tiles of group ``j`` to its seats (the rest
        to the boneyard) that leaves the later groups able to fill every hand."""
        seats, tiles = self._groups[j]
        cap = self._cap[j + 1]
        spare = self._left[j + 1] - sum(need)  # later tiles that must go to the boneyard
        out: list[tuple[tuple[int, ...], int]] = []
        for i in range(len(need)):
            if i not in seats and need[i] > cap[i]:
                return out

        def rec(m: int, left: int, given: list[int], weight: int) -> None:
            if m == len(seats):
                if spare + sum(given) >= 0:
                    out.append((tuple(given), weight))
                return
            i = seats[m]
            for x in range(max(0, need[i] - cap[i]), min(need[i], left) + 1):
                given[i] = x
                rec(m + 1, left - x, given, weight * comb(left, x))
            given[i] = 0

        rec(0, len(tiles), [0] * len(need), 1)
        return out

    def _count(self, j: int, need: tuple[int, ...]) -> int:
        """Ways to deal groups ``j..`` so each hidden seat gets exactly ``need`` more tiles."""
        key = (j, need)
        ways = self._ways.get(key)
        if ways is not None:
            return ways
        if j == len(self._groups):
            ways = 1 if not any(need) else 0
        elif sum(need) > self._left[j]:
            ways = 0
        else:
            ways = 0
            givens, rests, cumulative = [], [], []
            for given, weight in self._splits(j, need):
                rest = tuple(a - b for a, b in zip(need, given, strict=True))
                w = weight * self._count(j + 1, rest)
                if w:
                    ways += w
                    givens.append(given)
                    rests.append(rest)
                    cumulative.append(ways)
            self._choices[key] = (givens, rests, cumulative)
        self._ways[key] = ways
        return ways

    # -- the walk, for samplers of many deals at once (agents.deal_batch) --------------------
    @property
    def groups(self) -> tuple[tuple[tuple[int, ...], tuple[int, ...]], ...]:
        """The unseen tiles in the groups :meth:`sample` deals one after the other: ``(seats,
        tiles)``, ``seats`` the positions in :attr:`seats` of the hidden seats that may hold
        the group's tiles (the rest go to the boneyard)."""
        return tuple(self._groups)

    @property
    def need(self) -> tuple[int, ...]:
        """The tiles each seat of :attr:`seats` holds: the state the walk starts from."""
        return self._need

    def splits(self, j: int, need: tuple[int, ...]):
        """``(givens, rests, cumulative)``: at group ``j`` with seats still needing ``need``
        tiles (a state the walk can reach), every way to split the group that leaves a fitting
        deal (``givens[k][i]`` tiles to seat ``i``, the rest to the boneyard), the needs it
        leaves, and the running totals of the deals each way leads to (a way is taken with
        probability ``(cumulative[k] - cumulative[k - 1]) / cumulative[-1]``, the group's tiles
        then shuffled uniformly). A state the walk cannot reach is a ``ValueError``."""
        try:
            return self._choices[j, need]
        except (KeyError, TypeError):  # a KeyError named only the pair
            raise ValueError(f"group {short_repr(j)} with needs {short_repr(need)} is no state "
                             f"the walk reaches (groups 0..{len(self._groups) - 1}, needs a "
                             "tuple of the tiles each seat still needs)") from None

    # -- sampling --------------------------------------------------------------------------
    def sample(self, rng: random.Random):
        """One uniformly drawn deal of the unseen tiles.

        Returns ``(hands, boneyard)``. Built with :meth:`from_view`, ``hands`` is a list of
        bitmasks for every seat (the viewer's own hand included), ready for
        :meth:`HandState.from_view <dominoes_env.core.HandState.from_view>`; otherwise it is a
        dict ``{seat: bitmask}`` for the hidden seats. ``boneyard`` lists tile indices in draw
        order. ``rng`` is a ``random.Random`` (:func:`~.validation.check_rng`).
        """
        if not isinstance(rng, random.Random):
            check_rng("rng", rng)
        masks = [0] * len(self.seats)
        boneyard: list[int] = []
        need = self._need
        for j, (seats, tiles) in enumerate(self._groups):
            givens, rests, cumulative = self._choices[j, need]
            k = 0 if len(givens) == 1 else bisect_right(cumulative, rng.randrange(cumulative[-1]))
            given, need = givens[k], rests[k]
            order = list(tiles)
            rng.shuffle(order)
            pos = 0
            for i in seats:
                for t in order[pos:pos + given[i]]:
                    masks[i] |= 1 << t
                pos += given[i]
            boneyard.extend(order[pos:])
        rng.shuffle(boneyard)
        by_seat = dict.fromkeys(self._all_seats, 0)
        for i, s in enumerate(self.seats):
            by_seat[s] = masks[i]
        if self._view_seat is None:
            return by_seat, boneyard
        seat, own, n = self._view_seat
        return [own if s == seat else by_seat[s] for s in range(n)], boneyard


def determinize(view: SeatView, rng: random.Random,
                sampler: DealSampler | None = None) -> HandState:
    """A full :class:`~dominoes_env.core.HandState` consistent with ``view``, its hidden tiles
    drawn uniformly by ``sampler`` (built from the view when not given)."""
    check_view(view)
    check_rng("rng", rng)
    if sampler is None:
        sampler = DealSampler.from_view(view)
    elif not isinstance(sampler, DealSampler):
        raise ParameterTypeError(f"sampler={short_repr(sampler)} must be a DealSampler or None, "
                                 f"not {type(sampler).__name__}")
    hands, boneyard = sampler.sample(rng)
    return HandState.from_view(view, hands, boneyard)
