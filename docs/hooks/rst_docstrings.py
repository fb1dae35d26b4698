"""Griffe extension for the API reference: the project's docstrings use a few reStructuredText
forms (roles, double-backtick literals, doctest examples, ``::`` literal blocks, simple tables);
this turns them into Markdown before mkdocstrings renders them, so the docstrings stay as they
are for ``help()`` and doctest."""

from __future__ import annotations

import re
import textwrap

import griffe

_ROLE = re.compile(r":(?:class|func|meth|mod|attr|data|exc|obj):`(~?)([^`<]+?)(?:\s*<([^>]+)>)?`")
_LITERAL = re.compile(r"``(.+?)``")
_TABLE_BORDER = re.compile(r"^\s*=+(\s+=+)+\s*$")


def _role(match: re.Match) -> str:
    tilde, text, target = match.groups()
    if target:  # :class:`text <target>`
        return f"`{text.strip()}`"
    return f"`{text.split('.')[-1] if tilde else text}`"


def _inline(line: str) -> str:
    return _LITERAL.sub(r"`\1`", _ROLE.sub(_role, line))


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _columns(border: str) -> list[tuple[int, int]]:
    """The ``(start, end)`` of each column of a simple table, from a border line."""
    return [(m.start(), m.end()) for m in re.finditer(r"=+", border)]


def _table(lines: list[str]) -> list[str]:
    """A reStructuredText simple table (three border lines: top, under the header, bottom) as a
    Markdown table. A row whose first column is blank continues the row above it.

    >>> print("\\n".join(_table(["===  =====", "a    b", "===  =====", "1    ``x``",
    ...                         "     more", "2    y|z", "===  ====="])))
    | a | b |
    |---|---|
    | 1 | `x` more |
    | 2 | y\\|z |
    """
    columns = _columns(lines[0])
    rows: list[list[str]] = []
    header = [""] * len(columns)  # a table without a header row gets an empty one
    has_header = sum(bool(_TABLE_BORDER.match(line)) for line in lines) >= 3
    borders = 0
    for line in lines:
        if _TABLE_BORDER.match(line):
            borders += 1
            if borders == 2 and has_header and rows:
                header, rows = rows[0], []
            continue
        if not line.strip():
            continue
        cells = []
        for k, (start, _end) in enumerate(columns):
            stop = columns[k + 1][0] if k + 1 < len(columns) else len(line)
            cells.append(line[start:stop].strip())
        if rows and not cells[0]:  # a continuation line
            rows[-1] = [f"{a} {b}".strip() for a, b in zip(rows[-1], cells, strict=True)]
        else:
            rows.append(cells)

    def row(cells: list[str]) -> str:
        return "| " + " | ".join(_inline(c).replace("|", "\\|") for c in cells) + " |"

    return [row(header), "|" + "---|" * len(columns), *map(row, rows)]


def rst_to_markdown(text: str) -> str:
    """The Markdown form of a docstring written with the RST forms named above.

    >>> print(rst_to_markdown("See :class:`~a.b.C` and ``x``.\\n\\n>>> 1 + 1\\n2"))
    See `C` and `x`.
    <BLANKLINE>
    ```pycon
    >>> 1 + 1
    2
    ```
    """
    lines = text.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if stripped.startswith(">>>"):  # a doctest block: up to the next blank line
            block = []
            while i < len(lines) and lines[i].strip():
                block.append(lines[i])
                i += 1
            out += ["```pycon", *textwrap.dedent("\n".join(block)).splitlines(), "```"]
            continue
        if _TABLE_BORDER.match(line):  # a simple table: three border lines
            # a table ends at a border line followed by a blank line (or the end): the third
            # border of a table with a header, the second of one without
            block, borders = [], 0
            while i < len(lines):
                is_border = bool(_TABLE_BORDER.match(lines[i]))
                borders += is_border
                block.append(lines[i])
                i += 1
                if is_border and borders >= 2 and (i == len(lines) or not lines[i].strip()):
                    break
            out += ["", *_table(textwrap.dedent("\n".join(block)).splitlines()), ""]
            continue
        if stripped.endswith("::") and not stripped.startswith(".."):
            # a literal block follows: the next indented lines
            base = _indent(line)
            head = _inline(line.rstrip()[:-2].rstrip())
            out.append(head + (":" if head.strip() else ""))
            i += 1
            block = []
            while i < len(lines) and (not lines[i].strip() or _indent(lines[i]) > base):
                block.append(lines[i])
                i += 1
            while block and not block[-1].strip():
                block.pop()
            out += ["", "```text", *textwrap.dedent("\n".join(block)).strip("\n").splitlines(),
                    "```", ""]
            continue
        out.append(_inline(line))
        i += 1
    return "\n".join(out)


class RstDocstrings(griffe.Extension):
    """Rewrite every docstring once it is loaded."""

    def on_instance(self, *, obj, **kwargs) -> None:
        if obj.docstring is not None:
            obj.docstring.value = rst_to_markdown(obj.docstring.value)
