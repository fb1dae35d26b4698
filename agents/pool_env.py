"""``PoolEnv``: the single-agent env of self-play training, its opponents drawn from pools.

A :class:`~dominoes_env.single_agent.SingleAgentEnv` whose opponent seats are each an
:class:`~agents.pool.OpponentPool`: at every episode each seat draws, by weight, one of the
fixed agents (agent specs such as ``greedy`` or ``search:sims=16``) or one of the frozen
snapshots of the learner added with :meth:`PoolEnv.add_snapshot` (all of them sharing
``self_weight``). With 4 players in partnerships the learner plays both seats of its side (its
partner is the current policy) and the pools play the other side.
``python -m experiments.train_ppo`` trains in it, its opponents given as ``SPEC=WEIGHT`` pairs
(:func:`opponent_mix`), several of them stepped as one stable-baselines3 ``VecEnv``
(:func:`pool_vec_env`, which alone imports stable-baselines3).

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

import math
import os
import signal
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dominoes_env.core import RuleConfig
from dominoes_env.core.validation import (
    ParameterTypeError,
    as_int,
    as_seed,
    float_text,
    short_repr,
)
from dominoes_env.driver import derive_seed
from dominoes_env.options import split_options
from dominoes_env.single_agent import SingleAgentEnv

from .pool import OpponentPool
from .ppo import PPOAgent
from .specs import make_agent, resolve_spec

__all__ = ["PoolEnv", "opponent_mix", "pool_vec_env"]


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


def opponent_mix(items: Sequence[str]) -> tuple[list[tuple[str, float]], float]:
    """``([(spec, weight), ...], self_weight)``, the ``fixed`` and ``self_weight`` of
    :class:`PoolEnv`, from ``SPEC=WEIGHT`` pairs (train_ppo's ``--opponents``; ``self`` is the
    share of the self-play pool). A ``ValueError`` names what is wrong: a pair that is not
    ``SPEC=WEIGHT`` with a weight of 0 or more, a spec given twice, an unknown spec, no fixed
    agent of weight above 0 (the pool starts empty), or weights that add up past a float.

    >>> opponent_mix(["greedy=0.5", "random=0", "self=0.25"])
    ([('greedy', 0.5)], 0.25)
    """
    fixed, self_weight, seen = [], 0.0, set()
    for item in items:
        spec, sep, weight = item.rpartition("=")
        try:
            w = float_text(weight)
        except ValueError:
            w = -1.0
        if not sep or not spec or not 0 <= w < math.inf:
            raise ValueError(f"opponent {item!r}: write SPEC=WEIGHT, e.g. greedy=0.5")
        if spec in seen:  # a spec given twice is refused
            raise ValueError(f"opponent {spec!r} is given twice; give it once, with its "
                             "whole weight")
        seen.add(spec)
        if spec == "self":
            self_weight += w
        elif w > 0:
            resolve_spec(spec)  # unknown specs fail now, not in a subprocess
            fixed.append((spec, w))
    if not fixed:
        raise ValueError("the opponent mix needs at least one fixed agent (the pool starts "
                         "empty), e.g. greedy=1")
    if not math.isfinite(sum(w for _, w in fixed) + self_weight):  # 1e308 twice: inf
        raise ValueError("the opponent weights add up to more than a float holds; use "
                         "smaller weights (only their ratios matter)")
    return fixed, self_weight


def pool_vec_env(fixed: Sequence[tuple[str, float]], n_envs: int, *, subproc: bool,
                 self_weight: float = 0.0, max_snapshots: int | None = None, seed: int = 0,
                 rules: RuleConfig | None = None, **options: Any):
    """``n_envs`` :class:`PoolEnv` of these arguments (``rank`` 0 to ``n_envs - 1``, each reset
    with ``derive_seed(seed, "env", rank)``) as one stable-baselines3 ``VecEnv``, seeded with
    ``seed`` and monitored (``VecMonitor``): a process each (``SubprocVecEnv``, forked) with
    ``subproc`` and more than one, else all in this process (``DummyVecEnv``). A worker process
    ignores Ctrl-C: it is the parent's to handle."""
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecMonitor

    parent = os.getpid()

    def factory(rank: int):
        def build():
            if os.getpid() != parent:  # a SubprocVecEnv worker: Ctrl-C is the parent's to handle
                signal.signal(signal.SIGINT, signal.SIG_IGN)
            env = PoolEnv(fixed, self_weight=self_weight, max_snapshots=max_snapshots,
                          seed=seed, rank=rank, rules=rules, **options)
            env.reset(seed=derive_seed(seed, "env", rank))
            return env

        return build

    fns = [factory(i) for i in range(n_envs)]
    if n_envs > 1 and subproc:
        vec = SubprocVecEnv(fns, start_method="fork")
    else:  # on 2 cores one process stepping many envs beats the pipes of SubprocVecEnv
        vec = DummyVecEnv(fns)
    vec.seed(seed)
    return VecMonitor(vec)
