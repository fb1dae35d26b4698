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
same opponent meets the same deals, and each deal is played once with the agent holding each
side in turn (:mod:`agents.arena` duplicates the deals: the same seed deals the same tiles to
the same seats whoever sits there), so the luck of the deal cancels.
"""

from __future__ import annotations

from typing import Any

from dominoes_env.core import RuleConfig
from dominoes_env.core.validation import as_int, short_repr

from .arena import as_seed, derive_seed, play_match
from .specs import check_spec
from .tournament.stats import wilson_interval

__all__ = ["evaluate"]


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

    Deal ``i`` (seed ``derive_seed(seed, "eval", opponent, i)``) is played once with the agent
    on each side in turn (every seat of that side: both partners in a partnership game) and the
    opponent in every other seat. ``matches`` is rounded down to a whole number of deals, one
    match per side, at least one deal: 2 sides and ``matches=5`` play 2 deals, 4 matches; 3
    players and ``matches=5`` play 1 deal, 3 matches. A match stopped undecided (a draw, see
    :data:`agents.arena.DEFAULT_MAX_HANDS`) counts half a win, as in the tournament statistics.

    >>> evaluate("greedy", "random", RuleConfig(), matches=0, seed=1)
    Traceback (most recent call last):
    ...
    ValueError: matches=0 is out of range; allowed: >= 1
    >>> evaluate("greedy", "nonsense", RuleConfig(), matches=2, seed=1)
    Traceback (most recent call last):
    ...
    ValueError: opponent: unknown agent spec 'nonsense'; known names: ...
    """
    if not isinstance(rules, RuleConfig):
        raise TypeError(f"rules must be a RuleConfig, got {short_repr(rules)}")
    matches = as_int("matches", matches, 1)
    seed = as_seed(seed)
    players = _players("agent", agent, rules)
    others = _players("opponent", opponent, rules)
    n, sides = rules.num_players, rules.num_sides
    wins = margin = 0.0
    played = 0
    for i in range(max(1, matches // sides)):
        match_seed = derive_seed(seed, "eval", opponent, i)
        for side in range(sides):
            seats = [players[s] if rules.side_of(s) == side else others[s] for s in range(n)]
            result = play_match(seats, rules, match_seed)
            best_other = max(sc for k, sc in enumerate(result.scores) if k != side)
            wins += 0.5 if result.winner is None else float(result.winner == side)
            margin += result.scores[side] - best_other
            played += 1
    low, high = wilson_interval(wins, played)
    return {"win_rate": wins / played, "ci_low": low, "ci_high": high,
            "margin": margin / played, "matches": played}
