"""Self-play PPO on the JAX game: rollouts and updates inside one jitted function.

Reads top to bottom, in the CleanRL / PureJaxRL style: the configuration (one dataclass, every
field a ``--flag`` with help), the network (plain JAX MLPs, optax's Adam), the self-play
environment (the learner's seats against a mix of its current self, frozen snapshots,
greedy and random, all jittable, each on its own block of envs), the jitted update
(``lax.scan`` rollout, GAE, PPO epochs over minibatches; data-parallel over the devices, one
per CPU core), then the run (evaluation through the tournament arena, TensorBoard,
``eval.csv``, checkpoints, export, ``--ship``).

    python -m experiments.train_jax --out runs/jax2p              # the from-scratch recipe
    python -m experiments.train_jax --players 4 --out runs/jax4p  # partnerships
    python -m experiments.train_jax --out runs/jax2p --resume runs/jax2p/checkpoint.npz \\
        --total-steps 40000000

Every run is seeded and writes into ``--out``: ``config.json``, ``tb/`` (TensorBoard: losses,
episode returns, ``eval/win_rate_vs_greedy`` ...), ``eval.csv`` (the learning curve, win rates
with Wilson intervals from :func:`experiments.train_ppo.evaluate`, the same arena as
tournaments), ``checkpoint.npz`` (everything the update carries; ``--resume`` continues it) and
at the end ``policy.npz`` + ``policy.json``: the numpy export that ``ppo:PATH`` plays
(:mod:`agents.ppo`). ``--ship`` copies it to ``agents/policies/ppo_{n}p.npz`` only when it beats
the shipped policy against greedy (measured here, same matches for both).

Episodes are single hands (``episode="hand"``) with ``score_delta`` rewards: the learner's
return is its side's hand score minus the opponents'. The learner controls every seat of its
side (both partners with four players in partnerships); the other seats play that env's
opponent (each env keeps one opponent kind, so each network runs only on its own envs).
Points the opponents make before the learner's first move of a hand are not credited to any
transition (they do not depend on the learner's actions). ``--critic full`` lets the value
network (never the policy) see the hidden part of the deal: the other hands, the boneyard and
its draw order.

Needs the ``jax`` extra (jax, pgx, optax).
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import functools
import json
import math
import os
import shlex
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from dominoes_env.cli_support import config_parser
from dominoes_env.core import RuleConfig
from dominoes_env.core.files import atomic_write
from dominoes_env.encoding import OBS_VERSION, OBSERVATION_SPECS, observation_spec

FORMAT = "straight-dominoes-train-jax/1"  #: the checkpoint format
CRITICS = ("obs", "full")  #: what the value network may see (``--critic``)


# -- configuration -------------------------------------------------------------------------
def _f(default, help: str):  # noqa: A002 - argparse's word
    if isinstance(default, list):
        return field(default_factory=lambda: list(default), metadata={"help": help})
    return field(default=default, metadata={"help": help})


@dataclass
class Config:
    """Everything a run depends on; the defaults are the from-scratch recipe."""

    players: int = _f(2, "seats at the table: 2, 3 or 4")
    partnerships: bool | None = _f(None, "4 players in two partnerships (default: on with 4)")
    target_score: int = _f(250, "match target of the evaluation matches (training plays hands)")
    total_steps: int = _f(20_000_000, "learner decisions to train for (rounded up to whole "
                                      "updates of num_envs * num_steps)")
    num_envs: int = _f(512, "games played in parallel")
    num_steps: int = _f(32, "rollout length per game and update")
    num_minibatches: int = _f(8, "minibatches per epoch")
    update_epochs: int = _f(4, "PPO epochs per update")
    net: str = _f("256,256", "hidden layer sizes of the policy and of the value network")
    critic: str = _f("obs", "what the value network sees: obs (the learner's observation) or "
                     "full (also every other seat's hand, the boneyard and its draw order: a "
                     "perfect-information critic for training only; the policy always sees "
                     "only its observation, so the exported policy plays as before)")
    obs_version: int = _f(OBS_VERSION, "observation version the policy reads: 2; 3 (version 2 "
                                       "plus reply_points, the next seat's best answer to each "
                                       "legal move; dominoes_env.encoding_v3); or 4 (version 3 "
                                       "plus reply_chance and follow_up; "
                                       "dominoes_env.encoding_v4)")
    lr: float = _f(3e-4, "Adam learning rate (annealed linearly to 0 unless --no-anneal-lr)")
    anneal_lr: bool = _f(True, "anneal the learning rate linearly to 0")
    gamma: float = _f(1.0, "discount (points count the same whenever they come in a hand)")
    gae_lambda: float = _f(0.95, "GAE lambda")
    clip_eps: float = _f(0.2, "PPO clip range")
    ent_coef: float = _f(0.01, "entropy bonus")
    vf_coef: float = _f(0.5, "value loss weight")
    max_grad_norm: float = _f(0.5, "global gradient norm clip")
    reward_scale: float = _f(0.05, "reward per point of hand score difference")
    opp_self: float = _f(0.35, "share of the envs against the current policy (an env keeps its "
                                "opponent kind)")
    opp_snapshot: float = _f(0.25, "share of the envs against a frozen snapshot of the policy "
                                   "(one snapshot per update, drawn from those kept)")
    opp_greedy: float = _f(0.35, "share of the envs against greedy")
    opp_random: float = _f(0.05, "share of the envs against uniform random")
    opp_policy: str = _f("", "an exported policy .npz (tanh, agents.ppo format) to play too, "
                             "with share --opp-policy-weight (experiments.best_response)")
    opp_policy_weight: float = _f(0.0, "share of the envs against --opp-policy")
    match_scores: float = _f(0.0, "share of the training hands dealt at a random match score "
                                  "(each side's uniform over 0, 5, ..., target - 50) instead "
                                  "of 0-0, so that the scores the policy sees in a match's "
                                  "later hands are not new to it")
    snapshots: int = _f(8, "frozen snapshots kept (the oldest is replaced)")
    snapshot_every: int = _f(20, "updates between snapshots")
    time_limit: float = _f(25.0, "minutes of wall time after which training stops (then the "
                                 "final evaluation and export); 0: no limit")
    eval_every: int = _f(2_000_000, "steps between evaluations (0: evaluate only at the end)")
    eval_matches: int = _f(200, "matches per opponent and evaluation (greedy and random), "
                                "seats swapped on each deal")
    checkpoint_every: int = _f(2_000_000, "steps between checkpoints (and at the end)")
    devices: int = _f(0, "devices to split the games over, each playing and learning on its "
                         "share (gradients averaged); on a CPU one device per core. 0: as many "
                         "as there are and the batch divides evenly among")
    seed: int = _f(0, "seed of everything (same seed and devices, same run)")
    out: str = _f("runs/jax", "output directory")
    resume: str | None = _f(None, "a checkpoint.npz to continue from (same network and batch "
                                  "shape); --total-steps counts from that run's start")
    init: str | None = _f(None, "a checkpoint.npz, or an exported policy .npz such as a "
                                "shipped one, whose networks this run starts from (same players "
                                "and --net, and for a checkpoint --critic; its --obs-version may "
                                "be lower: the inputs it lacked start with zero weights, so the "
                                "run starts out playing as that one did; a policy's critic "
                                "starts as copies of its hidden layers under a zero value "
                                "head); optimizer, steps and snapshots start afresh")
    ship: bool = _f(False, "copy policy.npz to agents/policies/ppo_{n}p.npz if it beats the "
                           "shipped policy against greedy")
    progress: bool = _f(True, "show a progress bar")

    def __post_init__(self) -> None:
        self.rules()  # validates players / partnerships / target_score
        for name in ("total_steps", "num_envs", "num_steps", "num_minibatches", "update_epochs",
                     "snapshots", "snapshot_every", "eval_matches", "checkpoint_every"):
            _positive_int(name, getattr(self, name))
        _positive_int("eval_every", self.eval_every, low=0)
        _positive_int("devices", self.devices, low=0)
        if self.devices and (self.num_envs % self.devices
                             or self.minibatch_size % self.devices):
            raise ValueError(f"num_envs={self.num_envs} and the minibatch (num_envs * "
                             f"num_steps / num_minibatches = {self.minibatch_size}) must both "
                             f"split evenly over devices={self.devices}")
        if (self.num_envs * self.num_steps) % self.num_minibatches:
            raise ValueError(f"num_envs * num_steps = {self.num_envs * self.num_steps} is not "
                             f"divisible by num_minibatches={self.num_minibatches}")
        for name in ("lr", "gamma", "gae_lambda", "clip_eps", "ent_coef", "vf_coef",
                     "max_grad_norm", "reward_scale", "time_limit", "opp_self", "opp_snapshot",
                     "opp_greedy", "opp_random", "opp_policy_weight", "match_scores"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
                    math.isfinite(value) and value >= 0):
                raise ValueError(f"{name}={value!r} must be a finite number >= 0")
        if self.opp_self + self.opp_snapshot + self.opp_greedy + self.opp_random + (
                self.opp_policy_weight if self.opp_policy else 0) <= 0:
            raise ValueError("the opponent mix (--opp-self/--opp-snapshot/--opp-greedy/"
                             "--opp-random/--opp-policy-weight) needs a positive weight")
        if self.critic not in CRITICS:
            raise ValueError(f"critic={self.critic!r}: choose one of {', '.join(CRITICS)}")
        observation_spec(self.obs_version)  # ValueError naming the registered versions
        if self.match_scores > 1:
            raise ValueError(f"match_scores={self.match_scores!r} is a share: at most 1")
        if self.init and self.resume:
            raise ValueError("--init starts a new run and --resume continues one: pass one")
        if self.opp_policy_weight and not self.opp_policy:
            raise ValueError("--opp-policy-weight needs --opp-policy PATH")
        if self.opp_policy:
            load_fixed_actor(self.opp_policy, self.rules(), self.obs_version)
        self.hidden()

    def rules(self) -> RuleConfig:
        return RuleConfig(num_players=self.players, partnerships=self.partnerships,
                          target_score=self.target_score)

    def hidden(self) -> list[int]:
        try:
            sizes = [int(x) for x in self.net.split(",")]
        except ValueError:
            sizes = []
        if not sizes or min(sizes) < 1:
            raise ValueError(f"net={self.net!r}: give hidden sizes like 256,256")
        return sizes

    @property
    def batch(self) -> int:
        return self.num_envs * self.num_steps

    @property
    def minibatch_size(self) -> int:
        return self.batch // self.num_minibatches

    def device_count(self, available: int) -> int:
        """The devices the update runs on: ``devices``, or with 0 the most of the ``available``
        that split both the games and each minibatch evenly (``ValueError`` if ``devices`` asks
        for more than there are).

        >>> one_step = {"num_steps": 1, "num_minibatches": 1}
        >>> [Config(num_envs=n, **one_step).device_count(4) for n in (8, 6, 5)]
        [4, 3, 1]
        >>> Config(num_envs=512).device_count(2)
        2
        """
        if self.devices > available:
            raise ValueError(f"devices={self.devices}, but JAX sees {available}")
        if self.devices:
            return self.devices
        return max(d for d in range(1, available + 1)
                   if self.num_envs % d == 0 and self.minibatch_size % d == 0)

    def num_updates(self) -> int:
        return -(-self.total_steps // self.batch)

    #: fields that fix the shapes a checkpoint holds
    SHAPE_FIELDS = ("players", "partnerships", "net", "critic", "obs_version", "num_envs",
                    "num_steps", "snapshots")
    #: what a checkpoint written before a shape field existed was trained with
    SHAPE_DEFAULTS = {"critic": "obs", "obs_version": 2}


def _positive_int(name: str, value, low: int = 1) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{name}={value!r} must be an integer >= {low}")


def build_parser() -> argparse.ArgumentParser:
    return config_parser(Config, "python -m experiments.train_jax", __doc__.split("\n")[0])


# -- network: actor and critic MLPs (tanh), the layout agents.ppo plays ----------------------
def init_mlp(key, sizes: list[int], head_scale: float):
    """Orthogonal initialisation (gain sqrt(2) hidden, ``head_scale`` for the last layer),
    zero biases: PureJaxRL's / SB3's choice."""
    import jax

    layers = []
    keys = jax.random.split(key, len(sizes) - 1)
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:], strict=True)):
        gain = head_scale if i == len(sizes) - 2 else math.sqrt(2)
        w = jax.nn.initializers.orthogonal(gain)(keys[i], (a, b))
        layers.append({"w": w, "b": np.zeros(b, np.float32)})
    return layers


def mlp(layers, x):
    import jax.numpy as jnp

    for layer in layers[:-1]:
        x = jnp.tanh(x @ layer["w"] + layer["b"])
    return x @ layers[-1]["w"] + layers[-1]["b"]


def init_params(key, obs_size: int, num_actions: int, hidden: list[int], hidden_info: int = 0):
    """The actor sees the observation; the critic the observation and ``hidden_info`` more
    inputs (:meth:`SelfPlay.hidden_info`, 0 unless ``--critic full``)."""
    import jax

    ka, kc = jax.random.split(key)
    return {"actor": init_mlp(ka, [obs_size, *hidden, num_actions], 0.01),
            "critic": init_mlp(kc, [obs_size + hidden_info, *hidden, 1], 1.0)}


def critic_value(critic, obs, hidden_info):
    """The value network on the observation and the hidden information it may see."""
    import jax.numpy as jnp

    return mlp(critic, jnp.concatenate([obs, hidden_info], axis=-1))[:, 0]


def masked_logits(actor, obs, mask):
    import jax.numpy as jnp

    return jnp.where(mask, mlp(actor, obs), -1e9)


def sample_actions(key, logits, group: int = 4):
    """One action per row of ``logits`` (``[B, A]``, masked entries at -1e9), drawn from
    ``softmax(logits)`` by inverting its cumulative distribution with one uniform number per
    row, in two levels (``A / group`` groups, then the ``group`` actions of the chosen one).

    ``jax.random.categorical`` (Gumbel-max) draws ``A`` random numbers per row and takes an
    argmax: on XLA's CPU backend that was a sixth of an update. An action of probability 0 is
    never returned (a rounding miss falls back to the most likely action).

    >>> import jax, jax.numpy as jnp
    >>> logits = jnp.array([[0.0, -1e9, 0.0, -1e9, -1e9, -1e9, -1e9, 0.0]])
    >>> keys = jax.random.split(jax.random.PRNGKey(0), 3000)
    >>> a = jax.vmap(lambda k: sample_actions(k, logits)[0])(keys)
    >>> sorted(set(a.tolist())), [round(float((a == i).mean()), 1) for i in (0, 2, 7)]
    ([0, 2, 7], [0.3, 0.3, 0.3])
    """
    import jax
    import jax.numpy as jnp

    b, a = logits.shape
    probs = jax.nn.softmax(logits, axis=-1).reshape(b, a // group, group)
    per_group = probs.sum(-1)
    cdf = jnp.cumsum(per_group, axis=-1)
    u = jax.random.uniform(key, (b,)) * cdf[:, -1]
    g = jnp.minimum(jnp.sum(cdf <= u[:, None], axis=-1), a // group - 1)
    chosen = jnp.take_along_axis(probs, g[:, None, None], axis=1)[:, 0]  # [B, group]
    before = jnp.take_along_axis(cdf - per_group, g[:, None], axis=1)[:, 0]
    inner = jnp.cumsum(chosen, axis=-1)
    e = jnp.minimum(jnp.sum(inner <= (u - before)[:, None], axis=-1), group - 1)
    action = g * group + e
    ok = jnp.take_along_axis(probs.reshape(b, a), action[:, None], axis=1)[:, 0] > 0
    return jnp.where(ok, action, jnp.argmax(logits, axis=-1)).astype(jnp.int32)


def export_npz(actor, path: Path, metadata: dict[str, Any]) -> None:
    """Write the actor in the ``.npz`` format of :mod:`agents.ppo` (``w{i}`` as ``(in, out)``,
    tanh, the action head)."""
    from agents.ppo import save_policy_npz

    arrays = {}
    for i, layer in enumerate(actor[:-1]):
        arrays[f"w{i}"] = np.asarray(layer["w"], np.float32)
        arrays[f"b{i}"] = np.asarray(layer["b"], np.float32)
    arrays["action_w"] = np.asarray(actor[-1]["w"], np.float32)
    arrays["action_b"] = np.asarray(actor[-1]["b"], np.float32)
    meta = {"obs_size": int(arrays["action_w"].shape[0] if len(actor) == 1
                            else arrays["w0"].shape[0]),
            "num_actions": int(arrays["action_w"].shape[1]), "obs_version": OBS_VERSION,
            **metadata}
    save_policy_npz(path, arrays, "tanh", meta)


def load_fixed_actor(path: str, rules: RuleConfig, obs_version: int = OBS_VERSION
                     ) -> list[dict[str, np.ndarray]]:
    """An exported policy (:mod:`agents.ppo`) as this file's actor layers; ``ValueError`` if it
    is not a tanh policy for ``rules``' actions and observation version ``obs_version``."""
    layers, version = load_actor(path, rules)
    if version != obs_version:
        raise ValueError(f"{path!r} reads observation version {version}; this "
                         f"run's policy reads version {obs_version} (--obs-version)")
    return layers


