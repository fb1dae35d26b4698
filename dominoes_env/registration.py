"""Registry entries: ``pettingzoo.make("aec", AEC_ID)`` and ``gymnasium.make(GYM_ID)``.

Entry points are strings, so registering imports nothing of ours. Importing
:mod:`dominoes_env.aec` registers the PettingZoo id, importing :mod:`dominoes_env.single_agent`
the Gymnasium id; ``import dominoes_env`` registers both when PettingZoo / Gymnasium are already
imported, and :func:`register_envs` does it explicitly.

>>> import pettingzoo, dominoes_env
>>> register_envs()
>>> env = pettingzoo.make("aec", AEC_ID, num_players=3)
>>> env.possible_agents
['player_0', 'player_1', 'player_2']
"""

from __future__ import annotations

AEC_ID = "dominoes/straight_dominoes-v0"
GYM_ID = "dominoes/StraightDominoes-v0"


def register_pettingzoo() -> bool:
    """Add :data:`AEC_ID` to PettingZoo's registry if this PettingZoo has one (True if so)."""
    try:
        from pettingzoo import aec_registry, register
    except ImportError:  # a PettingZoo without a registry
        return False
    if AEC_ID not in aec_registry:
        register("aec", AEC_ID, entry_point="dominoes_env.aec:env")
    return True


def register_gymnasium() -> bool:
    """Add :data:`GYM_ID` (the single-agent env) to Gymnasium's registry."""
    try:
        import gymnasium
    except ImportError:
        return False
    if GYM_ID not in gymnasium.registry:
        gymnasium.register(GYM_ID, entry_point="dominoes_env.single_agent:SingleAgentEnv")
    return True


def register_envs() -> None:
    """Register both ids (safe to call more than once)."""
    register_pettingzoo()
    register_gymnasium()
