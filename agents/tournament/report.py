"""Turn a finished tournament into ``summary.json``, plots and a printed table.

``summary.json`` (all deterministic except ``last_run``)::

    {"format": "head_to_head" | "partnerships" | "free_for_all",
     "agents": [...], "rules": {...}, "seed": S, "matches_per_pairing": N,
     "total_matches": T, "finished_matches": F, "complete": true,
     "pairs": [{"a", "b", "matches", "a_wins", "b_wins", "draws", "a_win_rate",
                "a_win_rate_ci95": [low, high]}, ...],
     "agent_stats": {agent: {"matches", "wins", "draws", "win_rate", "win_rate_ci95",
                             "points_per_hand"}},
     "points_per_hand": {agent: x},
     "ratings": {agent: {"mu", "sigma", "ordinal", "ci95": [low, high]}},
     "tables": [...],            # free-for-all only: wins by agent at each table
     "last_run": {"played", "seconds", "matches_per_second", "workers", "backend"}}

In ``pairs``, head-to-head and partnership entries count matches between the two; free-for-all
entries count how often ``a`` finished ahead of ``b`` at a table where both sat. A draw counts
half a win in every rate; intervals are 95% Wilson score intervals.
"""

from __future__ import annotations

import errno
import math
import os
from pathlib import Path
from typing import Any

from dominoes_env.core.atomic_files import atomic_write, check_output_path, write_json
from dominoes_env.core.validation import (
    is_count,
    is_finite_number,
    is_interval,
    is_rate,
    short_repr,
)
from dominoes_env.optional import require

from . import stats
from .runner import HEATMAP_FILE, RATINGS_FILE, SUMMARY_FILE, TournamentRun


def build_summary(run: TournamentRun) -> dict[str, Any]:
    """The summary of a run's finished matches (see the module docstring)."""
    cfg, sched, recs = run.config, run.schedule, run.records
    rules, agents = cfg.rules, list(cfg.agents)
    per_agent = stats.agent_stats(recs, agents, rules)
    summary: dict[str, Any] = {
        "format": sched.format,
        "agents": agents,
        "rules": rules.to_dict(),
        "seed": cfg.seed,
        "matches_requested": cfg.matches,
        "matches_per_pairing": max(sched.matches_per_table),
        "total_matches": len(sched.jobs),
        "finished_matches": len(recs),
        "complete": run.complete,
        "max_hands": cfg.max_hands,
        "draws_counted_as": 0.5,
        "pairs": stats.pair_stats(recs, agents, rules),
        "agent_stats": per_agent,
        "points_per_hand": {a: s["points_per_hand"] for a, s in per_agent.items()},
        "ratings": stats.ratings(recs, agents, rules),
        "rating_model": "openskill PlackettLuce (mu0=25, sigma0=25/3), one update per match in "
                        "schedule order; ci95 = mu -/+ 1.96 sigma",
    }
    if sched.format == "free_for_all":
        summary["tables"] = stats.table_stats(recs, sched.tables, rules)
    summary["last_run"] = {
        "played": run.played,
        "seconds": round(run.seconds, 3),
        "matches_per_second": (round(run.played / run.seconds, 2)
                               if run.played and run.seconds else None),
        "workers": run.workers,
        "backend": run.backend,
    }
    return summary


def write_summary(summary: dict, out: str | os.PathLike, *, overwrite: bool = True) -> Path:
    """Write ``summary.json`` into the folder ``out`` atomically (a reader never sees half a
    file). The file follows :func:`~dominoes_env.core.atomic_files.check_output_path`: a
    symbolic link, a folder, a device or a FIFO named ``summary.json`` there is a
    ``ValueError`` (the rename replaced it); ``overwrite=False`` never replaces the file."""
    path = Path(out) / SUMMARY_FILE
    check_output_path(path, name="summary", overwrite=overwrite)
    write_json(path, summary, overwrite=overwrite)
    return path


