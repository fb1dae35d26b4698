"""``SearchAgent``: determinized Monte Carlo search (perfect-information Monte Carlo).

For each decision the agent

1. samples deals of the tiles it cannot see, uniformly among those consistent with its view
   (hand sizes, tiles played, values a seat is known to lack; see
   :mod:`dominoes_env.core.sampling`), all of a batch at once (:mod:`agents.deal_batch`);
2. in every sampled deal, plays each distinct legal move and finishes the hand with a fast
   rollout policy (the greedy scorer for every seat, see :mod:`agents.greedy`, or
   epsilon-greedy);
3. scores a rollout as the points its side gains from the move to the end of the hand
   (hand award included) minus the mean gain of the other sides; a rollout in which some side
   reaches the match target is worth ``+target_score`` if that side is ours and
   ``-target_score`` otherwise (so near the end of a match winning it is all that counts).
   With ``value="match"`` a rollout that ends the hand without a winner is worth
   ``target_score * (2p - 1)``, ``p`` the chance of winning the match from the new scores
   (:mod:`agents.equity` with two sides, :mod:`agents.race_equity` with more), instead of its
   point margin;
4. plays the move with the best mean value (ties: the greedy order).

All moves are evaluated on the same sampled deals (common random numbers), moves that lead to
the same position (the same tile on two symmetric ends) are evaluated once, and a decision with
one distinct move costs nothing.

Budget: ``sims`` rollouts per decision in all, shared equally among the distinct moves (at
least ``min_per_move`` each); or ``time_ms`` milliseconds per decision (then deals are sampled
until the time is spent, one at a time on the core; when batched, :data:`TIME_CHUNK` deals
first, then batches sized to end as the time runs out, :func:`next_time_chunk`; this depends
on the machine, so it is not reproducible across machines).
Both paths search the same deals: a decision's deals come from a numpy generator seeded from
the agent's.

The rollouts of a decision are played together (``batch=True``, the default): every sampled
deal and every distinct move is one row of an :class:`agents.hand_batch.HandBatch`, and numpy
plays one move in all rows at once. ``batch=False`` plays them one by one on the core
(:class:`GreedyRollout`), the reference the batched rollouts are tested against: with the same
seed both draw the same deals and give every move the same values (``epsilon=0``; with
``epsilon > 0`` the random moves come from different generators, so the values agree in
distribution only). Timings: ``docs/results.md`` (``python -m experiments.bench_agents``).

>>> from dominoes_env.core import MatchState
>>> match = MatchState(seed=1)
>>> agent = SearchAgent(seed=0, sims=40)
>>> agent.act(match.view(match.turn)) in match.legal_actions()
True
"""

from __future__ import annotations

import random
import time

import numpy as np

from dominoes_env.core import (
    POINT_SCALE,
    HandState,
    SeatView,
    end_of,
    leader_after,
    match_winner,
    tie_rank,
    tile_of,
    wins_by_play,
)
from dominoes_env.core.validation import as_bool, as_float, as_int

from . import equity
from .base import MAX_SIMS, MAX_TIME_MS, Agent
from .deal_batch import DealBatchSampler
from .hand_batch import HandBatch
from .race_equity import RaceEquity

DEFAULT_SIMS = 300
#: under a ``time_ms`` budget, the batched rollouts' first batch of deals; the later batches are
#: sized by :func:`next_time_chunk`
TIME_CHUNK = 8
#: under a ``time_ms`` budget, the most a batch of deals grows over the one before it
TIME_GROWTH = 4


