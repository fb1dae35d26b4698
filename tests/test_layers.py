"""The layers of DESIGN.md hold: ``lint-imports`` keeps every import-linter contract of
pyproject.toml (experiments > agents > dominoes_env, no program importing another, a core
without numpy, gymnasium or pettingzoo, dominoes_env without agents), so ``pytest`` alone checks
them too, not only ``make test``."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def lint_imports() -> str:
    found = Path(sys.executable).with_name("lint-imports")
    command = str(found) if found.exists() else shutil.which("lint-imports")
    if command is None:
        pytest.skip("import-linter is not installed (the dev extra)")
    return command


def test_every_import_contract_is_kept():
    run = subprocess.run([lint_imports(), "--no-cache"], cwd=ROOT, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
    assert "Contracts: 5 kept, 0 broken." in run.stdout


def test_a_program_importing_another_breaks_a_contract(tmp_path):
    """The contracts bite: the same configuration over a copy of the packages in which one
    program imports another (and the core imports numpy and a module above it) is refused."""
    for package in ("dominoes_env", "agents", "experiments"):
        shutil.copytree(ROOT / package, tmp_path / package,
                        ignore=shutil.ignore_patterns("__pycache__", "*.npz", "*.json"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    demo = tmp_path / "experiments" / "demo.py"
    demo.write_text(demo.read_text() + "\nfrom experiments import bench_engine  # noqa\n")
    core = tmp_path / "dominoes_env" / "core" / "__init__.py"
    core.write_text(core.read_text() + "\nimport numpy  # noqa\n"
                    + "from dominoes_env import lookahead  # noqa\n")
    run = subprocess.run([lint_imports(), "--no-cache"], cwd=tmp_path, capture_output=True,
                         text=True, timeout=300, env={"PYTHONPATH": str(tmp_path),
                                                      "PATH": "/usr/bin:/bin"})
    assert run.returncode == 1, run.stdout[-3000:] + run.stderr[-2000:]
    assert "experiments.demo is not allowed to import experiments.bench_engine" in run.stdout
    assert "dominoes_env.core is not allowed to import numpy" in run.stdout
    assert "dominoes_env.core is not allowed to import dominoes_env.lookahead" in run.stdout
    assert "Contracts: 2 kept, 3 broken." in run.stdout


def test_the_session_without_jax_refuses_an_import_of_jax(tmp_path):
    """``make test`` runs the tests without the ``jax`` mark in a session of their own, which
    forks: a test there that imports JAX fails at the import, naming the reason (conftest.py),
    and the same test in a session that runs every test imports it."""
    import importlib.util

    from tests.helpers import CHILD_TIMEOUT_S, ROOT

    probe = ROOT / "tests" / f"test_zz_probe_{tmp_path.name}.py"
    probe.write_text("def test_probe():\n    import jax  # noqa: F401\n")
    try:
        runs = {mark: subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly",
                                      "-p", "no:cacheprovider", "-m", mark, str(probe)],
                                     cwd=ROOT, capture_output=True, text=True,
                                     timeout=CHILD_TIMEOUT_S)
                for mark in ("not jax", "jax or not jax")}
    finally:
        probe.unlink()
    refused = runs["not jax"]
    assert refused.returncode == 1, refused.stdout[-1500:]
    assert "JAX is not imported in the session without JAX" in refused.stdout
    if importlib.util.find_spec("jax") is not None:  # the JAX extra is installed
        assert runs["jax or not jax"].returncode == 0, runs["jax or not jax"].stdout[-1500:]
