"""``python -m dominoes_env play``: a scripted match over piped standard input."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest

from agents import make_agent
from dominoes_env.core import RuleConfig
from dominoes_env.core.records import load_record, replay_record
from dominoes_env.play import TerminalGame


def run(args, stdin: str):
    return subprocess.run([sys.executable, "-m", "dominoes_env", *args], input=stdin,
                          capture_output=True, text=True, timeout=120)


def test_scripted_full_match_with_bad_inputs_and_saved_record(tmp_path):
    record = tmp_path / "match.json"
    # bad inputs first (not a number, empty line, out of range, zero), then always move 1
    # ('\u0663' is an Arabic-Indic three: a move typed in digits the reader may not see)
    stdin = "abc\n\n99\n0\n-3\n\u0663\n" + "1\n" * 2000
    proc = run(["play", "--opponents", "greedy", "--seed", "5", "--target-score", "100",
                "--save", str(record)], stdin)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "'abc' is not a number" in out
    assert "Empty line" in out
    assert "There is no move 99" in out and "There is no move 0" in out
    assert "There is no move -3" in out
    assert "'\u0663' is not a number" in out
    assert "Match over:" in out
    assert "[greedy]" in out and "=== Hand 1:" in out
    assert "ends:" in out and "tiles in hand:" in out  # the ansi picture each turn
    replay = replay_record(load_record(record))
    assert replay["winner"] is not None and max(replay["scores"]) >= 100
    final = out.rsplit("Match over:", 1)[1]
    for score in replay["scores"]:
        assert str(score) in final
    # the CLI replays the saved record to the same scores
    proc = run(["replay", str(record)], "")
    assert proc.returncode == 0 and json.loads(proc.stdout)["scores"] == replay["scores"]


@pytest.mark.parametrize("ending", ["q\n", ""])  # q, or end of input
def test_quitting_mid_hand_saves_a_record_that_replays(tmp_path, ending):
    record = tmp_path / "quit.json"
    proc = run(["play", "--opponents", "random", "random", "--seed", "2", "--save", str(record)],
               "1\n2\n" + ending)
    assert proc.returncode == 0, proc.stderr
    assert "You quit the match." in proc.stdout
    replay = replay_record(load_record(record))
    assert replay["winner"] is None
    assert replay["hands"][-1]["end"] is None
    assert len(load_record(record)["rules"]) and load_record(record)["rules"]["num_players"] == 3


def test_four_players_in_partnership_seat_the_partner_opposite():
    stdin = "1\n" * 3000
    proc = run(["play", "--opponents", "greedy", "random", "greedy", "--seed", "1",
                "--target-score", "50"], stdin)
    assert proc.returncode == 0, proc.stderr
    assert "partners: you and seat 2" in proc.stdout
    assert "Seat 2 [random] (partner)" in proc.stdout
    assert "Your side" in proc.stdout


def test_bad_options_exit_2_with_a_clear_error():
    proc = run(["play", "--opponents", "nobody"], "")
    assert proc.returncode == 2 and "unknown agent spec 'nobody'" in proc.stderr
    proc = run(["play", "--opponents", "random", "--partnerships"], "")
    assert proc.returncode == 2 and "partnerships" in proc.stderr


def test_terminal_game_in_process_shows_points_of_each_move():
    out = io.StringIO()
    game = TerminalGame([make_agent("greedy", seed=0)], RuleConfig(target_score=30), seed=4,
                        names=["greedy"], stdin=io.StringIO("1\n" * 500), stdout=out)
    assert game.run() is True
    text = out.getvalue()
    assert "(+" in text  # some legal move showed the points it would score
    assert game.match.is_over
