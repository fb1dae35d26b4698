"""``Env``: Straight Dominoes as a Pgx environment (``pgx.Env`` v2 API), batched with ``vmap``.

>>> import jax
>>> from dominoes_env.jax import make
>>> env = make(num_players=2, target_score=100)
>>> state = jax.jit(env.init)(jax.random.PRNGKey(0))
>>> state.observation.shape, state.legal_action_mask.shape, int(state.legal_action_mask.sum())
((234,), (112,), 7)

Conventions (Pgx's, where the game leaves a choice):

- ``state.current_player`` is the seat to play; once ``terminated`` it is the seat whose action
  ended the episode. ``state.observation`` is ``observe(state, state.current_player)``.
- ``state.rewards[p]`` is player ``p``'s reward for this step, its side's reward (partners
  share it), with the AEC env's arithmetic (:mod:`dominoes_env.options`).
- Forced draws and passes happen inside ``step``; the hands after a ``step`` are those of the
  next seat that has a move. With ``episode="match"`` a finished hand is followed at once by the
  next deal, drawn from ``step``'s ``key``.
- An action outside ``legal_action_mask`` ends the episode at once (``terminated``), the game
  unchanged: every player of the offender's side gets ``illegal_reward`` (-1 by default), every
  other player ``-illegal_reward / (sides - 1)`` (Pgx's +1 / -1 for two players).
- Once ``terminated``, ``legal_action_mask`` is all ``True`` (Pgx's convention: no division by
  zero when normalising a policy) and ``step`` returns the state with zero rewards.
- ``truncated`` is always ``False``: the game ends by its rules.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pgx
from pgx._src.struct import dataclass

from dominoes_env.core import HandState, RuleConfig
from dominoes_env.encoding import OBS_VERSION
from dominoes_env.options import split_options

from .game import I32, Deal, Game, GameState
from .observation import observe as _observe_game
from .tables import Tables, build_tables

ENV_ID = "straight_dominoes"
#: bumped with any change that can change what an agent sees or gets (observation, rewards)
VERSION = f"v0-obs{OBS_VERSION}"
#: the observation's score block is a table of 2 * target_score + 2 float32 values
MAX_TARGET_SCORE = 1 << 16


@dataclass
class State(pgx.State):
    """Pgx's six common fields plus ``_step_count`` and ``_x``, the game (:class:`GameState`)."""

    current_player: jax.Array
    observation: jax.Array
    rewards: jax.Array
    terminated: jax.Array
    truncated: jax.Array
    legal_action_mask: jax.Array
    _step_count: jax.Array
    _x: GameState

    @property
    def env_id(self) -> str:
        return ENV_ID


