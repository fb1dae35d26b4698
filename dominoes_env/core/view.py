"""``SeatView``: everything one seat may know, and nothing more.

A view is a frozen copy of the public state plus the seat's own tiles. It holds no reference
to the game state, so another seat's tiles and the boneyard order are unreachable from it.
Search agents rebuild a full hand from a view and a guess of the hidden tiles with
:meth:`HandState.from_view <dominoes_env.core.hand.HandState.from_view>`.

A view answers the questions a state does (``legal_actions()``, ``legal_moves``,
``is_legal``, ``move_of``), so code written against a state runs on a view too; it prints as
the text picture of its hand with its own tiles and legal moves, and Jupyter draws it.

>>> from dominoes_env.core import MatchState
>>> view = MatchState(seed=1).view(0)
>>> view.legal_actions() == list(view.legal), str(view).splitlines()[-2]
(True, "seat 0's tiles: [0|1] [0|5] [1|4] [1|5] [2|5] [4|5] [5|6]")
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import IllegalMoveError
from .layout import open_ends
from .moves import END_NAMES, Move, end_of, parse_move, tile_of
from .rules import RuleConfig
from .tiles import Tile
from .validation import as_int


def layout_line(state) -> str:
    """The layout of a hand or a view in one line: the open ends' values, the count and the
    spinner (:meth:`HandState.layout_str <dominoes_env.core.hand.HandState.layout_str>`)."""
    if state.lead < 0:
        return "(empty layout)"
    ends = " ".join(f"{END_NAMES[e]}={state.ends[e]}" for e in open_ends(state))
    spin = f", spinner {state.rules.tiles.tiles[state.spinner]}" if state.spinner >= 0 else ""
    return f"ends {ends}, count {state.count}{spin}"


@dataclass(frozen=True, slots=True, repr=False)
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
        """The side (a player, or a partnership) this seat plays for: ``rules.side_of(seat)``,
        the index of its score in :attr:`scores`."""
        return self.rules.side_of(self.seat)

    @property
    def hand_tiles(self) -> list[Tile]:
        """This seat's tiles as :class:`~dominoes_env.core.tiles.Tile` values, in index order
        (:attr:`hand` is the same as a bitmask)."""
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
        """This seat's legal moves as :class:`Move` values (the lead's end is ``None``): ``[]``
        when it is not this seat's turn."""
        tiles = self.rules.tiles.tiles
        return [
            Move(tiles[tile_of(c)], None if self.lead < 0 else END_NAMES[end_of(c)])
            for c in self.legal
        ]

    def legal_actions(self) -> list[int]:
        """This seat's legal action codes, ``list(self.legal)``: what ``legal_actions()`` of a
        state gives when it is this seat's turn, ``[]`` otherwise."""
        return list(self.legal)

    def is_legal(self, move: Move | int | tuple) -> bool:
        """Whether this seat may play ``move`` now, in any form ``HandState.play`` takes (an
        action code, a :class:`Move`, a ``(tile, end)`` pair): ``False`` when it is not this
        seat's turn; a ``TypeError`` for what is no move at all."""
        if move.__class__ is not int:
            try:
                move = parse_move(move, self.rules.tiles, self.lead < 0)[0]
            except IllegalMoveError:
                return False
        return move in self.legal

    def move_of(self, code: int) -> Move:
        """The :class:`Move` of an action code in this position (the lead has ``end=None``):
        the tile and the end the code names, whoever holds the tile."""
        code = as_int("code", code, 0, self.rules.num_tiles * 4 - 1)
        tile = self.rules.tiles.tiles[tile_of(code)]
        return Move(tile, None if self.lead < 0 else END_NAMES[end_of(code)])

    # -- display -------------------------------------------------------------------------------
    def __str__(self) -> str:
        """The text picture of the hand (``render_ansi``, with the match's scores), then this
        seat's tiles and, on its turn, its legal moves."""
        from dominoes_env.render.ansi import render_ansi

        picture = render_ansi(self, self.scores, hand_number=self.hand_number,
                              winner=self.winner)
        tiles = " ".join(map(str, self.hand_tiles)) or "(none)"
        lines = [picture, f"seat {self.seat}'s tiles: {tiles}"]
        if self.legal:
            lines.append(f"legal moves: {', '.join(map(str, self.legal_moves))}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        # a match won mid-hand leaves the hand's turn as it was: no one is to play
        turn = f"won by side {self.winner}" if self.winner is not None else f"turn={self.turn}"
        return (f"<SeatView seat={self.seat} {turn} {layout_line(self)}, "
                f"{self.hand.bit_count()} tiles, {len(self.legal)} legal>")

    def _repr_svg_(self) -> str:
        """The layout and the match's scores as a picture in Jupyter (drawn by
        ``dominoes_env.render.svg``)."""
        from dominoes_env.render.svg import layout_svg

        return layout_svg(self, self.scores, hand_number=self.hand_number, winner=self.winner)


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
