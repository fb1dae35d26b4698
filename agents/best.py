"""``BestAgent``: the strongest shipped agent for the table (the spec ``best``).

Which agent is strongest depends on the table (:mod:`agents.tables`): the policy-guided search
needs the table's own trained policy, and is ``best`` only where it was measured to beat
``search``. :data:`BEST_BY_TABLE` names, per table, the spec ``best`` stands for, and why:

=====================  =======================================  ==============================
table                  spec                                     why
=====================  =======================================  ==============================
``2p``                 ``guided:policy=ppo,infer=0.5``          won 1,350 of 2,000 matches
                                                                against ``search`` (67.5%,
                                                                Wilson interval 65.4-69.5%;
                                                                docs/results.md); with the
                                                                full likelihood (``infer=1``)
                                                                1,900 of 3,000 (63.3%),
                                                                ``guided`` (its own version 2
                                                                policy) 61.5% of 4,000 and the
                                                                reactive ``ppo`` about half
                                                                (51.2%)
``3p``                 ``guided:infer=0,sims=1800``             won 615 of 1,008 field matches
                                                                against ``search`` (61.0%,
                                                                Wilson interval 58.0-64.0%);
                                                                with 600 rollouts
                                                                (``guided:infer=0``) 560 of
                                                                1,002 (55.9%)
``4p_partnerships``    ``guided:infer=0``                       won 629 of 1,000 matches
                                                                against ``search`` (62.9%,
                                                                Wilson interval 59.9-65.8%),
                                                                where ``guided`` won 29 of 100
``4p_free_for_all``    ``guided:infer=0,sims=3000,policy=ppo``  won 928 of 1,510 field matches
                                                                against ``search`` (61.5%,
                                                                Wilson interval 59.0-63.9%; 622
                                                                of 1,006 and 306 of 504 on two
                                                                sets of deals); on the first,
                                                                1,800 rollouts won 602 (59.8%)
                                                                and ``guided:infer=0`` 578
                                                                (57.5%)
=====================  =======================================  ==============================

Each figure is in docs/results.md (the current ones) or docs/history.md (the comparisons)
with its command (``python -m experiments.tournament --agents
best search --players N ...``). ``policy=ppo`` plays the rollouts and weighs the deals with the
table's shipped ``ppo`` policy (observation version 4) instead of ``guided``'s own version 2
one: on the same 2,000 deals it won 1,271 where ``guided`` won 1,206. ``infer`` is the power
of the policy's likelihood of the others' plays that weighs each sampled deal: at two players
its square root (``infer=0.5``) won 674 of 1,000 deals where the full likelihood won 629 (paired:
203 matches won only with the square root, 158 only with the full likelihood, z = 2.37): the
version 4 policy is sure of its reading, and the others are not that policy. ``infer=0``
searches uniform deals as ``search`` samples them and lets the table's policy play the
rollouts. With three and four players the others' plays weighed by the policy's likelihood
(``guided``'s default ``infer=1``; ``infer=0.5`` too at four) lost to ``search``; a likely
reason is that at four players no tile is left to draw, so every play since the start of the
hand is evidence, and the weights concentrate on a few deals while the others (here
``search``) are not the policy.
At three players ``sims=1800`` (three times ``guided``'s 600 rollouts at most) won 315 of the
same 504 deals where 600 rollouts won 271 (paired: z = 3.6). At four without partnerships the
shipped version 4 policy and 1,800 rollouts each added a point or so on the same deals (57.5%
with neither, 58.0% with the rollouts, 58.6% with the policy, 59.8% with both), and 3,000
rollouts two more (61.8%).
``best`` takes 28, 36, 30 and 68 ms a decision on average at two players, three, four in
partnerships and four without (load under 1), 83-276 ms at the 95th percentile (``python -m
experiments.bench_agents best --players 3 --positions 100``; docs/results.md).

Every shipped policy reads the double-six tiles of its table's default rules; with other tiles
(``max_pip=9``, ``max_pip=12``) no policy can play, and ``best`` is :data:`ANY_TILES_SPEC`,
``search``, the strongest agent that reads any tile set (``guided`` and ``ppo`` stop there with
"no shipped policy plays double-9 tiles").

The table is known only once the agent sees it, so the choice is made then: by
:meth:`BestAgent.check_rules` (commands call it before a match starts) or at the first
decision. Every call is passed on to that agent, built with this agent's seed.

>>> from dominoes_env.core import MatchState, RuleConfig
>>> agent = BestAgent(seed=0)
>>> agent.check_rules(RuleConfig(num_players=4, partnerships=False))
>>> agent.spec, type(agent.agent).__name__
('guided:infer=0,sims=3000,policy=ppo', 'GuidedSearchAgent')
>>> agent.check_rules(RuleConfig(num_players=4, partnerships=False, max_pip=9))
>>> agent.spec, type(agent.agent).__name__
('search', 'SearchAgent')
"""

from __future__ import annotations

from dominoes_env.core import RuleConfig, SeatView

from .base import Agent
from .tables import as_table, default_tiles, table_of

#: the spec ``best`` stands for, by table (:data:`agents.tables.TABLES`)
BEST_BY_TABLE = {"2p": "guided:policy=ppo,infer=0.5", "3p": "guided:infer=0,sims=1800",
                 "4p_partnerships": "guided:infer=0",
                 "4p_free_for_all": "guided:infer=0,sims=3000,policy=ppo"}
#: the spec ``best`` stands for where the tiles are not the table's default ones, which every
#: shipped policy reads (``search`` plays any tile set)
ANY_TILES_SPEC = "search"


def best_spec(table) -> str:
    """The spec of the strongest shipped agent at ``table`` (a ``RuleConfig``, a table name,
    or a player count: its default rules, as :func:`agents.tables.as_table`): from
    :data:`BEST_BY_TABLE`, or :data:`ANY_TILES_SPEC` for a ``RuleConfig`` with other tiles
    than its table's default rules (no shipped policy reads them).

    >>> best_spec(RuleConfig(num_players=2)), best_spec("4p_partnerships")
    ('guided:policy=ppo,infer=0.5', 'guided:infer=0')
    """
    if isinstance(table, RuleConfig) and not default_tiles(table):
        return ANY_TILES_SPEC
    return BEST_BY_TABLE[as_table(table)]


class BestAgent(Agent):
    """The agent :func:`best_spec` names for the table, chosen when the table is first seen."""

    name = "best"

    def __init__(self, seed: int | None = None):
        super().__init__(seed)
        self._seed = seed
        #: the spec and agent chosen for the rules (``None`` until they are known)
        self.spec: str | None = None
        self.agent: Agent | None = None
        self._chosen_for: tuple[str, str] | None = None  # (table, spec)

    def __repr__(self) -> str:
        return f"BestAgent({self.agent!r})" if self.agent is not None else "BestAgent(unresolved)"

    def _resolve(self, rules: RuleConfig) -> Agent:
        spec = best_spec(rules)
        # the table too: the same spec at another table reads that table's policy
        chosen_for = (table_of(rules), spec)
        if self.agent is None or self._chosen_for != chosen_for:
            from .specs import make_agent

            self.agent = make_agent(spec, seed=self._seed)
            self.spec, self._chosen_for = spec, chosen_for
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
