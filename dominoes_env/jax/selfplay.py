"""Self-play for JAX trainers: a batch of games seen from the learner's seats only.

`SelfPlay` turns the JAX game (`dominoes_env.jax.make`, one hand per episode) into a batched
single-agent environment: `reset` deals games and plays them to the learner's first turn,
`step` plays the learner's actions and then every opponent move up to the learner's next turn,
replacing a finished game by a new deal. The learner controls every seat of its side (both
partners with four players in partnerships); the other seats play that env's opponent. Each
env keeps one opponent kind for the whole run (`opponent_slots`): the current policy (`self`),
a frozen snapshot of it (`snapshot`), `greedy`, uniform `random`, or a fixed exported policy
(`policy`). Every method is a pure function of its arguments, so `reset` and `step` work under
`jax.jit` (a trainer's whole rollout is one `lax.scan` over `step`).

The learner's reward for a step is its side's `score_delta` reward over everything played
until its next turn, or with a `match_equity` (`dominoes_env.jax.match_equity`) how much that
play changed its side's chance of winning the match, in points times `reward_scale`:
`2 * target * reward_scale` times the change (a won match is worth `+target` points, a lost one
`-target`, as `search:value=match` values a hand's end). The changes add up over a hand to the
change from its start to its end, so the policy learns to win matches, not to maximise points;
an illegal action still gets the env's penalty. Points the opponents make before the learner's
first move of a hand are credited to no step (they do not depend on the learner's actions).

>>> import jax, jax.numpy as jnp
>>> from dominoes_env.core import RuleConfig
>>> sp = SelfPlay(RuleConfig(), 8, opponents={"greedy": 1})
>>> reset, step = jax.jit(sp.reset, static_argnums=1), jax.jit(sp.step)  # as Pgx's envs
>>> games = reset(jax.random.PRNGKey(0), 8)
>>> games.state.observation.shape, games.state.legal_action_mask.shape
((8, 234), (8, 112))
>>> first_legal = jnp.argmax(games.state.legal_action_mask, axis=1)
>>> games, reward, done = step(games, first_legal, None, None, jax.random.PRNGKey(1))
>>> reward.shape, done.dtype
((8,), dtype('bool'))

Needs the `jax` extra.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from dominoes_env.core import SCORE_UNIT, RuleConfig
from dominoes_env.core.validation import ParameterTypeError, as_bool, as_float, as_int, short_repr
from dominoes_env.obs import DEFAULT_VERSION, VERSIONS

from .env import make
from .game import rows_of
from .match_equity import MatchRace, MatchTable
from .networks import check_layers, check_matmul_dtype, masked_logits, sample_actions
from .policies import greedy_policy, random_policy

#: the opponent kinds, in the order of their codes (`Games.opp`)
OPPONENT_KINDS = ("self", "snapshot", "greedy", "random", "policy")
OPP_SELF, OPP_SNAPSHOT, OPP_GREEDY, OPP_RANDOM, OPP_POLICY = range(len(OPPONENT_KINDS))
#: the observation versions the JAX game builds (`dominoes_env.jax.observation`)
JAX_OBS_VERSIONS = (2, 3, 4, 5)


def served_obs_versions() -> tuple[int, ...]:
    """The registered observation versions a JAX trainer can play on: those the JAX game
    builds.

    >>> served_obs_versions()
    (2, 3, 4, 5)
    """
    return tuple(v for v in sorted(VERSIONS) if v in JAX_OBS_VERSIONS)


def check_obs_version(version: int) -> int:
    """`version`, or a `ValueError` naming it and the versions the JAX game serves.

    >>> check_obs_version(6)
    Traceback (most recent call last):
    ...
    ValueError: observation version 6 is not one the JAX game serves; it serves 2, 3, 4, 5
    """
    if isinstance(version, bool) or version not in served_obs_versions():
        raise ValueError(f"observation version {version!r} is not one the JAX game serves; it "
                         f"serves {', '.join(map(str, served_obs_versions()))}")
    return version


class Games(NamedTuple):
    """A batch of games, each waiting for the learner's move."""

    state: Any  # dominoes_env.jax.State, batched
    side: Any  # (B,) the learner's side
    opp: Any  # (B,) the opponent kind (an index into OPPONENT_KINDS)


