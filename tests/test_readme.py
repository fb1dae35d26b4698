"""Every example a user reads runs.

The ```python blocks of ``README.md``, of the package READMEs and of the documentation's tour
pages (:data:`PAGES`) run in order, as one script per page in a fresh interpreter, in an empty
temporary directory with the repository on ``PYTHONPATH``; the ``python -m ...`` commands of the
page's ```bash / ```console blocks run in the same order from that script (standard input
closed, so ``play`` quits at its first prompt), so a block may read what an earlier one wrote.

A block too long to run here (a 2,000-match tournament, a training run, a Ray cluster) is
marked with the HTML comment ``<!-- no-test -->`` on the line right before its fence, and only
those are skipped; a marked block must hold a command that :func:`why_long` calls long, so the
marker cannot hide a short example. Blocks that run JAX (they import it, or run a JAX program)
run in a test of their own under the ``jax`` mark: the session of the other tests never
imports JAX, not even in a subprocess of theirs.

The examples must not use the deprecated aliases of moved names: a ``DeprecationWarning`` that
names one of the project's modules is an error in the page's script.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: the pages whose examples run: the READMEs and the documentation's tour (the pages that teach
#: by example; the reference pages, environment card and API included, are checked elsewhere)
PAGES = (
    "README.md",
    "agents/README.md",
    "dominoes_env/README.md",
    "experiments/README.md",
    "docs/index.md",
    "docs/agents.md",
    "docs/tournaments.md",
    "docs/benchmark.md",
    "docs/replays.md",
    "docs/jax.md",
    "docs/openspiel.md",
)
NO_TEST = "<!-- no-test -->"
#: seconds one page's examples may take (all of them are a few seconds on 2 cores)
PAGE_LIMIT = 240
#: seconds one command may take
COMMAND_LIMIT = 120

_FENCE = re.compile(r"^(?P<indent> *)(?P<fence>```+|~~~+)\s*(?P<lang>[\w+-]*)")
_SHELLS = ("bash", "console", "sh", "shell")
_PYTHON = re.compile(r"^(?:\S*/)?python3?$")
#: programs that run JAX computations
_JAX_PROGRAMS = {"experiments.train_jax", "experiments.bench_jax", "experiments.best_response",
                 "experiments.expert_iteration"}
_JAX_IMPORT = re.compile(r"^\s*(?:import|from)\s+(?:jax\b|dominoes_env\.jax\b)", re.M)
#: programs whose every run (but ``--help``) trains, benchmarks or plays many matches
_LONG_PROGRAMS = re.compile(
    r"experiments\.(?:train_\w+|best_response|expert_iteration|bench_\w+|decision_quality|demo)$")
#: size flags and the largest value an example may give them
_SIZES = {"--matches": 40, "--total-steps": 100_000, "--steps": 100_000, "--iterations": 2,
          "--positions": 40, "--updates": 2}


@dataclass(frozen=True)
class Block:
    page: str
    line: int  #: the line of the opening fence, from 1
    lang: str
    text: str
    no_test: bool

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def is_shell(self) -> bool:
        return self.lang in _SHELLS

    def commands(self) -> list[list[str]]:
        """The ``python -m ...`` commands of a shell block, each as its argument list."""
        if not self.is_shell:
            return []
        lines = self.text.splitlines()
        if self.lang == "console":
            lines = [line[2:] for line in lines if line.startswith("$ ")]
        joined, current = [], ""
        for line in lines:
            if line.rstrip().endswith("\\"):
                current += line.rstrip()[:-1] + " "
                continue
            joined.append(current + line)
            current = ""
        if current:
            joined.append(current)
        commands = []
        for line in joined:
            argv = shlex.split(line, comments=True)
            if len(argv) >= 3 and _PYTHON.match(argv[0]) and argv[1] == "-m":
                commands.append(argv)
        return commands

    @property
    def runs_jax(self) -> bool:
        if self.lang == "python":
            return bool(_JAX_IMPORT.search(self.text))
        return any(argv[2] in _JAX_PROGRAMS or _flag(argv, "--backend") == "jax"
                   for argv in self.commands())


def _flag(argv: list[str], name: str) -> str | None:
    for i, arg in enumerate(argv):
        if arg == name and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return None


def why_long(argv: list[str]) -> str | None:
    """Why a command is too long to run in the test suite, or ``None`` when it is short."""
    if "--help" in argv or "-h" in argv:
        return None
    if any("..." in arg for arg in argv):
        return "a template with '...', not a whole command"
    if _LONG_PROGRAMS.match(argv[2]):
        return f"{argv[2]} trains, benchmarks or plays a long tournament"
    for flag, most in _SIZES.items():
        value = _flag(argv, flag)
        if value is not None and value.isdigit() and int(value) > most:
            return f"{flag} {value} (an example runs at most {most})"
    if _flag(argv, "--backend") == "ray" or any(
            _flag(argv, flag) is not None for flag in ("--address", "--ray-address")):
        return "starts or joins a Ray cluster"
    return None


def blocks(page: str) -> list[Block]:
    """The fenced code blocks of a page, in order."""
    lines = (ROOT / page).read_text().splitlines()
    found, i = [], 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence = len(m["indent"]), m["fence"]
        j = i + 1
        while j < len(lines) and lines[j].strip() != fence:
            j += 1
        body = "\n".join(line[indent:] for line in lines[i + 1:j])
        marked = i > 0 and lines[i - 1].strip() == NO_TEST
        found.append(Block(page, i + 1, m["lang"].lower(), body, marked))
        i = j + 1
    return found


def _runnable(page: str, jax: bool) -> list[Block]:
    return [b for b in blocks(page) if not b.no_test and b.runs_jax == jax
            and (b.lang == "python" or b.commands())]


_PRELUDE = '''\
import subprocess as _docs_subprocess
import sys as _docs_sys
import warnings as _docs_warnings

# a deprecation of the project's own (a moved or renamed name, an old id) is an error in an
# example; other libraries' deprecations are theirs
from dominoes_env.core import DominoesDeprecationWarning as _DocsDeprecation

_docs_warnings.filterwarnings("error", category=_DocsDeprecation)


def _docs_run(argv, where):
    argv = [_docs_sys.executable, *argv[1:]]
    print(f"$ {' '.join(argv[1:])}    ({where})", flush=True)
    try:
        done = _docs_subprocess.run(argv, stdin=_docs_subprocess.DEVNULL, text=True,
                                    capture_output=True, timeout=%(limit)d)
    except _docs_subprocess.TimeoutExpired:
        raise SystemExit(f"{where}: {' '.join(argv[1:])} ran past %(limit)d s") from None
    print(done.stdout[-2000:], done.stderr[-2000:], sep="\\n", flush=True)
    if done.returncode != 0:
        raise SystemExit(f"{where}: {' '.join(argv[1:])} exited {done.returncode}")

'''


def script(page: str, jax: bool) -> str:
    """One Python script that runs a page's examples in order."""
    parts = [_PRELUDE % {"limit": COMMAND_LIMIT}]
    for block in _runnable(page, jax):
        parts.append(f"# ---- {block.where}")
        if block.lang == "python":
            parts.append(f"print('>>> python block at {block.where}', flush=True)")
            parts.append(block.text)
        else:
            parts.extend(f"_docs_run({argv!r}, {block.where!r})" for argv in block.commands())
    return "\n".join(parts) + "\n"


