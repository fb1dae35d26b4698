"""The documentation site's sources: the executed notebooks match the notebooks, the environment
card's observation table matches the encoding, nothing a user reads points outside the
repository, and the two build hooks do what they say. (``make test`` builds the site itself with
``mkdocs build --strict``.)"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from dominoes_env.core import RuleConfig
from dominoes_env.obs import observation_spec
from dominoes_env.obs.v2 import observation_layout

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb")))
def test_executed_notebook_is_up_to_date(name):
    nbformat = pytest.importorskip("nbformat")
    executed_path = DOCS / "notebooks" / f"{name}.ipynb"
    assert executed_path.is_file(), f"no {executed_path}: run make docs-notebooks"
    source = nbformat.read(ROOT / "notebooks" / f"{name}.ipynb", as_version=4)
    executed = nbformat.read(executed_path, as_version=4)
    stale = f"docs/notebooks/{name}.ipynb is older than notebooks/: run make docs-notebooks"
    assert [c.source for c in executed.cells] == [c.source for c in source.cells], stale
    assert [c.cell_type for c in executed.cells] == [c.cell_type for c in source.cells], stale
    code = [c for c in executed.cells if c.cell_type == "code"
            and "widget" not in c.metadata.get("tags", [])]
    assert all(c.execution_count is not None for c in code)  # every cell ran
    outputs = [o for c in code for o in c.outputs]
    assert outputs and not [o for o in outputs if o.output_type == "error"]


def _card_rows() -> dict[str, tuple[str, str]]:
    text = (DOCS / "environment.md").read_text()
    section = text.split("## Observation space")[1].split("\n## ")[0]
    rows = {}
    for line in section.splitlines():
        m = re.match(r"\| `(\w+)` \| [^|]+ \| (\d+:\d+) \| (\d+:\d+) \|", line)
        if m:
            rows[m.group(1)] = (m.group(2), m.group(3))
    return rows


def test_environment_card_observation_table_matches_the_encoding():
    rows = _card_rows()
    spec = observation_spec(5)  # the card's tables of versions 3, 4 and 5 add their blocks
    two, three, four = (spec.layout(RuleConfig(num_players=n)).blocks for n in (2, 3, 4))
    assert list(rows) == list(two)
    later = ("later_reply_points", "later_reply_chance")  # version 5's table: 3p and 4p
    lookahead = ("reply_points", "reply_chance", "follow_up", *later)
    assert list(observation_layout(RuleConfig()).blocks) == list(two)[:-5] == [
        name for name in rows if name not in lookahead]
    for name, (first, r4) in rows.items():
        small = three if name in later else two
        assert first == f"{small[name].start}:{small[name].stop}", name
        assert r4 == f"{four[name].start}:{four[name].stop}", name


def _user_facing() -> list[Path]:
    files = [ROOT / "README.md", ROOT / "CHANGELOG.md", *ROOT.glob("*/README.md"),
             *DOCS.rglob("*.md"), *(ROOT / "notebooks").glob("*.ipynb")]
    return [f for f in files if ".venv" not in f.parts]


def test_nothing_a_user_reads_points_outside_the_repository():
    for path in _user_facing():
        text = path.read_text()
        for bad in ("../shared", "shared/RULES.md", "/work/"):
            assert bad not in text, f"{path.relative_to(ROOT)} mentions {bad}"
        if path.suffix != ".md":
            continue
        # relative Markdown links resolve inside the repository
        for target in re.findall(r"\]\((?!https?:|#|mailto:)([^)#\s]+)", text):
            resolved = (path.parent / target).resolve()
            assert resolved.is_relative_to(ROOT), f"{path.relative_to(ROOT)} links {target}"
            if path.parent != DOCS and DOCS not in path.parents:  # docs links are mkdocs' job
                assert resolved.exists(), f"{path.relative_to(ROOT)}: {target} does not exist"


def test_nothing_a_user_reads_cites_the_project_s_tracker():
    """A user cannot open the tracker the project is planned in: "(issue 32)" in the changelog
    or a page tells them nothing. (GitHub issues of other projects, linked, are fine.)"""
    for path in _user_facing():
        for line in path.read_text().splitlines():
            cited = re.search(r"\b[Ii]ssues? \d+", line)
            assert cited is None or "github.com" in line, (
                f"{path.relative_to(ROOT)} cites {cited.group(0)!r}: {line.strip()[:100]}")


def test_rst_docstrings_become_markdown():
    """Roles and double backticks become code spans, a simple table a Markdown table (not a
    code block showing its borders), literal and doctest blocks fenced code."""
    convert = _load(DOCS / "hooks" / "rst_docstrings.py").rst_to_markdown
    text = """The :class:`~dominoes_env.core.MatchState` and :func:`encode` with ``x=1``.

