"""Deprecated: the tournament report (summary, plots, the printed table) moved to
:mod:`agents.tournament.report`.

Every public name of the new module is still importable from here for one version, with a
``DeprecationWarning``; import it from :mod:`agents.tournament.report` instead.
"""

from dominoes_env.deprecation import moved_module

__getattr__ = moved_module(__name__, "agents.tournament.report")
