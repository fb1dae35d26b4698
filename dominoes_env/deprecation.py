"""Names that moved keep working for one version, with a ``DeprecationWarning`` that says where
they live now (the CHANGELOG lists every move).

A module that moved as a whole becomes a two-line shim::

    from dominoes_env.deprecation import moved_module
    __getattr__ = moved_module(__name__, "agents.tournament.runner")

and a module that keeps most of its names but lost a few forwards just those::

    __getattr__ = moved_names(__name__, {"evaluate": "agents.evaluation"})

>>> import sys, types, warnings
>>> old = types.ModuleType("old_home")
>>> old.__getattr__ = moved_names("old_home", {"dumps": "json"})
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     old.dumps([1])
...     str(caught[0].message)
'[1]'
'old_home.dumps is deprecated; import it from json'
>>> old.loads
Traceback (most recent call last):
...
AttributeError: module 'old_home' has no attribute 'loads'
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable, Mapping
from typing import Any

from .core.errors import DominoesDeprecationWarning


def _forward(old: str, name: str, new: str) -> Any:
    value = getattr(importlib.import_module(new), name)
    warnings.warn(f"{old}.{name} is deprecated; import it from {new}",
                  DominoesDeprecationWarning, stacklevel=3)
    return value


def moved_module(old: str, new: str) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``old``, whose public names all moved to module ``new``.

    Run as a program (``python -m experiments.arena``: ``old`` is ``"__main__"``), the shim says
    where its names moved, in one ``error:`` line, and exits with status 2, never running
    nothing in silence with status 0."""
    if old == "__main__":
        _not_a_program(new)

    def __getattr__(name: str) -> Any:
        module = importlib.import_module(new)
        if name.startswith("_") or not hasattr(module, name):
            raise AttributeError(f"module {old!r} has no attribute {name!r}")
        return _forward(old, name, new)

    return __getattr__


def _not_a_program(new: str) -> None:
    import sys

    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    name = spec.name if spec is not None else "this module"
    print(f"error: python -m {name} runs nothing: it is a deprecated module whose names moved "
          f"to {new} (import them from there)", file=sys.stderr)
    raise SystemExit(2)


def moved_names(old: str, moves: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``old``, forwarding each name in ``moves`` to its new
    module (``{name: "new.module"}``)."""
    moves = dict(moves)

    def __getattr__(name: str) -> Any:
        if name not in moves:
            raise AttributeError(f"module {old!r} has no attribute {name!r}")
        return _forward(old, name, moves[name])

    return __getattr__
