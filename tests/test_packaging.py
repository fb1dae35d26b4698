"""Packaging: the base install is the env's dependencies only, optional ones fail with a message
naming their extra, and the wheel ships what the package needs (py.typed, the policies)."""

from __future__ import annotations

import ast
import email
import json
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from agents.guided import GUIDED_POLICIES
from agents.ppo import POLICY_FILES

ROOT = Path(__file__).resolve().parents[1]

#: what ``pip install straight-dominoes`` brings (as imported)
BASE_MODULES = {"numpy", "gymnasium", "pettingzoo", "PIL"}

#: modules that only extras install; the env must work with all of them missing
OPTIONAL = ["pandas", "matplotlib", "rich", "openskill", "tqdm", "torch", "stable_baselines3",
            "sb3_contrib", "tensorboard", "ray", "pyspiel", "open_spiel", "jax", "IPython",
            "ipywidgets", "pygame", "pgx", "flax", "optax"]

# a fresh interpreter in which importing any OPTIONAL module fails, as in a base install
_BLOCKER = """
import importlib.abc, sys
BLOCKED = set({blocked!r})
class Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {{name!r}} (blocked by the test)")
        return None
sys.meta_path.insert(0, Blocker())
"""


def _run_blocked(code: str, blocked=OPTIONAL) -> subprocess.CompletedProcess:
    script = _BLOCKER.format(blocked=sorted(blocked)) + code
    return subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


def test_env_works_without_any_optional_dependency():
    result = _run_blocked("""
import random, sys
import numpy as np
import dominoes_env
from dominoes_env import SingleAgentEnv
for n in (2, 4):
    env = dominoes_env.env(num_players=n, target_score=60, render_mode="rgb_array")
    env.reset(seed=n)
    rng = random.Random(n)
    steps = 0
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        action = None if term or trunc else rng.choice(list(np.flatnonzero(obs["action_mask"])))
        env.step(action)
        steps += 1
    frame = env.render()
    assert steps > 20 and frame.shape == (540, 960, 3), (steps, frame.shape)
single = SingleAgentEnv(num_players=2)
obs, info = single.reset(seed=0)
obs, r, term, trunc, info = single.step(int(np.flatnonzero(single.action_masks())[0]))
from agents import make_agent
from dominoes_env.core import MatchState
match = MatchState(seed=1)
for spec in ("random", "greedy", "search:sims=20", "ppo"):
    assert make_agent(spec, seed=0).act(match.view(match.turn)) in match.legal_actions()
try:
    make_agent("ismcts")
except ValueError as err:
    assert "pip install 'straight-dominoes[openspiel]'" in str(err), err
else:
    raise AssertionError("ismcts without OpenSpiel")
loaded = sorted(m for m in sys.modules if m.partition(".")[0] in BLOCKED)
assert not loaded, loaded
print("ok")
""")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_the_maskable_ppo_trainer_and_its_library_start_without_torch():
    """The trainer's flags, refusals and configuration, and the modules it trains with, import
    no torch, stable-baselines3 or sb3-contrib: those come when a run builds its model (its
    callbacks are built as SB3 callbacks only then)."""
    result = _run_blocked("""
import sys
import experiments.train_ppo as program
from agents import pool_env, sb3_callbacks, sb3_checkpoint, sb3_divergence, sb3_pretrain, sb3_run
config = program.TrainConfig()
assert program.parser_for(program.TrainConfig).parse_args([]).total_steps == config.total_steps
loaded = sorted(m for m in sys.modules if m.partition(".")[0] in BLOCKED)
assert not loaded, loaded
print("ok")
""", blocked=["torch", "stable_baselines3", "sb3_contrib"])
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_tournament_without_its_extra_says_which_extra(tmp_path):
    result = _run_blocked(f"""
from experiments.tournament.cli import main
code = main(["--agents", "random", "greedy", "--matches", "2", "--out", {str(tmp_path)!r}])
raise SystemExit(code)
""", blocked=["rich"])
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "error: dominoes-tournament needs rich: pip install 'straight-dominoes[tournament]'")
    assert not list(tmp_path.iterdir())  # nothing was played or written


