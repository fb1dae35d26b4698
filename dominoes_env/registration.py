"""Registry ids: ``pettingzoo.make("aec" | "parallel", AEC_ID)`` and ``gymnasium.make(GYM_ID)``.

=========================================  ===========================================  =========
id                                         makes                                        status
=========================================  ===========================================  =========
``dominoes/straight_dominoes-v1``          ``straight_dominoes_v1.env`` (``"aec"``) /   current
                                           ``.parallel_env`` (``"parallel"``)
``dominoes/StraightDominoes-v1``           :class:`~dominoes_env.SingleAgentEnv`         current
``dominoes/straight_dominoes-v0``          the v1 env, with a ``DeprecationWarning``     alias
``dominoes/StraightDominoes-v0``           the v1 env, with a ``DeprecationWarning``     alias
=========================================  ===========================================  =========

The v0 ids are kept for one version as aliases of v1 (the v0 env itself is gone; the version
history is on the environment card, ``docs/environment.md``, "Version history").

Registered whatever the import order: ``import dominoes_env`` registers the ids at once in a
library that is already imported, and a light import hook registers them in Gymnasium /
PettingZoo the moment either is imported later (``import dominoes_env`` itself never imports
them). Entry points are strings, so registering imports nothing else of ours. Gymnasium 1.x has
no plugin entry points any more, so without importing ``dominoes_env`` use the module prefix:
``gymnasium.make("dominoes_env:dominoes/StraightDominoes-v1")``.

>>> import pettingzoo, dominoes_env
>>> env = pettingzoo.make("aec", AEC_ID, num_players=3)
>>> env.possible_agents
['player_0', 'player_1', 'player_2']
"""

from __future__ import annotations

import importlib.abc
import sys
import warnings

from .core.errors import DominoesDeprecationWarning
from .import_hooks import LoaderAround, spec_found_by_others

AEC_ID = "dominoes/straight_dominoes-v1"
GYM_ID = "dominoes/StraightDominoes-v1"
AEC_ID_V0 = "dominoes/straight_dominoes-v0"
GYM_ID_V0 = "dominoes/StraightDominoes-v0"


def _deprecated(old: str, new: str) -> None:
    warnings.warn(f"{old!r} is a deprecated alias of {new!r} (observation v2 with move_points, "
                  "fixed-structure infos) and will be removed in the next env version; use "
                  f"{new!r}", DominoesDeprecationWarning, stacklevel=3)


def aec_v0(**kwargs):
    """Entry point of the deprecated ``dominoes/straight_dominoes-v0`` (``"aec"``): the v1 env."""
    _deprecated(AEC_ID_V0, AEC_ID)
    from .aec import env

    return env(**kwargs)


def parallel_v0(**kwargs):
    """Entry point of the deprecated ``dominoes/straight_dominoes-v0`` (``"parallel"``)."""
    _deprecated(AEC_ID_V0, AEC_ID)
    from .parallel import parallel_env

    return parallel_env(**kwargs)


def single_agent_v0(**kwargs):
    """Entry point of the deprecated ``dominoes/StraightDominoes-v0``: the v1 single-agent env."""
    _deprecated(GYM_ID_V0, GYM_ID)
    from .single_agent import SingleAgentEnv

    return SingleAgentEnv(**kwargs)


def register_pettingzoo() -> bool:
    """Add the ``"aec"`` and ``"parallel"`` ids to PettingZoo's registries if this PettingZoo
    has them (True if so). Safe to call more than once."""
    try:
        from pettingzoo import aec_registry, parallel_registry, register
    except ImportError:  # a PettingZoo without a registry
        return False
    for env_type, registry, entries in (
        ("aec", aec_registry, ((AEC_ID, "dominoes_env.straight_dominoes_v1:env"),
                               (AEC_ID_V0, "dominoes_env.registration:aec_v0"))),
        ("parallel", parallel_registry,
         ((AEC_ID, "dominoes_env.straight_dominoes_v1:parallel_env"),
          (AEC_ID_V0, "dominoes_env.registration:parallel_v0"))),
    ):
        for env_id, entry_point in entries:
            if env_id not in registry:
                register(env_type, env_id, entry_point=entry_point)
    return True


def register_gymnasium() -> bool:
    """Add :data:`GYM_ID` (the single-agent env) and its v0 alias to Gymnasium's registry."""
    try:
        import gymnasium
    except ImportError:
        return False
    for env_id, entry_point in ((GYM_ID, "dominoes_env.single_agent:SingleAgentEnv"),
                                (GYM_ID_V0, "dominoes_env.registration:single_agent_v0")):
        if env_id not in gymnasium.registry:
            gymnasium.register(env_id, entry_point=entry_point)
    return True


def register_envs() -> None:
    """Register every id in the libraries that are installed (safe to call more than once)."""
    register_pettingzoo()
    register_gymnasium()


# -- registering whatever the import order -------------------------------------------------------

_REGISTER = {"gymnasium": register_gymnasium, "pettingzoo": register_pettingzoo}


class _Loader(LoaderAround):
    """The library's own loader, then our registration once its module has run."""

    def __init__(self, loader, register):
        super().__init__(loader)
        self.register = register

    def run(self, module) -> None:
        self.loader.exec_module(module)
        self.register()


class _RegisterOnImport(importlib.abc.MetaPathFinder):
    """Finds nothing itself: when ``gymnasium`` / ``pettingzoo`` is first imported, it wraps the
    loader the other finders return so our ids get registered right after the library loads."""

    def find_spec(self, fullname, path, target=None):
        register = _REGISTER.get(fullname)
        if register is None or fullname in sys.modules:
            return None
        spec = spec_found_by_others(self, fullname, path, target)
        if spec is None or spec.loader is None:
            return None
        _REGISTER.pop(fullname)
        if not _REGISTER:
            uninstall_import_hook()
        spec.loader = _Loader(spec.loader, register)
        return spec


_HOOK = _RegisterOnImport()


def install_import_hook() -> None:
    """Register in every library already imported; hook the ones not imported yet."""
    for name in list(_REGISTER):
        if name in sys.modules:
            _REGISTER.pop(name)()
    if _REGISTER and _HOOK not in sys.meta_path:
        sys.meta_path.insert(0, _HOOK)


def uninstall_import_hook() -> None:
    if _HOOK in sys.meta_path:
        sys.meta_path.remove(_HOOK)
