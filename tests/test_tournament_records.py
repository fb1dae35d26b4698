"""``--save-records``: every match of a tournament keeps its game record, exactly one per line of
``matches.jsonl`` even across a SIGKILL and a resume, and each record replays to the stored
outcome."""

from __future__ import annotations

import gzip
import json
import signal
import subprocess
import sys

import pytest

from agents.tournament import TournamentConfig, run_tournament
from agents.tournament.record_store import game_line
from agents.tournament.runner import MATCHES_FILE, job_record
from dominoes_env.cli import main as dominoes_main
from dominoes_env.core import RuleConfig
from dominoes_env.core.records import replay_record
from dominoes_env.record_io import RECORDS_DIR, iter_records, shard_name
from experiments.tournament import main

from .helpers import CHILD_TIMEOUT_S, ROOT, SLOW, cli, wait_for_lines

FAST = RuleConfig(target_score=60)


def stored(out) -> tuple[dict[str, dict], dict[str, list[dict]]]:
    """matches.jsonl by key, and every record in the shards by key (a list, to see repeats)."""
    matches = {}
    for line in (out / MATCHES_FILE).read_text().splitlines():
        rec = json.loads(line)
        matches[rec["key"]] = rec
    records: dict[str, list[dict]] = {}
    for path in sorted((out / RECORDS_DIR).glob("*.jsonl.gz")):
        for rec in iter_records(path):
            records.setdefault(rec["match"]["key"], []).append(rec)
            assert path.name == shard_name(rec["match"]["index"])
    return matches, records


def assert_exact(out) -> int:
    """Every match has exactly one record, every record a match, and it replays to it."""
    matches, records = stored(out)
    assert sorted(records) == sorted(matches)
    for key, recs in records.items():
        assert len(recs) == 1, f"{key} has {len(recs)} records"
        rec, match = recs[0], matches[key]
        assert rec["match"] == {k: match[k] for k in ("index", "key", "seats", "seed")}
        outcome = replay_record(rec)
        assert (outcome["scores"], outcome["winner"]) == (match["scores"], match["winner"])
        assert len(outcome["hands"]) == match["hands"]
    return len(matches)


@pytest.mark.parametrize("options, agents", [
    ([], ["random", "greedy"]),
    (["--players", "4"], ["random", "greedy"]),
    (["--players", "3"], ["random", "greedy", "search:sims=4"]),
])  # fmt: skip
def test_records_replay_to_the_stored_outcomes(tmp_path, capsys, options, agents):
    out = tmp_path / "run"
    assert main(["--agents", *agents, "--matches", "4", "--target-score", "50", "--out",
                 str(out), "--quiet", "--no-plots", "--save-records", *options]) == 0
    capsys.readouterr()
    n = assert_exact(out)
    matches, _ = stored(out)
    # and through the command line: the directory and a match index, as the README shows
    for match in list(matches.values())[:3]:
        assert dominoes_main(["replay", str(out), "--match", str(match["index"])]) == 0
        result = json.loads(capsys.readouterr().out)
        assert (result["scores"], result["winner"]) == (match["scores"], match["winner"])
    assert n == len(matches) >= 4


def test_records_survive_sigkill_and_resume_exactly(tmp_path):
    out = tmp_path / "run"
    args = ["--agents", "random", SLOW, "--matches", "40", "--target-score", "60",
            "--workers", "2", "--out", str(out), "--quiet", "--no-plots", "--save-records"]
    proc = cli(*args)
    wait_for_lines(out / MATCHES_FILE, 6, proc)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=CHILD_TIMEOUT_S)
    config = TournamentConfig(["random", SLOW], FAST, matches=40)
    schedule = config.schedule()
    matches, _ = stored(out)
    assert 6 <= len(matches) < 40
    # as if killed between the two writes: a record whose match line never came ...
    orphan = next(j for j in schedule.jobs if j.key not in matches)
    rec = job_record(orphan, FAST, config.max_hands, keep_record=True)
    shard = out / RECORDS_DIR / shard_name(orphan.index)
    with open(shard, "ab") as f:
        f.write(gzip.compress(json.dumps(game_line(rec, rec.pop("_game"))).encode() + b"\n"))
        # ... and in the middle of writing the next record
        f.write(gzip.compress(b'{"rules": {}, "hands": [' * 50)[:40])
    run = run_tournament(config, out, workers=2, progress=False, save_records=True)
    assert len(run.records) == 40
    assert assert_exact(out) == 40
    assert run_tournament(config, out, progress=False, save_records=True).played == 0


def test_records_are_added_to_a_run_that_had_none(tmp_path):
    out = tmp_path / "run"
    config = TournamentConfig(["random", "greedy"], FAST, matches=6)
    run_tournament(config, out, progress=False)
    assert not (out / RECORDS_DIR).exists()
    again = run_tournament(config, out, progress=False, save_records=True)
    assert again.played == 0  # no match is played twice into matches.jsonl ...
    assert assert_exact(out) == 6  # ... yet every one now has its record


def test_replay_reads_a_shard_from_the_command_line(tmp_path):
    out = tmp_path / "run"
    run_tournament(TournamentConfig(["random", "greedy"], FAST, matches=2), out,
                   progress=False, save_records=True)
    matches, _ = stored(out)
    key, match = next(iter(matches.items()))
    shard = out / RECORDS_DIR / shard_name(match["index"])
    r = subprocess.run([sys.executable, "-m", "dominoes_env", "replay", str(shard), "--match",
                        key, "--html", str(tmp_path / "m.html")], cwd=ROOT,
                       capture_output=True, text=True, timeout=CHILD_TIMEOUT_S)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["scores"] == match["scores"]
    assert (tmp_path / "m.html").stat().st_size > 1000
    r = subprocess.run([sys.executable, "-m", "dominoes_env", "replay", str(out)], cwd=ROOT,
                       capture_output=True, text=True, timeout=CHILD_TIMEOUT_S)
    assert r.returncode == 2 and "choose one with --match" in r.stderr
