"""Adversarial inputs to the Python API: one rule for integer and boolean parameters everywhere
(numpy integers accepted, floats and booleans refused with an error naming the parameter), and
hypothesis fuzzing of ``RuleConfig``, the env options and game records: whatever comes in, the
answer is a valid object or a ``ValueError``/``TypeError``, never another exception."""

from __future__ import annotations

import json
import pickle
import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dominoes_env import env as aec_env
from dominoes_env import parallel_env
from dominoes_env.core import HandState, MatchState, RecordError, RuleConfig
from dominoes_env.core.errors import NoHandError
from dominoes_env.core.records import parse_record, replay_record
from dominoes_env.core.validation import ParameterTypeError, as_bool, as_float, as_int
from dominoes_env.options import split_options
from dominoes_env.single_agent import SingleAgentEnv

from .helpers import random_match

# -- the helper ----------------------------------------------------------------------------


@pytest.mark.parametrize("value", [3, np.int64(3), np.uint8(3), np.int32(3)])
def test_as_int_takes_any_integer_type(value):
    out = as_int("n", value, 1, 4)
    assert out == 3 and type(out) is int


@pytest.mark.parametrize("value, kind", [
    (3.0, "float"), (np.float64(3), "float64"), ("3", "str"), (None, "NoneType"), ([3], "list"),
])  # fmt: skip
def test_as_int_refuses_non_integers_naming_the_parameter(value, kind):
    with pytest.raises(ParameterTypeError, match=f"^count=.* must be an integer, not {kind}$"):
        as_int("count", value)


@pytest.mark.parametrize("value", [True, False, np.True_, np.bool_(False)])
def test_as_int_refuses_booleans(value):
    with pytest.raises(ParameterTypeError, match="count=.* must be an integer, not a boolean"):
        as_int("count", value)


def test_wrong_type_is_both_type_and_value_error():
    assert issubclass(ParameterTypeError, TypeError) and issubclass(ParameterTypeError, ValueError)


def test_range_and_huge_integers():
    with pytest.raises(ValueError, match=r"^n=5 is out of range; allowed: 1\.\.4$"):
        as_int("n", 5, 1, 4)
    with pytest.raises(ValueError, match=r"^n=<integer of about 5000 digits> is out of range"):
        as_int("n", 10**4999 * 7, 1, 4)


def test_as_bool_and_as_float():
    assert as_bool("p", np.True_) is True and as_bool("p", None, optional=True) is None
    for bad in (1, 0, "true", None):
        with pytest.raises(ParameterTypeError, match="p=.* must be true or false"):
            as_bool("p", bad)
    assert as_float("x", np.float32(0.5), 0, 1) == 0.5 and as_float("x", 2) == 2.0
    for bad, match in ((float("nan"), "finite"), (float("inf"), "finite"), (True, "number"),
                       ("1", "number"), (-1, "out of range"), (0, "out of range")):
        with pytest.raises(ValueError, match=match):
            as_float("x", bad, 0, low_open=True)


def test_as_float_refuses_a_bytearray_as_it_refuses_bytes():
    """``float(bytearray(b"0.5"))`` reads the text, so ``SearchAgent(epsilon=bytearray(b"0.5"))``
    was taken where ``b"0.5"`` and ``"0.5"`` are refused (``as_int`` refused all three)."""
    from agents.search import SearchAgent

    for text in ("0.5", b"0.5", bytearray(b"0.5")):
        with pytest.raises(ParameterTypeError, match=r"^epsilon=.* must be a number$"):
            SearchAgent(epsilon=text)
    with pytest.raises(ParameterTypeError, match=r"must be an integer, not bytearray$"):
        as_int("n", bytearray(b"5"))


# -- the API uses it everywhere ------------------------------------------------------------


@pytest.mark.parametrize("field", ["num_players", "max_pip", "hand_size", "target_score",
                                   "boneyard_reserve"])
def test_rule_config_integer_fields(field):
    good = {"num_players": 3, "max_pip": 9, "hand_size": 5, "target_score": 100,
            "boneyard_reserve": 2}[field]
    rules = RuleConfig(**{field: np.int64(good)})
    assert getattr(rules, field) == good and type(getattr(rules, field)) is int
    json.dumps(rules.to_dict())  # numpy integers are not left in the JSON-ready dict
    for bad in (float(good), True, str(good)):
        with pytest.raises(ValueError, match=f"{field}=.* must be an integer"):
            RuleConfig(**{field: bad})