def load_actor(path: str, rules: RuleConfig) -> tuple[list[dict[str, np.ndarray]], int]:
    """An exported policy (:mod:`agents.ppo`) as this file's actor layers, and the observation
    version it reads; ``ValueError`` unless it is a tanh policy for ``rules``."""
    from agents.ppo import NumpyPolicy

    try:
        policy = NumpyPolicy(path)
    except FileNotFoundError as err:
        raise ValueError(str(err)) from None
    if policy.activation != "tanh":
        raise ValueError(f"{path!r} uses {policy.activation}; train_jax plays tanh policies")
    version = policy.obs_spec.version
    want = (observation_spec(version).layout(rules).size, rules.num_tiles * 4)
    if (policy.obs_size, policy.num_actions) != want:
        raise ValueError(f"{path!r} takes {policy.obs_size} inputs and {policy.num_actions} "
                         f"actions; these rules need {want[0]} and {want[1]}")
    layers = [{"w": w.astype(np.float32), "b": b.astype(np.float32)} for w, b in policy.layers]
    return [*layers, {"w": policy.action_w.astype(np.float32),
                      "b": policy.action_b.astype(np.float32)}], version


# -- self-play environment: the learner's turns only ---------------------------------------
OPP_SELF, OPP_SNAPSHOT, OPP_GREEDY, OPP_RANDOM, OPP_POLICY = range(5)


