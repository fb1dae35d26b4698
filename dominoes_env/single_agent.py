"""``SingleAgentEnv``: a Gymnasium env in which one learning seat plays against agent objects.

The other seats (opponents, and in partnerships the partner too) are played inside ``step`` by
objects with the Agent protocol's shape, duck-typed: ``act(view) -> action code`` and, when they
have them, ``reset(seed)`` at every episode and ``begin_hand(view)`` at every new hand.
``opponents`` is ``None`` (a :class:`RandomPlayer` per seat: :mod:`.random_player`'s, which
this module re-exports), one object (it plays every other seat) or a list of
``num_players - 1`` objects in seat-relative order: ``opponents[0]`` plays the seat after the
learner, ``opponents[1]`` the next one (the partner with 4 players in partnerships), and so
on.

- observation: the seat-relative vector of :mod:`.obs` (``Box(D, float32)``);
- action: ``Discrete(T * 4)``; :meth:`SingleAgentEnv.action_masks` for sb3-contrib's
  ``MaskablePPO``;
- reward: the learner's side's reward of :mod:`.options`; with ``"score_delta"`` it covers
  everything since the learner's previous decision (the opponents' plays and the hand award
  included), so over an episode the rewards add up to (own side's score - the mean of the other
  sides' scores) * ``reward_scale``;
- ``seat="random"`` draws the learner's seat at every reset, or give a seat number;
- ``learner="side"`` (4 players in partnerships): the learner plays both seats of its side
  (the partner is the learning policy itself, seeing from the partner's seat), and
  ``opponents`` covers only the other side's seats (one object, or a list in seat-relative
  order); ``info["seat"]`` and the observation are those of the seat to act;
- ``reset(seed=s)`` seeds the match, the seat draw and every opponent (``reset(seed)`` with a
  seed drawn from the env's generator), so the same seed gives the same episode. If an episode
  would end before the learner's first decision (a tiny ``target_score``), another is dealt.
- info: one fixed structure (the table in :mod:`.infos`): ``seat``, ``hand_number``, ``scores``,
  ``hands_ended`` (hands that ended since the learner's previous decision) and the last such
  hand's ``hand_end``, ``domino_seat``, ``award_side``, ``award_points``; ``illegal_action``.
  With ``info_events=True`` also ``events`` (the public events since the learner's previous
  decision, as in the AEC env), ``hand_results`` (``(hand_number, result, award)`` for each
  hand that ended meanwhile) and ``illegal_reason``.
- ``reset()`` or ``step()`` after ``close()``: :class:`~.lifecycle.ClosedEnvironmentError` (a
  ``RuntimeError`` and Gymnasium's ``ClosedEnvironmentError``), as in the PettingZoo envs;
  ``step()``, ``action_masks()``, ``view()`` or ``render()`` before the first ``reset()``:
  :class:`~.lifecycle.ResetFirstError` (a ``RuntimeError``, as the AEC env raises).

>>> env = SingleAgentEnv(num_players=2, seat=0)
>>> obs, info = env.reset(seed=1)
>>> obs.shape, env.action_masks().dtype.name, info["seat"]
((234,), 'bool', 0)
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from .core import IllegalMoveError, MatchState, SeatView
from .core.validation import ParameterTypeError, as_int, as_seed, short_repr
from .infos import NO_HAND_END, hand_end_fields, scores_array
from .lifecycle import ResetFirstError, closed_error
from .obs import NUM_ENDS, observation_spec
from .obs.actions import check_action
from .options import (
    check_reset_options,
    delta_rewards,
    episode_winner,
    split_options,
    win_loss_rewards,
)
from .random_player import RandomPlayer
from .registration import register_gymnasium
from .render import render_frame

RENDER_MODES = ("human", "ansi", "rgb_array")
MAX_REDEALS = 1000


class SingleAgentEnv(gymnasium.Env):
    """One learning seat against agent objects; see the module docstring.

    ``options``: any :class:`~dominoes_env.core.RuleConfig` field, the env options of
    :mod:`.options` (``reward_mode``, ``episode``, ``reward_scale``, ``illegal_action``,
    ``illegal_reward``) or ``rules=RuleConfig(...)``.
    """

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": 2}
    _closed = False  # close() sets it

    def __init__(self, opponents: Any = None, seat: int | str = "random",
                 render_mode: str | None = None, learner: str = "seat", **options: Any):
        base = options.pop("rules", None)
        self.rules, self.options = split_options(options, base)
        rules = self.rules
        n = rules.num_players
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(f"render_mode={short_repr(render_mode)} is not supported; allowed: "
                             "None, " + ", ".join(map(repr, RENDER_MODES)))
        self.render_mode = render_mode
        if not (isinstance(seat, str) and seat == "random"):
            try:
                seat = as_int("seat", seat, 0, n - 1)
            except ValueError:
                raise ParameterTypeError(f"seat={short_repr(seat)} is not allowed; allowed: "
                                         f"'random' or 0..{n - 1}") from None
        self.seat_option = seat
        if learner not in ("seat", "side"):
            raise ValueError(f"learner={short_repr(learner)} is not allowed; allowed: 'seat', "
                             "'side'")
        if learner == "side" and not rules.partnerships:
            raise ValueError("learner='side' needs 4 players in partnerships")
        self.learner = learner
        others = n - 1 if learner == "seat" else n - len(rules.seats_of(0))
        self.opponents = self._check_opponents(opponents, others)
        self._obs_spec = observation_spec(self.options.obs_version)
        self._lay = lay = self._obs_spec.layout(rules)
        self.num_actions = rules.num_tiles * NUM_ENDS
        self.observation_space = spaces.Box(lay.low, lay.high, dtype=np.float32)
        self.action_space = spaces.Discrete(self.num_actions)
        self._scale = self.options.scale(rules)
        self.match: MatchState | None = None
        self.seat = -1
        self._hand = None
        self._done = True

    @staticmethod
    def _check_opponents(opponents: Any, count: int) -> list:
        if opponents is None:
            return [RandomPlayer() for _ in range(count)]
        if isinstance(opponents, type):  # the class, not an agent: reset() failed on 'self'
            raise TypeError(f"opponents={opponents.__name__} is a class; pass an agent object "
                            f"(an instance: {opponents.__name__}(...))")
        if callable(getattr(opponents, "act", None)):
            return [opponents] * count
        if not isinstance(opponents, (list, tuple)) or len(opponents) != count:
            raise ValueError(
                f"opponents must be None, one agent object, or a list of {count} agent objects "
                f"(one per seat the learner does not play), not {short_repr(opponents)}"
            )
        for k, opp in enumerate(opponents):
            if isinstance(opp, type) or not callable(getattr(opp, "act", None)):
                raise TypeError(f"opponents[{k}]={short_repr(opp)} has no act(view) method")
        return list(opponents)

    # -- episode -----------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Deal a new match (see the module docstring for seeding). ``options`` may hold keys
        of the caller's own; a rule or env option there is refused (they are fixed when the
        environment is made). After :meth:`close`, :class:`~.lifecycle.ClosedEnvironmentError`."""
        if self._closed:
            raise closed_error()
        check_reset_options(options)
        super().reset(seed=as_seed(seed, optional=True))
        n = self.rules.num_players
        for _ in range(MAX_REDEALS):
            rng = self.np_random
            match_seed = int(rng.integers(2**63))
            self.seat = int(rng.integers(n)) if self.seat_option == "random" else self.seat_option
            opp_seeds = [int(s) for s in rng.integers(2**63, size=n - 1)]
            side = self.rules.side_of(self.seat)
            self._learner_seats = ((self.seat,) if self.learner == "seat"
                                   else self.rules.seats_of(side))
            others = [(self.seat + k) % n for k in range(1, n)]
            others = [s for s in others if s not in self._learner_seats]
            self._by_seat = {}
            for seat_k, opp, s in zip(others, self.opponents, opp_seeds[: len(others)],
                                      strict=True):
                self._by_seat.setdefault(seat_k, opp)
                if callable(getattr(opp, "reset", None)):
                    opp.reset(seed=s)
            self.match = MatchState(self.rules, seed=match_seed)
            self._hand = self.match.hand
            self._done = False
            self._began = -1
            self._paid = [0] * self.rules.num_sides  # scores the learner's rewards cover so far
            events: list = []
            results: list = []
            self._play_others(events, results)
            if not self._done:
                return self._observe(), self._info(events, results)
        raise RuntimeError(f"no episode gave seat {self.seat} a decision in {MAX_REDEALS} deals; "
                           f"is target_score={self.rules.target_score} too small?")

    def step(self, action):
        if self._closed:
            raise closed_error()
        if self.match is None:
            raise ResetFirstError("call reset() before step()")
        if self._done:  # or a reset() whose opponent failed
            raise RuntimeError("the episode is over (or never began): call reset()")
        if type(action) is int and 0 <= action < self.num_actions:
            code = action
        else:
            code = check_action(action, self.num_actions)
        events: list = []
        results: list = []
        try:
            self._play(code, events, results)
        except IllegalMoveError as err:
            if self.options.illegal_action == "raise":
                raise
            self._done = True
            info = self._info(events, results, illegal=code)
            if self.options.info_events:
                info["illegal_reason"] = err.reason
            return self._observe(), float(self.options.illegal_reward), True, False, info
        if not self._done:
            self._play_others(events, results)
        reward = self._reward()
        obs = self._observe()
        if self.render_mode == "human":
            self.render()
        return obs, reward, self._done, False, self._info(events, results)

    def _play(self, code: int, events: list, results: list) -> None:
        """Play ``code`` for the seat to move; note events, hand ends and the episode's end."""
        match = self.match
        hand = match.hand
        start = len(hand.history)
        if hand.is_legal(code):
            match.apply_unchecked(code)
        else:
            match.play(code)  # raises IllegalMoveError naming the reason, state unchanged
        events.extend(hand.history[start:])
        if hand.turn < 0:
            results.append((match.hand_number_of(hand), hand.result, hand.award,
                            match.awards[-1]))
        if match.winner is not None or (hand.turn < 0 and self.options.episode == "hand"):
            self._done = True
            self._hand = hand
        else:
            self._hand = match.hand

    def _play_others(self, events: list, results: list) -> None:
        """The other seats' moves up to the learner's next decision or the episode's end. An
        opponent that fails (raises, or chooses an illegal move) ends the episode: the seat to
        play is not the learner's then, and the next ``step`` played the learner's action for
        that opponent."""
        try:
            self._play_others_until_learner(events, results)
        except BaseException:
            self._done = True
            raise

    def _play_others_until_learner(self, events: list, results: list) -> None:
        match = self.match
        while not self._done:
            if self._began != match.hand_number:
                self._began = match.hand_number
                for s, opp in self._by_seat.items():
                    if callable(getattr(opp, "begin_hand", None)):
                        opp.begin_hand(match.view(s))
            turn = match.turn
            if turn in self._learner_seats:
                self.seat = turn
                return
            opp = self._by_seat[turn]
            code = opp.act(match.view(turn))
            try:
                self._play(check_action(code, self.num_actions), events, results)
            except (IllegalMoveError, TypeError, ValueError) as err:
                raise ValueError(f"opponent {short_repr(opp, 160)} at seat {turn} chose action "
                                 f"{short_repr(code)}: {err}") from err

    def _reward(self) -> float:
        side = self.rules.side_of(self.seat)
        if self.options.reward_mode == "win_loss":
            if not self._done:
                return 0.0
            return win_loss_rewards(episode_winner(self.match, self.options.episode),
                                    self.rules.num_sides)[side]
        scores = self.match.scores
        if scores == self._paid:
            return 0.0
        deltas = [a - b for a, b in zip(scores, self._paid, strict=True)]
        self._paid = scores[:]
        return delta_rewards(deltas, self._scale)[side]

    # -- observing ---------------------------------------------------------------------------
    def _observe(self) -> np.ndarray:
        return self._obs_spec.encode_state(self._lay, self._hand, self.seat, self.match.scores,
                                           self.match.winner is not None)

    def _info(self, events: list, results: list, illegal: int = -1) -> dict[str, Any]:
        """The fixed-structure info of :mod:`.infos` (plus the event lists when asked)."""
        match = self.match
        end, domino_seat, award_side, award_points = (
            hand_end_fields(results[-1][1], results[-1][3]) if results else NO_HAND_END)
        # the hand on show: at the end of a hand episode the match has dealt the next one
        # already, and the finished hand was called hand 1
        info = {"seat": self.seat, "hand_number": match.hand_number_of(self._hand),
                "scores": scores_array(match.scores), "hands_ended": len(results),
                "hand_end": end, "domino_seat": domino_seat, "award_side": award_side,
                "award_points": award_points, "illegal_action": illegal}
        if self.options.info_events:
            info["events"] = events
            info["hand_results"] = [r[:3] for r in results]
            info["illegal_reason"] = ""
        return info

    def action_masks(self) -> np.ndarray:
        """Boolean mask of the legal action codes now (all False once the episode is over);
        the method sb3-contrib's ``MaskablePPO`` calls. Before :meth:`reset` there is no
        position: :class:`~.lifecycle.ResetFirstError` (a ``RuntimeError``)."""
        if self.match is None:
            raise ResetFirstError("call reset() before action_masks()")
        mask = np.zeros(self.num_actions, dtype=bool)
        if not self._done and self.match.turn == self.seat:
            mask[self.match.legal_actions()] = True
        return mask

    def view(self) -> SeatView:
        """The learner's :class:`~dominoes_env.core.SeatView` now (before :meth:`reset`,
        :class:`~.lifecycle.ResetFirstError`, a ``RuntimeError``)."""
        if self.match is None:
            raise ResetFirstError("call reset() before view()")
        return self.match.view(self.seat)

    # -- rendering ---------------------------------------------------------------------------
    def render(self):
        """``"ansi"``: the text picture; ``"human"``: print it; ``"rgb_array"``: an image."""
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode; pass render_mode=")
            return None
        if self.match is None:
            raise ResetFirstError("call reset() before render()")
        return render_frame(self.render_mode, self._hand, self.match)

    def close(self) -> None:
        """End the environment (again: a no-op): a later ``reset()`` or ``step()`` raises
        :class:`~.lifecycle.ClosedEnvironmentError`."""
        self._closed = True


register_gymnasium()
