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

import copy
import random
from typing import Any

import numpy as np

try:
    import pyspiel
except ImportError as err:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "dominoes_env.openspiel needs OpenSpiel: pip install 'straight-dominoes[openspiel]'"
    ) from err

from .core import HandState, IllegalMoveError, MatchState, RuleConfig, SeatView
from .core.hidden_history import sample_hand_history
from .core.sampling import check_view
from .core.validation import as_int, int_text, short_repr
from .obs import DEFAULT_VERSION, observation_spec
from .options import EPISODES, REWARD_MODES, delta_rewards, unique_top, win_loss_rewards

GAME_NAME = "python_straight_dominoes"

#: OpenSpiel reads ``true`` / ``false`` as booleans, and a parameter has one type, so the
#: three-way RuleConfig default (None: partnerships with 4 players) is spelled in words
_PARTNERSHIPS = {"auto": None, "yes": True, "no": False}


def _rule_defaults() -> dict[str, Any]:
    defaults = RuleConfig().to_dict()
    defaults["partnerships"] = "auto"
    return defaults


#: every game parameter with its default
PARAMETERS: dict[str, Any] = {**_rule_defaults(), "episode": "match", "reward_mode": "win_loss",
                              "obs_version": DEFAULT_VERSION}

_GAME_TYPE = pyspiel.GameType(
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

#: the line ``serialize()`` adds for a state built by :func:`state_from_view`, which
#: ``deserialize_state`` refuses (its history does not rebuild it)
_FROM_VIEW_TAG = "root=state_from_view"

# chance node kinds
_LEADER, _DEAL, _DRAW, _PLAY, _OVER = "leader", "deal", "draw", "play", "over"


def game_options(params: dict[str, Any]) -> tuple[RuleConfig, str, str]:
    """``(rules, episode, reward_mode)`` of game parameters (missing ones take their default;
    ``obs_version`` is read by :func:`observation_version`).

    >>> rules, episode, mode = game_options({"num_players": 4})
    >>> rules.partnerships, episode, mode
    (True, 'match', 'win_loss')
    """
    unknown = sorted(set(params) - set(PARAMETERS))
    if unknown:
        raise ValueError(
            f"unknown parameter(s) {', '.join(unknown)}; allowed: {', '.join(PARAMETERS)}"
        )
    merged = {**PARAMETERS, **params}
    episode, mode = merged.pop("episode"), merged.pop("reward_mode")
    merged.pop("obs_version")
    if episode not in EPISODES:
        raise ValueError(f"episode={episode!r} is not allowed; allowed: {', '.join(EPISODES)}")
    if mode not in REWARD_MODES:
        raise ValueError(
            f"reward_mode={mode!r} is not allowed; allowed: {', '.join(REWARD_MODES)}"
        )
    p = merged["partnerships"]
    if p not in _PARTNERSHIPS:
        raise ValueError(f"partnerships={p!r} is not allowed; allowed: auto, yes, no")
    merged["partnerships"] = _PARTNERSHIPS[p]
    return RuleConfig.from_dict(merged), episode, mode


def observation_version(params: dict[str, Any]) -> int:
    """The observation tensor's version in game parameters: ``obs_version``, any version
    :mod:`dominoes_env.obs` registers (default its ``DEFAULT_VERSION``); ``ValueError`` naming
    the registered versions otherwise.

    >>> observation_version({}) == DEFAULT_VERSION, observation_version({"obs_version": 4})
    (True, 4)
    >>> observation_version({"obs_version": 9})
    Traceback (most recent call last):
    ...
    ValueError: obs_version=9 is not available; allowed: 2, 3, 4
    """
    return observation_spec(params.get("obs_version", DEFAULT_VERSION)).version


def _max_score(rules: RuleConfig, episode: str) -> int:
    """A bound on a side's score at the end of an episode (for the utility range)."""
    ts = rules.tiles
    hand_points = ts.num_tiles * 8 * rules.max_pip + sum(ts.pips)
    return hand_points if episode == "hand" else rules.target_score + hand_points


def game_parameters(rules: RuleConfig, episode: str = "match",
                    reward_mode: str = "win_loss", obs_version: int = DEFAULT_VERSION
                    ) -> dict[str, Any]:
    """The game parameters of ``rules`` (for :func:`pyspiel.load_game`).

    >>> game_parameters(RuleConfig(num_players=3))["partnerships"]
    'no'
    """
    params = rules.to_dict()
    params["partnerships"] = "yes" if rules.partnerships else "no"
    params.update(episode=episode, reward_mode=reward_mode, obs_version=obs_version)
    return params


def check_parameters(params: dict[str, Any]) -> dict[str, Any]:
    """Game parameters checked before OpenSpiel sees them: known names (:data:`PARAMETERS`),
    each of its default's type (any integer type, numpy's included, as a Python ``int``; never
    a bool for a number; a ``str`` for the words) and an allowed value (:func:`game_options`,
    :func:`observation_version`). ``TypeError`` / ``ValueError`` naming the parameter: OpenSpiel
    said "Unable to cast Python instance" for a number too large for its C++ ``int``, "'numpy.
    int64' object is not iterable" for a numpy integer, and a bare ``SpielError`` for
    ``partnerships=True``.

    >>> check_parameters({"num_players": 3})
    {'num_players': 3}
    >>> check_parameters({"partnerships": True})
    Traceback (most recent call last):
    ...
    TypeError: partnerships=True must be a str (auto, yes or no), not bool
    """
    unknown = sorted(set(params) - set(PARAMETERS))
    if unknown:
        raise ValueError(f"unknown parameter(s) {', '.join(map(short_repr, unknown))}; "
                         f"allowed: {', '.join(PARAMETERS)}")
    checked: dict[str, Any] = {}
    for name, value in params.items():
        if isinstance(PARAMETERS[name], str):
            if not isinstance(value, str):
                allowed = " (auto, yes or no)" if name == "partnerships" else ""
                raise TypeError(f"{name}={short_repr(value)} must be a str{allowed}, not "
                                f"{type(value).__name__}")
            checked[name] = str(value)
        else:
            checked[name] = as_int(name, value)
    game_options(checked)  # the values: ValueError naming the parameter and what is allowed
    observation_version(checked)
    return checked


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
    """The game object :func:`pyspiel.load_game` builds (see the module table)."""

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
        super().__init__(_GAME_TYPE, info, params)

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
        if len(lines) == 3 and lines[2].startswith(_FROM_VIEW_TAG):
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


class _Position:
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
        self.phase = _LEADER
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

    def __deepcopy__(self, memo) -> _Position:
        new = object.__new__(_Position)
        for name in _Position.__slots__:
            value = getattr(self, name)
            setattr(new, name, list(value) if type(value) is list else value)
        new.match = _copy_match(self.match)
        return new


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


class StraightDominoesState(pyspiel.State):
    """A position: a :class:`~dominoes_env.core.MatchState` plus the chance bookkeeping
    (all in ``self.position``; ``self.match`` is its match)."""

    def __init__(self, game: StraightDominoesGame):
        super().__init__(game)
        self.position = _Position(game)

    def __getattr__(self, name: str):
        # the position's fields read as the state's own (state.match, state.phase, ...)
        if name in _Position.__slots__:
            return getattr(self.__dict__["position"], name)
        raise AttributeError(name)

    def __setattr__(self, name: str, value) -> None:
        if name in _Position.__slots__:
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
        return "\n".join((history, move_number, _FROM_VIEW_TAG, rest))

    def current_player(self) -> int:
        phase = self.phase
        if phase == _PLAY:
            return self.match.turn
        if phase == _OVER:
            return pyspiel.PlayerId.TERMINAL
        return pyspiel.PlayerId.CHANCE

    def _legal_actions(self, player: int) -> list[int]:
        return sorted(self.match.legal_actions())

    def chance_outcomes(self) -> list[tuple[int, float]]:
        if self.phase in (_PLAY, _OVER):  # a player's turn, or the end: no chance outcomes
            raise ValueError("chance_outcomes() is asked at a chance node only; this state is "
                             + ("terminal" if self.phase == _OVER else
                                f"player {self.match.turn}'s turn"))
        if self.phase == _LEADER:
            n = self.rules.num_players
            return [(s, 1.0 / n) for s in range(n)]
        if self.phase == _DEAL:
            taken = set(self.dealt)
            left = [t for t in range(self.rules.num_tiles) if t not in taken]
        else:
            left = self._undrawn()
            left = [t for t in left if t not in self.draws]
        p = 1.0 / len(left)
        return [(t, p) for t in left]

    def _apply_action(self, action: int) -> None:
        # OpenSpiel applies what it is given (apply_action_with_legality_check is opt-in): an
        # illegal action corrupted the state, and the error came steps later, far from the call
        phase = self.phase
        if phase == _OVER:
            raise ValueError(f"the game is over; action {action} cannot be applied")
        if phase == _PLAY:
            self._check_move(action)
            self.log.append(("P", self.match.turn, action))
            self._play(action)
            return
        self._check_chance(action)
        if phase == _DRAW:
            self.log.append(("W", self.draw_seat, action))
            self.draws.append(action)
            self._redeal_boneyard()
            self._play(self.pending)
        elif phase == _DEAL:
            rules = self.rules
            self.log.append(("D", len(self.dealt) // rules.hand_size, action))
            self.dealt.append(action)
            if len(self.dealt) == rules.num_players * rules.hand_size:
                self._start_hand()
        else:
            self.log.append(("L", action, action))
            self.leader = action
            self.phase = _DEAL

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
        if phase == _LEADER:
            possible = 0 <= action < self.rules.num_players
        elif phase == _DEAL:
            possible = 0 <= action < self.rules.num_tiles and action not in self.dealt
        else:
            possible = action not in self.draws and action in self._undrawn()
        if not possible:
            what = {_LEADER: "the leader is drawn", _DEAL: "a tile is dealt"}.get(
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
            if self.phase in (_PLAY, _OVER):  # 'Draw:[0|3]->-1' named no outcome of anything
                raise ValueError(f"action_to_string for the chance player ({player}) is asked at "
                                 "a chance node only; this state is " + (
                                     "terminal" if self.phase == _OVER else
                                     f"player {self.match.turn}'s turn"))
            if self.phase == _LEADER:
                return f"Leader:{action}"
            if self.phase == _DEAL:
                return f"Deal:{tiles[action]}->{len(self.dealt) // self.rules.hand_size}"
            return f"Draw:{tiles[action]}->{self.draw_seat}"
        hand = self.match.hand
        if hand is None:
            return f"Action:{action}"
        return str(hand.move_of(action))

    def is_terminal(self) -> bool:
        return self.phase == _OVER

    def returns(self) -> list[float]:
        rules = self.rules
        if self.phase != _OVER:
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
        if self.phase == _DEAL:
            text += f"\n(dealing the next hand: {len(self.dealt)} tiles dealt)"
        elif self.phase == _DRAW:
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
        rules = self.rules
        player = as_int("player_id", player_id, 0, rules.num_players - 1)
        if not callable(probability_sampler):
            raise TypeError("probability_sampler must be a callable returning floats in [0, 1); "
                            f"got {type(probability_sampler).__name__}")
        if self.phase != _PLAY:
            where = "terminal" if self.phase == _OVER else "a chance node"
            raise ValueError("resample_from_infostate needs a decision node (a seat to play); "
                             f"this state is {where}")
        u = probability_sampler()
        if not isinstance(u, float) or not 0.0 <= u < 1.0:
            raise ValueError(f"probability_sampler must return a float in [0, 1); got {u!r}")
        rng = random.Random(int(u * 2**53))
        log = self.log
        begin = max(i for i, entry in enumerate(log) if entry[0] in "LR")  # the current hand
        segment = log[begin + 1:]
        drawn_tiles = [t for kind, _, t in segment if kind == "W"]
        game = self.get_game()
        if log[begin][0] == "R":
            view, hands, boneyard = self.root
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
        _, start_hands, drawn = sample_hand_history(start, codes, self.match.view(player), rng)
        # the new history: this one before the current hand, then the hand with the new tiles
        if log[0][0] == "R":
            new = state_from_view(game, *self.root)
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

    # -- views -------------------------------------------------------------------------------
    def view(self, seat: int) -> SeatView | None:
        """``seat``'s :class:`~dominoes_env.core.SeatView` (``None`` before the first deal)."""
        return None if self.match.hand is None else self.match.view(seat)

    # -- the engine ----------------------------------------------------------------------------
    def _undrawn(self) -> list[int]:
        """The tiles still in the boneyard (undrawn), in index order."""
        hand = self.match.hand
        held = hand.played
        for h in hand.hands:
            held |= h
        free = self.rules.tiles.full_mask & ~held
        return [t for t in range(self.rules.num_tiles) if free >> t & 1]

    def _start_hand(self) -> None:
        rules = self.rules
        h = rules.hand_size
        hands = []
        for s in range(rules.num_players):
            mask = 0
            for t in self.dealt[s * h : (s + 1) * h]:
                mask |= 1 << t
            hands.append(mask)
        dealt = set(self.dealt)
        # the boneyard's order is decided tile by tile as tiles are drawn (see _play)
        boneyard = [t for t in range(rules.num_tiles) if t not in dealt]
        self.match.start_hand(self.leader, HandState(rules, hands, boneyard, self.leader))
        self.dealt = []
        self.phase = _PLAY

    def _redeal_boneyard(self) -> None:
        """Put the tiles chosen for the pending move's draws on top of the boneyard.

        The hand is rebuilt from the mover's view and every hand (the core's own
        :meth:`HandState.from_view <dominoes_env.core.HandState.from_view>`) with the boneyard
        in the new order; everything else about the position is unchanged."""
        hand = self.match.hand
        chosen = set(self.draws)
        order = self.draws + [t for t in self._undrawn() if t not in chosen]
        # the match's current hand is replaced by the same position with the new boneyard order
        self.match.hand = HandState.from_view(hand.view(hand.turn), hand.hands, order)

    def _play(self, code: int) -> None:
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
            self.phase = _DRAW
            return
        self.pending, self.draws, self.draw_seat = -1, [], -1
        match = self.match
        match.apply_unchecked(code)
        if match.winner is not None:
            self.phase = _OVER
        elif match.hand.is_over:
            if self.episode == "hand":
                self.phase = _OVER
                return
            leader = match.next_leader()
            if leader is None:
                self.phase = _LEADER
            else:
                self.log.append(("L", leader, leader))
                self.leader = leader
                self.phase = _DEAL
        else:
            self.phase = _PLAY


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
    state.phase = _PLAY
    state.root = (view, tuple(hands), tuple(boneyard))
    # a root token for information states: what each seat saw at this position
    state.root_strings = [observation_string(state, p) for p in range(view.rules.num_players)]
    state.log.append(("R", 0, 0))
    return state


def _bits(mask: int) -> list[int]:
    return [t for t in range(mask.bit_length()) if mask >> t & 1]


def _replay(state: StraightDominoesState, entry: tuple[str, int, int], action: int) -> None:
    """Apply the action of a log entry to ``state`` (a leader chosen by the rules, not by
    chance, is no action)."""
    if entry[0] != "L" or state.phase == _LEADER:
        state.apply_action(action)


class StraightDominoesObserver:
    """Observations (the env's encoding of observation version ``obs_version``) and information
    states (perfect recall)."""

    def __init__(self, rules: RuleConfig, iig_obs_type=None, obs_version: int = DEFAULT_VERSION):
        if iig_obs_type is None:
            iig_obs_type = pyspiel.IIGObservationType(perfect_recall=False)
        if iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER or (
            not iig_obs_type.public_info
        ):
            raise ValueError(
                "python_straight_dominoes observes one seat's private and public information "
                "only (private_info=SINGLE_PLAYER, public_info=True)"
            )
        self.rules = rules
        self.perfect_recall = iig_obs_type.perfect_recall
        self.spec = observation_spec(obs_version)
        size = 0 if self.perfect_recall else self.spec.layout(rules).size
        self.tensor = np.zeros(size, np.float32)
        self.dict = {"observation": self.tensor}

    def set_from(self, state: StraightDominoesState, player: int) -> None:
        if self.perfect_recall:
            return
        hand = state.match.hand
        if hand is None:
            self.tensor.fill(0.0)
        else:
            self.spec.encode(state.match.view(player), out=self.tensor)

    def string_from(self, state: StraightDominoesState, player: int) -> str:
        if self.perfect_recall:  # checked there, as observation_string's view checks it
            return information_state_string(state, player)
        return observation_string(state, player)


def observation_string(state: StraightDominoesState, player: int) -> str:
    """The seat's own tiles, scores, leader and this hand's public history."""
    match = state.match
    if match.hand is None:
        return f"p{player} dealing"
    v = match.view(player)
    tiles = " ".join(str(t) for t in v.hand_tiles)
    history = " ".join(",".join(map(str, ev)) for ev in v.history)
    return (f"p{player} hand {v.hand_number} scores {list(v.scores)} leader {v.leader} "
            f"turn {v.turn} | {tiles} | {history}")


def information_state_string(state: StraightDominoesState, player: int) -> str:
    """Everything ``player`` has seen, in order: its own deal and draws, every leader and
    every move (the other seats' tiles show only as who received one)."""
    # any player was taken ('p9 ...'), where the observation string refused it
    player = as_int("player", player, 0, state.get_game().num_players() - 1)
    out = [f"p{player}"]
    for kind, seat, value in state.log:
        if kind == "P":
            out.append(f"P{seat}:{value}")
        elif kind in ("D", "W"):
            out.append(f"{kind}{value}" if seat == player else f"{kind.lower()}{seat}")
        elif kind == "L":
            out.append(f"L{seat}")
        else:  # a state built from a view: what this seat saw there
            out.append("R:" + state.root_strings[player])
    return " ".join(out)


pyspiel.register_game(_GAME_TYPE, StraightDominoesGame)
