"""Deprecated: behaviour cloning (collect_demonstrations, dataset_demonstrations, pretrain_policy)
moved to :mod:`agents.imitation` (issue 31).

Every public name of the new module is still importable from here for one version, with a
``DeprecationWarning``; import it from :mod:`agents.imitation` instead.
"""

from __future__ import annotations

import importlib
import warnings

_NEW = "agents.imitation"


def __getattr__(name: str):
    module = importlib.import_module(_NEW)
    if name.startswith("_") or not hasattr(module, name):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(f"{__name__}.{name} is deprecated; import it from {_NEW}",
                  DeprecationWarning, stacklevel=2)
    return getattr(module, name)
