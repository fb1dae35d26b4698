"""The public API against arguments found by another hostile pass: each was a hang, a
``MemoryError``, an exception of another type (``AttributeError``, ``IndexError``,
``OverflowError``, ``RecursionError``, a ``RuntimeError`` from the argument itself) or a silent
wrong answer; each is now a ``ValueError`` or ``TypeError`` naming the problem."""

from __future__ import annotations

import random
import re

import numpy as np
import pytest

import dominoes_env
from agents import make_agent
from agents.arena import play_match
from dominoes_env import RandomPlayer, SingleAgentEnv
from dominoes_env.core import DealSampler, HandState, MatchState, RuleConfig
from dominoes_env.obs.actions import encode_action, mask_of

BAD = (ValueError, TypeError)


def _reset(env):
    env.reset(seed=0)
    return env


def _deep(depth: int = 200_000) -> list:
    top = here = []
    for _ in range(depth):
        here.append([])
        here = here[0]
    return top


@pytest.mark.parametrize("spec", [
    "search:sims=1,min_per_move=3000000",
    "guided:sims=1,min_per_move=100000000000",
    "guided:time_ms=50,chunk=100000000000",
    "guided:sims=2,pool=100000000000",
    "guided:pool=1000,chunk=1001",  # each in range, their product not
])  # fmt: skip
def test_a_search_budget_past_its_bound_is_refused_when_built(spec):
    """Only ``sims`` was bounded: these hung a decision or asked for terabytes."""
    with pytest.raises(ValueError, match="out of range|deals a chunk"):
        make_agent(spec)


@pytest.mark.parametrize("call", [
    lambda deep: dominoes_env.env(reward_mode=deep),
    lambda deep: dominoes_env.env(render_mode=deep),
    lambda deep: SingleAgentEnv(learner=deep),
    lambda deep: _reset(dominoes_env.env()).step(deep),
    lambda deep: play_match(["random", "random"], rules=deep),
    lambda deep: encode_action(0, deep),
])  # fmt: skip
def test_a_message_about_a_value_nested_too_deeply_to_print_is_still_made(call):
    """The messages wrote the bad value with ``!r``, which raised ``RecursionError``."""
    with pytest.raises(BAD, match="deeply nested list"):
        call(_deep())


def test_a_value_with_too_many_digits_to_print_is_named_by_its_size():
    with pytest.raises(ValueError, match=r"reward_mode=<integer of about 5000 digits> is not"):
        dominoes_env.env(reward_mode=10**4999 * 9)


class _RaisingIndex:
    def __index__(self):
        raise RuntimeError("no")


class _RaisingRepr:
    def __repr__(self):
        raise RuntimeError("no")


def test_an_argument_whose_own_conversions_raise_is_a_type_error_naming_it():
    with pytest.raises(TypeError, match=r"num_players=.* \(its __index__ raised RuntimeError\)"):
        RuleConfig(num_players=_RaisingIndex())
    with pytest.raises(BAD, match=r"next_leader=<_RaisingRepr whose repr\(\) fails>"):
        RuleConfig(next_leader=_RaisingRepr())
    with pytest.raises(BAD):
        make_agent(_RaisingRepr())


@pytest.fixture
def guess():
    """A view of double-twelve at four players and a deal that fits it."""
    match = MatchState(RuleConfig(num_players=4, max_pip=12), seed=3)
    view = match.view(match.turn)
    hands, bone = DealSampler.from_view(view).sample(random.Random(0))
    return view, hands, list(bone)


@pytest.mark.parametrize("tile", [2**70, 10**11])
def test_a_boneyard_tile_past_the_set_is_refused_without_shifting_by_it(guess, tile):
    """``1 << tile`` came first: ``OverflowError``, or all the memory for ``1 << 10**11``."""
    view, hands, bone = guess
    with pytest.raises(ValueError, match="a boneyard tile=.* is out of range; allowed: 0..90"):
        HandState.from_view(view, hands, [tile, *bone[1:]])


