"""Game records: write, read and replay exactly; bad records rejected with the right reason;
the ``python -m dominoes_env replay`` contract (stdout JSON, exit status 2, one-line errors)."""

from __future__ import annotations

import copy
import json
import subprocess
import sys

import pytest

from dominoes_env.core import MatchState, RecordError, RuleConfig
from dominoes_env.core.records import load_record, replay_match, replay_record, write_record

from .helpers import BAD_RECORDS, RULES_EXAMPLE, bad_record, random_match


def test_rules_example_replays():
    out = replay_record(RULES_EXAMPLE)
    assert out == {
        "hands": [{"move_points": [0, 0], "end": None, "award": None, "scores": [0, 0]}],
        "scores": [0, 0],
        "winner": None,
    }


@pytest.mark.parametrize("options", [
    {}, {"num_players": 3}, {"num_players": 4}, {"num_players": 4, "partnerships": False},
    {"max_pip": 9, "win_check": "end_of_hand"}, {"next_leader": "rotate", "boneyard_reserve": 3},
    {"spinner": "none", "blocked_award": "difference"}, {"spinner_cross": "immediately"},
])  # fmt: skip
def test_random_matches_round_trip(options, tmp_path):
    rules = RuleConfig(**options)
    for seed in range(15):
        m = random_match(rules, seed)
        path = tmp_path / f"m{seed}.json"
        write_record(m.to_record(), path)
        replayed, summaries = replay_match(load_record(path))
        assert replayed.scores == m.scores and replayed.winner == m.winner
        assert [s["scores"] for s in summaries][: len(m.hand_scores)] == m.hand_scores
        assert sum(len(s["move_points"]) for s in summaries) == sum(
            len(h.moves)
            for h in m.finished_hands + ([] if m.hand in m.finished_hands else [m.hand])
        )


def test_lead_orientation_is_kept():
    rec = copy.deepcopy(RULES_EXAMPLE)
    rec["hands"][0]["moves"] = [[0, [4, 5], None], [1, [5, 5], "right"]]
    assert replay_record(rec)["hands"][0]["move_points"] == [0, 0]  # 4 + 10 = 14
    rec["hands"][0]["moves"] = [[0, [5, 4], None], [1, [5, 5], "right"]]
    with pytest.raises(RecordError, match=r"move 1 .*does not fit the right end \(showing 4\)"):
        replay_record(rec)
    rec["hands"][0]["moves"] = [[0, [5, 4], None], [1, [5, 5], "left"]]
    assert replay_record(rec)["hands"][0]["move_points"] == [0, 0]


def test_match_stopped_mid_hand_and_finished_hands():
    m = MatchState(RuleConfig(), seed=5)
    for _ in range(30):
        m.play(m.legal_actions()[0])
    out = replay_record(m.to_record())
    assert out["scores"] == m.scores and out["winner"] is None
    assert out["hands"][-1]["end"] is None


@pytest.mark.parametrize("mutate, message", BAD_RECORDS)
def test_bad_records_are_rejected_with_the_reason(mutate, message):
    with pytest.raises(RecordError) as err:
        replay_record(bad_record(mutate))
    assert message in str(err.value)


def test_moves_after_the_match_is_won_are_rejected():
    m = random_match(RuleConfig(target_score=40, win_check="end_of_hand"), 3)
    rec = m.to_record()
    rec["hands"].append(copy.deepcopy(rec["hands"][-1]))
    with pytest.raises(RecordError, match="already won by side"):
        replay_record(rec)
    m = random_match(RuleConfig(target_score=40), 4)
    rec = m.to_record()
    rec["hands"][-1]["moves"].append(rec["hands"][-1]["moves"][-1])
    with pytest.raises(RecordError, match="already won by side|the hand is already over"):
        replay_record(rec)


def test_leader_must_follow_next_leader_rules():
    m = random_match(RuleConfig(next_leader="rotate", target_score=100), 1)
    rec = m.to_record()
    assert len(rec["hands"]) > 1
    rec["hands"][1]["leader"] = rec["hands"][0]["leader"]  # the same seat again
    with pytest.raises(RecordError, match="leader rotates"):
        replay_record(rec)


def run_cli(*args, stdin=None):
    return subprocess.run(
        [sys.executable, "-m", "dominoes_env", *args], capture_output=True, text=True, input=stdin
    )


def test_cli_replay_prints_the_contract(tmp_path):
    m = random_match(RuleConfig(num_players=3), 8)
    path = tmp_path / "rec.json"
    write_record(m.to_record(), path)
    proc = run_cli("replay", str(path))
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert set(out) == {"hands", "scores", "winner"}
    assert out["scores"] == m.scores and out["winner"] == m.winner
    assert set(out["hands"][0]) == {"move_points", "end", "award", "scores"}


@pytest.mark.parametrize("content, message", [
    ("{not json", "is not valid JSON"),
    ("[1, 2]", "must be a JSON object"),
    ('{"rules": {}}', "lacks the field 'hands'"),
    (None, "cannot read"),
])  # fmt: skip
def test_cli_rejects_bad_files_with_status_2_and_one_line(tmp_path, content, message):
    path = tmp_path / "bad.json"
    if content is not None:
        path.write_text(content)
    proc = run_cli("replay", str(path))
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert (
        message in proc.stderr and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    )


def test_cli_rule_breaking_record(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(
        json.dumps(bad_record(lambda r: r["hands"][0]["moves"].__setitem__(1, [1, [1, 1], "left"])))
    )
    proc = run_cli("replay", str(path))
    assert proc.returncode == 2 and "does not fit the left end" in proc.stderr