def check_summary(summary: Any, *keys: str) -> dict:
    """``summary`` if it is a dict holding ``keys`` (of :func:`build_summary`'s), each of the
    form the module's docstring gives (:func:`summary_problem`), else a ``TypeError`` /
    ``ValueError`` naming what it lacks or what is wrong. A ``summary.json`` read back is
    untrusted, so every reader checks it here first: ``{}`` (no ``agents``), a pair naming an
    agent not in ``agents``, ``"ratings": 5`` and an ``a_win_rate`` of 2.0 (which would draw
    a win rate of -1.0 for the other agent) are each refused in words.

    >>> check_summary({"agents": []}, "agents", "pairs")
    Traceback (most recent call last):
    ...
    ValueError: summary lacks 'pairs'; what build_summary makes (summary.json) holds ...
    >>> check_summary({"agents": ["a", "a"]}, "agents")
    Traceback (most recent call last):
    ...
    ValueError: summary's agents must be a list of distinct agent specs (text); it holds ['a', 'a']
    """
    if not isinstance(summary, dict):
        raise TypeError(f"summary must be a tournament summary (a dict, build_summary's), not "
                        f"{type(summary).__name__}")
    missing = [key for key in keys if key not in summary]
    if missing:
        raise ValueError(f"summary lacks {', '.join(map(repr, missing))}; what build_summary "
                         f"makes (summary.json) holds {', '.join(map(repr, keys))} and more")
    problem = summary_problem(summary, keys)
    if problem:
        raise ValueError(f"summary's {problem}")
    return summary


def summary_problem(summary: dict, keys: tuple[str, ...]) -> str | None:
    """What is wrong with the fields ``keys`` of ``summary`` (``None``: nothing), each held to
    the form :func:`build_summary` writes (the module's docstring) as far as the report's
    readers (:func:`win_matrix`, the plots, :func:`print_summary`) read it."""
    agents = summary.get("agents")
    if ("agents" in keys or "pairs" in keys) and not (
            isinstance(agents, list) and all(isinstance(a, str) for a in agents)
            and len(set(agents)) == len(agents)):
        return ("agents must be a list of distinct agent specs (text); it holds "
                f"{short_repr(agents)}")
    for key in keys:
        check = _FIELD_CHECKS.get(key)
        problem = check(summary[key], agents) if check else None
        if problem:
            return f"{key}: {problem}"
    if "ratings" in keys and "agent_stats" in keys:  # the agent table: both, and the ordinal
        for name, r in summary["ratings"].items():
            if name not in summary["agent_stats"]:
                return f"ratings: {short_repr(name)} has a rating but no agent_stats"
            if "ordinal" not in r:
                return f"ratings: {short_repr(name)} has no ordinal"
    return None


def _pairs_problem(pairs: Any, agents: list[str]) -> str | None:
    if not isinstance(pairs, list):
        return f"must be a list of pairs, not {short_repr(pairs)}"
    for i, p in enumerate(pairs):
        if not isinstance(p, dict) or not {"a", "b", "a_win_rate"} <= set(p):
            return f"pair {i} is not an object with 'a', 'b' and 'a_win_rate'"
        if p["a"] not in agents or p["b"] not in agents or p["a"] == p["b"]:
            return (f"pair {i} names {short_repr(p['a'])} and {short_repr(p['b'])}, not two of the "
                    "summary's agents")
        if p["a_win_rate"] is not None and not is_rate(p["a_win_rate"]):
            return f"pair {i} has a_win_rate={short_repr(p['a_win_rate'])}; a win rate is in 0..1"
        counts = [p.get(k) for k in ("matches", "a_wins", "b_wins", "draws") if k in p]
        if not all(map(is_count, counts)):
            return f"pair {i}'s counts of matches, wins and draws must be whole numbers >= 0"
        if "a_win_rate_ci95" in p and not is_interval(p["a_win_rate_ci95"], is_rate):
            return f"pair {i} has a_win_rate_ci95={short_repr(p['a_win_rate_ci95'])}"
    return None


