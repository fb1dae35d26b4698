"""States built from a guess of what a seat cannot see (determinization, for search agents):
:func:`state_from_view` at a seat's view, and :func:`resample`, the body of
:meth:`StraightDominoesState.resample_from_infostate`."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from ..core import HandState, SeatView
from ..core.hidden_history import sample_hand_history
from ..core.sampling import check_view
from ..core.validation import as_int
from .game import StraightDominoesGame
from .observer import observation_string
from .position import LEADER, OVER, PLAY

if TYPE_CHECKING:
    from .state import StraightDominoesState


def state_from_view(game: StraightDominoesGame, view: SeatView, hands, boneyard
                    ) -> StraightDominoesState:
    """A state at ``view``'s position with a guess of what its seat cannot see: every seat's
    tiles (``hands``, bitmasks, the viewer's as in the view) and the tiles left in the
    boneyard (their order does not matter: draws are chance outcomes). For search agents
    (determinization); ``episode="hand"`` games then end with this hand, and their returns
    count the points scored in all of it.

    The scores are the view's; the match's earlier hands are not replayed.
    """
    check_view(view)  # None was an AttributeError
    if not isinstance(game, StraightDominoesGame):
        raise TypeError(f"game must be this module's game (load_game), not "
                        f"{type(game).__name__}")
    if view.rules != game.rules:
        raise ValueError("the view's rules differ from the game's")
    if view.winner is not None or view.turn < 0:
        raise ValueError("the view's hand is over; there is no position to play from")
    state = game.new_initial_state()
    match = state.match
    match.scores[:] = view.scores
    match.hand_number = view.hand_number
    match.start_hand(view.leader, HandState.from_view(view, list(hands), sorted(boneyard)))
    if game.episode == "hand":
        rules = view.rules
        start = list(view.scores)
        for ev in view.history:
            if ev[0] == "play":
                start[rules.side_of(ev[1])] -= ev[3]
        state.start_scores = start
    state.phase = PLAY
    state.root = (view, tuple(hands), tuple(boneyard))
    # a root token for information states: what each seat saw at this position
    state.root_strings = [observation_string(state, p) for p in range(view.rules.num_players)]
    state.log.append(("R", 0, 0))
    return state


def resample(state: StraightDominoesState, player_id: int, probability_sampler
             ) -> StraightDominoesState:
    """:meth:`StraightDominoesState.resample_from_infostate` of ``state`` (see there)."""
    rules = state.rules
    player = as_int("player_id", player_id, 0, rules.num_players - 1)
    if not callable(probability_sampler):
        raise TypeError("probability_sampler must be a callable returning floats in [0, 1); "
                        f"got {type(probability_sampler).__name__}")
    if state.phase != PLAY:
        where = "terminal" if state.phase == OVER else "a chance node"
        raise ValueError("resample_from_infostate needs a decision node (a seat to play); "
                         f"this state is {where}")
    u = probability_sampler()
    if not isinstance(u, float) or not 0.0 <= u < 1.0:
        raise ValueError(f"probability_sampler must return a float in [0, 1); got {u!r}")
    rng = random.Random(int(u * 2**53))
    log = state.log
    begin = max(i for i, entry in enumerate(log) if entry[0] in "LR")  # the current hand
    segment = log[begin + 1:]
    drawn_tiles = [t for kind, _, t in segment if kind == "W"]
    game = state.get_game()
    if log[begin][0] == "R":
        view, hands, boneyard = state.root
        rest = [t for t in boneyard if t not in set(drawn_tiles)]
        start = HandState.from_view(view, hands, drawn_tiles + rest)
    else:
        h = rules.hand_size
        dealt = [t for kind, _, t in segment if kind == "D"]
        hands = [sum(1 << t for t in dealt[s * h:(s + 1) * h])
                 for s in range(rules.num_players)]
        rest = [t for t in range(rules.num_tiles) if t not in set(dealt) | set(drawn_tiles)]
        start = HandState(rules, hands, drawn_tiles + rest, log[begin][1])
    codes = [v for kind, _, v in segment if kind == "P"]
    _, start_hands, drawn = sample_hand_history(start, codes, state.match.view(player), rng)
    # the new history: this one before the current hand, then the hand with the new tiles
    if log[0][0] == "R":
        new = state_from_view(game, *state.root)
        if begin == 0:  # the current hand is the root's: rebuild it from the seat's view
            unseen = start.rules.tiles.full_mask & ~start.played
            for hand in start_hands:
                unseen &= ~hand
            new = state_from_view(game, new.view(player), start_hands,
                                  [t for t in range(rules.num_tiles) if unseen >> t & 1])
        prefix = log[1:begin + 1]
    else:
        new = game.new_initial_state()
        prefix = log[:begin + 1]
    for entry in prefix:
        _replay(new, entry, entry[2])
    deals = {s: rng.sample(_bits(m), m.bit_count()) for s, m in enumerate(start_hands)
             if s != player}
    draws = iter(drawn)
    for kind, seat, value in segment:
        if kind == "D" and seat != player:
            value = deals[seat].pop()
        elif kind == "W":
            value = next(draws)
        _replay(new, (kind, seat, value), value)
    return new


def _bits(mask: int) -> list[int]:
    return [t for t in range(mask.bit_length()) if mask >> t & 1]


def _replay(state: StraightDominoesState, entry: tuple[str, int, int], action: int) -> None:
    """Apply the action of a log entry to ``state`` (a leader chosen by the rules, not by
    chance, is no action)."""
    if entry[0] != "L" or state.phase == LEADER:
        state.apply_action(action)
