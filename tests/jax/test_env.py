"""The JAX env's API: options and their errors, Pgx conventions, vmap = single runs, the AEC env's
rewards and observations for every episode / reward mode, the policies, and that
``import dominoes_env`` stays free of jax."""

from __future__ import annotations

import random
import subprocess
import sys

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

from dominoes_env.aec import raw_env  # noqa: E402
from dominoes_env.core import MatchState, RuleConfig, tie_rank  # noqa: E402
from dominoes_env.jax import Deal, greedy_policy, make, random_policy  # noqa: E402
from dominoes_env.jax.tables import build_tables  # noqa: E402
from dominoes_env.obs import DEFAULT_VERSION, observation_spec  # noqa: E402
from dominoes_env.obs.v2 import observation_size  # noqa: E402

from ..helpers import CONFIGS  # noqa: E402


def test_import_dominoes_env_stays_free_of_jax():
    code = ("import sys, dominoes_env, dominoes_env.core, dominoes_env.obs, dominoes_env.aec;"
            "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('jax', 'jaxlib', 'pgx'));"
            "print(bad); sys.exit(1 if bad else 0)")  # fmt: skip
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("options", [
    dict(num_players=5), dict(max_pip=8), dict(num_players=3, partnerships=True),
    dict(hand_size=15), dict(spinner="sometimes"), dict(boneyard_reserve=99),
])  # fmt: skip
def test_invalid_rules_raise_the_rule_config_error(options):
    with pytest.raises(ValueError) as core_err:
        RuleConfig(**options)
    with pytest.raises(ValueError) as jax_err:
        make(**options)
    assert str(jax_err.value) == str(core_err.value)


def test_invalid_env_options_raise_before_tracing():
    with pytest.raises(ValueError, match="episode='round' is not allowed"):
        make(episode="round")
    with pytest.raises(ValueError, match="reward_mode='elo' is not allowed"):
        make(reward_mode="elo")
    with pytest.raises(ValueError, match="unknown option"):
        make(num_player=2)
    with pytest.raises(ValueError, match="illegal_action='raise' is not possible"):
        make(illegal_action="raise")
    with pytest.raises(ValueError, match="info_events=True is not possible"):  # was ignored
        make(info_events=True)
    with pytest.raises(TypeError, match="hand must be a HandState, not NoneType"):
        make().deal_from_hand(None)  # AttributeError
    with pytest.raises(ValueError, match=r"target_score=100000 is out of range; allowed: 1..65536"):
        make(target_score=100_000)


def test_rules_option_as_a_base_as_the_other_envs_take_it():
    """``make(rules=RuleConfig(...))`` was refused ("unknown option(s) rules") while raw_env,
    parallel_env and SingleAgentEnv take it."""
    base = RuleConfig(num_players=3, target_score=100)
    env = make(rules=base, episode="hand")
    assert env.rules == base == raw_env(rules=base).rules and env.options.episode == "hand"
    assert make(rules=base, target_score=50).rules == base.replace(target_score=50)
    by_fields = make(**base.to_dict(), episode="hand")
    assert (env.num_players, env.num_actions, env.obs_size) == (
        by_fields.num_players, by_fields.num_actions, by_fields.obs_size)
    with pytest.raises(TypeError, match="rules must be a RuleConfig, not dict"):
        make(rules={"num_players": 3})


def test_properties_match_the_numpy_encoding():
    for opts in (dict(), dict(num_players=3), dict(num_players=4, max_pip=12, hand_size=15)):
        env = make(**opts)
        rules = RuleConfig(**opts)
        assert env.num_players == rules.num_players
        assert env.num_actions == rules.num_tiles * 4
        assert env.observation_shape == (observation_size(rules),)
        assert env.id == "straight_dominoes" and env.version.startswith("v0")
        for version in (3, 4, 5):
            later = make(**opts, obs_version=version)
            assert later.obs_version == version
            assert later.observation_shape == (observation_spec(version).layout(rules).size,)


def test_version_names_the_observation_version_the_env_was_built_with():
    assert make().version == f"v0-obs{DEFAULT_VERSION}"
    assert [make(obs_version=v).version for v in (2, 3, 4, 5)] == [
        "v0-obs2", "v0-obs3", "v0-obs4", "v0-obs5"]