def _ratings_problem(ratings: Any, agents: list[str] | None) -> str | None:
    if not isinstance(ratings, dict):
        return f"must be an object of agents' ratings, not {short_repr(ratings)}"
    for name, r in ratings.items():
        if not (isinstance(r, dict) and is_finite_number(r.get("mu")) and is_interval(r.get("ci95"))
                and ("ordinal" not in r or is_finite_number(r["ordinal"]))):
            return (f"{short_repr(name)} is not a rating (a finite number 'mu', 'ci95' [low, high] "
                    "and an 'ordinal' that is a finite number)")
    return None


def _stats_problem(agent_stats: Any, agents: list[str] | None) -> str | None:
    if not isinstance(agent_stats, dict):
        return f"must be an object of agents' statistics, not {short_repr(agent_stats)}"
    for name, s in agent_stats.items():
        if not (isinstance(s, dict) and is_count(s.get("matches"))
                and (s.get("win_rate") is None or is_rate(s.get("win_rate")))
                and is_interval(s.get("win_rate_ci95"), is_rate)
                and (s.get("points_per_hand") is None
                     or is_finite_number(s.get("points_per_hand")))):
            return (f"{short_repr(name)} is not an agent's statistics ('matches', 'win_rate', "
                    "'win_rate_ci95', 'points_per_hand')")
    return None


def _last_run_problem(last: Any, agents: list[str] | None) -> str | None:
    """``last_run`` (optional): ``null`` or the figures of the run that wrote the summary."""
    if last is None:
        return None
    if not (isinstance(last, dict) and is_count(last.get("played"))
            and is_finite_number(last.get("seconds"))
            and (last.get("matches_per_second") is None
                 or is_finite_number(last.get("matches_per_second")))
            and is_count(last.get("workers")) and isinstance(last.get("backend"), str)):
        return ("must be null or an object of 'played', 'seconds', 'matches_per_second', "
                f"'workers' and 'backend', not {short_repr(last)}")
    return None


def _text_problem(value: Any, agents: list[str] | None) -> str | None:
    return None if isinstance(value, str) else f"must be text, not {short_repr(value)}"


def _count_problem(value: Any, agents: list[str] | None) -> str | None:
    return None if is_count(value) else f"must be a whole number >= 0, not {short_repr(value)}"


#: the check of each field of a summary that the report reads
_FIELD_CHECKS = {"pairs": _pairs_problem, "ratings": _ratings_problem,
                 "agent_stats": _stats_problem, "format": _text_problem,
                 "finished_matches": _count_problem, "total_matches": _count_problem,
                 "last_run": _last_run_problem}


def win_matrix(summary: dict) -> list[list[float]]:
    """``m[i][j]``: win rate of ``agents[i]`` against ``agents[j]`` (NaN where they never met).

    >>> win_matrix({"agents": ["x", "y"], "pairs": [{"a": "x", "b": "y", "a_win_rate": 0.75}]})
    [[nan, 0.75], [0.25, nan]]
    """
    agents = check_summary(summary, "agents", "pairs")["agents"]
    idx = {a: i for i, a in enumerate(agents)}
    m = [[math.nan] * len(agents) for _ in agents]
    for p in summary["pairs"]:
        if p["a_win_rate"] is not None:
            i, j = idx[p["a"]], idx[p["b"]]
            m[i][j], m[j][i] = p["a_win_rate"], 1 - p["a_win_rate"]
    return m


def plain_text_figures():
    """A context in which matplotlib draws text as it is: an agent spec or a path with ``$``
    (``ppo:a$\\x$.npz``) is drawn as written, never parsed as mathtext (which can fail with a
    ``ParseFatalException`` after the matches are played)."""
    return require("matplotlib", "tournament", "plotting").rc_context({"text.parse_math": False})


