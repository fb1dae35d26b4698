"""Tournament statistics on known inputs: Wilson intervals, draws, ranks, points per hand,
ratings."""

from __future__ import annotations

import math
import random
import re

import pytest

from agents.tournament import stats
from agents.tournament.report import win_matrix
from dominoes_env.core import RuleConfig

TWO = RuleConfig()
PARTNERS = RuleConfig(num_players=4)
THREE = RuleConfig(num_players=3)


# -- Wilson interval: reference values from scipy.stats.binomtest(k, n).proportion_ci("wilson")
@pytest.mark.parametrize(
    "k, n, low, high",
    [
        (8, 10, 0.4901624715366418, 0.9433178485456248),
        (5, 10, 0.236593090512564, 0.7634069094874361),
        (0, 10, 0.0, 0.27753279986288926),
        (10, 10, 0.7224672001371109, 1.0),
        (37, 100, 0.28182360534324535, 0.4677947041905709),
        (1, 3, 0.06149194472039626, 0.7923403991979523),
    ],
)
def test_wilson_matches_reference_values(k, n, low, high):
    lo, hi = stats.wilson_interval(k, n)
    assert lo == pytest.approx(low, abs=1e-12)
    assert hi == pytest.approx(high, abs=1e-12)


def test_wilson_edges_and_half_successes():
    assert stats.wilson_interval(0, 0) == (0.0, 1.0)
    assert stats.wilson_interval(0, 5)[0] == 0.0
    assert stats.wilson_interval(5, 5)[1] == 1.0
    lo, hi = stats.wilson_interval(4.5, 10)  # 4 wins and 1 draw out of 10
    assert lo == pytest.approx(0.20142296959860717, abs=1e-12)
    assert hi == pytest.approx(0.7263303103876817, abs=1e-12)


def test_wilson_property_contains_the_rate_and_narrows_with_n():
    rng = random.Random(0)
    for _ in range(300):
        n = rng.randint(1, 500)
        k = rng.randint(0, n)
        lo, hi = stats.wilson_interval(k, n)
        assert 0.0 <= lo <= k / n <= hi <= 1.0
        lo4, hi4 = stats.wilson_interval(4 * k, 4 * n)
        assert hi4 - lo4 < hi - lo


@pytest.mark.parametrize("k, n", [(11, 10), (-1, 10), (1, -1), (1, 2.5)])
def test_wilson_rejects_bad_input(k, n):
    with pytest.raises(ValueError, match="successes|n="):
        stats.wilson_interval(k, n)


@pytest.mark.parametrize("args, error, message", [
    ((3, 10, -1.96), ValueError, r"^z=-1\.96 is out of range; allowed: > 0$"),  # low > high
    ((3, 10, float("nan")), ValueError, r"^z=nan must be a finite number$"),  # (0, 1) silently
    ((3, 10, float("inf")), ValueError, r"^z=inf must be a finite number$"),
    ((True, 10), TypeError, r"^successes=True must be a number$"),  # taken as one win
    (("3", 10), TypeError, r"^successes='3' must be a number$"),  # "'<=' not supported"
    ((3, 10**400), ValueError, r"^n=.* too large for a float"),  # an OverflowError
])  # fmt: skip
def test_wilson_checks_its_z_and_the_type_of_successes(args, error, message):
    with pytest.raises(error, match=message):
        stats.wilson_interval(*args)
    assert stats.wilson_interval(3, 10, 1.0) == pytest.approx(stats.wilson_interval(3.0, 10, 1))


# -- records ----------------------------------------------------------------------------------
def rec(index, seats, scores, winner, hands=5, table=None):
    return {"index": index, "seats": list(seats), "scores": list(scores), "winner": winner,
            "hands": hands, "table": list(table or sorted(set(seats)))}  # fmt: skip


def test_pair_stats_count_draws_as_half():
    records = [
        rec(0, ["a", "b"], [250, 10], 0),
        rec(1, ["b", "a"], [20, 260], 1),
        rec(2, ["a", "b"], [255, 100], 0),
        rec(3, ["b", "a"], [250, 0], 0),
        rec(4, ["a", "b"], [40, 40], None),
        rec(5, ["b", "a"], [90, 95], None),
    ]
    (pair,) = stats.pair_stats(records, ["a", "b"], TWO)
    assert pair["a"] == "a" and pair["b"] == "b"
    assert (pair["matches"], pair["a_wins"], pair["b_wins"], pair["draws"]) == (6, 3, 1, 2)
    assert pair["a_win_rate"] == pytest.approx(4 / 6)
    assert pair["a_win_rate_ci95"] == list(stats.wilson_interval(4, 6))


