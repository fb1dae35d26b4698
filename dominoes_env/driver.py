"""One match driver and one seeding scheme, for everything that plays whole matches with agents:
tournaments (``agents.arena``), ``python -m dominoes_env play``, behaviour cloning's
demonstrations and the agent benchmark's positions.

Seeding. A match seed decides everything about a match but the agents' own choices:

- the deals are *duplicated* (:class:`DuplicateDealMatch`): the k-th hand is dealt from a
  generator seeded by ``(seed, "deal", k)`` alone, and a leader drawn at random for it comes
  from ``(seed, "leader", k)``, so the same seed gives the same deals to the same seats whoever
  sits there and however the earlier hands went;
- the agent at seat ``s`` is seeded with :func:`agent_seed` ``(seed, s)``, both when it is built
  and when :func:`play_match_with` resets it at the start of the match.

Seeds are derived with :func:`derive_seed` (BLAKE2b of the parts), stable across runs, machines
and Python versions.

The driver (:func:`play_match_with`) resets every agent, calls ``begin_hand(view)`` for every
seat at the start of each hand, asks the seat to play for ``act(view)``, checks the answer is
one of ``view.legal`` and plays it, until the match is over (or ``max_hands`` hands have begun).
Callers add what they need through hooks (timing and error wrapping, recording decisions,
printing events) instead of writing their own loop.

>>> from dominoes_env.core import RuleConfig
>>> class First:
...     def act(self, view):
...         return view.legal[0]
>>> run = play_match_with([First(), First()], RuleConfig(target_score=50), seed=3)
>>> run.match.is_over, run.plays > 0, run.stopped
(True, True, False)
>>> again = play_match_with([First(), First()], RuleConfig(target_score=50), seed=3)
>>> again.match.scores == run.match.scores and again.first_leader == run.first_leader
True
"""

from __future__ import annotations

import hashlib
import json
import operator
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .core import HandState, MatchState, RuleConfig, SeatView
from .core.validation import as_seed as core_as_seed
from .core.validation import short_repr

#: bump when the scheme changes what a seed produces (documented in CHANGELOG.md)
SEEDING_VERSION = 1


def derive_seed(*parts: int | str) -> int:
    """A 63-bit seed derived from ``parts`` (ints and strings), stable across runs, machines and
    Python versions (it hashes a JSON encoding with BLAKE2b, not Python's salted ``hash``).

    >>> derive_seed(1, "deal", 0) == derive_seed(1, "deal", 0) != derive_seed(1, "deal", 1)
    True
    >>> derive_seed(0, "seat", 0) < 2**63
    True
    """
    for p in parts:
        if isinstance(p, bool) or not isinstance(p, int | str):
            raise TypeError(f"seed parts must be ints or strings, got {p!r}")
    data = json.dumps(parts, separators=(",", ":")).encode()
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big") >> 1


def as_seed(seed) -> int:
    """A seed as a Python int: any integer type (numpy's included, e.g. from a pandas column)
    in 0..2**64 - 1 (:data:`~dominoes_env.core.validation.MAX_SEED`), never a bool or a float.

    >>> as_seed(7), type(as_seed(True.__int__()))
    (7, <class 'int'>)
    """
    return core_as_seed(seed)


def agent_seed(match_seed: int, seat: int) -> int:
    """The seed of the agent sitting at ``seat`` in the match seeded ``match_seed``."""
    return derive_seed(match_seed, "seat", seat)


def fresh_seed() -> int:
    """A random match seed (for a caller given none), to show so the match can be replayed."""
    return random.SystemRandom().getrandbits(63)


class DuplicateDealMatch(MatchState):
    """A :class:`MatchState` whose k-th deal, and any leader drawn at random for it, depend only
    on ``(seed, k)``: the same seed replays the same deals whatever happens at the table.

    >>> a, b = DuplicateDealMatch(RuleConfig(), seed=5), DuplicateDealMatch(RuleConfig(), seed=5)
    >>> a.hand.hands == b.hand.hands and a.hand.leader == b.hand.leader
    True
    """

    __slots__ = ("deal_seed",)

    def __init__(self, rules: RuleConfig | None = None, seed: int = 0, **options):
        seed = as_seed(seed)
        self.deal_seed = seed
        super().__init__(rules, seed, **options)

    def _hand_rng(self, what: str, k: int) -> random.Random:
        return random.Random(derive_seed(self.deal_seed, what, k))

    def start_hand(self, leader: int, hand: HandState | None = None) -> HandState:
        if hand is None:
            k = self.hand_number + (self.hand is not None)
            hand = HandState.deal(self.rules, self._hand_rng("deal", k), leader)
        return super().start_hand(leader, hand)

    def next_leader(self) -> int:
        leader = super().next_leader()
        if leader is None:
            rng = self._hand_rng("leader", self.hand_number + 1)
            leader = rng.randrange(self.rules.num_players)
        return leader


@dataclass
class MatchRun:
    """What :func:`play_match_with` played: the finished (or stopped) ``match``, the points each
    seat's plays scored (hand awards are in the match scores, not here), the tiles played, the
    seat that led the first hand, and whether ``max_hands`` stopped the match undecided."""

    match: DuplicateDealMatch
    seat_points: list[int]
    plays: int
    first_leader: int
    stopped: bool