def test_numpy_boneyard_tiles_of_a_large_set_fit_and_a_bool_does_not(guess):
    view, hands, bone = guess
    state = HandState.from_view(view, hands, [np.int64(t) for t in bone])  # OverflowError
    assert state.boneyard_left == len(bone)
    with pytest.raises(TypeError, match="must be an integer, not a boolean"):
        HandState.from_view(view, hands, [True] + bone[1:])
    with pytest.raises(TypeError, match="must be an integer, not float"):  # never truncated
        HandState.from_view(view, hands, [float(bone[0])] + bone[1:])


def test_bools_are_no_seats_or_codes():
    """``True`` read as seat or code 1."""
    rules = RuleConfig()
    with pytest.raises(TypeError, match="seat=True"):
        rules.side_of(True)
    with pytest.raises(TypeError, match=r"seat=array\(\[0, 1\]\) must be an integer"):
        rules.side_of(np.array([0, 1]))  # numpy's "truth value ... is ambiguous" named nothing
    hand = MatchState(seed=1).hand
    for method in (hand.count_after, hand.points_after):
        with pytest.raises(TypeError, match="code=True"):
            method(True)


@pytest.mark.parametrize("codes, size, message", [
    ([5], 4, r"codes=\[5\] holds 5, which is no code of 0..3"),  # IndexError
    ([-1], 4, r"holds -1"),  # set the last code
    ([True], 4, r"holds True"),  # set code 1
    (5, 4, r"codes=5 is no code"),
    ([], 10**12, r"size=1000000000000 is out of range"),  # MemoryError
])  # fmt: skip
def test_mask_of_refuses_what_is_no_code(codes, size, message):
    with pytest.raises(ValueError, match=message):
        mask_of(codes, size)


def test_encode_action_checks_the_number_of_tiles():
    with pytest.raises(TypeError, match="num_tiles=True"):
        encode_action(0, None, num_tiles=True)
    with pytest.raises(ValueError, match="num_tiles=-5 is out of range"):  # said "0..-6"
        encode_action(0, None, num_tiles=-5)


@pytest.mark.parametrize("seed", [-1, "abc", 1.5, True, 2**64])
def test_random_player_checks_its_seed(seed):
    """``RandomPlayer(seed=-1)`` played as seed 1, and a str or a float was taken."""
    with pytest.raises(BAD, match="seed"):
        RandomPlayer(seed=seed)
    with pytest.raises(BAD, match="seed"):
        RandomPlayer().reset(seed=seed)


def test_the_pictures_check_what_they_draw():
    from dominoes_env.render.ansi import render_ansi
    from dominoes_env.render.image import render_rgb
    from dominoes_env.render.svg import layout_svg, match_svg, tile_svg

    hand = MatchState(seed=1).hand
    for draw in (render_ansi, layout_svg, render_rgb):
        with pytest.raises(TypeError, match="state must be a HandState or a SeatView"):
            draw(None)
    with pytest.raises(TypeError, match="match must be a MatchState"):
        match_svg(None)
    with pytest.raises(ValueError, match="size must be"):
        render_rgb(hand, size=(5,))  # IndexError
    for size in ((10**12, 1), (100_000, 100_000)):  # OverflowError, MemoryError
        with pytest.raises(ValueError, match="out of range"):
            render_rgb(hand, size=size)
    for pips in ((99, 99), (-1, 0)):  # IndexError; a tile of -1 pips drawn
        with pytest.raises(ValueError, match="first=.* is out of range; allowed: 0..12"):
            tile_svg(*pips)
    with pytest.raises(TypeError, match="hand_number=True"):  # "hand 2"
        render_ansi(hand, hand_number=True)
    with pytest.raises(TypeError, match=r"scores\[0\]=None"):  # "side 0 None"
        render_ansi(hand, scores=[None, None])
    assert "side 1 5" in render_ansi(hand, scores=np.array([3, 5]), hand_number=0)


# -- the environment wrappers -----------------------------------------------------------------
def _play_hand_episode(env) -> dict:
    obs, info = env.reset(seed=0)
    done = False
    while not done:
        obs, _, done, _, info = env.step(int(np.flatnonzero(env.action_masks())[0]))
    return info


