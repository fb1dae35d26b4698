"""Deprecated: observation version 4 moved to :mod:`dominoes_env.obs.v4`.

Its names stay importable from here for one version, each with a ``DeprecationWarning``.
"""

from __future__ import annotations

from .deprecation import moved_module

__getattr__ = moved_module(__name__, "dominoes_env.obs.v4")
