"""Benchmark positions: real game states for deciding, timing and comparing agents without
playing matches (``python -m experiments.bench_agents``, ``python -m
experiments.decision_quality``).

>>> from dominoes_env.core import RuleConfig
>>> views = positions(RuleConfig(), 5, seed=1)
>>> len(views), views == positions(RuleConfig(), 5, seed=1)
(5, True)
>>> seats = SeatAgents("random", seed=3)
>>> seats(views[0]) is seats(views[0])  # one agent per seat, built at its first view
True
"""

from __future__ import annotations

from dominoes_env.core import RuleConfig
from dominoes_env.core.validation import MAX_SEED, as_int, as_seed
from dominoes_env.driver import check_answer, derive_seed, play_match_with, raised_words
from dominoes_env.startup import stop_signal_came

from .arena import AgentError
from .greedy import GreedyAgent
from .specs import check_spec, make_agent, repeated

__all__ = ["SeatAgents", "positions", "table_positions"]


def positions(rules: RuleConfig, count: int, seed: int = 0) -> list:
    """``count`` views of the seat to play from greedy-vs-greedy matches, played by the shared
    match driver (match ``g`` is seeded ``derive_seed(seed, "positions", g)``), in the order
    they were played. ``rules`` is a :class:`~dominoes_env.core.RuleConfig`, ``count`` an
    integer >= 0 and ``seed`` a seed; a ``ValueError`` / ``TypeError`` names what is wrong
    otherwise (a count of -1, rules of 1.5)."""
    if not isinstance(rules, RuleConfig):
        raise TypeError(f"rules must be a RuleConfig, not {type(rules).__name__}")
    count, seed = as_int("count", count, 0), as_seed(seed)
    out, game = [], 0
    while len(out) < count:
        players = [GreedyAgent() for _ in range(rules.num_players)]
        play_match_with(players, rules, derive_seed(seed, "positions", game),
                        on_decision=lambda seat, view, code: out.append(view))
        game += 1
    return out[:count]


class SeatAgents:
    """One agent of ``spec`` per seat, seeded ``seed + seat`` and built at that seat's first
    view, as in a match: an agent that remembers the hand so far (``guided``) sees its seat's
    views in order."""

    def __init__(self, spec: str, seed: int):
        self.spec, self.seed = spec, seed
        self.agents: dict = {}

    def __call__(self, view):
        agent = self.agents.get(view.seat)
        if agent is None:
            seed = (self.seed + view.seat) % (MAX_SEED + 1)  # a seed near the top wraps round
            agent = self.agents[view.seat] = make_agent(self.spec, seed=seed)
        return agent

    def decide(self, view) -> int:
        """The action code the seat's agent answers to ``view``, checked as a match checks it
        (:func:`~dominoes_env.driver.check_answer`); an agent that raises or answers anything
        else is an :class:`~agents.arena.AgentError` naming its spec and seat."""
        agent = self(view)
        try:
            answer = agent.act(view)
        except (Exception, SystemExit) as err:
            raise self.failed(view, err) from None
        except KeyboardInterrupt as err:  # no Ctrl-C came: the agent raised it itself
            if stop_signal_came():
                raise
            raise self.failed(view, err) from None
        return self.check(view, answer)

    def failed(self, view, err: BaseException) -> AgentError:
        """The error for the seat's agent whose ``act(view)`` raised ``err``."""
        return self._fault(view, raised_words(err, "act"))

    def check(self, view, answer) -> int:
        """``answer`` as the action code it names, if it is one of ``view``'s legal moves; else
        an :class:`~agents.arena.AgentError` naming the spec and seat."""
        try:
            return check_answer(answer, view.legal)
        except ValueError as err:
            raise self._fault(view, str(err)) from None

    def _fault(self, view, what: str) -> AgentError:
        return AgentError(f"agent {self.spec!r} at seat {view.seat} {what}")


def check_distinct(parser, specs: list[str]) -> None:
    """``parser.error`` (one line, exit status 2) if a spec is given twice: its rows would be
    two of one agent, told apart by nothing."""
    twice = repeated(specs)
    if twice:
        parser.error(f"agent spec(s) given twice: {', '.join(twice)}; list each agent once")


def table_positions(parser, args, specs: list[str]) -> list:
    """The positions that :func:`dominoes_env.cli_support.add_position_options`'s flags ask
    for (``args.players``, ``args.partnerships``, ``args.positions``, ``args.seed``), once
    :func:`check_table_args` has checked them."""
    return positions(check_table_args(parser, args, specs), args.positions, args.seed)


def check_table_args(parser, args, specs: list[str]) -> RuleConfig:
    """The rules of the table :func:`dominoes_env.cli_support.add_position_options`'s flags
    name, once every spec is known to play it; a bad count, table or spec is
    ``parser.error`` (one line, exit status 2), before the program prints or does anything."""
    if args.positions < 1:
        parser.error(f"--positions must be >= 1, not {args.positions}")
    try:
        rules = RuleConfig(num_players=args.players,
                           partnerships=getattr(args, "partnerships", None))
    except ValueError as err:
        parser.error(str(err))
    for spec in specs:  # every spec can play this table, before any work
        try:
            check_spec(spec, rules)
        except ValueError as err:
            parser.error(str(err))
    return rules
