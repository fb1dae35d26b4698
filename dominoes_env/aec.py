"""The PettingZoo AEC environment: ``env()`` (wrapped, use this) and ``raw_env``.

=================  ===========================================================================
agents             ``player_0 .. player_{n-1}`` (seat ``i`` is ``player_i``; ``seat_of(agent)``
                   and ``agent_of(seat)`` convert)
action space       ``Discrete(T * 4)``: ``tile_index * 4 + end`` (see :mod:`.obs.actions`)
observation        ``{"observation": Box(D, float32), "action_mask": Box(T * 4, int8)}``,
                   seat-relative; the layout table is in :mod:`.obs.v2` (other versions:
                   ``obs_version``, :mod:`.obs`)
state()            every hand plus seat 0's observation (:func:`.obs.v2.state_vector`)
rewards            ``reward_mode`` / ``episode`` / ``reward_scale`` (table in :mod:`.options`)
illegal actions    ``illegal_action="penalize"`` (default: what PettingZoo's
                   ``TerminateIllegalWrapper`` does, offender ``illegal_reward``, episode ends)
                   or ``"raise"`` (the core's ``IllegalMoveError``, state unchanged); a
                   non-integer or out-of-range action raises ``TypeError`` / ``ValueError``
render modes       ``"ansi"`` (text), ``"human"`` (prints the text), ``"rgb_array"`` (image)
misuse             a method called before ``reset()``: :class:`ResetFirstError` (a
                   ``RuntimeError``); an agent not of this env: :class:`UnknownAgentError` (a
                   ``ValueError`` and a ``KeyError``); ``reset()`` or ``step()`` after
                   ``close()``: :class:`~.lifecycle.ClosedEnvironmentError` (a
                   ``RuntimeError``); ``last()`` once every agent is done: ``RuntimeError``
registry id        ``dominoes/straight_dominoes-v1`` (``pettingzoo.make("aec", ...)``; the
                   parallel form in :mod:`.parallel`)
pickling           ``EzPickle`` (the constructor arguments) plus the episode in progress, so
                   an unpickled env carries on exactly where the original was
=================  ===========================================================================

Forced draws and passes never ask an agent: they happen inside ``step`` (the core plays them
after every play) and show in the next observations (hand sizes, boneyard, known lacks) and in
``infos``. After each step every agent's info is a dict of its own (as in PettingZoo's envs),
of one fixed structure
(the table in :mod:`.infos`: ``hand_number``, ``scores``, ``hand_end``, ``domino_seat``,
``award_side``, ``award_points``, ``illegal_action``), so libraries that stack infos can; with
``info_events=True`` it also holds ``"events"``, the public events of that step
(``("play", seat, code, points)``, ``("draw", seat, n)``, ``("pass", seat)``), and
``"illegal_reason"``. The events are the core's typed records (``Play``, ``Draw``, ``Pass``):
named tuples equal to the tuples shown, with fields (``ev.seat``, ``ev.points``). With
``episode="match"`` the next hand is dealt at once, so the next observation shows the new deal;
with ``episode="hand"`` the last observations show the finished hand.

Observations are fresh arrays on every call (safe to keep).

>>> e = env(num_players=2, target_score=100)
>>> e.reset(seed=1)
>>> obs, reward, terminated, truncated, info = e.last()
>>> obs["observation"].shape, obs["action_mask"].shape, int(obs["action_mask"].sum())
((234,), (112,), 7)
"""

from __future__ import annotations

import random
from operator import sub
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.env_logger import EnvLogger
from pettingzoo.utils.wrappers.order_enforcing import (
    AECOrderEnforcingIterable,
    AECOrderEnforcingIterator,
)

from .core import IllegalMoveError, MatchState
from .core.validation import as_int, as_seed, short_repr
from .infos import NO_HAND_END, hand_end_fields, scores_array
from .lifecycle import ResetFirstError, closed_error
from .obs import NUM_ENDS, observation_spec
from .obs.actions import check_action, mask_of
from .obs.v2 import state_bounds, state_vector
from .options import (
    check_reset_options,
    delta_rewards,
    episode_winner,
    split_options,
    win_loss_rewards,
)
from .registration import register_pettingzoo
from .render import render_frame

__all__ = ["ENV_NAME", "RENDER_MODES", "OrderEnforcing", "ResetFirstError", "UnknownAgentError",
           "env", "raw_env", "unknown_agent"]