def test_each_observation_version_starts_with_the_one_before():
    """The differential test compares version 5 with the core; its first parts must be the JAX
    version 2, 3 and 4 observations themselves."""
    envs = [make(num_players=3, obs_version=v) for v in (2, 3, 4, 5)]
    sizes = [e.observation_shape[0] for e in envs]

    def run(key):
        def body(state, k):
            k_act, k_deal = jax.random.split(k)
            state = envs[-1].step(state, random_policy(envs[-1], state, k_act), k_deal)
            seats = jnp.arange(3)
            return state, tuple(jax.vmap(e.observe, in_axes=(None, 0))(state, seats)
                                for e in envs)

        return jax.lax.scan(body, envs[-1].init(key), jax.random.split(key, 40))[1]

    obs = jax.jit(jax.vmap(run))(jax.random.split(jax.random.PRNGKey(5), 16))
    # version 5 at three seats: one later seat, its two rows
    assert sizes == [sizes[0], sizes[0] + 112, sizes[0] + 3 * 112, sizes[0] + 5 * 112]
    for shorter, longer, size in zip(obs, obs[1:], sizes, strict=False):
        np.testing.assert_array_equal(np.asarray(longer[..., :size]), np.asarray(shorter))
    for start in range(sizes[0], sizes[3], 112):  # every lookahead block is used
        assert np.asarray(obs[3][..., start:start + 112]).any()


def test_explicit_deal_is_checked_and_used():
    env = make()
    hands = [[(6, 6), (6, 3), (1, 2), (0, 0), (2, 2), (3, 3), (4, 5)],
             [(5, 5), (0, 1), (1, 1), (2, 3), (3, 4), (0, 6), (1, 6)]]  # fmt: skip
    with pytest.raises(ValueError, match="dealt twice"):
        env.deal_from_tiles([hands[0], hands[0]])
    state = jax.jit(env.init_deal)(env.deal_from_tiles(hands, leader=1))
    assert int(state.current_player) == 1
    ts = env.rules.tiles
    lead = ts.index(5, 5) * 4
    assert sorted(np.flatnonzero(state.legal_action_mask).tolist()) == sorted(
        ts.index(a, b) * 4 for a, b in hands[1]
    )
    state = jax.jit(env.step)(state, lead, jax.random.PRNGKey(0))  # [5|5] counts 10: scores 10
    assert state.game_state.scores.tolist() == [0, 10]
    assert state.rewards.tolist() == pytest.approx([-10 / 250, 10 / 250])


# -- one compiled episode function, shared ---------------------------------------------------
STEPS = 60


@pytest.fixture(scope="module")
def env2():
    return make(num_players=2, target_score=100)


@pytest.fixture(scope="module")
def episode(env2):
    """Random play for ``STEPS`` steps from a key: every state's observation, mask, rewards."""

    def run(key):
        state = env2.init(key)

        def body(state, k):
            k_act, k_deal = jax.random.split(k)
            action = random_policy(env2, state, k_act)
            state = env2.step(state, action, k_deal)
            return state, (state.observation, state.legal_action_mask, state.rewards,
                           state.terminated, action)

        return jax.lax.scan(body, state, jax.random.split(key, STEPS))

    return run


@pytest.fixture(scope="module")
def batched(episode):
    return jax.jit(jax.vmap(episode))


def test_vmap_over_64_deals_equals_64_single_runs(episode, batched):
    keys = jax.random.split(jax.random.PRNGKey(11), 64)
    many = batched(keys)
    single = jax.jit(episode)
    for i in range(64):
        one = single(keys[i])
        for got, want in zip(jax.tree.leaves(many), jax.tree.leaves(one), strict=True):
            np.testing.assert_array_equal(np.asarray(got[i]), np.asarray(want))


def test_random_policy_plays_only_legal_moves(batched):
    keys = jax.random.split(jax.random.PRNGKey(3), 64)
    _, (obs, masks, rewards, terminated, actions) = batched(keys)
    # the action at step i was legal in the state before it (the mask of step i - 1)
    before = np.concatenate([np.ones_like(masks[:, :1]), masks[:, :-1]], axis=1)
    legal = np.take_along_axis(before, np.asarray(actions)[..., None], axis=2)[..., 0]
    assert legal.all()
    # zero-sum rewards, and a terminated state stays terminated with zero rewards
    np.testing.assert_allclose(np.asarray(rewards).sum(axis=-1), 0, atol=1e-6)
    term = np.asarray(terminated)
    assert term.any()
    after = np.concatenate([np.zeros_like(term[:, :1]), term[:, :-1]], axis=1)
    assert not np.asarray(rewards)[after].any()


