"""Deprecated: the tournament runner (playing, the results folder, resuming) moved to
:mod:`agents.tournament.runner`.

Every public name of the new module is still importable from here for one version, with a
``DeprecationWarning``; import it from :mod:`agents.tournament.runner` instead.
"""

from dominoes_env.deprecation import moved_module

__getattr__ = moved_module(__name__, "agents.tournament.runner")