def test_pair_stats_partnerships_use_sides():
    records = [
        rec(0, ["x", "y", "x", "y"], [250, 100], 0),
        rec(1, ["y", "x", "y", "x"], [250, 100], 0),
        rec(2, ["y", "x", "y", "x"], [5, 250], 1),
    ]
    (pair,) = stats.pair_stats(records, ["x", "y"], PARTNERS)
    assert (pair["a_wins"], pair["b_wins"], pair["draws"]) == (2, 1, 0)
    assert stats.side_agents(records[1], PARTNERS) == ["y", "x"]


def test_ranks_and_free_for_all_pairs():
    assert stats.side_ranks({"scores": [250, 40, 90], "winner": 0}) == [1, 3, 2]
    assert stats.side_ranks({"scores": [40, 90, 251, 90], "winner": 2}) == [4, 2, 1, 2]
    assert stats.side_ranks({"scores": [5, 6, 7], "winner": None}) == [1, 1, 1]
    records = [
        rec(0, ["a", "b", "c"], [250, 40, 90], 0),  # a > c > b
        rec(1, ["b", "c", "a"], [10, 250, 10], 1),  # c > a = b
        rec(2, ["a", "a", "b"], [0, 250, 100], 1, table=["a", "a", "b"]),  # a (best seat) > b
    ]
    assert stats.agent_ranks(records[2], THREE) == {"a": 1, "b": 2}
    pairs = {(p["a"], p["b"]): p for p in stats.pair_stats(records, ["a", "b", "c"], THREE)}
    def wld(a, b):
        p = pairs[a, b]
        return p["a_wins"], p["b_wins"], p["draws"]

    assert wld("a", "b") == (2, 0, 1)
    assert wld("a", "c") == (1, 1, 0)
    assert wld("b", "c") == (0, 2, 0) and pairs["b", "c"]["matches"] == 2
    tables = stats.table_stats(records[:2], [("a", "b", "c")], THREE)
    assert tables == [{"agents": ["a", "b", "c"], "matches": 2, "wins": {"a": 1, "b": 0, "c": 1},
                       "draws": 0}]  # fmt: skip


def test_agent_stats_points_per_hand_and_win_rates():
    records = [
        rec(0, ["a", "b"], [250, 50], 0, hands=10),
        rec(1, ["b", "a"], [260, 40], 0, hands=6),
        rec(2, ["a", "b"], [30, 30], None, hands=1000),
    ]
    s = stats.agent_stats(records, ["a", "b"], TWO)
    assert s["a"]["points_per_hand"] == pytest.approx((250 + 40 + 30) / (10 + 6 + 1000))
    assert s["b"]["points_per_hand"] == pytest.approx((50 + 260 + 30) / 1016)
    assert (s["a"]["matches"], s["a"]["wins"], s["a"]["draws"]) == (3, 1, 1)
    assert s["a"]["win_rate"] == pytest.approx(1.5 / 3)
    assert s["a"]["win_rate_ci95"] == list(stats.wilson_interval(1.5, 3))
    # a free-for-all agent holding two seats: both seats' points over both seats' hands
    s3 = stats.agent_stats([rec(0, ["a", "a", "b"], [250, 30, 20], 0, hands=4)], ["a", "b"], THREE)
    assert s3["a"]["points_per_hand"] == pytest.approx(280 / 8)
    assert s3["b"]["points_per_hand"] == pytest.approx(20 / 4)
    assert stats.agent_stats([], ["a", "b"], TWO)["a"]["win_rate"] is None


def test_ratings_order_uncertainty_and_draws():
    records = [rec(i, ["a", "b"] if i % 2 else ["b", "a"], [250, 0] if i % 2 else [0, 250],
                   0 if i % 2 else 1) for i in range(20)]  # a wins every match
    r = stats.ratings(records, ["a", "b"], TWO)
    assert r["a"]["mu"] > 25 > r["b"]["mu"]
    assert r["a"]["sigma"] < 25 / 3
    assert r["a"]["ordinal"] == pytest.approx(r["a"]["mu"] - 3 * r["a"]["sigma"])
    lo, hi = r["a"]["ci95"]
    assert lo == pytest.approx(r["a"]["mu"] - stats.Z95 * r["a"]["sigma"])
    assert hi == pytest.approx(r["a"]["mu"] + stats.Z95 * r["a"]["sigma"])
    shuffled = records[:]
    random.Random(1).shuffle(shuffled)
    assert stats.ratings(shuffled, ["a", "b"], TWO) == r  # schedule order, not arrival order
    draws = [rec(i, ["a", "b"], [10, 10], None) for i in range(5)]
    d = stats.ratings(draws, ["a", "b"], TWO)
    assert d["a"]["mu"] == pytest.approx(25) and d["b"]["mu"] == pytest.approx(25)
    assert d["a"]["sigma"] < 25 / 3