def test_pgx_auto_reset_restarts_finished_games(env2):
    from pgx.experimental import auto_reset

    step = auto_reset(env2.step, env2.init)

    def run(key):
        state = env2.init(key)

        def body(state, k):
            state = step(state, greedy_policy(env2, state), k)
            x = state.game_state
            fresh = (state._step_count == 0) & (x.hand_number == 0) & jnp.all(x.scores == 0)
            return state, (state.terminated, fresh, state.legal_action_mask[
                greedy_policy(env2, state)])

        return jax.lax.scan(body, state, jax.random.split(key, 200))

    _, (terminated, fresh, playable) = jax.jit(jax.vmap(run))(
        jax.random.split(jax.random.PRNGKey(5), 8))
    terminated = np.asarray(terminated)
    assert terminated.sum() >= 8  # matches to 100 end well within 200 steps
    # Pgx's auto_reset: the step that ends a match returns a new match's first state, flagged
    # terminated; play goes on from it
    assert np.asarray(fresh)[terminated].all()
    assert np.asarray(playable).all()


@pytest.mark.parametrize("name", ["2p", "no-spinner", "double-twelve"])
def test_init_writes_the_observation_observe_computes(name):
    """``init`` writes a new match's observation from its few blocks that differ between
    matches (the rest is ``Tables.first_obs``): the same bits as ``observe``, over 64 deals,
    for every observation version (one program). (The differential tests compare every rule
    configuration's first states, version 5, with the core.)"""
    envs = [make(**CONFIGS[name], obs_version=v) for v in (2, 3, 4, 5)]

    def both(key):
        states = [env.init(key) for env in envs]
        return ([s.observation for s in states],
                [env.observe(s) for env, s in zip(envs, states, strict=True)])

    fast, full = jax.jit(jax.vmap(both))(jax.random.split(jax.random.PRNGKey(7), 64))
    for got, want in zip(fast, full, strict=True):
        np.testing.assert_array_equal(np.asarray(got).view(np.uint32),
                                      np.asarray(want).view(np.uint32))


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_a_new_match_looks_the_same_but_for_the_hand_and_its_move_points(name):
    """What ``Tables.first_obs`` stands for: the core's first observation of a match, hand and
    move points aside, is the same for every deal and leader."""
    rules = RuleConfig(**CONFIGS[name])
    lay = observation_spec(2).layout(rules)
    fixed = build_tables(rules).first_obs
    for seed in range(40):
        match = MatchState(rules, seed=seed)
        obs = observation_spec(2).encode(match.view(match.turn))
        assert obs[lay.hand].sum() == rules.hand_size
        obs[lay.hand] = obs[lay.move_points] = 0
        np.testing.assert_array_equal(obs, fixed)


@pytest.mark.parametrize("options", [
    dict(num_players=2, target_score=60),
    dict(num_players=4, episode="hand"),
    dict(num_players=3, target_score=40, reward_mode="win_loss", next_leader="rotate"),
])  # fmt: skip
def test_step_autoreset_is_pgx_auto_reset_leaf_for_leaf(options):
    """``Env.step_autoreset`` = ``pgx.experimental.auto_reset(env.step, env.init)``: every leaf
    of every state, over random play with an illegal or out-of-range action now and then (so
    matches end both by the rules and by the penalty)."""
    from pgx.experimental import auto_reset

    env = make(**options)
    pgx_step = auto_reset(env.step, env.init)

    def run(key):
        def body(carry, k):
            a_state, b_state = carry
            k_act, k_bad, k_mix, k_step = jax.random.split(k, 4)
            action = random_policy(env, a_state, k_act)
            wild = jax.random.randint(k_bad, (), -2, env.num_actions + 2)
            action = jnp.where(jax.random.uniform(k_mix) < 0.02, wild, action)
            a_state = env.step_autoreset(a_state, action, k_step)
            b_state = pgx_step(b_state, action, k_step)
            return (a_state, b_state), (a_state, b_state)

        start = env.init(key)
        return jax.lax.scan(body, (start, start), jax.random.split(key, 300))[1]

    ours, theirs = jax.jit(jax.vmap(run))(jax.random.split(jax.random.PRNGKey(11), 16))
    assert np.asarray(ours.terminated).sum() >= 16  # episodes ended and were restarted
    for a, b in zip(jax.tree.leaves(ours), jax.tree.leaves(theirs), strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_illegal_action_ends_the_game_and_penalises_the_offender():
    env = make(num_players=4)  # partnerships: seats 0 and 2 against 1 and 3
    state = jax.jit(env.init)(jax.random.PRNGKey(0))
    step = jax.jit(env.step)
    seat = int(state.current_player)
    illegal = int(np.flatnonzero(~np.asarray(state.legal_action_mask))[0])
    after = step(state, illegal, jax.random.PRNGKey(1))
    assert bool(after.terminated)
    side = [s % 2 for s in range(4)]
    assert after.rewards.tolist() == [-1.0 if side[s] == side[seat] else 1.0 for s in range(4)]
    assert np.asarray(after.legal_action_mask).all()  # Pgx: all True once terminated
    for a, b in zip(jax.tree.leaves(after.game_state), jax.tree.leaves(state.game_state),
                    strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))  # the game is unchanged
    again = step(after, 0, jax.random.PRNGKey(2))
    assert not np.asarray(again.rewards).any()
    out_of_range = step(state, 10_000, jax.random.PRNGKey(1))
    assert bool(out_of_range.terminated)