ENV_NAME = "straight_dominoes_v1"
RENDER_MODES = ("human", "ansi", "rgb_array")


class UnknownAgentError(KeyError, ValueError):
    """An agent this environment does not have (``observe("zzz")``, ``action_space(None)``):
    a ``ValueError`` naming it and the agents there are, and a ``KeyError`` too, so code that
    catches ``KeyError`` for an unknown agent catches it."""

    def __str__(self) -> str:  # a KeyError shows its argument's repr: the message as it is
        return str(self.args[0]) if self.args else ""


def unknown_agent(agent: Any, agents: list[str]) -> UnknownAgentError:
    """The error for ``agent``, not one of ``agents``."""
    return UnknownAgentError(f"no agent {short_repr(agent)} in this environment; the agents are "
                             f"{', '.join(agents)}")


def _before_reset(call: str) -> ResetFirstError:
    return ResetFirstError(f"call reset() before {call}")


def _episode_over() -> RuntimeError:
    return RuntimeError("the episode is over (every agent is done): call reset() to play another")


# what a pickle carries beyond the constructor arguments (so a round trip resumes the episode)
_EPISODE_ATTRS = ("match", "_hand", "_seeder", "agents", "rewards", "_cumulative_rewards",
                  "terminations", "truncations", "infos", "agent_selection",
                  "_skip_agent_selection", "_zero_rewards", "_scores", "_scores_arr",
                  "_closed")  # fmt: skip


def env(render_mode: str | None = None, **options: Any) -> AECEnv:
    """The wrapped AEC environment (PettingZoo classic convention).

    ``options``: any :class:`~dominoes_env.core.RuleConfig` field, the env options of
    :mod:`.options`, or ``rules=RuleConfig(...)`` as a base. The one wrapper is
    :class:`OrderEnforcing` (PettingZoo's ``OrderEnforcingWrapper``). Illegal actions are
    handled inside :class:`raw_env` as ``TerminateIllegalWrapper`` would handle them (one
    wrapper layer fewer per step).
    """
    return OrderEnforcing(raw_env(render_mode=render_mode, **options))


# attributes an AEC loop reads on every step
_HOT = ("agents", "agent_selection", "rewards", "terminations", "truncations", "infos",
        "_cumulative_rewards", "possible_agents", "num_agents")


def _forward(name: str) -> property:
    def get(self):
        if not self._has_reset:  # an AttributeError falls back to __getattr__ and its message
            raise AttributeError(name)
        return getattr(self.env, name)

    return property(get, doc=f"``{name}`` of the wrapped env")


class OrderEnforcing(wrappers.OrderEnforcingWrapper):
    """PettingZoo's ``OrderEnforcingWrapper`` with the attributes every step reads forwarded
    as properties: PettingZoo's per-access ``__getattr__`` chain costs about as much as a
    whole game step. A method called before ``reset`` raises :class:`ResetFirstError`, which is
    also each error PettingZoo's wrapper raised there."""

    def last(self, observe: bool = True):
        if not self._has_reset:
            raise _before_reset("last()")
        raw = self.env
        if not raw.agents:  # PettingZoo's own envs raise KeyError naming the last agent
            raise _episode_over()
        agent = raw.agent_selection
        obs = raw.observe(agent) if observe else None
        return (obs, raw._cumulative_rewards[agent], raw.terminations[agent],
                raw.truncations[agent], raw.infos[agent])

    def observe(self, agent: str):
        if not self._has_reset:
            raise _before_reset("observe()")
        return self.env.observe(agent)

    def state(self):
        if not self._has_reset:
            raise _before_reset("state()")
        return self.env.state()

    def render(self):
        if not self._has_reset:
            raise _before_reset("render()")
        return self.env.render()

    def step(self, action) -> None:
        if not self._has_reset:
            raise _before_reset("step()")
        elif not self.env.agents and not self.env.closed:  # closed: the raw env's error
            self._has_updated = True
            EnvLogger.warn_step_after_terminated_truncated()
        else:
            self._has_updated = True
            self.env.step(action)


    def __str__(self) -> str:
        return str(self.env)

    def agent_iter(self, max_iter: int = 2**63):
        if not self._has_reset:
            raise _before_reset("agent_iter()")
        return _Iterable(self, as_int("max_iter", max_iter, 0))  # "x" failed on <=, 1.5 ran