def _missing_modules(page: str, jax: bool) -> list[str]:
    """Top-level modules the page's Python examples import that are not installed."""
    names = set()
    for block in _runnable(page, jax):
        if block.lang != "python":
            continue
        for node in ast.walk(ast.parse(block.text)):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names.add(node.module.split(".")[0])
    return sorted(n for n in names if importlib.util.find_spec(n) is None)


def _run_page(page: str, jax: bool, tmp_path: Path) -> None:
    missing = _missing_modules(page, jax)
    if missing:
        pytest.skip(f"{page}: needs {', '.join(missing)} (pip install the extra)")
    path = tmp_path / "examples.py"
    path.write_text(script(page, jax))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    env.pop("PYTEST_CURRENT_TEST", None)
    # one thread per library: on a shared 2-core machine torch's own thread pool makes a small
    # MaskablePPO update ten times slower
    env.setdefault("OMP_NUM_THREADS", "1")
    try:
        done = subprocess.run([sys.executable, str(path)], cwd=tmp_path, env=env, text=True,
                              stdin=subprocess.DEVNULL, capture_output=True, timeout=PAGE_LIMIT)
    except subprocess.TimeoutExpired as err:
        pytest.fail(f"{page}: the examples ran past {PAGE_LIMIT} s\n{err.stdout or ''}")
    assert done.returncode == 0, f"{page}'s examples failed:\n{done.stdout[-6000:]}\n" \
                                 f"{done.stderr[-6000:]}"


