"""Deprecated: the tournament's game-record store moved to
:mod:`agents.tournament.record_store`.

Every public name of the new module is still importable from here for one version, with a
``DeprecationWarning``; import it from :mod:`agents.tournament.record_store` instead.
"""

from dominoes_env.deprecation import moved_module

__getattr__ = moved_module(__name__, "agents.tournament.record_store")
