"""``GuidedSearchAgent``: determinized Monte Carlo search whose guesses of the hidden tiles
are weighed by the shipped PPO policy (the spec ``guided``).

The ``search`` agent (:mod:`agents.search`) samples the tiles it cannot see uniformly among the
deals that fit what it has seen: hand sizes, tiles played, and the pip values a seat showed it
lacks by drawing or passing. It learns nothing from *what the others chose to play*. This agent
does, with the policy as a model of how a player plays:

1. it remembers its own decisions in the current hand (its views and its moves);
2. per decision it samples ``pool`` times more deals than it will search
   (:class:`~dominoes_env.core.sampling.DealSampler`'s deals, a batch at once:
   :mod:`agents.deal_batch`), and for each deal rebuilds every play
   the other seats made since this seat's earliest remembered decision after which no other
   seat drew (a seat's hand then is its hand in the deal plus the tiles it has played since,
   exactly; a draw would make it unknown, so the look-back stops there), or since its
   ``lookback``-th latest decision at most: :func:`agents.likelihood.replay_others`;
3. it weighs each deal by the probability the policy gives those plays from those hands, raised
   to the power ``infer`` (a likelihood: deals in which the others would not have played as
   they did count less), and draws the deals to search from the pool in proportion to the
   weights (systematic resampling);
4. on those deals it does what ``search`` does (every distinct legal move, a rollout to the end
   of the hand for each, valued as :class:`agents.search.GreedyRollout` values them, the best
   mean wins), except that a rollout's end of the hand is worth the chance of winning the
   match it leaves (:mod:`agents.equity`; ``value="margin"``: its point margin, as ``search``)
   and that the policy plays the rollouts for every seat: its most probable legal move, the
   rollouts of a batch run in lockstep so each step is one batched network evaluation.
   ``plies=k`` lets the policy play the first ``k`` moves of a rollout and the
   greedy scorer the rest (``plies=0``: greedy rollouts, as ``search``);
5. it races the moves (``race=z``, default 1.5; ``race=0``: off): after each chunk of deals,
   from the ``chunk``-th deal on, a move whose mean trails the best one's by more than ``z``
   standard errors of their paired difference (the same deals) is dropped, its share of the
   budget goes to the moves still in, and the decision ends when one is left. The rollouts go
   where the choice is close instead of on moves already known to be worse.

The network is evaluated in numpy (float32, one batched product per step), with OpenBLAS held to
one thread during the decision (:mod:`agents.blas`). Budget: ``sims`` rollouts per decision
at most (600), shared among the distinct moves still in the race (at least ``min_per_move``
each), or ``time_ms`` per decision;
deals are searched ``chunk`` (32) at a time: the rollouts of a chunk share each network
product (and, with a policy of observation version 2 to 5, are played together with numpy:
:mod:`agents.hand_batch`, ``batch=False`` plays them on the core), and a ``time_ms`` budget is
checked after each chunk. ``policy=PATH`` plays another
exported policy (trained for the table: a policy of another table is refused), and
``policy=ppo`` the policy the spec ``ppo`` plays at the table (``ppo_2p.npz``, ...;
:func:`agents.ppo.shipped_policy_path`; a file named ``ppo`` is ``policy=./ppo``); without it
:func:`guided_policy_path` names the table's own: ``ppo_2p_obs2.npz`` with two players,
``ppo_3p_obs2.npz`` with three, ``ppo_4p_partnerships_obs2.npz`` in four-player partnerships
and ``ppo_4p_free_for_all_obs2.npz`` without (the observation-version-2 PPO policies every
``guided`` figure was measured with), else the shipped ``ppo`` policy of the table
(:mod:`agents.tables`).

>>> from dominoes_env.core import MatchState
>>> match = MatchState(seed=1)
>>> agent = GuidedSearchAgent(seed=0, sims=40)
>>> agent.act(match.view(match.turn)) in match.legal_actions()
True
"""

from __future__ import annotations

import functools
import itertools
import math
import time
from pathlib import Path

import numpy as np

