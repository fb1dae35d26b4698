"""Players of Straight Dominoes behind one :class:`Agent` protocol (``act(view) -> code``, on
the seat's :class:`~dominoes_env.core.SeatView`: its own tiles and public information only).

The built-in agents, by their spec (the table of :mod:`agents.specs`):

- ``random`` (:class:`RandomAgent`): uniform over the legal moves;
- ``greedy`` (:class:`GreedyAgent`): the move that scores the most now;
- ``search`` (:class:`SearchAgent`): determinized Monte Carlo search
  (``search:sims=400``, ``search:time_ms=50``);
- ``guided`` (:class:`GuidedSearchAgent`): search on deals weighed by the shipped PPO policy;
- ``best`` (:class:`BestAgent`): the strongest shipped agent for the table;
- ``ppo`` (:class:`PPOAgent`): the shipped PPO policy for the table, or ``ppo:PATH`` an
  exported one;
- ``ismcts`` (:class:`ISMCTSAgent`): OpenSpiel's information-set MCTS (the ``openspiel``
  extra);
- ``module.path:ClassName`` (``:key=value,...``): a user's agent class.

``make_agent(spec, seed=...)`` builds one from its spec string (``check_spec`` validates a spec
without building it, ``resolve_spec`` returns its class and parameters). ``GuidedSearchAgent``,
``BestAgent``, ``PPOAgent`` and ``ISMCTSAgent`` are imported on first use (``agents.PPOAgent``
loads :mod:`agents.ppo`), so ``import agents`` stays light: numpy and the game, never torch
or JAX. The guide is ``docs/agents.md`` (writing an agent, every spec and its parameters).

>>> import agents
>>> agents.make_agent("search:sims=50", seed=1).sims
50
>>> type(agents.make_agent("ppo")) is agents.PPOAgent
True
"""

from __future__ import annotations

import importlib
from typing import Any

from .base import Agent, AgentProtocol, RandomAgent
from .greedy import GreedyAgent
from .search import SearchAgent
from .specs import BUILTIN, check_spec, make_agent, resolve_spec

#: the built-in agents' classes imported on first use: class name -> its module (from
#: :data:`agents.specs.BUILTIN`, the one list of built-in agents)
_LAZY = {name: module for module, _, name in (target.partition(":")
                                              for target in BUILTIN.values())
         if name not in globals()}

__all__ = ["Agent", "AgentProtocol", "GreedyAgent", "RandomAgent", "SearchAgent", "check_spec",
           "make_agent", "resolve_spec", *sorted(_LAZY)]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'agents' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
