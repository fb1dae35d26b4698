"""``PoolEnv``: the single-agent env of self-play training, its opponents drawn from pools.

A :class:`~dominoes_env.single_agent.SingleAgentEnv` whose opponent seats are each an
:class:`~agents.pool.OpponentPool`: at every episode each seat draws, by weight, one of the
fixed agents (agent specs such as ``greedy`` or ``search:sims=16``) or one of the frozen
snapshots of the learner added with :meth:`PoolEnv.add_snapshot` (all of them sharing
``self_weight``). With 4 players in partnerships the learner plays both seats of its side (its
partner is the current policy) and the pools play the other side.
``python -m experiments.train_ppo`` trains in it.

>>> env = PoolEnv([("greedy", 1.0), ("random", 0.5)], self_weight=1.0,
...               rules=RuleConfig(num_players=3, target_score=30), seed=0)
>>> len(env.pools), env.learner
(2, 'seat')
>>> _ = env.reset(seed=0)
>>> sum(env.pool_draws().values())  # one draw per opponent seat
2
>>> PoolEnv([("greedy", 1.0)], rules=RuleConfig(num_players=4)).learner
'side'
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dominoes_env.core import RuleConfig
from dominoes_env.core.validation import ParameterTypeError, as_int, as_seed, short_repr
from dominoes_env.driver import derive_seed
from dominoes_env.options import split_options
from dominoes_env.single_agent import SingleAgentEnv

from .pool import OpponentPool
from .ppo import PPOAgent
from .specs import make_agent

__all__ = ["PoolEnv"]


class PoolEnv(SingleAgentEnv):
    """``SingleAgentEnv`` whose opponent seats each draw from an :class:`OpponentPool` (with
    4 players in partnerships the learner plays both seats of its side).

    ``fixed``: the fixed opponents as ``(agent spec, weight)`` pairs (at least one: the
    self-play pool starts empty), each built once per seat; ``self_weight``: the weight all the
    snapshots share; ``max_snapshots``: how many snapshots a pool keeps, the newest (``None``:
    all); ``seed`` and ``rank`` (this env's index among the parallel ones) seed the pools'
    draws and agents (seat ``k``'s pool: ``derive_seed(seed, "pool", rank, k)``); ``rules``
    and ``options``: the table and the env options, as ``SingleAgentEnv`` takes them
    (``episode="match"``, ``reward_mode=...``). The learner's seat is random each episode.
    """

    def __init__(self, fixed: Sequence[tuple[str, float]], *, self_weight: float = 0.0,
                 max_snapshots: int | None = None, seed: int = 0, rank: int = 0,
                 rules: RuleConfig | None = None, **options: Any):
        if not isinstance(fixed, (list, tuple)) or not all(
                isinstance(pair, (list, tuple)) and len(pair) == 2 and isinstance(pair[0], str)
                for pair in fixed):
            raise ParameterTypeError(f"fixed={short_repr(fixed)} must be a list of (agent spec, "
                                     "weight) pairs such as [('greedy', 0.5)]")
        if not fixed:
            raise ValueError("fixed is empty; give at least one (agent spec, weight) pair (the "
                             "self-play pool starts empty)")
        self.max_snapshots = as_int("max_snapshots", max_snapshots, 0, optional=True)
        seed, rank = as_seed(seed), as_int("rank", rank, 0)
        table, _ = split_options(dict(options), rules)
        # in partnerships the learner plays both seats of its side: the partner is the current
        # policy; the pools play the other side
        learner = "side" if table.partnerships else "seat"
        seats = table.num_players - (2 if table.partnerships else 1)
        pools = []
        for k in range(seats):
            pool_seed = derive_seed(seed, "pool", rank, k)
            members = [(make_agent(spec, seed=derive_seed(pool_seed, spec)), w)
                       for spec, w in fixed]
            pools.append(OpponentPool(members, seed=pool_seed, self_weight=self_weight))
        self.pools = pools
        super().__init__(opponents=pools, seat="random", rules=rules, learner=learner, **options)

    def add_snapshot(self, path: str | os.PathLike) -> int:
        """Load the policy file ``path`` (a snapshot of the learner, played sampling its moves)
        into every pool, named ``self:STEM``; returns the pool size."""
        path = os.fspath(path)
        for k, pool in enumerate(self.pools):
            agent = PPOAgent(path, seed=derive_seed(path, k), deterministic=False)  # diverse
            agent.name = f"self:{Path(path).stem}"
            pool.add_snapshot(agent, self.max_snapshots)
        return len(self.pools[0].snapshots)

    def pool_draws(self) -> dict[str, int]:
        """How often each member was drawn, over every pool (snapshots as ``self:STEM``)."""
        out: dict[str, int] = {}
        for pool in self.pools:
            for key, n in pool.draws.items():
                out[key] = out.get(key, 0) + n
        return out
