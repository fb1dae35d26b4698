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

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pgx
from pgx._src.struct import dataclass

from dominoes_env.core import HandState, RuleConfig
from dominoes_env.core import rules as rules_module
from dominoes_env.core.validation import as_int, short_repr
from dominoes_env.obs import DEFAULT_VERSION, observation_spec
from dominoes_env.options import split_options

from . import rng
from .game import I32, Deal, Game, GameState, materialize, pick
from .observation import observe as _observe_game
from .observation import observe_first as _observe_first
from .tables import Tables, build_tables

ENV_ID = "straight_dominoes"


def env_version(obs_version: int = DEFAULT_VERSION) -> str:
    """The env's version with observation version ``obs_version``: ``"v0-obs<N>"``; the ``v0``
    is bumped with any change that can change what an agent sees or gets (rewards, the game).

    >>> env_version(4)
    'v0-obs4'
    """
    return f"v0-obs{observation_spec(obs_version).version}"


#: the version of an env with the default observation (:meth:`Env.version` is the env's own)
VERSION = env_version()
#: the observation's score block is a table of 2 * target_score + 2 float32 values: the rules
#: allow no larger target (:data:`dominoes_env.core.rules.MAX_TARGET_SCORE`)
MAX_TARGET_SCORE = rules_module.MAX_TARGET_SCORE


@dataclass
class State(pgx.State):
    """Pgx's six common fields plus ``_step_count`` and ``_x``, the game (:class:`GameState`;
    read it as :attr:`game_state`)."""

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

    @property
    def game_state(self) -> GameState:
        """The game (:class:`~dominoes_env.jax.game.GameState`): Pgx's ``_x`` field, public."""
        return self._x

    def with_game_state(self, game: GameState) -> State:
        """This state with its game replaced (the observation is not recomputed)."""
        return self.replace(_x=game)