KEY_ERROR = r"key must be one PRNG key \(jax.random.PRNGKey\(seed\) or jax.random.key\(seed\)\)"


@pytest.mark.parametrize("key, shown", [
    (None, "got None [(]NoneType[)]$"),  # was AttributeError "'NoneType' object has no ..."
    (0, "got 0 [(]int[)]$"),
    (np.zeros(3, np.uint32), r"got an array of shape \(3,\) and dtype uint32$"),
    (np.zeros(2, np.float32), r"got an array of shape \(2,\) and dtype float32$"),
    (np.zeros((4, 2), np.uint32), r"shape \(4, 2\) and dtype uint32 \(a batch of keys: jax.vmap"),
])  # fmt: skip
def test_a_key_that_is_no_key_is_a_type_error_naming_it(key, shown):
    env = make(num_players=2)
    with pytest.raises(TypeError, match=f"^init's {KEY_ERROR}; .*{shown}"):
        env.init(key)
    with pytest.raises(TypeError, match=f"^init's {KEY_ERROR}; got "):
        jax.jit(env.init)(key)  # raised while tracing, from the static shape and dtype
    state = env.init(jax.random.PRNGKey(0))
    if key is not None:  # None is step's "no key" (refused with episode='match')
        with pytest.raises(TypeError, match=f"^step's {KEY_ERROR}; .*{shown}"):
            env.step(state, int(np.flatnonzero(state.legal_action_mask)[0]), key)
    with pytest.raises(TypeError, match=f"^step_autoreset's {KEY_ERROR}; .*{shown}"):
        env.step_autoreset(state, 0, key)


def test_both_kinds_of_key_deal_the_same_games_under_vmap():
    env = make(num_players=2)
    raw = jax.random.split(jax.random.PRNGKey(5), 3)
    typed = jax.random.split(jax.random.key(5), 3)
    init = jax.jit(jax.vmap(env.init))  # op by op: 190 small programs compiled, 5 s
    a, b = init(raw), init(typed)
    for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


@pytest.mark.parametrize("action, shown", [
    (1.5, r"got 1.5 \(float\)$"),  # was truncated to code 1 without a word
    (True, r"got True \(bool\)$"),
    (np.float32(4), r"got np.float32\(4.0\) \(float32\)$|shape \(\) and dtype float32$"),
    (np.zeros(3, np.int32), r"shape \(3,\) and dtype int32 \(a batch of actions: jax.vmap"),
])  # fmt: skip
def test_an_action_that_is_no_action_code_is_a_type_error(action, shown):
    env = make(num_players=2)
    state = env.init(jax.random.PRNGKey(0))
    with pytest.raises(TypeError, match=f"^action must be one integer action code .*; .*{shown}"):
        env.step(state, action, jax.random.PRNGKey(1))
    legal = np.int64(np.flatnonzero(state.legal_action_mask)[0])
    assert not bool(env.step(state, legal, jax.random.PRNGKey(1)).terminated)


def test_observe_refuses_a_seat_the_game_does_not_have():
    env = make(num_players=2)
    state = env.init(jax.random.PRNGKey(0))
    for seat in (2, 5, -1):  # returned a vector for a seat that does not exist
        with pytest.raises(ValueError, match=rf"player_id={seat} is out of range; allowed: 0..1"):
            env.observe(state, seat)
    assert env.observe(state, np.int64(1)).shape == (env.obs_size,)


