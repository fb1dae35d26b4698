"""Text that Python reads differently from what a check expects: JSON nested beyond the recursion
limit (``json.loads`` raises ``RecursionError``, not the ``ValueError`` readers catch), digits
that ``str.isdigit`` accepts and ``int`` refuses (``'²'``), and a save that fails with a
``ValueError`` (a link put where the record goes). Each was a traceback; each is now one line and
a status, or passed over where the input is only a file to skip."""

from __future__ import annotations

import io
import json
import os
import sys

import numpy as np
import pytest

from dominoes_env.core.validation import parse_json

DEEP = "[" * 100_000 + "]" * 100_000


def _one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


def test_parse_json_says_nested_too_deeply():
    with pytest.raises(ValueError, match="nested too deeply"):
        parse_json(DEEP)


@pytest.fixture(scope="module")
def records_run(tmp_path_factory):
    from experiments.tournament import main as tournament

    out = tmp_path_factory.mktemp("run") / "run"
    assert tournament(["--agents", "random", "greedy", "--matches", "2", "--save-records",
                       "--no-plots", "--quiet", "--target-score", "50", "--workers", "1",
                       "--out", str(out)]) == 0
    return out


@pytest.mark.parametrize("junk", [
    '[{"a": 1, "a": 2}, ' + DEEP + "]",       # a key twice, then nested too deeply
    '[{"a": 1, "a": 2}, ' + "1" * 5000 + "]",  # a key twice, then a number int() refuses
])
def test_replay_passes_over_a_damaged_line_of_matches_jsonl(records_run, tmp_path, junk,
                                                           capsys):
    import shutil

    from dominoes_env.cli import main

    run = tmp_path / "run"
    shutil.copytree(records_run, run)
    with open(run / "matches.jsonl", "a") as f:
        f.write(junk + "\n")
    assert main(["replay", str(run), "--match", "0"]) == 0
    assert json.loads(capsys.readouterr().out)["winner"] is not None


def test_replay_of_a_match_named_in_digits_int_refuses_is_one_line(records_run, tmp_path,
                                                                  capsys):
    import shutil

    from dominoes_env.cli import main

    lone = tmp_path / "lone"
    lone.mkdir()
    shutil.copytree(records_run / "records", lone / "records")  # no matches.jsonl beside it
    for where in (lone, lone / "records"):
        assert main(["replay", str(where), "--match", "\u00b2"]) == 2
        assert "\u00b2" in _one_error_line(capsys.readouterr().err)


def test_a_leftover_temporary_named_with_other_digits_is_left_alone(tmp_path):
    from dominoes_env.core.atomic_files import atomic_write, remove_stale_temporaries

    target = tmp_path / "page.html"
    odd = tmp_path / ".page.html-tmp-\u00b2-x.tmp"  # .NAME-tmp-PID-...: a writer's own
    odd.write_text("")
    assert remove_stale_temporaries(target) == []
    with atomic_write(target, "w") as f:  # and the write it precedes goes through
        f.write("done")
    assert target.read_text() == "done" and odd.exists()


def test_a_ray_port_in_other_digits_is_said_to_be_no_port():
    from agents.ray_cluster import split_address

    with pytest.raises(ValueError, match="has no valid port"):
        split_address("localhost:\u00b2")


def test_a_save_refused_with_a_value_error_is_one_line_and_the_record_is_rescued(
        tmp_path, monkeypatch, capsys):
    """A link or a device put where ``--save`` goes during the match makes the record's
    writer raise ``ValueError``, which has no ``strerror``: the line formatting it raised
    AttributeError, and the match was lost."""
    import tempfile

    import dominoes_env.play as play
    from dominoes_env.cli import main

    def refuse(record, path, overwrite):
        raise ValueError(f"{path!r} is a symbolic link now")

    monkeypatch.setattr(play, "save_record", refuse)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(sys, "stdin", io.StringIO("q\n"))
    save = tmp_path / "match.json"
    assert main(["play", "--opponents", "greedy", "--seed", "1", "--save", str(save)]) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert "is a symbolic link now" in line and "it is saved in" in line
    rescued = [p for p in os.listdir(tmp_path) if p.startswith("dominoes-record-")]
    assert len(rescued) == 1 and not save.exists()