@pytest.mark.parametrize("program", ["bench_jax", "bench_jax_observe", "bench_jax_pieces"])
def test_jax_benchmarks_without_their_extra_say_which_extra(program):
    """One line naming the extra and status 2, from the shared runner's handling of a missing
    extra (each printed its own message before)."""
    result = _run_blocked(f"""
from experiments.{program} import main
raise SystemExit(main(["--repeats", "1"]))
""", blocked=["jax"])
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip() == (
        "error: the JAX game needs jax: pip install 'straight-dominoes[jax]'")


def test_training_without_its_extra_says_which_extra():
    result = _run_blocked("""
from agents.imitation import pretrain_policy
try:
    pretrain_policy(None, {})
except ImportError as err:
    print(err)
""", blocked=["torch"])
    assert result.stdout.strip() == (
        "behaviour cloning needs torch: pip install 'straight-dominoes[train]'")


def _module_level_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            names.update(a.name.partition(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.partition(".")[0])
        elif isinstance(node, ast.Try):  # guarded optional imports are the extra's business
            continue
    return names


def test_env_modules_import_only_base_dependencies_at_module_level():
    stdlib = set(sys.stdlib_module_names) | {"__future__"}
    for path in sorted((ROOT / "dominoes_env").rglob("*.py")):
        third_party = _module_level_imports(path) - stdlib - {"dominoes_env"}
        # the OpenSpiel and JAX faces are imported only when asked for, and need their extras
        if "openspiel" in path.relative_to(ROOT / "dominoes_env").parts[:-1]:
            third_party -= {"pyspiel"}
        if "jax" in path.relative_to(ROOT / "dominoes_env").parts[:-1]:
            third_party -= {"jax", "pgx", "flax", "optax", "chex"}
        assert third_party <= BASE_MODULES, (path.relative_to(ROOT), third_party)


def test_pyproject_dependencies():
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert [_name(r) for r in project["dependencies"]] == [
        "numpy", "gymnasium", "pettingzoo", "pillow", "threadpoolctl"]
    extras = project["optional-dependencies"]
    assert {"rich", "tqdm", "openskill", "matplotlib"} <= set(extras["tournament"])
    assert "torch" in extras["train"] and "open_spiel" in extras["openspiel"]
    assert "jupyterlab" in extras["notebooks"] and "pandas" in extras["notebooks"]
    assert project["license"] == "MIT" and project["readme"] == "README.md"
    # the Makefile installs every extra, so make test exercises all of them
    makefile = (ROOT / "Makefile").read_text()
    line = next(x for x in makefile.splitlines() if x.startswith("EXTRAS :="))
    assert set(line.split(":=")[1].strip().split(",")) == set(extras)


def _name(requirement: str) -> str:
    """The distribution a requirement string names (``"pgx>=2.6,<2.7"``: ``pgx``)."""
    return re.split(r"[\s<>=!~;\[(]", requirement, maxsplit=1)[0]


def _private_part_pins() -> dict[str, str]:
    """constraints.txt's exact pins of the libraries whose private parts the project reads
    (the block of pins under the comment that says so): name -> version."""
    text = (ROOT / "constraints.txt").read_text()
    (block,) = [b for b in text.split("\n\n") if "private parts" in b]
    pins = dict(line.split("==") for line in block.splitlines()
                if line.strip() and not line.startswith("#"))
    return {name.strip(): version.strip() for name, version in pins.items()}


def test_libraries_read_privately_are_bounded_in_pyproject_too():
    """``pip install .`` / ``pip install ".[jax]"`` (what README and the docs say) reads
    pyproject.toml, not constraints.txt: its requirements left PettingZoo, Pgx, JAX and
    stable-baselines3 unbounded, so a new release whose private parts differ (PettingZoo's
    ``_has_updated``, ``pgx._src.struct``, ``jax._src.xla_bridge``) could be installed. Every
    library constraints.txt pins for that reason has an upper bound in pyproject.toml wherever
    it is required, and the pin is inside it."""
    tomllib = pytest.importorskip("tomllib")
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    lists = {"dependencies": project["dependencies"], **project["optional-dependencies"]}
    pins = _private_part_pins()
    assert {"pettingzoo", "pgx", "jax", "jaxlib", "stable-baselines3", "sb3-contrib"} <= set(pins)
    for name, version in pins.items():
        found = [(where, Requirement(r)) for where, reqs in lists.items() for r in reqs
                 if canonicalize_name(Requirement(r).name) == canonicalize_name(name)]
        assert found, f"{name} (pinned in constraints.txt) is required nowhere in pyproject.toml"
        for where, req in found:
            upper = [s for s in req.specifier if s.operator in ("<", "<=", "==", "~=")]
            assert upper, f"{where}: {req} has no upper bound"
            assert req.specifier.contains(version), f"{where}: {req} excludes the pin {version}"


def test_wheel_ships_py_typed_policies_and_metadata(tmp_path):
    src = tmp_path / "src"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for package in ("dominoes_env", "agents", "experiments"):
        shutil.copytree(ROOT / package, src / package, ignore=ignore)
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, src / name)
    out = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "-q", "-w", str(out), str(src)], check=True, capture_output=True, timeout=300)
    (wheel,) = out.glob("straight_dominoes-*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        meta_name = next(n for n in names if n.endswith(".dist-info/METADATA"))
        meta = email.message_from_string(z.read(meta_name).decode())
        policy = json.loads(z.read("agents/policies/ppo_2p.json"))
    for package in ("dominoes_env", "agents", "experiments"):
        assert f"{package}/py.typed" in names
    for file in POLICY_FILES.values():  # one policy per table, with its card
        stem = f"agents/policies/{file.removesuffix('.npz')}"
        assert {f"{stem}.npz", f"{stem}.json"} <= names
    for file in GUIDED_POLICIES.values():  # the policies guided was measured with
        assert f"agents/policies/{file}" in names
    assert "dominoes_env/openspiel/__init__.py" in names and "agents/ismcts.py" in names
    assert not any(n.startswith("tests/") for n in names)
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert policy  # the policy's metadata is real JSON
    assert meta["License-Expression"] == "MIT"
    requires = meta.get_all("Requires-Dist")
    base = sorted(_name(r) for r in requires if "extra ==" not in r)
    assert base == ["gymnasium", "numpy", "pettingzoo", "pillow", "threadpoolctl"]
    # the bounds on the libraries whose private parts the project reads reach the wheel
    assert any(r.startswith("pettingzoo") and "<1.28" in r for r in requires), requires
    assert {"tournament", "train", "notebooks", "openspiel", "docs"} <= set(
        meta.get_all("Provides-Extra"))
    assert meta["Description-Content-Type"] == "text/markdown"
    assert "Straight Dominoes" in meta.get_payload()


def test_one_version_number_for_the_package_its_metadata_and_its_citation():
    import importlib.metadata

    import dominoes_env

    assert importlib.metadata.version("straight-dominoes") == dominoes_env.__version__
    citation = (Path(__file__).resolve().parents[1] / "CITATION.cff").read_text()
    assert f"\nversion: {dominoes_env.__version__}\n" in citation


def test_ray_helpers_do_not_import_the_slow_iri_checker():
    """Ray's dashboard agent missed the raylet's fixed 15-second start-up window on a busy
    machine (load 15: five failed starts of five): 1.1 of the 2 CPU-seconds it needs to start
    went to importing ``rfc3987_syntax``, which jsonschema 4.25 and later import when it is
    installed (Jupyter asks for it). ``constraints.txt`` keeps ``jsonschema<4.25``."""
    pytest.importorskip("ray")
    proc = subprocess.run([sys.executable, "-c", "import sys, ray.dashboard.agent; "
                           "print(sorted({'rfc3987_syntax', 'lark'} & set(sys.modules)))"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "[]"