class Games(NamedTuple):
    """A batch of games, each waiting for the learner's move."""

    state: Any  # dominoes_env.jax.State, batched
    side: Any  # (B,) the learner's side
    opp: Any  # (B,) opponent kind (OPP_*)


class SelfPlay:
    """Batched single-agent view of the JAX game for the learner (``reset`` / ``step``), its
    opponents played inside. Every method is a pure function of its arguments."""

    def __init__(self, config: Config, num_envs: int):
        import jax.numpy as jnp

        from dominoes_env.jax import make

        self.env = make(num_players=config.players, partnerships=config.partnerships,
                        target_score=config.target_score, episode="hand",
                        reward_scale=config.reward_scale, obs_version=config.obs_version)
        side = np.asarray(self.env.tables.side)
        self.side_of = jnp.asarray(side, jnp.int32)
        self.seat_of_side = jnp.asarray([int(np.argmax(side == s)) for s in range(side.max() + 1)],
                                        jnp.int32)
        self.num_sides = int(side.max()) + 1
        self.fixed = (load_fixed_actor(config.opp_policy, config.rules(), config.obs_version)
                      if config.opp_policy else None)
        w = np.array([config.opp_self, config.opp_snapshot, config.opp_greedy, config.opp_random,
                      config.opp_policy_weight if self.fixed else 0.0], np.float64)
        self.slots = opponent_slots(w, num_envs)
        self.opp_of_env = jnp.asarray(np.concatenate(
            [np.full(b - a, kind, np.int32) for kind, a, b in self.slots]))
        self.num_snapshots = config.snapshots
        self.match_scores = config.match_scores
        self.obs_size = self.env.observation_shape[0]
        self.num_actions = self.env.num_actions
        self.full_critic = config.critic == "full"
        tables = self.env.tables
        # n - 1 hands, the boneyard and its draw order
        self.hidden_size = (tables.n + 1) * tables.T if self.full_critic else 0
        self.other_seats = jnp.asarray(tables.rel_seats[:, 1:])  # [seat, k - 1]: seat + k
        self.draws = max(tables.B, 1)  # the draw order's scale

    def hidden_info(self, state):
        """What the perfect-information critic (``--critic full``) sees beyond the
        observation of the seat to play: every other seat's hand (relative seats ``1 .. n-1``,
        as the observation orders them) and the tiles in the boneyard, as 0/1 floats, then the
        boneyard's draw order (``1 - k / boneyard_size`` for the tile the ``k``-th next draw
        takes, ``k`` from 0; 0 for the tiles outside it): what the seat to play would need to
        know to play the hand out. An empty ``[B, 0]`` array otherwise. Training only: the
        policy never sees it."""
        import jax.numpy as jnp

        batch = state.observation.shape[0]
        if not self.full_critic:
            return jnp.zeros((batch, 0), jnp.float32)
        x = state._x
        seats = self.other_seats[state.current_player]  # [B, n-1]
        others = jnp.take_along_axis(x.hands, seats[:, :, None], axis=1)  # [B, n-1, T]
        boneyard = ~(x.hands.any(axis=1) | x.played)
        rank = (x.bone_pos - x.drawn[:, None]).astype(jnp.float32)
        order = jnp.where(boneyard, 1.0 - rank / self.draws, 0.0)
        return jnp.concatenate([others.reshape(batch, -1), boneyard, order],
                               1).astype(jnp.float32)

    def _fresh(self, key, n: int):
        import jax

        k_init, k_side, k_scores = jax.random.split(key, 3)
        state = jax.vmap(self.env.init)(jax.random.split(k_init, n))
        if self.match_scores:
            state = self._at_match_scores(state, k_scores)
        side = jax.random.randint(k_side, (n,), 0, self.num_sides)
        return Games(state, side, self.opp_of_env)

    #: the highest random start is this far below the target: the plays before the learner's
    #: first move of a hand score far less, so no new game ends before the learner has moved
    #: (``_play`` would replace it by the same new game again, for ever)
    START_BELOW_TARGET = 50

    def _at_match_scores(self, state, key):
        """A share ``match_scores`` of the new hands moved to a random match score: each side's
        score uniform over 0, 5, ..., target - 50 (a hand that takes a side to the target ends
        the episode, as it ends the match)."""
        import jax
        import jax.numpy as jnp

        k_which, k_score = jax.random.split(key)
        scores = state._x.scores
        top = max(self.env.rules.target_score - self.START_BELOW_TARGET, 0) // 5
        random = jax.random.randint(k_score, scores.shape, 0, top + 1) * 5
        moved = jax.random.uniform(k_which, scores.shape[:1]) < self.match_scores
        scores = jnp.where(moved[:, None], random, scores).astype(scores.dtype)
        state = state.replace(_x=state._x._replace(scores=scores))
        return state.replace(observation=jax.vmap(self.env.observe)(state))

    def _opponent_actions(self, games: Games, actor, frozen_actor, key):
        """The opponents' actions, one block of envs per opponent kind (:func:`opponent_slots`):
        each network or policy runs only on its own envs."""
        import jax
        import jax.numpy as jnp

        from dominoes_env.jax import greedy_policy, random_policy

        parts = []
        for (kind, a, b), k in zip(self.slots, jax.random.split(key, len(self.slots)),
                                   strict=True):
            s = jax.tree.map(lambda x, a=a, b=b: x[a:b], games.state)
            obs, mask = s.observation, s.legal_action_mask
            if kind == OPP_SELF:
                act = sample_actions(k, masked_logits(actor, obs, mask))
            elif kind == OPP_SNAPSHOT:
                act = sample_actions(k, masked_logits(frozen_actor, obs, mask))
            elif kind == OPP_GREEDY:
                act = jax.vmap(lambda st: greedy_policy(self.env, st))(s)
            elif kind == OPP_RANDOM:
                act = jax.vmap(lambda st, kk: random_policy(self.env, st, kk))(
                    s, jax.random.split(k, b - a))
            else:  # a fixed exported policy, played as agents.ppo does
                act = jnp.argmax(masked_logits(self.fixed, obs, mask), axis=1)
            parts.append(act.astype(jnp.int32))
        return jnp.concatenate(parts)

    def _play(self, games: Games, action, pending, fresh: Games, actor, frozen_actor, key):
        """Play until every game waits for the learner: first the learner's ``action`` where
        ``pending``, then its opponents. A game that ends is replaced by ``fresh`` (a new deal)
        and played on to the learner's first turn. Returns the games, the learner's reward in
        the game it moved in, and whether that game ended."""
        import jax
        import jax.numpy as jnp

        seat = self.seat_of_side[games.side]  # its reward is the learner's side's

        def needs_move(g, pending):
            return pending | (self.side_of[g.state.current_player] != g.side)

        def cond(carry):
            g, pending, _, _, _ = carry
            return jnp.any(needs_move(g, pending))

        def body(carry):
            g, pending, reward, done, key = carry
            key, sub = jax.random.split(key)
            moving = needs_move(g, pending)
            # the opponents' networks only run in the rounds where some opponent moves
            a = jax.lax.cond(jnp.any(moving & ~pending),
                             lambda: self._opponent_actions(g, actor, frozen_actor, sub),
                             lambda: jnp.zeros_like(action))
            a = jnp.where(pending, action, a)
            state = jax.vmap(lambda st, a: self.env.step(st, a))(g.state, a)
            r = jnp.take_along_axis(state.rewards, seat[:, None], 1)[:, 0]
            reward = reward + jnp.where(moving & ~done, r, 0.0)
            ended = moving & state.terminated
            g = jax.tree.map(lambda n, o: _where(moving, n, o), g._replace(state=state), g)
            g = jax.tree.map(lambda f, o: _where(ended, f, o), fresh, g)
            return g, jnp.zeros_like(pending), reward, done | ended, key

        zero = jnp.zeros(games.side.shape, jnp.float32)
        games, _, reward, done, _ = jax.lax.while_loop(
            cond, body, (games, pending, zero, jnp.zeros_like(pending), key))
        return games, reward, done

    def reset(self, key, n: int):
        """``n`` new games, the learner at the seat to play first."""
        games = self._fresh(key, n)
        return games._replace(side=self.side_of[games.state.current_player])

    def step(self, games: Games, action, actor, frozen_actor, key):
        """The learner plays ``action`` in every game; returns ``(games, reward, done)`` with
        finished games replaced by fresh ones already at the learner's turn. ``actor`` plays
        the opponents of kind "self", ``frozen_actor`` (a snapshot) those of kind "snapshot"."""
        import jax
        import jax.numpy as jnp

        k_fresh, k_play = jax.random.split(key)
        fresh = self._fresh(k_fresh, action.shape[0])
        pending = jnp.ones(action.shape, bool)
        return self._play(games, action, pending, fresh, actor, frozen_actor, k_play)


