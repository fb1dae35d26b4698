"""The examples in the docstrings are part of the specification: run them."""

import doctest
import importlib
import pkgutil

import pytest

import dominoes_env.core

MODULES = [f"dominoes_env.core.{m.name}" for m in pkgutil.iter_modules(dominoes_env.core.__path__)]
MODULES += ["agents.specs", "dominoes_env.record_files", "dominoes_env.render.steps",
            "dominoes_env.render.html", "dominoes_env.render.svg"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