def test_rule_config_partnerships_and_choices():
    assert RuleConfig(num_players=4, partnerships=np.False_).partnerships is False
    with pytest.raises(ValueError, match="partnerships=1 must be true or false"):
        RuleConfig(num_players=4, partnerships=1)
    with pytest.raises(ValueError, match="spinner=.* is not allowed"):
        RuleConfig(spinner=["none"])


def test_match_state_integers_and_rules_type():
    rules = RuleConfig(target_score=30)
    m, twin = MatchState(rules, seed=np.int64(5)), MatchState(rules, seed=5)
    # a numpy seed deals exactly what the same int deals (and another seed deals otherwise)
    assert m.hand.hands == twin.hand.hands and m.hand.boneyard == twin.hand.boneyard
    assert m.hand.hands != MatchState(rules, seed=6).hand.hands
    # a numpy action code is the same move: seat 1 leads [4|6], a count of 10, so 10 points
    code = rules.tiles.index(4, 6) * 4
    assert m.turn == 1 and code in m.legal_actions()
    assert m.play(np.int64(code)) == 10 and m.scores == [0, 10]
    assert twin.play(code) == 10 and m.to_record() == twin.to_record()
    json.dumps(m.to_record())  # and no numpy integer is kept in the record
    for bad in (float(m.legal_actions()[0]), True):
        with pytest.raises(TypeError, match="a move is"):
            m.play(bad)
    with pytest.raises(TypeError, match="rules must be a RuleConfig"):
        MatchState(rules={})
    for bad in (1.0, True, "1"):
        with pytest.raises(TypeError, match="seed="):
            MatchState(seed=bad)
    with pytest.raises(ValueError, match="num_players=.* must be an integer"):
        MatchState(num_players=np.float64(2))
    assert MatchState(num_players=np.int8(3)).rules.num_players == 3
    assert m.view(np.int64(0)) == m.view(0) != m.view(1)
    with pytest.raises(ValueError, match="seat"):
        m.view(0.0)


def test_env_seeds_and_options():
    env = SingleAgentEnv(seat=np.int64(1), num_players=np.int64(3))
    assert env.seat_option == 1
    a, _ = env.reset(seed=np.int64(4))
    b, _ = env.reset(seed=4)
    assert (a == b).all()
    for bad in (True, 4.0, "4"):
        with pytest.raises(TypeError, match="seed="):
            env.reset(seed=bad)
    for bad in (True, 1.0):
        with pytest.raises(ValueError, match="seat="):
            SingleAgentEnv(seat=bad)
    aec = aec_env()
    aec.reset(seed=np.int64(3))
    with pytest.raises(TypeError, match="seed="):
        aec.reset(seed=3.0)
    for options, match in ((dict(reward_scale=float("nan")), "reward_scale=nan must be finite"),
                           (dict(reward_scale=True), "reward_scale=True must be a number"),
                           (dict(illegal_reward=float("-inf")), "illegal_reward=-inf"),
                           (dict(episode=["hand"]), "episode=")):
        with pytest.raises(ValueError, match=match.replace("must be finite", "must be a finite")):
            split_options(options)


@pytest.mark.parametrize("make", [aec_env, lambda: parallel_env(), SingleAgentEnv])
def test_reset_options_cannot_change_the_rules(make):
    """``reset(options={"num_players": 3})`` was ignored: the next match had 2 players."""
    env = make()
    for key in ("num_players", "target_score", "obs_version", "rules", "render_mode"):
        with pytest.raises(ValueError, match=f"cannot change '{key}'"):
            env.reset(seed=1, options={key: 3})
    with pytest.raises(TypeError, match="options must be a dict or None, not list"):
        env.reset(seed=1, options=["num_players"])
    env.reset(seed=1, options={"options": 1})  # a key of the caller's own (PettingZoo's check)
    env.reset(seed=1, options=None)


def test_observe_before_reset_and_pickling():
    raw = aec_env().unwrapped
    with pytest.raises(RuntimeError, match="reset"):
        raw.observe("player_0")
    env = SingleAgentEnv(num_players=3)
    with pytest.raises(RuntimeError, match="reset"):  # was a mask with no legal action
        env.action_masks()
    env.reset(seed=2)
    clone = pickle.loads(pickle.dumps(env))
    obs, *_ = clone.step(int(np.flatnonzero(clone.action_masks())[0]))
    assert obs.shape == env.observation_space.shape


# -- fuzzing --------------------------------------------------------------------------------

ANY_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)
FIELD_VALUES = st.one_of(
    st.integers(-3, 300), st.floats(), st.booleans(), st.none(), st.text(max_size=12),
    st.sampled_from(["rotate", "immediate", "none", "difference", "first_double"]),
    st.integers(-3, 13).map(np.int64), ANY_JSON,
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(RuleConfig.field_names() + ("bogus",)), FIELD_VALUES,
                       max_size=6))