class Env(pgx.Env):
    """Straight Dominoes for one rule configuration. Build with :func:`make`.

    Every method is a pure function of its arguments (the rules are static), so ``init``,
    ``step`` and ``observe`` work under ``jax.jit`` and ``jax.vmap``.
    """

    def __init__(self, **options):
        super().__init__()
        base = options.pop("rules", None)  # a RuleConfig the rule options change, as raw_env's
        rules, opts = split_options(options, base)
        if opts.illegal_action != "penalize":
            raise ValueError(
                "illegal_action='raise' is not possible in a compiled step; allowed: 'penalize'"
            )
        if opts.info_events:  # accepted and ignored before: a JAX state has no infos
            raise ValueError("info_events=True is not possible here: the JAX env's states "
                             "carry no infos; allowed: False")
        self.rules: RuleConfig = rules
        self.options = opts
        self.tables: Tables = build_tables(rules)
        #: the observation version (the ``obs_version`` option: 2 to 5)
        self.obs_version: int = opts.obs_version
        self.obs_size: int = observation_spec(opts.obs_version).layout(rules).size
        self.game = Game(self.tables)
        self._deal_next = opts.episode == "match"
        self._scale = opts.scale(rules)

    # -- Pgx's properties --------------------------------------------------------------------
    @property
    def id(self) -> str:
        return ENV_ID

    @property
    def version(self) -> str:
        """``"v0-obs<N>"``, ``N`` the observation version this env was built with
        (:func:`env_version`)."""
        return env_version(self.obs_version)

    @property
    def num_players(self) -> int:
        return self.tables.n

    @property
    def num_actions(self) -> int:
        return self.tables.num_actions

    @property
    def observation_shape(self) -> tuple[int, ...]:
        return (self.obs_size,)

    # -- deals -------------------------------------------------------------------------------
    def deal_from_tiles(self, hands, boneyard=None, leader: int = 0) -> Deal:
        """An explicit deal from tiles given as ``(a, b)`` pairs (checked by the core's
        ``HandState.from_tiles``: ``ValueError`` naming what is wrong)."""
        return self.deal_from_hand(HandState.from_tiles(self.rules, hands, boneyard, leader))

    def deal_from_hand(self, hand: HandState) -> Deal:
        """The deal of a core ``HandState`` (its dealt hands, boneyard order and leader)."""
        if not isinstance(hand, HandState):
            raise TypeError(f"hand must be a HandState, not {type(hand).__name__}")
        if hand.rules != self.rules:
            raise ValueError("the hand was dealt under other rules than this env's")
        hands, boneyard = hand.dealt
        order = [t for mask in hands for t in range(self.tables.T) if mask >> t & 1]
        return Deal(jnp.asarray(order + list(boneyard), I32), jnp.asarray(hand.leader, I32))

    # -- init / step / observe ---------------------------------------------------------------
    def init(self, key: jax.Array) -> State:
        """The first state of a match (or hand episode), its first hand dealt from ``key``: one
        PRNG key (``jax.random.PRNGKey(seed)`` or ``jax.random.key(seed)``; under ``jax.vmap``
        one per game). Anything else is a ``TypeError`` before anything is traced."""
        check_key(key, "init")
        # not pgx.Env.init, which observes the state _init returns again: init_deal writes
        # the observation from a new match's few blocks (observation.observe_first)
        return self._init(key)

    def _init(self, key: jax.Array) -> State:
        return self.init_deal(self.game.random_deal(key))

    def init_deal(self, deal: Deal) -> State:
        """The first state of a match (or hand episode) whose first hand is ``deal``."""
        # materialized (as in step_deal): left alone XLA recomputes the deal's rank into each
        # of the observation's per-code loops (measured: init cost as much as a whole step)
        # (only what the deal sets: the rest of a new match is constant, and XLA folds the
        # observation's blocks that read only constants)
        x = self.game.new_match(deal)
        hands, bone_pos, leader = materialize((x.hands, x.bone_pos, x.leader),
                                              never=deal.leader < 0)
        x = x._replace(hands=hands, bone_pos=bone_pos, leader=leader, turn=leader)
        n = self.tables.n
        mask = self.game.legal_mask(x)
        state = State(
            current_player=x.turn, observation=jnp.zeros(self.obs_size, jnp.float32),
            rewards=jnp.zeros(n, jnp.float32), terminated=jnp.bool_(False),
            truncated=jnp.bool_(False), legal_action_mask=mask, _step_count=jnp.int32(0), _x=x,
        )  # fmt: skip
        obs = _observe_first(self.game, x, mask, self.obs_version)
        return state.replace(observation=jax.lax.stop_gradient(obs))

    def step(self, state: State, action: jax.Array, key: jax.Array | None = None) -> State:
        """Play ``action`` for ``state.current_player`` (then the forced draws and passes).
        ``key`` deals the next hand of a match; it may be ``None`` with ``episode="hand"``.
        ``action`` is one integer code and ``key`` one PRNG key (as :meth:`init`'s): anything
        else (a float action among them) is a ``TypeError`` while tracing, and an action known
        outside jit that no int32 holds a ``ValueError``."""
        if key is None:
            if self._deal_next:
                raise ValueError("step needs a key with episode='match': new hands are dealt "
                                 "from it")
            deal = Deal(jnp.arange(self.tables.T, dtype=I32), jnp.int32(0))  # never used
        else:
            check_key(key, "step")
            deal = self.game.random_deal(key)
        return self.step_deal(state, action, deal)

    def step_deal(self, state: State, action: jax.Array, deal: Deal,
                  flip: jax.Array | bool = False) -> State:
        """:meth:`step` with the next hand (if one is dealt) given as ``deal``, so a test or a
        replay plays the same deals as the core. ``flip`` lays a lead high half left (records
        write the lead as it lies); action codes alone always lead low half left."""
        self.check_state(state, "step")
        y, seat, illegal = self._move(state, action, flip)
        if self._deal_next:
            y = self.game.next_hand(y, deal)
        new = _materialize(self._after(state, y, seat, illegal))
        # one legal mask, from the materialized game: an episode that is over (by the rules,
        # an illegal action, or before this step) shows every action legal (Pgx's convention)
        mask = self._stepped_mask(new)
        new = new.replace(legal_action_mask=mask | new.terminated)
        return new.replace(observation=self._observe_mask(new, mask))

    def step_autoreset(self, state: State, action: jax.Array, key: jax.Array) -> State:
        """``pgx.experimental.auto_reset(env.step, env.init)(state, action, key)``, leaf for leaf
        (a step that ends the episode returns a new episode's first state, carrying the final
        step's ``rewards`` and ``terminated``), at about half the cost: the step and the reset
        draw their deal from the same two keys as Pgx's wrapper, but only the deal that is used
        is drawn, and the observation and legal mask are computed once."""
        self.check_state(state, "step_autoreset")
        check_key(key, "step_autoreset")
        key1, key2 = rng.split(key)  # jax.random.split(key), fused (see .rng)
        ended = state.terminated | state.truncated
        state = _select(ended, state.replace(terminated=jnp.bool_(False),
                                             truncated=jnp.bool_(False),
                                             rewards=jnp.zeros_like(state.rewards)), state)
        y, seat, illegal = self._move(state, action, False)
        # the episode ends here (as _after will say): by the penalty, the match's end, or in a
        # hand episode the hand's end (in a match, a finished hand is followed by a deal)
        terminated = illegal | (y.winner >= 0) | ((y.turn < 0) & (not self._deal_next))
        deal = self.game.random_deal(jnp.where(terminated, key2, key1))
        if self._deal_next:
            y = self.game.next_hand(y, deal)
        stepped = self._after(state, y, seat, illegal)
        first = self.game.new_match(deal)
        reset = State(
            current_player=first.turn, observation=state.observation, rewards=stepped.rewards,
            terminated=stepped.terminated, truncated=stepped.truncated,
            legal_action_mask=stepped.legal_action_mask, _step_count=jnp.int32(0), _x=first,
        )  # fmt: skip
        new = _materialize(_select(stepped.terminated, reset, stepped))
        # the new match's first mask, or the mask after a step that did not end the episode
        mask = self._stepped_mask(new)
        return new.replace(legal_action_mask=mask, observation=self._observe_mask(new, mask))

    def _stepped_mask(self, new: State) -> jax.Array:
        """The legal mask of the game a step left in ``new`` (materialized), written out once so
        that its readers (the observation, a policy) do not each compute it again."""
        return materialize(self.game.legal_mask(new._x), never=new._step_count < 0)

    def _move(self, state: State, action: jax.Array, flip) -> tuple[GameState, jax.Array,
                                                                    jax.Array]:
        """Play ``action`` (clipped into range) and score it: ``(game, seat, illegal)``, the next
        hand not dealt yet."""
        tb, game = self.tables, self.game
        _check_action(action, tb.num_actions)
        action = jnp.asarray(action, I32)
        in_range = (action >= 0) & (action < tb.num_actions)
        code = jnp.clip(action, 0, tb.num_actions - 1)
        # a gather (one entry per game), where the step's other look-ups are one-hot sums:
        # the one-hot over the 4T codes ran as a windowed reduction, 3-4% of a batch step
        illegal = ~(in_range & state.legal_action_mask[code])
        seat = state._x.turn
        y = game.settle(game.play(state._x, code, jnp.asarray(flip, bool)), seat)
        return y, seat, illegal

    def _after(self, state: State, y: GameState, seat: jax.Array, illegal: jax.Array) -> State:
        """The state after a step into ``y`` (observation and legal mask not updated): an
        already finished episode stays as it was with zero rewards; an illegal action ends it
        with the penalty."""
        terminated = (y.winner >= 0) | (y.turn < 0)  # turn < 0: a hand episode's hand ended
        moved = State(
            current_player=jnp.where(terminated, seat, y.turn), observation=state.observation,
            rewards=self._rewards(state._x, y, terminated), terminated=terminated,
            truncated=jnp.bool_(False), legal_action_mask=state.legal_action_mask,  # see callers
            _step_count=state._step_count + 1, _x=y,
        )  # fmt: skip
        penalised = state.replace(
            terminated=jnp.bool_(True), rewards=self._illegal_rewards(seat),
            _step_count=state._step_count + 1,
        )  # fmt: skip
        still = state.replace(rewards=jnp.zeros_like(state.rewards))
        return _select(state.terminated | state.truncated, still,
                       _select(illegal, penalised, moved))

    def observe(self, state: State, player_id: jax.Array | None = None) -> jax.Array:
        """``player_id``'s observation (the current player's by default): the float32 vector of
        :mod:`dominoes_env.obs` (of this env's ``obs_version``), bit for bit. A seat known
        outside jit (a Python, numpy or concrete JAX integer) is checked: ``ValueError`` for a
        seat the game does not have, ``TypeError`` for one that is no integer (a float is never
        truncated to a seat). A traced seat's value cannot be checked, only its dtype."""
        self.check_state(state, "observe")
        if player_id is None:
            player_id = state.current_player
        else:
            player_id = _check_seat(player_id, self.tables.n)
        obs = _observe_game(self.game, state._x, player_id, self.obs_version)
        return jax.lax.stop_gradient(obs)

    def check_state(self, state, method: str) -> None:
        """``TypeError`` unless ``state`` is a :class:`State` of this env's game: every array
        but the observation of the shape and dtype this env's states have (static shapes only,
        as :func:`check_key` reads: a tracer's too, so a compiled step pays nothing). A state
        of another game (other players or tiles: a double-nine state given to a double-six
        env) and ``None`` are refused here, before the step or the observation reads them.
        The observation is left out: an env of another ``obs_version`` observes and steps the
        same game."""
        if not isinstance(state, State):
            hint = (" (a GameState: pass the State that holds it)"
                    if isinstance(state, GameState) else "")
            raise TypeError(f"{method}'s state must be a State of this env (from its init or "
                            f"step); got {_describe(state)}{hint}")
        want = self._state_leaves
        got = jax.tree.flatten_with_path(state)[0]
        if len(got) != len(want):
            raise TypeError(f"{method}'s state is not a State of this env: it holds "
                            f"{len(got)} arrays, this env's hold {len(want)}")
        for (path, leaf), (shape, dtype) in zip(got, want, strict=True):
            have = tuple(getattr(leaf, "shape", ())), getattr(leaf, "dtype", None)
            if have != (shape, dtype) and path != _OBSERVATION_PATH:
                batch = have[0][len(have[0]) - len(shape):] == shape and len(have[0]) > len(shape)
                hint = " (a batch of states: jax.vmap the env's methods)" if batch else ""
                raise TypeError(
                    f"{method}'s state is not a State of this env: "
                    f"{jax.tree_util.keystr(path)} is {have[1]}{list(have[0])}, where this "
                    f"env's states hold {dtype}{list(shape)} (num_players="
                    f"{self.rules.num_players}, max_pip={self.rules.max_pip}, obs_version="
                    f"{self.obs_version}){hint}")

    @functools.cached_property
    def _state_leaves(self) -> list[tuple[tuple[int, ...], np.dtype]]:
        """The shape and dtype of every array of this env's states, in tree order (traced
        once, without computing anything)."""
        deal = Deal(jax.ShapeDtypeStruct((self.tables.T,), I32), jax.ShapeDtypeStruct((), I32))
        spec = jax.eval_shape(self.init_deal, deal)
        return [(tuple(leaf.shape), leaf.dtype) for leaf in jax.tree.leaves(spec)]

    def _observe_mask(self, state: State, mask: jax.Array) -> jax.Array:
        """The current player's observation, given the game's legal mask (computed once), written
        out once: a reader that reduces it (a sum, a checksum) then reads one array instead of
        XLA splitting the reduction over the concatenated blocks and keeping each block too
        (measured: 2-3% of a batch step)."""
        obs = _observe_game(self.game, state._x, state.current_player, self.obs_version, mask)
        obs = materialize(obs, never=state._step_count < 0)
        return jax.lax.stop_gradient(obs)

    def _observe(self, state: State, player_id: jax.Array) -> jax.Array:
        return _observe_game(self.game, state._x, player_id, self.obs_version)

    def _step(self, state: State, action: jax.Array, key: jax.Array) -> State:
        # pgx.Env's abstract hook; this env overrides step() whole (see step_deal)
        raise NotImplementedError("Env.step is implemented by step_deal")

    # -- rewards -----------------------------------------------------------------------------
    def _rewards(self, x: GameState, y: GameState, terminated: jax.Array) -> jax.Array:
        """Per player, its side's reward for the step (``dominoes_env.options``)."""
        S = self.tables.S
        if self.options.reward_mode == "win_loss":
            if self._deal_next:
                winner = y.winner
            else:  # a hand episode: the side that scored the most, if only one did
                top = jnp.max(y.scores)
                winner = jnp.where(jnp.sum(y.scores == top, dtype=I32) == 1,
                                   jnp.argmax(y.scores).astype(I32), -1)
            per_side = jnp.where(jnp.arange(S, dtype=I32) == winner, jnp.float32(1.0),
                                 jnp.float32(-1.0 / (S - 1)))
            per_side = jnp.where(terminated & (winner >= 0), per_side, jnp.float32(0.0))
        else:
            # integer sums (exact, as the float32 sums of these small integers were): XLA's CPU
            # backend runs float sums as library calls on materialised inputs
            d = y.scores - x.scores
            others = (jnp.sum(d, dtype=I32) - d).astype(jnp.float32)
            per_side = (d.astype(jnp.float32) - others / (S - 1)) * jnp.float32(self._scale)
        per_side = per_side.astype(jnp.float32)
        return jnp.stack([per_side[int(k)] for k in self.tables.side])  # the seats' sides

    def _illegal_rewards(self, offender: jax.Array) -> jax.Array:
        side = jnp.asarray(self.tables.side)
        r = jnp.float32(self.options.illegal_reward)
        lose = side == pick(side, offender)
        return jnp.where(lose, r, -r / (self.tables.S - 1)).astype(jnp.float32)


