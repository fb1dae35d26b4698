"""``GreedyAgent``: the move that scores the most points now.

Ties (the usual case: most moves score nothing) are broken by the core's fixed, documented
rule (:mod:`dominoes_env.core.greedy`, where the order is written once):

1. the most points now (the layout count after the move, when it is a positive multiple of 5);
2. then shed the heaviest tile (most pips: fewer pips left for an opponent's domino award);
3. then a double before a non-double of the same weight (doubles are the hardest to place later);
4. then the lowest action code (so the choice is a pure function of the view).

The agent never draws on its generator: greedy play is deterministic.

>>> from dominoes_env.core import HandState, RuleConfig
>>> hand = HandState.from_tiles(RuleConfig(), leader=0, hands=[
...     [(6, 6), (6, 4), (1, 2), (0, 0), (2, 2), (3, 3), (4, 5)],
...     [(5, 5), (0, 1), (1, 1), (2, 3), (3, 4), (0, 6), (1, 6)]])
>>> str(hand.move_of(GreedyAgent().act(hand.view(0))))  # [6|4] counts 10 and scores 10
'[4|6] lead'
"""

from __future__ import annotations

from dominoes_env.core import HandState, SeatView, count_after, greedy_best, points_for_count
from dominoes_env.core import greedy as core_greedy
from dominoes_env.deprecation import moved_names

from .base import Agent

#: names that moved to the core (:mod:`dominoes_env.core.greedy`): deprecated aliases here for
#: one version
__getattr__ = moved_names(__name__, {"tie_rank": "dominoes_env.core",
                                     "POINT_SCALE": "dominoes_env.core"})


def greedy_choice(view: SeatView) -> int:
    """The greedy action code for ``view`` (see the module docstring for the tie-break rule)."""
    legal = view.legal
    if not legal:
        raise ValueError(f"seat {view.seat} has no legal move: it is not its turn")
    ts = view.rules.tiles
    pips, dbl = ts.pips, ts.is_double
    lead, lead_pips, ends, contrib, arm = (view.lead, view.lead_pips, view.ends, view.contrib,
                                           view.arm)
    return greedy_best(legal, lambda code: points_for_count(
        count_after(code, lead, lead_pips, ends, contrib, arm, pips, dbl)),
        core_greedy.tie_rank(ts.max_pip))


def greedy_move(hand: HandState) -> int:
    """The greedy action code of the seat to play in a full ``hand`` state: the rule of
    :func:`greedy_choice`, read from the state instead of a view."""
    return greedy_best(hand.legal_actions(), hand.points_after,
                       core_greedy.tie_rank(hand.rules.max_pip))


class GreedyAgent(Agent):
    """Plays the move that scores the most points now; ties shed the heaviest tile.

    Deterministic: the seed is accepted for the common interface but never used.
    """

    name = "greedy"

    def act(self, view: SeatView) -> int:
        return greedy_choice(view)
