"""What the other seats' past plays say about their tiles: the likelihood the ``guided`` agent
(:mod:`agents.guided`) weighs its sampled deals by.

A decision of ``guided`` remembers its seat's own decisions in the hand; each with the plays the
other seats made after it (``segments``, newest first, back to the last draw by another seat;
:meth:`agents.guided.GuidedSearchAgent.segments` lists them and
:meth:`~agents.guided.GuidedSearchAgent.play_likelihood` builds the likelihood on them). For a
sampled deal, :func:`replay_others` rebuilds the positions those seats played from, had they
held that deal's tiles, and :class:`PlayLikelihood` gives the log-probability a policy network
assigns to the plays they made there, for a whole batch of deals at once.

>>> import random
>>> from agents.guided import GuidedSearchAgent
>>> from dominoes_env.core import DealSampler
>>> from dominoes_env.core import MatchState
>>> match, agent = MatchState(seed=4), GuidedSearchAgent(seed=0, sims=16)
>>> decisions = 0
>>> while match.turn != 0 or decisions < 3:  # let seat 0 play three times
...     view = match.view(match.turn)
...     decisions += match.turn == 0
...     _ = match.play(agent.act(view) if match.turn == 0 else view.legal[0])
>>> view = match.view(0)
>>> sampler = DealSampler.from_view(view)
>>> deals = [sampler.sample(random.Random(i)) for i in range(5)]
>>> likelihood = agent.play_likelihood(view, deals[0])
>>> len(likelihood.segments) > 0
True
>>> fast, slow = likelihood(deals), likelihood.replayed(deals)
>>> fast.shape, bool(np.allclose(fast, slow, atol=1e-4))
((5,), True)
"""

from __future__ import annotations

import numpy as np

from dominoes_env.core import HandState, SeatView, iter_bits, tile_of
from dominoes_env.core.view import make_view
from dominoes_env.obs import observation_spec
from dominoes_env.obs.v2 import ObservationLayoutV2, encode_hand_state

from .deal_batch import Deals, bits_to_bool
from .hand_batch import HandBatch


def replay_others(view: SeatView, segments, hands, boneyard):
    """The others' past decisions in ``segments``, rebuilt as if they held the tiles of the deal
    ``(hands, boneyard)`` drawn for ``view``: yields ``(state, seat, scores, code)`` just before
    ``seat`` played ``code``, where ``state`` is a full :class:`HandState` and ``scores`` the
    match scores then (by side).

    A seat's hand then is its hand in the deal plus the tiles it has played since, which is
    exact because no segment has a draw by another seat; the boneyard then is the tiles this
    seat has drawn since, then the deal's boneyard."""
    me = view.seat
    n = len(view.hand_sizes)
    side_of = [view.rules.side_of(s) for s in range(n)]
    played_since = [0] * n
    for prev, code, plays in segments:
        played_since[me] |= 1 << tile_of(code)
        for s, c in plays:
            played_since[s] |= 1 << tile_of(c)
        our_drawn = (view.hand | played_since[me]) & ~prev.hand
        then = [prev.hand if s == me else hands[s] | played_since[s] for s in range(n)]
        state = HandState.from_view(prev, then, list(iter_bits(our_drawn)) + list(boneyard))
        scores = list(prev.scores)
        scores[side_of[me]] += state.apply_unchecked(code)
        for s, c in plays:
            if state.turn != s:
                break
            yield state, s, scores, c
            scores[side_of[s]] += state.apply_unchecked(c)


