"""RuleConfig: defaults from RULES.md, validation with clear errors, immutability, dict round
trip."""

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dominoes_env.core import RuleConfig

DEFAULTS = {
    "num_players": 2, "max_pip": 6, "partnerships": False, "hand_size": 7, "target_score": 250,
    "next_leader": "domino_else_random", "win_check": "immediate", "boneyard_reserve": 0,
    "spinner": "first_double", "spinner_cross": "after_both_sides",
    "blocked_award": "opponents_total",
}  # fmt: skip


def test_defaults_are_the_rules_defaults():
    assert RuleConfig().to_dict() == DEFAULTS


@pytest.mark.parametrize("players, partners", [(2, False), (3, False), (4, True)])
def test_partnerships_default_by_player_count(players, partners):
    assert RuleConfig(num_players=players).partnerships is partners
    assert RuleConfig(num_players=players).num_sides == (2 if partners else players)


def test_sides():
    r = RuleConfig(num_players=4)
    assert [r.side_of(s) for s in range(4)] == [0, 1, 0, 1] and r.seats_of(1) == (1, 3)
    r = RuleConfig(num_players=4, partnerships=False)
    assert [r.side_of(s) for s in range(4)] == [0, 1, 2, 3]


@pytest.mark.parametrize("options, field, allowed", [
    ({"num_players": 5}, "num_players", "2..4"),
    ({"num_players": "2"}, "num_players", "integer"),
    ({"max_pip": 7}, "max_pip", "6, 9, 12"),
    ({"partnerships": True}, "partnerships", "exactly 4 players"),
    ({"num_players": 3, "partnerships": True}, "partnerships", "exactly 4 players"),
    ({"partnerships": "yes"}, "partnerships", "true or false"),
    ({"hand_size": 0}, "hand_size", ">= 1"),
    ({"num_players": 4, "hand_size": 8}, "hand_size", "at most 7"),
    ({"num_players": 3, "max_pip": 9, "hand_size": 19}, "hand_size", "at most 18"),
    ({"target_score": 0}, "target_score", "1..65536"),
    ({"target_score": True}, "target_score", "integer"),
    ({"target_score": 65537}, "target_score", "1..65536"),  # every player handles up to 2**16
    ({"target_score": 2**63}, "target_score", "1..65536"),  # was an OverflowError in act()
    ({"boneyard_reserve": -1}, "boneyard_reserve", "0..14"),
    ({"boneyard_reserve": 15}, "boneyard_reserve", "0..14"),
    ({"next_leader": "winner"}, "next_leader", "'rotate'"),
    ({"win_check": "later"}, "win_check", "'end_of_hand'"),
    ({"spinner": "all_doubles"}, "spinner", "'lead_double_only'"),
    ({"spinner_cross": "never"}, "spinner_cross", "'immediately'"),
    ({"blocked_award": "nothing"}, "blocked_award", "'difference'"),
])  # fmt: skip
def test_invalid_values_name_field_value_and_allowed(options, field, allowed):
    with pytest.raises(ValueError) as err:
        RuleConfig(**options)
    message = str(err.value)
    assert field in message and allowed in message and repr(list(options.values())[-1]) in message


def test_unknown_field_in_dict_is_an_error_listing_fields():
    with pytest.raises(ValueError, match="unknown rule option.*spiner.*allowed: num_players"):
        RuleConfig.from_dict({"spiner": "none"})
    with pytest.raises(ValueError, match="rules must be an object"):
        RuleConfig.from_dict([1, 2])
    # a key that is no string is named too (the message builder joined strings only)
    with pytest.raises(ValueError, match=r"unknown rule option\(s\) 1, spiner; allowed"):
        RuleConfig.from_dict({1: 2, "spiner": "none"})


def test_immutable_and_hashable():
    r = RuleConfig()
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.num_players = 3
    assert hash(r) == hash(RuleConfig()) and r == RuleConfig()
    assert len({RuleConfig(), RuleConfig(num_players=3), RuleConfig()}) == 2


@given(
    num_players=st.sampled_from([2, 3, 4]),
    max_pip=st.sampled_from([6, 9, 12]),
    hand_size=st.integers(1, 7),
    target=st.integers(1, 1000),
    spinner=st.sampled_from(["first_double", "lead_double_only", "none"]),
    cross=st.sampled_from(["after_both_sides", "immediately"]),
)
def test_dict_round_trip(num_players, max_pip, hand_size, target, spinner, cross):
    r = RuleConfig(
        num_players=num_players,
        max_pip=max_pip,
        hand_size=hand_size,
        target_score=target,
        spinner=spinner,
        spinner_cross=cross,
    )
    assert RuleConfig.from_dict(r.to_dict()) == r
    assert RuleConfig.from_dict(r.to_dict()).to_dict() == r.to_dict()


def test_tile_counts():
    assert [RuleConfig(max_pip=m).num_tiles for m in (6, 9, 12)] == [28, 55, 91]
    assert RuleConfig(num_players=4).boneyard_size == 0


def test_replace_resolves_defaulted_fields_again():
    # a defaulted partnerships follows the new player count instead of carrying True over
    four = RuleConfig(num_players=4)
    assert four.replace(num_players=2) == RuleConfig(num_players=2)
    assert four.replace(num_players=3).partnerships is False
    assert RuleConfig().replace(num_players=4).partnerships is True
    # a value given explicitly is kept (and still checked)
    solo = RuleConfig(num_players=4, partnerships=False)
    assert solo.replace(num_players=3).partnerships is False
    with pytest.raises(ValueError, match="partnerships=True is not allowed with num_players=2"):
        RuleConfig(num_players=4, partnerships=True).replace(num_players=2)
    # equal configs stay equal and hash alike however partnerships was reached
    assert hash(RuleConfig(num_players=4)) == hash(RuleConfig(num_players=4, partnerships=True))


def test_match_and_env_options_override_a_four_player_base():
    from dominoes_env import env
    from dominoes_env.core import MatchState

    four = RuleConfig(num_players=4)
    assert MatchState(four, seed=0, num_players=3).rules == RuleConfig(num_players=3)
    e = env(rules=four, num_players=2)
    e.reset(seed=0)
    assert e.unwrapped.rules == RuleConfig(num_players=2) and len(e.agents) == 2