@pytest.mark.parametrize("action", [2**40, -2**40, np.int64(2**40), np.uint64(2**63)])
def test_an_action_past_int32_is_a_value_error_naming_it(action):
    # 2**40 was an OverflowError from JAX's dtype code; np.int64(2**40) wrapped to code 0
    env = make(num_players=2)
    state = env.init(jax.random.PRNGKey(0))
    with pytest.raises(ValueError, match=rf"^action={int(action)} does not fit the int32 of an "
                                         rf"action code; action codes are 0..111 "):
        env.step(state, action, jax.random.PRNGKey(1))
    assert bool(env.step(state, 2**31 - 1, jax.random.PRNGKey(1)).terminated)  # penalised


def test_observe_checks_a_seat_of_any_kind_known_outside_jit():
    env = make(num_players=2)
    state = env.init(jax.random.PRNGKey(0))
    with pytest.raises(ValueError, match=r"player_id=7 is out of range; allowed: 0..1"):
        env.observe(state, jnp.int32(7))  # returned a vector for a seat that does not exist
    with pytest.raises(TypeError, match=r"player_id=1.0 must be an integer, not float"):
        env.observe(state, 1.0)  # was taken as seat 1
    for seat in (jnp.float32(1), jnp.bool_(True), jnp.arange(2)):
        with pytest.raises(TypeError, match=r"^player_id must be one integer seat 0..1; got an "):
            env.observe(state, seat)
    with pytest.raises(TypeError, match=r"seat 0..1; got an array of shape \(\) and dtype float32"):
        jax.jit(env.observe)(state, 1.0)
    want = np.asarray(env.observe(state, 1))
    np.testing.assert_array_equal(np.asarray(env.observe(state, jnp.int32(1))), want)
    np.testing.assert_array_equal(np.asarray(jax.jit(env.observe)(state, 1)), want)
    both = jax.vmap(env.observe, in_axes=(None, 0))(state, jnp.arange(2))
    np.testing.assert_array_equal(np.asarray(both[1]), want)


def test_a_state_of_another_env_is_a_type_error_naming_what_differs():
    # a 3-player or double-nine state ended in JAX's "incompatible shapes for broadcasting"
    # inside the step, and a double-six env observed a double-nine state without a word. The
    # check reads shapes and dtypes while tracing, so every call is traced only (eval_shape):
    # run op by op they took 20 s
    env = make(num_players=2, episode="hand")
    key = jax.random.PRNGKey(0)

    def traced(f, state):
        return jax.eval_shape(f, state)

    for other in (make(num_players=3, episode="hand"), make(num_players=2, max_pip=9),
                  make(num_players=4, partnerships=False)):
        state = jax.eval_shape(other.init, key)
        for call in (lambda s: env.step(s, 0, key), lambda s: env.observe(s, 0),
                     lambda s: env.step_autoreset(s, 0, key)):
            with pytest.raises(TypeError, match=r"state is not a State of this env: "
                                                r"\.\w+ is \w+\[\d*\], where this env's"):
                traced(call, state)
    state = jax.eval_shape(env.init, key)
    for bad, shown in ((None, "None"), ({}, "{}"), (state.game_state, "GameState")):
        with pytest.raises(TypeError, match=rf"^observe's state must be a State of this env "
                                            rf"\(from its init or step\); got {shown}"):
            env.observe(bad, 0)
    batch = jax.eval_shape(jax.vmap(env.init), jax.random.split(key, 3))
    with pytest.raises(TypeError, match=r"\(a batch of states: jax.vmap the env's methods\)"):
        traced(lambda b: env.observe(b, 0), batch)
    # a state of the same game is this env's, whatever it observes
    assert traced(lambda s: make(num_players=2).observe(s, 1), state).shape == (env.obs_size,)
    v3 = make(num_players=2, obs_version=3)
    assert traced(lambda s: v3.observe(s, 1), state).shape == (v3.obs_size,)
    assert traced(lambda s: v3.step(s, 0, key), state).observation.shape == (v3.obs_size,)
    assert traced(jax.vmap(lambda s: env.observe(s, 1)), batch).shape == (3, env.obs_size)


def test_greedy_tie_rank_is_agents_greedy():
    for m in (6, 9, 12):
        env = make(max_pip=m, num_players=2)
        assert env.tables.tie_rank.tolist() == list(tie_rank(m))


