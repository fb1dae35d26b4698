"""Self-play PPO on the JAX game: rollouts and updates inside one jitted function.

Reads top to bottom, CleanRL / PureJaxRL style: the configuration (one dataclass, a ``--flag``
per field), the jitted update (``lax.scan`` rollout of the self-play env, GAE, PPO epochs over
minibatches; data-parallel over the devices: one on a CPU unless ``--devices N``), then the
run. What other programs share is library code in :mod:`dominoes_env.jax`: ``networks``,
``selfplay`` (the learner's seats against its current self, snapshots, greedy, random or a
fixed policy), ``policy_files`` and ``checkpoints``.

    python -m experiments.train_jax --out runs/jax2p              # the from-scratch recipe
    python -m experiments.train_jax --players 4 --out runs/jax4p  # partnerships
    python -m experiments.train_jax --out runs/jax2p --resume runs/jax2p/checkpoint.npz

Every run is seeded and writes into ``--out``: ``config.json``, ``tb/`` (TensorBoard),
``eval.csv`` (win rates with Wilson intervals, :func:`agents.evaluation.evaluate`),
``checkpoint.npz`` (``--resume`` continues it), ``throughput.json`` (this process's wall and CPU
seconds per update, its logging included; the first compiles), and at the end ``policy.npz`` and
``policy.json``, the policy file ``ppo:PATH`` plays (``--ship`` then copies it to the table's
shipped policy, ``agents/policies/ppo_{table}.npz`` of :data:`agents.ppo.POLICY_FILES`, only if
it beats the shipped one against greedy over the same
:data:`~agents.shipping.SHIP_MATCHES` matches: :func:`agents.shipping.ship_if_stronger`; a run
under other rules than the table's default ones is refused before it trains). Episodes are
single hands with ``score_delta`` rewards, or with ``--reward match`` the change of the
learner's chance to win the match (:mod:`agents.equity`'s table for two sides,
:mod:`agents.race_equity`'s race for more), in points.

The wall seconds it records (``wall_s`` in ``eval.csv``, ``policy.json`` and
``checkpoint.npz``) are the run's seconds of training, a resumed run's before included, counted
by :class:`~dominoes_env.cli_support.RunClock` (from when JAX is set up, the networks made and
a resumed checkpoint restored, just before the step-0 evaluation or the first update, whose
compilation counts); ``--time-limit`` counts this process's share of them. A ``--resume``
whose checkpoint is at ``--total-steps`` or past it trains nothing and writes nothing of the
run again but its policy (its wall seconds unchanged), and its last line says so. An update
whose losses or weights are not finite, or whose weights a policy file cannot hold (above
:data:`dominoes_env.policy_format.MAX_WEIGHT`), ends the run before it is saved (one line,
status 1; the last checkpoint kept as it was).

Needs the ``jax`` extra (jax, pgx, optax).
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import math
import os
import shlex
import sys
import time
from collections import namedtuple
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agents.shipping import SHIP_MATCHES, ship_run, shipping_target
from agents.specs import check_spec_path
from dominoes_env.cli_support import (
    MATMUL_DTYPES,
    MAX_JAX_UPDATES,
    MAX_MATCHES,
    RunClock,
    TrainingStopped,
    append_eval_row,
    check_config,
    check_fits_in_memory,
    check_run_folder,
    config_parser,
    divergence_line,
    end_program,
    end_stopped_training,
    keep_numeric_rows,
    nothing_to_train,
    print_error,
    run_command,
    run_of_checkpoint,
    setup_jax,
    shown_path,
    signals_held,
    start_run_folder,
)
from dominoes_env.cli_support import config_field as _f
from dominoes_env.core import RuleConfig
from dominoes_env.core.atomic_files import file_sha256, write_json
from dominoes_env.core.validation import MAX_SEED
from dominoes_env.obs import DEFAULT_VERSION
from dominoes_env.policy_format import PolicyFileError, hidden_sizes

#: where a new run goes without --out
DEFAULT_OUT = "runs/jax"
CRITICS = ("obs", "full")  #: what the value network may see (``--critic``)
#: memory one game of the JAX twin holds, with its opponents' slots, rounded up (an estimate for
#: the memory check: a state is a few hundred bytes of arrays)
BYTES_PER_GAME = 4096
#: the most updates a run may train (the library's :data:`MAX_JAX_UPDATES`: the update counter
#: and Adam's step are int32), so a run needing more (10**11 steps of 16) is refused first
MAX_UPDATES = MAX_JAX_UPDATES
#: the most of any count the jitted update computes with (games, rollout steps, minibatches,
#: epochs, snapshots, updates between snapshots, and the Adam steps of an update): they are
#: int32 there; a larger flag (--snapshot-every 10**12) is an ``error:`` line naming it
MAX_JIT_COUNT = 2**31 - 1
#: what a learner's step is worth (--reward): its side's points, or its chance to win the match
REWARDS = ("points", "match")
#: the largest --reward-scale: a hand's points times it, squared in the value loss, stay far
#: inside float32 (1e38 would train NaN weights, found only at the export)
MAX_REWARD_SCALE = 1000.0
#: the largest --vf-coef: the weighted value loss stays inside float32 (1e300 would overflow it
#: on the cast)
MAX_LOSS_WEIGHT = 1000.0
#: the largest --max-grad-norm: a clip this large is no clip at all for these networks, and
#: stays a float32 (1e300 overflowed it)
MAX_GRAD_NORM = 1e6


# -- configuration -------------------------------------------------------------------------
@dataclass
class Config:
    """Everything a run depends on; the defaults are the from-scratch recipe."""

    players: int = _f(2, "seats at the table: 2, 3 or 4", choices=(2, 3, 4))
    partnerships: bool | None = _f(None, "4 players in two partnerships (default: on with 4)")
    target_score: int = _f(250, "match target of the evaluation matches (training plays hands)")
    total_steps: int = _f(20_000_000, "learner decisions to train for (whole updates, at most "
                                      "2**31 - 1 of them)", low=1)
    num_envs: int = _f(512, "games played in parallel", low=1, high=MAX_JIT_COUNT)
    num_steps: int = _f(32, "rollout length per game and update", low=1, high=MAX_JIT_COUNT)
    num_minibatches: int = _f(8, "minibatches per epoch", low=1, high=MAX_JIT_COUNT)
    update_epochs: int = _f(4, "PPO epochs per update", low=1, high=MAX_JIT_COUNT)
    net: str = _f("256,256", "hidden layer sizes of the policy and of the value network")
    critic: str = _f("obs", "what the value network sees: obs, or full: also the other hands, "
                     "the boneyard and its order (for training only: the policy never does)",
                     choices=CRITICS)
    matmul: str = _f("float32", "what the networks' matrix products read: float32, or "
                                "bfloat16 (inputs rounded to 8 bits of mantissa, sums in "
                                "float32; faster on CPUs with AVX-512 BF16)",
                     choices=MATMUL_DTYPES)
    obs_version: int = _f(DEFAULT_VERSION, "observation version the policy reads: any "
                                           "registered one the JAX game serves")
    lr: float = _f(3e-4, "Adam learning rate, annealed to 0 unless --no-anneal-lr", low=0,
                   high=1)
    anneal_lr: bool = _f(True, "anneal the learning rate linearly to 0")
    gamma: float = _f(1.0, "discount (1: points count the same whenever they come)", low=0,
                      high=1)
    gae_lambda: float = _f(0.95, "GAE lambda", low=0, high=1)
    clip_eps: float = _f(0.2, "PPO clip range", low=0, high=1)
    ent_coef: float = _f(0.01, "entropy bonus", low=0, high=1)
    vf_coef: float = _f(0.5, "value loss weight", low=0, high=MAX_LOSS_WEIGHT)
    max_grad_norm: float = _f(0.5, "global gradient norm clip", low=0, high=MAX_GRAD_NORM)
    reward_scale: float = _f(0.05, "reward per point of hand score difference (1: the points "
                                   "themselves; more overflows float32 in the value loss)",
                             low=0, high=MAX_REWARD_SCALE)
    opp_self: float = _f(0.35, "share of the envs against the current policy", low=0)
    opp_snapshot: float = _f(0.25, "share of the envs against a frozen snapshot", low=0)
    opp_greedy: float = _f(0.35, "share of the envs against greedy", low=0)
    opp_random: float = _f(0.05, "share of the envs against uniform random", low=0)
    opp_policy: str = _f("", "a policy file (tanh) to play too, share --opp-policy-weight",
                         path=True)
    opp_policy_weight: float = _f(0.0, "share of the envs against --opp-policy", low=0)
    match_scores: float = _f(0.0, "share of the hands dealt at random match scores, not 0-0",
                             low=0, high=1)
    reward: str = _f("points", "what a step is worth: points (its side's score difference) or "
                               "match (the change of its chance to win the match, in points: "
                               "the match is worth the target)",
                     choices=REWARDS)
    snapshots: int = _f(8, "frozen snapshots kept (the oldest is replaced)", low=1,
                        high=MAX_JIT_COUNT)
    snapshot_every: int = _f(20, "updates between snapshots", low=1, high=MAX_JIT_COUNT)
    time_limit: float = _f(25.0, "minutes of training (this process's, from when the run is "
                                 "set up) until it stops and exports; 0: none", low=0)
    eval_every: int = _f(2_000_000, "steps between evaluations (0: only at the end)", low=0)
    eval_matches: int = _f(200, "matches per evaluation, against greedy and random", low=1,
                           high=MAX_MATCHES)
    checkpoint_every: int = _f(2_000_000, "steps between checkpoints (and at the end)", low=1)
    devices: int = _f(0, "devices to split the games over; 0: one on a CPU (XLA's CPU "
                         "collectives can hang), the most that split the games on accelerators",
                      low=0)
    seed: int = _f(0, "seed of everything (same seed and devices, same run)", low=0,
                   high=MAX_SEED)
    out: str | None = _f(None, f"output directory (default: {DEFAULT_OUT}; with --resume, the "
                               "checkpoint's own run folder)", path=True)
    resume: str | None = _f(None, "a checkpoint.npz to continue (steps count from its start)",
                            path=True)
    init: str | None = _f(None, "a checkpoint.npz or policy file whose networks a new run starts "
                                "from (same players and --net; a lower observation version "
                                "grows: zero weights for the new inputs)", path=True)
    ship: bool = _f(False, "copy policy.npz to the table's file in agents/policies/ if it "
                           "beats the shipped one against greedy over the same "
                           f"{SHIP_MATCHES} matches (the table's default rules only)")
    progress: bool = _f(True, "show a progress bar")
    overwrite: bool = _f(False, "replace the run that --out holds (its files are removed)")
    print_settings: bool = _f(False, "check the flags as a run does, print the settings a run's "
                                     "marker holds (which a --resume must repeat) as one JSON "
                                     "line and exit: nothing is written, --out is not checked")

    def __post_init__(self) -> None:
        from dominoes_env.jax.policy_files import load_fixed_actor
        from dominoes_env.jax.selfplay import check_obs_version

        check_config(self)  # each field's type and range
        self.rules()  # validates players / partnerships / target_score
        # --ship under rules other than the table's default rules is refused here, before any
        # training: the shipped policy is the one of the default rules (agents.shipping)
        if self.ship:
            try:
                shipping_target(self.rules())
            except ValueError as err:
                raise ValueError(f"--ship: {err}") from None
        for flag, path in (("--resume", self.resume), ("--init", self.init)):
            if path is not None and not path.strip():
                raise ValueError(f"{flag} is empty; name a checkpoint.npz (or leave {flag} out)")
        if self.out is None:  # --resume continues its run where it is, as best_response does
            self.out = run_of_checkpoint(self.resume) if self.resume else DEFAULT_OUT
        check_obs_version(self.obs_version)
        if self.reward == "match":
            from agents.equity import unsupported

            reason = unsupported(self.rules())
            if reason is not None:
                raise ValueError(f"--reward match: {reason}")
        self.hidden()
        self.check_memory()
        if self.devices and (self.num_envs % self.devices
                             or self.minibatch_size % self.devices):
            raise ValueError(f"num_envs={self.num_envs} and the minibatch (num_envs * "
                             f"num_steps / num_minibatches = {self.minibatch_size}) must both "
                             f"split evenly over devices={self.devices}")
        if self.num_updates() > MAX_UPDATES:  # the update counter is an int32 in the update
            raise ValueError(f"total_steps={self.total_steps:,} is {self.num_updates():,} "
                             f"updates of {self.batch:,} steps; at most {MAX_UPDATES:,}: give "
                             "fewer steps or more --num-envs / --num-steps")
        for what, count in (("num_envs * num_steps", self.batch),
                            ("num_minibatches * update_epochs (Adam steps per update)",
                             self.num_minibatches * self.update_epochs)):
            if count > MAX_JIT_COUNT:  # an int32 in the jitted update
                raise ValueError(f"{what} = {count:,}; at most {MAX_JIT_COUNT:,}")
        if self.batch % self.num_minibatches:
            raise ValueError(f"num_envs * num_steps = {self.batch} is not divisible by "
                             f"num_minibatches={self.num_minibatches}")
        if sum(self.opponent_mix().values()) <= 0:
            raise ValueError("the opponent mix (--opp-self/--opp-snapshot/--opp-greedy/"
                             "--opp-random/--opp-policy-weight) needs a positive weight")
        if not math.isfinite(sum(self.opponent_mix().values())):  # 1e308 twice: shares of 0
            raise ValueError("the opponent mix's weights add up to more than a float holds; "
                             "use smaller weights (only their ratios matter)")
        if self.init and self.resume:
            raise ValueError("--init starts a new run and --resume continues one: pass one")
        if self.opp_policy_weight and not self.opp_policy:
            raise ValueError("--opp-policy-weight needs --opp-policy PATH")
        if self.opp_policy:
            try:
                load_fixed_actor(self.opp_policy, self.rules(), self.obs_version)
            except PolicyFileError as err:  # named as --init's problems are
                raise ValueError(f"--opp-policy: {err}") from None
            if not self.opp_policy_weight:  # loaded, and never played
                raise ValueError("--opp-policy plays in the share --opp-policy-weight of the "
                                 "envs, which is 0: give a positive --opp-policy-weight (or "
                                 "leave --opp-policy out)")

    def check_memory(self) -> None:
        """``ValueError`` unless the run fits in this machine's memory, estimated before
        anything starts: the rollout (observations for the policy and the value network, masks
        and scalars, float32, for ``num_envs * num_steps`` decisions), the games, the networks
        (parameters, gradients and Adam's two moments) and the ``snapshots`` frozen policies.

        >>> Config(num_envs=2**30, num_steps=1).check_memory()
        Traceback (most recent call last):
        ...
        dominoes_env.cli_support.errors.RefusedError: this run needs about ... GiB of memory (...
        """
        from dominoes_env.obs import observation_spec

        rules = self.rules()
        obs = observation_spec(self.obs_version).layout(rules).size
        actions = rules.num_tiles * 4
        sizes = [obs, *self.hidden()]
        weights = sum(a * b + b for a, b in zip(sizes, [*sizes[1:], actions], strict=True))
        weights += sum(a * b + b for a, b in zip(sizes, [*sizes[1:], 1], strict=True))
        per_step = 4 * (2 * obs + 2 * actions + 16)
        need = (self.num_envs * self.num_steps * per_step + self.num_envs * BYTES_PER_GAME
                + 4 * 4 * weights + self.snapshots * 4 * weights)
        check_fits_in_memory("this run", need, 1,
                             f"--num-envs {self.num_envs:,} x --num-steps {self.num_steps:,}, "
                             f"--net {self.net} ({weights:,} weights), --snapshots "
                             f"{self.snapshots:,}")

    def matmul_dtype(self):
        """``--matmul`` as the dtype :func:`dominoes_env.jax.networks.mlp` takes."""
        import jax.numpy as jnp

        return jnp.dtype(self.matmul)

    def rules(self) -> RuleConfig:
        return RuleConfig(num_players=self.players, partnerships=self.partnerships,
                          target_score=self.target_score)

    def hidden(self) -> list[int]:
        return hidden_sizes(self.net)

    def opponent_mix(self) -> dict[str, float]:
        """The opponent kinds' shares of the envs (:class:`~dominoes_env.jax.selfplay.SelfPlay`)."""
        return {"self": self.opp_self, "snapshot": self.opp_snapshot, "greedy": self.opp_greedy,
                "random": self.opp_random,
                "policy": self.opp_policy_weight if self.opp_policy else 0.0}

    @property
    def batch(self) -> int:
        return self.num_envs * self.num_steps

    @property
    def minibatch_size(self) -> int:
        return self.batch // self.num_minibatches

    def device_count(self, available: int, cpu: bool = False) -> int:
        """The devices the update runs on: ``devices``, or with 0 one on a CPU (``cpu``) and
        elsewhere the most of the ``available`` that split both the games and each minibatch
        evenly (``ValueError`` if ``devices`` asks for more than there are).

        >>> one_step = {"num_steps": 1, "num_minibatches": 1}
        >>> [Config(num_envs=n, **one_step).device_count(4) for n in (8, 6, 5)]
        [4, 3, 1]
        >>> Config(num_envs=512).device_count(2), Config(num_envs=512).device_count(2, cpu=True)
        (2, 1)
        """
        if self.devices > available:
            raise ValueError(f"devices={self.devices}, but JAX sees {available}")
        if self.devices:
            return self.devices
        if cpu:  # see setup_jax: XLA's CPU collectives can hang
            return 1
        return max(d for d in range(1, available + 1)
                   if self.num_envs % d == 0 and self.minibatch_size % d == 0)

    def num_updates(self) -> int:
        return -(-self.total_steps // self.batch)


def build_parser() -> argparse.ArgumentParser:
    return config_parser(Config, "python -m experiments.train_jax", __doc__.split("\n")[0])


def self_play(config: Config, num_envs: int):
    """The self-play env of a run with ``config``, ``num_envs`` games."""
    from dominoes_env.jax.policy_files import load_fixed_actor
    from dominoes_env.jax.selfplay import SelfPlay

    fixed = (load_fixed_actor(config.opp_policy, config.rules(), config.obs_version)
             if config.opp_policy else None)
    equity = None
    if config.reward == "match":  # the table for two sides, the race for more (as search's)
        from agents.equity import equity_table
        from agents.race_equity import hands_to_reach
        from dominoes_env.jax.match_equity import MatchRace, MatchTable

        rules = config.rules()
        equity = (MatchTable(equity_table(rules), rules.target_score) if rules.num_sides == 2
                  else MatchRace(hands_to_reach(rules), rules.target_score))
    return SelfPlay(config.rules(), num_envs, opponents=config.opponent_mix(),
                    fixed_actor=fixed, obs_version=config.obs_version,
                    reward_scale=config.reward_scale, match_scores=config.match_scores,
                    full_critic=config.critic == "full", matmul_dtype=config.matmul_dtype(),
                    match_equity=equity)


# -- the jitted update ---------------------------------------------------------------------
#: one learner decision; ``hidden_info``: what the critic sees beyond ``obs`` ([B, 0] or more)
Transition = namedtuple("Transition", "obs hidden_info mask action logp value reward done")


def normalise_advantages(adv, axis: str | None = None):
    """Advantages centred and scaled to unit variance over the last axis (a minibatch's rows;
    all of an epoch's minibatches at once). With ``axis`` (inside ``shard_map``, each device
    holding a share of every minibatch) the mean and variance are the whole minibatch's, so
    the devices' mean gradient is the whole minibatch's.

    >>> import jax.numpy as jnp
    >>> normalise_advantages(jnp.array([[1.0, 3.0], [0.0, 10.0]])).tolist()
    [[-1.0, 1.0], [-1.0, 1.0]]
    """
    import jax
    import jax.numpy as jnp

    def mean(x):
        m = x.mean(axis=-1, keepdims=True)
        return m if axis is None else jax.lax.pmean(m, axis)

    centred = adv - mean(adv)
    return centred / (jnp.sqrt(mean(centred ** 2)) + 1e-8)


def device_mean(tree, axis: str):
    """``pmean`` of a pytree over the mesh axis ``axis`` as one collective on one flat vector
    (a collective per leaf left a CPU core idle at each one: 10-26% fewer steps per second)."""
    import jax
    from jax.flatten_util import ravel_pytree

    flat, unravel = ravel_pytree(tree)
    return unravel(jax.lax.pmean(flat, axis))


def ppo_loss(params, batch: Transition, adv, target, config: Config):
    """PPO's clipped loss on a minibatch, and its parts; ``adv`` already normalised
    (:func:`normalise_advantages`)."""
    import jax
    import jax.numpy as jnp

    from dominoes_env.jax.networks import critic_value, masked_logits

    logits = masked_logits(params["actor"], batch.obs, batch.mask, config.matmul_dtype())
    logp_all = jax.nn.log_softmax(logits)
    logp = jnp.take_along_axis(logp_all, batch.action[:, None], 1)[:, 0]
    ratio = jnp.exp(logp - batch.logp)
    pg = -jnp.minimum(ratio * adv, jnp.clip(ratio, 1 - config.clip_eps,
                                            1 + config.clip_eps) * adv).mean()
    value = critic_value(params["critic"], batch.obs, batch.hidden_info, config.matmul_dtype())
    v_clip = batch.value + jnp.clip(value - batch.value, -config.clip_eps, config.clip_eps)
    v_loss = 0.5 * jnp.maximum((value - target) ** 2, (v_clip - target) ** 2).mean()
    probs = jnp.exp(logp_all)
    entropy = -jnp.sum(jnp.where(batch.mask, probs * logp_all, 0.0), axis=1).mean()
    total = pg + config.vf_coef * v_loss - config.ent_coef * entropy
    kl = ((ratio - 1) - (logp - batch.logp)).mean()
    return total, {"policy_loss": pg, "value_loss": v_loss, "entropy": entropy,
                   "approx_kl": kl}


def on_cpu() -> bool:
    """Whether JAX computes on the CPU (its default backend)."""
    import jax

    return jax.default_backend() == "cpu"


#: an update that runs longer than this (the first two: the first compiles), or than the larger
#: of STALL_FLOOR_S and 50 times the median update after the first, ends the run with one line
#: (:class:`dominoes_env.jax.watchdog.Watchdog`): XLA's CPU runtime can wedge
STALL_FIRST_S = 3600.0
STALL_FLOOR_S = 600.0


#: settings that do not change the update (left out of its cache key)
RUN_ONLY = ("out", "resume", "init", "ship", "progress", "time_limit", "eval_every",
            "eval_matches", "checkpoint_every", "seed", "overwrite", "print_settings")
#: what a run's folder holds (an --out holding only these, without a run marker, is a run's)
OUTPUTS = ("config.json", "tb", "eval.csv", "eval.csv.damaged*", "eval_policy.npz",
           "checkpoint.npz", "throughput.json", "policy.npz", "policy.json")


def run_folder(config: Config):
    """``config.out`` checked by the output policy (:func:`check_run_folder`): a new or empty
    folder, the same run with ``--resume`` of its own checkpoint (same settings, but for
    ``--total-steps`` and the run-only ones), or ``--overwrite``; and a folder whose policies
    an agent spec can name (:func:`check_spec_path`: its evaluation plays
    ``ppo:OUT/eval_policy.npz``)."""
    check_spec_path("--out", config.out, folder=True)
    return check_run_folder(config.out, "experiments.train_jax", run_settings(config),
                            resume=config.resume, overwrite=config.overwrite, outputs=OUTPUTS,
                            resume_hint=str(Path(config.out) / "checkpoint.npz"),
                            inputs=(config.resume, config.init, config.opp_policy),
                            utf8_name=True)


#: settings added after runs were made, with the value runs had before: a run's marker leaves
#: each out at that value, so a run made before it was added still resumes
ADDED_LATER = {"matmul": "float32", "reward": "points"}


def run_settings(config: Config) -> dict[str, Any]:
    """The settings a run's marker holds, which a ``--resume`` must repeat: all but
    ``--total-steps``, the run-only ones and those of :data:`ADDED_LATER` at their earlier
    value."""
    return {k: v for k, v in dataclasses.asdict(config).items()
            if k not in RUN_ONLY and k != "total_steps"
            and not (k in ADDED_LATER and v == ADDED_LATER[k])}


def make_train(config: Config):
    """``(init, update, devices)``: ``init(key) -> runner`` and the jitted ``update(runner) ->
    (runner, metrics)`` = one rollout of ``num_envs x num_steps`` learner decisions and the PPO
    epochs, run on ``devices`` devices (:meth:`Config.device_count`). The same training
    settings give the same (already compiled) functions."""
    import jax

    devices = config.device_count(len(jax.devices()), on_cpu())
    keep = {**dataclasses.asdict(config), **{k: getattr(Config(), k) for k in RUN_ONLY}}
    return (*_make_train_cached(json.dumps(keep, sort_keys=True), devices,
                                _file_digest(config.opp_policy)), devices)


def _file_digest(path: str) -> str | None:
    """The SHA-256 of the file at ``path`` (``None`` for no path, or one that cannot be read:
    its loader then names the problem): a cache key of what the file holds, not its name, so a
    file rewritten between two runs in one process is played as it is now."""
    if not path:
        return None
    try:
        return file_sha256(path)
    except OSError:
        return None


@functools.lru_cache(maxsize=4)
def _make_train_cached(frozen: str, devices: int, opp_policy_digest: str | None):
    """``opp_policy_digest`` is only a key: the same settings with another --opp-policy file's
    contents are another update."""
    return _make_train(Config(**json.loads(frozen)), devices)


def _make_train(config: Config, devices: int):
    """Data-parallel over ``devices`` (``shard_map`` over a mesh axis ``"d"``): each device
    plays ``num_envs / devices`` games and, in every minibatch, takes its share of the rows
    from its own games; the gradients (and the advantage normalisation's mean and variance)
    are averaged over the devices, so the parameters, the optimizer and the snapshots stay
    the same on all of them. One device is the plain single-device update."""
    import jax
    import jax.numpy as jnp
    import optax
    from jax.sharding import Mesh, NamedSharding
    from jax.sharding import PartitionSpec as P

    from dominoes_env.jax.networks import critic_value, init_params, masked_logits, sample_actions
    from dominoes_env.jax.optimizer import make_optimizer

    local_envs = config.num_envs // devices
    sp = self_play(config, local_envs)
    n_updates = config.num_updates()
    local_batch = local_envs * config.num_steps
    mb_size = config.minibatch_size // devices

    tx = make_optimizer(config.lr, config.max_grad_norm, config.anneal_lr, n_updates,
                        config.num_minibatches * config.update_epochs)

    def init(key):
        k_params, k_env, k_run = jax.random.split(key, 3)
        params = init_params(k_params, sp.obs_size, sp.num_actions, config.hidden(),
                             sp.hidden_size)
        snaps = jax.tree.map(lambda x: jnp.stack([x] * config.snapshots), params["actor"])
        games = jax.tree.map(lambda *g: jnp.concatenate(g), *[  # device d's games: block d
            sp.reset(k, local_envs) for k in jax.random.split(k_env, devices)])
        return {"params": params, "opt": tx.init(params), "snaps": snaps,
                "snaps_filled": jnp.int32(1), "snaps_next": jnp.int32(1 % config.snapshots),
                "games": games, "key": k_run, "update": jnp.int32(0),
                "ep_return": jnp.zeros(config.num_envs, jnp.float32)}

    def update(runner):  # on each device, with its own games (runner["games"], "ep_return")
        params, snaps = runner["params"], runner["snaps"]
        # this rollout's frozen opponent: one snapshot for every game (one network to run);
        # the rollout and the minibatches draw from this device's own keys
        key, k_slot, k_roll, k_epochs = jax.random.split(runner["key"], 4)
        device = jax.lax.axis_index("d")
        k_roll, k_epochs = jax.random.fold_in(k_roll, device), jax.random.fold_in(k_epochs, device)
        frozen = jax.tree.map(lambda s: s[jax.random.randint(k_slot, (), 0,
                                                             runner["snaps_filled"])], snaps)

        def env_step(carry, _):
            games, ep_return, key = carry
            key, k_act, k_step = jax.random.split(key, 3)
            s = games.state
            obs, mask = s.observation, s.legal_action_mask
            logits = masked_logits(params["actor"], obs, mask, config.matmul_dtype())
            action = sample_actions(k_act, logits)
            logp = jnp.take_along_axis(jax.nn.log_softmax(logits), action[:, None], 1)[:, 0]
            hidden_info = sp.hidden_info(s)
            value = critic_value(params["critic"], obs, hidden_info, config.matmul_dtype())
            games, reward, done = sp.step(games, action, params["actor"], frozen, k_step)
            ep_return = ep_return + reward
            info = (jnp.where(done, ep_return, 0.0), done)
            ep_return = jnp.where(done, 0.0, ep_return)
            t = Transition(obs, hidden_info, mask, action, logp, value, reward, done)
            return (games, ep_return, key), (t, info)

        (games, ep_return, _), (traj, (finished, dones)) = jax.lax.scan(
            env_step, (runner["games"], runner["ep_return"], k_roll), None, config.num_steps)
        last_value = critic_value(params["critic"], games.state.observation,
                                  sp.hidden_info(games.state), config.matmul_dtype())

        def gae(carry, t):
            next_adv, next_value = carry
            delta = t.reward + config.gamma * next_value * (1 - t.done) - t.value
            adv = delta + config.gamma * config.gae_lambda * (1 - t.done) * next_adv
            return (adv, t.value), adv

        _, advantages = jax.lax.scan(gae, (jnp.zeros_like(last_value), last_value), traj,
                                     reverse=True)
        targets = advantages + traj.value

        flat = jax.tree.map(lambda x: x.reshape((local_batch,) + x.shape[2:]),
                            (traj, advantages, targets))

        def epoch(carry, _):
            params, opt, key = carry
            key, k_perm = jax.random.split(key)
            rows = jax.random.permutation(k_perm, local_batch).reshape(
                config.num_minibatches, mb_size)
            # each minibatch gathers its own rows (a shuffled copy of the whole rollout first
            # cost 2% more CPU, for the same minibatches)
            adv = normalise_advantages(flat[1][rows], "d")  # each minibatch's, all devices

            def minibatch(carry, mb):
                params, opt = carry
                rows, adv = mb
                mb = (jax.tree.map(lambda x: x[rows], flat[0]), adv, flat[2][rows])
                grads, stats = device_mean(jax.grad(ppo_loss, has_aux=True)(params, *mb, config),
                                           "d")
                updates, opt = tx.update(grads, opt, params)
                return (optax.apply_updates(params, updates), opt), stats

            (params, opt), stats = jax.lax.scan(minibatch, (params, opt), (rows, adv))
            return (params, opt, key), stats

        (params, opt, _), stats = jax.lax.scan(epoch, (params, runner["opt"], k_epochs), None,
                                               config.update_epochs)
        step = runner["update"] + 1
        take = step % config.snapshot_every == 0
        slot = runner["snaps_next"]
        snaps = jax.tree.map(lambda s, a: s.at[slot].set(jnp.where(take, a, s[slot])),
                             snaps, params["actor"])
        runner = {**runner, "params": params, "opt": opt, "snaps": snaps, "games": games,
                  "key": key, "update": step, "ep_return": ep_return,
                  "snaps_filled": jnp.where(take, jnp.minimum(runner["snaps_filled"] + 1,
                                                              config.snapshots),
                                            runner["snaps_filled"]),
                  "snaps_next": jnp.where(take, (slot + 1) % config.snapshots, slot)}
        n_done = jax.lax.psum(dones.sum(), "d")
        metrics = {k: v.mean() for k, v in stats.items()}
        metrics.update(episodes=n_done,
                       episode_return=jax.lax.psum(finished.sum(), "d") /
                       jnp.maximum(n_done, 1) / config.reward_scale)
        return runner, metrics

    mesh = Mesh(np.array(jax.devices()[:devices]), ("d",))
    shards = {"games": P("d"), "ep_return": P("d")}  # the rest is the same on every device
    specs = {k: shards.get(k, P()) for k in jax.eval_shape(init, jax.random.PRNGKey(0))}
    # check_vma=False: the game's loops start from constants that become per-device values;
    # tests/jax/test_train_jax.py checks that the replicated parts stay equal on every device
    update = jax.shard_map(update, mesh=mesh, in_specs=(specs,), out_specs=(specs, P()),
                           check_vma=False)
    placed = {k: NamedSharding(mesh, spec) for k, spec in specs.items()}
    return jax.jit(init, out_shardings=placed), jax.jit(update)


def seed_key(seed: int):
    """The JAX key of a run's seed (0..2**64 - 1), made of both its 32-bit words:
    ``jax.random.PRNGKey`` keeps the low word only while JAX's 64-bit mode is off; both words
    are kept, so ``--seed 4294967296`` and ``--seed 0`` are different runs. Below 2**32 it is
    ``PRNGKey(seed)``.

    >>> import jax
    >>> bool((seed_key(7) == jax.random.PRNGKey(7)).all()), seed_key(2**32 + 7).tolist()
    (True, [1, 7])
    """
    import jax.numpy as jnp

    return jnp.array([seed >> 32, seed & 0xFFFFFFFF], dtype=jnp.uint32)


# -- evaluation and logging ----------------------------------------------------------------
class TensorBoard:
    """Scalars to TensorBoard event files without torch (tensorboard's own writer)."""

    def __init__(self, logdir: Path):
        from tensorboard.summary.writer.event_file_writer import EventFileWriter

        self.writer = EventFileWriter(str(logdir))

    def scalars(self, values: dict[str, float], step: int) -> None:
        from tensorboard.compat.proto.event_pb2 import Event
        from tensorboard.compat.proto.summary_pb2 import Summary

        summary = Summary(value=[Summary.Value(tag=k, simple_value=float(v))
                                 for k, v in values.items()])
        self.writer.add_event(Event(wall_time=time.time(), step=step, summary=summary))

    def close(self) -> None:
        self.writer.close()


def evaluate_policy(path: Path, config: Config, opponents=("greedy", "random"),
                    matches: int | None = None) -> dict[str, float]:
    """Win rates of the policy file at ``path`` against each opponent (Wilson intervals,
    margins; :func:`agents.evaluation.evaluation_row`), keys suffixed ``_vs_{opponent}``, over
    ``matches`` matches (default ``config.eval_matches``)."""
    from agents.evaluation import evaluation_row

    return evaluation_row(f"ppo:{path}", config.rules(), matches=matches or config.eval_matches,
                          seed=config.seed, opponents=opponents)


# -- the run -------------------------------------------------------------------------------
def print_note(note: str | None) -> None:
    """``note`` (a line about the run's files or the resumed checkpoint) on stderr, if any."""
    if note:
        print(note, file=sys.stderr)


@dataclass
class TrainingRun:
    """A run under way (:func:`train`): its networks and steps, and what it writes into its
    folder (evaluations, checkpoints, policies)."""

    config: Config
    command: str  #: the command line that started it (in each exported policy's metadata)
    update: Callable  #: the jitted update, ``update(runner) -> (runner, metrics)``
    devices: int  #: the devices the update runs on
    runner: dict[str, Any]  #: the networks, optimizer, snapshots, games and key
    steps: int  #: learner decisions trained, a resumed run's before this process included
    #: the run's wall seconds of training, a resumed run's before this process included
    #: (started by :func:`start_run` once the run is set up; idle for a --resume with nothing
    #: to train, which writes nothing again but its policy)
    clock: RunClock
    settings: dict[str, Any]  #: ``config.json`` (in each exported policy's metadata too)
    tb: TensorBoard
    #: ``throughput.json``: the wall and CPU seconds of each update, its logging included
    timing: dict[str, Any] = field(init=False)
    #: the steps of the checkpoint a --resume would continue (the resumed one, or the last
    #: saved), ``None`` before the first
    saved_steps: int | None = field(init=False)
    saved_path: Path | None = field(default=None, init=False)  #: the last checkpoint saved
    last_eval: int = field(init=False)  #: the steps of the last evaluation
    #: stopped before --total-steps (the time limit, or a Ctrl-C, SIGTERM or SIGHUP)
    interrupted: bool = field(default=False, init=False)

    def __post_init__(self) -> None:
        self.timing = {"steps_per_update": self.config.batch, "devices": self.devices,
                       "update_s": [], "update_cpu_s": []}
        self.saved_steps = self.steps if self.config.resume else None
        self.last_eval = -1 if self.steps else 0

    @property
    def out(self) -> Path:
        """The run's folder (``--out``)."""
        return Path(self.config.out)

    @property
    def idle(self) -> bool:
        """A --resume with nothing to train: nothing but its policy is written again."""
        return self.clock.idle

    def wall(self) -> float:
        """The run's wall seconds so far, a resumed run's before included (an idle run's
        stay as they were), to a tenth of a second."""
        return round(self.clock.seconds(), 1)

    def export(self, path: Path) -> dict[str, Any]:
        """The policy as it is now written to ``path`` (the ``ppo:PATH`` policy file);
        returns its metadata."""
        from dominoes_env.jax.policy_files import export_npz

        config = self.config
        meta = {"rules": config.rules().to_dict(), "obs_version": config.obs_version,
                "steps": self.steps, "wall_s": self.wall(), "seed": config.seed,
                "devices": self.devices, "trainer": "experiments.train_jax",
                "config": self.settings, "command": self.command}
        export_npz(self.runner["params"]["actor"], path, meta)
        return meta

    def evaluate(self) -> None:
        """The policy as it is now evaluated against greedy and random: a row of
        ``eval.csv``, TensorBoard scalars and a line."""
        from tqdm import tqdm

        out, steps = self.out, self.steps
        self.export(out / "eval_policy.npz")
        row = {"steps": steps, "wall_s": self.wall(),
               **evaluate_policy(out / "eval_policy.npz", self.config)}
        self.tb.scalars({f"eval/{k}": v for k, v in row.items() if k not in ("steps",)}, steps)
        append_eval_row(out / "eval.csv", row)
        tqdm.write(f"[eval] steps {steps:,}: vs greedy {row['win_rate_vs_greedy']:.3f} "
                   f"[{row['ci_low_vs_greedy']:.3f}, {row['ci_high_vs_greedy']:.3f}], "
                   f"vs random {row['win_rate_vs_random']:.3f}")
        self.last_eval = steps

    def save(self) -> None:
        """``checkpoint.npz`` (which ``--resume`` continues) and ``throughput.json``."""
        from dominoes_env.jax import checkpoints

        checkpoints.save_checkpoint(self.runner, self.config, self.steps, self.wall(),
                                    self.out / "checkpoint.npz")
        write_json(self.out / "throughput.json", self.timing)
        self.saved_steps, self.saved_path = self.steps, self.out / "checkpoint.npz"

    def stalled(self, seconds: float) -> None:
        """The process ended with one line naming the checkpoint kept: an update has run
        ``seconds``. On the watchdog's thread: the update never returns."""
        where = (f"the last checkpoint ({self.saved_steps:,} steps) is kept: continue with "
                 f"--resume {self.out / 'checkpoint.npz'}" if self.saved_steps is not None
                 else "no checkpoint was written yet")
        print(f"error: an update has not finished after {seconds:.0f} s (XLA's CPU runtime "
              f"may be stuck: XLA_FLAGS=--xla_cpu_multi_thread_eigen=false avoids a known hang "
              f"of its thread pool; if it happens with that set, please report it with this "
              f"command); {where}", file=sys.stderr, flush=True)
        os._exit(1)

    def update_once(self, bar, dog) -> None:
        """One update (rollout and PPO epochs, watched by ``dog``), checked finite before it
        counts (:class:`Diverged`) and logged: TensorBoard, ``bar`` and its seconds."""
        config = self.config
        wall0, cpu0 = time.perf_counter(), time.process_time()
        with dog.watch():
            updated, metrics = self.update(self.runner)
            m = {k: float(v) for k, v in metrics.items()}  # waits for the update
        check_finite(updated, m, self.steps + config.batch, self.saved_path or config.resume)
        self.runner = updated
        self.steps += config.batch
        bar.update(config.batch)
        self.tb.scalars({f"train/{k}": v for k, v in m.items()}, self.steps)
        bar.set_postfix(ret=f"{m['episode_return']:+.1f}", ent=f"{m['entropy']:.2f}",
                        refresh=False)
        # an update's seconds include its logging, as train_ppo's include its callbacks
        self.timing["update_s"].append(round(time.perf_counter() - wall0, 4))
        self.timing["update_cpu_s"].append(round(time.process_time() - cpu0, 4))

    def learn(self, held, bar, dog) -> KeyboardInterrupt | None:
        """Update until ``--total-steps`` or the time limit, evaluating and saving when due
        and delivering ``held``'s stops between updates; at the end ``bar`` and ``dog`` are
        closed and the run saved, unless it diverged (:class:`Diverged` goes on) or is idle.
        Returns the stop (Ctrl-C, SIGTERM or SIGHUP) that ended it, or ``None``."""
        from tqdm import tqdm

        config = self.config
        next_eval = ((self.steps // config.eval_every + 1) * config.eval_every
                     if config.eval_every else 0)
        next_ckpt = (self.steps // config.checkpoint_every + 1) * config.checkpoint_every
        signalled, diverged = None, False
        try:
            while self.steps < config.total_steps:
                held.deliver()
                self.update_once(bar, dog)
                if config.eval_every and self.steps >= next_eval:
                    self.evaluate()
                    next_eval += config.eval_every
                if self.steps >= next_ckpt:
                    self.save()
                    next_ckpt += config.checkpoint_every
                if config.time_limit and self.clock.elapsed() > config.time_limit * 60:
                    tqdm.write(f"[time limit] {config.time_limit:g} minutes: stopping at "
                               f"{self.steps:,} steps")
                    self.interrupted = True
                    break
            held.deliver()  # a stop during the last update: the run still ends stopped
        except KeyboardInterrupt as stop:  # Ctrl-C, SIGTERM, SIGHUP: keep, evaluate, export
            self.interrupted, signalled = True, stop
        except Diverged:  # nothing of it is saved, evaluated or exported
            diverged = True
            self.tb.close()
            raise
        finally:
            dog.stop()
            bar.close()
            if not diverged and not self.idle:
                self.save()
        return signalled

    def export_trained(self, signalled: KeyboardInterrupt | None) -> dict[str, Any]:
        """The trained policy evaluated (unless the last update's evaluation was made, or the
        run is idle) and exported to ``policy.npz``; returns its metadata. Weights that are
        not finite are not written: :class:`PolicyFileError`, or after a stop
        (``signalled``) :class:`~dominoes_env.cli_support.TrainingStopped`, naming why."""
        try:
            if self.last_eval != self.steps and not self.idle:
                self.evaluate()
            return self.export(self.out / "policy.npz")
        except PolicyFileError as err:  # diverged (NaN weights): a stopped run still ends stopped
            if signalled is None:
                raise
            raise TrainingStopped(self.out, signalled, export_error=str(err)) from None
        finally:
            self.tb.close()

    def done_line(self) -> str:
        """The run's last line: the steps it trained (or that it trained none), its time and
        its policy."""
        done = (f"nothing trained: the run stays at {self.steps:,} steps" if self.idle else
                f"trained {self.steps:,} steps in {self.wall():.0f} s"
                f"{' (interrupted)' if self.interrupted else ''}")
        return f"{done}; policy: {shown_path(self.out / 'policy.npz')}"


def start_run(config: Config, command: str) -> TrainingRun:
    """The run's networks (new, ``--init``'s, or the ``--resume`` checkpoint's with its steps)
    and its folder started (:func:`start_folder`), with TensorBoard; every refusal comes
    before anything is written. The run's clock (:class:`~dominoes_env.cli_support.RunClock`)
    starts as it returns: set up and loaded, before the first evaluation or update (the first
    update's compilation counts; JAX's set-up, the networks' initialisation and a resumed
    checkpoint's loading do not)."""
    from dominoes_env.jax import checkpoints

    meta_resumed = (checkpoints.read_checkpoint(config.resume, config,
                                                fields=checkpoints.RESUME_FIELDS)
                    if config.resume else None)
    folder = run_folder(config)  # another run in --out: refused before anything is written
    setup_jax(config.devices)
    init, update, devices = make_train(config)
    runner = init(seed_key(config.seed))
    steps, clock, idle = 0, RunClock(), False
    if meta_resumed is not None:  # every file is checked before anything is written
        runner = checkpoints.restore(config.resume, runner)
        steps, clock = int(meta_resumed["steps"]), RunClock(float(meta_resumed["wall_s"]))
        note = nothing_to_train(config.resume, steps, config.total_steps)
        if note:  # nothing of the run is written again but its policy (killed before its
            # export?): a row of eval.csv for the same step each time, a checkpoint whose
            # wall_s grew by the seconds of a run that trained nothing
            print_note(note)
            idle = True
    elif config.init:
        runner = checkpoints.warm_start(config.init, runner, config)
    settings = start_folder(config, folder, idle)
    tb = TensorBoard(Path(config.out) / "tb")
    if idle:
        clock.mark_idle()  # its seconds stay as the checkpoint recorded them
    else:
        clock.start()  # set up and loaded: the run's seconds of training go on
    return TrainingRun(config, command, update, devices, runner, steps, clock, settings, tb)


def start_folder(config: Config, folder, idle: bool) -> dict[str, Any]:
    """The checked run folder made this run's (:func:`start_run_folder`), a resumed
    ``eval.csv`` kept to its rows of numbers, and ``config.json`` written (not by an ``idle``
    resume); returns the settings it holds."""
    out = Path(config.out)
    start_run_folder(folder)
    print_note(keep_numeric_rows(out / "eval.csv"))  # a resumed log: its rows after no garbage
    settings = dataclasses.asdict(config)
    if not idle:
        write_json(out / "config.json", settings)
    return settings


def train(config: Config, command: str = "") -> Path:
    """Train; write ``policy.npz`` + ``policy.json`` into ``config.out``; returns its path."""
    from tqdm import tqdm

    from dominoes_env.jax.watchdog import Watchdog

    run = start_run(config, command)
    if run.steps == 0 and config.eval_every:
        run.evaluate()  # the learning curve starts at the initial policy
    bar = tqdm(total=config.num_updates() * config.batch, initial=run.steps, unit="step",
               unit_scale=True, disable=not config.progress, dynamic_ncols=True)
    # an update that never returns (XLA's CPU runtime wedged) ends the run with one line
    dog = Watchdog(run.stalled, first_s=STALL_FIRST_S, floor_s=STALL_FLOOR_S).start()
    # Ctrl-C, SIGTERM and SIGHUP are held while an update runs and delivered between updates
    # (HeldSignals: raised inside JAX's or TensorBoard's code, such a signal left a lock taken
    # that the save after the stop needed, and the run never ended); once a stop is delivered,
    # later ones are dropped while the run is saved, evaluated and exported
    with signals_held() as held:
        stop = run.learn(held, bar, dog)  # saved at its end, unless it diverged or is idle
        meta = run.export_trained(stop)
    write_json(run.out / "policy.json", meta)
    print(run.done_line())
    if stop is not None:  # the run is saved and exported; the command still ends stopped
        raise TrainingStopped(run.out, stop)
    if config.ship:
        ship(run.out, config)
    return run.out / "policy.npz"


class Diverged(Exception):
    """An update made non-finite weights or losses (NaN or infinite), or weights a policy file
    cannot hold (:func:`check_finite`): the training diverged; :func:`train` stops there,
    before anything of it is saved (``main`` ends with status 1)."""


def check_finite(runner: dict[str, Any], metrics: dict[str, float], steps: int,
                 kept: str | os.PathLike | None) -> None:
    """:class:`Diverged` unless the ``metrics`` (the losses) of the update that reaches
    ``steps`` are finite and the networks of its ``runner`` (policy and value) pass the policy
    file's own rule (:func:`~dominoes_env.policy_format.weights_problem`: finite, and none
    above :data:`~dominoes_env.policy_format.MAX_WEIGHT`, which a checkpoint's reader holds
    them to too); ``kept``: the checkpoint that is left as it was (the run's last one, or the
    one it resumed), if any; so a diverged update is never saved over the last good
    checkpoint, nor exported."""
    import jax

    params = runner["params"]
    names = [jax.tree_util.keystr(path)
             for path, _ in jax.tree_util.tree_flatten_with_path(params)[0]]
    largest = {f"params{name}": float(top)  # NaN where one is NaN
               for name, top in zip(names, _largest_magnitudes()(params), strict=True)}
    line = divergence_line(f"the update reaching {steps:,} steps", largest,
                           dict(sorted(metrics.items())), "--lr, --reward-scale or --vf-coef")
    if line is None:
        return
    where = (f"the last checkpoint {str(kept)!r} is kept as it was" if kept
             else "no checkpoint of the run was saved")
    raise Diverged(f"{line}; {where}")


@functools.cache
def _largest_magnitudes():
    """A jitted ``tree -> [array]``: the largest magnitude of each of the tree's arrays (in
    ``jax.tree.leaves`` order; NaN for an array holding a NaN, inf for one holding an infinite
    value): what :func:`check_finite` holds to the policy file's rule, without copying the
    networks off the device."""
    import jax
    import jax.numpy as jnp

    return jax.jit(lambda tree: [jnp.max(jnp.abs(x)) for x in jax.tree.leaves(tree)])


def ship(out: Path, config: Config, matches: int = SHIP_MATCHES) -> bool:
    """``--ship``: the run's ``policy.npz`` (and its card ``policy.json``) copied to the
    table's shipped place (:func:`agents.ppo.shipped_policy_path`: ``ppo_3p.npz``,
    ``ppo_4p_free_for_all.npz``, ...) only if it beats the shipped policy against greedy over
    the same ``matches`` matches on the deals of the run's seed
    (:func:`agents.shipping.ship_if_stronger`, which prints both win rates); returns whether
    it shipped. A refusal is a :class:`~dominoes_env.cli_support.RefusedError` (an ``error:``
    line, status 2), not a policy file's :class:`PolicyFileError` (a damaged shipped policy
    is not a diverged run)."""
    return ship_run(out, config.rules(), matches=matches, seed=config.seed)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run_command(lambda: _main(args, argv))


def print_settings(args: argparse.Namespace) -> int:
    """``--print-settings``: the flags checked as a run checks them (a refusal is one error
    line, status 2), then :func:`run_settings` as one JSON line (as a run marker stores them),
    status 0; nothing is written and ``--out`` is not checked (``best_response`` compares the
    line with the run there)."""
    try:
        config = Config(**vars(args))
    except ValueError as err:
        print_error(str(err))
        return 2
    print(json.dumps(run_settings(config), sort_keys=True, default=str))
    return 0


def _main(args: argparse.Namespace, argv: list[str] | None) -> int:
    if args.print_settings:  # before setup_jax, which makes the compilation cache's folder
        return print_settings(args)
    setup_jax(args.devices)
    try:
        config = Config(**vars(args))
        run_folder(config)
        import jax

        from dominoes_env.jax import checkpoints

        if config.resume:
            checkpoints.read_checkpoint(config.resume, config, fields=checkpoints.RESUME_FIELDS)
        if config.init:
            checkpoints.check_init(config.init, config)

        config.device_count(len(jax.devices()), on_cpu())
    except ValueError as err:
        print_error(str(err))
        return 2
    command = "python -m experiments.train_jax " + " ".join(
        shlex.quote(a) for a in (sys.argv[1:] if argv is None else argv))
    try:
        train(config, command)
    except TrainingStopped as stopped:  # saved (and exported): 130, 143, 129
        out, refused = stopped.out, stopped.export_error
        kept = (f"saved in {str(out)!r} and its policy not exported ({refused})" if refused
                else f"saved and exported in {str(out)!r}")
        return end_stopped_training(stopped, f"the run so far is {kept} (continue with "
                                             f"--resume {out / 'checkpoint.npz'})")
    except Diverged as err:  # a failed run, not bad input
        print_error(str(err))
        return 1
    except PolicyFileError as err:  # weights an export refuses: a failed run, not bad input
        checkpoint = Path(config.out) / "checkpoint.npz"  # none before the first is due
        kept = (f"the run is saved in {checkpoint}" if checkpoint.is_file()
                else "no checkpoint of the run was saved yet")
        print_error(f"{err}; it was not written; {kept}")
        return 1
    except (FileExistsError, ValueError) as err:  # ValueError: a checkpoint's arrays
        print_error(str(err))
        return 2
    return 0


if __name__ == "__main__":
    end_program(main())
