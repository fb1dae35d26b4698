"""Differential tests: the JAX game against the core, on every rule configuration of the core
property tests.

For each configuration, matches are played in Python through the core (``MatchState``), half
by uniform-random play and half by ``agents.greedy``, until ``HANDS`` hands have been dealt;
every deal, every action and what the core says after every step are recorded. Then all of
those matches run through the JAX game in ONE jitted call (``vmap`` over the matches, ``scan``
over the steps), fed the same deals and actions, and the arrays are compared: at every step the
legal mask, the play's points, the count, the four ends, the scores, the hand result and award
(and the award the match added), the winner, the hand number, the boneyard, the rewards, and
every seat's observation (bit for bit: a 64-bit hash of the float32 bits of each vector, the
same hash on both sides). The observation compared is version 4, whose first parts are
versions 3 and 2 (computed by the same code on each side; ``test_jax_env`` checks the JAX
prefixes against versions 2 and 3 themselves), so every version is held equal. In the greedy
matches the jittable ``greedy_policy`` must choose what ``agents.greedy`` chose, step by step.

``HANDS`` hands per configuration (default 2,000; ``DOMINOES_JAX_HANDS`` overrides it).
"""

from __future__ import annotations

import functools
import os
import random

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

from agents.greedy import greedy_choice  # noqa: E402
from dominoes_env.core import MatchState, RuleConfig  # noqa: E402
from dominoes_env.jax import Deal, greedy_policy, make  # noqa: E402
from dominoes_env.jax.game import RESULT_BLOCKED, RESULT_DOMINO, RESULT_NONE  # noqa: E402
from dominoes_env.obs import observation_spec  # noqa: E402
from dominoes_env.options import delta_rewards  # noqa: E402

from ..helpers import CONFIGS  # noqa: E402

HANDS = int(os.environ.get("DOMINOES_JAX_HANDS", "2000"))
#: the observation compared: version 4 holds versions 3 and 2 as its first parts
SPEC = observation_spec(4)

# the per-step scalars compared exactly, in this order (ends: 4 values; scores padded to 4)
SCALARS = ("turn", "count", "end0", "end1", "end2", "end3", "score0", "score1", "score2",
           "score3", "points", "result", "result_seat", "award_side", "award_points",
           "added_side", "added_points", "winner", "hand_number", "drawn",
           "terminated")  # fmt: skip
_RESULT = {None: RESULT_NONE, "domino": RESULT_DOMINO, "blocked": RESULT_BLOCKED}


def _weights(size: int, salt: int) -> np.ndarray:
    return (np.random.default_rng(size * 7 + salt).integers(0, 1 << 31, size, dtype=np.uint32)
            * 2 + 1).astype(np.uint32)  # fmt: skip


def _hash_np(bits: np.ndarray, w1: np.ndarray, w2: np.ndarray) -> np.ndarray:
    """Two 32-bit weighted sums of uint32 words, wrapping (the same as ``_hash_jax``)."""
    return np.stack([(bits * w1).sum(axis=-1, dtype=np.uint32),
                     (bits * w2).sum(axis=-1, dtype=np.uint32)], axis=-1)  # fmt: skip


def _hash_jax(bits, w1, w2):
    return jnp.stack([jnp.sum(bits * w1, axis=-1, dtype=jnp.uint32),
                      jnp.sum(bits * w2, axis=-1, dtype=jnp.uint32)], axis=-1)  # fmt: skip


