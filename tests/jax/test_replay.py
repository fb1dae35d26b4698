"""``replay --backend jax``: the JAX game replays the core replay tests' records with the same
JSON output, and rejects the same rule-breaking records with the same reasons."""

from __future__ import annotations

import copy
import json

import pytest

pytest.importorskip("jax")

from dominoes_env.cli import main  # noqa: E402
from dominoes_env.core import RecordError, RuleConfig  # noqa: E402
from dominoes_env.core.records import replay_record  # noqa: E402
from dominoes_env.jax.replay import replay_record_jax  # noqa: E402

from ..helpers import BAD_RECORDS, RULES_EXAMPLE, bad_record, random_match  # noqa: E402


def test_rules_example_replays_the_same():
    assert replay_record_jax(RULES_EXAMPLE) == replay_record(RULES_EXAMPLE)


@pytest.mark.parametrize("options", [
    {}, {"num_players": 4}, {"next_leader": "rotate", "boneyard_reserve": 3, "target_score": 100},
    {"num_players": 3, "win_check": "end_of_hand", "target_score": 100},
])  # fmt: skip
def test_random_matches_replay_the_same(options):
    rules = RuleConfig(**options)
    for seed in range(6):
        rec = random_match(rules, seed).to_record()
        assert replay_record_jax(rec) == replay_record(rec)
        # stopped in the middle of its last hand
        cut = copy.deepcopy(rec)
        cut["hands"][-1]["moves"] = cut["hands"][-1]["moves"][:3]
        assert replay_record_jax(cut) == replay_record(cut)


def test_lead_orientation_is_kept():
    rec = copy.deepcopy(RULES_EXAMPLE)
    rec["hands"][0]["moves"] = [[0, [5, 4], None], [1, [5, 5], "left"]]
    assert replay_record_jax(rec) == replay_record(rec)
    rec["hands"][0]["moves"] = [[0, [5, 4], None], [1, [5, 5], "right"]]
    with pytest.raises(RecordError, match=r"move 1 .*does not fit the right end \(showing 4\)"):
        replay_record_jax(rec)


@pytest.mark.parametrize("mutate, message", BAD_RECORDS)
def test_bad_records_are_rejected_with_the_reason(mutate, message):
    with pytest.raises(RecordError) as err:
        replay_record_jax(bad_record(mutate))
    assert message in str(err.value)


@pytest.mark.parametrize("end", [7, 0, "middle", True])
def test_an_end_that_is_no_name_is_refused_in_the_core_s_words(end):
    """The JAX replayer's refusal of an integer end left out "(or null for the lead)"."""
    rec = copy.deepcopy(RULES_EXAMPLE)
    rec["hands"][0]["moves"][1][2] = end
    reasons = []
    for replay in (replay_record, replay_record_jax):
        with pytest.raises(RecordError) as err:
            replay(rec)
        reasons.append(str(err.value))
    assert reasons[0] == reasons[1] and "(or null for the lead)" in reasons[1]


def test_leader_and_finished_match_checks():
    rules = RuleConfig(next_leader="rotate", boneyard_reserve=3, target_score=100)  # compiled above
    rec = random_match(rules, 1).to_record()
    rec["hands"][1]["leader"] = rec["hands"][0]["leader"]
    with pytest.raises(RecordError, match="leader rotates"):
        replay_record_jax(rec)
    rec = random_match(RuleConfig(), 4).to_record()
    rec["hands"][-1]["moves"].append(rec["hands"][-1]["moves"][-1])
    with pytest.raises(RecordError, match="already won by side"):
        replay_record_jax(rec)


def test_cli_backend_jax_prints_the_same_json_and_exits_2_on_a_bad_record(tmp_path, capsys):
    path = tmp_path / "rec.json"
    rec = random_match(RuleConfig(), 2).to_record()
    path.write_text(json.dumps(rec))
    assert main(["replay", str(path), "--backend", "jax"]) == 0
    assert json.loads(capsys.readouterr().out) == replay_record(rec)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(bad_record(
        lambda r: r["hands"][0]["moves"].__setitem__(1, [1, [1, 1], "left"]))))  # fmt: skip
    assert main(["replay", str(bad), "--backend", "jax"]) == 2
    out = capsys.readouterr()
    assert out.out == "" and out.err.count("\n") == 1
    assert "[1|1] does not fit the left end (showing 6)" in out.err


@pytest.mark.parametrize("program, setting, refused", [
    ("replay", ("JAX_ENABLE_X64", "banana"), "invalid truth value 'banana'"),
    ("replay", ("JAX_DEFAULT_MATMUL_PRECISION", "bogus"),
     'Invalid value "bogus" for JAX flag jax_default_matmul_precision'),
    ("replay", ("JAX_TRACEBACK_FILTERING", "bogus"), 'Invalid value "bogus"'),
    ("bench_jax", ("JAX_ENABLE_X64", "banana"), "invalid truth value 'banana'"),
])  # fmt: skip
def test_a_bad_jax_setting_is_one_line(tmp_path, program, setting, refused):
    """JAX reads its ``JAX_*`` variables as ``jax`` is imported and raises a ValueError on a
    value it cannot take: every JAX program ended in a traceback of 30 to 40 lines, where a bad
    ``XLA_FLAGS`` was one line already."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    path = tmp_path / "rec.json"
    path.write_text(json.dumps(RULES_EXAMPLE))
    command = {"replay": ["dominoes_env", "replay", str(path), "--backend", "jax"],
               "bench_jax": ["experiments.bench_jax", "--batches", "1", "--steps", "1",
                             "--seconds", "0.01", "--repeats", "1"]}[program]
    name, value = setting
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2]), "JAX_PLATFORMS": "cpu",
           name: value}
    proc = subprocess.run([sys.executable, "-m", *command], capture_output=True, text=True,
                          timeout=200, env=env, cwd=tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.startswith(f"error: JAX refused {name}={value!r}: {refused}")
    assert proc.stderr.endswith(" (unset it or correct it)\n") and proc.stderr.count("\n") == 1