def check_answer(answer: Any, legal: Sequence[int]) -> int:
    """The action code an agent's ``answer`` to a view names, checked against the view's
    ``legal`` codes: an integer (a numpy integer too, as a Python int; never a bool, a float, a
    string or ``None``) that is one of ``legal``. Every caller of an agent's ``act`` checks its
    answer here, so that a bad one is refused in the same words everywhere: the ``ValueError``
    says what the agent returned, worded to follow "agent 'NAME' at seat N".

    >>> check_answer(5, (3, 5))
    5
    >>> check_answer(True, (1,))
    Traceback (most recent call last):
    ...
    ValueError: returned True (bool), not an action code
    >>> check_answer(7, (3, 5))
    Traceback (most recent call last):
    ...
    ValueError: returned 7, not a legal action; legal: [3, 5]
    """
    code = answer
    if type(code) is not int:  # numpy integers are fine; 3.0, True, "3" are not
        try:
            if isinstance(code, bool):
                raise TypeError("a bool is no action code")
            code = operator.index(code)
        except Exception:  # a user object's own __index__ may raise anything
            raise ValueError(f"returned {short_repr(answer)} ({type(answer).__name__}), "
                             "not an action code") from None
    if code not in legal:
        raise ValueError(f"returned {short_repr(answer)}, not a legal action; legal: "
                         f"{list(legal)}")
    return code


def raised_words(err: BaseException, method: str) -> str:
    """How an agent's call that raised ``err`` is told, worded to follow "agent 'NAME' at seat
    N": the error's type and its text on one line, cut to 200 characters (a user agent's
    message may be anything).

    >>> raised_words(RuntimeError("boom\\nat line 2"), "act")
    'raised RuntimeError in act(): boom at line 2'
    """
    try:
        detail = " ".join(str(err).split())
    except Exception:  # an exception whose __str__ fails
        detail = ""
    detail = detail if len(detail) <= 200 else detail[:197] + "..."
    return f"raised {type(err).__name__} in {method}()" + (f": {detail}" if detail else "")


def _plain_call(seat: int, method: str, fn: Callable, *args):
    return fn(*args)


def _value_error(seat: int, message: str) -> Exception:
    return ValueError(f"the agent at seat {seat} {message}")


def _method_of(player: Any, name: str) -> Callable | None:
    """``player``'s method ``name``, or ``None`` if it has none (or it is no callable). Run
    through the ``call`` hook: reading an attribute is agent code too (a property may raise)."""
    method = getattr(player, name, None)
    return method if callable(method) else None


def _act_of(player: Any) -> Callable[[SeatView], Any]:
    """A function that reads ``player.act`` and calls it, so that the ``call`` hook wraps the
    read as well as the call (an ``act`` property that raised on a later read escaped it)."""

    def act(view: SeatView) -> Any:
        return player.act(view)

    return act


def play_match_with(
    players: Sequence[Any],
    rules: RuleConfig,
    seed: int,
    *,
    max_hands: int | None = None,
    call: Callable[..., Any] = _plain_call,
    fault: Callable[[int, str], Exception] = _value_error,
    on_hand: Callable[[MatchState], None] | None = None,
    on_decision: Callable[[int, SeatView, int], None] | None = None,
    on_play: Callable[[int, int, int], None] | None = None,
) -> MatchRun:
    """Play one match seeded ``seed`` (duplicate deals) between ``players`` (Agent protocol
    objects, ``players[s]`` at seat ``s``).

    Hooks: ``call(seat, method_name, fn, *args)`` runs every agent call (``reset``,
    ``begin_hand``, ``act``, and the reads of those attributes: wrap it to time or translate
    errors); ``fault(seat, message)`` builds the error raised for an answer that is not one of
    the legal action codes of the position (as they were before the agent was asked: an agent
    that alters its view changes nothing); ``on_hand(match)``
    runs when a hand begins (before the agents' ``begin_hand``); ``on_decision(seat, view,
    code)`` after a legal answer, before it is played; ``on_play(seat, code, points)`` after.
    """
    n = rules.num_players
    if len(players) != n:
        raise ValueError(f"{len(players)} agent(s) given for num_players={n}; "
                         "give exactly one per seat")
    for seat, player in enumerate(players):
        reset = call(seat, "reset", _method_of, player, "reset")
        if reset is not None:
            call(seat, "reset", reset, agent_seed(seed, seat))
    begin = [call(s, "begin_hand", _method_of, p, "begin_hand") for s, p in enumerate(players)]
    acts = [_act_of(p) for p in players]
    match = DuplicateDealMatch(rules, seed)
    first_leader = match.hand.leader
    seat_points = [0] * n
    plays = 0
    hand_number = -1
    stopped = False
    while not match.is_over:
        if match.hand_number != hand_number:
            hand_number = match.hand_number
            if max_hands is not None and hand_number >= max_hands:
                stopped = True
                break
            if on_hand is not None:
                on_hand(match)
            for s in range(n):
                if begin[s] is not None:
                    call(s, "begin_hand", begin[s], match.view(s))
        seat = match.turn
        view = match.view(seat)
        legal = view.legal  # a tuple: an agent that rebinds view.legal does not change it
        answer = call(seat, "act", acts[seat], view)
        try:
            code = check_answer(answer, legal)
        except ValueError as err:
            raise fault(seat, str(err)) from None
        if on_decision is not None:
            on_decision(seat, view, code)
        points = match.play(code)
        seat_points[seat] += points
        plays += 1
        if on_play is not None:
            on_play(seat, code, points)
    return MatchRun(match, seat_points, plays, first_leader, stopped)