def _describe(value) -> str:
    """What an error line says ``value`` is: an array's shape and dtype, else its type and a
    short repr."""
    shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
    if shape is not None and dtype is not None:
        return f"an array of shape {tuple(shape)} and dtype {dtype}"
    return f"{short_repr(value)} ({type(value).__name__})"


#: where a State's tree holds its observation (left out of :meth:`Env.check_state`)
_OBSERVATION_PATH = (jax.tree_util.GetAttrKey("observation"),)


@functools.cache
def _raw_key_shape() -> tuple[int, ...]:
    """The shape of a raw key of JAX's default generator (``(2,)`` for Threefry)."""
    return tuple(jax.eval_shape(jax.random.PRNGKey, 0).shape)


def check_key(key, method: str) -> None:
    """``TypeError`` naming ``key`` unless it is one PRNG key: a typed key of shape ``()`` or
    a raw ``uint32`` key of the default generator's shape. Only the static shape and dtype are
    read (a tracer's too), so the check costs nothing in a compiled step. ``None`` and an int
    are refused here, before the deal reads them; a batch of keys is refused with a hint to
    ``jax.vmap`` the env's methods."""
    shape, dtype = getattr(key, "shape", None), getattr(key, "dtype", None)
    batch = False
    if shape is not None and dtype is not None:
        shape, raw = tuple(shape), _raw_key_shape()
        if jnp.issubdtype(dtype, jax.dtypes.prng_key):
            if shape == ():
                return
            batch = True
        elif dtype == jnp.uint32:
            if shape == raw:
                return
            batch = len(shape) > len(raw) and shape[-len(raw):] == raw
    hint = " (a batch of keys: jax.vmap the env's methods)" if batch else ""
    raise TypeError(f"{method}'s key must be one PRNG key (jax.random.PRNGKey(seed) or "
                    f"jax.random.key(seed)); got {_describe(key)}{hint}")