class PlayLikelihood:
    """Per sampled deal, the log-probability under the policy network ``net`` (a
    :class:`~agents.guided.PolicyNet`) of the plays the other seats made in ``segments``
    (decisions with a single legal move count for nothing).

    Built once per decision, from one ``reference`` deal. With the package's observation layout
    (:class:`~dominoes_env.obs.v2.ObservationLayoutV2`), what a seat observed at one of its past
    decisions depends on the deal only through its own hand then: the ``hand`` block, and the
    ``move_points`` of its legal codes (which codes are legal, given the tiles held); the layout,
    the scores, the hand sizes and the known lacks are public. So the decisions are replayed once,
    on the reference deal, keeping per decision the public part of the observation, the codes any
    tile could be played at and their points; a batch of deals then costs one array expression
    and one network product (:meth:`__call__`). With observation versions 3 to 5, whose lookahead
    blocks depend on the whole hand, each decision is rebuilt in every deal at once as a
    :class:`~agents.hand_batch.HandBatch` and encoded by the rollouts' batched encoders
    (:func:`~agents.batch_lookahead.batch_encoder`). Another observation encoder is replayed
    deal by deal (:meth:`replayed`, the definition, which the tests check both paths against).
    """

    def __init__(self, view: SeatView, segments, net, reference):
        self.view, self.segments, self.net = view, segments, net
        # the fast path knows this package's encoder; observation versions 3 to 5 are encoded
        # in batches (:meth:`_prepare_batched`); another encoder is replayed deal by deal
        self.fast = (net.encode is encode_hand_state
                     and isinstance(net.layout, ObservationLayoutV2))
        encoder = getattr(net, "batch_encoder", None)
        self.batched = (not self.fast and encoder is not None
                        and net.encode is observation_spec(encoder.version).encode_state)
        if self.fast:
            self._prepare(*reference)
        elif self.batched:
            self._prepare_batched(*reference)

    def _prepare(self, hands, boneyard) -> None:
        lay, net = self.net.layout, self.net
        unplayed = (1 << lay.num_tiles) - 1
        seats, since, codes, public, points, candidates = [], [], [], [], [], []
        for state, seat, scores, code in replay_others(self.view, self.segments, hands, boneyard):
            held = state.hands[seat]
            # the codes any unplayed tile could be played at now, with the points each scores:
            # the seat's hand swapped for every unplayed tile, read through the core and encoder
            state.hands[seat] = unplayed & ~state.played
            x = net.encode(lay, state, seat, scores, False).copy()
            candidate = np.zeros(lay.num_actions, bool)
            candidate[state.legal_actions()] = True
            state.hands[seat] = held
            points.append(x[lay.move_points].copy())
            x[lay.hand] = 0.0
            x[lay.move_points] = 0.0
            public.append(x)
            candidates.append(candidate)
            seats.append(seat)
            since.append(held & ~hands[seat])  # tiles it has played since, in every deal
            codes.append(code)
        #: per decision: the seat, and the tiles it has played since (the same in every deal)
        self._seats = list(zip(seats, since, strict=True))
        self._since = bits_to_bool(since, lay.num_tiles)
        self._codes = np.array(codes, np.intp)
        if seats:
            self._public, self._points = np.stack(public), np.stack(points)
            self._candidates = np.stack(candidates)

    def _prepare_batched(self, hands, boneyard) -> None:
        """Per decision, what :meth:`_batched` needs to rebuild it in any deal: the view of the
        seat to play then, the code it played, and how a deal's hands give the hands then
        (``(deal_hands & keep) | add``: the others' tiles in the deal plus those they have
        played since, this seat's own as they were); the tiles this seat has drawn since sit
        before the deal's boneyard."""
        view, lay = self.view, self.net.layout
        T, me = lay.num_tiles, view.seat
        n = len(view.hand_sizes)
        self._keep = np.ones((n, 1), bool)  # the others' tiles in the deal, none of this seat's
        self._keep[me] = False
        self._decisions = []
        for state, seat, scores, code in replay_others(view, self.segments, hands, boneyard):
            then = state.hands
            add = [then[s] if s == me else then[s] & ~hands[s] for s in range(n)]
            drawn = state.boneyard[state.drawn:len(state.boneyard) - len(boneyard)]
            seen = make_view(state, seat, tuple(scores), view.target_score, view.hand_number,
                             None)
            self._decisions.append((seen, code, bits_to_bool(add, T), np.array(drawn, np.int64)))

    def _batched(self, deals: Deals) -> np.ndarray:
        """:meth:`__call__` for a policy whose observation the batched encoders write
        (:func:`~agents.batch_lookahead.batch_encoder`): each decision rebuilt in every deal at
        once (:class:`~agents.hand_batch.HandBatch`), encoded, and one network product for all
        of them."""
        net, d = self.net, len(deals)
        if not self._decisions:
            return np.zeros(d)
        encoder, A = net.batch_encoder, net.num_actions
        xs, legal, codes, where = [], [], [], []
        every = np.arange(d)
        for j, (seen, code, add, drawn) in enumerate(self._decisions):
            hands = (deals.hands & self._keep) | add
            bone = np.concatenate([np.broadcast_to(drawn, (d, len(drawn))), deals.bone], axis=1)
            batch = HandBatch(seen, Deals(hands, bone), [code])
            which, moves, counts = batch.moves(every)
            choice = np.bincount(which, minlength=d) > 1  # a single legal move counts nothing
            rows = choice.nonzero()[0]
            if not len(rows):
                continue
            mine = choice.take(which).nonzero()[0]  # the legal moves of those rows
            local = rows.searchsorted(which.take(mine))
            xs.append(encoder.encode(batch, rows, local, moves.take(mine), counts.take(mine)))
            mask = np.zeros((len(rows), A), bool)
            mask.ravel()[local * A + moves.take(mine)] = True
            legal.append(mask)
            codes.append(np.full(len(rows), code, np.intp))
            where.append(rows * len(self._decisions) + j)
        out = np.zeros(d * len(self._decisions))
        if xs:
            logp = _log_softmax_at(net.logits(np.concatenate(xs)), np.concatenate(legal),
                                   np.concatenate(codes))
            out[np.concatenate(where)] = logp
        return out.reshape(d, -1).sum(axis=1)

    def __call__(self, deals) -> np.ndarray:
        """The log-likelihood of each of ``deals`` (a :class:`~agents.deal_batch.Deals`, or a
        list of ``(hands, boneyard)`` pairs), as float64."""
        if len(deals) == 0:
            return np.zeros(0)
        if not (self.fast or self.batched):
            return self.replayed(deals)
        if not isinstance(deals, Deals):
            deals = Deals.from_list(deals, self.net.layout.num_tiles)
        return self._batched(deals) if self.batched else self._public_filled(deals)

    def _public_filled(self, deals: Deals) -> np.ndarray:
        """:meth:`__call__` for observation version 2: the public part of each decision's
        observation filled in with each deal's hands."""
        k, d = len(self._seats), len(deals)
        if k == 0:
            return np.zeros(d)
        lay, net = self.net.layout, self.net
        # per deal and decision: the seat's hand then, its hand in the deal and what it has
        # played since
        seats = [s for s, _extra in self._seats]
        held = (deals.hands[:, seats, :] | self._since).reshape(d * k, lay.num_tiles)
        legal = np.repeat(held, 4, axis=1)
        legal.reshape(d, -1)[...] &= self._candidates.reshape(-1)
        # the rows with a choice; row r is decision r % k of deal r // k, its public part
        # gathered with take (faster than tiling every decision for every deal and indexing)
        rows = np.flatnonzero(legal.sum(axis=1) > 1)
        at = rows % k
        legal = legal.take(rows, axis=0)
        x = self._public.take(at, axis=0)
        x[:, lay.hand] = held.take(rows, axis=0)
        x[:, lay.move_points] = np.where(legal, self._points.take(at, axis=0), 0.0)
        out = np.zeros(d * k)
        out[rows] = _log_softmax_at(net.logits(x), legal, self._codes.take(at))
        return out.reshape(d, k).sum(axis=1)

    def replayed(self, deals) -> np.ndarray:
        """The same log-likelihoods, replaying and encoding every deal's decisions one by one."""
        net = self.net
        rows, codes, legal, x = [], [], [], []
        if isinstance(deals, Deals):
            deals = deals.to_list()
        for i, (hands, bone) in enumerate(deals):
            for state, seat, scores, code in replay_others(self.view, self.segments, hands, bone):
                codes_now = state.legal_actions()
                if len(codes_now) > 1:
                    mask = np.zeros(net.num_actions, bool)
                    mask[codes_now] = True
                    x.append(net.encode(net.layout, state, seat, scores, False))
                    rows.append(i)
                    codes.append(code)
                    legal.append(mask)
        out = np.zeros(len(deals))
        if rows:
            logp = _log_softmax_at(net.logits(np.stack(x)), np.stack(legal), np.array(codes))
            np.add.at(out, rows, logp)
        return out


def _log_softmax_at(logits: np.ndarray, legal: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Per row, the log-probability of ``codes[row]`` under a softmax over the ``legal`` codes."""
    z = np.where(legal, logits, -np.inf).astype(np.float64)
    top = z.max(axis=1, keepdims=True)
    logsum = np.log(np.exp(z - top).sum(axis=1)) + top[:, 0]
    return z[np.arange(len(codes)), codes] - logsum
