"""The benchmark card (issue 32, item 4): ``agents.benchmark`` and ``python -m
experiments.benchmark`` on a tiny panel at every table: its JSON schema field by field, the
picture, the counting rule (50% between equals at every table), the same card for the same
seed, ``n/a`` cells, the output folder's policy and resuming after Ctrl-C; and the decision
times every match now records (``agents.decision_times``)."""

from __future__ import annotations

import datetime
import json
import math
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.arena import play_match
from agents.base import RandomAgent
from agents.benchmark import (
    CARD_KEYS,
    CELL_KEYS,
    PANEL,
    SCHEMA,
    TABLE_KEYS,
    TABLES,
    BenchmarkConfig,
    BenchmarkDirError,
    card_rows,
    cell_stats,
    rules_at,
    run_card,
)
from agents.benchmark.card import VOLATILE_KEYS, policy_hashes
from agents.benchmark.run import ITSELF
from agents.decision_times import BINS_PER_DECADE, DecisionTimes, bin_middle, bin_of
from agents.greedy import GreedyAgent
from agents.tournament.schedule import make_schedule
from agents.tournament.stats import wilson_interval
from dominoes_env.core import RuleConfig
from experiments import benchmark

from .helpers import CHILD_TIMEOUT_S, wait_for_lines

ROOT = Path(__file__).resolve().parents[1]
FAST = {"target_score": 50}
ALL_TABLES = list(TABLES)


class TwoPlayersOnly(RandomAgent):
    """Plays only at two-player tables, as ``ppo`` without a shipped policy for the others."""

    def check_rules(self, rules):
        if rules.num_players != 2:
            raise ValueError(f"no policy for {rules.num_players} players")


class CountingGreedy(GreedyAgent):
    """Greedy, counting its decisions."""

    calls = 0

    def act(self, view):
        CountingGreedy.calls += 1
        return super().act(view)


class InterruptingGreedy(GreedyAgent):
    """Greedy that presses Ctrl-C on its 40th decision in this process (once)."""

    calls = 0

    def act(self, view):
        InterruptingGreedy.calls += 1
        if InterruptingGreedy.calls == 40:
            raise KeyboardInterrupt
        return super().act(view)


def tiny(**changes) -> BenchmarkConfig:
    kwargs = {"panel": ["random"], "tables": ALL_TABLES, "matches": 2, "seed": 3,
              "rule_options": FAST}
    return BenchmarkConfig("greedy", **{**kwargs, **changes})


def steady(card: dict) -> dict:
    """The card without what changes from run to run (times, date, machine)."""
    out = {k: v for k, v in card.items() if k not in VOLATILE_KEYS}
    out["tables"] = [{**t, "cells": [{k: v for k, v in c.items() if k != "decision_ms"}
                                     for c in t["cells"]]} for t in card["tables"]]
    return out


@pytest.fixture(scope="module")
def card_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("card")
    return run_card(tiny(), out, progress=False), out


# -- the card's JSON, field by field -------------------------------------------------------------
def test_the_card_has_every_field_of_its_schema(card_dir):
    run, out = card_dir
    card = json.loads((out / "card.json").read_text())
    assert card == run.card and tuple(card) == CARD_KEYS
    assert (card["schema"], card["schema_version"]) == (SCHEMA, 1)
    assert (card["agent"], card["panel"], card["seed"], card["matches"]) == ("greedy",
                                                                               ["random"], 3, 2)
    assert card["max_hands"] == 1000 and card["rule_options"] == FAST and card["complete"]
    when = datetime.datetime.fromisoformat(card["date"])
    # the card's date is now, in UTC (hours of slack: a busy machine may run this test long
    # after the card was made)
    assert abs((datetime.datetime.now(datetime.timezone.utc) - when).total_seconds()) < 6 * 3600
    assert card["wall_s"] > 0 and card["workers"] == 1
    assert len(card["load_average"]) == 3 and all(x >= 0 for x in card["load_average"])
    versions = card["versions"]
    assert set(versions) == {"straight_dominoes", "env", "python", "numpy", "platform",
                             "policies"}
    assert versions["env"] == "straight_dominoes_v1" and versions["policies"] == policy_hashes()
    assert [t["name"] for t in card["tables"]] == ALL_TABLES
    fields = {"2p": [["A", "B"]], "3p": [["A", "A", "B"], ["A", "B", "B"]],
              "4p_partnerships": [["A", "B"]],
              "4p_free_for_all": [["A", "A", "A", "B"], ["A", "A", "B", "B"], ["A", "B", "B", "B"]]}
    formats = {"2p": "head_to_head", "3p": "free_for_all", "4p_partnerships": "partnerships",
               "4p_free_for_all": "free_for_all"}
    #: matches played at matches=2: one deal per field table (2 seatings with two sides, every
    #: rotation in the free-for-all field: 3 + 3 at 3 players, 4 + 4 + 4 at 4)
    played = {"2p": 2, "3p": 6, "4p_partnerships": 2, "4p_free_for_all": 12}
    for table in card["tables"]:
        name = table["name"]
        assert tuple(table) == TABLE_KEYS
        assert table["format"] == formats[name] and table["field"] == fields[name]
        assert table["rules"] == rules_at(name, FAST).to_dict()
        assert table["matches_per_field_table"] == (1 if len(fields[name]) > 1 else 2)
        (cell,) = table["cells"]
        assert tuple(cell) == CELL_KEYS
        assert (cell["opponent"], cell["status"], cell["reason"]) == ("random", "ok", None)
        assert cell["matches"] == cell["matches_scheduled"] == played[name] and cell["complete"]
        lines = [json.loads(line) for line in
                 (out / "matches" / name / "00-random" / "matches.jsonl").read_text().splitlines()]
        wins = sum(r["winner_agent"] == "greedy" for r in lines)
        draws = sum(r["winner"] is None for r in lines)
        assert (cell["wins"], cell["draws"], cell["losses"]) == (wins, draws,
                                                                 len(lines) - wins - draws)
        assert cell["win_rate"] == (wins + draws / 2) / len(lines)
        assert cell["win_rate_ci95"] == list(wilson_interval(wins + draws / 2, len(lines)))
        assert cell["points_per_hand"] > 0 and cell["opponent_points_per_hand"] > 0
        ms = cell["decision_ms"]
        assert ms["decisions"] == sum(t["decisions"] for r in lines
                                      for s, t in zip(r["seats"], r["decision_times"],
                                                      strict=True) if s == "greedy")
        assert ms["decisions"] > 0 and 0 < ms["mean"] < 1000 and 0 < ms["p95"] < 1000
        assert [f["seats"] for f in cell["by_field_table"]] == fields[name]
        assert sum(f["matches"] for f in cell["by_field_table"]) == cell["matches"]
        assert sum(f["wins"] for f in cell["by_field_table"]) == cell["wins"]


