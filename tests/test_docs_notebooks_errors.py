"""``python -m experiments.docs_notebooks`` with a notebook whose cell fails: one line naming the
notebook, the cell and the error's last line, status 1, that notebook's copy not written (the
copies before it are)."""

from __future__ import annotations

import pytest

from tests.helpers import error_lines

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")


def write_notebook(path, cells) -> None:
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, path)


def test_a_failing_cell_is_one_line_naming_the_notebook_and_cell(tmp_path, monkeypatch, capsys):
    """nbclient's CellExecutionError came out whole: the cell's source, its output and an
    ANSI-coloured traceback, dozens of lines instead of one."""
    import experiments.docs_notebooks as program

    new = nbformat.v4
    source, target = tmp_path / "notebooks", tmp_path / "docs"
    source.mkdir()
    write_notebook(source / "a_good.ipynb", [new.new_code_cell("x = 1")])
    widget = new.new_code_cell("raise RuntimeError('a widget cell is not run')")
    widget.metadata["tags"] = ["widget"]
    write_notebook(source / "b_bad.ipynb", [
        new.new_markdown_cell("# A notebook"), new.new_code_cell("print('some output')"),
        widget, new.new_code_cell("def f():\n    raise ValueError('first\\nthe cause')\nf()"),
        new.new_code_cell("y = 2")])
    for name in ("DOMINOES_NB_OUT", "DOMINOES_NB_QUICK", "TQDM_DISABLE", "MPLBACKEND"):
        monkeypatch.setenv(name, "")  # the program sets them; put back after the test
    monkeypatch.setattr(program, "SOURCE", source)
    monkeypatch.setattr(program, "TARGET", target)
    assert program.main(["a_good", "b_bad"]) == 1
    err = capsys.readouterr().err
    assert error_lines(err) == ["error: notebook b_bad: cell 4 raised ValueError: the cause; 1 of "
                                "2 notebooks were stored (b_bad's copy was left as it was)"]
    assert len(err.strip().splitlines()) == 4, err  # running a_good, its copy, running b_bad
    assert sorted(p.name for p in target.iterdir()) == ["a_good.ipynb"]
