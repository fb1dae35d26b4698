"""Suite-wide collection rules.

Tests that run JAX computations carry the ``jax`` mark. Once JAX's CPU backend has started in a
process, forking that process is unsafe (JAX is multithreaded and warns that a fork "will likely
lead to a deadlock"), and many other tests fork: tournament worker pools, demonstration workers,
CLI subprocesses. ``make test`` therefore runs the marked tests in a pytest session of their
own (``-m jax``) and everything else without them (``-m "not jax"``).
"""

from __future__ import annotations

import pytest

_JAX_TEST_FILES = ("test_jax_", "test_train_jax")


def _uses_jax(item: pytest.Item) -> bool:
    path = item.path
    return path.name.startswith(_JAX_TEST_FILES) or "jax" in path.parent.parts[-1:]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if _uses_jax(item):
            item.add_marker(pytest.mark.jax)
