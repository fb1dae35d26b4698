"""The OpenSpiel state: OpenSpiel's API over a :class:`~.position.Position` (a
:class:`~dominoes_env.core.MatchState` plus the chance bookkeeping: deals, forced draws and who
leads, each a chance outcome)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import IllegalMoveError, SeatView
from ..options import delta_rewards, unique_top, win_loss_rewards
from .position import DEAL, DRAW, LEADER, OVER, PLAY, Position
from .spiel import pyspiel

if TYPE_CHECKING:
    from .game import StraightDominoesGame

#: the line ``serialize()`` adds for a state built by :func:`state_from_view`, which
#: ``deserialize_state`` refuses (its history does not rebuild it)
FROM_VIEW_TAG = "root=state_from_view"


class StraightDominoesState(pyspiel.State):
    """A position: a :class:`~dominoes_env.core.MatchState` plus the chance bookkeeping
    (all in ``self.position``; ``self.match`` is its match)."""

    def __init__(self, game: StraightDominoesGame):
        super().__init__(game)
        self.position = Position(game)

    def __getattr__(self, name: str):
        # the position's fields read as the state's own (state.match, state.phase, ...)
        if name in Position.__slots__:
            return getattr(self.__dict__["position"], name)
        raise AttributeError(name)

    def __setattr__(self, name: str, value) -> None:
        if name in Position.__slots__:
            setattr(self.position, name, value)
        else:
            super().__setattr__(name, value)

    # -- OpenSpiel API -----------------------------------------------------------------------
    def serialize(self) -> str:
        """OpenSpiel's text of the state (``history=``, ``move_number=``, ``__dict__=`` lines),
        with a ``root=state_from_view`` line before the last for a state built by
        :func:`state_from_view`: :meth:`StraightDominoesGame.deserialize_state` refuses that
        one, since its history does not rebuild it. (OpenSpiel's C++ side, e.g.
        ``pyspiel.serialize_game_and_state``, writes the three lines without it.)"""
        text = super().serialize()
        if self.root is None:
            return text
        history, move_number, rest = text.split("\n", 2)
        return "\n".join((history, move_number, FROM_VIEW_TAG, rest))

    def current_player(self) -> int:
        phase = self.phase
        if phase == PLAY:
            return self.match.turn
        if phase == OVER:
            return pyspiel.PlayerId.TERMINAL
        return pyspiel.PlayerId.CHANCE

    def _legal_actions(self, player: int) -> list[int]:
        return sorted(self.match.legal_actions())

    def chance_outcomes(self) -> list[tuple[int, float]]:
        if self.phase in (PLAY, OVER):  # a player's turn, or the end: no chance outcomes
            raise ValueError("chance_outcomes() is asked at a chance node only; this state is "
                             + ("terminal" if self.phase == OVER else
                                f"player {self.match.turn}'s turn"))
        if self.phase == LEADER:
            n = self.rules.num_players
            return [(s, 1.0 / n) for s in range(n)]
        if self.phase == DEAL:
            taken = set(self.dealt)
            left = [t for t in range(self.rules.num_tiles) if t not in taken]
        else:
            left = self.position.undrawn()
            left = [t for t in left if t not in self.draws]
        p = 1.0 / len(left)
        return [(t, p) for t in left]

    def _apply_action(self, action: int) -> None:
        # OpenSpiel applies what it is given (apply_action_with_legality_check is opt-in): an
        # illegal action corrupted the state, and the error came steps later, far from the call
        phase = self.phase
        if phase == OVER:
            raise ValueError(f"the game is over; action {action} cannot be applied")
        if phase == PLAY:
            self._check_move(action)
            self.log.append(("P", self.match.turn, action))
            self.position.play(action)
            return
        self._check_chance(action)
        if phase == DRAW:
            self.log.append(("W", self.draw_seat, action))
            self.draws.append(action)
            self.position.redeal_boneyard()
            self.position.play(self.pending)
        elif phase == DEAL:
            rules = self.rules
            self.log.append(("D", len(self.dealt) // rules.hand_size, action))
            self.dealt.append(action)
            if len(self.dealt) == rules.num_players * rules.hand_size:
                self.position.start_hand()
        else:
            self.log.append(("L", action, action))
            self.leader = action
            self.phase = DEAL

    def _check_move(self, action: int) -> None:
        """:class:`~dominoes_env.core.IllegalMoveError` (a ``ValueError``) naming ``action``,
        why the rules refuse it and the legal actions, unless it is legal now."""
        hand = self.match.hand
        if hand.is_legal(action):
            return
        try:
            hand.check_move(action)
            why = "not legal now"
        except IllegalMoveError as err:
            why = err.reason if err.move == action else f"{err.move} - {err.reason}"
        raise IllegalMoveError(action, f"{why}; legal actions for seat {hand.turn}: "
                                       f"{sorted(hand.legal_actions())}")

    def _check_chance(self, action: int) -> None:
        """``ValueError`` naming ``action`` and the possible outcomes, unless it is one of this
        chance node's outcomes."""
        phase = self.phase
        if phase == LEADER:
            possible = 0 <= action < self.rules.num_players
        elif phase == DEAL:
            possible = 0 <= action < self.rules.num_tiles and action not in self.dealt
        else:
            possible = action not in self.draws and action in self.position.undrawn()
        if not possible:
            what = {LEADER: "the leader is drawn", DEAL: "a tile is dealt"}.get(
                phase, "a tile is drawn")
            outcomes = [t for t, _ in self.chance_outcomes()]
            raise ValueError(f"chance outcome {action} is not possible when {what}; "
                             f"possible: {outcomes}")

    def _action_to_string(self, player: int, action: int) -> str:
        tiles = self.rules.tiles.tiles
        n = len(tiles) if player == pyspiel.PlayerId.CHANCE else len(tiles) * 4
        if not 0 <= action < n:  # "Action:999" named an action that does not exist
            raise ValueError(f"action {action} is not one of this game's "
                             f"{'chance outcomes' if n == len(tiles) else 'actions'} "
                             f"(0 to {n - 1})")
        if player == pyspiel.PlayerId.CHANCE:
            if self.phase in (PLAY, OVER):  # 'Draw:[0|3]->-1' named no outcome of anything
                raise ValueError(f"action_to_string for the chance player ({player}) is asked at "
                                 "a chance node only; this state is " + (
                                     "terminal" if self.phase == OVER else
                                     f"player {self.match.turn}'s turn"))
            if self.phase == LEADER:
                return f"Leader:{action}"
            if self.phase == DEAL:
                return f"Deal:{tiles[action]}->{len(self.dealt) // self.rules.hand_size}"
            return f"Draw:{tiles[action]}->{self.draw_seat}"
        hand = self.match.hand
        if hand is None:
            return f"Action:{action}"
        return str(hand.move_of(action))

    def is_terminal(self) -> bool:
        return self.phase == OVER

    def returns(self) -> list[float]:
        rules = self.rules
        if self.phase != OVER:
            return [0.0] * rules.num_players
        scores = self.match.scores
        if self.reward_mode == "score_delta":
            gained = [s - s0 for s, s0 in zip(scores, self.start_scores, strict=True)]
            side = delta_rewards(gained, 1.0 / rules.target_score)
        else:
            if self.episode == "match" or self.match.winner is not None:
                winner = self.match.winner
            else:
                winner = unique_top(
                    [s - s0 for s, s0 in zip(scores, self.start_scores, strict=True)]
                )
            side = win_loss_rewards(winner, rules.num_sides)
        return [side[rules.side_of(p)] for p in range(rules.num_players)]

    def __str__(self) -> str:
        if self.match.hand is None:
            return f"Dealing the first hand ({len(self.dealt)} tiles dealt)"
        text = str(self.match)
        if self.phase == DEAL:
            text += f"\n(dealing the next hand: {len(self.dealt)} tiles dealt)"
        elif self.phase == DRAW:
            move = self.match.hand.move_of(self.pending)
            text += f"\n({move} waits: seat {self.draw_seat} draws)"
        return text

    def resample_from_infostate(self, player_id: int, probability_sampler) -> StraightDominoesState:
        """A state ``player_id`` cannot tell from this one, its hidden tiles guessed afresh:
        OpenSpiel's ``ResampleFromInfostate``, which its ISMCTS bot calls at every simulation.

        The state is a whole history from the game's start (or from :func:`state_from_view`'s
        position) in which the seat sees exactly what it saw here: its information state,
        observation and legal actions are this state's. In the current hand the tiles the seat
        cannot see are drawn uniformly among the deals that fit the hand sizes and the values
        each seat is known to lack and have a history of deals and draws that makes the same
        moves, draws and passes happen (:func:`~dominoes_env.core.hidden_history.
        sample_hand_history`); the hand's history is then one that fits. Earlier hands are kept
        as they were played: nothing that follows depends on their hidden tiles.

        ``probability_sampler`` returns floats in ``[0, 1)`` (``pyspiel.
        UniformProbabilitySampler``, or ``random.Random(seed).random`` for a reproducible
        guess); the guess is a function of its first value. Only at a decision node (a seat to
        play): ``ValueError`` at a chance node or the end.
        """
        # state_from_view builds a game's states: its module imports this one
        from .determinization import resample

        return resample(self, player_id, probability_sampler)

    # -- views -------------------------------------------------------------------------------
    def view(self, seat: int) -> SeatView | None:
        """``seat``'s :class:`~dominoes_env.core.SeatView` (``None`` before the first deal)."""
        return None if self.match.hand is None else self.match.view(seat)
