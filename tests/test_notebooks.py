"""The notebooks in ``notebooks/`` run top to bottom on a fresh kernel and are committed clean.

Each notebook reads ``DOMINOES_NB_QUICK=1`` (shrink every size) and, when it writes files,
``DOMINOES_NB_OUT`` (where they go) in its first code cell; here they point at small sizes and a
temporary directory, so a run never writes into the repository. The kernel is ``python3`` (the
venv's ipykernel) and starts in ``notebooks/``, as it does for a reader who opens them in Jupyter.

Cells tagged ``widget`` (the ipywidgets game of notebook 1) are run in this process instead of
on the kernel: with widget messages in flight nbclient sometimes misses a cell's reply and waits
out the whole cell timeout before going on (jupyter/nbclient#312), which made the suite
occasionally take minutes longer. Their code is still executed, button press included.

Run them as ``make test`` does::

    .venv/bin/python -m pytest tests/test_notebooks.py -n 2
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

NOTEBOOK_DIR = Path(__file__).resolve().parents[1] / "notebooks"
#: each notebook and the picture formats it must produce
NOTEBOOKS = {
    # layouts; mask and rgb frames; the replay viewer
    "01_game_and_environment": ["image/svg+xml", "image/png", "text/html"],
    "02_training": ["image/png"],  # learning curve, losses
    "03_tournament_analysis": ["image/png"],  # heatmap, ratings, histograms, effects
}
#: the notebooks that write artifacts (under ``DOMINOES_NB_OUT``)
WRITES_FILES = ("02_training", "03_tournament_analysis")
#: seconds a single cell may run in quick mode before the test fails
CELL_TIMEOUT = 300
WIDGET_TAG = "widget"


def _read(name: str):
    return nbformat.read(NOTEBOOK_DIR / f"{name}.ipynb", as_version=4)


def _is_widget(cell) -> bool:
    return WIDGET_TAG in cell.metadata.get("tags", [])


def _quick(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("DOMINOES_NB_QUICK", "1")
    monkeypatch.setenv("DOMINOES_NB_OUT", str(tmp_path / "out"))


def test_the_three_notebooks_are_there():
    assert sorted(p.stem for p in NOTEBOOK_DIR.glob("*.ipynb")) == sorted(NOTEBOOKS)


@pytest.mark.parametrize("name", sorted(NOTEBOOKS))
def test_notebook_is_committed_without_outputs(name):
    nb = _read(name)
    nbformat.validate(nb)
    assert nb.metadata["kernelspec"]["name"] == "python3"
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(c.outputs == [] and c.execution_count is None for c in code)
    # the first code cell holds the sizes and the switches the test sets
    first = code[0].source
    assert "DOMINOES_NB_QUICK" in first
    assert ("DOMINOES_NB_OUT" in first) == (name in WRITES_FILES)


@pytest.mark.parametrize("name", sorted(NOTEBOOKS))
def test_notebook_runs_on_a_fresh_kernel(name, tmp_path, monkeypatch):
    _quick(monkeypatch, tmp_path)
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    monkeypatch.setenv("TQDM_DISABLE", "1")
    nb = _read(name)
    nb.cells = [c for c in nb.cells if not _is_widget(c)]  # see the module docstring
    client = nbclient.NotebookClient(
        nb, timeout=CELL_TIMEOUT, kernel_name="python3", shutdown_kernel="immediate",
        resources={"metadata": {"path": str(NOTEBOOK_DIR)}},
    )
    # Jupyter's client installs Python's Ctrl-C handler in this process: the worker's own is
    # put back (conftest.py checks that no test leaves one changed)
    was = signal.getsignal(signal.SIGINT)
    try:
        client.execute()  # raises CellExecutionError naming the failing cell
    finally:
        signal.signal(signal.SIGINT, was)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    kinds = {k for o in outputs for k in o.get("data", {})}
    for kind in NOTEBOOKS[name]:
        assert kind in kinds, f"{name} drew no {kind} output"
    if name in WRITES_FILES:  # into the temporary directory, not the repository
        assert any((tmp_path / "out").rglob("*"))


def test_play_widget_answers_a_button_press(tmp_path, monkeypatch):
    """Notebook 1's widget cells, after its two setup cells, in this process: the widget is
    built and pressing its first button plays that move and the greedy agent's answer."""
    pytest.importorskip("ipywidgets")
    _quick(monkeypatch, tmp_path)
    monkeypatch.chdir(NOTEBOOK_DIR)
    code = [c for c in _read("01_game_and_environment").cells if c.cell_type == "code"]
    widget_cells = [c for c in code if _is_widget(c)]
    assert len(widget_cells) == 2
    namespace: dict = {}
    for k, cell in enumerate(code[:2] + widget_cells):
        exec(compile(cell.source, f"<notebook 1, cell {k}>", "exec"), namespace)
    game = namespace["game"]  # the last cell pressed the first button and checked the move
    assert game.log[0].startswith("you play ")
    assert len(game.buttons.children) == len(game.hand.legal_actions())