def test_a_hand_episode_s_last_info_and_picture_name_the_hand_played():
    """The match had dealt its next hand already: the first hand's end said hand 1 (its info)
    and "hand 2" (its picture)."""
    env = SingleAgentEnv(num_players=2, seat=0, episode="hand", info_events=True,
                         render_mode="ansi")
    info = _play_hand_episode(env)
    assert info["hand_number"] == 0 and [r[0] for r in info["hand_results"]] == [0]
    assert "hand 1 ·" in env.render()
    aec = dominoes_env.env(episode="hand", render_mode="ansi")
    aec.reset(seed=0)
    for _agent in aec.agent_iter():
        obs, _, done, truncated, _ = aec.last()
        aec.step(None if done or truncated else int(np.flatnonzero(obs["action_mask"])[0]))
        if not aec.agents:
            break
    assert "hand 1 ·" in aec.render()


def test_a_copy_of_a_parallel_env_mid_episode_goes_on_from_there():
    """It was rebuilt from its constructor's arguments alone: no agents, no match."""
    import copy
    import pickle

    env = dominoes_env.parallel_env(num_players=2)
    obs, _ = env.reset(seed=0)
    agent = env.agent_selection
    env.step({agent: int(np.flatnonzero(obs[agent]["action_mask"])[0])})
    for twin in (copy.deepcopy(env), pickle.loads(pickle.dumps(env))):
        assert twin.agents == env.agents and twin.agent_selection == env.agent_selection
        assert twin.state().tolist() == env.state().tolist()


def test_the_raw_env_before_reset_says_reset_first():
    """``step``, ``last``, ``agent_iter`` and ``num_agents`` of the unwrapped env were bare
    AttributeErrors."""
    from dominoes_env.aec import ResetFirstError, raw_env

    env = raw_env()
    for call in (lambda: env.step(0), env.last, lambda: list(env.agent_iter()),
                 lambda: env.num_agents):
        with pytest.raises(ResetFirstError, match="call reset"):
            call()
    assert getattr(env, "no_such_thing", None) is None  # other names: AttributeError as ever


@pytest.mark.parametrize("max_iter", ["x", None, 1.5, -1])
def test_agent_iter_checks_max_iter(max_iter):
    env = dominoes_env.env()
    env.reset(seed=0)
    with pytest.raises(BAD, match="max_iter"):
        env.agent_iter(max_iter)


class _OverflowingIndex:
    def __index__(self):
        raise OverflowError("no")


@pytest.mark.parametrize("action", [_OverflowingIndex(), np.ma.masked_array(1, mask=True)])
def test_an_action_that_is_no_code_is_a_type_error(action):
    """An ``__index__`` raising OverflowError went through; a masked value was played."""
    env = SingleAgentEnv(num_players=2)
    env.reset(seed=0)
    with pytest.raises(TypeError, match="an action is an integer code"):
        env.step(action)


def test_an_agent_class_for_an_opponent_is_refused_naming_opponents():
    from agents import RandomAgent

    with pytest.raises(TypeError, match="opponents=RandomAgent is a class"):
        SingleAgentEnv(opponents=RandomAgent)
    with pytest.raises(TypeError, match=r"opponents\[0\]="):
        SingleAgentEnv(opponents=[RandomAgent])


def test_openspiel_deserialize_and_the_information_state_check_their_numbers():
    pyspiel = pytest.importorskip("pyspiel")
    import dominoes_env.openspiel as spiel

    game = pyspiel.load_game("python_straight_dominoes")
    for text, says in (("history=-1:0,-1:1_0\nmove_number=2\n__dict__=", "is not 'player:a"),
                       ("history=-1:\u0665\nmove_number=1\n__dict__=", "is not 'player:action'"),
                       ("history=-1:-1\nmove_number=1\n__dict__=", "holds no action"),  # Spiel
                       ("history=-1:" + "9" * 30 + "\nmove_number=1\n__dict__=", "holds no")):
        with pytest.raises(ValueError, match=says):
            game.deserialize_state(text)
    state = game.new_initial_state()
    observer = game.make_py_observer(pyspiel.IIGObservationType(perfect_recall=True))
    for player in (9, -1):  # 'p9 ...' was written
        with pytest.raises(ValueError, match="player=.* is out of range"):
            spiel.information_state_string(state, player)
        with pytest.raises(ValueError, match="player=.* is out of range"):
            observer.string_from(state, player)