def _check_action(action, num_actions: int) -> None:
    """``TypeError`` unless ``action`` is an integer action code (a Python int or an integer
    array of shape ``()``; static shape and dtype only, as :func:`check_key`): a float is
    refused, never truncated to a code. A value known outside jit that does not fit the int32
    the step computes in (``2**40``, numpy's ``int64(2**40)``) is a ``ValueError``, never
    wrapped to another code. (An int32 outside ``0..num_actions - 1`` is an illegal action,
    penalised as the env's docstring says.)"""
    if isinstance(action, int) and not isinstance(action, bool):
        value = action
    else:
        shape, dtype = getattr(action, "shape", None), getattr(action, "dtype", None)
        if not (shape is not None and tuple(shape) == () and dtype is not None
                and jnp.issubdtype(dtype, jnp.integer)):
            batch = shape and dtype is not None and jnp.issubdtype(dtype, jnp.integer)
            hint = " (a batch of actions: jax.vmap the env's methods)" if batch else ""
            raise TypeError(f"action must be one integer action code (a Python int or an "
                            f"integer array of shape ()); got {_describe(action)}{hint}")
        if isinstance(action, jax.core.Tracer) or _fits_int32(np.dtype(dtype)):
            return  # traced, or every value of its dtype fits (no device sync to read it)
        value = int(np.asarray(action))
    if not _INT32.min <= value <= _INT32.max:
        raise ValueError(f"action={short_repr(value)} does not fit the int32 of an action code; "
                         f"action codes are 0..{num_actions - 1} (another int32 is an illegal "
                         f"action, penalised)")