=====  ======
a      b
=====  ======
1      2
=====  ======

Run it::

    make docs

>>> 1 + 1
2
"""
    assert convert(text).splitlines() == [
        "The `MatchState` and `encode` with `x=1`.", "",
        "", "| a | b |", "|---|---|", "| 1 | 2 |", "", "",
        "Run it:", "", "```text", "make docs", "```", "",
        "```pycon", ">>> 1 + 1", "2", "```",
    ]


def test_optional_pages_join_the_navigation_when_present(tmp_path):
    hook = _load(DOCS / "hooks" / "optional_pages.py")
    nav = [{"Home": "index.md"}, {"OpenSpiel": "openspiel.md"}, {"Results": "results.md"}]
    config = {"docs_dir": str(tmp_path), "nav": [dict(x) for x in nav]}
    assert hook.on_config(config)["nav"] == nav  # no rllib.md: unchanged
    (tmp_path / "rllib.md").write_text("# RLlib\n")
    assert hook.on_config(config)["nav"] == [nav[0], nav[1], {"RLlib": "rllib.md"}, nav[2]]
    assert hook.on_config(config)["nav"].count({"RLlib": "rllib.md"}) == 1  # listed once


def test_environment_card_lists_every_env_option():
    from dominoes_env.options import ENV_OPTION_NAMES

    text = (DOCS / "environment.md").read_text()
    section = text.split("## Arguments")[1].split("\n## ")[0]
    listed = set(re.findall(r"^\| `(\w+)` \|", section, re.M))
    assert listed == set(ENV_OPTION_NAMES) | {"render_mode"}


def _nav_pages(nav) -> set[str]:
    pages = set()
    for item in nav:
        for value in (item.values() if isinstance(item, dict) else [item]):
            pages |= _nav_pages(value) if isinstance(value, list) else {value}
    return pages


def test_every_page_is_in_the_navigation():
    yaml = pytest.importorskip("yaml")

    class Loader(yaml.SafeLoader):  # mkdocs.yml may hold !!python tags: ignore them
        pass

    Loader.add_multi_constructor("", lambda loader, suffix, node: None)
    config = yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=Loader)
    optional = set(_load(DOCS / "hooks" / "optional_pages.py").OPTIONAL)
    listed = _nav_pages(config["nav"]) | optional
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")
             if "hooks" not in p.parts}
    assert pages <= listed, f"pages missing from mkdocs.yml's nav: {sorted(pages - listed)}"
    assert "results.md" in listed


def test_a_simple_table_without_a_header_row_and_with_continuation_lines():
    convert = _load(DOCS / "hooks" / "rst_docstrings.py").rst_to_markdown
    text = """Arrays:

=====  ===========
``a``  first
       and more
``b``  x|y
=====  ===========

:func:`after` the table."""
    assert convert(text).splitlines() == [
        "Arrays:", "", "", "|  |  |", "|---|---|", "| `a` | first and more |",
        "| `b` | x\\|y |", "", "", "`after` the table.",
    ]


def test_every_public_name_of_the_core_is_on_its_api_page():
    """31 of the 42 names of ``dominoes_env.core.__all__`` were on no page of the API reference
    (``tile_of``, which the README's agent example imports, the events, the scoring rules, the
    state protocols): each is now rendered there, or named in its prose (the end and event
    constants)."""
    import dominoes_env.core as core

    page = (DOCS / "api" / "core.md").read_text()
    rendered = set(re.findall(r"^::: dominoes_env\.core\.(?:\w+\.)*(\w+)$", page, re.M))
    members = " ".join(re.findall(r"members: \[([^\]]*)\]", page))
    named = set(re.findall(r"\w+", members)) | set(re.findall(r"`(\w+)`", page))
    assert sorted(set(core.__all__) - rendered - named) == []