def test_an_unknown_rule_option_that_does_not_print_is_quoted_in_one_line():
    """Found by the records fuzzer: a key ``'\\n'`` split the message in two."""
    with pytest.raises(ValueError, match=r"unknown rule option\(s\) '\\n'; allowed") as err:
        RuleConfig.from_dict({"\n": 1})
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("agents", [None, {"random": 1, "greedy": 2}])
def test_play_match_refuses_agents_that_are_no_list(agents):
    """None said "object of type 'NoneType' has no len()"; a dict played its keys."""
    with pytest.raises(TypeError, match="agents must be a list of agent specs or objects"):
        play_match(agents)


def test_a_boneyard_that_is_no_list_of_tiles_is_named():
    hands = [[(6, 6), (6, 3), (1, 2), (0, 0), (2, 2), (3, 3), (4, 5)],
             [(5, 5), (0, 1), (1, 1), (2, 3), (3, 4), (0, 6), (1, 6)]]
    with pytest.raises(TypeError, match="boneyard must be a list of tiles, not 5"):
        HandState.from_tiles(RuleConfig(), leader=0, hands=hands, boneyard=5)


def test_read_record_refuses_a_match_that_is_no_index_or_key(tmp_path):
    """``match=True`` looked for a match named 'True'."""
    from dominoes_env.record_io import read_record

    with pytest.raises(TypeError, match="match must be a match index or key"):
        read_record(tmp_path, match=True)


def test_rules_given_as_a_dict_are_named_before_the_layout_cache_is_asked(tmp_path):
    """The cache was looked up before the type was checked: "unhashable type: 'dict'"."""
    from agents.ppo import random_policy_npz
    from dominoes_env.obs.v2 import observation_layout

    for call in (lambda rules: observation_layout(rules),
                 lambda rules: random_policy_npz(tmp_path / "p.npz", rules)):
        with pytest.raises(TypeError, match=r"^rules must be a RuleConfig, not dict$"):
            call({"num_players": 2})
    assert not (tmp_path / "p.npz").exists()


def _overflowing_policy(path, rules) -> None:
    """A policy file that passes every check of the format (64 layers at most, each weight
    within MAX_WEIGHT) whose logits overflow: 60 ReLU layers of weights 1e6."""
    from agents.ppo import random_policy_npz
    from dominoes_env.policy_format import MAX_WEIGHT, read_policy, write_policy

    random_policy_npz(path, rules, hidden=(4,) * 60, activation="relu")
    policy = read_policy(path)
    *hidden, (head_w, head_b) = policy.layers
    arrays = {}
    for i, (w, b) in enumerate(hidden):
        arrays[f"w{i}"] = np.full(w.shape, MAX_WEIGHT, np.float32)
        arrays[f"b{i}"] = np.full(b.shape, MAX_WEIGHT, np.float32)
    arrays["action_w"] = np.full(head_w.shape, MAX_WEIGHT, np.float32)
    arrays["action_b"] = np.zeros(head_b.shape, np.float32)
    write_policy(path, arrays, "relu", policy.metadata, overwrite=True)


@pytest.mark.parametrize("spec", ["ppo:{}", "ppo:{},deterministic=False",
                                  "guided:policy={},sims=16",
                                  "guided:policy={},sims=16,batch=False"])
def test_a_policy_whose_logits_overflow_is_refused_naming_its_file(spec, tmp_path):
    """NaN probabilities were played as the first (or last) legal move, and the guided
    rollouts' policy moves as the first legal one, without a word."""
    path = tmp_path / "overflow.npz"
    match = MatchState(seed=2)
    _overflowing_policy(path, match.rules)
    agent = make_agent(spec.format(path), seed=0)
    with pytest.raises(ValueError, match=rf"^policy file {re.escape(repr(str(path)))}: its "
                                         "network gives NaN or infinite logits"):
        agent.act(match.view(match.turn))


