"""The OpenSpiel game: its :data:`GAME_TYPE` (what :mod:`dominoes_env.openspiel` registers),
the game object :func:`pyspiel.load_game` builds, and :func:`load_game`."""

from __future__ import annotations

from typing import Any

from ..core import RuleConfig
from ..core.validation import int_text, short_repr
from .observer import StraightDominoesObserver
from .parameters import (
    GAME_NAME,
    PARAMETERS,
    check_parameters,
    game_options,
    game_parameters,
    observation_version,
)
from .spiel import pyspiel
from .state import FROM_VIEW_TAG, StraightDominoesState

GAME_TYPE = pyspiel.GameType(
    short_name=GAME_NAME,
    long_name="Python Straight Dominoes (All Fives)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=4,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=False,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=PARAMETERS,
)


def _max_score(rules: RuleConfig, episode: str) -> int:
    """A bound on a side's score at the end of an episode (for the utility range)."""
    ts = rules.tiles
    hand_points = ts.num_tiles * 8 * rules.max_pip + sum(ts.pips)
    return hand_points if episode == "hand" else rules.target_score + hand_points


def load_game(rules: RuleConfig | None = None, **params: Any) -> pyspiel.Game:
    """The game for ``rules`` (or the defaults) plus ``episode`` / ``reward_mode`` and any
    other parameter (:data:`PARAMETERS`, checked by :func:`check_parameters`).

    >>> load_game(RuleConfig(num_players=3)).num_players()
    3
    """
    if rules is not None and not isinstance(rules, RuleConfig):
        raise TypeError(f"rules must be a RuleConfig (or None: the defaults), not "
                        f"{type(rules).__name__}")
    base = game_parameters(rules) if rules is not None else {}
    return pyspiel.load_game(GAME_NAME, check_parameters({**base, **params}))


class StraightDominoesGame(pyspiel.Game):
    """The game object :func:`pyspiel.load_game` builds (see the table of
    :mod:`dominoes_env.openspiel`)."""

    def __init__(self, params: dict[str, Any] | None = None):
        params = dict(params or {})
        self.rules, self.episode, self.reward_mode = game_options(params)
        #: the observation tensor's version (the ``obs_version`` parameter)
        self.obs_version = observation_version(params)
        rules = self.rules
        if self.reward_mode == "win_loss":
            low, high = -1.0, 1.0
        else:
            high = _max_score(rules, self.episode) / rules.target_score
            low = -high
        hand_length = rules.num_tiles
        info = pyspiel.GameInfo(
            num_distinct_actions=rules.num_tiles * 4,
            max_chance_outcomes=rules.num_tiles,
            num_players=rules.num_players,
            min_utility=low,
            max_utility=high,
            utility_sum=0.0,
            # a hand has at most one play per tile; a match has no fixed bound (hands can
            # score nothing), so this is a generous cap rather than a guarantee
            max_game_length=hand_length if self.episode == "hand" else hand_length * 1000,
        )
        super().__init__(GAME_TYPE, info, params)

    def new_initial_state(self) -> StraightDominoesState:
        return StraightDominoesState(self)

    def deserialize_state(self, text: str) -> StraightDominoesState:
        """The state ``state.serialize()`` wrote, rebuilt by replaying its history from the
        initial state (every chance outcome is in it, so the history decides the state), each
        action checked as :meth:`~pyspiel.State.apply_action` checks it. ``ValueError`` naming
        the problem for text that is no such state.

        The third line (``__dict__=``, OpenSpiel's pickle of the state's Python attributes) is
        never read: unpickling it would run whatever code a crafted string held. OpenSpiel's own
        ``pyspiel.deserialize_game_and_state`` still unpickles it (every Python game's state
        is written that way): give that function only strings you made.

        A state built by :func:`state_from_view` (or one that follows from it) cannot be
        rebuilt from its history: the position it starts from is not in it, and replaying
        from the game's start would make the initial chance node (or fail a move later, with a
        misleading message). Its ``serialize()`` text says so (a ``root=state_from_view``
        line) and is refused with a ``ValueError``; keep such a state with ``clone()``, or build
        it again with :func:`state_from_view`."""
        if not isinstance(text, str):
            raise TypeError(f"a serialized state is a str, not {type(text).__name__}")
        lines = text.split("\n", 2)
        if len(lines) == 3 and lines[2].startswith(FROM_VIEW_TAG):
            raise ValueError("a state built by state_from_view cannot be rebuilt from its "
                             "history (the position it starts from is not in it); keep it "
                             "with clone(), or build it again with state_from_view")
        tags = ("history=", "move_number=", "__dict__=")
        if len(lines) != 3 or not all(map(str.startswith, lines, tags)):
            raise ValueError("not a serialized state: three lines, 'history=...', "
                             "'move_number=...' and '__dict__=...', are expected")
        state = self.new_initial_state()
        history = lines[0][len(tags[0]):]
        for i, item in enumerate(history.split(",") if history else [], 1):
            player, _, action = item.partition(":")
            try:  # ASCII digits only: int() read '1_0' as 10 and a '\u0665' as 5
                player, action = int_text(player), int_text(action)
            except ValueError:
                raise ValueError(f"history entry {i} ({short_repr(item)}) is not "
                                 "'player:action'") from None
            if not 0 <= action < self.num_distinct_actions():  # -1 is OpenSpiel's invalid
                raise ValueError(f"history entry {i} ({short_repr(item)}) holds no action "  # one
                                 f"(0..{self.num_distinct_actions() - 1})")
            if player != state.current_player():
                raise ValueError(f"history entry {i} ({item}) is a move of player {player}, "
                                 f"where player {state.current_player()} is to move")
            try:
                state.apply_action(action)
            except ValueError as err:
                raise ValueError(f"history entry {i} ({item}): {err}") from None
        given = lines[1][len(tags[1]):]
        if given != str(state.move_number()):
            raise ValueError(f"move_number={short_repr(given)}, where its history makes "
                             f"{state.move_number()} moves")
        return state

    def make_py_observer(self, iig_obs_type=None, params=None):
        if params:
            raise ValueError(f"observation parameters are not supported; got {params}")
        return StraightDominoesObserver(self.rules, iig_obs_type, self.obs_version)
