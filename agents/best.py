"""``BestAgent``: the strongest shipped agent for the table's player count (the spec ``best``).

Which agent is strongest depends on the table: the policy-guided search needs a shipped PPO
policy for the player count, and was measured against ``search`` only where this table says.
:data:`BEST_BY_PLAYERS` names, per player count, the spec ``best`` stands for, and why:

=======  ===========  ===================================================================
players  spec         why
=======  ===========  ===================================================================
2        ``guided``   won 1,211 of 2,000 matches against ``search`` (60.6%, Wilson
                      interval 58.4-62.7%; docs/results.md), where the reactive
                      ``ppo`` wins about half (51.2% of 4,000)
3        ``search``   no shipped 3-player policy, so nothing guided can play; ``search``
                      beats greedy and the other shipped agents
4        ``search``   ``guided`` with the 4-player policy won 29 of 100 matches against
                      ``search`` (29%, Wilson interval 21-39%; docs/results.md)
=======  ===========  ===================================================================

The player count is known only once the agent sees its table, so the choice is made then:
by :meth:`BestAgent.check_rules` (commands call it before a match starts) or at the first
decision. Every call is passed on to that agent, built with this agent's seed.

>>> from dominoes_env.core import MatchState, RuleConfig
>>> agent = BestAgent(seed=0)
>>> agent.check_rules(RuleConfig(num_players=3))
>>> agent.spec, type(agent.agent).__name__
('search', 'SearchAgent')
"""

from __future__ import annotations

from dominoes_env.core import RuleConfig, SeatView

from .base import Agent

#: the spec ``best`` stands for, by the table's player count
BEST_BY_PLAYERS = {2: "guided", 3: "search", 4: "search"}


def best_spec(num_players: int) -> str:
    """The spec of the strongest shipped agent for ``num_players`` seats.

    >>> best_spec(2), best_spec(4)
    ('guided', 'search')
    """
    try:
        return BEST_BY_PLAYERS[num_players]
    except KeyError:
        allowed = ", ".join(map(str, sorted(BEST_BY_PLAYERS)))
        raise ValueError(f"no best agent for {num_players!r} players; allowed: {allowed}") from None


class BestAgent(Agent):
    """The agent :func:`best_spec` names for the table, chosen when the table is first seen."""

    name = "best"

    def __init__(self, seed: int | None = None):
        super().__init__(seed)
        self._seed = seed
        #: the spec and agent chosen for the table (``None`` until it is known)
        self.spec: str | None = None
        self.agent: Agent | None = None
        self._players: int | None = None

    def __repr__(self) -> str:
        return f"BestAgent({self.agent!r})" if self.agent is not None else "BestAgent(unresolved)"

    def _resolve(self, rules: RuleConfig) -> Agent:
        n = rules.num_players
        if self.agent is None or self._players != n:
            from .specs import make_agent

            spec = best_spec(n)
            self.agent = make_agent(spec, seed=self._seed)
            self.spec, self._players = spec, n
        return self.agent

    def check_rules(self, rules: RuleConfig) -> None:
        """Choose the agent for ``rules`` and let it check that it can play them."""
        agent = self._resolve(rules)
        check = getattr(agent, "check_rules", None)
        if callable(check):
            check(rules)

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        if seed is not None:
            self._seed = seed
        if self.agent is not None:
            self.agent.reset(seed)

    def begin_hand(self, view: SeatView) -> None:
        self._resolve(view.rules).begin_hand(view)

    def act(self, view: SeatView) -> int:
        return self._resolve(view.rules).act(view)