def test_points_per_hand_are_the_sides_scores_over_their_hands():
    rules = RuleConfig(num_players=3)
    recs = [{"seats": ["a", "a", "b"], "scores": [10, 20, 60], "winner": 2, "hands": 3,
             "table": ["a", "a", "b"]},
            {"seats": ["a", "b", "b"], "scores": [70, 5, 15], "winner": 0, "hands": 2,
             "table": ["a", "b", "b"]}]
    s = cell_stats(recs, "a", rules)
    assert s["points_per_hand"] == (10 + 20 + 70) / (3 + 3 + 2)
    assert s["opponent_points_per_hand"] == (60 + 5 + 15) / (3 + 2 + 2)
    assert (s["wins"], s["losses"], s["win_rate"]) == (1, 1, 0.5)
    assert s["decision_ms"] == {"decisions": 0, "mean": None, "p95": None}


def test_the_picture_is_written_and_the_table_printed(card_dir, tmp_path, capsys):
    out = tmp_path / "cli"
    assert benchmark.main(["greedy", "--panel", "random", "--tables", "2p", "--matches", "2",
                           "--target-score", "30", "--out", str(out), "--no-progress"]) == 0
    assert (out / "card.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    printed = capsys.readouterr()
    assert "benchmark card: greedy" in printed.out and "card.json" in printed.err
    card = json.loads((out / "card.json").read_text())
    row = card_rows(card)[0]
    assert row[:3] == ["2p", "random", "2"] and row[3].endswith("%")


@pytest.mark.parametrize("change, problem", [
    (lambda c: c.clear(), r"^not a benchmark card: "),  # KeyError: 'tables'
    (lambda c: c["tables"][0]["cells"][0].update(win_rate=7),  # printed as 700.0%
     r"table 0, cell 0: win_rate=7 with win_rate_ci95=\[.*\] is not a rate in 0..1"),
    (lambda c: c["tables"][0]["cells"][0].update(decision_ms=None),  # a TypeError
     r"table 0, cell 0: decision_ms=None is not an object of 'mean' and 'p95'"),
    (lambda c: c["tables"][0]["cells"][0].update(win_rate_ci95=[0.1]),  # an unpacking error
     r"win_rate_ci95=\[0.1\] is not a rate"),
    (lambda c: c["tables"][0]["cells"][0].update(matches="x"), r"matches='x' is not a whole"),
    (lambda c: c["tables"][0]["cells"][0].update(points_per_hand="x"),  # a format error
     r"points_per_hand='x' is not a finite number"),
    # an int no float holds: the check's own math.isfinite was an OverflowError
    (lambda c: c["tables"][0]["cells"][0].update(points_per_hand=10**400),
     r"points_per_hand=\d+.* is not a finite number"),
])
def test_a_card_read_back_is_checked_before_it_is_shown(card_dir, tmp_path, change, problem):
    """card.json is a file, read back as untrusted input: every reader of it (the rows, the
    printed table, the picture) names what is wrong with a damaged one."""
    import copy
    import io

    pytest.importorskip("rich")
    pytest.importorskip("matplotlib")
    from rich.console import Console

    from agents.benchmark import plot_card, print_card

    good = json.loads(json.dumps(card_dir[0].card))
    card = copy.deepcopy(good)
    change(card)
    for read in (card_rows, lambda c: print_card(c, Console(file=io.StringIO())),
                 lambda c: plot_card(c, tmp_path / "p.png")):
        with pytest.raises(ValueError, match=problem):
            read(card)
        read(good)
    with pytest.raises(ValueError, match=r"an n/a cell gives its reason"):  # a KeyError
        card_rows({"tables": [{"name": "2p", "cells": [{"opponent": "x", "status": "n/a"}]}]})


def test_without_matplotlib_the_card_has_no_picture_and_says_so(tmp_path, capsys, monkeypatch):
    real = benchmark.require

    def require(module, extra, purpose):
        if module.startswith("matplotlib"):
            raise ImportError(f"{purpose} needs matplotlib: pip install "
                              "'straight-dominoes[tournament]'")
        return real(module, extra, purpose)

    monkeypatch.setattr(benchmark, "require", require)
    out = tmp_path / "run"
    assert benchmark.main(["greedy", "--panel", "random", "--tables", "2p", "--matches", "2",
                           "--target-score", "30", "--out", str(out), "--no-progress"]) == 0
    notes = [line for line in capsys.readouterr().err.splitlines() if "picture" in line]
    assert len(notes) == 1 and "matplotlib" in notes[0]
    assert sorted(p.name for p in out.iterdir()) == ["benchmark.json", "card.json", "matches",
                                                     "run.json"]


# -- the counting rule ---------------------------------------------------------------------------
def seat_decided_records(table: str, winning_seat) -> list[dict]:
    """A card cell's matches between ``A`` and ``B`` where the deal alone decides the winner:
    seat ``winning_seat(deal, seat_count)`` wins, whoever sits there (equal agents)."""
    rules = rules_at(table)
    schedule = make_schedule(["A", "B"], rules, matches=BenchmarkConfig(
        "A", tables=[table], matches=12).per_field_table(table), seed=0)
    recs = []
    for job in schedule.jobs:
        seat = winning_seat(job.deal, rules.num_players)
        recs.append({"seats": list(job.seats), "table": list(job.table), "hands": 4,
                     "winner": rules.side_of(seat),
                     "scores": [50 if side == rules.side_of(seat) else 10
                                for side in range(rules.num_sides)]})
    return recs


@pytest.mark.parametrize("table", ALL_TABLES)
@settings(max_examples=20, deadline=None)
@given(seats=st.lists(st.integers(0, 3), min_size=12, max_size=12))
def test_between_equals_the_share_is_one_half_at_every_table(table, seats):
    recs = seat_decided_records(table, lambda deal, n: seats[deal % len(seats)] % n)
    assert cell_stats(recs, "A", rules_at(table))["win_rate"] == 0.5
    assert cell_stats(recs, "B", rules_at(table))["win_rate"] == 0.5


@pytest.mark.parametrize("table", ALL_TABLES)
def test_an_agent_that_always_wins_has_all_the_share(table):
    rules = rules_at(table)
    recs = seat_decided_records(table, lambda deal, n: 0)
    for rec in recs:  # A wins wherever it sits
        seat = rec["seats"].index("A")
        rec["winner"] = rules.side_of(seat)
    assert cell_stats(recs, "A", rules)["win_rate"] == 1.0
    assert cell_stats(recs, "B", rules)["win_rate"] == 0.0


# -- determinism, n/a, refusals ------------------------------------------------------------------
def test_the_same_seed_gives_the_same_card_on_any_number_of_workers(card_dir, tmp_path):
    again = run_card(tiny(), tmp_path / "again", progress=False, workers=2)
    assert again.card["workers"] in (1, 2)  # capped at the CPUs this process may use
    assert steady(again.card) == steady(card_dir[0].card)
    other = run_card(tiny(seed=4, tables=["4p_free_for_all"]), tmp_path / "other", progress=False)
    assert steady(other.card)["tables"][0]["cells"] != \
        steady(card_dir[0].card)["tables"][3]["cells"]


def test_an_opponent_that_cannot_play_a_table_is_na_with_its_reason(tmp_path, capsys):
    spec = "tests.test_benchmark:TwoPlayersOnly"
    card = run_card(tiny(panel=[spec, "greedy"], tables=["2p", "3p"]), tmp_path,
                    progress=False).card
    two, three = card["tables"]
    assert [c["status"] for c in two["cells"]] == ["ok", "n/a"]
    assert two["cells"][1]["reason"] == ITSELF and set(two["cells"][1]) == {
        "opponent", "status", "reason"}
    assert three["cells"][0]["status"] == "n/a"
    assert three["cells"][0]["reason"] == (f"agent spec {spec!r} cannot play these rules: no "
                                           "policy for 3 players")
    assert card["complete"]
    assert card_rows(card)[2][3:] == ["n/a", "-", "-", "-", "-", "no policy for 3 players"]


def test_an_agent_that_plays_no_table_is_refused(tmp_path):
    with pytest.raises(ValueError, match="can play none of the tables: 3p: .*no policy"):
        run_card(BenchmarkConfig("tests.test_benchmark:TwoPlayersOnly", tables=["3p"]),
                 tmp_path, progress=False)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("panel, tables, why", [
    (["tests.test_benchmark:TwoPlayersOnly"], ["3p"], "3p 'tests.test_benchmark:TwoPlayersOnly'"
                                                      ": agent spec .* no policy for 3 players"),
    (["greedy"], ["2p", "3p"], "2p 'greedy': the agent itself .*; 3p 'greedy': the agent"),
    (["tests.test_benchmark:TwoPlayersOnly", "greedy"], ["3p", "4p_partnerships"], "3p .*; 3p "
     "'greedy': the agent itself .*; 4p_partnerships 'tests.test_benchmark:TwoPlayersOnly'"),
])  # fmt: skip
def test_a_panel_that_plays_no_cell_is_refused(tmp_path, capsys, panel, tables, why):
    """``random --panel ppo --max-pip 9``: no opponent could play the agent at any table it
    plays, and the card, every cell n/a, ended with status 0, where an agent that can play
    no table is refused. Refused the same way (one line, status 2, nothing written), naming
    each opponent's reason; a table all n/a beside one that plays is still a card."""
    with pytest.raises(ValueError, match="no opponent of the panel can play 'greedy' at the "
                                         f"tables it plays, so the card would play nothing: {why}"):
        run_card(tiny(panel=panel, tables=tables), tmp_path / "x", progress=False)
    argv = ["greedy", "--panel", *panel, "--tables", *tables, "--matches", "1",
            "--no-plot", "--no-progress", "--out", str(tmp_path / "x")]
    capsys.readouterr()
    assert benchmark.main(argv) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("error: no opponent of the panel can play 'greedy'"), line
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize("changes, message", [
    ({"panel": []}, "panel is empty"),
    ({"panel": ["random", "random"]}, "random given twice"),
    ({"tables": ["5p"]}, "unknown table '5p'; allowed: 2p, 3p, 4p_partnerships, 4p_free_for_all"),
    ({"matches": 0}, "matches=0 is out of range"),
    ({"rule_options": {"num_players": 3}}, "num_players are set by the table"),
    ({"rule_options": {"target_score": 0}}, "target_score"),
])
def test_a_bad_configuration_is_refused(changes, message):
    with pytest.raises(ValueError, match=message):
        tiny(**changes)


def test_a_spec_that_names_no_agent_is_refused_before_anything_is_written(tmp_path):
    with pytest.raises(ValueError, match="unknown agent spec 'nosuch'"):
        run_card(tiny(panel=["random", "nosuch"]), tmp_path / "x", progress=False)
    assert not (tmp_path / "x").exists()


def test_matches_whose_cells_would_schedule_more_than_max_matches_are_refused():
    """A cell's tournament rounds each field table up to whole deals: 10**7 at three players
    was 10,000,002 matches, which its TournamentConfig refuses, so the card stopped at that
    table after writing its folder."""
    with pytest.raises(ValueError, match=r"^matches=10000000 plays 10,000,002 matches against "
                                         r"each opponent at 3p \(rounded up to whole deals\); "
                                         r"a tournament schedules at most 10,000,000"):
        tiny(tables=["2p", "3p"], matches=10**7)
    assert tiny(tables=["2p"], matches=10**7).matches == 10**7


@pytest.mark.parametrize("opponent", ["search:sims=5", "search:sims=05,epsilon=0.0"])
def test_an_opponent_spelled_otherwise_than_the_agent_is_itself(tmp_path, opponent):
    """plan() compared the specs' text, the cell's tournament the agents: the cell was played,
    then the card stopped with "agent spec(s) given twice", its folder half written."""
    config = BenchmarkConfig("search:sims=5,epsilon=0", panel=["random", opponent],
                             tables=["2p"], matches=2, seed=3, rule_options=FAST)
    card = run_card(config, tmp_path / "card", progress=False).card
    (table,) = card["tables"]
    assert [c["status"] for c in table["cells"]] == ["ok", "n/a"]
    assert table["cells"][1]["reason"] == ITSELF


@pytest.mark.parametrize("changes, message", [
    ({"move_timeout": 1e9}, r"^move_timeout=1000000000\.0 is out of range; allowed: > 0 and "
                            r"<= 86400\.0$"),
    ({"workers": 2.5}, r"^workers=2\.5 must be an integer, not float$"),
    ({"progress": 1}, r"^progress=1 must be true or false, not int$"),
])  # fmt: skip
def test_run_card_checks_what_its_cells_take_before_anything_is_written(tmp_path, changes,
                                                                      message):
    """Each was refused by the first cell's run_tournament, after benchmark.json was written."""
    with pytest.raises(ValueError, match=message):
        run_card(tiny(tables=["2p"]), tmp_path / "x", **{"progress": False, **changes})
    assert not (tmp_path / "x").exists()


def test_the_default_panel_is_the_issues():
    assert PANEL == ("random", "greedy", "search", "ppo", "best")


# -- the output folder: refused, resumed, replaced, interrupted ----------------------------------
def test_a_card_folder_is_resumed_or_replaced_only_when_asked(tmp_path):
    config = tiny(tables=["2p"])
    run_card(config, tmp_path, progress=False)
    with pytest.raises(BenchmarkDirError,
                       match=r"pass resume=True \(--resume\) to continue it, overwrite=True"):
        run_card(config, tmp_path, progress=False)
    with pytest.raises(BenchmarkDirError, match="seed: 3 there, 4 now"):
        run_card(tiny(tables=["2p"], seed=4), tmp_path, resume=True, progress=False)
    assert run_card(config, tmp_path, resume=True, progress=False).played == 0
    (tmp_path / "notes.txt").write_text("mine")
    replaced = run_card(tiny(tables=["2p"], seed=4), tmp_path, overwrite=True, progress=False)
    assert replaced.played == 2 and (tmp_path / "notes.txt").read_text() == "mine"
    with pytest.raises(BenchmarkDirError, match="no benchmark card to resume"):
        run_card(config, tmp_path / "new", resume=True, progress=False)


def test_a_card_whose_benchmark_json_gives_a_key_twice_is_not_resumed(tmp_path):
    """``benchmark.json`` holding ``"seed"`` twice was read by its last value on --resume,
    where every other reader of the project's files refuses a key given twice."""
    config = tiny(tables=["2p"])
    run_card(config, tmp_path, progress=False)
    path = tmp_path / "benchmark.json"
    text = path.read_text().rstrip()
    path.write_text(text[:-1].rstrip() + ', "seed": ' + json.dumps(config.seed) + "}\n")
    with pytest.raises(BenchmarkDirError, match="the key 'seed' appears twice"):
        run_card(config, tmp_path, resume=True, progress=False)


@pytest.mark.parametrize("key, value, says", [
    ("matches", float("nan"), "matches"),
    ("tables", ["2p", "9p"], "9p"),
    ("panel", ["../../../victim"], "unknown agent spec '../../../victim'"),
    ("rule_options", {"zzz": 1}, "zzz"),
    ("scheme", 0, "scheme 0, not this version's"),
    ("extra", 1, "'extra' missing or unknown"),
])  # fmt: skip
def test_a_damaged_benchmark_json_is_named_damaged_not_offered_to_be_repeated(
        tmp_path, key, value, says):
    """``benchmark.json`` saying ``"matches": NaN`` (a table '9p', a panel entry naming no
    agent, a rule option no rules have) was answered "holds a card with other arguments
    (matches: nan there, 1 now); repeat them to resume it": values no command line can give.
    The file is named as one no card of this version is."""
    config = tiny(tables=["2p"])
    run_card(config, tmp_path, progress=False)
    path = tmp_path / "benchmark.json"
    stored = json.loads(path.read_text())
    path.write_text(json.dumps({**stored, key: value}))
    with pytest.raises(BenchmarkDirError) as refused:
        run_card(config, tmp_path, resume=True, progress=False)
    message = str(refused.value)
    assert "is no card this version can resume" in message and says in message, message
    assert "repeat them" not in message and "other arguments" not in message, message


def test_ctrl_c_keeps_the_card_so_far_and_resume_finishes_it_exactly(tmp_path):
    spec = "tests.test_benchmark:InterruptingGreedy"
    config = tiny(tables=["2p", "3p"])
    interrupted = BenchmarkConfig(spec, **{k: getattr(config, k) for k in (
        "panel", "tables", "matches", "seed", "rule_options")})
    InterruptingGreedy.calls = 0
    with pytest.raises(KeyboardInterrupt):
        run_card(interrupted, tmp_path / "run", progress=False)
    partial = json.loads((tmp_path / "run" / "card.json").read_text())
    assert not partial["complete"]
    finished = run_card(interrupted, tmp_path / "run", resume=True, progress=False)
    assert finished.card["complete"] and 0 < finished.played < 8
    clean = run_card(interrupted, tmp_path / "clean", progress=False)
    assert steady(finished.card) == steady(clean.card)


# -- the command line ----------------------------------------------------------------------------
def test_a_huge_benchmark_json_is_refused_and_nothing_written(tmp_path, capsys):
    """A 40 GB (sparse) benchmark.json was read whole: ``--resume`` ended in a MemoryError
    traceback, and a new run.json was left behind (written before the card was read);
    ``overwrite=True`` read it whole too, to see whether the folder was a card's."""
    out = tmp_path / "bsp"
    out.mkdir()
    (out / "benchmark.json").touch()
    os.truncate(out / "benchmark.json", 40 << 30)
    argv = ["greedy", "--panel", "random", "--tables", "2p", "--matches", "2", "--target-score",
            "20", "--no-plot", "--no-progress", "--out", str(out), "--resume"]
    assert benchmark.main(argv) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line == (f"error: {out / 'benchmark.json'} is unreadable (larger than 1,048,576 "
                    "bytes); use overwrite=True (--overwrite) or another output folder")
    assert os.listdir(out) == ["benchmark.json"]
    with pytest.raises(BenchmarkDirError, match="benchmark.json is no card's configuration: "
                                                "larger than 1,048,576 bytes"):
        run_card(tiny(tables=["2p"]), out, overwrite=True, progress=False)
    assert os.listdir(out) == ["benchmark.json"]


def test_the_command_refuses_a_rerun_and_bad_flags(tmp_path, capsys):
    argv = ["random", "--panel", "greedy", "--tables", "2p", "--matches", "2",
            "--target-score", "30", "--out", str(tmp_path / "run"), "--no-progress",
            "--no-plot"]
    assert benchmark.main(argv) == 0
    capsys.readouterr()
    assert benchmark.main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "holds another run (of experiments.benchmark); pass --resume" in err[0]
    assert benchmark.main([*argv, "--seed", "5", "--resume"]) == 2
    assert "seed: 0 there, 5 now" in capsys.readouterr().err
    assert benchmark.main([*argv, "--resume"]) == 0
    assert benchmark.main([*argv, "--resume", "--overwrite"]) == 2
    with pytest.raises(SystemExit) as stop:
        benchmark.main([*argv[:-1], "--tables", "5p"])
    assert stop.value.code == 2


def test_the_command_overwrites_a_finished_card_and_a_stopped_one(tmp_path, capsys,
                                                                  monkeypatch):
    """``--overwrite`` into a card's folder was always refused ("holds a benchmark card already
    (...); pass ... overwrite=True (--overwrite) to start again"): the command checked its
    folder with it but did not pass it on to ``run_card``. A finished card is replaced by a
    fresh one (its run marker the new run's, the user's file kept), and so is a stopped one
    (every match played again, none resumed)."""
    runs = []

    def spy(*args, **kwargs):
        runs.append(run_card(*args, **kwargs))
        return runs[-1]

    monkeypatch.setattr(benchmark, "run_card", spy)
    out = tmp_path / "c"
    argv = ["greedy", "--panel", "random", "--tables", "2p", "--matches", "2",
            "--target-score", "20", "--no-plot", "--no-progress", "--out", str(out)]
    assert benchmark.main(argv) == 0
    (out / "notes.txt").write_text("mine")
    capsys.readouterr()
    assert benchmark.main([*argv, "--seed", "5", "--overwrite"]) == 0, capsys.readouterr().err
    card = json.loads((out / "card.json").read_text())
    assert card["complete"] and card["seed"] == 5 and runs[-1].played == 2
    assert json.loads((out / "run.json").read_text())["settings"]["seed"] == 5
    assert json.loads((out / "benchmark.json").read_text())["seed"] == 5
    assert (out / "notes.txt").read_text() == "mine"
    # stopped after its first match (what Ctrl-C keeps): started again, not resumed
    [matches] = list(out.rglob("matches.jsonl"))
    matches.write_text(matches.read_text().splitlines(keepends=True)[0])
    assert benchmark.main([*argv, "--overwrite"]) == 0, capsys.readouterr().err
    assert runs[-1].played == 2 and runs[-1].card["complete"] and runs[-1].card["seed"] == 0
    assert json.loads((out / "run.json").read_text())["settings"]["seed"] == 0
    assert benchmark.main([*argv, "--resume"]) == 0 and runs[-1].played == 0


def test_a_card_is_never_replaced_around_its_own_input(tmp_path, capsys):
    """``ppo:OUT/matches/p.npz --out OUT --overwrite``: the command checked its folder without
    the specs' files as inputs, and replacing the card removed ``matches/`` with the policy it
    plays. The command refuses, as every program does, and so does ``run_card``; nothing
    changes."""
    from agents.ppo import random_policy_npz

    out = tmp_path / "c"
    run_card(tiny(tables=["2p"]), out, progress=False)
    policy = out / "matches" / "p.npz"
    random_policy_npz(policy, RuleConfig(**FAST), hidden=(8,))
    before = sorted((str(p), p.stat().st_mtime_ns) for p in out.rglob("*"))
    config = BenchmarkConfig(f"ppo:{policy}", panel=["random"], tables=["2p"], matches=2,
                             seed=3, rule_options=FAST)
    with pytest.raises(BenchmarkDirError) as refused:
        run_card(config, out, overwrite=True, progress=False)
    assert f"holds an input of this card ({str(policy)!r}" in str(refused.value), refused.value
    capsys.readouterr()
    assert benchmark.main([f"ppo:{policy}", "--panel", "random", "--tables", "2p",
                           "--matches", "2", "--target-score", "50", "--no-plot",
                           "--no-progress", "--out", str(out), "--overwrite"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line == (f"error: --out {str(out)!r} is, holds or lies in an input of this command "
                    f"({str(policy)!r}); write elsewhere")
    assert sorted((str(p), p.stat().st_mtime_ns) for p in out.rglob("*")) == before


def test_the_memory_a_match_takes_is_the_tournament_librarys(tmp_path, monkeypatch, capsys):
    """The command imported ``BYTES_PER_MATCH`` by value, a copy that raising the library's one
    definition did not reach: it now reads it through :mod:`agents.tournament.schedule`."""
    from agents.tournament import schedule
    from dominoes_env.cli_support import memory

    assert not hasattr(benchmark, "BYTES_PER_MATCH")
    monkeypatch.setattr(memory, "machine_memory", lambda: 2**30)
    monkeypatch.setattr(schedule, "BYTES_PER_MATCH", 2**30)
    argv = ["random", "--panel", "greedy", "--tables", "2p", "--matches", "2",
            "--target-score", "30", "--out", str(tmp_path / "run"), "--no-progress",
            "--no-plot"]
    assert benchmark.main(argv) == 2
    err = capsys.readouterr().err
    assert "--matches 2 needs about " in err and "this machine has 1 GiB" in err, err
    assert not (tmp_path / "run").exists()


def test_default_out_names_the_agent_and_the_arguments():
    a, b = (benchmark.default_out(tiny(seed=s)) for s in (1, 2))
    assert a.startswith("results/benchmark-greedy-") and a != b
    assert benchmark.default_out(BenchmarkConfig("ppo:/x/p.npz")).startswith(
        "results/benchmark-ppo_x_p.npz-")


# -- decision times ------------------------------------------------------------------------------
def test_play_match_times_every_decision_of_every_seat():
    CountingGreedy.calls = 0
    agent = CountingGreedy()
    result = play_match([agent, "random"], RuleConfig(target_score=60), seed=2)
    times = [DecisionTimes.from_dict(t) for t in result.decision_times]
    assert times[0].decisions == CountingGreedy.calls > 0 and times[1].decisions > 0
    assert 0 < times[0].seconds <= result.duration_s
    assert result == play_match([CountingGreedy(), "random"], RuleConfig(target_score=60),
                                seed=2)  # timing is not part of equality


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(1e-7, 10.0), min_size=1, max_size=200))
def test_the_mean_is_exact_and_the_p95_within_half_a_bin(values):
    t = DecisionTimes()
    for v in values:
        t.add(v)
    assert math.isclose(t.mean_ms(), 1000 * sum(values) / len(values), rel_tol=1e-9)
    exact = sorted(values)[math.ceil(0.95 * len(values)) - 1]
    half_bin = 10 ** (0.5 / BINS_PER_DECADE)
    assert exact / half_bin <= t.quantile_ms(0.95) / 1000 <= exact * half_bin * 1.0000001
    assert DecisionTimes.from_dict(json.loads(json.dumps(t.to_dict()))).histogram == t.histogram


def test_bins_are_clamped_and_their_middles_lie_inside():
    assert bin_of(-1.0) == bin_of(0.0) == bin_of(math.nan) == -9 * BINS_PER_DECADE
    assert bin_of(math.inf) == bin_of(1e12)
    for b in (-100, -60, 0, 50):
        assert bin_of(bin_middle(b)) == b


@pytest.mark.parametrize("data, message", [
    ([], "must be an object"),
    ({"decisions": 1, "seconds": 0.1}, "must be an object"),
    ({"decisions": -1, "seconds": 0.1, "histogram": []}, "decisions must be an integer >= 0"),
    ({"decisions": 1, "seconds": math.nan, "histogram": [[0, 1]]}, "seconds must be a finite"),
    # an int past the largest float: math.isfinite of it was an OverflowError
    ({"decisions": 1, "seconds": 10**400, "histogram": [[0, 1]]}, "seconds must be a finite"),
    ({"decisions": 1, "seconds": 0.1, "histogram": [[10**9, 1]]}, "is not \\[bin, count\\]"),
    ({"decisions": 2, "seconds": 0.1, "histogram": [[0, 1], [0, 1]]}, "once"),
    ({"decisions": 1, "seconds": 0.1, "histogram": [[0, 0]]}, "count >= 1"),
    ({"decisions": 3, "seconds": 0.1, "histogram": [[0, 1]]}, "counts 1 decisions, not 3"),
    ({"decisions": 1, "seconds": 0.1, "histogram": "x"}, "histogram must be a list"),
])
def test_damaged_decision_times_are_refused_naming_the_problem(data, message):
    with pytest.raises(ValueError, match=message):
        DecisionTimes.from_dict(data)


def test_a_damaged_line_in_a_cell_is_refused_naming_the_file(tmp_path):
    config = tiny(tables=["2p"])
    run_card(config, tmp_path, progress=False)
    path = tmp_path / "matches" / "2p" / "00-random" / "matches.jsonl"
    lines = path.read_text().splitlines()
    rec = json.loads(lines[0])
    rec["decision_times"][0]["decisions"] += 1
    path.write_text("\n".join([json.dumps(rec), *lines[1:]]) + "\n")
    with pytest.raises(ValueError, match="matches.jsonl: match .*counts"):
        run_card(config, tmp_path, resume=True, progress=False)


# -- the command's ends: Ctrl-C, a closed output (in a process of its own) -----------------------
def spawn(tmp_path, *args: str, **kwargs) -> subprocess.Popen:
    def setup():
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # even if the suite's shell ignored it

    env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "experiments.benchmark", *args], env=env,
                            preexec_fn=setup, cwd=tmp_path, **kwargs)