def _pages_with(jax: bool) -> list[str]:
    return [page for page in PAGES if _runnable(page, jax)]


@pytest.mark.parametrize("page", _pages_with(jax=False))
def test_examples_run(page, tmp_path):
    _run_page(page, jax=False, tmp_path=tmp_path)


@pytest.mark.jax
@pytest.mark.parametrize("page", _pages_with(jax=True))
def test_jax_examples_run(page, tmp_path):
    _run_page(page, jax=True, tmp_path=tmp_path)


@pytest.mark.parametrize("page", PAGES)
def test_no_test_marks_only_long_blocks(page):
    lines = (ROOT / page).read_text().splitlines()
    fences = {b.line for b in blocks(page)}
    for i, line in enumerate(lines, 1):
        if line.strip() == NO_TEST:
            assert i + 1 in fences, f"{page}:{i}: {NO_TEST} must be the line right before a fence"
    for block in blocks(page):
        if not block.no_test:
            continue
        commands = block.commands()
        assert commands, f"{block.where}: {NO_TEST} on a block with no python -m command"
        reasons = [why_long(argv) for argv in commands]
        assert any(reasons), f"{block.where}: marked {NO_TEST} but every command is short; " \
                             "let it run"


def test_every_page_has_examples_that_run():
    for page in PAGES:
        assert _runnable(page, False) or _runnable(page, True), f"{page} runs no example"


def test_the_long_command_rules():
    long = ["python", "-m"]
    assert why_long([*long, "experiments.train_jax", "--out", "x"])
    assert not why_long([*long, "experiments.train_jax", "--help"])
    assert why_long([*long, "experiments.tournament", "--agents", "a", "b", "--matches", "2000"])
    assert not why_long([*long, "experiments.tournament", "--agents", "a", "b", "--matches", "20"])
    assert why_long([*long, "experiments.tournament", "--backend", "ray", "--matches", "4"])
    assert why_long([*long, "experiments.train_ppo", "...the", "same", "flags..."])
    assert not why_long([*long, "dominoes_env", "replay", "game.json"])


def test_blocks_and_commands_are_read_as_written(tmp_path, monkeypatch):
    page = tmp_path / "page.md"
    page.write_text("text\n\n```python\nx = 1\n```\n\n" + NO_TEST + "\n```bash\n"
                    "python -m experiments.tournament --agents a b \\\n    --matches 2000  # note\n"
                    "pip install .\n```\n\n```console\n$ python -m dominoes_env replay g.json\n"
                    '{"scores": [0, 0]}\n```\n')
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    python, shell, console = blocks("page.md")
    assert (python.lang, python.text, python.no_test, python.line) == ("python", "x = 1", False, 3)
    assert shell.no_test and shell.commands() == [
        ["python", "-m", "experiments.tournament", "--agents", "a", "b", "--matches", "2000"]]
    assert console.commands() == [["python", "-m", "dominoes_env", "replay", "g.json"]]
    text = script("page.md", jax=False)
    assert "x = 1" in text and "replay" in text and "experiments.tournament" not in text


def test_readme_is_a_front_door():
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 300, "README.md is the front door: at most 300 lines"
    hashes = [h for h in re.findall(r"\b[0-9a-f]{7,40}\b", text)
              if re.search(r"[a-f]", h) and re.search(r"\d", h)]
    assert not hashes, f"README.md names commits {hashes}: a recipe must work from a checkout"
    assert "runs/" not in text, "README.md points into runs/: a recipe must work from a checkout"


# ---- the maps of the code: agents/README.md's modules, experiments/README.md's programs

AGENTS = ROOT / "agents"
EXPERIMENTS = ROOT / "experiments"
#: the heading of agents/README.md's map of its modules
AGENTS_MAP = "## Where the code is"
_CELL_NAME = re.compile(r"`([^`]+)`")