for _name in _HOT:
    setattr(OrderEnforcing, _name, _forward(_name))
del _name


class _Iterable(AECOrderEnforcingIterable):
    def __iter__(self):
        return _Iterator(self.env, self.max_iter)


class _Iterator(AECOrderEnforcingIterator):
    """``AECOrderEnforcingIterator`` reading the raw env's attributes directly."""

    def __next__(self) -> str:
        wrapper = self.env
        raw = wrapper.env
        if not raw.agents or self.iters_til_term <= 0:
            raise StopIteration
        self.iters_til_term -= 1
        if not wrapper._has_updated:
            raise AssertionError("need to call step() or reset() in a loop over `agent_iter`")
        wrapper._has_updated = False
        return raw.agent_selection


class raw_env(AECEnv, EzPickle):
    """Straight Dominoes as a PettingZoo AEC environment (see the module docstring).

    >>> e = raw_env(num_players=4)
    >>> e.possible_agents, e.rules.partnerships
    (['player_0', 'player_1', 'player_2', 'player_3'], True)
    """

    metadata = {
        "name": ENV_NAME,
        "render_modes": list(RENDER_MODES),
        "is_parallelizable": False,
        "render_fps": 2,
    }

    def __init__(self, render_mode: str | None = None, **options: Any):
        EzPickle.__init__(self, render_mode=render_mode, **options)
        super().__init__()
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(
                f"render_mode={short_repr(render_mode)} is not supported; allowed: None, "
                + ", ".join(map(repr, RENDER_MODES))
            )
        base = options.pop("rules", None)
        self.rules, self.options = split_options(options, base)
        self.render_mode = render_mode
        rules = self.rules
        n = rules.num_players
        self._obs_spec = spec = observation_spec(self.options.obs_version)
        self._lay = lay = spec.layout(rules)
        self._encode_state = spec.encode_state
        #: pass the legal codes observe() has anyway, if the version takes them
        self._encode_legal = spec.takes_legal
        self.num_actions = rules.num_tiles * NUM_ENDS
        self.possible_agents = [f"player_{s}" for s in range(n)]
        self._names = tuple(self.possible_agents)
        self._seat = {a: s for s, a in enumerate(self.possible_agents)}
        self._side = {a: rules.side_of(s) for s, a in enumerate(self.possible_agents)}
        self.observation_spaces = {
            a: spaces.Dict({
                "observation": spaces.Box(lay.low, lay.high, dtype=np.float32),
                "action_mask": spaces.Box(0, 1, (self.num_actions,), dtype=np.int8),
            })
            for a in self.possible_agents
        }  # fmt: skip
        self.action_spaces = {a: spaces.Discrete(self.num_actions) for a in self.possible_agents}
        low, high = state_bounds(rules)
        self.state_space = spaces.Box(low, high, dtype=np.float32)
        self._scale = self.options.scale(rules)
        self._win_loss = self.options.reward_mode == "win_loss"
        self._hand_episode = self.options.episode == "hand"
        self._raise_illegal = self.options.illegal_action == "raise"
        self._info_events = self.options.info_events
        self._seeder: random.Random | None = None
        self.match: MatchState | None = None
        self._hand = None
        self._closed = False

    # -- spaces ------------------------------------------------------------------------------
    def observation_space(self, agent: str) -> spaces.Space:
        try:
            return self.observation_spaces[agent]
        except (KeyError, TypeError):  # TypeError: an unhashable agent
            raise unknown_agent(agent, self.possible_agents) from None

    def action_space(self, agent: str) -> spaces.Space:
        try:
            return self.action_spaces[agent]
        except (KeyError, TypeError):
            raise unknown_agent(agent, self.possible_agents) from None

    # -- agents and seats --------------------------------------------------------------------
    def seat_of(self, agent: str) -> int:
        """The seat ``agent`` plays (``"player_2"`` plays seat 2): the seat of
        ``match.view(seat)`` and of the core's ``turn``. An agent this env does not have is an
        :class:`UnknownAgentError` naming the agents there are.

        >>> e = raw_env(num_players=3)
        >>> e.seat_of("player_2"), e.agent_of(2)
        (2, 'player_2')
        """
        try:
            return self._seat[agent]
        except (KeyError, TypeError):  # TypeError: an unhashable agent
            raise unknown_agent(agent, self.possible_agents) from None

    def agent_of(self, seat: int) -> str:
        """The agent that plays ``seat`` (``0 .. num_players - 1``; anything else is a
        ``ValueError``, a ``TypeError`` for no integer, naming it)."""
        return self._names[as_int("seat", seat, 0, len(self._names) - 1)]

    # -- episode -----------------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Start a new match. ``seed`` seeds a generator that draws each episode's match seed,
        so ``reset(seed=s)`` followed by seedless resets replays the same episodes. ``options``
        may hold keys of the caller's own; a rule or env option there is refused (they are fixed
        when the environment is made). After :meth:`close`,
        :class:`~.lifecycle.ClosedEnvironmentError`."""
        if self._closed:
            raise closed_error()
        check_reset_options(options)
        if seed is not None:
            self._seeder = random.Random(as_seed(seed))
        elif self._seeder is None:
            self._seeder = random.Random()
        self.match = MatchState(self.rules, seed=self._seeder.getrandbits(64))
        self._hand = self.match.hand
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._zero_rewards = True
        self._scores = self.match.scores[:]
        self._scores_arr = scores_array(self._scores)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        info = self._info(0, NO_HAND_END, -1)
        if self._info_events:
            info["events"], info["illegal_reason"] = [], ""
        self.infos = self._infos_of(self.agents, info)
        self.agent_selection = self._names[self.match.turn]
        self._skip_agent_selection = None

    def step(self, action) -> None:
        if self._closed:
            raise closed_error()
        if not self.agents:  # every agent done and removed: KeyError 'player_0' from below
            raise _episode_over()
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if type(action) is int and 0 <= action < self.num_actions:
            code = action
        else:
            code = check_action(action, self.num_actions)
        match = self.match
        hand = match.hand
        start = len(hand.history)
        hand_number = match.hand_number
        try:
            if hand.is_legal(code):
                match.apply_unchecked(code)
            else:
                match.play(code)  # raises, everything unchanged, naming why the move is illegal
        except IllegalMoveError as err:
            if self._raise_illegal:
                raise
            self._terminate_illegal(agent, code, err)
            return
        self._cumulative_rewards[agent] = 0.0
        scores = match.scores
        changed = scores != self._scores
        if changed:
            before, self._scores = self._scores, scores[:]
            self._scores_arr = scores_array(scores)
        hand_over = hand.turn < 0
        # the award credited to the scores is the match's (it can differ from hand.award when
        # a play reaches the target under win_check="immediate")
        info = self._info(hand_number,
                          hand_end_fields(hand.result, match.awards[-1]) if hand_over
                          else NO_HAND_END, -1)
        if self._info_events:
            info["events"], info["illegal_reason"] = hand.history[start:], ""
        done = match.winner is not None or (hand_over and self._hand_episode)
        self._hand = hand if done else match.hand
        agents = self.agents
        if self._win_loss:
            side_r = win_loss_rewards(episode_winner(match, self.options.episode),
                                      self.rules.num_sides) if done else None
        elif changed:
            side_r = delta_rewards(list(map(sub, scores, before)), self._scale)
        else:
            side_r = None
        if side_r is not None:
            side = self._side
            self.rewards = {a: side_r[side[a]] for a in agents}
            self._accumulate_rewards()
            self._zero_rewards = False
        elif not self._zero_rewards:  # all zeros stay the same (fresh) dict until a reward
            self.rewards = dict.fromkeys(agents, 0.0)
            self._zero_rewards = True
        self.infos = self._infos_of(agents, info)
        if done:
            self.terminations = dict.fromkeys(agents, True)
            self.agent_selection = self._names[(self._seat[agent] + 1) % len(self._names)]
        else:
            self.agent_selection = self._names[match.hand.turn]
        if self.render_mode == "human":
            self.render()

    def _terminate_illegal(self, agent: str, code: int, err: IllegalMoveError) -> None:
        """What PettingZoo's ``TerminateIllegalWrapper`` does: the offender gets
        ``illegal_reward``, everyone else 0, and every agent is terminated and truncated."""
        EnvLogger.warn_on_illegal_move()
        agents = self.agents
        self._cumulative_rewards[agent] = 0.0
        self.terminations = dict.fromkeys(agents, True)
        self.truncations = dict.fromkeys(agents, True)
        self.rewards = dict.fromkeys(agents, 0.0)
        self.rewards[agent] = float(self.options.illegal_reward)
        self._zero_rewards = False
        info = self._info(self.match.hand_number, NO_HAND_END, code)
        if self._info_events:
            info["events"], info["illegal_reason"] = [], err.reason
        self.infos = self._infos_of(agents, info)
        self._accumulate_rewards()
        self._deads_step_first()

    def _infos_of(self, agents: list[str], info: dict[str, Any]) -> dict[str, dict[str, Any]]:
        """Each agent a copy of ``info`` (and of its event list) of its own, as PettingZoo's envs
        give: one dict shared by all, a change to one agent's info showed in every other's.
        ``scores`` is read-only, so one array serves all."""
        if self._info_events:
            events = info["events"]
            return {a: {**info, "events": events[:]} for a in agents}
        return {a: info.copy() for a in agents}

    def _info(self, hand_number: int, hand_end: tuple, illegal: int) -> dict[str, Any]:
        """The fixed-structure info of :mod:`.infos` (:meth:`_infos_of` copies it per agent)."""
        end, domino_seat, award_side, award_points = hand_end
        return {"hand_number": hand_number, "scores": self._scores_arr, "hand_end": end,
                "domino_seat": domino_seat, "award_side": award_side,
                "award_points": award_points, "illegal_action": illegal}

    # -- observing ---------------------------------------------------------------------------
    def observe(self, agent: str) -> dict[str, np.ndarray]:
        try:
            seat = self._seat[agent]
        except (KeyError, TypeError):  # TypeError: an unhashable agent
            raise unknown_agent(agent, self.possible_agents) from None
        hand, match = self._hand, self.match
        if match is None:
            raise _before_reset("observe()")
        over = match.winner is not None
        legal = hand.legal_actions() if hand.turn == seat and not over else ()
        if self._encode_legal:
            obs = self._encode_state(self._lay, hand, seat, match.scores, over, None, legal)
        else:
            obs = self._encode_state(self._lay, hand, seat, match.scores, over)
        return {"observation": obs, "action_mask": mask_of(legal, self.num_actions)}

    def state(self) -> np.ndarray:
        """The full global state (all hands); see :func:`.obs.v2.state_vector`."""
        if self.match is None:
            raise _before_reset("state()")
        return state_vector(self.match, hand=self._hand)

    # -- rendering ---------------------------------------------------------------------------
    def render(self) -> str | np.ndarray | None:
        """``"ansi"``: the text picture; ``"human"``: print it; ``"rgb_array"``: an image."""
        if self.render_mode is None:
            gymnasium.logger.warn(
                "You are calling render method without specifying any render mode. "
                f"Pass render_mode= one of {RENDER_MODES} when making the env."
            )
            return None
        if self.match is None:
            raise _before_reset("render()")
        return render_frame(self.render_mode, self._hand, self.match)

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called (``reset()`` and ``step()`` refuse then)."""
        return self._closed

    def close(self) -> None:
        """End the environment: a later ``reset()`` or ``step()`` raises
        :class:`~.lifecycle.ClosedEnvironmentError`, a ``RuntimeError`` (they played on in
        silence, so a loop that closed the wrong env never knew)."""
        self._closed = True

    # -- pickling: constructor arguments (EzPickle) plus the episode in progress -------------
    def __getstate__(self) -> dict:
        state = EzPickle.__getstate__(self)
        state["_episode"] = {k: self.__dict__[k] for k in _EPISODE_ATTRS if k in self.__dict__}
        return state

    def last(self, observe: bool = True):
        """PettingZoo's ``last``; once every agent is done, ``RuntimeError`` saying so (not a
        bare ``KeyError``), as :func:`env`'s."""
        if not self.agents:
            raise _episode_over()
        return super().last(observe)

    def agent_iter(self, max_iter: int = 2**63):
        """PettingZoo's ``agent_iter``, ``max_iter`` checked."""
        return super().agent_iter(as_int("max_iter", max_iter, 0))

    def __getattr__(self, name: str):
        # only for what normal lookup did not find: an episode's attribute before reset() was
        # a bare AttributeError from step(), last(), agent_iter() or num_agents
        if name in _EPISODE_ATTRS or name == "num_agents":  # num_agents: len(self.agents)
            raise _before_reset(f"reading {name}")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __setstate__(self, state: dict) -> None:
        state = dict(state)
        episode = state.pop("_episode", {})
        EzPickle.__setstate__(self, state)
        self.__dict__.update(episode)

    def __str__(self) -> str:
        return ENV_NAME


register_pettingzoo()
