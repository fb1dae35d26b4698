"""Import hooks that wrap a module's own loader (the registry ids' hook, the JAX start-up
hook of the shared runner).

They live apart from :mod:`dominoes_env.startup`, which a ``python -m`` program imports first
and so imports nothing but ``sys``: ``importlib.abc`` alone takes about 8 ms to import (it
imports ``typing``, ``tempfile``, ``shutil``), time in which a Ctrl-C would still be a
traceback.
"""

from __future__ import annotations

import importlib.abc
import sys


class LoaderAround(importlib.abc.Loader):
    """A module's own loader, wrapped by an import hook so that :meth:`run` is around the
    module's execution (by default it only executes it). The module sees its own loader, while
    it runs and afterwards; everything else is asked of that loader."""

    def __init__(self, loader) -> None:
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module) -> None:
        module.__loader__ = self.loader
        if module.__spec__ is not None:
            module.__spec__.loader = self.loader
        self.run(module)

    def run(self, module) -> None:
        """Execute ``module`` (a subclass adds what comes before or after)."""
        self.loader.exec_module(module)

    def __getattr__(self, name):
        return getattr(self.loader, name)


def spec_found_by_others(hook, fullname, path, target=None):
    """The module spec the import finders other than ``hook`` find for ``fullname`` (what
    Python would import without the hook), or None."""
    for finder in sys.meta_path:
        find = getattr(finder, "find_spec", None)
        if finder is not hook and find is not None:
            spec = find(fullname, path, target)
            if spec is not None:
                return spec
    return None
