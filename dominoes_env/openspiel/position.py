"""What an OpenSpiel state holds: its phase (which chance node, a seat to play, or the end) and
its :class:`Position`, the match plus the chance bookkeeping in one object that copies fast,
with the engine that moves and chance outcomes advance it."""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING

from ..core import HandState, MatchState

if TYPE_CHECKING:
    from .game import StraightDominoesGame

# the phases of a state: chance node kinds, a seat to play, the end
LEADER, DEAL, DRAW, PLAY, OVER = "leader", "deal", "draw", "play", "over"


class Position:
    """Everything a state holds, in one object that copies fast: OpenSpiel clones a Python
    state by deep-copying its attributes, which would copy the rules' tables every time."""

    __slots__ = ("rules", "episode", "reward_mode", "match", "start_scores", "phase", "leader",
                 "dealt", "pending", "draws", "draw_seat", "log", "root_strings", "root")

    def __init__(self, game: StraightDominoesGame):
        self.rules = game.rules
        self.episode = game.episode
        self.reward_mode = game.reward_mode
        self.match = MatchState(self.rules, auto_deal=False)
        #: side scores when the episode began (a hand episode built from a view starts mid-match)
        self.start_scores = [0] * self.rules.num_sides
        self.phase = LEADER
        self.leader = -1  # leader of the hand being dealt
        self.dealt: list[int] = []  # tiles dealt so far, in order
        self.pending = -1  # the move waiting for its forced draws
        self.draws: list[int] = []  # the tiles it has drawn so far
        self.draw_seat = -1  # the seat that draws next
        #: (kind, seat, value) per chance outcome and move, for information states
        self.log: list[tuple[str, int, int]] = []
        self.root_strings: list[str] = []  # what each seat saw at a state_from_view root
        #: state_from_view's (view, hands, boneyard), or None for a game from its start
        self.root: tuple | None = None

    def __deepcopy__(self, memo) -> Position:
        new = object.__new__(Position)
        for name in Position.__slots__:
            value = getattr(self, name)
            setattr(new, name, list(value) if type(value) is list else value)
        new.match = _copy_match(self.match)
        return new

    # -- the engine ----------------------------------------------------------------------------
    def undrawn(self) -> list[int]:
        """The tiles still in the boneyard (undrawn), in index order."""
        hand = self.match.hand
        held = hand.played
        for h in hand.hands:
            held |= h
        free = self.rules.tiles.full_mask & ~held
        return [t for t in range(self.rules.num_tiles) if free >> t & 1]

    def start_hand(self) -> None:
        """Start the hand the dealt tiles make (seat by seat, ``hand_size`` each)."""
        rules = self.rules
        h = rules.hand_size
        hands = []
        for s in range(rules.num_players):
            mask = 0
            for t in self.dealt[s * h : (s + 1) * h]:
                mask |= 1 << t
            hands.append(mask)
        dealt = set(self.dealt)
        # the boneyard's order is decided tile by tile as tiles are drawn (see play)
        boneyard = [t for t in range(rules.num_tiles) if t not in dealt]
        self.match.start_hand(self.leader, HandState(rules, hands, boneyard, self.leader))
        self.dealt = []
        self.phase = PLAY

    def redeal_boneyard(self) -> None:
        """Put the tiles chosen for the pending move's draws on top of the boneyard.

        The hand is rebuilt from the mover's view and every hand (the core's own
        :meth:`HandState.from_view <dominoes_env.core.HandState.from_view>`) with the boneyard
        in the new order; everything else about the position is unchanged."""
        hand = self.match.hand
        chosen = set(self.draws)
        order = self.draws + [t for t in self.undrawn() if t not in chosen]
        # the match's current hand is replaced by the same position with the new boneyard order
        self.match.hand = HandState.from_view(hand.view(hand.turn), hand.hands, order)

    def play(self, code: int) -> None:
        """Play ``code`` if every tile it makes seats draw has been chosen; else wait for the
        next draw (a chance node)."""
        hand = self.match.hand
        probe = hand.copy()
        probe.apply_unchecked(code)
        need = hand.boneyard_left - probe.boneyard_left  # tiles the move makes seats draw
        if need > len(self.draws):
            # which seat draws the next tile: the probe's draws, tile by tile, in order
            seats = [ev[1] for ev in probe.history[len(hand.history):] if ev[0] == "draw"
                     for _ in range(ev[2])]
            self.pending = code
            self.draw_seat = seats[len(self.draws)]
            self.phase = DRAW
            return
        self.pending, self.draws, self.draw_seat = -1, [], -1
        match = self.match
        match.apply_unchecked(code)
        if match.winner is not None:
            self.phase = OVER
        elif match.hand.is_over:
            if self.episode == "hand":
                self.phase = OVER
                return
            leader = match.next_leader()
            if leader is None:
                self.phase = LEADER
            else:
                self.log.append(("L", leader, leader))
                self.leader = leader
                self.phase = DEAL
        else:
            self.phase = PLAY


def _copy_match(match: MatchState) -> MatchState:
    """An independent copy of a match: its lists copied, its current hand copied, the rest
    (rules, finished hands, tuples) shared, since none of it changes in place. The generator
    is shared too: a match built with ``auto_deal=False`` never draws from it."""
    new = copy.copy(match)
    for name in MatchState.__slots__:
        value = getattr(match, name)
        if type(value) is list:
            setattr(new, name, list(value))
    if match.hand is not None:
        new.hand = match.hand.copy()
    return new
