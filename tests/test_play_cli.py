"""``python -m dominoes_env play``: a scripted match over piped standard input."""

from __future__ import annotations

import io
import json
import os
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


class _SizedReads(io.StringIO):
    """Standard input that writes down the size each ``readline`` asked for."""

    def __init__(self, text: str):
        super().__init__(text)
        self.sizes: list[int] = []

    def readline(self, size: int = -1) -> str:
        self.sizes.append(size)
        return super().readline(size)


def test_a_long_typed_line_is_read_in_capped_pieces_and_refused():
    # the line was read whole (a 300 MB line held 918 MB); a 5,000-digit number, past
    # Python's digit limit for int(), was "not a number"
    from dominoes_env.play import LINE_LIMIT

    stdin = _SizedReads("a" * (3 * LINE_LIMIT + 5) + "\n" + "7" * 5000 + "\nq\n")
    out = io.StringIO()
    game = TerminalGame([make_agent("random", seed=0)], RuleConfig(), seed=1, names=["random"],
                        stdin=stdin, stdout=out)
    assert game.run() is False
    assert stdin.sizes and all(0 < size <= LINE_LIMIT for size in stdin.sizes)
    text = out.getvalue()
    assert text.count("Line too long") == 1 and "is not a number" not in text
    assert "There is no move 77777777777777777777... (5000 digits)" in text
    assert "You quit the match." in text


@pytest.mark.parametrize("kwargs, error, words", [
    ({"rules": {"num_players": 3}}, TypeError, "rules must be a RuleConfig"),
    ({"agents": ["random"]}, TypeError, "agent at seat 1 ('random') has no act"),
    ({"agents": [None, None], "rules": RuleConfig(num_players=3)}, TypeError,
     "agent at seat 1 (None) has no act"),
    ({"agents": None}, TypeError, "agents must be a list"),
    ({"names": ["a"], "rules": RuleConfig(num_players=3)}, ValueError,
     "names must name the 2 agent(s) at seats 1..2, got 1"),
    ({"names": "ab"}, TypeError, "names must be a list"),
    ({"names": [7]}, TypeError, "the name of seat 1 must be a str"),
])
def test_terminal_game_checks_its_arguments_before_the_match(kwargs, error, words):
    # names=["a"] for 3 players was an IndexError mid-match; a dict of rules an AttributeError;
    # agents that are specs or None an AttributeError on their first turn
    rules = kwargs.pop("rules", RuleConfig())
    n = rules.num_players if isinstance(rules, RuleConfig) else 2
    agents = kwargs.pop("agents", [make_agent("random", seed=s) for s in range(1, n)])
    with pytest.raises(error) as info:
        TerminalGame(agents, rules, seed=1, stdin=io.StringIO("1\n" * 50),
                     stdout=io.StringIO(), **kwargs)
    assert words in str(info.value)


def test_play_without_seed_shows_and_saves_the_seed_it_drew(tmp_path):
    # the seed drawn was never shown nor saved, and the record named no seats
    import re

    first, again = tmp_path / "first.json", tmp_path / "again.json"
    proc = run(["play", "--opponents", "random", "--save", str(first)], "1\n2\n1\nq\n")
    assert proc.returncode == 0, proc.stderr
    seed = int(re.search(r"Match seed (\d+) \(--seed \1 deals this match again\)",
                         proc.stdout).group(1))
    record = load_record(first)
    assert record["match"] == {"seats": ["you", "random"], "seed": seed}
    proc = run(["play", "--opponents", "random", "--seed", str(seed), "--save", str(again)],
               "1\n2\n1\nq\n")
    assert proc.returncode == 0, proc.stderr
    assert load_record(again) == record
    html = tmp_path / "m.html"
    proc = run(["replay", str(first), "--html", str(html)], "")
    assert proc.returncode == 0, proc.stderr
    assert '"names":["you","random"]' in html.read_text()  # the viewer names the seats


def test_an_agent_that_alters_its_view_is_an_agent_fault_and_the_record_is_saved(tmp_path):
    # the agent's own view.legal was the reference: match.play(999) ended in a traceback,
    # status 1, and the --save record was lost
    (tmp_path / "mutating_agent.py").write_text(
        "class Mutate:\n"
        "    def __init__(self, seed=None):\n        pass\n"
        "    def act(self, view):\n"
        "        object.__setattr__(view, 'legal', (999,))\n        return 999\n")
    record = tmp_path / "m.json"
    proc = subprocess.run(
        [sys.executable, "-m", "dominoes_env", "play", "--opponents", "mutating_agent:Mutate",
         "--seed", "1", "--target-score", "20", "--save", str(record)],
        input="1\n" * 20, capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])})
    assert proc.returncode == 2, proc.stderr
    assert ("error: agent 'mutating_agent:Mutate' at seat 1 returned 999, not a legal action"
            in proc.stderr) and "Traceback" not in proc.stderr
    assert f"record saved to {record}" in proc.stderr
    assert load_record(record)["match"]["seats"] == ["you", "mutating_agent:Mutate"]


def test_python_m_dominoes_env_play_runs_the_play_command():
    # the module had no __main__ block: it did nothing and exited 0
    proc = subprocess.run([sys.executable, "-m", "dominoes_env.play", "--opponents", "random",
                           "--seed", "3"], input="q\n", capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "Match seed 3" in proc.stdout and "You quit the match." in proc.stdout
    proc = subprocess.run([sys.executable, "-m", "dominoes_env.play", "--opponents", "nobody"],
                          input="", capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "unknown agent spec 'nobody'" in proc.stderr