@pytest.mark.parametrize("change, error, message", [
    ({"matches": 10**12}, ValueError, r"^matches=10+ is out of range; allowed: 1\.\.10000000$"),
    ({"matches": 2.5}, TypeError, r"^matches=2\.5 must be an integer, not float$"),
    ({"matches": True}, TypeError, r"^matches=True must be an integer, not a boolean$"),
    ({"workers": 2.5}, TypeError, r"^workers=2\.5 must be an integer, not float$"),
    ({"workers": 0}, ValueError, r"^workers=0 is out of range; allowed: >= 1$"),
    ({"opponents": []}, ValueError, r"^opponents is empty; give at least one agent spec$"),
    ({"opponents": "random"}, TypeError, r"^opponents must be a list of agent spec strings"),
    ({"opponents": ["nonsense"]}, ValueError, r"^opponents: unknown agent spec 'nonsense'"),
    ({"teacher": None}, TypeError, r"^teacher must be an agent spec string"),
    ({"rules": None}, TypeError, r"^rules must be a RuleConfig, got None$"),
    ({"seed": -1}, ValueError, r"^seed=-1 is out of range; allowed: 0\.\.18446744073709551615$"),
    ({"progress": 1}, TypeError, r"^progress=1 must be true or false, not int$"),
    ({"finished": ()}, TypeError, r"^finished=\(\) must be a list \(or None\)$"),
])  # fmt: skip
@pytest.mark.timeout(60)
def test_collect_demonstrations_checks_its_arguments_before_playing(change, error, message):
    """10**12 matches hung building the list of matches, 2.5 was a bare TypeError and True one
    match, ``[]`` a ZeroDivisionError, ``"random"`` was read letter by letter, ``None`` rules
    an AttributeError and ``seed=-1`` played the deals of seed 1."""
    from agents.imitation import collect_demonstrations

    kwargs = {"teacher": "greedy", "opponents": ["random"], "rules": RuleConfig(target_score=20),
              "matches": 1, "seed": 0, **change}
    with pytest.raises(error, match=message):
        collect_demonstrations(**kwargs)


@pytest.mark.parametrize("call, error, message", [
    (lambda pool_cls, agent: pool_cls(self_weight=float("nan")), ValueError,
     r"^self_weight=nan must be a finite number$"),  # snapshots were never drawn
    (lambda pool_cls, agent: pool_cls(self_weight=True), TypeError,
     r"^self_weight=True must be a number$"),
    (lambda pool_cls, agent: pool_cls(self_weight="2"), TypeError,
     r"^self_weight='2' must be a number$"),  # "'<' not supported"
    (lambda pool_cls, agent: pool_cls(self_weight=-1), ValueError,
     r"^self_weight=-1\.0 is out of range; allowed: >= 0$"),
    (lambda pool_cls, agent: pool_cls([(agent, float("inf"))]), ValueError,
     r"^weight=inf must be a finite number$"),  # failed at the next reset()
    (lambda pool_cls, agent: pool_cls([(None, 1.0)]), TypeError,
     r"^agent=None is no agent: a pool member has act\(view\) and reset\(seed\)"),
    (lambda pool_cls, agent: pool_cls().add(type(agent), 1.0), TypeError, r"is no agent"),
    (lambda pool_cls, agent: pool_cls().add_snapshot(None), TypeError, r"^agent=None is no"),
    (lambda pool_cls, agent: pool_cls([agent]), TypeError,
     r"^members\[0\]=.* must be an \(agent, weight\) pair$"),
    (lambda pool_cls, agent: pool_cls(agent), TypeError,
     r"^members=.* must be a list of \(agent, weight\) pairs$"),
])  # fmt: skip
def test_opponent_pool_checks_its_members_and_weights_when_given(call, error, message):
    """``None`` was taken as a member and failed at ``reset()`` with an AttributeError, an
    infinite weight at the next draw, and a NaN ``self_weight`` kept every snapshot out."""
    from agents import RandomAgent
    from agents.pool import OpponentPool

    with pytest.raises(error, match=message):
        call(OpponentPool, RandomAgent())
