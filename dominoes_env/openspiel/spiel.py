"""OpenSpiel's ``pyspiel``, imported in one place: without the ``openspiel`` extra, importing
:mod:`dominoes_env.openspiel` (or any of its modules) says how to install it."""

from __future__ import annotations

try:
    import pyspiel
except ImportError as err:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "dominoes_env.openspiel needs OpenSpiel: pip install 'straight-dominoes[openspiel]'"
    ) from err

__all__ = ["pyspiel"]
