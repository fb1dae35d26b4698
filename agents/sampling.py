"""Deprecated: moved to :mod:`dominoes_env.core.sampling` (the OpenSpiel game needs it, and
``dominoes_env`` cannot import ``agents``). Every public name still works from here for one
version, with a ``DeprecationWarning``."""

from dominoes_env.deprecation import moved_module

__getattr__ = moved_module(__name__, "dominoes_env.core.sampling")