def test_fuzz_rule_config(fields):
    try:
        rules = RuleConfig.from_dict(fields)
    except (ValueError, TypeError):
        return
    # a config that was accepted is all plain, in-range values
    for name, value in rules.to_dict().items():
        assert type(value) in (int, bool, str), (name, value)
    assert RuleConfig.from_dict(json.loads(json.dumps(rules.to_dict()))) == rules


ENV_NAMES = ("reward_mode", "episode", "reward_scale", "illegal_action", "illegal_reward")


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(ENV_NAMES + ("num_players", "target_score", "junk")),
                       FIELD_VALUES, max_size=4))
def test_fuzz_env_options(options):
    try:
        rules, opts = split_options(options)
    except (ValueError, TypeError):
        return
    for name in ("reward_scale", "illegal_reward"):
        value = getattr(opts, name)
        assert value is None or (type(value) is float and np.isfinite(value)), (name, value)
    assert opts.scale(rules) > 0


def _mutations(record: dict, data) -> dict:
    """A record with one part replaced by a hostile value."""
    rec = json.loads(json.dumps(record))
    hand = rec["hands"][data.draw(st.integers(0, len(rec["hands"]) - 1))]
    hostile = data.draw(st.one_of(ANY_JSON, st.floats(), st.booleans(),
                                  st.integers(-(10**30), 10**30)))
    where = data.draw(st.sampled_from(["rules", "leader", "hands", "boneyard", "move", "seat",
                                       "tile", "half", "end", "rule_field"]))
    moves = hand["moves"]
    k = data.draw(st.integers(0, max(0, len(moves) - 1)))
    if where == "rules":
        rec["rules"] = hostile
    elif where == "rule_field":
        rec["rules"][data.draw(st.sampled_from(RuleConfig.field_names()))] = hostile
    elif where in ("leader", "hands", "boneyard"):
        hand[where] = hostile
    elif moves and where == "move":
        moves[k] = hostile
    elif moves and where == "seat":
        moves[k][0] = hostile
    elif moves and where == "tile":
        moves[k][1] = hostile
    elif moves and where == "half":
        moves[k][1][data.draw(st.integers(0, 1))] = hostile
    elif moves:
        moves[k][2] = hostile
    return rec


RECORDS = [random_match(RuleConfig(target_score=40, **opts), seed).to_record()
           for seed, opts in enumerate([{}, {"num_players": 3}, {"num_players": 4}])]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_fuzz_records(data):
    record = RECORDS[data.draw(st.integers(0, len(RECORDS) - 1))]
    hostile = _mutations(record, data)
    try:
        out = replay_record(hostile)
    except RecordError as err:
        assert "\n" not in str(err)
        return
    # accepted: then it is a record the writer could have produced (types as written)
    match_out = replay_record(json.loads(json.dumps(hostile)))
    assert out == match_out
    for hand in hostile["hands"]:
        assert type(hand["leader"]) is int and isinstance(hand["boneyard"], list)
        for seat, tile, _end in hand["moves"]:
            assert type(seat) is int and all(type(h) is int for h in tile)


@pytest.mark.parametrize("text, match", [
    (b"\xff\xfe{", "not UTF-8"), ("{}".encode("utf-16"), "not UTF-8"),
    (b"[" * 50000 + b"]" * 50000, "nested too deeply"),
    (b'{"rules": {"max_pip": ' + b"9" * 5000 + b"}}", "integer too long"),
    (b"{", "not valid JSON"), (b"", "not valid JSON"),
])  # fmt: skip
def test_parse_record_refuses_hostile_text(text, match):
    with pytest.raises(RecordError, match=match):
        parse_record(text, "x.json")


def test_record_with_bom_is_read():
    record = RECORDS[0]
    data = b"\xef\xbb\xbf" + json.dumps(record).encode()
    assert replay_record(parse_record(data)) == replay_record(record)