def opponent_slots(weights, num_envs: int) -> list[tuple[int, int, int]]:
    """``(kind, start, stop)`` blocks of env indices, one per opponent kind with a positive
    weight, sized in proportion to ``weights`` (largest remainders). An env keeps its opponent
    kind for the whole run, so each opponent network runs on its own block only (drawing the
    kind per episode ran every opponent on every env).

    >>> opponent_slots([0.35, 0.25, 0.35, 0.05, 0.0], 512)
    [(0, 0, 179), (1, 179, 307), (2, 307, 486), (3, 486, 512)]
    """
    w = np.asarray(weights, np.float64)
    share = w / w.sum() * num_envs
    count = np.floor(share).astype(int)
    for i in np.argsort(-(share - count), kind="stable")[: num_envs - count.sum()]:
        count[i] += 1
    slots, start = [], 0
    for kind, c in enumerate(count):
        if c > 0:
            slots.append((kind, start, start + int(c)))
            start += int(c)
    return slots


def _where(pred, a, b):
    import jax.numpy as jnp

    return jnp.where(pred.reshape(pred.shape + (1,) * (a.ndim - 1)), a, b)


# -- the jitted update ---------------------------------------------------------------------
class Transition(NamedTuple):
    obs: Any
    hidden_info: Any  # what the critic sees beyond obs ([B, 0] unless --critic full)
    mask: Any
    action: Any
    logp: Any
    value: Any
    reward: Any
    done: Any