# -- the core side -----------------------------------------------------------------------------
class CoreRun:
    """Matches played through the core, with the deals, actions and per-step expectations."""

    def __init__(self, rules: RuleConfig, hands: int, seed: int):
        self.rules = rules
        lay = SPEC.layout(rules)
        n, A = rules.num_players, rules.num_tiles * 4
        self.w_obs = (_weights(lay.size, 1), _weights(lay.size, 2))
        self.w_mask = (_weights(A, 3), _weights(A, 4))
        games, dealt = [], 0
        rng = random.Random(seed)
        while dealt < hands:
            greedy = len(games) % 2 == 1
            games.append(self._play(rules, lay, n, A, rng.getrandbits(32), greedy))
            dealt += len(games[-1]["deals"])
        self.hands = dealt
        G = len(games)
        L = max(len(g["actions"]) for g in games)
        H = max(len(g["deals"]) for g in games)
        T = rules.num_tiles
        self.length = np.array([len(g["actions"]) for g in games])
        self.greedy = np.array([g["greedy"] for g in games])
        self.actions = np.zeros((G, L), np.int32)
        self.orders = np.zeros((G, H, T), np.int32)
        self.leaders = np.zeros((G, H), np.int32)
        self.scalars = np.zeros((G, L + 1, len(SCALARS)), np.int32)
        self.obs_hash = np.zeros((G, L + 1, n, 2), np.uint32)
        self.mask_hash = np.zeros((G, L + 1, 2), np.uint32)
        self.rewards = np.zeros((G, L, n), np.float64)
        for i, g in enumerate(games):
            k = len(g["actions"])
            self.actions[i, :k] = g["actions"]
            for h, (order, leader) in enumerate(g["deals"]):
                self.orders[i, h], self.leaders[i, h] = order, leader
            self.scalars[i, : k + 1] = g["scalars"]
            self.obs_hash[i, : k + 1] = _hash_np(g["obs"].view(np.uint32), *self.w_obs)
            self.mask_hash[i, : k + 1] = _hash_np(g["masks"].astype(np.uint32), *self.w_mask)
            self.rewards[i, :k] = g["rewards"]

    @staticmethod
    def _play(rules, lay, n, A, seed, greedy):
        match = MatchState(rules, seed=seed)
        rng = random.Random(seed ^ 0x5EED)
        scale = 1.0 / rules.target_score
        side_of = [rules.side_of(s) for s in range(n)]
        deals, actions, scalars, obs, masks, rewards = [], [], [], [], [], []

        def deal_of(hand):
            order = [t for mask in hand.dealt[0] for t in range(rules.num_tiles) if mask >> t & 1]
            deals.append((order + list(hand.dealt[1]), hand.leader))

        def record(points, ended):
            hand, over = match.hand, match.is_over
            result, seat, award, added = None, -1, None, None
            if ended is not None:
                result, seat = ended.result
                award, added = ended.award, match.awards[-1]
            scores = list(match.scores) + [0] * (4 - len(match.scores))
            scalars.append([
                match.turn, hand.count, *hand.ends, *scores, points, _RESULT[result],
                -1 if seat is None else seat, *(award or (-1, 0)), *(added or (-1, 0)),
                -1 if match.winner is None else match.winner, match.hand_number, hand.drawn,
                int(over),
            ])  # fmt: skip
            obs.append([SPEC.encode_state(lay, hand, s, match.scores, over) for s in range(n)])
            mask = np.zeros(A, bool)
            mask[match.legal_actions()] = True
            masks.append(mask)

        deal_of(match.hand)
        record(0, None)
        while not match.is_over:
            hand, before = match.hand, list(match.scores)
            if greedy:
                code = greedy_choice(match.view(hand.turn))
            else:
                code = rng.choice(hand.legal_actions())
            points = match.apply_unchecked(code)
            actions.append(code)
            ended = hand if hand.is_over else None
            if match.hand is not hand:
                deal_of(match.hand)
            deltas = [a - b for a, b in zip(match.scores, before, strict=True)]
            side_r = delta_rewards(deltas, scale)
            rewards.append([side_r[side_of[s]] for s in range(n)])
            record(points, ended)
        return {"deals": deals, "actions": actions, "scalars": scalars, "obs": np.array(obs),
                "masks": np.array(masks), "rewards": rewards, "greedy": greedy}


