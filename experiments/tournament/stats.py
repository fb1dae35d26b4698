"""Deprecated: the tournament statistics moved to :mod:`agents.tournament.stats`.

Every public name of the new module is still importable from here for one version, with a
``DeprecationWarning``; import it from :mod:`agents.tournament.stats` instead.
"""

from dominoes_env.deprecation import moved_module

__getattr__ = moved_module(__name__, "agents.tournament.stats")