def test_win_matrix_mirrors_pairs():
    m = win_matrix({"agents": ["x", "y", "z"],
                    "pairs": [{"a": "x", "b": "z", "a_win_rate": 0.25}]})  # fmt: skip
    assert m[0][2] == 0.25 and m[2][0] == 0.75
    assert all(m[i][i] != m[i][i] for i in range(3))  # NaN on the diagonal


def test_a_summary_that_is_not_one_is_named():
    """``win_matrix({})`` and ``print_summary({})`` were bare KeyErrors ('agents', 'format')."""
    from agents.tournament.report import plot_ratings, print_summary

    with pytest.raises(ValueError, match=r"^summary lacks 'agents', 'pairs'; what "
                                         r"build_summary makes \(summary.json\) holds "):
        win_matrix({})
    with pytest.raises(ValueError, match=r"^summary lacks 'format', 'finished_matches', "):
        print_summary({})
    with pytest.raises(ValueError, match=r"^summary lacks 'ratings'"):
        plot_ratings({"agents": []}, "never.png")
    with pytest.raises(TypeError, match=r"^summary must be a tournament summary .*not list$"):
        win_matrix([])


@pytest.mark.parametrize("change, problem", [
    (lambda s: s["pairs"][0].update(a="zz"),  # KeyError: 'zz'
     r"^summary's pairs: pair 0 names 'zz' and 'greedy', not two of the summary's agents$"),
    (lambda s: s.update(agents=["random", "random"]),  # KeyError: 'greedy'
     r"^summary's agents must be a list of distinct agent specs \(text\)"),
    (lambda s: s["pairs"][0].update(a_win_rate=2.0),  # drawn as -1.0 for the other agent
     r"^summary's pairs: pair 0 has a_win_rate=2.0; a win rate is in 0..1$"),
    (lambda s: s["pairs"][0].update(a_win_rate=math.nan), r"a_win_rate=nan"),
    (lambda s: s.update(pairs={}), r"^summary's pairs: must be a list of pairs, not \{\}$"),
    (lambda s: s.update(ratings=5),  # AttributeError: 'int' object has no attribute 'items'
     r"^summary's ratings: must be an object of agents' ratings, not 5$"),
    (lambda s: s["ratings"]["random"].update(mu="x"), r"'random' is not a rating"),
    # an int no float holds: the check's own math.isfinite was an OverflowError
    (lambda s: s["ratings"]["random"].update(mu=10**400), r"'random' is not a rating"),
    (lambda s: s["agent_stats"]["random"].update(points_per_hand=-10**400),
     r"'random' is not an agent's statistics"),
    (lambda s: s["agent_stats"].pop("random"), r"'random' has a rating but no agent_stats"),
    (lambda s: s.update(last_run=[1]), r"^summary's last_run: must be null or an object"),
])
def test_a_summary_read_back_is_checked_before_it_is_shown(change, problem, tmp_path):
    """summary.json is a file, read back as untrusted input: a pair naming an agent not in
    ``agents`` was a bare KeyError, ``"ratings": 5`` an AttributeError, and a win rate of 2.0
    was drawn. Every reader of the report names what is wrong instead."""
    import copy
    import io
    import json

    pytest.importorskip("matplotlib")
    pytest.importorskip("rich")
    from rich.console import Console

    from agents.tournament import TournamentConfig, build_summary, print_summary, run_tournament
    from agents.tournament.report import plot_heatmap, plot_ratings

    config = TournamentConfig(["random", "greedy"], RuleConfig(target_score=30), matches=2,
                              seed=1)
    good = json.loads(json.dumps(build_summary(run_tournament(config, tmp_path / "t",
                                                              progress=False))))
    summary = copy.deepcopy(good)
    change(summary)
    readers = [lambda s: win_matrix(s), lambda s: plot_heatmap(s, tmp_path / "h.png"),
               lambda s: plot_ratings(s, tmp_path / "r.png"),
               lambda s: print_summary(s, Console(file=io.StringIO(), width=100))]
    refused = 0
    for read in readers:
        try:
            read(summary)
        except ValueError as err:
            assert re.search(problem, str(err)), str(err)
            refused += 1
    assert refused
    for read in readers:
        read(good)
