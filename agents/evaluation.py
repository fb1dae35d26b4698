"""One policy evaluator for every trainer: how often an agent beats an opponent, with its
Wilson interval and the mean final-score margin, on duplicated deals.

>>> from dominoes_env.core import RuleConfig
>>> res = evaluate("greedy", "random", RuleConfig(target_score=50), matches=4, seed=1)
>>> sorted(res)
['ci_high', 'ci_low', 'margin', 'matches', 'win_rate']
>>> res["matches"], 0 <= res["ci_low"] <= res["win_rate"] <= res["ci_high"] <= 1
(4, True)
>>> res == evaluate("greedy", "random", RuleConfig(target_score=50), matches=4, seed=1)
True

The seeding scheme: deal ``i`` is the match seed ``derive_seed(seed, "eval", opponent, i)``
(:func:`agents.arena.derive_seed`), so every agent evaluated with the same ``seed`` against the
same opponent meets the same deals, and each deal is played in every seating the table's format
gives the agent (:mod:`agents.arena` duplicates the deals: the same seed deals the same tiles to
the same seats whoever sits there), so the luck of the deal cancels.

The win rate means the same at every table: 50% between equals.

- Two sides (2 players; 4 in partnerships): each deal once with the agent holding each side
  (both partners' seats in a partnership) and the opponent the other.
- Free-for-all (3 players; 4 without partnerships): the tournament's two-agent field
  (:func:`agents.tournament.schedule.tables_for`): at 3 players the tables ``(A, A, B)`` and
  ``(A, B, B)``, at 4 ``(A, A, A, B)``, ``(A, A, B, B)`` and ``(A, B, B, B)``, each deal played
  in every rotation of each table (:func:`agents.tournament.schedule.seatings`). The agent's
  share is the share of matches won by one of its seats.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from dominoes_env.cli_support import MAX_MATCHES
from dominoes_env.core import RuleConfig
from dominoes_env.core.validation import as_int, short_repr

from .arena import as_seed, derive_seed, play_match
from .specs import check_spec
from .tournament.schedule import format_of, seatings, tables_for
from .tournament.stats import wilson_interval

__all__ = ["EVAL_OPPONENTS", "evaluate", "evaluation_row"]

#: the opponents of a trainer's evaluation, in the order of its ``eval.csv`` columns
EVAL_OPPONENTS = ("greedy", "random")


def _players(name: str, spec: Any, rules: RuleConfig) -> list:
    """One agent per seat for the argument ``name``, built and checked against ``rules`` once
    (the arena reseeds each of them at every match)."""
    if not isinstance(spec, str):
        raise TypeError(f"{name} must be an agent spec string such as 'greedy' or 'ppo:PATH', "
                        f"got {short_repr(spec)}")
    try:
        return [check_spec(spec, rules) for _ in range(rules.num_players)]
    except ValueError as err:
        raise ValueError(f"{name}: {err}") from None


def evaluate(agent: str, opponent: str, rules: RuleConfig, *, matches: int,
             seed: int) -> dict[str, float]:
    """Play ``agent`` against ``opponent`` (agent specs: ``"ppo:PATH"``, ``"greedy"``, ...,
    see :mod:`agents.specs`) under ``rules`` and return ``win_rate``, its Wilson 95% interval
    ``ci_low`` .. ``ci_high``, ``margin`` (the agent's side's final score minus the best other
    side's, averaged) and ``matches`` (how many were played).

    Deal ``i`` (seed ``derive_seed(seed, "eval", opponent, i)``) is played in every seating of
    the table's format (see the module's docstring): with two sides once with the agent on each
    side in turn (every seat of that side: both partners in a partnership game); free-for-all
    in every rotation of each two-agent table. ``matches`` is rounded down to a whole number of
    deals, at least one deal: 2 sides and ``matches=5`` play 2 deals, 4 matches; 3 players
    (6 seatings a deal) and ``matches=5`` play 1 deal, 6 matches. A match stopped undecided (a
    draw, see :data:`agents.arena.DEFAULT_MAX_HANDS`) counts half a win, as in the tournament
    statistics. ``margin`` is the best final score of the agent's sides minus the best of the
    opponent's.

    >>> evaluate("greedy", "random", RuleConfig(), matches=0, seed=1)
    Traceback (most recent call last):
    ...
    ValueError: matches=0 is out of range; allowed: 1..10000000
    >>> evaluate("greedy", "nonsense", RuleConfig(), matches=2, seed=1)
    Traceback (most recent call last):
    ...
    ValueError: opponent: unknown agent spec 'nonsense'; known names: ...
    """
    if not isinstance(rules, RuleConfig):
        raise TypeError(f"rules must be a RuleConfig, got {short_repr(rules)}")
    matches = as_int("matches", matches, 1, MAX_MATCHES)  # 10**30 played for ever
    seed = as_seed(seed)
    players = _players("agent", agent, rules)
    others = _players("opponent", opponent, rules)
    n = rules.num_players
    wins = margin = 0.0
    played = 0
    per_deal = len(_seatings(rules, 0))
    for i in range(max(1, matches // per_deal)):
        match_seed = derive_seed(seed, "eval", opponent, i)
        for mine in _seatings(rules, i):  # by seat: is it the agent's?
            seats = [players[s] if mine[s] else others[s] for s in range(n)]
            result = play_match(seats, rules, match_seed)
            sides = {rules.side_of(s): mine[s] for s in range(n)}
            ours = max(sc for side, sc in enumerate(result.scores) if sides[side])
            theirs = max(sc for side, sc in enumerate(result.scores) if not sides[side])
            wins += 0.5 if result.winner is None else float(sides[result.winner])
            margin += ours - theirs
            played += 1
    low, high = wilson_interval(wins, played)
    return {"win_rate": wins / played, "ci_low": low, "ci_high": high,
            "margin": margin / played, "matches": played}


def evaluation_row(agent: str, rules: RuleConfig, *, matches: int, seed: int,
                   opponents: Sequence[str] = EVAL_OPPONENTS,
                   on_result: Callable[[str, dict[str, float]], None] | None = None,
                   ) -> dict[str, float]:
    """A trainer's evaluation of ``agent`` (``"ppo:PATH"``: the policy it exported): the
    figures of :func:`evaluate` against each of ``opponents`` in turn (``matches`` matches
    each, on the deals of seed ``derive_seed(seed, "eval")``, ``seed`` being the run's), keyed
    ``{figure}_vs_{opponent}`` and rounded to 4 places: the columns of its ``eval.csv`` after
    ``steps`` and ``wall_s`` (:func:`dominoes_env.cli_support.append_eval_row` appends the
    row). ``on_result(opponent, figures)``, when given, gets each opponent's figures before
    they are rounded (what a TensorBoard log records).

    >>> rules = RuleConfig(target_score=30)
    >>> row = evaluation_row("greedy", rules, matches=2, seed=0)
    >>> list(row)[:3], list(row)[5]
    (['win_rate_vs_greedy', 'ci_low_vs_greedy', 'ci_high_vs_greedy'], 'win_rate_vs_random')
    >>> len(row), row["matches_vs_random"]
    (10, 2)
    >>> full = evaluate("greedy", "random", rules, matches=2, seed=derive_seed(0, "eval"))
    >>> row["ci_low_vs_random"] == round(full["ci_low"], 4)
    True
    """
    row: dict[str, float] = {}
    for opponent in opponents:
        res = evaluate(agent, opponent, rules, matches=matches, seed=derive_seed(seed, "eval"))
        if on_result is not None:
            on_result(opponent, res)
        row.update({f"{k}_vs_{opponent}": round(v, 4) for k, v in res.items()})
    return row


def _seatings(rules: RuleConfig, deal: int) -> list[tuple[bool, ...]]:
    """The seatings deal ``deal`` is played in, each as one flag per seat: the agent's seat?

    >>> _seatings(RuleConfig(), 0)
    [(True, False), (False, True)]
    >>> len(_seatings(RuleConfig(num_players=3), 0)), _seatings(RuleConfig(num_players=3), 0)[:3]
    (6, [(True, True, False), (True, False, True), (False, True, True)])
    """
    if format_of(rules) != "free_for_all":
        return [tuple(rules.side_of(s) == side for s in range(rules.num_players))
                for side in range(rules.num_sides)]
    return [tuple(who == "A" for who in seats)
            for table in tables_for(["A", "B"], rules)
            for seats in seatings(table, rules, deal)]
