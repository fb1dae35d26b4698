"""Suite-wide collection rules.

Tests that run JAX computations carry the ``jax`` mark. Once JAX's CPU backend has started in a
process (importing ``dominoes_env.jax`` starts it: its tables are JAX arrays), forking that
process is unsafe (JAX is multithreaded and warns that a fork "will likely lead to a
deadlock"), and many other tests fork: tournament worker pools, demonstration workers, CLI
subprocesses. ``make test`` therefore runs the marked tests in a pytest session of their own
(``-m jax``), and the session of everything else (``-m "not jax"``) does not even collect, so
never imports, the JAX modules and their test files.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys
from pathlib import Path

import pytest

# two XLA CPU devices in the JAX session (whatever the cores), so that train_jax's tests run
# its data-parallel update over two devices; set before any test imports JAX
os.environ.setdefault("JAX_NUM_CPU_DEVICES", "2")

_ROOT = Path(__file__).resolve().parent
# the JAX session's compiled programs are kept in a cache of this checkout's own, shared by both
# workers and by the programs the tests start (most of that session is compiling, and several
# tests compile the same program): never the user's cache (~/.cache/straight-dominoes/jax),
# which setup_jax (dominoes_env.cli_support) points a process at otherwise
os.environ.setdefault("JAX_COMPILATION_CACHE_DIR", str(_ROOT / ".pytest_cache" / "jax"))
# every program kept there, not only those that took JAX a second or more to compile (its
# default): the suite's many short-lived processes compile the same small programs again and
# again (the train_jax tests, from a fresh clone: 198 s instead of 240 on 2 cores)
os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0")
# Stable-Baselines3 gives the logger of a model trained without a TensorBoard folder a folder
# of its own, tempdir/SB3-<time> (empty, and left behind by each quick MaskablePPO test): in
# this checkout instead
os.environ.setdefault("SB3_LOGDIR", str(_ROOT / ".pytest_cache" / "sb3"))
#: the folders whose every file runs JAX: the JAX twin itself and its tests
_JAX_FOLDERS = (_ROOT / "dominoes_env" / "jax", _ROOT / "tests" / "jax")


def _is_jax_path(path: Path) -> bool:
    path = path.resolve()
    return any(path == folder or folder in path.parents for folder in _JAX_FOLDERS)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    if config.getoption("markexpr") == "not jax" and _is_jax_path(collection_path):
        return True
    return None


class _JaxRefused(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """In the session without JAX, ``import jax`` fails in the test that tries it, naming the
    reason: JAX started in a worker of that session makes every later fork there risk a
    deadlock. A test that needs JAX in its own process carries the ``jax`` mark; one that only
    checks that JAX is installed uses ``tests.helpers.skip_unless_installed`` (``find_spec``
    still finds it); child processes are not affected. (A check after each test found only
    the first importer of each worker; this finds every one, in the test that imports.)"""

    def find_spec(self, fullname, path, target=None):
        if fullname != "jax":
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        raise ImportError("JAX is not imported in the session without JAX (conftest.py): "
                          "mark this test jax, or run its JAX in a child process")


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("markexpr") == "not jax" and "jax" not in sys.modules:
        sys.meta_path.insert(0, _JaxRefused())


def _stop_signal_handlers() -> dict:
    import signal

    return {n: signal.getsignal(getattr(signal, n)) for n in ("SIGINT", "SIGTERM", "SIGHUP")
            if hasattr(signal, n)}


#: the stop signals' handlers as the session started (this module is imported in each worker's
#: main thread before any test runs)
_SESSION_HANDLERS = _stop_signal_handlers()


@pytest.fixture(autouse=True)
def _stop_signal_handlers_kept(request: pytest.FixtureRequest):
    """Every test starts with the handlers of SIGINT, SIGTERM and SIGHUP the session started
    with: a test that leaves one changed (ignored, or a handler of its own) turned the Ctrl-C
    of a later test in the same worker into nothing (both SIGINT cases of
    ``test_a_stop_that_a_library_turns_into_another_exception_is_the_stop`` failed so in fresh
    clones' suites). The handlers are put back after each test that changed them, and that
    test is named in a warning of the run's summary."""
    import signal
    import threading
    import warnings

    yield
    if threading.current_thread() is not threading.main_thread():
        return
    for name, handler in _SESSION_HANDLERS.items():
        now = signal.getsignal(getattr(signal, name))
        if now is not handler and handler is not None:
            signal.signal(getattr(signal, name), handler)
            warnings.warn(f"{request.node.nodeid} left the {name} handler as {now!r}; it was "
                          "put back", pytest.PytestWarning, stacklevel=1)


@pytest.fixture
def one_local_ray(tmp_path_factory: pytest.TempPathFactory):
    """Hold the suite's Ray lock: one test at a time starts a local Ray instance, whatever the
    xdist workers (two local clusters starting at once on a 2-core machine miss Ray's
    registration deadlines). A file lock in the run's shared temporary root, as pytest-xdist
    advises; its ``xdist_group`` marks are not enough: with pytest 9.2 ``--dist loadgroup``
    silently stops grouping (pytest-dev/pytest-xdist#1386)."""
    from filelock import FileLock

    with FileLock(tmp_path_factory.getbasetemp().parent / "local-ray.lock"):
        yield


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if _is_jax_path(item.path):
            item.add_marker(pytest.mark.jax)