def table_rows(page: str, section: str | None = None) -> list[tuple[str, str]]:
    """``(first cell, second cell)`` of every row of the Markdown tables of ``page`` (under the
    heading ``section`` only, up to the next heading of its level or above, when given); header
    and separator rows left out."""
    lines = (ROOT / page).read_text().splitlines()
    if section is not None:
        level = len(section) - len(section.lstrip("#"))
        assert section in lines, f"{page} has no heading {section!r}"
        start = lines.index(section) + 1
        end = next((i for i in range(start, len(lines))
                    if re.match(rf"#{{1,{level}}} ", lines[i])), len(lines))
        lines = lines[start:end]
    rows, header = [], True
    for line in lines:
        if not line.startswith("|"):
            header = True  # the next table starts with its header row
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if header or set(line) <= set("|-: "):
            header = False
            continue
        rows.append((cells[0], cells[1] if len(cells) > 1 else ""))
    return rows


def agents_modules() -> set[str]:
    """Every module of ``agents/`` and its subpackages, as a path from ``agents/``
    (``tournament/runner.py``), package ``__init__.py`` and ``__main__.py`` files left out."""
    return {p.relative_to(AGENTS).as_posix() for p in AGENTS.rglob("*.py")
            if p.name not in ("__init__.py", "__main__.py") and "__pycache__" not in p.parts}


def experiments_modules() -> dict[str, bool]:
    """Every module of ``experiments/`` by name (``__init__.py`` left out; a package with a
    ``__main__.py``, ``experiments/tournament``, is one module), and whether it is a program
    (a ``python -m`` entry point: a ``main`` function, or the package's ``__main__.py``)."""
    found = {p.stem: bool(re.search(r"^def main\(", p.read_text(), re.M))
             for p in EXPERIMENTS.glob("*.py") if p.name != "__init__.py"}
    found.update({p.parent.name: True for p in EXPERIMENTS.glob("*/__main__.py")})
    return found


def test_agents_readme_maps_every_module():
    rows = table_rows("agents/README.md", AGENTS_MAP)
    named = [name for cell, _ in rows for name in _CELL_NAME.findall(cell)]
    assert named, f"agents/README.md has no table of modules under {AGENTS_MAP!r}"
    missing = sorted(agents_modules() - set(named))
    assert not missing, (f"agents/README.md's map ({AGENTS_MAP!r}) lacks {missing}: add a row "
                         "saying what each holds")
    gone = sorted(name for name in named if not (AGENTS / name).exists())
    assert not gone, f"agents/README.md's map names {gone}, which agents/ does not hold"
    twice = sorted({name for name in named if named.count(name) > 1})
    assert not twice, f"agents/README.md's map names {twice} more than once"
    empty = [cell for cell, what in rows if not what]
    assert not empty, f"agents/README.md's map says nothing of {empty}"


def test_experiments_readme_lists_every_program():
    rows = table_rows("experiments/README.md")
    listed: dict[str, str] = {}  # name -> how the table names it
    for cell, what in rows:
        for text in _CELL_NAME.findall(cell):
            m = (re.fullmatch(r"python -m experiments\.(\w+)", text)
                 or re.fullmatch(r"experiments/(\w+)\.py", text))
            if m:
                assert m[1] not in listed, f"experiments/README.md lists {text!r} twice"
                assert what, f"experiments/README.md says nothing of {text!r}"
                listed[m[1]] = text
    modules = experiments_modules()
    missing = sorted(set(modules) - set(listed))
    assert not missing, (f"experiments/README.md's tables lack {missing}: add a row saying what "
                         "each does")
    gone = sorted(listed[name] for name in set(listed) - set(modules))
    assert not gone, f"experiments/README.md lists {gone}, which experiments/ does not hold"
    not_run = sorted(f"experiments.{name}" for name, text in listed.items()
                     if modules[name] and not text.startswith("python -m "))
    assert not not_run, f"experiments/README.md lists the programs {not_run} not as python -m"
    no_program = sorted(text for name, text in listed.items()
                        if text.startswith("python -m ") and not modules[name])
    assert not no_program, (f"experiments/README.md lists {no_program}, which has no main: not a "
                            "program")