from dominoes_env.cli_support import POLICY_NAMES
from dominoes_env.core import DRAW, PLAY, HandState, SeatView, wins_by_play
from dominoes_env.core.validation import as_bool, as_float, as_int, as_path
from dominoes_env.obs.v2 import encode_hand_state
from dominoes_env.policy_format import ACTIVATIONS

from .base import MAX_SIMS, MAX_TIME_MS, Agent
from .batch_lookahead import batch_encoder
from .blas import single_thread
from .deal_batch import DealBatchSampler, Deals
from .hand_batch import HandBatch
from .likelihood import PlayLikelihood
from .ppo import (
    POLICY_DIR,
    PPOAgent,
    check_logits,
    check_shipped_tiles,
    shipped_policy_path,
)
from .search import GreedyRollout, best_mean, check_value, distinct_moves, per_move_cap
from .tables import as_table

#: rollouts per decision at most, and how many standard errors behind the best a move may fall
#: before the race drops it (``python -m experiments.tournament --agents guided search``)
DEFAULT_SIMS = 600
DEFAULT_RACE = 1.5
#: batched, the chunks searched together at most hold about this many rollouts: a decision's
#: first chunk is searched alone, then two, four, ... at once (the race still after each)
AHEAD_ROWS = 512


class PolicyNet:
    """The policy network of a :class:`~agents.ppo.NumpyPolicy` in float32, with the
    observation encoder it reads: what plays the rollouts of :class:`GuidedSearchAgent` and
    what :class:`~agents.likelihood.PlayLikelihood` weighs the deals by
    (:meth:`GuidedSearchAgent.network`). ``encode(layout, state, seat, scores, over)`` is the
    policy's observation encoder and ``layout`` its layout at the rules; ``batch_encoder`` the
    batched rollouts' encoder of its observation version (2 to 5), else ``None``;
    :meth:`logits` the network's output for a batch of observations."""

    def __init__(self, policy, rules):
        self.layers = [(w.astype(np.float32), b.astype(np.float32)) for w, b in policy.layers]
        self.head = (policy.action_w.astype(np.float32), policy.action_b.astype(np.float32))
        self.path = policy.path  # named where its logits are not finite
        self.act = ACTIVATIONS[policy.activation]
        self.size = policy.obs_size
        self.num_actions = policy.num_actions
        self.encode = policy.obs_spec.encode_state
        self.layout = policy.obs_spec.layout(rules)
        if self.encode is encode_hand_state:  # it takes the legal codes the rollout has
            self.encode_turn = functools.partial(encode_hand_state, self.layout)
        else:
            self.encode_turn = self._encode_turn
        #: the batched rollouts' encoder, for the observation versions it twins (2 to 5),
        #: else None
        self.batch_encoder = batch_encoder(rules, policy.obs_spec.version)

    def _encode_turn(self, state, seat, scores, over, out, legal):
        return self.encode(self.layout, state, seat, scores, over, out=out)

    def logits(self, x: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore", invalid="ignore"):
            for w, b in self.layers:
                x = self.act(x @ w + b)
            aw, ab = self.head
            logits = x @ aw + ab
        return check_logits(self.path, logits)


#: ``policy=ppo``: the table's shipped ``ppo`` policy, whatever the table
(TABLE_PPO,) = POLICY_NAMES["guided"]

#: the policy ``guided`` reads by default where it is not the table's shipped ``ppo`` policy,
#: by table (:data:`agents.tables.TABLES`): the one its figures were measured with, kept when a
#: newer ``ppo`` policy is shipped (the observation-version-2 PPO policies)
GUIDED_POLICIES = {"2p": "ppo_2p_obs2.npz", "3p": "ppo_3p_obs2.npz",
                   "4p_partnerships": "ppo_4p_partnerships_obs2.npz",
                   "4p_free_for_all": "ppo_4p_free_for_all_obs2.npz"}


def guided_policy_path(table) -> Path:
    """The policy ``guided`` uses by default at ``table`` (a ``RuleConfig``, a table name, or a
    player count, as :func:`agents.tables.as_table`): its own from :data:`GUIDED_POLICIES` when
    it has one, else the table's shipped ``ppo`` policy; rules with other tiles than the
    table's default are a ``ValueError`` (:func:`agents.ppo.check_shipped_tiles`)."""
    own = GUIDED_POLICIES.get(as_table(table))
    return check_shipped_tiles(table, POLICY_DIR / own) if own else shipped_policy_path(table)


class GuidedSearchAgent(Agent):
    """Determinized search on deals weighed by the policy's likelihood of the others' plays.

    Parameters: ``sims`` (rollouts per decision at most, default 600), ``time_ms`` (time per
    decision; replaces ``sims``), ``policy`` (an exported policy ``.npz``, or ``"ppo"``: the
    table's shipped ``ppo`` policy; default: :func:`guided_policy_path`), ``infer`` (power of
    the likelihood; 0 searches uniform deals like ``search``), ``lookback`` (the others' plays
    after this seat's last ``lookback`` decisions at most are weighed; default: all since
    another seat last drew), ``pool`` (deals sampled per deal
    searched), ``plies`` (policy moves at the start of each rollout, then greedy; default: the
    whole rollout), ``min_per_move``, ``chunk`` (deals per batch, default 32), ``value`` (how a
    rollout's end of the hand is valued; the default ``"auto"``: by the chance of winning the
    match it leaves where the rules allow a table, two sides and a target up to 500, else by its
    point margin; see :data:`agents.search.VALUES`), ``race`` (drop a move once it trails the
    best by more than this many standard errors, default 1.5; 0: search every move to the end of
    the budget), ``batch`` (default ``True``: a chunk's rollouts are played together with numpy,
    :class:`~agents.hand_batch.HandBatch`, where the policy reads observation version 2 to 5,
    which :func:`~agents.batch_lookahead.batch_encoder` encodes in batches; ``False``, or a
    policy of another version: on the core, one move at a time; both give the same values).
    """

    name = "guided"

    def __init__(self, seed: int | None = None, sims: int = DEFAULT_SIMS,
                 time_ms: float | None = None, policy: str | None = None,
                 plies: int | None = None, infer: float = 1.0, pool: int = 3,
                 min_per_move: int = 8, chunk: int = 32, value: str = "auto",
                 race: float = DEFAULT_RACE, batch: bool = True, lookback: int | None = None):
        super().__init__(seed)
        self.sims = as_int("sims", sims, 1, MAX_SIMS)
        self.time_ms = (None if time_ms is None
                        else as_float("time_ms", time_ms, 0, MAX_TIME_MS, low_open=True))
        self.plies = None if plies is None else as_int("plies", plies, 0)
        self.infer = as_float("infer", infer, 0)
        self.lookback = None if lookback is None else as_int("lookback", lookback, 1, MAX_SIMS)
        # each bounded as sims is: a decision must end, and its arrays fit in memory
        self.pool = as_int("pool", pool, 1, MAX_SIMS)
        self.min_per_move = as_int("min_per_move", min_per_move, 1, MAX_SIMS)
        self.chunk = as_int("chunk", chunk, 1, MAX_SIMS)
        if self.pool * self.chunk > MAX_SIMS:  # the deals sampled for a chunk's inference
            raise ValueError(f"pool={self.pool} times chunk={self.chunk} is "
                             f"{self.pool * self.chunk:,} deals a chunk; allowed: at most "
                             f"{MAX_SIMS:,}")
        self.value = check_value(value)
        self.race = as_float("race", race, 0)
        self.batch = as_bool("batch", batch)
        #: the table's shipped ``ppo`` policy (``policy=ppo``) rather than its own
        self.table_ppo = policy == TABLE_PPO
        self.policy_path = (None if policy is None or self.table_ppo
                            else Path(as_path("policy", policy)))
        self._ppo = PPOAgent(self.policy_path)
        self._net: PolicyNet | None = None
        self._rules = None
        #: this seat's views at its decisions so far in the current hand
        self._memory: list[SeatView] = []
        self.last_values: dict[int, tuple[int, float]] = {}

    def __repr__(self) -> str:
        budget = f"time_ms={self.time_ms}" if self.time_ms is not None else f"sims={self.sims}"
        where = ("ppo" if self.table_ppo else "shipped" if self.policy_path is None
                 else repr(str(self.policy_path)))
        return (f"GuidedSearchAgent({budget}, policy={where}, infer={self.infer}, "
                f"lookback={self.lookback}, pool={self.pool}, plies={self.plies}, "
                f"value={self.value!r}, race={self.race}, batch={self.batch})")

    @property
    def policy_agent(self) -> PPOAgent:
        """The ``ppo`` agent whose policy plays the rollouts and weighs the deals (its ``path``
        and ``policy``): the table's once :meth:`check_rules` has seen the rules."""
        return self._ppo

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self._memory = []

    def begin_hand(self, view: SeatView) -> None:
        self._memory = []

    def check_rules(self, rules) -> None:
        """Load the policy for ``rules`` and check it fits them (``ValueError`` otherwise)."""
        if self._net is None or self._rules != rules:
            check_value(self.value, rules)
            if self.policy_path is None:  # the table's, as this agent was measured with it
                own = (shipped_policy_path(rules) if self.table_ppo
                       else guided_policy_path(rules))
                if own.is_file() and self._ppo.path != own:
                    self._ppo = PPOAgent(own)
                elif not own.is_file() and self._ppo.path is not None:
                    self._ppo = PPOAgent()  # the shipped one; it names the missing file
            self._ppo.check_rules(rules)
            self._net = PolicyNet(self._ppo.policy, rules)
            self._rules = rules

    def network(self, rules) -> PolicyNet:
        """The policy network that plays the rollouts and weighs the deals at ``rules``
        (:meth:`check_rules` loads it)."""
        self.check_rules(rules)
        return self._net

    @property
    def memory(self) -> tuple[SeatView, ...]:
        """This seat's views at its decisions so far in the current hand, oldest first (what
        :meth:`act` remembers; :meth:`segments` reads them)."""
        return tuple(self._memory)

    def _remember(self, view: SeatView) -> None:
        """Forget the remembered decisions unless they are of the hand ``view`` is in."""
        if self._memory:
            prev = self._memory[-1]
            n = len(prev.history)
            same = (prev.rules == view.rules and prev.hand_number == view.hand_number
                    and prev.seat == view.seat
                    and n <= len(view.history) and view.history[:n] == prev.history
                    and prev.played & ~view.played == 0
                    and prev.hand & ~(view.hand | view.played) == 0
                    and all(a <= b for a, b in zip(prev.scores, view.scores, strict=True)))
            if not same:
                self._memory = []

    def act(self, view: SeatView) -> int:
        legal = view.legal
        if not legal:
            raise ValueError(f"seat {view.seat} has no legal move: it is not its turn")
        self._remember(view)
        with single_thread():
            code = self._decide(view)
        self._memory.append(view)
        return code

    def _decide(self, view: SeatView) -> int:
        moves = distinct_moves(view)
        self.last_values = {}
        if len(moves) == 1:
            return moves[0]
        net = self.network(view.rules)
        sampler = DealBatchSampler(view)
        rng = self.rng
        deal_rng = np.random.default_rng(rng.getrandbits(64))  # the deals, on both paths
        rollout = GreedyRollout(view, 0.0, self.value)
        deadline = None
        if self.time_ms is not None:
            deadline = time.perf_counter() + self.time_ms / 1000.0
            budget = None
        else:
            # min_per_move's share at most MAX_SIMS in all, as sims is (it ran for ever)
            budget = max(per_move_cap(self.min_per_move, len(moves)) * len(moves), self.sims)
        segments = self.segments(view) if self.infer > 0 else []
        batched = self.batch and net.batch_encoder is not None
        if batched:
            rollouts = functools.partial(self._batched,
                                         end_double=HandBatch.view_end_double(view))
        else:
            rollouts = self._one_by_one
        draw = _DealDraws(view, sampler, deal_rng, rng, segments, net, self.pool, self.infer)
        alive = list(range(len(moves)))  # the moves still searched: they share every deal
        values: list[np.ndarray] = []  # per chunk: (deals, moves), NaN where not searched
        spent = runs = 0
        ahead = 1  # chunks played together (batched): 1, 2, 4, ... while the search goes on

        def chunk_size(spent: int) -> int:
            """The deals of the next chunk: the budget left shared among the moves still in,
            rounded up to whole deals, but never past MAX_SIMS rollouts in all (0: none fits;
            sims=MAX_SIMS with 7 moves rounded its last chunk up to 1,000,006 rollouts)."""
            if budget is None:
                return self.chunk
            share = max(1, -(-(budget - spent) // len(alive)))
            return min(self.chunk, share, (MAX_SIMS - spent) // len(alive))

        done = False
        while not done:
            # the next chunks, sized as the loop below sizes them if the race drops no move;
            # each remembers the generators' states before its deals were drawn
            plan, planned = [], spent
            cap = max(1, AHEAD_ROWS // (self.chunk * len(alive))) if batched else 1
            for _ in range(min(ahead, cap)):
                if budget is not None and planned >= budget and plan:
                    break
                todo = chunk_size(planned)
                if todo < 1:  # MAX_SIMS reached (never the first: the search is not done)
                    break
                state = draw.state()
                plan.append((todo, draw(todo), state))
                planned += todo * len(alive)
            played = list(alive)
            table = rollouts(view, net, rollout, Deals.concat([d for _t, d, _s in plan]),
                             [moves[i] for i in played])
            # the chunks one by one, as if each had been played alone: the race after each;
            # a chunk sized otherwise than the loop now sizes it, or one after the search
            # ends, is dropped and its deals drawn again (the generators as before them)
            start = 0
            for i, (todo, _deals, _state) in enumerate(plan):
                if todo != chunk_size(spent):
                    draw.restore(plan[i][2])
                    break
                block = np.full((todo, len(moves)), np.nan)
                block[:, alive] = table[start:start + todo, [played.index(a) for a in alive]]
                start += todo
                values.append(block)
                spent += todo * len(alive)
                runs += todo
                if self.race > 0 and runs >= max(self.chunk, self.min_per_move, 2):
                    alive = still_in_race(np.concatenate(values)[:, alive], alive, self.race)
                if deadline is not None:
                    done = time.perf_counter() >= deadline or len(alive) == 1
                else:
                    done = spent >= budget or len(alive) == 1 or chunk_size(spent) < 1
                if done:
                    if i + 1 < len(plan):
                        draw.restore(plan[i + 1][2])
                    break
            ahead *= 2
        table = np.concatenate(values)
        counts = (~np.isnan(table)).sum(axis=0)
        means = np.nansum(table, axis=0) / counts
        self.last_values, move = best_mean(view, moves, counts.tolist(), means.tolist(), alive)
        return move

    # -- inference: how likely the others' plays since their last draw are in a deal ----------
    def play_likelihood(self, view: SeatView, reference) -> PlayLikelihood:
        """The likelihood of the others' plays this agent weighs the deals it samples for
        ``view`` by (:class:`~agents.likelihood.PlayLikelihood`, built on the deal
        ``reference``), from the decisions it remembers in ``view``'s hand."""
        return PlayLikelihood(view, self.segments(view), self.network(view.rules), reference)

    def segments(self, view: SeatView) -> list[tuple[SeatView, int, list[tuple[int, int]]]]:
        """The remembered decisions (:attr:`memory`; those of another hand than ``view``'s are
        forgotten first), newest first, back to the last one after which another seat drew
        (and ``lookback`` of them at most): ``(view then, the code this seat played,
        [(seat, code) of the others' plays after it])``, what the inference at ``view`` weighs
        the deals by. The moves are read from the hand's history (what was played, whoever
        chose it)."""
        self._remember(view)
        out = []
        end = len(view.history)
        me = view.seat
        memory = self._memory if self.lookback is None else self._memory[-self.lookback:]
        for prev in reversed(memory):
            events = view.history[len(prev.history):end]
            end = len(prev.history)
            if (not events or events[0][0] != PLAY or events[0][1] != me
                    or any(ev[0] == DRAW and ev[1] != me for ev in events)):
                break
            plays = [(ev[1], ev[2]) for ev in events[1:] if ev[0] == PLAY and ev[1] != me]
            out.append((prev, events[0][2], plays))
        return out

    # -- rollouts --------------------------------------------------------------------------
    def _batched(self, view, net: PolicyNet, rollout: GreedyRollout, deals, moves,
                 end_double=None) -> np.ndarray:
        """Every move of ``moves`` played in every deal and the hand finished, the policy
        playing every seat: the values, one row per deal, one column per move; all rollouts
        played together (:class:`~agents.hand_batch.HandBatch`), as :meth:`_one_by_one` plays
        them one by one."""
        batch = HandBatch(view, deals, moves, end_double)
        batch.play_firsts()
        plies = np.zeros(batch.rows, np.int64)  # policy moves so far, per rollout
        limit = math.inf if self.plies is None else self.plies
        encode = net.batch_encoder.encode
        A = net.num_actions
        while True:
            idx = batch.running()
            if not len(idx):
                break
            which, codes, counts = batch.moves(idx)
            choices = np.bincount(which, minlength=len(idx))
            if self.plies is None:  # the policy plays every choice: a forced move is the first
                pick = choices.cumsum() - choices
                ask = choices > 1
            else:  # forced moves, and after the plies: greedy
                pick = batch.greedy(which, codes, counts)
                ask = (choices > 1) & (plies.take(idx) < limit)  # the policy's turns
            sub = ask.nonzero()[0]
            if len(sub):
                mine = ask.take(which).nonzero()[0]  # the legal moves of those rows
                local, legal = sub.searchsorted(which.take(mine)), codes.take(mine)
                logits = net.logits(encode(batch, idx.take(sub), local, legal,
                                           counts.take(mine)))
                flat = local * A + legal
                masked = np.full(logits.shape, -np.inf, np.float32)
                masked.ravel().put(flat, logits.ravel().take(flat))
                best = masked.argmax(axis=1)  # the first of equals, as the one-by-one path
                pick[sub] = mine[legal == best.take(local)]
                if self.plies is not None:
                    plies[idx.take(sub)] += 1
            batch.play(idx, codes.take(pick), counts.take(pick))
        return rollout.batch_values(batch).reshape(len(deals), len(moves))

    def _one_by_one(self, view, net: PolicyNet, rollout: GreedyRollout, deals, moves
                    ) -> np.ndarray:
        """Every move of ``moves`` played in every deal and the hand finished, the policy
        playing every seat: the values, one row per deal, one column per move; on the core,
        one rollout at a time but the policy's moves of all rollouts in one batch."""
        side_of = rollout.side_of
        scores, target, win_check = view.scores, view.target_score, view.rules.win_check
        encode_turn, num_actions = net.encode_turn, net.num_actions
        n_sides = view.rules.num_sides
        states = []  # [h, gains, winner, move index]
        for hands, boneyard in deals.to_list():
            base = HandState.from_view(view, hands, boneyard)
            for i, code in enumerate(moves):
                h = base.copy()
                gains = [0] * n_sides
                side = side_of[h.turn]
                gains[side] += h.apply_unchecked(code)
                won = side if wins_by_play(scores[side] + gains[side], target, win_check) else -1
                states.append([h, gains, won, i])
        active = states
        for _ in (itertools.count() if self.plies is None else range(self.plies)):
            need = []
            for st in active:
                h = st[0]
                while st[2] < 0 and h.turn >= 0:
                    lg = h.legal_actions()
                    if len(lg) > 1:
                        need.append((st, lg))
                        break
                    side = side_of[h.turn]
                    g = st[1]
                    g[side] += h.apply_unchecked(lg[0])
                    if wins_by_play(scores[side] + g[side], target, win_check):
                        st[2] = side
            if not need:
                break
            x = np.empty((len(need), net.size), np.float32)
            flat = []  # the legal codes of every row, as flat indices into the mask
            for j, (st, lg) in enumerate(need):
                h, g = st[0], st[1]
                now = [scores[s] + g[s] for s in range(n_sides)]
                encode_turn(h, h.turn, now, False, x[j], lg)
                row = j * num_actions
                flat += [row + c for c in lg]
            logits = net.logits(x)
            masked = np.full(logits.shape, -np.inf, np.float32)
            masked.flat[flat] = logits.flat[flat]
            choice = masked.argmax(axis=1).tolist()
            active = []
            for (st, _lg), c in zip(need, choice, strict=True):
                h, g = st[0], st[1]
                side = side_of[h.turn]
                g[side] += h.apply_unchecked(c)
                if wins_by_play(scores[side] + g[side], target, win_check):
                    st[2] = side
                active.append(st)
        values = np.empty(len(states))
        for j, (h, g, won, _i) in enumerate(states):
            values[j] = rollout.finish(h, g, won)
        return values.reshape(len(deals), len(moves))


def still_in_race(values: np.ndarray, alive: list[int], z: float) -> list[int]:
    """The moves of ``alive`` (columns of ``values``, one row per shared deal) not behind the
    best mean by more than ``z`` standard errors of their paired difference: those a
    :class:`GuidedSearchAgent` with ``race=z`` keeps searching.

    >>> values = np.array([[10.0, 9.0], [12.0, 11.0], [8.0, 7.0]])  # 1 behind on every deal
    >>> still_in_race(values, [3, 5], 1.5)
    [3]
    """
    n = len(values)
    means = values.mean(axis=0)
    b = int(means.argmax())
    diff = values[:, [b]] - values
    se = diff.std(axis=0, ddof=1) / math.sqrt(n)
    keep = (diff.mean(axis=0) <= z * se) | (np.arange(len(alive)) == b)
    return [a for a, k in zip(alive, keep, strict=True) if k]


class _DealDraws:
    """A decision's deals, chunk by chunk: ``todo`` uniform deals, or (with ``segments``) drawn
    from ``pool`` times more in proportion to the likelihood of the others' plays raised to
    ``infer``; the generators' states can be saved and restored (a chunk drawn ahead and not
    searched is drawn again)."""

    def __init__(self, view, sampler, deal_rng, rng, segments, net, pool, infer):
        self.view, self.sampler, self.deal_rng, self.rng = view, sampler, deal_rng, rng
        self.segments, self.net, self.pool, self.infer = segments, net, pool, infer
        self.likelihood = None

    def __call__(self, todo: int) -> Deals:
        if not self.segments:
            return self.sampler.sample(self.deal_rng, todo)
        pool = self.sampler.sample(self.deal_rng, todo * self.pool)
        if self.likelihood is None:
            self.likelihood = PlayLikelihood(self.view, self.segments, self.net,
                                             pool.take([0]).to_list()[0])
        return pool.take(_resample(self.likelihood(pool).tolist(), self.infer, todo, self.rng))

    def state(self):
        return self.rng.getstate(), self.deal_rng.bit_generator.state

    def restore(self, state) -> None:
        self.rng.setstate(state[0])
        self.deal_rng.bit_generator.state = state[1]


def _resample(logw, power, k, rng):
    """The positions of ``k`` deals drawn from a pool with probability proportional to
    ``exp(power * logw)`` (systematic resampling: one uniform draw)."""
    top = max(logw)
    w = [math.exp(power * (lw - top)) for lw in logw]
    total = sum(w)
    step = total / k
    u = rng.random() * step
    out, acc, j = [], w[0], 0
    for i in range(k):
        target = u + i * step
        while acc < target and j < len(w) - 1:
            j += 1
            acc += w[j]
        out.append(j)
    return out
