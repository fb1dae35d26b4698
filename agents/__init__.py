"""Players of Straight Dominoes behind one :class:`Agent` protocol."""

from .base import Agent, AgentProtocol, RandomAgent

__all__ = ["Agent", "AgentProtocol", "RandomAgent"]
