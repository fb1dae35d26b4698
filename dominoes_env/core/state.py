"""The public state protocol: what encoders, renderers and agents may read from a game state.

Two protocols, checked structurally (``typing.Protocol``, nothing to inherit):

- :class:`PublicState`: the facts every seat may know: the layout, the public history, hand
  sizes, the boneyard size, how the hand ended. A :class:`~dominoes_env.core.HandState` and a
  :class:`~dominoes_env.core.SeatView` both satisfy it, and so does any other backend of the game
  (the JAX twin's per-game state), so the observation encoder and the renderers are written once
  against it and checked on every backend.
- :class:`FullState`: a public state plus the hidden facts (every hand, the boneyard's
  remaining tiles in draw order): what the global state vector for centralised critics reads.
  :class:`~dominoes_env.core.HandState` satisfies it; a seat's view does not.

Tiles are bitmasks / indices of :mod:`.tiles`; ends are indexed left, right, up, down
(:mod:`.moves`). Everything not named here (``HandState.drawn``, ``HandState.boneyard``, the
``_``-prefixed tables) is a backend's own business and may change without notice.

>>> from dominoes_env.core import HandState, MatchState
>>> m = MatchState(seed=4)
>>> isinstance(m.hand, FullState), isinstance(m.view(0), PublicState)
(True, True)
>>> isinstance(m.view(0), FullState)
False
>>> m.hand.boneyard_left == len(m.hand.boneyard_tiles) == m.view(1).boneyard_left
True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from .rules import RuleConfig

#: the names of :class:`PublicState`, in the order the protocol lists them (for tests and docs)
PUBLIC_FIELDS = (
    "rules", "turn", "leader", "hand_sizes", "boneyard_left", "drawable", "played", "lead",
    "lead_pips", "ends", "contrib", "arm", "spinner", "spinner_free", "spinner_sides",
    "cross_open", "count", "history", "known_lacks", "result", "award",
)  # fmt: skip

#: the extra names of :class:`FullState`
FULL_FIELDS = ("hands", "boneyard_tiles")


@runtime_checkable
class PublicState(Protocol):
    """The public facts of one hand (see the module docstring). Read-only.

    ``history`` holds the public events in order: :class:`~dominoes_env.core.Play`,
    :class:`~dominoes_env.core.Draw` and :class:`~dominoes_env.core.Pass` records (tuples
    ``("play", seat, code, points)``, ``("draw", seat, n)``, ``("pass", seat)``).
    """

    @property
    def rules(self) -> RuleConfig: ...
    @property
    def turn(self) -> int:
        """Seat to play; ``-1`` once the hand is over."""
    @property
    def leader(self) -> int: ...
    @property
    def hand_sizes(self) -> Sequence[int]:
        """Tiles in each seat's hand, seat 0 first."""
    @property
    def boneyard_left(self) -> int:
        """Tiles still in the boneyard (reserve included)."""
    @property
    def drawable(self) -> int:
        """Tiles that may still be drawn (the boneyard less the reserve)."""
    @property
    def played(self) -> int:
        """Bitmask of the tiles in the layout."""
    @property
    def lead(self) -> int:
        """Tile index of the lead, ``-1`` before it."""
    @property
    def lead_pips(self) -> int: ...
    @property
    def ends(self) -> Sequence[int]:
        """Pip value showing at each end, ``-1`` where there is none."""
    @property
    def contrib(self) -> Sequence[int]:
        """What each end adds to the count."""
    @property
    def arm(self) -> Sequence[int]:
        """Tiles on each end's arm (the lead not included)."""
    @property
    def spinner(self) -> int:
        """Tile index of the spinner, ``-1`` if none."""
    @property
    def spinner_free(self) -> Sequence[bool]:
        """Per long side (left, right): the spinner is its outer tile, the side still empty."""
    @property
    def spinner_sides(self) -> int: ...
    @property
    def cross_open(self) -> bool:
        """Whether up and down take tiles."""
    @property
    def count(self) -> int:
        """The layout's count."""
    @property
    def history(self) -> Sequence[tuple]: ...
    @property
    def known_lacks(self) -> Sequence[int]:
        """Per seat, bitmask of pip values it is known not to hold."""
    @property
    def result(self) -> tuple | None:
        """``None`` while the hand runs, ``("domino", seat)`` or ``("blocked", None)`` (a
        :class:`~dominoes_env.core.Result` in the core)."""
    @property
    def award(self) -> tuple[int, int] | None:
        """``(side, points)`` the finished hand awards, ``None`` if none."""


@runtime_checkable
class FullState(PublicState, Protocol):
    """A :class:`PublicState` that also shows what no seat sees."""

    @property
    def hands(self) -> Sequence[int]:
        """Every seat's tiles as a bitmask, seat 0 first."""
    @property
    def boneyard_tiles(self) -> Sequence[int]:
        """Tile indices still in the boneyard, in the order they would be drawn."""
