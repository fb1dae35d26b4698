"""Deprecated: the match arena moved to :mod:`agents.arena`.

Importing a name from here still works for one version and emits a ``DeprecationWarning``;
import it from :mod:`agents.arena` instead.
"""

from dominoes_env.deprecation import moved_module

__getattr__ = moved_module(__name__, "agents.arena")
