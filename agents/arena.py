"""Play one match between agents seated at a table: the unit of work of every tournament.

A match is fully determined by the agents by seat (specs), the rules and the match seed:

>>> r = play_match(["random", "random"], {"target_score": 50}, seed=3)
>>> r == play_match(["random", "random"], {"target_score": 50}, seed=3)
True
>>> r.winner in (0, 1), max(r.scores) >= 50, r.hands >= 1
(True, True, True)

Deals are *duplicated*: the k-th hand of a match is dealt from a generator seeded by
``(seed, k)`` alone, and a leader drawn at random (the first one, or after a blocked hand)
also comes from ``(seed, k)``. So two matches with the same seed see the same sequence of deals
to the same seats whoever sits there and however the earlier hands went; a tournament plays
each seed once more with the agents' seats exchanged, and the luck of the deal cancels.

Agents are built per match with :func:`agents.make_agent` and seeded from the match seed and
their seat (:func:`agent_seed`); ``reset(seed)`` is called once at match start and
``begin_hand(view)`` for every seat at the start of each hand. The loop and the seeding scheme
are :mod:`dominoes_env.driver`'s, shared with ``play``, behaviour cloning and the benchmarks.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from dominoes_env.core import RuleConfig
from dominoes_env.core.validation import as_bool, as_float, as_int, short_repr
from dominoes_env.driver import (  # noqa: F401 (the seeding scheme lives with the driver)
    DuplicateDealMatch,
    agent_seed,
    as_seed,
    derive_seed,
    play_match_with,
    raised_words,
)
from dominoes_env.startup import stop_signal_came

from .decision_times import DecisionTimes
from .specs import make_agent

#: the fields of a match's result that are wall times: they differ from run to run
TIMING_FIELDS = ("duration_s", "decision_times")
#: a match still undecided after this many hands is stopped and counted as a draw
DEFAULT_MAX_HANDS = 1000
#: seconds an agent may think about one move (``--move-timeout``) before its match is stopped;
#: the slowest built-in agent at its default budget needs well under a second
DEFAULT_MOVE_TIMEOUT = 60.0
#: the longest ``move_timeout`` (a day; the programs' ``--move-timeout`` takes the same): a
#: time beyond what the platform's clocks hold would make every agent fail in ``reset()`` with
#: an ``OverflowError``, blamed on the agent
MAX_MOVE_TIMEOUT = 86_400.0


class AgentError(ValueError):
    """An agent failed during a match: it raised (even ``SystemExit``), answered something
    that is not a legal action code, or overran the per-move time limit. The message names the
    agent's spec, its seat, the match seed and the hand."""


class MoveTimeout(BaseException):
    """Raised inside an agent's ``act`` when its time is up (a ``BaseException``, so an
    agent's ``except Exception`` does not swallow it)."""


def _on_alarm(signum, frame):  # pragma: no cover - runs in a signal handler
    raise MoveTimeout


class _MoveClock:
    """The per-move time limit: ``SIGALRM`` after ``seconds`` of wall time, repeated every
    half second until the agent returns (an agent that swallows one still gets the next).
    Only the main thread of a process can take signals; elsewhere the limit is not enforced."""

    def __init__(self, seconds: float | None):
        import threading

        self.seconds = seconds
        self.active = (seconds is not None and hasattr(signal, "setitimer")
                       and threading.current_thread() is threading.main_thread())
        self._previous = None

    def __enter__(self):
        if self.active:
            self._previous = signal.signal(signal.SIGALRM, _on_alarm)
        return self

    def call(self, fn, *args):
        if not self.active:
            return fn(*args)
        signal.setitimer(signal.ITIMER_REAL, self.seconds, 0.5)
        try:
            return fn(*args)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)

    def __exit__(self, *exc):
        if self.active:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self._previous or signal.SIG_DFL)
        return False


@dataclass(frozen=True)
class MatchResult:
    """What one match produced (``to_record()`` gives the JSON-ready dict a tournament stores).

    ``scores`` are per side, ``winner`` is the winning side (``None`` when the match was stopped
    undecided after ``max_hands``: a draw), ``seat_points`` are the points each seat's plays
    scored (hand awards are not in them; they are in ``scores``), ``hands`` counts hands begun
    (a match decided mid-hand counts that hand), ``plays`` counts tiles played,
    ``first_leader`` is the seat that led the first hand; ``duration_s`` and ``decision_times``
    (each seat's ``act`` calls timed, see :mod:`agents.decision_times`) are wall times, left out
    of equality (:data:`TIMING_FIELDS`).
    """

    seats: tuple[str, ...]
    seed: int
    scores: tuple[int, ...]
    winner: int | None
    hands: int
    plays: int
    seat_points: tuple[int, ...]
    first_leader: int = -1  #: the seat that led the first hand
    duration_s: float = field(default=0.0, compare=False)  #: wall time; not part of equality
    #: per seat: its decisions, their wall time and its histogram
    #: (:class:`agents.decision_times.DecisionTimes` as a dict); not part of equality
    decision_times: tuple[dict, ...] = field(default=(), compare=False)
    #: the game record (``play_match(..., keep_record=True)``); not in ``to_record()``
    game: dict | None = field(default=None, compare=False, repr=False)

    def to_record(self) -> dict[str, Any]:
        rec = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "game"}
        for k, v in rec.items():
            if isinstance(v, tuple):
                rec[k] = list(v)
        return rec