def test_expert_iteration_refuses_demonstrations_nested_too_deeply(tmp_path, capsys):
    from experiments.expert_iteration import main

    data = tmp_path / "demos.npz"
    np.savez(data, obs=np.zeros((1, 234), np.float32), masks=np.zeros((1, 112), bool),
             actions=np.zeros(1, np.int64), values=np.zeros(1, np.float32), meta=np.array(DEEP))
    assert main(["--out", str(tmp_path / "out"), "--data", str(data)]) == 2
    assert "nested too deeply" in _one_error_line(capsys.readouterr().err)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("array, value", [
    ("actions", np.array(3)),  # 0-d: len() of it was a TypeError traceback
    ("values", np.zeros((1, 1), np.float32)),
    ("obs", np.zeros(234, np.float32)),
])  # fmt: skip
def test_expert_iteration_refuses_demonstrations_of_the_wrong_rank(tmp_path, capsys, array,
                                                                   value):
    import json

    from dominoes_env.core import RuleConfig
    from experiments.expert_iteration import main

    meta = {"teacher": "greedy", "opponents": ["greedy"], "matches": 1, "seed": 0,
            "rules": RuleConfig().to_dict()}
    arrays = {"obs": np.zeros((1, 234), np.float32), "masks": np.zeros((1, 112), bool),
              "actions": np.zeros(1, np.int64), "values": np.zeros(1, np.float32),
              array: value}
    data = tmp_path / "demos.npz"
    np.savez(data, **arrays, meta=np.array(json.dumps(meta)))
    assert main(["--out", str(tmp_path / "out"), "--data", str(data)]) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert f"{array} has {value.ndim}" in line and "arrays of the wrong number of dimensions" \
        in line, line
    assert not (tmp_path / "out").exists()


def test_train_rllib_refuses_a_checkpoint_whose_json_is_nested_too_deeply(tmp_path, capsys):
    pytest.importorskip("ray")
    from experiments.train_rllib import main

    checkpoint = tmp_path / "rl" / "checkpoint"
    checkpoint.mkdir(parents=True)
    (checkpoint / "rllib_checkpoint.json").write_text(DEEP)
    assert main(["--out", str(tmp_path / "rl"), "--resume", str(checkpoint),
                 "--iterations", "1"]) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert "is not an RLlib checkpoint folder" in line and "nested too deeply" in line


# -- found by reading the code for the same kinds of slip ----------------------------------------
def test_a_spec_parameter_too_large_for_a_float_is_refused_in_one_line(tmp_path, capsys):
    """Two specs were compared by ``float(value)``: a 400-digit ``sims`` was an
    ``OverflowError`` traceback before its range was checked."""
    from experiments.tournament import main as tournament

    huge = "9" * 400
    assert tournament(["--agents", f"search:sims={huge}", "random", "--matches", "2",
                       "--out", str(tmp_path / "t")]) == 2
    assert "sims=" in _one_error_line(capsys.readouterr().err)


def test_a_policy_file_named_in_bytes_that_are_no_utf8_is_drawn_with_an_escape(tmp_path):
    """matplotlib refused the label ``ppo:p\\udcff.npz`` with a TypeError, after every match of
    the tournament had been played."""
    import shutil

    from agents.ppo import shipped_policy_path
    from experiments.tournament import main as tournament

    odd = tmp_path / "p\udcff.npz"  # the byte 0xff in the file's name
    shutil.copy(shipped_policy_path(2), odd)
    out = tmp_path / "t"
    assert tournament(["--agents", f"ppo:{odd}", "random", "--matches", "2", "--quiet",
                       "--workers", "1", "--out", str(out)]) == 0
    assert (out / "winrate_heatmap.png").stat().st_size > 0
    assert (out / "ratings.png").stat().st_size > 0


def test_the_viewer_page_of_a_record_whose_names_are_no_utf8_is_written(records_run, tmp_path,
                                                                      capsys):
    """A seat named in bytes that are no UTF-8 (a JSON escape ``\\udcff``, as such a
    tournament writes it) was a UnicodeEncodeError traceback writing the page."""
    from dominoes_env.cli import main
    from dominoes_env.record_io import read_record

    record = read_record(str(records_run), "0")
    record["match"]["seats"] = ["\udcff", "greedy"]
    path = tmp_path / "odd.json"
    path.write_text(json.dumps(record))
    page = tmp_path / "odd.html"
    assert main(["replay", str(path), "--html", str(page)]) == 0
    assert "\\udcff vs greedy" in page.read_text()


def test_a_checkpoint_schedule_or_space_that_is_no_number_is_a_checkpoint_error():
    from agents.sb3_checkpoint import CheckpointError, check_pickled, space_sizes

    schedule = {"lr_schedule": {":serialized:": "x", "value_schedule": "ConstantSchedule(val=--)"}}
    with pytest.raises(CheckpointError, match="constant '--' is no number"):  # ValueError
        check_pickled(schedule)
    assert space_sizes({"action_space": {"n": float("inf")}}) == (None, None)  # OverflowError


def test_the_files_a_program_reads_back_from_its_own_trainer_may_be_nested_too_deeply(
        tmp_path):
    from dominoes_env.cli_support import CommandError
    from experiments.bench_training import read_throughput
    from experiments.best_response import trained_steps

    (tmp_path / "throughput.json").write_text(DEEP)
    with pytest.raises(CommandError, match="wrote no readable throughput.json"):
        read_throughput("train_jax", tmp_path / "throughput.json", 1)
    (tmp_path / "throughput.json").write_text('{"steps_per_update": Infinity, "update_s": [1],'
                                              ' "update_cpu_s": [1]}')
    with pytest.raises(CommandError, match="wrote no readable"):  # OverflowError
        read_throughput("train_jax", tmp_path / "throughput.json", 1)
    (tmp_path / "policy.json").write_text(DEEP)
    assert trained_steps(tmp_path, 64) == 64
