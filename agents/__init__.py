"""Players of Straight Dominoes behind one :class:`Agent` protocol."""

from .base import Agent, AgentProtocol, RandomAgent
from .specs import make_agent, resolve_spec

__all__ = ["Agent", "AgentProtocol", "RandomAgent", "make_agent", "resolve_spec"]
