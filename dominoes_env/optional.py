"""Optional dependencies: each comes with an extra of the package, and is imported where it is
used, so ``import dominoes_env`` needs only numpy, Gymnasium, PettingZoo and Pillow.

================  ==========================================================================
extra             what it adds
================  ==========================================================================
``tournament``    rich, tqdm, openskill, matplotlib: ``dominoes-tournament`` and ``make demo``
``train``         stable-baselines3, sb3-contrib, torch, tensorboard: ``dominoes-train``
``notebooks``     JupyterLab, pandas, matplotlib (plus ``tournament``): the notebooks
``openspiel``     OpenSpiel: :mod:`dominoes_env.openspiel` and the ``ismcts`` agent
``ray``           Ray: tournaments across machines
``bench``         rich, pygame, OpenSpiel: ``make bench``
``docs``          mkdocs-material, mkdocstrings, mkdocs-jupyter: ``make docs``
================  ==========================================================================

>>> require("json", "tournament", "this example").__name__
'json'
>>> require("no_such_module_here", "tournament", "the report")
Traceback (most recent call last):
...
ImportError: the report needs no_such_module_here: pip install 'straight-dominoes[tournament]'
"""

from __future__ import annotations

import importlib
from types import ModuleType

#: the distribution name to name in the message, where it differs from the module's
_PACKAGE = {"PIL": "pillow", "open_spiel": "open_spiel", "pyspiel": "open_spiel"}


def require(module: str, extra: str, purpose: str) -> ModuleType:
    """Import ``module``, or raise ``ImportError`` saying that ``purpose`` needs it and which
    extra installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as err:
        top = module.partition(".")[0]
        package = _PACKAGE.get(top, top)
        raise ImportError(
            f"{purpose} needs {package}: pip install 'straight-dominoes[{extra}]'"
        ) from err