# -- against the AEC env: rewards, terminations and every agent's observation --------------------
@pytest.mark.parametrize("options", [
    dict(num_players=2, episode="hand", reward_mode="win_loss"),
    dict(num_players=2, episode="match", reward_mode="score_delta", target_score=60),
    dict(num_players=4, episode="match", reward_mode="win_loss", target_score=60),
])  # fmt: skip
def test_rewards_and_observations_equal_the_aec_env(options):
    env = make(**options)
    seats = jnp.arange(env.num_players)

    @jax.jit
    def step(state, action, deal):
        state = env.step_deal(state, action, deal)
        return state, jax.vmap(env.observe, in_axes=(None, 0))(state, seats)

    @jax.jit
    def init(deal):
        state = env.init_deal(deal)
        return state, jax.vmap(env.observe, in_axes=(None, 0))(state, seats)

    aec = raw_env(**options)
    no_deal = Deal(jnp.arange(env.tables.T, dtype=jnp.int32), jnp.int32(0))
    for episode in range(6):
        aec.reset(seed=episode)
        state, obs = init(env.deal_from_hand(aec.match.hand))
        rng = random.Random(episode)
        while True:
            for s, agent in enumerate(aec.possible_agents):
                want = aec.observe(agent)["observation"]
                assert np.array_equal(np.asarray(obs[s]).view(np.uint32), want.view(np.uint32))
                assert aec.rewards[agent] == pytest.approx(float(state.rewards[s]), abs=1e-6)
                assert aec.terminations[agent] == bool(state.terminated)
            if bool(state.terminated):
                break
            agent = aec.agent_selection
            assert aec.possible_agents[int(state.current_player)] == agent
            mask = aec.observe(agent)["action_mask"].astype(bool)
            assert np.array_equal(np.asarray(state.legal_action_mask), mask)
            action = rng.choice(np.flatnonzero(mask).tolist())
            hand_number = aec.match.hand_number
            aec.step(action)
            fresh = aec.match.hand_number != hand_number and not aec.match.is_over
            deal = env.deal_from_hand(aec.match.hand) if fresh else no_deal
            state, obs = step(state, action, deal)
        assert bool(state.terminated) and aec.terminations[aec.agent_selection]


#: plays 24 jitted steps of 8 games under each rule set and observation version, and prints
#: a digest of everything (observations, rewards, masks, state) and the 64-bit leaves
_PLAY_64 = """
import hashlib, jax, jax.numpy as jnp, numpy as np
from dominoes_env.jax import greedy_policy, make, random_policy
digest, wide = hashlib.sha256(), []
for opts in ({}, {"num_players": 4, "obs_version": 3},
             {"num_players": 3, "max_pip": 12, "episode": "hand", "reward_mode": "win_loss"}):
    env = make(**opts)
    keys = jax.random.split(jax.random.PRNGKey(1), 8)
    state = jax.jit(jax.vmap(env.init))(keys)
    step = jax.jit(jax.vmap(env.step))
    next_keys = jax.jit(jax.vmap(lambda k: jax.random.split(k)[0]))
    by_random = jax.jit(jax.vmap(lambda s, k: random_policy(env, s, k)))
    by_greedy = jax.jit(jax.vmap(lambda s: greedy_policy(env, s)))
    for i in range(24):
        keys = next_keys(keys)
        actions = by_random(state, keys) if i % 2 else by_greedy(state)
        state = step(state, actions, keys)
        for leaf in jax.tree.leaves(state):
            digest.update(np.asarray(leaf).tobytes())
            if np.asarray(leaf).dtype.itemsize == 8:
                wide.append(str(np.asarray(leaf).dtype))
print(digest.hexdigest(), sorted(set(wide)))
"""


def test_the_game_is_the_same_under_jax_enable_x64():
    """``JAX_ENABLE_X64=1`` (a common setting) plays the same games with the same 32-bit
    state: sums of int32 became int64 there, and every JAX program ended in a TypeError."""
    import os

    runs = {}
    for x64 in ("0", "1"):
        env = {**os.environ, "JAX_ENABLE_X64": x64}
        done = subprocess.run([sys.executable, "-c", _PLAY_64], capture_output=True, text=True,
                              env=env, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        runs[x64] = done.stdout.strip()
    assert runs["1"] == runs["0"] and runs["0"].endswith("[]")
