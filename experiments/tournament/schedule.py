"""Deprecated: the tournament schedule (who plays whom, seats, deals) moved to
:mod:`agents.tournament.schedule`.

Every public name of the new module is still importable from here for one version, with a
``DeprecationWarning``; import it from :mod:`agents.tournament.schedule` instead.
"""

from dominoes_env.deprecation import moved_module

__getattr__ = moved_module(__name__, "agents.tournament.schedule")