def _coerce_rules(rules: RuleConfig | Mapping | None) -> RuleConfig:
    if rules is None:
        return RuleConfig()
    if isinstance(rules, RuleConfig):
        return rules
    if isinstance(rules, Mapping):
        return RuleConfig.from_dict(dict(rules))
    raise TypeError(f"rules must be a RuleConfig, a dict of its fields or None, got "
                    f"{short_repr(rules)}")


def _agent_name(agent: Any) -> str:
    name = getattr(agent, "name", None)
    return name if isinstance(name, str) else type(agent).__name__


def play_match(
    agents: Sequence[Any],
    rules: RuleConfig | Mapping | None = None,
    seed: int = 0,
    *,
    max_hands: int = DEFAULT_MAX_HANDS,
    keep_record: bool = False,
    move_timeout: float | None = None,
) -> MatchResult:
    """Play a match to the target score; ``agents[s]`` sits at seat ``s``.

    ``keep_record=True`` keeps the game record (``docs/rules.md`` "Game records") in the
    result's ``game``: replaying it gives this match's scores and winner.

    ``agents`` holds agent specs (``"greedy"``, ``"search:sims=50"``: built fresh with
    :func:`agents.make_agent` and seeded by :func:`agent_seed`) or agent objects (they are
    ``reset`` with the same derived seed). An agent that raises, returns anything but a legal
    action code, or thinks longer than ``move_timeout`` seconds about one move (``None``: no
    limit) stops the match with an :class:`AgentError` naming its spec, seat and the match seed.

    >>> play_match(["random"], seed=1)
    Traceback (most recent call last):
    ...
    ValueError: 1 agent(s) given for num_players=2; give exactly one per seat
    """
    rules = _coerce_rules(rules)
    seed = as_seed(seed)
    max_hands = as_int("max_hands", max_hands, 1)
    keep_record = as_bool("keep_record", keep_record)  # 1 was taken as True
    n = rules.num_players
    if isinstance(agents, (dict, set)) or not hasattr(agents, "__len__"):
        # None was "object of type 'NoneType' has no len()"; a dict played its keys
        raise TypeError(f"agents must be a list of agent specs or objects, one per seat, not "
                        f"{type(agents).__name__}")
    if isinstance(agents, str) or len(agents) != n:
        count = 1 if isinstance(agents, str) else len(agents)
        raise ValueError(f"{count} agent(s) given for num_players={n}; give exactly one per seat")

    if move_timeout is not None:
        move_timeout = as_float("move_timeout", move_timeout, 0, MAX_MOVE_TIMEOUT,
                                low_open=True)
    start = time.perf_counter()
    players, names = [], []
    for seat, a in enumerate(agents):
        if isinstance(a, str):
            players.append(make_agent(a, seed=agent_seed(seed, seat)))
            names.append(a)
        else:
            if not callable(getattr(a, "act", None)):
                raise TypeError(f"agent at seat {seat} ({short_repr(a)}) has no act(view) method")
            players.append(a)
            names.append(_agent_name(a))
    hand_number = 0

    def fault(seat: int, what: str) -> AgentError:
        return AgentError(f"agent {names[seat]!r} at seat {seat} {what} (match seed {seed}, "
                          f"hand {hand_number})")

    times = [DecisionTimes() for _ in range(n)]

    def call(seat: int, method: str, fn, *args):
        try:
            if method != "act":
                return clock.call(fn, *args)
            began = time.perf_counter()
            code = clock.call(fn, *args)
            times[seat].add(time.perf_counter() - began)
            return code
        except MoveTimeout:
            raise fault(seat, f"took longer than the move time limit of {move_timeout:g} s in "
                              f"{method}()") from None
        except (Exception, SystemExit) as err:
            raise fault(seat, raised_words(err, method)) from None
        except KeyboardInterrupt as err:  # no Ctrl-C came: the agent raised it itself
            if stop_signal_came():
                raise
            raise fault(seat, raised_words(err, method)) from None

    def on_hand(match) -> None:
        nonlocal hand_number
        hand_number = match.hand_number

    with _MoveClock(move_timeout) as clock:
        run = play_match_with(players, rules, seed, max_hands=max_hands, call=call, fault=fault,
                              on_hand=on_hand)
    match = run.match

    game = None
    if keep_record:
        game = match.to_record()
        if match.hand_number >= max_hands:  # stopped: the deal no one played is not part of it
            game["hands"] = game["hands"][:max_hands]
    return MatchResult(
        game=game,
        seats=tuple(names),
        seed=seed,
        scores=tuple(match.scores),
        winner=match.winner,
        hands=min(match.hand_number + 1, max_hands),
        plays=run.plays,
        seat_points=tuple(run.seat_points),
        first_leader=run.first_leader,
        duration_s=round(time.perf_counter() - start, 6),
        decision_times=tuple(t.to_dict() for t in times),
    )
