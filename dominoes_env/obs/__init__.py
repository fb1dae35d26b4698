"""Observation versions: the one registry of every version this package can encode.

An observation is a flat ``float32`` vector built from what one seat may know (a
:class:`~dominoes_env.core.SeatView`, or the same fields read from a full state). Every change
to its layout is a new version, and each version is one module that extends the one before
through this package's public API:

- :mod:`dominoes_env.obs.v2`: the layout table (hand, layout, counts, scores, move points);
- :mod:`dominoes_env.obs.v3`: version 2 plus ``reply_points``;
- :mod:`dominoes_env.obs.v4`: version 3 plus ``reply_chance`` and ``follow_up``;
- :mod:`dominoes_env.obs.v5`: version 4 plus ``later_reply_points`` and ``later_reply_chance``
  (the seats after the next one, at three and four seats).

Each registers an :class:`ObservationSpec` here (:func:`register`); :data:`VERSIONS` holds them
by number, :func:`observation_spec` looks one up, and :data:`DEFAULT_VERSION` is the version the
environments, the JAX game and exported policies use when none is named. A version's layout is
a subclass of :class:`ObservationLayout` (its parent version's layout class), built once per
rules by :func:`cached_layout`. Action codes and masks are in :mod:`dominoes_env.obs.actions`.

>>> observation_spec().version == DEFAULT_VERSION, sorted(VERSIONS)
(True, [2, 3, 4, 5])
>>> observation_spec(3).layout(RuleConfig()).table().splitlines()[-1].split()[:3]
['reply_points', '234:346', '112']
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np

from ..core import RuleConfig
from ..core.validation import is_bool, short_repr

#: the observation version used when none is named (the environments' ``obs_version``
#: option, the JAX game, exported policies)
DEFAULT_VERSION = 2

#: ends per tile in an action code (``code = tile_index * 4 + end``)
NUM_ENDS = 4


@dataclass(frozen=True)
class ObservationSpec:
    """One version of the observation: how it is laid out and encoded.

    ``layout(rules)`` returns the version's :class:`ObservationLayout` (``size``, ``low`` and
    ``high``: the Box bounds); ``encode(view, out=None)`` encodes a :class:`SeatView`;
    ``encode_state(layout, state, seat, scores, over, out=None)`` encodes ``seat``'s
    observation straight from a full state (the environments' fast path, equal to ``encode`` of
    the view). ``takes_legal``: ``encode_state`` also takes ``legal``, the seat's legal codes
    (``()`` when it is not to play), which the environments then pass instead of having them
    computed again. Policies record the version they were trained on; a version stays
    registered as long as this package can still encode it.
    """

    version: int
    summary: str
    layout: Callable[[RuleConfig], Any]
    encode: Callable[..., np.ndarray]
    encode_state: Callable[..., np.ndarray]
    takes_legal: bool = False


#: every observation version this package can encode, by version number
VERSIONS: dict[int, ObservationSpec] = {}


def register(spec: ObservationSpec) -> ObservationSpec:
    """Add an observation version to :data:`VERSIONS` (a version is registered once)."""
    if not isinstance(spec, ObservationSpec):
        raise TypeError(f"an observation spec is an ObservationSpec, not {type(spec).__name__}")
    if spec.version in VERSIONS:
        raise ValueError(f"observation version {spec.version} is already registered")
    VERSIONS[spec.version] = spec
    return spec


def observation_spec(version: int = DEFAULT_VERSION) -> ObservationSpec:
    """The registered :class:`ObservationSpec` of ``version`` (``ValueError`` naming the
    registered versions otherwise).

    >>> observation_spec(1)
    Traceback (most recent call last):
    ...
    ValueError: obs_version=1 is not available; allowed: 2, 3, 4, 5
    """
    spec = None
    if not is_bool(version):
        try:
            spec = VERSIONS.get(operator.index(version))
        except TypeError:
            spec = None
    if spec is None:
        allowed = ", ".join(map(str, sorted(VERSIONS)))
        raise ValueError(f"obs_version={short_repr(version)} is not available; allowed: {allowed}")
    return spec


class ObservationLayout:
    """Named blocks of one observation version's vector for one :class:`RuleConfig`.

    The base of every version's layout: it starts empty, and a version's ``__init__`` calls
    its parent's, then :meth:`add_block` for each block it appends (a new version only appends).
    Every block is an attribute holding its ``slice`` (``obs[lay.hand]``) and an entry of
    :attr:`blocks`; :attr:`MEANINGS` says what each block holds (a version's class extends its
    parent's mapping with its own blocks). Get the shared instance with :func:`cached_layout`.

    Attributes: ``rules``, ``num_tiles``, ``num_values``, ``num_players``, ``num_actions``,
    ``blocks``, ``size``, ``low`` / ``high`` (read-only ``float32`` bounds of every value),
    ``state_size`` (every hand and the boneyard, ``(n + 1) * T``, then the observation).
    """

    #: the version this layout encodes (each version's class sets it)
    version: int = 0
    #: block name -> what it holds (the meaning column of :meth:`table`)
    MEANINGS: Mapping[str, str] = MappingProxyType({})

    def __init__(self, rules: RuleConfig):
        if not isinstance(rules, RuleConfig):
            raise TypeError(f"rules must be a RuleConfig, not {type(rules).__name__}")
        ts = rules.tiles
        self.rules = rules
        self.num_tiles, self.num_values, self.num_players = (ts.num_tiles, ts.num_values,
                                                             rules.num_players)
        self.num_actions = ts.num_tiles * NUM_ENDS
        self.blocks: dict[str, slice] = {}
        self.size = 0
        self.low = self.high = np.zeros(0, dtype=np.float32)
        self.state_size = (self.num_players + 1) * self.num_tiles

    def add_block(self, name: str, size: int, high: float | np.ndarray = 1.0) -> slice:
        """Append the block ``name`` of ``size`` values, each in ``[0, high]`` (``high``: one
        number, or ``size`` of them), and return its slice (also set as attribute ``name``).
        The name must be new and have a meaning in :attr:`MEANINGS`."""
        if name in self.blocks or hasattr(self, name):
            raise ValueError(f"the observation already has a block or attribute {name!r}")
        if name not in self.MEANINGS:
            raise ValueError(f"block {name!r} has no meaning in {type(self).__name__}.MEANINGS")
        block = slice(self.size, self.size + size)
        self.blocks[name] = block
        setattr(self, name, block)
        self.size += size
        bound = np.broadcast_to(np.asarray(high, dtype=np.float32), (size,))
        self.high = np.concatenate([self.high, bound])
        self.low = np.zeros(self.size, dtype=np.float32)
        self.low.flags.writeable = False
        self.high.flags.writeable = False
        self.state_size = (self.num_players + 1) * self.num_tiles + self.size
        return block

    def value_outside(self, obs: np.ndarray) -> str | None:
        """The first value of ``obs`` (rows of :attr:`size` values) outside its block's bounds,
        as ``"row R: obs[C] = V is outside its block 'B' (LOW..HIGH)"``, or ``None``: no
        encoder of this layout writes it, so a file of saved observations that holds one is
        damaged (a reader refuses it). NaN compares as inside: check finiteness first.

        >>> from dominoes_env.core import RuleConfig
        >>> lay = observation_spec(2).layout(RuleConfig())
        >>> obs = np.zeros((2, lay.size), np.float32)
        >>> obs[1, 0] = 1e30
        >>> lay.value_outside(obs)
        "row 1: obs[0] = 1e+30 is outside its block 'hand' (0..1)"
        """
        outside = np.argwhere((obs < self.low) | (obs > self.high))
        if not outside.size:
            return None
        row, col = (int(i) for i in outside[0])
        block = next(name for name, s in self.blocks.items() if s.start <= col < s.stop)
        return (f"row {row}: obs[{col}] = {obs[row, col]:g} is outside its block {block!r} "
                f"({self.low[col]:g}..{self.high[col]:g})")

    def table(self) -> str:
        """The layout as a plain-text table: block, index range, size, meaning."""
        rows = [f"{'block':<18}{'range':<12}{'size':>5}  meaning"]
        for name, s in self.blocks.items():
            span = f"{s.start}:{s.stop}"
            rows.append(f"{name:<18}{span:<12}{s.stop - s.start:>5}  {self.MEANINGS[name]}")
        return "\n".join(rows)

    def __reduce__(self):
        # a version's fast-path tables may hold things that cannot be pickled (struct methods):
        # a pickled env (vector envs, multiprocessing) rebuilds its layout from the rules
        return cached_layout, (type(self), self.rules)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(size={self.size}, rules={self.rules!r})"


_LAYOUTS: dict[tuple[type, RuleConfig], ObservationLayout] = {}


def cached_layout(cls: type[ObservationLayout], rules: RuleConfig) -> ObservationLayout:
    """The shared instance of the layout class ``cls`` (a version's layout) for ``rules``."""
    if not isinstance(rules, RuleConfig):  # before the look-up: a dict is no key
        raise TypeError(f"rules must be a RuleConfig, not {type(rules).__name__}")
    lay = _LAYOUTS.get((cls, rules))
    if lay is None:
        lay = _LAYOUTS[cls, rules] = cls(rules)
    return lay


def check_out(out: Any, size: int, dtype) -> None:
    """``ValueError`` unless ``out`` is ``None`` or a numpy array of shape ``(size,)`` and
    ``dtype`` (the ``out`` argument of the encoders).

    >>> check_out(np.zeros(3, np.int8), 4, np.int8)
    Traceback (most recent call last):
    ...
    ValueError: out must be a numpy array of shape (4,) and dtype int8
    """
    if out is not None and (
        not isinstance(out, np.ndarray) or out.shape != (size,) or out.dtype != dtype
    ):
        raise ValueError(
            f"out must be a numpy array of shape ({size},) and dtype {np.dtype(dtype)}"
        )


__all__ = ["DEFAULT_VERSION", "NUM_ENDS", "VERSIONS", "ObservationLayout", "ObservationSpec",
           "cached_layout", "check_out", "observation_spec", "register"]

# every version, each built on the one before, registers itself
from . import v2, v3, v4, v5  # noqa: E402, F401, I001
