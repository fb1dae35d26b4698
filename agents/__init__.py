"""Players of Straight Dominoes behind one :class:`Agent` protocol.

``make_agent(spec, seed)`` builds any of them from a spec string (see :mod:`agents.specs`):
``random``, ``greedy``, ``search`` (``search:sims=400``, ``search:time_ms=50``), ``ppo``
(``ppo:PATH``) or ``module.path:ClassName``. :class:`agents.ppo.PPOAgent` is imported on
first use (it needs numpy).
"""

from .base import Agent, AgentProtocol, RandomAgent
from .greedy import GreedyAgent
from .search import SearchAgent
from .specs import check_spec, make_agent, resolve_spec

__all__ = ["Agent", "AgentProtocol", "GreedyAgent", "RandomAgent", "SearchAgent", "check_spec",
           "make_agent",
           "resolve_spec"]