def label(text: str) -> str:
    r"""``text`` as a picture can show it: characters that are not UTF-8 (an agent spec naming
    a file whose name is not, held by Python as ``'\udcff'``) are written as escapes, since
    matplotlib cannot draw them.

    >>> label("ppo:p\udcff.npz"), label("search:sims=50")
    ('ppo:p\\udcff.npz', 'search:sims=50')
    """
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def plot_heatmap(summary: dict, path: str | os.PathLike, *, overwrite: bool = True) -> Path:
    """Head-to-head win-rate heatmap: row agent's win rate against the column agent
    (``path`` and ``overwrite`` as :func:`save_figure` takes them)."""
    check_summary(summary, "agents", "pairs", "format")
    check_output_path(path, overwrite=overwrite)  # before the figure is drawn
    with plain_text_figures():
        return _plot_heatmap(summary, path, overwrite)


def save_figure(fig, path: str | os.PathLike, *, overwrite: bool = True) -> Path:
    """Write the matplotlib figure ``fig`` to ``path`` (its format from the suffix, PNG if it
    has none) whole or not at all (:func:`atomic_write`: a Ctrl-C in the middle of
    ``savefig`` left half a picture). ``path`` follows
    :func:`~dominoes_env.core.atomic_files.check_output_path`, as the other writers do: a
    symbolic link, a folder, a device or a FIFO is a ``ValueError`` (the rename replaced a
    device node, a FIFO or the link itself with the picture); ``overwrite=False`` never
    replaces an existing file (``FileExistsError``)."""
    path = Path(check_output_path(path, overwrite=overwrite))
    with atomic_write(path, "wb", overwrite=overwrite) as f:
        fig.savefig(f, format=path.suffix[1:].lower() or "png", dpi=110)
    return path


def _plot_heatmap(summary: dict, path: str | os.PathLike, overwrite: bool) -> Path:
    Figure = require("matplotlib.figure", "tournament", "plotting").Figure

    agents, m = [label(a) for a in summary["agents"]], win_matrix(summary)
    n = len(agents)
    fig = Figure(figsize=(1.6 + 1.1 * n, 1.2 + 0.9 * n), layout="constrained")
    ax = fig.add_subplot()
    image = ax.imshow(m, cmap="RdBu", vmin=0, vmax=1)
    ax.set_xticks(range(n), agents, rotation=30, ha="right")
    ax.set_yticks(range(n), agents)
    for i in range(n):
        for j in range(n):
            if not math.isnan(m[i][j]):
                ax.text(j, i, f"{m[i][j]:.2f}", ha="center", va="center",
                        color="white" if abs(m[i][j] - 0.5) > 0.3 else "black")
    what = "finished ahead" if summary["format"] == "free_for_all" else "win rate"
    ax.set_title(f"{what} (row vs column)")
    fig.colorbar(image, ax=ax, shrink=0.8)
    return save_figure(fig, path, overwrite=overwrite)


def plot_ratings(summary: dict, path: str | os.PathLike, *, overwrite: bool = True) -> Path:
    """OpenSkill ratings with their 95% intervals, best at the top (``path`` and
    ``overwrite`` as :func:`save_figure` takes them)."""
    check_summary(summary, "ratings")
    check_output_path(path, overwrite=overwrite)  # before the figure is drawn
    with plain_text_figures():
        return _plot_ratings(summary, path, overwrite)


def _plot_ratings(summary: dict, path: str | os.PathLike, overwrite: bool) -> Path:
    Figure = require("matplotlib.figure", "tournament", "plotting").Figure

    items = sorted(summary["ratings"].items(), key=lambda kv: kv[1]["mu"])
    fig = Figure(figsize=(6, 1.0 + 0.5 * len(items)), layout="constrained")
    ax = fig.add_subplot()
    mus = [r["mu"] for _, r in items]
    err = [r["mu"] - r["ci95"][0] for _, r in items]
    ax.errorbar(mus, range(len(items)), xerr=err, fmt="o", capsize=4)
    ax.set_yticks(range(len(items)), [label(a) for a, _ in items])
    ax.set_xlabel("OpenSkill mu (95% interval)")
    ax.grid(axis="x", alpha=0.3)
    return save_figure(fig, path, overwrite=overwrite)


