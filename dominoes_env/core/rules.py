"""``RuleConfig``: every rule option of ``docs/rules.md``, validated, immutable, hashable.

>>> RuleConfig().to_dict()["target_score"]
250
>>> RuleConfig(num_players=4).partnerships
True
>>> RuleConfig.from_dict({"num_players": 3, "max_pip": 9}).num_tiles
55
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field
from typing import Any

from .tiles import SUPPORTED_MAX_PIPS, TileSet, tile_set
from .validation import as_bool, as_int, short_repr

NEXT_LEADER = ("domino_else_random", "rotate")
WIN_CHECK = ("immediate", "end_of_hand")
SPINNER = ("first_double", "lead_double_only", "none")
SPINNER_CROSS = ("after_both_sides", "immediately")
BLOCKED_AWARD = ("opponents_total", "difference")
#: the highest ``target_score``: every player handles it (the JAX game keeps its scores in
#: int32 and reads the observation's scores from a table of ``2 * target_score + 2`` values;
#: the search agents tabulate which scores win at their first move), and a match to it ends,
#: at ``max_hands`` (1,000 hands by default) if not at its target
MAX_TARGET_SCORE = 1 << 16


def _set_int(obj: RuleConfig, name: str, low: int, high: int | None = None) -> None:
    """Check an integer field and store it as a Python ``int`` (numpy integers accepted)."""
    object.__setattr__(obj, name, as_int(name, getattr(obj, name), low, high))


def _check_choice(name: str, value: Any, allowed: tuple) -> None:
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(
            f"{name}={short_repr(value)} is not allowed; allowed: {', '.join(map(repr, allowed))}"
        )


@dataclass(frozen=True)
class RuleConfig:
    """The rule options. Defaults are the ones named in ``docs/rules.md``.

    ``partnerships=None`` means the default: ``True`` with 4 players, ``False`` otherwise; the
    resolved value is what the field holds after construction (and what :meth:`to_dict`
    writes), while :meth:`replace` resolves a defaulted field again.
    """

    num_players: int = 2
    max_pip: int = 6
    partnerships: bool | None = None
    hand_size: int = 7
    target_score: int = 250
    next_leader: str = "domino_else_random"
    win_check: str = "immediate"
    boneyard_reserve: int = 0
    spinner: str = "first_double"
    spinner_cross: str = "after_both_sides"
    blocked_award: str = "opponents_total"
    _tiles: TileSet = field(init=False, repr=False, compare=False, hash=False)
    #: the fields left to their defaults and resolved from the others (``partnerships``):
    #: :meth:`replace` resolves them again instead of carrying the resolved value over
    _defaulted: frozenset = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        _set_int(self, "num_players", 2, 4)
        _set_int(self, "max_pip", 0)
        if self.max_pip not in SUPPORTED_MAX_PIPS:
            raise ValueError(
                f"max_pip={short_repr(self.max_pip)} is not allowed; allowed: 6, 9, 12")
        partnerships = as_bool("partnerships", self.partnerships, optional=True)
        defaulted = frozenset(("partnerships",)) if partnerships is None else frozenset()
        object.__setattr__(self, "_defaulted", defaulted)
        if partnerships is None:
            partnerships = self.num_players == 4
        object.__setattr__(self, "partnerships", partnerships)
        if self.partnerships and self.num_players != 4:
            raise ValueError(
                f"partnerships=True is not allowed with num_players={self.num_players}; "
                "partnerships need exactly 4 players"
            )
        ts = tile_set(self.max_pip)
        object.__setattr__(self, "_tiles", ts)
        _set_int(self, "hand_size", 1)
        if self.num_players * self.hand_size > ts.num_tiles:
            raise ValueError(
                f"hand_size={short_repr(self.hand_size)} is too large: {self.num_players} "
                f"players x {short_repr(self.hand_size)} tiles exceeds the {ts.num_tiles} "
                "tiles of the "
                f"double-{self.max_pip} set; allowed: at most {ts.num_tiles // self.num_players}"
            )
        _set_int(self, "target_score", 1, MAX_TARGET_SCORE)
        _set_int(self, "boneyard_reserve", 0, self.boneyard_size)
        _check_choice("next_leader", self.next_leader, NEXT_LEADER)
        _check_choice("win_check", self.win_check, WIN_CHECK)
        _check_choice("spinner", self.spinner, SPINNER)
        _check_choice("spinner_cross", self.spinner_cross, SPINNER_CROSS)
        _check_choice("blocked_award", self.blocked_award, BLOCKED_AWARD)

    # -- derived facts -------------------------------------------------------------------
    @property
    def tiles(self) -> TileSet:
        """The :class:`TileSet` of this set size."""
        return self._tiles

    @property
    def num_tiles(self) -> int:
        return self._tiles.num_tiles

    @property
    def boneyard_size(self) -> int:
        """Tiles left after the deal (drawable ones are ``boneyard_size - boneyard_reserve``)."""
        return self._tiles.num_tiles - self.num_players * self.hand_size

    @property
    def num_sides(self) -> int:
        return 2 if self.partnerships else self.num_players

    def side_of(self, seat: int) -> int:
        """The side (scoring unit) of a seat: ``seat % 2`` in partnerships, else the seat. A
        seat these rules do not have (99 at two players) is a ``ValueError``, and one that is
        no integer (``"x"``) a ``TypeError``."""
        try:
            if seat.__class__ is not bool and seat >= 0:  # True was seat 1
                return self._sides[seat]
        except (IndexError, TypeError, ValueError):  # ValueError: an array's truth value
            pass
        return self._sides[self._seat("seat", seat)]

    @functools.cached_property
    def _sides(self) -> tuple[int, ...]:
        """The side of each seat (computed once: :meth:`side_of` is asked at every play)."""
        return tuple(s % 2 if self.partnerships else s for s in range(self.num_players))

    def seats_of(self, side: int) -> tuple[int, ...]:
        """The seats of a side, in turn order (a side these rules do not have is a
        ``ValueError``: side 99 had no seats)."""
        side = as_int("side", side, 0, self.num_sides - 1)
        return tuple(s for s in range(self.num_players) if self.side_of(s) == side)

    def _seat(self, name: str, seat: Any) -> int:
        """``seat`` as a seat of these rules, ``0..num_players - 1`` (:func:`as_int`)."""
        return as_int(name, seat, 0, self.num_players - 1)

    def relative_seats(self, seat: int) -> tuple[int, ...]:
        """Every seat in turn order from ``seat``: relative seat ``k`` is ``(seat + k) % n``
        (the order of a seat's observation).

        >>> RuleConfig(num_players=3).relative_seats(2)
        (2, 0, 1)
        """
        n = self.num_players
        seat = self._seat("seat", seat)  # seat 7 of two was read as seat 1
        return tuple((seat + k) % n for k in range(n))

    def relative_sides(self, seat: int) -> tuple[int, ...]:
        """Every side in turn order from ``seat``: the sides of :meth:`relative_seats`, each
        listed once, so ``seat``'s own side comes first (the order of a seat's observation).

        >>> RuleConfig(num_players=4).relative_sides(1), RuleConfig(num_players=3).relative_sides(1)
        ((1, 0), (1, 2, 0))
        """
        order: list[int] = []
        for s in self.relative_seats(seat):
            side = self.side_of(s)
            if side not in order:
                order.append(side)
        return tuple(order)

    # -- dict round trip -----------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """All fields with their resolved values (JSON-ready)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.init}

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls) if f.init)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RuleConfig:
        """Build from a dict of fields; missing ones take their defaults, unknown ones are
        errors."""
        if not isinstance(data, dict):
            raise ValueError(
                f"rules must be an object of RuleConfig fields, got {type(data).__name__}"
            )
        unknown = [key for key in data if key not in cls.field_names()]
        if unknown:  # keys of any type (a dict from Python, not JSON), each named
            allowed = ", ".join(cls.field_names())
            # a name that does not print as it is ('\n', say) is quoted: the line stays one
            names = ", ".join(sorted(k if isinstance(k, str) and k.isprintable()
                                     else short_repr(k) for k in unknown))
            raise ValueError(f"unknown rule option(s) {names}; allowed: {allowed}")
        return cls(**data)

    def replace(self, **changes: Any) -> RuleConfig:
        """A copy with ``changes``. Fields this config left to their defaults are resolved
        again for the copy (``partnerships`` follows the new ``num_players``), while fields
        given explicitly keep their values.

        >>> RuleConfig(num_players=4).replace(num_players=2).partnerships
        False
        >>> RuleConfig(num_players=4, partnerships=False).replace(num_players=3).partnerships
        False
        """
        base = self.to_dict()
        for name in getattr(self, "_defaulted", ()):  # configs pickled before it existed
            del base[name]
        return RuleConfig.from_dict({**base, **changes})
