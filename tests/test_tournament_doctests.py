"""The docstring examples of the tournament and experiment modules are part of their
specification: run them (``experiments.train_jax`` and ``experiments.bench_training`` need JAX:
tests/jax/test_train_jax.py runs theirs)."""

import doctest
import importlib

import pytest

MODULES = [
    "agents.arena",
    "agents.tournament",
    "agents.tournament.schedule",
    "agents.tournament.runner",
    "agents.tournament.stats",
    "agents.tournament.report",
    "agents.imitation",
    "experiments.decision_quality",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