def opponent_slots(weights, num_envs: int) -> list[tuple[int, int, int]]:
    """`(kind, start, stop)` blocks of env indices, one per opponent kind with a positive
    weight (`weights` in the order of `OPPONENT_KINDS`), sized in proportion to the weights
    (largest remainders). An env keeps its opponent kind for the whole run, so each opponent
    network runs on its own block only (drawing the kind per episode would run every opponent
    on every env).

    >>> opponent_slots([0.35, 0.25, 0.35, 0.05, 0.0], 512)
    [(0, 0, 179), (1, 179, 307), (2, 307, 486), (3, 486, 512)]
    """
    w = np.asarray(weights, np.float64)
    if w.ndim != 1 or not np.isfinite(w).all() or (w < 0).any() or w.sum() <= 0:
        raise ValueError(f"weights={list(weights)!r}: give finite weights >= 0, one positive")
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


class SelfPlay:
    """`num_envs` games under `rules` (one hand per episode), the learner's turns only.

    `opponents` maps opponent kinds (`OPPONENT_KINDS`) to their share of the envs (default: the
    train_jax recipe's self 0.35, snapshot 0.25, greedy 0.35, random 0.05); kind `policy` plays
    `fixed_actor` (an actor of `dominoes_env.jax.policy_files.load_fixed_actor`) by its most
    probable legal action, as `agents.ppo` does. Every seat reads observation version
    `obs_version`; rewards are `score_delta` points times `reward_scale`, or with
    `match_equity` (a `MatchTable` for two sides, a `MatchRace` for more, of these rules'
    target) the change of the learner's chance to win the match, in points. A share
    `match_scores` of the new hands is dealt at a random match score instead of 0-0.
    `full_critic` makes `hidden_info` return what a perfect-information critic sees.
    `matmul_dtype` is how the current policy and its snapshots compute their layers
    (`dominoes_env.jax.networks.mlp`: the learner's own setting, so that its opponents play
    the policy it samples from); the fixed policy is always played in float32, as `agents.ppo`
    plays it.

    Every argument is checked here, before anything is traced: `fixed_actor` must be a network
    (a list of layers `{"w", "b"}`) taking the observation (`obs_size` inputs) and giving one
    logit per action (`num_actions`). `reset` deals exactly `num_envs` games (each env's
    opponent kind is fixed), and `step` takes one action per game of such a batch."""

    #: the highest random start is this far below the target: the plays before the learner's
    #: first move of a hand score far less, so a new game rarely ends before the learner has
    #: moved (`play_to_learner` deals such a game again)
    START_BELOW_TARGET = 50

    def __init__(self, rules: RuleConfig, num_envs: int, *,
                 opponents: Mapping[str, float] | None = None, fixed_actor=None,
                 obs_version: int = DEFAULT_VERSION, reward_scale: float = 0.05,
                 match_scores: float = 0.0, full_critic: bool = False,
                 matmul_dtype=jnp.float32,
                 match_equity: MatchRace | MatchTable | None = None):
        if not isinstance(rules, RuleConfig):
            raise TypeError(f"rules must be a RuleConfig, not {type(rules).__name__}")
        num_envs = as_int("num_envs", num_envs, 1)
        if opponents is not None and not isinstance(opponents, Mapping):
            raise ParameterTypeError(f"opponents={short_repr(opponents)} must map opponent "
                                     f"kinds to shares, not {type(opponents).__name__}")
        mix = dict({"self": 0.35, "snapshot": 0.25, "greedy": 0.35, "random": 0.05}
                   if opponents is None else opponents)
        unknown = sorted(map(str, set(mix) - set(OPPONENT_KINDS)))
        if unknown:
            raise ValueError(f"unknown opponent kind(s) {', '.join(unknown)}; allowed: "
                             f"{', '.join(OPPONENT_KINDS)}")
        mix = {kind: as_float(f"opponents[{kind!r}]", share, 0) for kind, share in mix.items()}
        if mix.get("policy", 0) and fixed_actor is None:
            raise ValueError("opponent kind 'policy' needs fixed_actor")
        share = as_float("match_scores", match_scores)
        if not 0 <= share <= 1:
            raise ValueError(f"match_scores={match_scores!r} is a share: between 0 and 1")
        match_scores = share
        full_critic = as_bool("full_critic", full_critic)
        if match_equity is not None and not isinstance(match_equity, (MatchRace, MatchTable)):
            raise ParameterTypeError(f"match_equity must be a MatchRace or a MatchTable, not "
                                     f"{type(match_equity).__name__}")
        self.env = make(rules=rules, episode="hand", reward_scale=reward_scale,
                        obs_version=check_obs_version(obs_version))
        tables = self.env.tables
        side = np.asarray(tables.side)
        self.side_of = jnp.asarray(side, jnp.int32)
        self.seat_of_side = jnp.asarray([int(np.argmax(side == s)) for s in range(side.max() + 1)],
                                        jnp.int32)
        self.num_sides = int(side.max()) + 1
        self.obs_size = self.env.observation_shape[0]
        self.num_actions = self.env.num_actions
        self.num_envs = num_envs
        if fixed_actor is not None:
            check_layers("fixed_actor", fixed_actor, self.obs_size, self.num_actions)
        self.fixed = fixed_actor
        self.slots = opponent_slots([float(mix.get(k, 0.0)) for k in OPPONENT_KINDS], num_envs)
        self.opp_of_env = jnp.asarray(np.concatenate(
            [np.full(b - a, kind, np.int32) for kind, a, b in self.slots]))
        self.match_scores = match_scores
        self.equity = match_equity
        if match_equity is not None:
            if match_equity.target_score != rules.target_score:
                raise ValueError(f"match_equity was built for target {match_equity.target_score}"
                                 f", not these rules' {rules.target_score}")
            if isinstance(match_equity, MatchTable) and self.num_sides != 2:
                raise ValueError(f"a MatchTable is for two sides; these rules have "
                                 f"{self.num_sides}: give a MatchRace")
            # a won match is worth +target points, a lost one -target (2 * target apart)
            self.equity_scale = 2.0 * rules.target_score * float(reward_scale)
        self.full_critic = full_critic
        self.matmul_dtype = check_matmul_dtype(matmul_dtype)
        # what the perfect-information critic sees: n - 1 hands, the boneyard and its order
        self.hidden_size = (tables.n + 1) * tables.T if full_critic else 0
        self.other_seats = jnp.asarray(tables.rel_seats[:, 1:])  # [seat, k - 1]: seat + k
        self.draws = max(tables.B, 1)  # the draw order's scale

    def hidden_info(self, state):
        """What the perfect-information critic (`full_critic`) sees beyond the observation of
        the seat to play: every other seat's hand (relative seats `1 .. n-1`, as the
        observation orders them) and the tiles in the boneyard, as 0/1 floats, then the
        boneyard's draw order (`1 - k / boneyard_size` for the tile the `k`-th next draw takes,
        `k` from 0; 0 for the tiles outside it): what the seat to play would need to know to
        play the hand out. An empty `[B, 0]` array otherwise. For training only: a policy must
        never see it. `state` is a batch of states (`Games.state`: observations `[B, obs_size]`).
        """
        shape = tuple(getattr(getattr(state, "observation", None), "shape", None) or ())
        if len(shape) != 2 or shape[1] != self.obs_size:
            raise ValueError(f"state must be a batch of states (observations [B, "
                             f"{self.obs_size}], as Games.state holds them), not one with "
                             f"observations of shape {shape}")
        batch = shape[0]
        if not self.full_critic:
            return jnp.zeros((batch, 0), jnp.float32)
        x = state.game_state
        seats = self.other_seats[state.current_player]  # [B, n-1]
        hands = jax.vmap(self.env.game.hand_rows)(x)  # [B, n, T]
        others = jnp.take_along_axis(hands, seats[:, :, None], axis=1)  # [B, n-1, T]
        boneyard = ~(hands.any(axis=1) | rows_of(self.env.tables, x.played))
        rank = (x.bone_pos - x.drawn[:, None]).astype(jnp.float32)
        order = jnp.where(boneyard, 1.0 - rank / self.draws, 0.0)
        return jnp.concatenate([others.reshape(batch, -1), boneyard, order],
                               1).astype(jnp.float32)

    def reset(self, key, n: int) -> Games:
        """`n` new games, the learner at the seat to play first. `n` is `num_envs` (each env
        keeps the opponent kind `opponent_slots` gave it); it is a Python integer, static under
        `jax.jit`, as Pgx's `init` batch sizes are."""
        n = as_int("n", n, 1)
        if n != self.num_envs:
            raise ValueError(f"n={n} games, but this SelfPlay plays num_envs={self.num_envs} "
                             "(one opponent kind per env)")
        games = self._fresh(key, n)
        return games._replace(side=self.side_of[games.state.current_player])

    def step(self, games: Games, action, actor, frozen_actor, key):
        """The learner plays `action` in every game; returns `(games, reward, done)` with
        finished games replaced by fresh ones already at the learner's turn. `actor` plays the
        opponents of kind `self`, `frozen_actor` (a snapshot) those of kind `snapshot` (either
        may be `None` when no env has that kind). `games` is a batch of `num_envs` games (as
        `reset` and `step` return them) and `action` one integer action per game."""
        self._check_step(games, action, actor, frozen_actor)
        k_fresh, k_play = jax.random.split(key)
        fresh = self._fresh(k_fresh, action.shape[0])
        pending = jnp.ones(action.shape, bool)
        return self.play_to_learner(games, action, pending, fresh, actor, frozen_actor, k_play)

    def _check_step(self, games: Games, action, actor, frozen_actor) -> None:
        """`step`'s arguments checked, before anything is traced."""
        if not isinstance(games, Games):
            raise ParameterTypeError(f"games must be Games (as reset returns them), not "
                                     f"{type(games).__name__}")
        side = tuple(getattr(games.side, "shape", ()) or ())
        if side != (self.num_envs,):
            raise ValueError(f"games holds a batch of shape {side}; this SelfPlay plays "
                             f"num_envs={self.num_envs} games")
        shape = getattr(action, "shape", None)
        dtype = getattr(action, "dtype", None)
        if shape is None or dtype is None:
            raise ParameterTypeError(f"action={short_repr(action)} must be an array of one "
                                     f"action per game, not {type(action).__name__}")
        if tuple(shape) != (self.num_envs,):
            raise ValueError(f"action has shape {tuple(shape)}; give one action per game, "
                             f"shape ({self.num_envs},)")
        if not jnp.issubdtype(dtype, jnp.integer):
            raise ParameterTypeError(f"action has dtype {dtype}; actions are integer codes")
        kinds = {kind for kind, _, _ in self.slots}
        for name, layers, kind in (("actor", actor, OPP_SELF),
                                   ("frozen_actor", frozen_actor, OPP_SNAPSHOT)):
            if layers is None:
                if kind in kinds:
                    raise ValueError(f"{name} is None, but some envs play opponent kind "
                                     f"{OPPONENT_KINDS[kind]!r}, which it plays")
            else:
                check_layers(name, layers, self.obs_size, self.num_actions)

    def _fresh(self, key, n: int) -> Games:
        k_init, k_side, k_scores = jax.random.split(key, 3)
        state = jax.vmap(self.env.init)(jax.random.split(k_init, n))
        if self.match_scores:
            state = self._at_match_scores(state, k_scores)
        side = jax.random.randint(k_side, (n,), 0, self.num_sides, jnp.int32)
        return Games(state, side, self.opp_of_env)

    def _at_match_scores(self, state, key):
        """A share `match_scores` of the new hands moved to a random match score: each side's
        score uniform over 0, 5, ..., target - 50 (a hand that takes a side to the target ends
        the episode, as it ends the match)."""
        k_which, k_score = jax.random.split(key)
        scores = state.game_state.scores
        top = max(self.env.rules.target_score - self.START_BELOW_TARGET, 0) // SCORE_UNIT
        random = jax.random.randint(k_score, scores.shape, 0, top + 1, jnp.int32) * SCORE_UNIT
        moved = jax.random.uniform(k_which, scores.shape[:1], jnp.float32) < self.match_scores
        scores = jnp.where(moved[:, None], random, scores).astype(scores.dtype)
        state = state.with_game_state(state.game_state._replace(scores=scores))
        return state.replace(observation=jax.vmap(self.env.observe)(state))

    def _chance(self, state, side):
        """Each game's chance that `side` (one per game) wins its match (`match_equity`)."""
        x = state.game_state
        return jax.vmap(self.equity.chance)(x.scores, x.winner, side)

    def _opponent_actions(self, games: Games, actor, frozen_actor, key):
        """The opponents' actions, one block of envs per opponent kind (`opponent_slots`):
        each network or policy runs only on its own envs."""
        parts = []
        for (kind, a, b), k in zip(self.slots, jax.random.split(key, len(self.slots)),
                                   strict=True):
            s = jax.tree.map(lambda x, a=a, b=b: x[a:b], games.state)
            obs, mask = s.observation, s.legal_action_mask
            if kind == OPP_SELF:
                act = sample_actions(k, masked_logits(actor, obs, mask, self.matmul_dtype))
            elif kind == OPP_SNAPSHOT:
                act = sample_actions(k, masked_logits(frozen_actor, obs, mask,
                                                      self.matmul_dtype))
            elif kind == OPP_GREEDY:
                act = jax.vmap(lambda st: greedy_policy(self.env, st))(s)
            elif kind == OPP_RANDOM:
                act = jax.vmap(lambda st, kk: random_policy(self.env, st, kk))(
                    s, jax.random.split(k, b - a))
            else:  # a fixed exported policy, played as agents.ppo does
                act = jnp.argmax(masked_logits(self.fixed, obs, mask), axis=1)
            parts.append(act.astype(jnp.int32))
        return jnp.concatenate(parts)

    def play_to_learner(self, games: Games, action, pending, fresh: Games, actor, frozen_actor,
                        key):
        """`step`'s play, with the new deals given: play until every game waits for the
        learner, first the learner's `action` where `pending` (one flag per game; `step`:
        everywhere), then its opponents. A game that ends is replaced by `fresh` (a batch of
        new games, as `reset` deals them) and played on to the learner's first turn. Returns
        the games, the learner's reward in the game it moved in, and whether that game ended.
        The arguments are checked as `step` checks them, and `pending` and `fresh` are of the
        batch's size.

        A new game can end before the learner's first move in it: at four players without
        partnerships and without a boneyard, the learner's seat may pass through a whole hand
        (one hand is an episode here). Replaced by the same `fresh` game, it would end the same
        way again under opponents that play it the same way (greedy, a fixed policy), and the
        loop would never end (a 4-player `train_jax` run meets such a deal within tens of
        updates). So such a game gets a deal of its own: when one ends a second time in a call,
        `fresh` is dealt anew, and the loop ends."""
        self._check_step(games, action, actor, frozen_actor)
        for name, shape in (("pending", getattr(pending, "shape", None)),
                            ("fresh", getattr(getattr(fresh, "side", None), "shape", None))):
            if shape is None or tuple(shape) != (self.num_envs,):
                raise ValueError(f"{name} must hold one entry per game, shape "
                                 f"({self.num_envs},), not {short_repr(shape)}")
        seat = self.seat_of_side[games.side]  # its reward is the learner's side's
        n = games.side.shape[0]

        def needs_move(g, pending):
            return pending | (self.side_of[g.state.current_player] != g.side)

        def cond(carry):
            g, pending = carry[:2]
            return jnp.any(needs_move(g, pending))

        def body(carry):
            g, pending, reward, done, key, fresh = carry
            key, sub = jax.random.split(key)
            moving = needs_move(g, pending)
            # the opponents' networks only run in the rounds where some opponent moves
            a = jax.lax.cond(jnp.any(moving & ~pending),
                             lambda: self._opponent_actions(g, actor, frozen_actor, sub),
                             lambda: jnp.zeros_like(action))
            a = jnp.where(pending, action, a)
            state = jax.vmap(lambda st, a: self.env.step(st, a))(g.state, a)
            r = jnp.take_along_axis(state.rewards, seat[:, None], 1)[:, 0]
            if self.equity is not None:  # an illegal action (the game unchanged) keeps its penalty
                x = state.game_state
                illegal = state.terminated & (x.winner < 0) & (x.turn >= 0)
                change = self._chance(state, g.side) - self._chance(g.state, g.side)
                r = jnp.where(illegal, r, self.equity_scale * change)
            reward = reward + jnp.where(moving & ~done, r, 0.0)
            ended = moving & state.terminated
            g = jax.tree.map(lambda n, o: _where(moving, n, o), g._replace(state=state), g)
            fresh = jax.lax.cond(jnp.any(ended & done),  # a replacement that ended too
                                 lambda: self._fresh(jax.random.fold_in(sub, 1), n),
                                 lambda: fresh)
            g = jax.tree.map(lambda f, o: _where(ended, f, o), fresh, g)
            return g, jnp.zeros_like(pending), reward, done | ended, key, fresh

        zero = jnp.zeros(games.side.shape, jnp.float32)
        games, _, reward, done, _, _ = jax.lax.while_loop(
            cond, body, (games, pending, zero, jnp.zeros_like(pending), key, fresh))
        return games, reward, done


def _where(pred, a, b):
    """`a` where `pred` (one flag per game) else `b`, for leaves with more axes."""
    return jnp.where(pred.reshape(pred.shape + (1,) * (a.ndim - 1)), a, b)
