"""Decision quality of search agents against an oracle: a far larger search on the same positions.

A search agent's choice is noisy: it picks the best *mean* over a few hundred rollouts. This
measures what that noise costs, without playing matches: an oracle (by default ``guided`` with
3,000 rollouts per decision and no race, five times its budget) decides every position once and
keeps its value of every distinct move (``last_values``); each agent spec then decides the
same positions (``--repeats`` times, with other seeds), and the script reports, over the
positions with more than one distinct move,

- ``regret``: the oracle's value of its best move minus its value of the agent's move, in the
  search's value units (points, or ``target * (2p - 1)`` with match equity), with its standard
  error; the oracle's own noise inflates it for everyone alike, so compare specs, not zero;
- ``agree``: how often the agent picks the oracle's move;
- ``mean ms``: the agent's time per decision over all positions (timed in the same run).

It ranks budgets and settings (``sims``, ``race``) in minutes, with far less noise than
matches; the choice it makes must still be confirmed by a tournament::

    python -m experiments.decision_quality guided guided:race=0,sims=300 --positions 300
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from typing import Any

from agents.arena import AgentError
from agents.positions import SeatAgents, check_distinct, table_positions
from agents.search import distinct_moves, same_position
from dominoes_env.cli_support import (
    OneLineParser,
    add_position_options,
    ascii_int,
    check_fits_in_memory,
    run_command,
    stop_note,
)

#: memory one position takes while it is judged (a seat's view, about 5.7 KB measured with four
#: players, and the oracle's values of its moves), rounded up
BYTES_PER_POSITION = 16384
#: the most --repeats (each decides every position again)
MAX_REPEATS = 1000


def decide(spec: str, views: list, seed: int, *,
           check: Callable[[Any, dict], Any] | None = None
           ) -> tuple[list[tuple[int, dict]], float]:
    """``([(code, last_values) per view], seconds)``: ``spec`` deciding ``views`` in order, one
    agent per seat seeded ``seed + seat`` (as in a match, so ``guided`` remembers its hand).
    ``check(view, last_values)`` runs after each decision, and raises to stop there."""
    agents = SeatAgents(spec, seed)
    out = []
    start = time.perf_counter()
    for view in views:
        code = agents.decide(view)
        values = dict(getattr(agents(view), "last_values", {}))
        if check is not None:
            check(view, values)
        out.append((code, values))
    return out, time.perf_counter() - start


def values_every_move(oracle_spec: str) -> Callable[[Any, dict], None]:
    """The check (:func:`decide`) of an oracle's decisions: a ``ValueError`` at the first
    position with a choice where its ``last_values`` miss a distinct move. Checked as it
    decides, not after: the oracle alone takes minutes with the defaults, and ``greedy``, which
    reports no values, was refused only once it had decided every position."""

    def check(view, values: dict) -> None:
        moves = distinct_moves(view)
        if len(moves) > 1 and set(values) != set(moves):
            raise ValueError(f"the oracle {oracle_spec!r} does not report a value for every "
                             "distinct move (last_values): it cannot judge the choices")

    return check


def score(oracle: list[tuple[int, dict]], choices: list[int], among: list[int]) -> dict:
    """Regret (mean and standard error) and agreement of ``choices`` against ``oracle`` over the
    position indices ``among``.

    >>> oracle = [(5, {5: (10, 3.0), 7: (10, 1.0)}), (2, {2: (10, 0.5), 4: (10, 0.0)})]
    >>> score(oracle, [7, 2], [0, 1])
    {'positions': 2, 'regret': 1.0, 'regret_se': 1.0, 'agree': 0.5}
    """
    regrets, agree = [], 0
    for i, choice in zip(among, choices, strict=True):
        best, values = oracle[i]
        top = max(mean for _, mean in values.values())
        regrets.append(top - values[choice][1])
        agree += choice == best
    n = len(regrets)
    mean = sum(regrets) / n
    se = (math.sqrt(sum((r - mean) ** 2 for r in regrets) / (n - 1) / n) if n > 1 else 0.0)
    return {"positions": n, "regret": mean, "regret_se": se, "agree": agree / n}


def _ticking(views: list, tick: Callable[[], Any] | None) -> Iterator:
    """``views`` one by one, calling ``tick()`` after each has been decided."""
    for view in views:
        yield view
        if tick is not None:
            tick()


def run(specs: list[str], oracle_spec: str, views: list, repeats: int, seed: int, *,
        rows: list[dict] | None = None, tick: Callable[[], Any] | None = None) -> list[dict]:
    """The oracle decides ``views`` once (seed ``seed + 1000``), each spec ``repeats`` times
    (seeds ``seed + 100 * r``); one row per spec, its positions pooled over the repeats. An
    oracle that does not value every distinct move is a ``ValueError`` at the first position
    it leaves one out (:func:`values_every_move`).

    Each row is appended to ``rows`` (a new list when not given) as soon as its spec is judged,
    so a caller stopped by Ctrl-C keeps the finished ones; ``tick()`` is called after each
    decision (a progress bar)."""
    rows = [] if rows is None else rows
    oracle, _ = decide(oracle_spec, _ticking(views, tick), seed + 1000,
                       check=values_every_move(oracle_spec))
    among = [i for i, v in enumerate(views) if len(distinct_moves(v)) > 1]
    for spec in specs:
        choices, seconds = [], 0.0
        for r in range(repeats):
            decisions, s = decide(spec, _ticking(views, tick), seed + 100 * r)
            # a move the oracle searched once for two symmetric ends counts as that one
            choices += [same_position(views[i])[decisions[i][0]] for i in among]
            seconds += s
        row = score(oracle * repeats, choices,
                    [i + len(views) * r for r in range(repeats) for i in among])
        row.update(spec=spec, mean_ms=1000 * seconds / (repeats * len(views)))
        rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> list[dict]:
    """The command: returns the rows it printed; Ctrl-C, SIGTERM or a closed output end it
    with one line saying how far it had come and its exit status (``SystemExit``), after the
    table of the agents judged so far. A progress bar of the decisions shows at a terminal."""
    parser = OneLineParser(prog="python -m experiments.decision_quality",
                           description=__doc__.split("\n\n")[0])
    parser.add_argument("specs", nargs="+", help="agent specs to judge (guided, search:sims=600)")
    parser.add_argument("--oracle", default="guided:sims=3000,race=0",
                        help="the judge: a search spec that reports every move's value "
                             "(guided:sims=3000,race=0)")
    parser.add_argument("--repeats", type=ascii_int, default=4,
                        help=f"times each spec decides every position, other seeds (4; at most "
                             f"{MAX_REPEATS})")
    add_position_options(parser, 300, 5, "seed of the positions")
    args = parser.parse_args(argv)
    check_distinct(parser, args.specs)
    if not 1 <= args.repeats <= MAX_REPEATS:
        parser.error(f"--repeats must be 1..{MAX_REPEATS}, not {args.repeats}")
    try:  # all held at once
        check_fits_in_memory(f"--positions {args.positions}", args.positions, BYTES_PER_POSITION)
    except ValueError as err:
        parser.error(str(err))
    rows: list[dict] = []
    status = run_command(lambda: _run(parser, args, rows), errors=(AgentError,))
    if status:
        raise SystemExit(status)
    return rows


def _run(parser, args, rows: list[dict]) -> int:
    views = table_positions(parser, args, [args.oracle, *args.specs])
    total = len(views) * (1 + len(args.specs) * args.repeats)
    done = [0]  # decisions made so far

    def tick() -> None:
        done[0] += 1
        bar.update()

    try:
        with _progress(total) as bar:
            run(args.specs, args.oracle, views, args.repeats, args.seed, rows=rows, tick=tick)
    except KeyboardInterrupt as stop:  # the agents judged so far, then the runner's one line
        if rows:
            _print_table(args, views, rows,
                         f"interrupted: {len(rows)} of {len(args.specs)} agents judged")
        raise stop_note(stop, _how_far(args, len(views), done[0], len(rows))) from None
    except AgentError:  # one line naming the agent, as a match gives (run_command)
        raise
    except ValueError as err:
        parser.error(str(err))
    _print_table(args, views, rows)
    return 0


def _how_far(args, positions: int, done: int, judged: int) -> str:
    """What a stopped run had done, for its one line: the oracle decides every position before
    any agent is judged, and with the defaults takes minutes, so a Ctrl-C then said only
    "interrupted", as if nothing had run."""
    if done < positions:
        return (f"the oracle had decided {done:,} of {positions:,} positions and no agent was "
                "judged yet (fewer --positions, or a smaller --oracle, end sooner)")
    per_agent = positions * args.repeats
    current = (done - positions) - judged * per_agent
    said = f"{judged} of {len(args.specs)} agents judged" + (" (the table above)" if judged
                                                              else "")
    if judged < len(args.specs) and current > 0:
        said += (f"; {args.specs[judged]} had made {current:,} of its {per_agent:,} "
                 "decisions")
    return said


class _NoBar:
    """What :func:`_progress` gives without tqdm (an optional extra): nothing shown."""

    def __enter__(self) -> _NoBar:
        return self

    def __exit__(self, *exc: Any) -> None:
        pass

    def update(self, n: int = 1) -> None:
        pass


def _progress(total: int):
    """A progress bar of ``total`` decisions on stderr, shown at a terminal only (the oracle
    alone takes minutes with the defaults, which printed nothing until the table)."""
    try:
        from tqdm import tqdm
    except ImportError:
        return _NoBar()
    return tqdm(total=total, unit="decision", disable=None, leave=False, smoothing=0.1)


def _print_table(args, views: list, rows: list[dict], note: str = "") -> None:
    print(f"{len(views)} positions, {rows[0]['positions'] // args.repeats} with a choice, "
          f"{args.players} players; oracle {args.oracle}; {args.repeats} repeats"
          + (f" ({note})" if note else ""))
    print(f"{'agent':30s} {'regret':>8s} {'± se':>7s} {'agree':>7s} {'mean ms':>9s}")
    for r in rows:
        print(f"{r['spec']:30s} {r['regret']:8.3f} {r['regret_se']:7.3f} {r['agree']:7.3f} "
              f"{r['mean_ms']:9.2f}", flush=True)


if __name__ == "__main__":
    main()
