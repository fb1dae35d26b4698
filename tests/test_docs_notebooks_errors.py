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


@pytest.mark.parametrize("fault", ["no kernel", "not a notebook"])
def test_a_kernel_that_cannot_start_or_a_damaged_notebook_is_one_line(tmp_path, monkeypatch,
                                                                     capsys, fault):
    """A kernel that was not installed (jupyter_client's NoSuchKernel) and a notebook that is
    not JSON came out as tracebacks; now one line naming the notebook and the cause, status 1,
    nothing written."""
    import experiments.docs_notebooks as program

    source, target = tmp_path / "notebooks", tmp_path / "docs"
    source.mkdir()
    if fault == "no kernel":
        write_notebook(source / "a.ipynb", [nbformat.v4.new_code_cell("x = 1")])
        monkeypatch.setattr(program, "KERNEL", "no-such-kernel")
        cause = "its kernel 'no-such-kernel' failed (NoSuchKernel: No such kernel named"
    else:
        (source / "a.ipynb").write_text('{"cells": [')
        cause = "cannot be read (NotJSONError: "
    for name in ("DOMINOES_NB_OUT", "DOMINOES_NB_QUICK", "TQDM_DISABLE", "MPLBACKEND"):
        monkeypatch.setenv(name, "")
    monkeypatch.setattr(program, "SOURCE", source)
    monkeypatch.setattr(program, "TARGET", target)
    assert program.main(["a"]) == 1
    lines = error_lines(capsys.readouterr().err)
    assert len(lines) == 1 and lines[0].startswith(f"error: notebook a: {cause}"), lines
    assert lines[0].endswith("; 0 of 1 notebooks were stored (a's copy was left as it was)")
    assert not target.exists()


def test_a_quick_run_checks_and_stores_nothing(tmp_path, monkeypatch, capsys):
    """``--quick`` ("for a fast check") stored the small sizes' run over the documentation's
    executed copy: the site then showed the quick figures as the notebook's results (and one
    such copy was committed)."""
    import experiments.docs_notebooks as program

    source, target = tmp_path / "notebooks", tmp_path / "docs"
    source.mkdir()
    target.mkdir()
    write_notebook(source / "a.ipynb", [nbformat.v4.new_code_cell("print(1)")])
    (target / "a.ipynb").write_text("the documentation's copy")
    for name in ("DOMINOES_NB_OUT", "DOMINOES_NB_QUICK", "TQDM_DISABLE", "MPLBACKEND"):
        monkeypatch.setenv(name, "")
    monkeypatch.setattr(program, "SOURCE", source)
    monkeypatch.setattr(program, "TARGET", target)
    assert program.main(["a", "--quick"]) == 0
    assert (target / "a.ipynb").read_text() == "the documentation's copy"
    assert "(--quick: checked, not stored)" in capsys.readouterr().err