def normalise_advantages(adv, axis: str | None = None):
    """Advantages centred and scaled to unit variance over the last axis (a minibatch's
    rows). With ``axis`` (inside ``shard_map``) each device holds a share of every
    minibatch's rows and the mean and variance are those of the whole minibatch, so that
    the average of the devices' gradients is the gradient of the whole minibatch's loss.
    Normalising all of an epoch's minibatches at once (``adv`` of shape ``[minibatches,
    rows]``) costs two collectives an epoch instead of two a minibatch.

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
    """``pmean`` of a pytree over the mesh axis ``axis`` as one collective on one flat
    vector: on the CPU a collective per leaf (12 weight arrays and the loss's parts) left a
    core idle at each one's rendezvous; one per minibatch gave 10-26% more steps per second
    against the per-leaf update interleaved in one process, and moved
    ``experiments/bench_training.py``'s ratio from 3.8 to 4.5."""
    import jax
    from jax.flatten_util import ravel_pytree

    flat, unravel = ravel_pytree(tree)
    return unravel(jax.lax.pmean(flat, axis))


def ppo_loss(params, batch: Transition, adv, target, config: Config):
    """PPO's clipped loss on a minibatch, and its parts; ``adv`` already normalised
    (:func:`normalise_advantages`)."""
    import jax
    import jax.numpy as jnp

    logits = masked_logits(params["actor"], batch.obs, batch.mask)
    logp_all = jax.nn.log_softmax(logits)
    logp = jnp.take_along_axis(logp_all, batch.action[:, None], 1)[:, 0]
    ratio = jnp.exp(logp - batch.logp)
    pg = -jnp.minimum(ratio * adv, jnp.clip(ratio, 1 - config.clip_eps,
                                            1 + config.clip_eps) * adv).mean()
    value = critic_value(params["critic"], batch.obs, batch.hidden_info)
    v_clip = batch.value + jnp.clip(value - batch.value, -config.clip_eps, config.clip_eps)
    v_loss = 0.5 * jnp.maximum((value - target) ** 2, (v_clip - target) ** 2).mean()
    probs = jnp.exp(logp_all)
    entropy = -jnp.sum(jnp.where(batch.mask, probs * logp_all, 0.0), axis=1).mean()
    total = pg + config.vf_coef * v_loss - config.ent_coef * entropy
    kl = ((ratio - 1) - (logp - batch.logp)).mean()
    return total, {"policy_loss": pg, "value_loss": v_loss, "entropy": entropy,
                   "approx_kl": kl}


def enable_compilation_cache() -> None:
    """Keep compiled updates on disk (``$JAX_COMPILATION_CACHE_DIR``, else
    ``~/.cache/straight-dominoes/jax``): compiling the game takes a minute on a small CPU."""
    import jax

    where = os.environ.get("JAX_COMPILATION_CACHE_DIR") or str(
        Path.home() / ".cache" / "straight-dominoes" / "jax")
    jax.config.update("jax_compilation_cache_dir", where)


def one_device_per_core() -> None:
    """Before JAX starts: one XLA CPU device per core, so that the update runs a share of the
    games on each core (:func:`make_train`); on 2 cores that gave 4-7% more steps per second
    than one device spreading each operation over both. Does nothing once JAX has started
    (its devices are then fixed); an accelerator stays JAX's default device either way."""
    import jax

    try:
        jax.config.update("jax_num_cpu_devices", os.cpu_count() or 1)
    except RuntimeError:  # JAX has started: keep its devices
        pass


@functools.lru_cache(maxsize=4)
def _make_train_cached(frozen: str, devices: int):
    return _make_train(Config(**json.loads(frozen)), devices)


def make_train(config: Config):
    """``(init, update, devices)``: ``init(key) -> runner`` and the jitted ``update(runner) ->
    (runner, metrics)`` = one rollout of ``num_envs x num_steps`` learner decisions and the PPO
    epochs, run on ``devices`` devices (:meth:`Config.device_count`). The same training
    settings give the same (already compiled) functions."""
    import jax

    keep = {k: v for k, v in dataclasses.asdict(config).items()
            if k not in ("out", "resume", "init", "ship", "progress", "time_limit", "eval_every",
                         "eval_matches", "checkpoint_every", "seed")}
    base = dataclasses.asdict(Config())
    devices = config.device_count(len(jax.devices()))
    init, update = _make_train_cached(
        json.dumps({**base, **keep, "out": "", "resume": None, "init": None}, sort_keys=True),
        devices)
    return init, update, devices


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

    local_envs = config.num_envs // devices
    sp = SelfPlay(config, local_envs)
    n_updates = config.num_updates()
    local_batch = local_envs * config.num_steps
    mb_size = config.minibatch_size // devices

    def schedule(count):
        done = count // (config.num_minibatches * config.update_epochs)
        return config.lr * (1.0 - jnp.minimum(done, n_updates - 1) / n_updates)

    tx = optax.chain(optax.clip_by_global_norm(config.max_grad_norm),
                     optax.adam(schedule if config.anneal_lr else config.lr, eps=1e-5))

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
            logits = masked_logits(params["actor"], obs, mask)
            action = sample_actions(k_act, logits)
            logp = jnp.take_along_axis(jax.nn.log_softmax(logits), action[:, None], 1)[:, 0]
            hidden_info = sp.hidden_info(s)
            value = critic_value(params["critic"], obs, hidden_info)
            games, reward, done = sp.step(games, action.astype(jnp.int32), params["actor"],
                                          frozen, k_step)
            ep_return = ep_return + reward
            info = (jnp.where(done, ep_return, 0.0), done)
            ep_return = jnp.where(done, 0.0, ep_return)
            t = Transition(obs, hidden_info, mask, action.astype(jnp.int32), logp, value,
                           reward, done)
            return (games, ep_return, key), (t, info)

        (games, ep_return, _), (traj, (finished, dones)) = jax.lax.scan(
            env_step, (runner["games"], runner["ep_return"], k_roll), None, config.num_steps)
        last_value = critic_value(params["critic"], games.state.observation,
                                  sp.hidden_info(games.state))

        def gae(carry, t):
            next_adv, next_value = carry
            delta = t.reward + config.gamma * next_value * (1 - t.done) - t.value
            adv = delta + config.gamma * config.gae_lambda * (1 - t.done) * next_adv
            return (adv, t.value), adv

        _, advantages = jax.lax.scan(gae, (jnp.zeros_like(last_value), last_value), traj,
                                     reverse=True)
        targets = advantages + traj.value

        def epoch(carry, _):
            params, opt, key = carry
            key, k_perm = jax.random.split(key)
            perm = jax.random.permutation(k_perm, local_batch)
            flat = jax.tree.map(lambda x: x.reshape((local_batch,) + x.shape[2:]),
                                (traj, advantages, targets))
            batch, adv, target = jax.tree.map(
                lambda x: x[perm].reshape((config.num_minibatches, mb_size) + x.shape[1:]), flat)
            adv = normalise_advantages(adv, "d")  # each minibatch's, over all the devices

            def minibatch(carry, mb):
                params, opt = carry
                grads, stats = device_mean(jax.grad(ppo_loss, has_aux=True)(params, *mb, config),
                                           "d")
                updates, opt = tx.update(grads, opt, params)
                return (optax.apply_updates(params, updates), opt), stats

            (params, opt), stats = jax.lax.scan(minibatch, (params, opt), (batch, adv, target))
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


# -- checkpoints -----------------------------------------------------------------------------
def save_checkpoint(runner, config: Config, steps: int, wall: float, path: Path) -> None:
    """Everything the update carries but the games in play (a resumed run deals fresh ones),
    atomically."""
    import jax

    keep = {k: v for k, v in runner.items() if k not in ("games", "ep_return")}
    leaves, _ = jax.tree.flatten(keep)
    meta = {"format": FORMAT, "steps": steps, "wall_s": wall,
            "config": dataclasses.asdict(config)}
    payload = {f"leaf{i}": np.asarray(x) for i, x in enumerate(leaves)}
    payload["meta"] = np.array(json.dumps(meta))
    with atomic_write(path, "wb") as fh:
        np.savez(fh, **payload)


def read_checkpoint(path: str, config: Config, flag: str = "--resume",
                    fields: tuple[str, ...] = Config.SHAPE_FIELDS) -> dict[str, Any]:
    """The checkpoint's metadata, checked against ``config`` on ``fields`` (``ValueError``
    naming ``flag`` and what does not match); the arrays are loaded by :func:`restore` or
    :func:`warm_start`."""
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"{flag} {path!r}: no such checkpoint file")
    try:
        with np.load(p, allow_pickle=False) as data:
            meta = json.loads(str(data["meta"]))
    except (OSError, ValueError, KeyError, json.JSONDecodeError) as err:
        raise ValueError(f"{flag} {path!r} is not a train_jax checkpoint ({err})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ValueError(f"{flag} {path!r} is not a train_jax checkpoint ({FORMAT})")
    for name in fields:
        was = saved_field(meta, name)
        if was != getattr(config, name):
            raise ValueError(f"{flag} {path!r} was trained with {name}={was!r}, "
                             f"this run has {name}={getattr(config, name)!r}")
    return meta


def saved_field(meta: dict[str, Any], name: str):
    """A config field of a checkpoint's metadata (the old default where it predates it)."""
    return meta.get("config", {}).get(name, Config.SHAPE_DEFAULTS.get(name))


def restore(path: str, runner):
    import jax

    keep = {k: v for k, v in runner.items() if k not in ("games", "ep_return")}
    leaves, tree = jax.tree.flatten(keep)
    with np.load(path, allow_pickle=False) as data:
        loaded = [data[f"leaf{i}"] for i in range(len(leaves))]
    for old, new in zip(leaves, loaded, strict=True):
        if np.shape(old) != new.shape:
            raise ValueError(f"--resume {path!r}: an array has shape {new.shape}, expected "
                             f"{np.shape(old)}")
    # each array where the update expects it (replicated over its devices)
    restored = jax.tree.unflatten(tree, [jax.device_put(x, old.sharding)
                                         for old, x in zip(leaves, loaded, strict=True)])
    return {**runner, **restored}


#: what a warm start (``--init``) from a checkpoint must share with it
INIT_FIELDS = ("players", "partnerships", "net", "critic")


def is_policy_file(path: str) -> bool:
    """Whether ``path`` holds an exported policy (:mod:`agents.ppo`) rather than a checkpoint."""
    try:
        with np.load(path, allow_pickle=False) as data:
            return "format" in data.files and "meta" not in data.files
    except (OSError, ValueError):
        return False


def check_init(path: str, config: Config) -> int:
    """The observation version of the ``--init`` file at ``path``, a checkpoint or an exported
    policy (``ValueError`` unless this run can start from it)."""
    if is_policy_file(path):
        version = init_policy(path, config)[1]
    else:
        version = saved_field(read_checkpoint(path, config, "--init", INIT_FIELDS),
                              "obs_version")
    if version not in OBSERVATION_SPECS or version > config.obs_version:
        raise ValueError(f"--init {path!r} reads observation version {version!r}; this run "
                         f"reads {config.obs_version} and can only start from a version up "
                         f"to it")
    return version


def init_policy(path: str, config: Config) -> tuple[list[dict[str, np.ndarray]], int]:
    """The actor layers of the exported policy at ``path`` and the observation version it
    reads (``ValueError`` unless it has this run's players and hidden layers)."""
    try:
        actor, version = load_actor(path, config.rules())
    except ValueError as err:
        raise ValueError(f"--init: {err}") from None
    hidden = [int(layer["w"].shape[1]) for layer in actor[:-1]]
    if hidden != config.hidden():
        raise ValueError(f"--init {path!r} has hidden layers {','.join(map(str, hidden))}; "
                         f"this run has --net {config.net}")
    return actor, version


def policy_networks(actor: list[dict[str, np.ndarray]], hidden_info: int) -> dict[str, Any]:
    """The networks a run starts from when ``--init`` names an exported policy (``actor``, as
    :func:`init_policy` reads it), which keeps no value network: that actor, and a critic made
    of copies of its hidden layers (the features it learned; ``hidden_info`` more inputs at
    zero weights for ``--critic full``) under a zero value head. The critic starts out
    predicting 0 everywhere and learns its head first (no gradient reaches its hidden layers
    until the head moves)."""
    first, *rest = actor[:-1]
    critic = [{"w": np.concatenate([first["w"], np.zeros((hidden_info, first["w"].shape[1]),
                                                          np.float32)]),
               "b": first["b"].copy()},
              *({"w": layer["w"].copy(), "b": layer["b"].copy()} for layer in rest),
              {"w": np.zeros((actor[-2]["w"].shape[1], 1), np.float32),
               "b": np.zeros(1, np.float32)}]
    return {"actor": actor, "critic": critic}


def checkpoint_networks(path: str, runner) -> list[np.ndarray]:
    """The network arrays of the checkpoint at ``path``, in the order of ``runner``'s."""
    import jax

    keep = {k: v for k, v in runner.items() if k not in ("games", "ep_return")}
    paths_leaves, _ = jax.tree_util.tree_flatten_with_path(keep)
    with np.load(path, allow_pickle=False) as data:
        if len([k for k in data.files if k.startswith("leaf")]) != len(paths_leaves):
            raise ValueError(f"--init {path!r} does not hold this trainer's arrays")
        loaded = [data[f"leaf{i}"] for i in range(len(paths_leaves))]
    return [x for (key_path, _), x in zip(paths_leaves, loaded, strict=True)
            if key_path[0].key == "params"]


def warm_start(path: str, runner, config: Config):
    """``runner`` with the networks of the checkpoint or exported policy at ``path``
    (``--init``; :func:`policy_networks` for a policy), every snapshot a copy of that actor,
    and this run's fresh optimizer, games and counters.

    A file of a lower observation version (versions extend each other at the end) gets zero
    weights for the inputs it lacked, inserted after its observation (before the hidden
    information a ``--critic full`` value network also reads): the network computes what it
    did, and learns to use the new inputs from there (network surgery, as OpenAI Five grew its
    inputs between runs)."""
    import jax
    import jax.numpy as jnp

    version = check_init(path, config)
    rules = config.rules()
    old_size = observation_spec(version).layout(rules).size
    new_size = observation_spec(config.obs_version).layout(rules).size
    params = runner["params"]
    flat_params, params_tree = jax.tree.flatten(params)
    if is_policy_file(path):
        hidden_info = int(np.shape(params["critic"][0]["w"])[0]) - new_size
        got = jax.tree.leaves(policy_networks(init_policy(path, config)[0], hidden_info))
    else:
        got = checkpoint_networks(path, runner)
    grown = []
    for new, old in zip(flat_params, got, strict=True):
        want = tuple(np.shape(new))
        if old.shape != want:
            extra = new_size - old_size
            if old.ndim != 2 or old.shape[0] + extra != want[0] or old.shape[1] != want[1]:
                raise ValueError(f"--init {path!r}: an array has shape {old.shape}, expected "
                                 f"{want}")
            old = np.concatenate([old[:old_size], np.zeros((extra, want[1]), old.dtype),
                                  old[old_size:]])
        grown.append(jax.device_put(old, new.sharding))
    params = jax.tree.unflatten(params_tree, grown)
    snaps = jax.tree.map(lambda x, s: jax.device_put(jnp.stack([x] * s.shape[0]), s.sharding),
                         params["actor"], runner["snaps"])
    return {**runner, "params": params, "snaps": snaps}


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
    """Win rates of the exported policy against each opponent (Wilson intervals, margins):
    :func:`experiments.train_ppo.evaluate`, the arena of the tournaments."""
    from agents.arena import derive_seed

    from .train_ppo import evaluate

    row: dict[str, float] = {}
    for opponent in opponents:
        res = evaluate(str(path), config.rules(), opponent, matches or config.eval_matches,
                       derive_seed(config.seed, "eval"))
        row.update({f"{k}_vs_{opponent}": round(v, 4) for k, v in res.items()})
    return row


def append_csv(path: Path, row: dict[str, Any]) -> None:
    new = not path.exists()
    with open(path, "a", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(row))
        if new:
            writer.writeheader()
        writer.writerow(row)


# -- the run -------------------------------------------------------------------------------
def train(config: Config, command: str = "") -> Path:
    """Train; write ``policy.npz`` + ``policy.json`` into ``config.out``; returns its path."""
    import jax
    from tqdm import tqdm

    meta_resumed = read_checkpoint(config.resume, config) if config.resume else None
    out = Path(config.out)
    if meta_resumed is None and (out / "checkpoint.npz").exists():
        raise FileExistsError(f"{out} holds an earlier run; pass --resume "
                              f"{out / 'checkpoint.npz'} or a new --out")
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.json").write_text(json.dumps(dataclasses.asdict(config), indent=2))
    rules = config.rules()
    started = time.time()
    enable_compilation_cache()
    init, update, devices = make_train(config)
    runner = init(jax.random.PRNGKey(config.seed))
    steps, wall_before = 0, 0.0
    if meta_resumed is not None:
        runner = restore(config.resume, runner)
        steps, wall_before = int(meta_resumed["steps"]), float(meta_resumed["wall_s"])
    elif config.init:
        runner = warm_start(config.init, runner, config)
    tb = TensorBoard(out / "tb")

    def wall() -> float:
        return round(wall_before + time.time() - started, 1)

    def export(path: Path) -> dict[str, Any]:
        meta = {"rules": rules.to_dict(), "obs_version": config.obs_version, "steps": steps,
                "wall_s": wall(), "seed": config.seed, "devices": devices,
                "trainer": "experiments.train_jax",
                "config": dataclasses.asdict(config), "command": command}
        export_npz(runner["params"]["actor"], path, meta)
        return meta

    def evaluate_now() -> None:
        export(out / "eval_policy.npz")
        row = {"steps": steps, "wall_s": wall(), **evaluate_policy(out / "eval_policy.npz",
                                                                    config)}
        tb.scalars({f"eval/{k}": v for k, v in row.items() if k not in ("steps",)}, steps)
        append_csv(out / "eval.csv", row)
        tqdm.write(f"[eval] steps {steps:,}: vs greedy {row['win_rate_vs_greedy']:.3f} "
                   f"[{row['ci_low_vs_greedy']:.3f}, {row['ci_high_vs_greedy']:.3f}], "
                   f"vs random {row['win_rate_vs_random']:.3f}")

    if steps == 0 and config.eval_every:
        evaluate_now()  # the learning curve starts at the initial policy
    next_eval = (steps // config.eval_every + 1) * config.eval_every if config.eval_every else 0
    next_ckpt = (steps // config.checkpoint_every + 1) * config.checkpoint_every
    bar = tqdm(total=config.num_updates() * config.batch, initial=steps, unit="step",
               unit_scale=True, disable=not config.progress, dynamic_ncols=True)
    last_eval = -1 if steps else 0
    interrupted = False
    try:
        while steps < config.total_steps:
            runner, metrics = update(runner)
            steps += config.batch
            bar.update(config.batch)
            m = {k: float(v) for k, v in metrics.items()}
            tb.scalars({f"train/{k}": v for k, v in m.items()}, steps)
            bar.set_postfix(ret=f"{m['episode_return']:+.1f}", ent=f"{m['entropy']:.2f}",
                            refresh=False)
            if config.eval_every and steps >= next_eval:
                evaluate_now()
                last_eval = steps
                next_eval += config.eval_every
            if steps >= next_ckpt:
                save_checkpoint(runner, config, steps, wall(), out / "checkpoint.npz")
                next_ckpt += config.checkpoint_every
            if config.time_limit and time.time() - started > config.time_limit * 60:
                tqdm.write(f"[time limit] {config.time_limit:g} minutes: stopping at "
                           f"{steps:,} steps")
                interrupted = True
                break
    except KeyboardInterrupt:  # Ctrl-C: keep what was learned, evaluate and export it
        interrupted = True
    finally:
        bar.close()
        save_checkpoint(runner, config, steps, wall(), out / "checkpoint.npz")
    if last_eval != steps:
        evaluate_now()
    tb.close()
    meta = export(out / "policy.npz")
    (out / "policy.json").write_text(json.dumps(meta, indent=2))
    print(f"trained {steps:,} steps in {wall():.0f} s{' (interrupted)' if interrupted else ''}; "
          f"policy: {out / 'policy.npz'}")
    if config.ship:
        ship(out, config)
    return out / "policy.npz"


def ship(out: Path, config: Config, matches: int = 1000) -> bool:
    """Copy ``policy.npz`` to the shipped place if it beats the shipped policy against greedy
    over the same ``matches`` matches; prints both figures either way."""
    from agents.ppo import shipped_policy_path

    target = shipped_policy_path(config.players)
    new = evaluate_policy(out / "policy.npz", config, ("greedy",), matches)["win_rate_vs_greedy"]
    old = (evaluate_policy(target, config, ("greedy",), matches)["win_rate_vs_greedy"]
           if target.is_file() else -1.0)
    print(f"vs greedy over {matches} matches: new {new:.3f}, shipped {old:.3f}")
    if new <= old:
        print(f"not shipped: {target} is at least as strong")
        return False
    shutil.copyfile(out / "policy.npz", target)
    shutil.copyfile(out / "policy.json", target.with_suffix(".json"))
    print(f"shipped: {target}")
    return True


def main(argv: list[str] | None = None) -> int:
    one_device_per_core()
    args = build_parser().parse_args(argv)
    try:
        config = Config(**vars(args))
        if config.resume:
            read_checkpoint(config.resume, config)
        if config.init:
            check_init(config.init, config)
        import jax

        config.device_count(len(jax.devices()))
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    command = "python -m experiments.train_jax " + " ".join(
        shlex.quote(a) for a in (sys.argv[1:] if argv is None else argv))
    try:
        train(config, command)
    except FileExistsError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
