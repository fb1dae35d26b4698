"""``make docs-notebooks`` / ``python -m experiments.docs_notebooks``: run the notebooks of
``notebooks/`` on a fresh kernel and store the executed copies, outputs included, in
``docs/notebooks/`` for the documentation site, which shows them as they are (the site build
never runs a notebook, so it takes seconds).

The notebooks in ``notebooks/`` stay committed without outputs; ``tests/test_docs.py`` checks
that every executed copy has the same code as its source, so an edited notebook without a fresh
copy fails the tests (and the message says to run this). Files a notebook writes go to a
temporary directory. Cells tagged ``widget`` (interactive ipywidgets) are kept but not run:
a static page cannot run them.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

from dominoes_env.cli_support import OneLineParser
from dominoes_env.optional import require

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "notebooks"
TARGET = ROOT / "docs" / "notebooks"
WIDGET_TAG = "widget"
CELL_TIMEOUT = 3600


def execute(name: str, quick: bool) -> Path:
    """Run ``notebooks/<name>.ipynb`` and write the executed copy; returns its path."""
    nbformat = require("nbformat", "notebooks", "executing the notebooks")
    nbclient = require("nbclient", "notebooks", "executing the notebooks")
    nb = nbformat.read(SOURCE / f"{name}.ipynb", as_version=4)
    cells = list(nb.cells)
    nb.cells = [c for c in cells if WIDGET_TAG not in c.metadata.get("tags", [])]
    with tempfile.TemporaryDirectory() as out:
        os.environ["DOMINOES_NB_OUT"] = out
        os.environ["DOMINOES_NB_QUICK"] = "1" if quick else "0"
        os.environ.setdefault("MPLBACKEND", "module://matplotlib_inline.backend_inline")
        os.environ["TQDM_DISABLE"] = "1"
        client = nbclient.NotebookClient(
            nb, timeout=CELL_TIMEOUT, kernel_name="python3", shutdown_kernel="immediate",
            resources={"metadata": {"path": str(SOURCE)}},
        )
        client.execute()
    executed = iter(nb.cells)
    nb.cells = [c if WIDGET_TAG in c.metadata.get("tags", []) else next(executed) for c in cells]
    TARGET.mkdir(parents=True, exist_ok=True)
    path = TARGET / f"{name}.ipynb"
    tmp = path.with_suffix(".ipynb.tmp")
    nbformat.write(nb, tmp)
    tmp.replace(path)  # never a half-written notebook
    return path


def main(argv: list[str] | None = None) -> int:
    p = OneLineParser(prog="python -m experiments.docs_notebooks",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("names", nargs="*", metavar="NAME",
                   help="notebooks to run, e.g. 01_game_and_environment (default: all)")
    p.add_argument("--quick", action="store_true",
                   help="the notebooks' small sizes (DOMINOES_NB_QUICK=1), for a fast check")
    args = p.parse_args(argv)
    available = sorted(q.stem for q in SOURCE.glob("*.ipynb"))
    unknown = sorted(set(args.names) - set(available))
    if unknown:
        p.error(f"unknown notebook(s) {', '.join(unknown)}; available: {', '.join(available)}")
    for name in args.names or available:
        start = time.perf_counter()
        path = execute(name, args.quick)
        print(f"{path.relative_to(ROOT)}: {time.perf_counter() - start:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
