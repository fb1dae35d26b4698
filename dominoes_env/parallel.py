"""``parallel_env``: the same game through PettingZoo's Parallel API.

Straight Dominoes is turn-based, and PettingZoo's ``aec_to_parallel`` needs agents that act in a
fixed cycle (forced passes here skip seats, and the next hand's leader can be anyone), so this is
a Parallel env of its own over :class:`~dominoes_env.aec.raw_env`:

- ``reset`` / ``step`` return every live agent's observation ``{"observation", "action_mask"}``;
  only the seat to play has a non-zero mask;
- ``step(actions)`` plays ``actions[agent]`` for the agent to play (the one whose mask is not
  all zeros; ``env.agent_selection`` names it) and ignores the others' actions, which any policy
  can fill from an all-zero mask;
- rewards are that step's rewards (the AEC env's ``rewards``), infos the AEC env's fixed
  structure (:mod:`.infos`); when the episode ends every agent is terminated and ``agents``
  empties.

Options are the AEC env's (any ``RuleConfig`` field, the env options, ``render_mode``).

>>> env = parallel_env(num_players=2, target_score=50)
>>> obs, infos = env.reset(seed=0)
>>> sorted(obs), int(obs[env.agent_selection]["action_mask"].sum()) > 0
(['player_0', 'player_1'], True)
"""

from __future__ import annotations

from typing import Any

from gymnasium.utils import EzPickle
from pettingzoo import ParallelEnv

from .aec import ENV_NAME, raw_env
from .core.validation import short_repr
from .lifecycle import closed_error


class parallel_env(ParallelEnv, EzPickle):
    """Straight Dominoes as a PettingZoo ``ParallelEnv`` (see the module docstring)."""

    metadata = {**raw_env.metadata, "name": ENV_NAME, "is_parallelizable": True}

    def __init__(self, render_mode: str | None = None, **options: Any):
        EzPickle.__init__(self, render_mode=render_mode, **options)
        self.aec = raw_env(render_mode=render_mode, **options)
        self.render_mode = render_mode
        self.rules = self.aec.rules
        self.possible_agents = self.aec.possible_agents[:]
        self._share_spaces()
        self.agents: list[str] = []

    def _share_spaces(self) -> None:
        """The AEC env's space objects (one object per agent, whichever way it is asked for)."""
        self.observation_spaces = self.aec.observation_spaces
        self.action_spaces = self.aec.action_spaces
        self.state_space = self.aec.state_space

    def observation_space(self, agent: str):
        return self.aec.observation_space(agent)  # an unknown agent: UnknownAgentError

    def action_space(self, agent: str):
        return self.aec.action_space(agent)

    def seat_of(self, agent: str) -> int:
        """The seat ``agent`` plays (:meth:`raw_env.seat_of <dominoes_env.aec.raw_env.seat_of>`:
        an unknown agent is an ``UnknownAgentError``)."""
        return self.aec.seat_of(agent)

    def agent_of(self, seat: int) -> str:
        """The agent that plays ``seat`` (:meth:`raw_env.agent_of
        <dominoes_env.aec.raw_env.agent_of>`)."""
        return self.aec.agent_of(seat)

    @property
    def agent_selection(self) -> str:
        """The agent whose action the next ``step`` plays."""
        return self.aec.agent_selection

    def reset(self, seed: int | None = None, options: dict | None = None):
        aec = self.aec
        aec.reset(seed=seed, options=options)
        self.agents = aec.agents[:]
        return {a: aec.observe(a) for a in self.agents}, dict(aec.infos)

    def step(self, actions: dict):
        aec = self.aec
        if aec.closed:  # before the agents: a closed env was "over", then reset said closed
            raise closed_error()
        if not self.agents:
            raise RuntimeError("the episode is over (or never began): call reset()")
        if not isinstance(actions, dict):
            raise TypeError(f"actions must be a dict of agent -> action, not {short_repr(actions)}")
        unknown = [key for key in actions if key not in self.possible_agents]
        if unknown:  # a misspelt agent was ignored, in silence
            raise ValueError(f"actions names no agent of this env: "
                             f"{', '.join(short_repr(key) for key in unknown)}; the agents are "
                             f"{', '.join(self.possible_agents)}")
        agent = aec.agent_selection
        if agent not in actions:
            raise ValueError(f"actions has no action for {agent!r}, the agent to play "
                             f"(got actions for {sorted(actions)})")
        aec.step(actions[agent])
        agents = self.agents
        observations = {a: aec.observe(a) for a in agents}
        rewards = {a: float(aec.rewards[a]) for a in agents}
        terminations = {a: bool(aec.terminations[a]) for a in agents}
        truncations = {a: bool(aec.truncations[a]) for a in agents}
        infos = {a: aec.infos[a] for a in agents}
        if any(terminations.values()) or any(truncations.values()):
            self.agents = []
        return observations, rewards, terminations, truncations, infos

    def state(self):
        """The full global state (all hands); see :func:`.obs.v2.state_vector`."""
        return self.aec.state()

    def render(self):
        return self.aec.render()

    def close(self) -> None:
        self.aec.close()

    # -- pickling: constructor arguments (EzPickle) plus the episode in progress, as the AEC env
    # (a copy made mid-episode came back with no agents and no match)
    def __getstate__(self) -> dict:
        state = EzPickle.__getstate__(self)
        state["_episode"] = {"aec": self.aec, "agents": self.agents}
        return state

    def __setstate__(self, state: dict) -> None:
        state = dict(state)
        episode = state.pop("_episode", {})
        EzPickle.__setstate__(self, state)
        self.__dict__.update(episode)
        self._share_spaces()  # the unpickled aec's: those of the env made by EzPickle differed

    def __str__(self) -> str:
        return ENV_NAME