# -- the JAX side: one compiled function per configuration -------------------------------------
@functools.cache
def jax_runner(name: str):
    """``run(orders, leaders, actions, w_obs1, w_obs2, w_mask1, w_mask2)`` for configuration
    ``name``: every game of the batch replayed in one call (``vmap`` of a ``scan``)."""
    env = make(**CONFIGS[name], obs_version=SPEC.version)
    n = env.num_players
    seats = jnp.arange(n)

    def summary(st, w):
        x = st.game_state
        raw_mask = env.game.legal_mask(x)
        scores = jnp.zeros(4, jnp.int32).at[: x.scores.shape[0]].set(x.scores)
        row = jnp.concatenate([
            jnp.stack([jnp.where(x.winner >= 0, -1, x.turn), x.count]), x.ends, scores,
            jnp.stack([x.last_points, x.ended_result, x.ended_seat, x.ended_award_side,
                       x.ended_award_points, x.added_side, x.added_points, x.winner,
                       x.hand_number, x.drawn, st.terminated.astype(jnp.int32)]),
        ])  # fmt: skip
        obs = jax.vmap(env.observe, in_axes=(None, 0))(st, seats)
        obs_hash = _hash_jax(jax.lax.bitcast_convert_type(obs, jnp.uint32), w[0], w[1])
        mask_hash = _hash_jax(raw_mask.astype(jnp.uint32), w[2], w[3])
        # Pgx's convention: the state's mask is the game's, all True once terminated; and the
        # state's observation is the current player's
        conventions = (jnp.all(st.legal_action_mask == (raw_mask | st.terminated))
                       & jnp.all(st.observation == obs[st.current_player]))  # fmt: skip
        return row, obs_hash, mask_hash, conventions

    def one_game(orders, leaders, actions, w):
        H = orders.shape[0]
        st = env.init_deal(Deal(orders[0], leaders[0]))

        def body(st, a):
            choice = greedy_policy(env, st)
            h = jnp.minimum(st.game_state.hand_number + 1, H - 1)
            st = env.step_deal(st, a, Deal(orders[h], leaders[h]))
            return st, (summary(st, w), st.rewards, choice)

        first = summary(st, w)
        _, (rest, rewards, choices) = jax.lax.scan(body, st, actions)
        joined = jax.tree.map(lambda a, b: jnp.concatenate([a[None], b]), first, rest)
        return joined, rewards, choices

    run = jax.jit(jax.vmap(one_game, in_axes=(0, 0, 0, None)))
    return env, run


# -- the tests ---------------------------------------------------------------------------------
def _first_mismatch(got, want, valid, what):
    bad = np.argwhere((got != want).reshape(*valid.shape, -1).any(axis=-1) & valid)
    if bad.size:
        g, i = bad[0]
        pytest.fail(f"{what}: game {g}, state {i} (after {i} actions): JAX {got[g, i].tolist()} "
                    f"!= core {want[g, i].tolist()}")


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_jax_game_equals_core(name):
    rules = RuleConfig(**CONFIGS[name])
    core = CoreRun(rules, HANDS, seed=sorted(CONFIGS).index(name))
    assert core.hands >= HANDS
    env, run = jax_runner(name)
    w = (*core.w_obs, *core.w_mask)
    (rows, obs_hash, mask_hash, conventions), rewards, choices = jax.device_get(
        run(core.orders, core.leaders, core.actions, w)
    )
    G, L1 = core.scalars.shape[:2]
    valid = np.arange(L1)[None, :] <= core.length[:, None]  # states 0 .. length
    _first_mismatch(rows, core.scalars, valid, f"scalars {SCALARS}")
    _first_mismatch(mask_hash, core.mask_hash, valid, "legal mask hash")
    _first_mismatch(obs_hash, core.obs_hash, valid, "observation hash per seat")
    assert conventions[valid].all(), "state.legal_action_mask / state.observation conventions"
    moves = valid[:, 1:]
    np.testing.assert_allclose(rewards[moves], core.rewards[moves], rtol=1e-5, atol=1e-7)
    greedy_steps = moves & core.greedy[:, None]
    assert greedy_steps.any() and (~core.greedy).any()
    _first_mismatch(choices[..., None], core.actions[..., None], greedy_steps,
                    "greedy_policy vs agents.greedy")