def write_outputs(run: TournamentRun, plots: bool = True) -> dict[str, Any]:
    """Write ``summary.json`` (and the plots) into the run's directory; return the summary."""
    summary = build_summary(run)
    write_summary(summary, run.out)
    if plots and run.records:
        plot_heatmap(summary, run.out / HEATMAP_FILE)
        plot_ratings(summary, run.out / RATINGS_FILE)
    return summary


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _ci(ci: list[float]) -> str:
    return f"{ci[0]:.2f}-{ci[1]:.2f}"


def output_console(width: int):
    """A rich console for a command's standard output: ``width`` columns when the output is
    piped or captured (not squeezed into 80), and an output closed early (``| head``) raises
    ``BrokenPipeError`` for the command to report in one line (rich's own console exits with
    status 1 and no word). Text is printed as it is, never read as rich's markup."""
    require("rich", "tournament", "the tournament report")
    from rich.console import Console

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            raise BrokenPipeError(errno.EPIPE, "standard output was closed")

    # markup off: an agent spec or a path is text ('ppo:[red]q.npz' showed as 'ppo:q.npz', and
    # 'ppo:[/]p.npz' ended the report in a MarkupError traceback)
    console = _Console(markup=False)
    return console if console.is_terminal else _Console(width=width, markup=False)


def print_summary(summary: dict, console=None) -> None:
    """Print the pair table and the agent table (best rated first) with rich."""
    require("rich", "tournament", "the tournament report")
    from rich.table import Table

    check_summary(summary, "format", "finished_matches", "total_matches", "pairs", "ratings",
                  "agent_stats", *(("last_run",) if "last_run" in summary else ()))
    if console is None:
        console = output_console(120)
    ffa = summary["format"] == "free_for_all"
    pairs = Table(title=f"{summary['format'].replace('_', ' ')}: "
                        f"{summary['finished_matches']}/{summary['total_matches']} matches")
    pairs.add_column("A", overflow="fold")
    pairs.add_column("B", overflow="fold")
    for col in ("matches", "A-B-draw" + (" (ahead)" if ffa else ""), "A win rate", "95% CI"):
        pairs.add_column(col, justify="right", no_wrap=True)
    for p in summary["pairs"]:
        record = f"{p['a_wins']}-{p['b_wins']}-{p['draws']}"
        pairs.add_row(p["a"], p["b"], str(p["matches"]), record, _rate(p["a_win_rate"]),
                      _ci(p["a_win_rate_ci95"]))
    console.print(pairs)

    agents = Table(title="agents, best rated first")
    agents.add_column("agent", overflow="fold")
    for col in ("matches", "win rate", "95% CI", "pts/hand", "rating ± 95%", "ordinal"):
        agents.add_column(col, justify="right", no_wrap=True)
    rated = sorted(summary["ratings"].items(), key=lambda kv: -kv[1]["ordinal"])
    for name, r in rated:
        s = summary["agent_stats"][name]
        pph = "-" if s["points_per_hand"] is None else f"{s['points_per_hand']:.2f}"
        agents.add_row(name, str(s["matches"]), _rate(s["win_rate"]), _ci(s["win_rate_ci95"]), pph,
                       f"{r['mu']:.2f} ± {r['mu'] - r['ci95'][0]:.2f}", f"{r['ordinal']:.2f}")
    console.print(agents)
    last = summary.get("last_run") or {}
    if last.get("played"):
        console.print(f"played {last['played']} matches in {last['seconds']:.1f} s "
                      f"({last['matches_per_second']} matches/s, {last['workers']} worker(s), "
                      f"{last['backend']})")
