"""The log of a trainer's evaluations (``eval.csv``), kept readable across resumed runs.

A trainer appends a row to its ``eval.csv`` at each evaluation (:func:`append_eval_row`; the
row itself is :func:`agents.evaluation.evaluation_row`'s figures after ``steps`` and
``wall_s``), and a resumed run appends to the file the stopped one left:
:func:`keep_numeric_rows` drops, before the run appends, the lines that are no row of numbers
(a line cut by a kill, text put there, NaN), and sets aside a file whose header is damaged."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from typing import Any

from .paths import shown_path


def append_eval_row(path: str | os.PathLike, row: Mapping[str, Any]) -> None:
    """Append ``row`` (column name to value, in the columns' order) to the CSV log ``path``
    (a trainer's ``eval.csv``), first writing the header of its column names when there is no
    file yet. The row is appended, not the file written again: a kill mid-append leaves at
    worst a cut last line, which :func:`keep_numeric_rows` drops when the run resumes.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = os.path.join(folder, "eval.csv")
    ...     append_eval_row(path, {"steps": 0, "wall_s": 1.5, "win_rate_vs_greedy": 0.25})
    ...     append_eval_row(path, {"steps": 512, "wall_s": 9.0, "win_rate_vs_greedy": 0.5})
    ...     print(open(path).read(), end="")
    steps,wall_s,win_rate_vs_greedy
    0,1.5,0.25
    512,9.0,0.5
    """
    import csv

    new = not os.path.exists(path)
    with open(path, "a", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(row))
        if new:
            writer.writeheader()
        writer.writerow(row)


def keep_numeric_rows(path: str | os.PathLike) -> str | None:
    """Keep in the CSV log ``path`` (a trainer's ``eval.csv``, appended to as a run goes on)
    its header and the rows of finite numbers under it, one per column; returns the warning
    line to print where rows were dropped or the file set aside (``None``: the file is sound,
    or not there). A resume appended its rows after lines of garbage (a line cut by a kill
    mid-append, text put there, a row of NaN or infinities), and the file stayed mixed; such
    lines are dropped and the file written again from its good rows. A file whose first line
    is no header of column names cannot say which column a number is: it is kept whole beside
    (``eval.csv.damaged``) rather than cut, and the log starts again."""
    import csv

    from ..core.atomic_files import atomic_write

    if not os.path.isfile(path) or os.path.islink(path):
        return None
    with open(path, "rb") as f:
        raw = f.read()
    lines = raw.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    if not lines:  # empty: the next row starts it again, with its header
        os.remove(path)
        return None

    def fields(line: bytes) -> list[str] | None:
        try:
            return next(csv.reader([line.decode("utf-8").rstrip("\r")]))
        except (UnicodeDecodeError, csv.Error, StopIteration):
            return None

    header = fields(lines[0]) if lines else None
    if not header or not all(name.isidentifier() for name in header):  # steps, wall_s...
        return _set_aside(path, len(lines) - 1)
    bad, good = [], [lines[0]]
    for number, line in enumerate(lines[1:], 2):
        row = fields(line)
        cut = number == len(lines) and not raw.endswith(b"\n")
        if cut or row is None or len(row) != len(header) or not all(map(_is_finite, row)):
            bad.append(number)
        else:
            good.append(line)
    if not bad:
        return None
    rows = len(good) - 1
    with atomic_write(path, "wb") as f:
        f.write(b"".join(line + b"\n" for line in good))
    more = f" and {len(bad) - 1} more" if len(bad) > 1 else ""
    return (f"warning: {shown_path(path)}: line {bad[0]}{more} held no row of this run's "
            f"numbers; written again from its {rows} good row{'s' if rows != 1 else ''}")


def _set_aside(path: str | os.PathLike, lines: int) -> str:
    """Move the log ``path`` whose header is damaged to a free ``NAME.damaged`` (``.damaged.2``
    ...) beside it, whole, and say so: the rows under such a header are numbers of unknown
    columns, which neither a reader of the log nor the next appended row can place."""
    base = os.fspath(path) + ".damaged"
    aside, n = base, 1
    while os.path.lexists(aside):
        n += 1
        aside = f"{base}.{n}"
    os.rename(path, aside)
    rows = f" with the {lines} line{'s' if lines != 1 else ''} under it" if lines > 0 else ""
    return (f"warning: {shown_path(path)}: its first line is no header of column names, so "
            f"its rows cannot be read; the file is kept as {shown_path(aside)}{rows}, and the "
            "log starts again")


def _is_finite(text: str) -> bool:
    """A number a log's reader can plot: NaN, infinities and 1e400 (read as one) are not."""
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False
