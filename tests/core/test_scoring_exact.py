"""The scoring functions of ``dominoes_env.core.scoring`` at their boundaries, with the exact
values of docs/rules.md ("Counting the open ends and scoring a play", "End of a hand", "A match").
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dominoes_env.core import (
    Award,
    blocked_award,
    match_winner,
    points_for_count,
    round_to_five,
    wins_by_play,
)


@given(st.integers(0, 10_000))
def test_round_to_five_is_the_nearest_multiple_remainders_1_2_down_3_4_up(pips):
    got = round_to_five(pips)
    assert got % 5 == 0
    assert got == pips - pips % 5 + (5 if pips % 5 >= 3 else 0)


def test_round_to_five_table():
    # docs/rules.md: 12 -> 10, 13 -> 15, 2 -> 0
    assert [round_to_five(p) for p in range(0, 16)] == [
        0, 0, 0, 5, 5, 5, 5, 5, 10, 10, 10, 10, 10, 15, 15, 15,
    ]  # fmt: skip


def test_points_for_count_scores_positive_multiples_of_five_only():
    assert [points_for_count(c) for c in range(0, 31)] == [
        c if c % 5 == 0 else 0 for c in range(0, 31)
    ]
    assert points_for_count(25) == 25  # "a count of 25 scores 25"
    assert points_for_count(0) == 0


def test_blocked_award_opponents_total_is_the_default():
    # docs/rules.md: side 0 holds 14 pips, side 1 holds 12: side 1 scores 15
    assert blocked_award([14, 12]) == Award(1, 15)
    assert blocked_award([14, 12], "opponents_total") == Award(1, 15)
    assert blocked_award([12, 14]) == Award(0, 15)
    # three sides: the fewest scores the others' sum, rounded (11 + 22 = 33 -> 35)
    assert blocked_award([11, 4, 22]) == Award(1, 35)


def test_blocked_award_difference_sums_each_others_excess():
    assert blocked_award([14, 12], "difference") == Award(1, 0)  # 2 rounds to 0
    assert blocked_award([14, 12, 20], "difference") == Award(1, 10)  # 2 + 8
    assert blocked_award([30, 3, 9, 7], "difference") == Award(1, 35)  # 27 + 6 + 4 = 37


def test_blocked_award_tie_for_fewest_scores_nothing_but_a_tie_above_does_not_matter():
    assert blocked_award([9, 9]) is None
    assert blocked_award([9, 20, 9], "difference") is None
    # a tie between the sides that did not win is no tie for the fewest
    assert blocked_award([20, 6, 20]) == Award(1, 40)
    assert blocked_award([0, 3]) == Award(0, 5)


def test_wins_by_play_reaches_the_target_only_under_immediate():
    assert not wins_by_play(249, 250, "immediate")
    assert wins_by_play(250, 250, "immediate")
    assert wins_by_play(265, 250, "immediate")
    assert not wins_by_play(265, 250, "end_of_hand")


@pytest.mark.parametrize("win_check", ["immediate", "end_of_hand"])
def test_match_winner_needs_the_top_score_at_the_target(win_check):
    assert match_winner([245, 100], 250, win_check) is None
    assert match_winner([249, 249], 250, win_check) is None
    assert match_winner([250, 100], 250, win_check) == 0
    assert match_winner([100, 250], 250, win_check) == 1
    assert match_winner([10, 260, 255], 250, win_check) == 1  # the top one, not the first over


def test_match_winner_tie_at_the_top_plays_on_only_under_end_of_hand():
    assert match_winner([255, 255], 250, "end_of_hand") is None
    assert match_winner([100, 255, 255], 250, "end_of_hand") is None
    # "immediate" has no tie rule: the first side at the top has it
    assert match_winner([255, 255], 250, "immediate") == 0
    assert match_winner([100, 255, 255], 250, "immediate") == 1
