"""A card for people: one printed table (rich) and one picture (matplotlib)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from dominoes_env.optional import require

from ..tournament.report import label, output_console, plain_text_figures, save_figure
from .card import card_problem, tables_problem


def _num(value: float | None, digits: int) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def short_reason(reason: str) -> str:
    """A cell's reason for the printed table: its first clause, without the spec's preamble
    (``card.json`` keeps it whole).

    >>> short_reason("agent spec 'ppo' cannot play these rules: no policy for 3 players (x); y")
    'no policy for 3 players'
    """
    text = reason.split(" cannot play these rules: ", 1)[-1]
    for stop in (" (", "; "):
        text = text.split(stop, 1)[0]
    return text


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.3g}"


def check_card(card: Any) -> dict[str, Any]:
    """``card`` if it is a benchmark card (:func:`~.card.card_problem`), else a ``ValueError``
    saying what is wrong (``TypeError`` for what is no dict): a card is a file, read back as
    untrusted input, so ``print_card({})`` says what the card lacks."""
    if not isinstance(card, dict):
        raise TypeError(f"card must be a benchmark card (a dict), not {type(card).__name__}")
    problem = card_problem(card)
    if problem:
        raise ValueError(f"not a benchmark card: {problem}")
    return card


def card_rows(card: dict[str, Any]) -> list[list[str]]:
    """The printed table's rows: table, opponent, matches, win rate, 95% interval, points per
    hand (agent-opponent), decision ms mean and p95, and a note (why a cell is ``n/a``, or how
    many of its matches are still to play).

    >>> card = {"tables": [{"name": "3p", "cells": [
    ...     {"opponent": "ppo", "status": "n/a", "reason": "no policy"}]}]}
    >>> card_rows(card)
    [['3p', 'ppo', '-', 'n/a', '-', '-', '-', '-', 'no policy']]
    """
    problem = tables_problem(card.get("tables") if isinstance(card, dict) else None)
    if problem:
        raise ValueError(f"not a benchmark card: {problem}")
    rows = []
    for table in card["tables"]:
        for c in table["cells"]:
            if c["status"] != "ok":
                rows.append([table["name"], c["opponent"], "-", "n/a", "-", "-", "-", "-",
                             short_reason(c["reason"])])
                continue
            low, high = c["win_rate_ci95"]
            ms = c["decision_ms"]
            note = "" if c["complete"] else f"{c['matches']} of {c['matches_scheduled']} played"
            rows.append([table["name"], c["opponent"], str(c["matches"]), _pct(c["win_rate"]),
                         f"{100 * low:.1f}-{100 * high:.1f}%",
                         f"{_num(c['points_per_hand'], 2)}-"
                         f"{_num(c['opponent_points_per_hand'], 2)}",
                         _ms(ms["mean"]), _ms(ms["p95"]), note])
    return rows


def print_card(card: dict[str, Any], console=None) -> None:
    """Print the card as one table with rich (the tournament extra). An output closed early
    (``| head``) raises ``BrokenPipeError``, for the command to say so (rich's own console
    exits with status 1 and no word)."""
    require("rich", "tournament", "the benchmark card")
    from rich.table import Table

    check_card(card)
    if console is None:
        console = output_console(140)
    state = "" if card["complete"] else " (incomplete: --resume plays the rest)"
    table = Table(title=f"benchmark card: {card['agent']}, {card['matches']} matches per "
                        f"opponent and table, seed {card['seed']}{state}")
    table.add_column("table", no_wrap=True)
    table.add_column("opponent", overflow="fold")
    for col in ("matches", "win rate", "95% CI", "pts/hand", "ms mean", "ms p95"):
        table.add_column(col, justify="right", no_wrap=True)
    table.add_column("note", overflow="fold")
    for row in card_rows(card):
        table.add_row(*row)
    console.print(table)
    console.print("win rate: the agent's share of match wins (draws half), 50% between equals "
                  "at every table; pts/hand: agent-opponent; ms: the agent's time per decision")


def plot_card(card: dict[str, Any], path: str | os.PathLike) -> Path:
    """One panel per table: the agent's win rate against each opponent with its 95% interval,
    50% marked; an ``n/a`` cell is written as such."""
    check_card(card)
    if not card["tables"] or not any(table["cells"] for table in card["tables"]):
        raise ValueError("the benchmark card has no cells to draw")
    with plain_text_figures():
        return _plot_card(card, path)


def _plot_card(card: dict[str, Any], path: str | os.PathLike) -> Path:
    Figure = require("matplotlib.figure", "tournament", "the benchmark card's picture").Figure

    tables = card["tables"]
    height = 1.4 + 0.45 * max(len(t["cells"]) for t in tables)
    fig = Figure(figsize=(3.4 * len(tables) + 0.8, height), layout="constrained")
    axes = fig.subplots(1, len(tables), sharey=True, squeeze=False)[0]
    for ax, table in zip(axes, tables, strict=True):
        names = [label(c["opponent"]) for c in table["cells"]]
        ax.axvline(0.5, color="grey", lw=1, ls="--")
        for y, c in enumerate(table["cells"]):
            if c["status"] != "ok" or c["win_rate"] is None:
                ax.text(0.5, y, "n/a", ha="center", va="center", color="grey",
                        bbox={"facecolor": "white", "edgecolor": "none"})
                continue
            low, high = c["win_rate_ci95"]
            rate = c["win_rate"]
            ax.errorbar([rate], [y], xerr=[[rate - low], [high - rate]], fmt="o", capsize=4,
                        color="tab:blue")
        ax.set_yticks(range(len(names)), names)
        ax.set_ylim(len(names) - 0.5, -0.5)
        ax.set_xlim(0, 1)
        ax.set_title(table["name"])
        ax.set_xlabel("win rate (95% interval)")
        ax.grid(axis="x", alpha=0.3)
    fig.suptitle(f"{label(card['agent'])}: {card['matches']} matches per opponent and table")
    return save_figure(fig, path)
