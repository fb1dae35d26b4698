"""Deprecated: renamed :mod:`dominoes_env.core.atomic_files`, a name that says what it holds. Every
public name still works from here for one version, with a ``DeprecationWarning``."""

from dominoes_env.deprecation import moved_module

__getattr__ = moved_module(__name__, "dominoes_env.core.atomic_files")
