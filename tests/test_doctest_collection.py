"""The docstring examples are part of the specification, and pytest runs them itself
(``--doctest-modules`` over ``dominoes_env/`` and ``agents/``, configured in pyproject.toml).

This checks the configuration really collects them: every module with examples yields doctest
items, among them the modules an earlier hand-written list left out."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

import agents
import dominoes_env

ROOT = Path(__file__).resolve().parent.parent


def modules_with_examples() -> set[str]:
    found = set()
    finder = doctest.DocTestFinder()
    for package in (dominoes_env, agents):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if info.name.endswith("__main__"):
                continue
            module = importlib.import_module(info.name)
            if any(t.examples for t in finder.find(module)):
                found.add(info.name)
    return found


@pytest.mark.jax  # imports every module, dominoes_env.jax's too: JAX starts (conftest.py)
def test_pytest_collects_the_examples_of_every_module_that_has_them():
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:xdist",
         "-p", "no:cacheprovider", "dominoes_env", "agents"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    # -q lists "path.py: <items>" per file (or "path.py::name" per item with other verbosity)
    collected = {
        m.group(1) for m in re.finditer(r"^([\w/]+\.py)(?::\s*\d+|::)", out.stdout, re.M)
    }
    # a package's examples live in its __init__.py
    paths = {p.removesuffix(".py").removesuffix("/__init__").replace("/", ".") for p in collected}
    wanted = modules_with_examples()
    assert {"dominoes_env.single_agent", "agents.pool", "dominoes_env.rule_args"} <= wanted
    assert wanted <= paths, f"examples never run: {sorted(wanted - paths)}"
