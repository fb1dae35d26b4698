"""A history of the hidden tiles that fits a guess of the hands: which tiles each seat was dealt
and which it drew, and when.

A guess of the tiles a seat cannot see (:class:`~dominoes_env.core.sampling.DealSampler`) says
who holds what *now*. To turn it into a whole game history (what OpenSpiel's
``resample_from_infostate`` returns) the tiles each other seat has held must also be split into
its deal and its draws so that the same moves, draws and passes happen: a seat that drew, or
passed, held no tile that could be played then; the tiles it drew before the last of a run were
not playable either, and the last one is the tile it played next (it was its only playable
tile). :func:`refit_hand` finds such a split, or says there is none (the sampler knows only the
pip values each seat lacks *now*, a looser condition, so a few of its guesses have no history).

Each hidden tile may be acquired only after the last time it would have been playable while
its seat had to draw or pass, and before it is played: an interval in time. The deal and the
draws are slots at points in time, so fitting is matching slots to intervals, which taking the
slots in time order, each by the tile whose interval ends first, does whenever it can be done.

>>> import random
>>> from dominoes_env.core import HandState, RuleConfig
>>> hand = HandState.deal(RuleConfig(), random.Random(7), leader=0)
>>> start, codes = hand.copy(), []
>>> while not hand.is_over and len(codes) < 6:
...     codes.append(hand.legal_actions()[0])
...     _ = hand.apply_unchecked(codes[-1])
>>> hand.history[-2:]  # seat 1 drew one tile, the one it then played: only one history fits
[Draw(kind='draw', seat=1, n=1), Play(kind='play', seat=1, code=0, points=0)]
>>> refit_hand(start, codes, 0, hand.hands, random.Random(0)) == (list(start.hands), [0])
True
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Sequence

from .hand import HandState
from .sampling import DealSampler, check_view
from .tiles import iter_bits
from .validation import as_int, check_rng, short_repr
from .view import SeatView

_NEVER = 1 << 30  # the "played" time of a tile still held


def refit_hand(start: HandState, codes: Sequence[int], seat: int, hands_now: Sequence[int],
               rng: random.Random) -> tuple[list[int], list[int]] | None:
    """Starting hands and draws, for a hand that went from ``start`` through the moves
    ``codes``, under which every seat now holds ``hands_now`` (bitmasks; ``seat``'s own as it
    is).

    ``start`` is the hand as it began (dealt, or rebuilt from a view), its boneyard in the order
    the tiles were drawn. Returns ``(hands, drawn)``: every seat's tiles at the start
    (``seat``'s as they were) and the tiles drawn since, in the order drawn (``seat``'s own
    draws as they were), such that the same moves make the same draws and passes happen and
    the hands end as ``hands_now``; ``None`` when no history does that. Ties between fitting
    histories are broken by ``rng``.
    """
    if not isinstance(start, HandState):
        raise TypeError(f"start={short_repr(start)} must be a HandState, not "
                        f"{type(start).__name__}")
    limit = len(start.tile_pips) * 4
    for code in codes:  # once per call, before the replay: 999 ended in IndexError
        if type(code) is not int or not 0 <= code < limit:
            as_int("a code of codes", code, 0, limit - 1)
    probe = start.copy()
    n = probe.n
    if len(hands_now) != n:
        raise ValueError(f"hands_now must give the tiles of all {n} seats, got {len(hands_now)}")
    suit = start.rules.tiles.suit_mask
    history = probe.history
    first = len(history)
    masks: list[int] = []  # per history event from `first`: the tiles playable then
    for code in codes:
        before = len(history)
        probe.apply_unchecked(code)
        masks.extend([probe.open_mask] * (len(history) - before))
    if probe.hands[seat] != hands_now[seat]:
        raise ValueError("hands_now must give the seat's own tiles as they are")
    events = history[first:]
    # per seat: constraint times and masks, draw runs (time, count, fixed last tile), plays
    constraints: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    runs: list[list[tuple[int, int, int]]] = [[] for _ in range(n)]
    played: list[dict[int, int]] = [{} for _ in range(n)]  # per seat: tile -> time played
    for tau, ev in enumerate(events):
        kind, s = ev[0], ev[1]
        if kind == "play":
            played[s][ev[2] >> 2] = tau
        elif kind == "draw":
            constraints[s].append((tau, masks[tau]))
            follows = events[tau + 1] if tau + 1 < len(events) else None
            last = follows[2] >> 2 if follows is not None and follows[0] == "play" else -1
            runs[s].append((tau, ev[2], last))
        else:
            constraints[s].append((tau, masks[tau]))
    turn = probe.turn
    if turn >= 0 and turn != seat and probe.lead >= 0:
        # the seat to play holds a playable tile; if it has just drawn, exactly one: the last
        playable = hands_now[turn] & probe.open_mask
        if not playable:
            return None
        if events and events[-1][0] == "draw" and events[-1][1] == turn:
            if playable & (playable - 1):
                return None
            tau, count, _ = runs[turn][-1]
            runs[turn][-1] = (tau, count, playable.bit_length() - 1)
    hands = list(start.hands)
    slots: dict[int, list[int]] = {}  # (seat, draw time) -> tiles, filled below
    for s in range(n):
        if s == seat:
            continue
        fitted = _fit_seat(s, start, hands_now[s], played[s], constraints[s], runs[s], suit, rng)
        if fitted is None:
            return None
        hands[s], by_time = fitted
        slots.update({(s, t): tiles for t, tiles in by_time.items()})
    # the draws in the order they happened; the seat's own as they were
    drawn: list[int] = []
    for tau, ev in enumerate(events):
        if ev[0] == "draw":
            if ev[1] == seat:
                at = start.drawn + len(drawn)
                drawn.extend(start.boneyard[at:at + ev[2]])
            else:
                drawn.extend(slots[ev[1], tau])
    return hands, drawn


def _fit_seat(s, start, now, played, constraints, runs, suit, rng):
    """Seat ``s``'s starting tiles and, per draw run's time, the tiles it drew (in order), or
    ``None``; ``played``: the times it played its tiles, ``constraints``: (time, tiles it could
    not hold then), ``runs``: (time, tiles drawn, the last one if it was then played or -1)."""
    lacks = 0
    for v in iter_bits(start.known_lacks[s]):
        lacks |= suit[v]
    tiles = {t: _NEVER for t in iter_bits(now)}
    tiles.update(played)  # tile -> the time it leaves the hand
    fixed = {last for _, _, last in runs if last >= 0}
    slots = [-1] * start.hands[s].bit_count()  # the start's slots at time -1
    for tau, count, last in runs:
        slots.extend([tau] * (count - (last >= 0)))
    free = [t for t in tiles if t not in fixed]
    if len(free) != len(slots):
        return None
    # each tile's release: the last time before it is played that it was playable while the
    # seat drew or passed (-1 if it could not have been dealt at the start either)
    release = {}
    for t in free:
        bit, end = 1 << t, tiles[t]
        r = -1 if lacks & bit else -2
        for tau, mask in constraints:
            if tau < end and mask & bit and tau > r:
                r = tau
        release[t] = r
    free.sort(key=lambda t: release[t])
    heap: list[tuple[int, float, int]] = []
    got: dict[int, list[int]] = {}
    i = 0
    for slot in slots:  # in time order
        while i < len(free) and release[free[i]] < slot:
            heapq.heappush(heap, (tiles[free[i]], rng.random(), free[i]))
            i += 1
        if not heap or heap[0][0] <= slot:
            return None
        got.setdefault(slot, []).append(heapq.heappop(heap)[2])
    dealt = 0
    for t in got.pop(-1, []):
        dealt |= 1 << t
    by_time = {}
    for tau, _, last in runs:
        run = got.get(tau, [])
        rng.shuffle(run)
        by_time[tau] = run + ([last] if last >= 0 else [])
    return dealt, by_time


def sample_hand_history(start: HandState, codes: Sequence[int], view: SeatView,
                        rng: random.Random, tries: int = 10_000
                        ) -> tuple[list[int], list[int], list[int]]:
    """A guess of the hidden tiles of the hand ``start`` -> ``codes`` that ``view`` (the hand's
    current view of one seat) allows, with a history that fits it: ``(hands_now, hands,
    drawn)``, the tiles every seat holds now and :func:`refit_hand`'s starting hands and draws.

    The hidden tiles are drawn by :class:`~dominoes_env.core.sampling.DealSampler` (uniform
    among the deals that fit the hand sizes and the values each seat is known to lack) until
    one has a history (rejection sampling: the deal is uniform among those that have one).
    ``RuntimeError`` if ``tries`` guesses have none (the true deal always has one).
    """
    check_view(view)
    check_rng("rng", rng)
    rules = view.rules
    others = {s: n for s, n in enumerate(view.hand_sizes) if s != view.seat}
    lacks = {s: view.known_lacks[s] for s in others}
    if view.turn in others:
        # the seat to play may hold the tile it has just drawn, an exception to what it lacks
        # (refit_hand checks the rest)
        lacks[view.turn] = 0
    sampler = DealSampler(rules.tiles, view.unseen, others, view.boneyard_left, lacks)
    for _ in range(tries):
        by_seat, _ = sampler.sample(rng)
        hands_now = [view.hand if s == view.seat else by_seat[s] for s in range(rules.num_players)]
        fit = refit_hand(start, codes, view.seat, hands_now, rng)
        if fit is not None:
            return hands_now, fit[0], fit[1]
    raise RuntimeError(f"no guess of the hidden tiles fitted the hand's history in {tries} tries")