_INT32 = np.iinfo(np.int32)


def _fits_int32(dtype: np.dtype) -> bool:
    """Whether every value of the integer ``dtype`` is an int32."""
    return np.can_cast(dtype, np.int32, casting="safe")


def _check_seat(player_id, n: int):
    """``player_id`` as :meth:`Env.observe` reads it: a seat ``0..n - 1`` known outside jit (a
    Python int, a numpy or concrete JAX integer of shape ``()``) as a Python int, else
    ``ValueError`` / ``TypeError`` naming it; a traced seat (under jit or vmap) as it is, once
    its static shape and dtype are those of one integer. A float seat (``1.0``) is a
    ``TypeError``, and a concrete seat out of range (``jnp.int32(7)`` at two players) a
    ``ValueError``."""
    shape, dtype = getattr(player_id, "shape", None), getattr(player_id, "dtype", None)
    if shape is not None and dtype is not None and not (
            tuple(shape) == () and jnp.issubdtype(dtype, jnp.integer)):
        raise TypeError(f"player_id must be one integer seat 0..{n - 1}; got "
                        f"{_describe(player_id)}")
    if isinstance(player_id, jax.core.Tracer):
        return player_id
    return as_int("player_id", player_id, 0, n - 1)


def _materialize(state, never: jax.Array | None = None):
    """``state``, computed once before the observation reads it (:func:`.game.materialize`;
    left alone XLA fuses the step's per-game selects into the observation's per-action loops
    and recomputes them for each of the ``4T`` action codes: measured, more than half of the
    step's time on CPU). ``never`` defaults to ``state._step_count < 0`` (step counts are never
    negative)."""
    return materialize(state, state._step_count < 0 if never is None else never)


def _select(pred: jax.Array, a, b):
    """``a`` where ``pred`` else ``b``, leaf by leaf (what ``lax.cond`` becomes under vmap)."""
    return jax.tree.map(lambda u, v: jnp.where(pred, u, v), a, b)


def make(**options) -> Env:
    """A JAX Straight Dominoes env. ``options``: any :class:`~dominoes_env.core.RuleConfig`
    field plus the env options ``episode``, ``reward_mode``, ``reward_scale`` and
    ``illegal_reward`` (:mod:`dominoes_env.options`), or ``rules=RuleConfig(...)`` as a base
    that the rule fields given change (as ``raw_env``, ``parallel_env`` and ``SingleAgentEnv``
    take it). Invalid values raise the same ``ValueError`` as ``RuleConfig`` / the AEC env,
    before anything is traced.

    >>> make(rules=RuleConfig(num_players=3), target_score=100).rules.num_players
    3
    >>> make(num_players=5)
    Traceback (most recent call last):
    ...
    ValueError: num_players=5 is out of range; allowed: 2..4
    """
    return Env(**options)


__all__ = ["Env", "State", "make"]