@pytest.mark.parametrize("mutate, match", [
    (lambda r: r["rules"].update(max_pip=6.0), "max_pip=6.0 must be an integer"),
    (lambda r: r["rules"].update(num_players=True), "num_players=True must be an integer"),
    (lambda r: r["hands"][0].update(boneyard=None), "'boneyard' must be a list"),
    (lambda r: r["hands"][0].update(leader=0.0), "leader 0.0 is not a seat"),
    (lambda r: r["hands"][0].update(leader=False), "leader False is not a seat"),
    (lambda r: r["hands"][0]["moves"][0].__setitem__(0, float(r["hands"][0]["moves"][0][0])),
     "seat .* must be an integer"),
    (lambda r: r["hands"][0]["moves"][0].__setitem__(0, bool(r["hands"][0]["moves"][0][0])),
     "seat .* must be an integer"),
    (lambda r: r["hands"][0]["moves"][1].__setitem__(1, [float(h) for h in
                                                         r["hands"][0]["moves"][1][1]]),
     "is not a tile"),
    (lambda r: r["hands"][0]["moves"][1].__setitem__(1, [bool(h) for h in
                                                         r["hands"][0]["moves"][1][1]]),
     "is not a tile"),
    (lambda r: r["hands"][0]["hands"][0].__setitem__(0, [1.0, 2]), "halves must be integers"),
    (lambda r: r["hands"][0]["moves"][1].__setitem__(0, 10**5000), "seat .* must be|turn"),
])  # fmt: skip
def test_floats_and_booleans_are_not_integers_in_records(mutate, match):
    record = json.loads(json.dumps(RECORDS[0]))
    mutate(record)
    with pytest.raises(RecordError, match=match):
        replay_record(record)


# -- seeds: one rule everywhere ------------------------------------------------------------------
@pytest.mark.parametrize("bad", [-1, 2**64])
def test_a_seed_is_an_unsigned_64_bit_integer_everywhere(bad):
    """``TournamentConfig(seed=-1)``, ``make_agent('random', seed=-1)``, ``MatchState(seed=-1)``
    and ``reset(seed=-1)`` were accepted (``random.Random(-1)`` deals as ``Random(1)``) where
    ``train_ppo --seed -1`` was refused, and seeds past 2**63 ended train_jax in a traceback:
    a seed is 0..2**64 - 1 wherever one is taken."""
    from agents import make_agent
    from agents.arena import play_match
    from agents.evaluation import evaluate
    from agents.tournament import TournamentConfig

    rules = RuleConfig(target_score=20)
    for call in (lambda s: TournamentConfig(["random", "greedy"], rules, seed=s),
                 lambda s: MatchState(rules, seed=s),
                 lambda s: make_agent("random", seed=s),
                 lambda s: play_match(["random", "random"], rules, seed=s),
                 lambda s: evaluate("greedy", "random", rules, matches=2, seed=s),
                 lambda s: aec_env(target_score=20).reset(seed=s),
                 lambda s: SingleAgentEnv(target_score=20).reset(seed=s)):
        with pytest.raises(ValueError, match=f"seed={bad} is out of range; allowed: "
                                             "0..18446744073709551615"):
            call(bad)
    # the top seed works, and deals otherwise than its neighbour
    top = MatchState(rules, seed=2**64 - 1).hand.hands
    assert top != MatchState(rules, seed=2**64 - 2).hand.hands


def test_parallel_step_names_an_action_for_no_agent():
    """An action keyed by an agent the env does not have ("zzz", a misspelt "player0") was
    ignored in silence."""
    env = parallel_env()
    env.reset(seed=1)
    agent = env.aec.agent_selection
    code = int(np.flatnonzero(env.aec.observe(agent)["action_mask"])[0])
    for key in ("zzz", "player0", 0):
        with pytest.raises(ValueError, match=r"actions names no agent of this env: .*; the "
                                             r"agents are player_0, player_1"):
            env.step({agent: code, key: code})
    env.step({agent: code})  # nothing was played by the refused steps


@pytest.mark.parametrize("call", ["run_tournament", "build_dataset"])
@pytest.mark.parametrize("config", [None, {"agents": ["random", "greedy"]}])
def test_a_config_that_is_no_tournament_config_is_a_type_error(call, config, tmp_path):
    """``run_tournament({'agents': [...]}, out)`` raised AttributeError "'dict' object has no
    attribute 'schedule'", ``build_dataset(None, out)`` one about 'max_hands'."""
    from agents.datasets import build_dataset
    from agents.tournament import run_tournament

    function = {"run_tournament": run_tournament, "build_dataset": build_dataset}[call]
    with pytest.raises(TypeError, match=r"^config must be a TournamentConfig, not "
                                        rf"{type(config).__name__}$"):
        function(config, tmp_path / "out")
    assert not (tmp_path / "out").exists()


# -- MatchState(auto_deal=False) before its first hand; start_hand's arguments ----------------
@pytest.mark.parametrize("call", [
    lambda m: m.turn, lambda m: m.legal_actions(), lambda m: m.legal_moves, lambda m: m.play(0),
    lambda m: m.apply_unchecked(0), lambda m: m.view(0), lambda m: m.next_leader(),
])  # fmt: skip
def test_a_match_without_a_hand_says_to_deal_one(call):
    match = MatchState(auto_deal=False)
    with pytest.raises(NoHandError, match=r"call start_hand\(leader\) first") as info:
        call(match)
    assert isinstance(info.value, RuntimeError) and isinstance(info.value, ValueError)
    match.start_hand(0)
    assert match.turn == 0 and match.legal_actions()


