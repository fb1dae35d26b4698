"""Differential tests: the JAX game against the core, on every rule configuration of the core
property tests.

For each configuration, matches are played in Python through the core (``MatchState``), half
by uniform-random play and half by ``agents.greedy``, until ``HANDS`` hands have been dealt;
every deal, every action and what the core says after every step are recorded. Then all of
those matches run through the JAX game in ONE compiled function (``vmap`` over the matches, a
loop over the steps), fed the same deals and actions, and the arrays are compared: at every step the
legal mask, the play's points, the count, the four ends, the scores, the hand result and award
(and the award the match added), the winner, the hand number, the boneyard, the rewards, and
every seat's observation, entry by entry and bit for bit (the core's float32 bits go into the
jitted call, which compares them with its own and hands back, per state and seat, how many
entries differ and the first one; the games run in chunks so that only a chunk's observations
are held by the call). The observation compared is version 5, whose first parts are
versions 4, 3 and 2 (computed by the same code on each side; ``test_jax_env`` checks the JAX
prefixes against versions 2, 3 and 4 themselves), so every version is held equal. In the greedy
matches the jittable ``greedy_policy`` must choose what ``agents.greedy`` chose, step by step.

``HANDS`` hands per configuration of a double-six set (default 2,000; ``DOMINOES_JAX_HANDS``
overrides it); a set of ``T`` tiles deals ``HANDS * 28 / T`` (its hands are as many times
longer, and its observations wider: about as many plays are compared, in as much time).
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
#: the observation compared: version 5 holds versions 4, 3 and 2 as its first parts
SPEC = observation_spec(5)

# the per-step scalars compared exactly, in this order (ends: 4 values; scores padded to 4)
SCALARS = ("turn", "count", "end0", "end1", "end2", "end3", "score0", "score1", "score2",
           "score3", "points", "result", "result_seat", "award_side", "award_points",
           "added_side", "added_points", "winner", "hand_number", "drawn",
           "terminated")  # fmt: skip
_RESULT = {None: RESULT_NONE, "domino": RESULT_DOMINO, "blocked": RESULT_BLOCKED}


#: the most bytes of the core's observations handed to one call of the jitted runner
CHUNK_BYTES = 96 << 20


# -- the core side -----------------------------------------------------------------------------
class CoreRun:
    """Matches played through the core, with the deals, actions and per-step expectations."""

    def __init__(self, rules: RuleConfig, hands: int, seed: int):
        self.rules = rules
        lay = SPEC.layout(rules)
        n, A = rules.num_players, rules.num_tiles * 4
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
        #: per game, the float32 bits of every seat's observation at each state [k + 1, n, D]
        self.obs_bits = [g["obs"].view(np.uint32) for g in games]
        self.masks = np.zeros((G, L + 1, A), bool)
        self.rewards = np.zeros((G, L, n), np.float64)
        for i, g in enumerate(games):
            k = len(g["actions"])
            self.actions[i, :k] = g["actions"]
            for h, (order, leader) in enumerate(g["deals"]):
                self.orders[i, h], self.leaders[i, h] = order, leader
            self.scalars[i, : k + 1] = g["scalars"]
            self.masks[i, : k + 1] = g["masks"]
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
    """``run(orders, leaders, actions, core_bits, steps)`` for configuration ``name``: every
    game of the batch replayed in one call for its first ``steps`` actions (a loop over the
    steps of a ``vmap`` over the games), each state's observations compared there with the
    core's float32 bits ``core_bits[state, game, seat]``."""
    env = make(**CONFIGS[name], obs_version=SPEC.version)
    n = env.num_players
    seats = jnp.arange(n)

    def summary(st, want):
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
        bits = jax.lax.bitcast_convert_type(obs, jnp.uint32)
        differ = bits != want  # [n, D]
        first = jnp.argmax(differ, axis=-1)  # per seat, the first differing entry
        got = jnp.take_along_axis(bits, first[:, None], axis=-1)[:, 0]
        obs_diff = (jnp.sum(differ, axis=-1, dtype=jnp.int32), first.astype(jnp.int32), got)
        # Pgx's convention: the state's mask is the game's, all True once terminated; and the
        # state's observation is the current player's
        conventions = (jnp.all(st.legal_action_mask == (raw_mask | st.terminated))
                       & jnp.all(st.observation == obs[st.current_player]))  # fmt: skip
        return row, obs_diff, raw_mask, conventions

    def one_state(i, st, orders, leaders, actions, want):
        # state i: the first state for i = 0, else the state after action i - 1 (one copy of
        # the summary in the compiled loop, not one more for the first state)
        choice = greedy_policy(env, st)
        h = jnp.minimum(st.game_state.hand_number + 1, orders.shape[0] - 1)
        moved = env.step_deal(st, actions[jnp.maximum(i - 1, 0)], Deal(orders[h], leaders[h]))
        st = jax.tree.map(lambda a, b: jnp.where(i == 0, a, b), st, moved)
        return st, (summary(st, want), st.rewards, choice)

    # jitted on its own so that it is traced once: for the shapes of the loop's buffers, then
    # (the same argument types, so JAX's cache of traces) inside the loop; a few seconds a
    # configuration, the same compiled program
    every_game = jax.jit(jax.vmap(one_state, in_axes=(None, 0, 0, 0, 0, 0)))

    def chunk(orders, leaders, actions, core_bits, steps):
        # time-major buffers [state, game, ...], written in place state by state; the loop
        # stops after state ``steps`` (the chunk's longest game), the rest stays zero
        st = jax.vmap(lambda o, lead: env.init_deal(Deal(o[0], lead[0])))(orders, leaders)
        first = jnp.int32(0)
        shapes = jax.eval_shape(every_game, first, st, orders, leaders, actions,
                                core_bits[0])[1]
        out = jax.tree.map(lambda x: jnp.zeros((core_bits.shape[0], *x.shape), x.dtype), shapes)

        def body(i, carry):
            st, out = carry
            st, res = every_game(i, st, orders, leaders, actions, core_bits[i])
            return st, jax.tree.map(lambda buf, x: buf.at[i].set(x), out, res)

        _, (rows, rewards, choices) = jax.lax.fori_loop(first, steps + 1, body, (st, out))
        # the rewards and greedy choice of action k are those of state k + 1
        out = (rows, rewards[1:], choices[1:])
        return jax.tree.map(lambda x: jnp.swapaxes(x, 0, 1), out)

    return env, jax.jit(chunk)