class SearchAgent(Agent):
    """Determinized Monte Carlo search with greedy rollouts.

    Parameters: ``sims`` (rollouts per decision, default 300), ``time_ms`` (time per decision;
    when given it replaces ``sims``), ``min_per_move`` (the fewest rollouts of each distinct
    move, default 8), ``epsilon`` (chance a rollout move is uniform random instead of greedy,
    default 0), ``value`` (``"margin"``, the default: a hand's end is worth its point margin;
    ``"match"``: the chance of winning the match it leaves, :mod:`agents.equity`; ``"auto"``:
    ``"match"`` where the rules allow it, see :data:`VALUES`), ``batch`` (play the rollouts
    together with numpy, default ``True``; ``False``: one by one on the core).
    """

    name = "search"

    def __init__(self, seed: int | None = None, sims: int = DEFAULT_SIMS,
                 time_ms: float | None = None, min_per_move: int = 8, epsilon: float = 0.0,
                 value: str = "margin", batch: bool = True):
        super().__init__(seed)
        self.sims = as_int("sims", sims, 1, MAX_SIMS)
        self.time_ms = (None if time_ms is None
                        else as_float("time_ms", time_ms, 0, MAX_TIME_MS, low_open=True))
        self.min_per_move = as_int("min_per_move", min_per_move, 1, MAX_SIMS)  # as sims
        self.epsilon = as_float("epsilon", epsilon, 0, 1)
        self.value = check_value(value)
        self.batch = as_bool("batch", batch)
        #: statistics of the last decision: {code: (rollouts, mean value)} of the distinct moves
        self.last_values: dict[int, tuple[int, float]] = {}

    def check_rules(self, rules) -> None:
        """``ValueError`` if ``value="match"`` is asked of rules without a match equity
        (:func:`agents.equity.unsupported`)."""
        check_value(self.value, rules)

    def __repr__(self) -> str:
        budget = f"time_ms={self.time_ms}" if self.time_ms is not None else f"sims={self.sims}"
        return (f"SearchAgent({budget}, epsilon={self.epsilon}, value={self.value!r}, "
                f"batch={self.batch})")

    # -- the decision ----------------------------------------------------------------------
    def act(self, view: SeatView) -> int:
        legal = view.legal
        if not legal:
            raise ValueError(f"seat {view.seat} has no legal move: it is not its turn")
        moves = distinct_moves(view)
        self.last_values = {}
        if len(moves) == 1:
            return moves[0]
        sampler = DealBatchSampler(view)
        rng = self.rng
        deal_rng = np.random.default_rng(rng.getrandbits(64))  # the deals, on both paths
        totals = np.zeros(len(moves))
        runs = 0
        deadline = None
        if self.time_ms is not None:
            last = time.perf_counter()
            deadline = last + self.time_ms / 1000.0
            chunk = TIME_CHUNK if self.batch else 1
            costs: list[tuple[int, float]] = []  # batched: (deals, seconds) of each batch
        else:
            # sims shared among the moves, rounded up to whole deals, but MAX_SIMS at most in
            # all: sims=MAX_SIMS with 7 moves rounded up to 1,000,006 rollouts
            chunk = per_move_cap(max(self.min_per_move, -(-self.sims // len(moves))), len(moves))
        rollout = GreedyRollout(view, self.epsilon, self.value)
        play = self._batched if self.batch else self._one_by_one
        while True:
            # the deals, then per deal the seed of its random rollout moves (the same draws
            # on both paths, so both search the same deals)
            deals = sampler.sample(deal_rng, chunk)
            seeds = [rng.getrandbits(32) for _ in range(chunk)]
            totals += play(view, rollout, deals, seeds, moves)
            runs += chunk
            if deadline is None:
                break
            now = time.perf_counter()
            if now >= deadline:
                break
            if self.batch:  # a batch is cheaper per deal the larger it is: fill the time left
                costs.append((chunk, now - last))
                last = now
                chunk = min(next_time_chunk(costs, deadline - now),
                            per_move_cap(MAX_SIMS, len(moves)))  # rows held at once
                if chunk < 1:  # the smallest batch would end further past the budget than
                    break      # stopping now ends before it
        self.last_values, move = best_mean(view, moves, [runs] * len(moves),
                                           (totals / runs).tolist())
        return move

    def _one_by_one(self, view: SeatView, rollout: GreedyRollout, deals, seeds, moves
                    ) -> np.ndarray:
        """The summed values of every move over ``deals``, each rollout on the core."""
        totals = np.zeros(len(moves))
        for (hands, boneyard), seed in zip(deals.to_list(), seeds, strict=True):
            base = HandState.from_view(view, hands, boneyard)
            for i, code in enumerate(moves):
                totals[i] += rollout(base.copy(), code, seed)
        return totals

    def _batched(self, view: SeatView, rollout: GreedyRollout, deals, seeds, moves
                 ) -> np.ndarray:
        """The summed values of every move over ``deals``, the rollouts played together."""
        batch = HandBatch(view, deals, moves, observe=False)  # greedy rollouts: no observation
        batch.play_firsts()
        batch.rollout_greedy(self.epsilon, np.random.default_rng(seeds)
                             if self.epsilon > 0 else None)
        return rollout.batch_values(batch).reshape(len(deals), len(moves)).sum(axis=0)


def per_move_cap(min_per_move: int, moves: int) -> int:
    """The rollouts of each of ``moves`` distinct moves that ``min_per_move`` (or ``sims``
    shared among them, rounded up) asks for, at most :data:`~agents.base.MAX_SIMS` in all (and
    at least 1): every deal plays every move at once, so ``min_per_move=1000000`` with 7 moves
    held 7,000,000 rollouts (some 8.6 GB) and played for minutes where ``sims`` is bounded to
    about one, and ``sims=1000000`` with 7 moves rounded up to 1,000,006 rollouts.

    >>> per_move_cap(8, 7), per_move_cap(1_000_000, 7)
    (8, 142857)
    """
    return max(1, min(min_per_move, MAX_SIMS // moves))


def next_time_chunk(costs: list[tuple[int, float]], left: float) -> int:
    """How many deals the next batch of rollouts plays so that it ends as ``left`` seconds run
    out, from ``costs``, the ``(deals, seconds)`` of the batches so far; 0 when even one deal
    would end further past the budget than stopping now ends before it.

    A batch costs about ``fixed + per_deal * deals`` (numpy's cost per step is the same for
    few rows as for many). After one batch the two cannot be told apart, so the second is sized
    at that batch's whole cost per deal to half the time left (it ends early); from two batches
    on, the line through the last two that differ in size predicts the next. Times on a busy
    machine are noisy (a batch that waited for the processor looks dear, the next one cheap),
    so a batch is at most :data:`TIME_GROWTH` times the last one: a wrong line costs at most
    that many times the last batch's time.

    >>> next_time_chunk([(8, 0.002)], 0.008)  # 0.25 ms a deal: half of 8 ms
    16
    >>> next_time_chunk([(8, 0.002), (16, 0.003)], 0.005)  # 1 ms fixed, 0.125 ms a deal
    32
    >>> next_time_chunk([(8, 0.002), (16, 0.003)], 0.0005)  # one deal: 1.125 ms > 2 * 0.5 ms
    0
    """
    deals, seconds = costs[-1]
    per_deal, fixed = seconds / deals, 0.0
    for k, t in reversed(costs[:-1]):
        if k != deals:
            slope = (seconds - t) / (deals - k)
            if slope > 0:
                per_deal = slope
                fixed = max(0.0, seconds - slope * deals)
            break
    else:
        return min(int(0.5 * left / per_deal), TIME_GROWTH * deals)
    chunk = min(int((left - fixed) / per_deal), TIME_GROWTH * deals)
    if chunk >= 1:
        return chunk
    return 1 if fixed + per_deal <= 2 * left else 0


def best_mean(view: SeatView, moves: list[int], counts: list[int], means: list[float],
              among: list[int] | None = None) -> tuple[dict[int, tuple[int, float]], int]:
    """``({code: (rollouts, mean value)}, the move with the best mean)`` of the distinct
    ``moves`` with their rollout ``counts`` and mean values; the best is chosen among the
    indices ``among`` (default: all), ties going to the greedy order
    (:func:`dominoes_env.core.tie_rank`). Shared by the search agents."""
    rank = tie_rank(view.rules.max_pip)
    best = max(range(len(moves)) if among is None else among,
               key=lambda i: (means[i], rank[moves[i]]))
    return dict(zip(moves, zip(counts, means, strict=True), strict=True)), moves[best]


#: how a search values the end of a hand: its point margin, the chance of winning the match it
#: leaves (:func:`match_equity`), or ``"auto"``: ``"match"`` with two sides where the rules allow
#: a table (:func:`agents.equity.unsupported`), else ``"margin"``
VALUES = ("margin", "match", "auto")


def check_value(value: str, rules=None) -> str:
    """``value`` if it names a way to value a hand's end (:data:`VALUES`) that ``rules`` (when
    given) allow, else ``ValueError`` (``"match"``: see :func:`agents.equity.check_rules`).

    >>> check_value("match")
    'match'
    >>> check_value("points")
    Traceback (most recent call last):
    ...
    ValueError: value='points' is not allowed; allowed: margin, match, auto
    """
    if value not in VALUES:
        raise ValueError(f"value={value!r} is not allowed; allowed: {', '.join(VALUES)}")
    if value == "match" and rules is not None:
        equity.check_rules(rules)
    return value


def resolve_value(value: str, rules) -> str:
    """``"margin"`` or ``"match"``: what ``value`` means for ``rules`` (``ValueError`` as
    :func:`check_value`).

    >>> from dominoes_env.core import RuleConfig
    >>> resolve_value("auto", RuleConfig()), resolve_value("auto", RuleConfig(num_players=3))
    ('match', 'margin')
    """
    check_value(value, rules)
    if value == "auto":  # the race model of three or more sides is not the default (yet)
        return ("match" if rules.num_sides == 2 and equity.unsupported(rules) is None
                else "margin")
    return value


def match_equity(rules, side: int):
    """The match equity of ``side`` under ``rules``: the table of two sides
    (:class:`agents.equity.MatchEquity`), or the race of three or more
    (:class:`agents.race_equity.RaceEquity`)."""
    if rules.num_sides == 2:
        return equity.MatchEquity(rules, side)
    return RaceEquity(rules, side)


class GreedyRollout:
    """Finishes sampled hands for one decision and values them for the deciding side."""

    __slots__ = ("side_of", "sides", "me", "scores", "target", "win_check", "rank", "eps",
                 "equity")

    def __init__(self, view: SeatView, epsilon: float, value: str = "margin"):
        rules = view.rules
        self.side_of = tuple(rules.side_of(s) for s in range(rules.num_players))
        self.sides = rules.num_sides
        self.me = self.side_of[view.seat]
        self.scores = view.scores
        self.target = view.target_score
        self.win_check = rules.win_check
        self.rank = tie_rank(rules.max_pip)
        self.eps = epsilon
        match = resolve_value(value, rules) == "match"
        self.equity = match_equity(rules, self.me) if match else None

    def __call__(self, h: HandState, code: int, seed: int) -> float:
        """Play ``code`` in ``h``, finish the hand, and return the value for our side."""
        local = random.Random(seed) if self.eps > 0 else None
        gains = [0] * self.sides
        side = self.side_of[h.turn]
        gains[side] += h.apply_unchecked(code)
        winner = side if wins_by_play(self.scores[side] + gains[side], self.target,
                                      self.win_check) else -1
        return self.finish(h, gains, winner, local)

    def finish(self, h: HandState, gains: list[int], winner: int,
               local: random.Random | None = None) -> float:
        """Finish ``h`` from where it stands (greedy, or epsilon-greedy drawing on ``local``)
        and return the value for our side. ``gains``: points each side has gained since the
        decision (updated in place); ``winner``: the side that has already won the match, or -1.
        """
        side_of, scores, target, win_check = self.side_of, self.scores, self.target, self.win_check
        rank, eps = self.rank, self.eps
        points_after = h.points_after
        while h.turn >= 0 and winner < 0:
            legal = h.legal_actions()
            if len(legal) == 1:
                c = legal[0]
            elif local is not None and local.random() < eps:
                c = legal[local.randrange(len(legal))]
            else:  # dominoes_env.core.greedy_best, inlined: the rollouts' hot path
                c, best = legal[0], -1
                for a in legal:
                    k = points_after(a) * POINT_SCALE + rank[a]
                    if k > best:
                        c, best = a, k
            side = side_of[h.turn]
            gains[side] += h.apply_unchecked(c)
            if wins_by_play(scores[side] + gains[side], target, win_check):
                winner = side
        if winner < 0 and h.award is not None:
            gains[h.award[0]] += h.award[1]
            totals = [scores[s] + gains[s] for s in range(self.sides)]
            won = match_winner(totals, target, win_check)
            if won is not None:
                winner = won
        me = self.me
        if winner >= 0:
            return float(target if winner == me else -target)
        if self.equity is not None:
            return self.equity.value([scores[s] + gains[s] for s in range(self.sides)],
                                     self._next_side(h))
        return gains[me] - (sum(gains) - gains[me]) / (self.sides - 1)

    def batch_values(self, batch: HandBatch) -> np.ndarray:
        """The value for our side of every finished row of ``batch`` (each row played to the
        end of its hand or to a side's win, as :meth:`finish` plays one hand), valued as
        :meth:`finish` values it."""
        gains, winner = batch.gains.copy(), batch.winner.copy()
        scores, target, win_check = self.scores, self.target, self.win_check
        settle = np.flatnonzero((winner < 0) & (batch.award_side >= 0))
        if len(settle):
            gains[settle, batch.award_side[settle]] += batch.award_points[settle]
            # match_winner (dominoes_env.core) over the settled rows
            totals = np.asarray(scores) + gains[settle]
            top = totals.max(axis=1)
            won = top >= target
            if win_check != "immediate":  # the top must be alone
                won &= (totals == top[:, None]).sum(axis=1) == 1
            winner[settle[won]] = totals[won].argmax(axis=1)
        me = self.me
        values = np.where(winner == me, float(target), float(-target))
        going = np.flatnonzero(winner < 0)  # the match goes on: the value of the hand's end
        if self.equity is not None:
            leaders = batch.next_leader()[going]
            next_side = np.where(leaders < 0, -1, np.asarray(self.side_of)[leaders])
            values[going] = self.equity.values(np.asarray(scores) + gains[going], next_side)
        else:
            g = gains[going]
            values[going] = g[:, me] - (g.sum(axis=1) - g[:, me]) / (self.sides - 1)
        return values

    def _next_side(self, h: HandState) -> int:
        """The side leading the hand after ``h`` (finished), or -1 if it is drawn at random."""
        leader = leader_after(h)
        return -1 if leader is None else self.side_of[leader]


def distinct_moves(view: SeatView) -> list[int]:
    """The legal codes of ``view`` with moves that lead to the same position kept once.

    Two moves of the same tile are the same position when their ends show the same value, add
    the same to the count, and (for ``left``/``right``) agree on whether the spinner's side there
    is still free; ``up`` and ``down`` are always alike in that way.

    >>> from dominoes_env.core import HandState, RuleConfig
    >>> hand = HandState.from_tiles(RuleConfig(), leader=0, hands=[
    ...     [(6, 6), (6, 3), (1, 2), (0, 0), (2, 2), (3, 3), (4, 5)],
    ...     [(5, 5), (0, 1), (1, 1), (2, 3), (3, 4), (0, 6), (1, 6)]])
    >>> _ = hand.play(((6, 6), None))  # spinner lead: [6|1] left and [6|1] right are the same
    >>> len(hand.view(1).legal), len(distinct_moves(hand.view(1)))
    (4, 2)
    """
    return list(dict.fromkeys(same_position(view).values()))


def same_position(view: SeatView) -> dict[int, int]:
    """Every legal code of ``view`` -> the first legal code that leads to the same position
    (the one :func:`distinct_moves` keeps)."""
    legal = view.legal
    if view.lead < 0 or len(legal) < 2:
        return {code: code for code in legal}
    first: dict = {}
    ends, contrib, free = view.ends, view.contrib, view.spinner_free
    out = {}
    for code in legal:
        e = end_of(code)
        key = (tile_of(code), e < 2, ends[e], contrib[e], free[e] if e < 2 else None)
        out[code] = first.setdefault(key, code)
    return out
