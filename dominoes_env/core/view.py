"""``SeatView``: everything one seat may know, and nothing more.

A view is a frozen copy of the public state plus the seat's own tiles. It holds no reference
to the game state, so another seat's tiles and the boneyard order are unreachable from it.
Search agents rebuild a full hand from a view and a guess of the hidden tiles with
:meth:`HandState.from_view <dominoes_env.core.hand.HandState.from_view>`.
"""

from __future__ import annotations

from dataclasses import dataclass

from .layout import open_ends
from .moves import END_NAMES, Move, end_of, tile_of
from .rules import RuleConfig
from .tiles import Tile
from .validation import as_int


@dataclass(frozen=True, slots=True)
class SeatView:
    """The information set of ``seat``. Tiles are bitmasks of tile indices (see :mod:`.tiles`);
    ends are indexed left, right, up, down."""

    rules: RuleConfig
    seat: int
    hand: int  #: this seat's tiles
    turn: int  #: seat to play, -1 when the hand is over
    leader: int
    hand_sizes: tuple[int, ...]
    boneyard_left: int  #: tiles left in the boneyard (reserve included)
    drawable: int  #: tiles that may still be drawn
    played: int  #: tiles in the layout
    lead: int  #: tile index of the lead, -1 before it
    lead_pips: int
    ends: tuple[int, int, int, int]  #: value showing at each end, -1 where none
    contrib: tuple[int, int, int, int]  #: what each end adds to the count
    arm: tuple[int, int, int, int]  #: tiles on each end's arm
    spinner: int  #: tile index of the spinner, -1 if none
    spinner_free: tuple[bool, bool]  #: whether the spinner is the outer tile, side still free
    spinner_sides: int
    cross_open: bool
    count: int
    history: tuple[tuple, ...]  #: ("play", seat, code, points) / ("draw", seat, n) / ("pass", seat)
    known_lacks: tuple[int, ...]  #: per seat, bitmask of pip values it is known not to hold
    legal: tuple[int, ...]  #: legal action codes if it is this seat's turn, else ()
    scores: tuple[int, ...]  #: side scores in the match
    target_score: int
    hand_number: int
    winner: int | None
    result: tuple | None
    award: tuple[int, int] | None

    @property
    def side(self) -> int:
        return self.rules.side_of(self.seat)

    @property
    def hand_tiles(self) -> list[Tile]:
        return self.rules.tiles.mask_tiles(self.hand)

    @property
    def open_ends(self) -> tuple[int, ...]:
        """The ends that take tiles now (:func:`~dominoes_env.core.layout.open_ends`)."""
        return open_ends(self)

    @property
    def unseen(self) -> int:
        """Tiles this seat cannot see: the other hands plus the boneyard."""
        return self.rules.tiles.full_mask & ~self.hand & ~self.played

    @property
    def legal_moves(self) -> list[Move]:
        tiles = self.rules.tiles.tiles
        return [
            Move(tiles[tile_of(c)], None if self.lead < 0 else END_NAMES[end_of(c)])
            for c in self.legal
        ]


def make_view(
    hand, seat: int, scores: tuple[int, ...], target: int, hand_number: int, winner: int | None
) -> SeatView:
    """Build ``seat``'s view of a :class:`HandState` (used by ``MatchState.view``)."""
    n = hand.n
    seat = as_int("seat", seat, 0, n - 1)
    return SeatView(
        rules=hand.rules,
        seat=seat,
        hand=hand.hands[seat],
        turn=hand.turn,
        leader=hand.leader,
        hand_sizes=tuple(h.bit_count() for h in hand.hands),
        boneyard_left=len(hand.boneyard) - hand.drawn,
        drawable=hand.draw_limit - hand.drawn,
        played=hand.played,
        lead=hand.lead,
        lead_pips=hand.lead_pips,
        ends=tuple(hand.ends),
        contrib=tuple(hand.contrib),
        arm=tuple(hand.arm),
        spinner=hand.spinner,
        spinner_free=tuple(hand.spinner_free),
        spinner_sides=hand.spinner_sides,
        cross_open=hand.cross_open,
        count=hand.count,
        history=tuple(hand.history),
        known_lacks=tuple(hand.known_lacks),
        legal=tuple(hand.legal_actions()) if hand.turn == seat and winner is None else (),
        scores=tuple(scores),
        target_score=target,
        hand_number=hand_number,
        winner=winner,
        result=hand.result,
        award=hand.award,
    )