def run_in_chunks(run, core: CoreRun):
    """Every game of ``core`` through ``run``, the results in game order. The games go in
    order of length, in chunks of equal size (one compile; the last chunk is filled with
    copies of its last game), each replayed up to its longest game's last action: a chunk of
    short games does not step through the longest game's length (double-twelve's games are
    41% of the longest on average)."""
    G, L1 = core.scalars.shape[:2]
    n, D = core.obs_bits[0].shape[1:]
    size = max(1, min(G, CHUNK_BYTES // (L1 * n * D * 4)))
    by_length = np.argsort(core.length, kind="stable")
    parts = []
    for a in range(0, G, size):
        games = by_length[np.minimum(np.arange(a, a + size), G - 1)]
        bits = np.zeros((L1, size, n, D), np.uint32)  # time-major
        for i, g in enumerate(games):
            bits[: len(core.obs_bits[g]), i] = core.obs_bits[g]
        steps = np.int32(core.length[games].max())
        out = run(core.orders[games], core.leaders[games], core.actions[games], bits, steps)
        out = jax.device_get(out)
        del bits
        keep = min(size, G - a)
        parts.append(jax.tree.map(lambda x, keep=keep: x[:keep], out))
    place = np.empty(G, np.int64)
    place[by_length] = np.arange(G)  # game g is row place[g] of the joined chunks
    return jax.tree.map(lambda *xs: np.concatenate(xs)[place], *parts)


# -- the tests ---------------------------------------------------------------------------------
def _first_mismatch(got, want, valid, what):
    bad = np.argwhere((got != want).reshape(*valid.shape, -1).any(axis=-1) & valid)
    if bad.size:
        g, i = bad[0]
        pytest.fail(f"{what}: game {g}, state {i} (after {i} actions): JAX {got[g, i].tolist()} "
                    f"!= core {want[g, i].tolist()}")


def observation_mismatch(obs_diff, core: CoreRun, valid) -> str | None:
    """The first state and seat whose observation differs from the core's in any entry: its
    first differing entry with both values, and how many entries differ; None if none does."""
    count, first, got = obs_diff  # each [G, L + 1, n]
    bad = np.argwhere((count > 0) & valid[..., None])
    if not bad.size:
        return None
    g, k, seat = bad[0]
    j = first[g, k, seat]
    got_w, want_w = (int(w) for w in (got[g, k, seat], core.obs_bits[g][k, seat, j]))
    got_f, want_f = (float(np.array([w], np.uint32).view(np.float32)[0]) for w in (got_w, want_w))
    return (f"observation: game {g}, state {k} (after {k} actions), seat {seat}, entry {j}: "
            f"JAX {got_f!r} (bits 0x{got_w:08x}) != core {want_f!r} (bits 0x{want_w:08x}); "
            f"{count[g, k, seat]} entries of this vector differ, {len(bad)} vectors")


def mask_mismatch(masks, core: CoreRun, valid) -> str | None:
    bad = np.argwhere((masks != core.masks) & valid[..., None])
    if not bad.size:
        return None
    g, k, code = bad[0]
    return (f"legal mask: game {g}, state {k} (after {k} actions), action code {code}: "
            f"JAX {bool(masks[g, k, code])} != core {bool(core.masks[g, k, code])}")


def hands_for(rules: RuleConfig) -> int:
    """The hands dealt for ``rules``: ``HANDS`` with a double-six set, fewer with more tiles."""
    return -(-HANDS * 28 // rules.num_tiles)


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_jax_game_equals_core(name):
    rules = RuleConfig(**CONFIGS[name])
    hands = hands_for(rules)
    core = CoreRun(rules, hands, seed=sorted(CONFIGS).index(name))
    assert core.hands >= hands
    env, run = jax_runner(name)
    (rows, obs_diff, masks, conventions), rewards, choices = run_in_chunks(run, core)
    G, L1 = core.scalars.shape[:2]
    valid = np.arange(L1)[None, :] <= core.length[:, None]  # states 0 .. length
    _first_mismatch(rows, core.scalars, valid, f"scalars {SCALARS}")
    for found in (mask_mismatch(masks, core, valid), observation_mismatch(obs_diff, core, valid)):
        assert found is None, found
    assert conventions[valid].all(), "state.legal_action_mask / state.observation conventions"
    moves = valid[:, 1:]
    np.testing.assert_allclose(rewards[moves], core.rewards[moves], rtol=1e-5, atol=1e-7)
    greedy_steps = moves & core.greedy[:, None]
    assert greedy_steps.any() and (~core.greedy).any()
    _first_mismatch(choices[..., None], core.actions[..., None], greedy_steps,
                    "greedy_policy vs agents.greedy")


def test_one_flipped_bit_is_reported():
    """The comparison finds one flipped bit in one entry of one seat's observation, and one
    flipped legal-mask entry, and names where (the last entry of the last state of the last
    game, where a slip in chunking or padding would lose it)."""
    core = CoreRun(RuleConfig(**CONFIGS["2p"]), 40, seed=0)
    _, run = jax_runner("2p")
    G, L1 = core.scalars.shape[:2]
    valid = np.arange(L1)[None, :] <= core.length[:, None]
    g, k = G - 1, core.length[-1]
    core.obs_bits[g] = core.obs_bits[g].copy()
    core.obs_bits[g][k, 1, -1] ^= 1
    core.masks[g, k, -1] ^= True
    (_, obs_diff, masks, _), _, _ = run_in_chunks(run, core)
    D = core.obs_bits[g].shape[-1]
    assert observation_mismatch(obs_diff, core, valid).startswith(
        f"observation: game {g}, state {k} (after {k} actions), seat 1, entry {D - 1}: ")
    assert mask_mismatch(masks, core, valid).startswith(
        f"legal mask: game {g}, state {k} (after {k} actions), action code {4 * 28 - 1}: ")
