"""The OpenSpiel face: Straight Dominoes as the pyspiel Python game ``python_straight_dominoes``.

Importing this module registers the game (it needs the ``openspiel`` extra)::

    import pyspiel
    import dominoes_env.openspiel  # noqa: F401  (registers the game)

    game = pyspiel.load_game("python_straight_dominoes(num_players=4,target_score=100)")

=====================  =============================================================================
parameters             every :class:`~dominoes_env.core.RuleConfig` field with its default
                       (``partnerships`` is ``"auto"``, ``"yes"`` or ``"no"``; ``"auto"`` is the
                       RuleConfig default: partnerships with 4 players), plus ``episode``
                       (``"match"`` default, or ``"hand"``) and ``reward_mode`` (``"win_loss"``
                       default, or ``"score_delta"``), both as in :mod:`dominoes_env.options`,
                       and ``obs_version`` (the observation tensor's version: any registered one,
                       :mod:`dominoes_env.obs`; default its ``DEFAULT_VERSION``)
players                ``num_players`` seats; seat ``i`` is OpenSpiel player ``i``
actions                ``T * 4`` distinct actions: the env's action codes ``tile_index * 4 + end``;
                       ``apply_action`` refuses an illegal move (``IllegalMoveError``, a
                       ``ValueError`` naming the legal actions) or an impossible chance outcome
                       (``ValueError`` naming the possible ones), the state unchanged
chance                 who leads when the rules draw it, the deal one tile at a time (seat 0
                       takes the first ``hand_size`` tiles, as :meth:`HandState.deal
                       <dominoes_env.core.HandState.deal>` deals), and every forced draw: each
                       tile drawn from the boneyard is a chance outcome, uniform over the tiles
                       still in it, decided when it is drawn
observation tensor     exactly the ``obs_version`` encoding of the seat's view (the PettingZoo
                       env's observation with the same ``obs_version``); while a hand is being
                       dealt, the view of the hand before it (zeros before the first deal)
observation string     the seat's own tiles, the scores, the leader and this hand's public
                       history: everything its decisions can depend on
information state      (perfect recall) the seat's own deal and draws and every public event;
                       a string only (no tensor: see docs/openspiel.md)
serialization          ``game.deserialize_state(state.serialize())`` replays the history (the
                       pickle OpenSpiel adds is never read: see
                       :meth:`StraightDominoesGame.deserialize_state`); a state built by
                       :func:`state_from_view` has no such history and is refused
resample               ``resample_from_infostate``: a state the seat cannot tell from this one,
                       its hidden tiles guessed afresh (OpenSpiel's Python ``ISMCTSBot`` runs
                       unchanged)
returns                at the end, per player its side's ``win_loss`` (+1 / -1 / (sides - 1)) or
                       ``score_delta`` ((side points - mean of the others) / target_score) over
                       the episode, as the env's reward modes add up
=====================  =============================================================================

The game runs on the project's core: a :class:`~dominoes_env.core.MatchState` plays every move
(forced draws and passes, scoring, awards, the winner), so no rule is written here. A move that
makes seats draw waits, as a chance node, until each tile it draws has been chosen.

>>> import pyspiel
>>> game = pyspiel.load_game("python_straight_dominoes(target_score=50)")
>>> state = game.new_initial_state()
>>> state.is_chance_node(), len(state.chance_outcomes())
(True, 2)
"""

from __future__ import annotations

from .determinization import state_from_view
from .game import GAME_TYPE, StraightDominoesGame, load_game
from .observer import StraightDominoesObserver, information_state_string, observation_string
from .parameters import (
    GAME_NAME,
    PARAMETERS,
    check_parameters,
    game_options,
    game_parameters,
    observation_version,
)
from .spiel import pyspiel
from .state import StraightDominoesState

__all__ = [
    "GAME_NAME", "PARAMETERS", "StraightDominoesGame", "StraightDominoesObserver",
    "StraightDominoesState", "check_parameters", "game_options", "game_parameters",
    "information_state_string", "load_game", "observation_string", "observation_version",
    "state_from_view",
]  # fmt: skip

pyspiel.register_game(GAME_TYPE, StraightDominoesGame)