class Env(pgx.Env):
    """Straight Dominoes for one rule configuration. Build with :func:`make`.

    Every method is a pure function of its arguments (the rules are static), so ``init``,
    ``step`` and ``observe`` work under ``jax.jit`` and ``jax.vmap``.
    """

    def __init__(self, **options):
        super().__init__()
        rules, opts = split_options(options)
        if rules.target_score > MAX_TARGET_SCORE:
            raise ValueError(
                f"target_score={rules.target_score} is too large for the JAX game; allowed: "
                f"1..{MAX_TARGET_SCORE} (the observation's scores come from a table)"
            )
        if opts.illegal_action != "penalize":
            raise ValueError(
                "illegal_action='raise' is not possible in a compiled step; allowed: 'penalize'"
            )
        self.rules: RuleConfig = rules
        self.options = opts
        self.tables: Tables = build_tables(rules)
        self.game = Game(self.tables)
        self._deal_next = opts.episode == "match"
        self._scale = opts.scale(rules)

    # -- Pgx's properties --------------------------------------------------------------------
    @property
    def id(self) -> str:
        return ENV_ID

    @property
    def version(self) -> str:
        return VERSION

    @property
    def num_players(self) -> int:
        return self.tables.n

    @property
    def num_actions(self) -> int:
        return self.tables.num_actions

    @property
    def observation_shape(self) -> tuple[int, ...]:
        return (self.tables.obs_size,)

    # -- deals -------------------------------------------------------------------------------
    def deal_from_tiles(self, hands, boneyard=None, leader: int = 0) -> Deal:
        """An explicit deal from tiles given as ``(a, b)`` pairs (checked by the core's
        ``HandState.from_tiles``: ``ValueError`` naming what is wrong)."""
        return self.deal_from_hand(HandState.from_tiles(self.rules, hands, boneyard, leader))

    def deal_from_hand(self, hand: HandState) -> Deal:
        """The deal of a core ``HandState`` (its dealt hands, boneyard order and leader)."""
        if hand.rules != self.rules:
            raise ValueError("the hand was dealt under other rules than this env's")
        hands, boneyard = hand.dealt
        order = [t for mask in hands for t in range(self.tables.T) if mask >> t & 1]
        return Deal(jnp.asarray(order + list(boneyard), I32), jnp.asarray(hand.leader, I32))

    # -- init / step / observe ---------------------------------------------------------------
    def _init(self, key: jax.Array) -> State:
        return self.init_deal(self.game.random_deal(key))

    def init_deal(self, deal: Deal) -> State:
        """The first state of a match (or hand episode) whose first hand is ``deal``."""
        x = self.game.new_match(deal)
        n = self.tables.n
        state = State(
            current_player=x.turn, observation=jnp.zeros(self.tables.obs_size, jnp.float32),
            rewards=jnp.zeros(n, jnp.float32), terminated=jnp.bool_(False),
            truncated=jnp.bool_(False), legal_action_mask=self.game.legal_mask(x),
            _step_count=jnp.int32(0), _x=x,
        )  # fmt: skip
        return state.replace(observation=self.observe(state))

    def step(self, state: State, action: jax.Array, key: jax.Array | None = None) -> State:
        """Play ``action`` for ``state.current_player`` (then the forced draws and passes).
        ``key`` deals the next hand of a match; it may be ``None`` with ``episode="hand"``."""
        if key is None:
            if self._deal_next:
                raise ValueError("step needs a key with episode='match': new hands are dealt "
                                 "from it")
            deal = Deal(jnp.arange(self.tables.T, dtype=I32), jnp.int32(0))  # never used
        else:
            deal = self.game.random_deal(key)
        return self.step_deal(state, action, deal)

    def step_deal(self, state: State, action: jax.Array, deal: Deal,
                  flip: jax.Array | bool = False) -> State:
        """:meth:`step` with the next hand (if one is dealt) given as ``deal``, so a test or a
        replay plays the same deals as the core. ``flip`` lays a lead high half left (records
        write the lead as it lies); action codes alone always lead low half left."""
        tb, game = self.tables, self.game
        action = jnp.asarray(action, I32)
        x = state._x
        in_range = (action >= 0) & (action < tb.num_actions)
        code = jnp.clip(action, 0, tb.num_actions - 1)
        illegal = ~(in_range & state.legal_action_mask[code])
        done = state.terminated | state.truncated
        seat = x.turn

        y = game.play(x, code, jnp.asarray(flip, bool))
        y = game.settle(y, seat, deal, self._deal_next)
        terminated = (y.winner >= 0) | (y.turn < 0)  # turn < 0: a hand episode's hand ended
        moved = State(
            current_player=jnp.where(terminated, seat, y.turn), observation=state.observation,
            rewards=self._rewards(x, y, terminated), terminated=terminated,
            truncated=jnp.bool_(False), legal_action_mask=game.legal_mask(y),
            _step_count=state._step_count + 1, _x=y,
        )  # fmt: skip
        penalised = state.replace(
            terminated=jnp.bool_(True), rewards=self._illegal_rewards(seat),
            _step_count=state._step_count + 1,
        )  # fmt: skip
        still = state.replace(rewards=jnp.zeros_like(state.rewards))
        new = _select(done, still, _select(illegal, penalised, moved))
        new = new.replace(legal_action_mask=new.legal_action_mask | new.terminated)
        return new.replace(observation=self.observe(new))

    def observe(self, state: State, player_id: jax.Array | None = None) -> jax.Array:
        """``player_id``'s observation (the current player's by default): the float32 vector of
        :mod:`dominoes_env.encoding`, bit for bit."""
        if player_id is None:
            player_id = state.current_player
        return jax.lax.stop_gradient(_observe_game(self.game, state._x, player_id))

    def _observe(self, state: State, player_id: jax.Array) -> jax.Array:
        return _observe_game(self.game, state._x, player_id)

    def _step(self, state: State, action: jax.Array, key: jax.Array) -> State:
        # pgx.Env's abstract hook; this env overrides step() whole (see step_deal)
        raise NotImplementedError("Env.step is implemented by step_deal")

    # -- rewards -----------------------------------------------------------------------------
    def _rewards(self, x: GameState, y: GameState, terminated: jax.Array) -> jax.Array:
        """Per player, its side's reward for the step (``dominoes_env.options``)."""
        S = self.tables.S
        side = jnp.asarray(self.tables.side)
        if self.options.reward_mode == "win_loss":
            if self._deal_next:
                winner = y.winner
            else:  # a hand episode: the side that scored the most, if only one did
                top = jnp.max(y.scores)
                winner = jnp.where(jnp.sum(y.scores == top) == 1, jnp.argmax(y.scores), -1)
            per_side = jnp.where(jnp.arange(S) == winner, 1.0, -1.0 / (S - 1))
            per_side = jnp.where(terminated & (winner >= 0), per_side, 0.0)
        else:
            d = (y.scores - x.scores).astype(jnp.float32)
            per_side = (d - (jnp.sum(d) - d) / (S - 1)) * jnp.float32(self._scale)
        return per_side.astype(jnp.float32)[side]

    def _illegal_rewards(self, offender: jax.Array) -> jax.Array:
        side = jnp.asarray(self.tables.side)
        r = jnp.float32(self.options.illegal_reward)
        lose = side == side[jnp.clip(offender, 0, self.tables.n - 1)]
        return jnp.where(lose, r, -r / (self.tables.S - 1)).astype(jnp.float32)


def _select(pred: jax.Array, a, b):
    """``a`` where ``pred`` else ``b``, leaf by leaf (what ``lax.cond`` becomes under vmap)."""
    return jax.tree.map(lambda u, v: jnp.where(pred, u, v), a, b)


def make(**options) -> Env:
    """A JAX Straight Dominoes env. ``options``: any :class:`~dominoes_env.core.RuleConfig`
    field plus the env options ``episode``, ``reward_mode``, ``reward_scale`` and
    ``illegal_reward`` (:mod:`dominoes_env.options`). Invalid values raise the same
    ``ValueError`` as ``RuleConfig`` / the AEC env, before anything is traced.

    >>> make(num_players=5)
    Traceback (most recent call last):
    ...
    ValueError: num_players=5 is out of range; allowed: 2..4
    """
    return Env(**options)


__all__ = ["Env", "State", "make"]