def test_ctrl_c_in_the_command_keeps_the_card_and_resume_finishes_it(tmp_path):
    argv = ["tests.tournament_agents:SlowRandomAgent:delay=0.005", "--panel", "greedy",
            "--tables", "2p", "--matches", "40", "--target-score", "100", "--no-plot",
            "--out", str(tmp_path / "run")]
    proc = spawn(tmp_path, *argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    line = proc.stderr.readline()
    assert b"2p: " in line, (line, proc.stderr.read())
    # two matches finished (not a fixed sleep: on a busy machine 1.5 s was not always one match)
    wait_for_lines(tmp_path / "run" / "matches" / "2p" / "00-greedy" / "matches.jsonl", 2, proc)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=CHILD_TIMEOUT_S)
    text = line.decode() + err.decode()
    assert proc.returncode == 130 and "Traceback" not in text, text
    assert "the same command with --resume plays the rest" in text
    card = json.loads((tmp_path / "run" / "card.json").read_text())
    assert not card["complete"] and 0 < card["tables"][0]["cells"][0]["matches"] < 40
    assert benchmark.main([*argv, "--resume", "--no-progress"]) == 0
    assert json.loads((tmp_path / "run" / "card.json").read_text())["complete"]


@pytest.mark.parametrize("change", [
    lambda r: r.update(winner=1 - r["winner"]),  # the scores say the other side won
    lambda r: r.update(scores=[10**30, r["scores"][1]]),
    lambda r: r.update(hands=0),
    lambda r: r.update(winner_agent="random" if r["winner_agent"] == "greedy" else "greedy"),
    lambda r: r.update(duration_s=math.nan),
], ids=["winner", "scores", "hands", "winner_agent", "duration_s"])
def test_a_resumed_card_refuses_a_line_no_match_ends_with(tmp_path, capsys, change):
    """A cell's line with a winner its scores contradict, scores no match reaches, no hand, or
    a NaN duration was counted into the card on --resume (no game record is kept to replay
    it): one line naming the file and the problem, status 2, and the card as it was."""
    argv = ["random", "--panel", "greedy", "--tables", "2p", "--matches", "1",
            "--target-score", "30", "--no-plot", "--no-progress", "--out", str(tmp_path / "c")]
    assert benchmark.main(argv) == 0
    path = tmp_path / "c" / "matches" / "2p" / "00-greedy" / "matches.jsonl"
    lines = path.read_text().splitlines()
    rec = json.loads(lines[0])
    change(rec)
    path.write_text("\n".join([json.dumps(rec), *lines[1:]]) + "\n")
    card = (tmp_path / "c" / "card.json").read_bytes()
    capsys.readouterr()
    assert benchmark.main([*argv, "--resume"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"error: {path}:1 is not a match record of this tournament ("), line
    assert (tmp_path / "c" / "card.json").read_bytes() == card


def test_a_card_without_its_benchmark_json_is_not_told_to_pass_resume_again(tmp_path, capsys):
    """``rm tm4/benchmark.json; benchmark ... --out tm4 --resume`` answered "pass --resume to
    continue it": --resume was passed. The line says what is missing and the ways on."""
    argv = ["greedy", "--panel", "random", "--tables", "2p", "--matches", "2",
            "--target-score", "30", "--no-plot", "--no-progress", "--out", str(tmp_path / "c")]
    assert benchmark.main(argv) == 0
    (tmp_path / "c" / "benchmark.json").unlink()
    capsys.readouterr()
    assert benchmark.main([*argv, "--resume"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "but no benchmark.json: its arguments are unknown" in line, line
    assert "pass --resume" not in line


def test_a_closed_output_is_one_line_and_status_2_and_the_card_is_kept(tmp_path):
    read, write = os.pipe()
    os.close(read)  # nobody reads the output: printing the table fails with EPIPE
    proc = spawn(tmp_path, "greedy", "--panel", "random", "--tables", "2p", "--matches", "2",
                 "--target-score", "30", "--no-plot", "--no-progress", "--out", "run",
                 stdout=write, stderr=subprocess.PIPE)
    os.close(write)
    _, err = proc.communicate(timeout=120)
    lines = err.decode().strip().splitlines()
    assert proc.returncode == 2 and "Traceback" not in err.decode(), err
    # the card is finished and named, as always; then the lost output is said
    assert lines == ["card: run/card.json",
                     "error: standard output was closed before the output was written"]
    assert json.loads((tmp_path / "run" / "card.json").read_text())["complete"]


def test_a_card_is_not_resumed_with_a_replaced_policy_file(tmp_path):
    """A card stopped, its agent's ``ppo:p.npz`` replaced by another policy, then resumed: the
    new policy's matches were added to the old one's, one row for two players, in silence. The
    tournament of each cell keeps the sha256 of the files its agents read: refused, until the
    file is put back."""
    import shutil

    from agents.ppo import random_policy_npz
    from agents.tournament import TournamentDirError

    rules = RuleConfig(**FAST)
    policy, first = tmp_path / "p.npz", tmp_path / "first.npz"
    random_policy_npz(first, rules, hidden=(8,), seed=1)
    shutil.copy(first, policy)
    config = BenchmarkConfig(f"ppo:{policy}", panel=["random"], tables=["2p"], matches=2,
                             seed=3, rule_options=FAST)
    out = tmp_path / "card"
    run_card(config, out, progress=False)
    [matches] = list(out.rglob("matches.jsonl"))
    lines = matches.read_text().splitlines(keepends=True)
    matches.write_text(lines[0])  # stopped after its first match
    random_policy_npz(policy, rules, hidden=(8,), seed=2)
    with pytest.raises(TournamentDirError, match=f"read {str(policy)!r}, and that file changed "
                                                 "since the run started"):
        run_card(config, out, resume=True, progress=False)
    assert matches.read_text() == lines[0]  # nothing played
    shutil.copy(first, policy)  # put back: it resumes
    assert run_card(config, out, resume=True, progress=False).played == len(lines) - 1


def test_run_card_into_a_file_names_no_flag(tmp_path):
    """``run_card`` called from Python with ``out`` a regular file said "--out '...' is a
    file, not a folder": a flag its caller never typed. The refusal names the path and no
    flag."""
    out = tmp_path / "card"
    out.write_text("not a folder")
    with pytest.raises(BenchmarkDirError) as refused:
        run_card(tiny(tables=["2p"]), out, progress=False)
    assert isinstance(refused.value, ValueError)
    message = str(refused.value)
    assert "--out" not in message and repr(str(out)) in message, message
    assert "is a file, not a folder" in message, message
    assert out.read_text() == "not a folder"