@pytest.mark.parametrize("bad", ["no", 0, 1, None])
def test_match_auto_deal_must_be_a_bool(bad):
    with pytest.raises(ParameterTypeError, match="^auto_deal=.* must be true or false"):
        MatchState(auto_deal=bad)


def test_start_hand_checks_the_given_hand():
    match = MatchState(auto_deal=False)
    with pytest.raises(TypeError, match="hand must be a HandState"):
        match.start_hand(0, hand=3)
    other = HandState.deal(RuleConfig(max_pip=9), random.Random(0), 0)
    with pytest.raises(ValueError, match="other rules"):
        match.start_hand(0, hand=other)
    led_by_1 = HandState.deal(match.rules, random.Random(0), 1)
    with pytest.raises(ValueError, match="led by seat 1"):
        match.start_hand(0, hand=led_by_1)
    assert match.hand is None
    assert match.start_hand(1, hand=led_by_1) is led_by_1


def test_start_hand_refuses_a_match_that_is_over():
    match = random_match(RuleConfig(target_score=1), seed=0)
    assert match.is_over
    hands = match.hand_number
    with pytest.raises(ValueError, match="the match is over"):
        match.start_hand(0)
    assert match.hand_number == hands and match.is_over


@pytest.mark.parametrize("value", [10**400, -(10**400)], ids=["huge", "-huge"])
def test_as_float_refuses_an_integer_too_large_for_a_float(value):
    with pytest.raises(ValueError, match="^reward_scale=.* must be a finite number"):
        as_float("reward_scale", value)
    with pytest.raises(ValueError, match="reward_scale="):
        aec_env(reward_scale=value).reset()


@pytest.mark.parametrize("value", [np.complex128(0.5 + 2j), np.complex64(1), np.array(1 + 0j),
                                   complex(1, 0)])
def test_as_float_refuses_a_complex_number(value):
    """numpy's complex scalars are taken by float() with only a warning: 0.5+2j was 0.5."""
    with pytest.raises(ParameterTypeError, match=r"^x=.* must be a real number, not complex"
                                                 r"|^x=.* must be a real number, not ndarray"):
        as_float("x", value)
    assert as_float("x", np.float16(0.5)) == 0.5


def test_the_arena_bounds_its_time_limit_and_match_counts():
    """move_timeout=1e300 made every agent fail in reset() with an OverflowError blamed on
    the agent, keep_record=1 was taken as True, and evaluate / make_schedule with 10**30
    matches ran (or filled memory) for ever: each is refused at the programs' bounds."""
    from agents.arena import MAX_MOVE_TIMEOUT, play_match
    from agents.evaluation import evaluate
    from agents.tournament import make_schedule
    from dominoes_env.cli_support import MAX_MATCHES

    rules = RuleConfig(target_score=20)
    with pytest.raises(ValueError, match=r"^move_timeout=1e\+300 is out of range; allowed: > 0 "
                                         r"and <= 86400.0$"):
        play_match(["random", "random"], rules, seed=0, move_timeout=1e300)
    with pytest.raises(TypeError, match=r"^keep_record=1 must be true or false"):
        play_match(["random", "random"], rules, seed=0, keep_record=1)
    assert play_match(["random", "random"], rules, seed=0,
                      move_timeout=MAX_MOVE_TIMEOUT).winner in (0, 1)
    too_many = rf"matches=10{'0' * 29} is out of range; allowed: 1..{MAX_MATCHES}$"
    with pytest.raises(ValueError, match=too_many):
        evaluate("random", "greedy", rules, matches=10**30, seed=0)
    with pytest.raises(ValueError, match=too_many):
        make_schedule(["random", "greedy"], rules, 10**30, 0)


def test_positions_checks_its_rules_count_and_seed():
    """A count of -1 was no positions without a word, and rules of 1.5 an AttributeError."""
    from agents.positions import positions

    with pytest.raises(ValueError, match=r"^count=-1 is out of range; allowed: >= 0"):
        positions(RuleConfig(), -1)
    with pytest.raises(TypeError, match=r"^rules must be a RuleConfig, not float"):
        positions(1.5, 2)
    with pytest.raises(ValueError, match=r"^seed=-1 is out of range"):
        positions(RuleConfig(), 2, seed=-1)
    assert len(positions(RuleConfig(), 3, seed=1)) == 3
