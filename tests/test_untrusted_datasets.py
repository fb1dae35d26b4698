"""Decision datasets as a hostile user leaves them (issue 33, item 3): every array and the
metadata of ``dataset.json`` are checked by :func:`agents.datasets.load_decisions` and
:func:`~agents.datasets.dataset_info`, and a bad one is one ``ValueError`` naming the file and
the problem (it was a traceback, or an action of 10^6 accepted); ``python -m
experiments.make_dataset`` resumes a damaged dataset (its decisions written again, its records
repaired) or stops in one line."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from agents.datasets import (
    DECISIONS_DIR,
    INFO_FILE,
    IncompleteDatasetWarning,
    dataset_info,
    load_decisions,
    read_decisions,
)
from dominoes_env.record_io import RECORDS_DIR, encode_record, iter_records, shard_name
from experiments.make_dataset import main

from .helpers import CHILD_TIMEOUT_S, ROOT

ARGS = ["--agents", "greedy", "random", "--matches", "2", "--target-score", "40", "--quiet"]
SHARD = f"{DECISIONS_DIR}/decisions-0000.npz"


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("built") / "ds"
    assert main([*ARGS, "--out", str(out)]) == 0
    return out


@pytest.fixture
def ds(built, tmp_path) -> Path:
    out = tmp_path / "ds"
    shutil.copytree(built, out)
    return out


def change_info(out: Path, **changes) -> None:
    info = json.loads((out / INFO_FILE).read_text())
    info.update(changes)
    (out / INFO_FILE).write_text(json.dumps({k: v for k, v in info.items() if v is not ...}))


def change_arrays(out: Path, change) -> None:
    with np.load(out / SHARD) as data:
        arrays = dict(data)
    change(arrays)
    np.savez(out / SHARD, **arrays)


def refused(out: Path, fragment: str, where: str) -> str:
    with pytest.raises(ValueError) as err:
        load_decisions(out)
    message = str(err.value)
    assert str(out / where) in message and fragment in message, message
    return message


# -- dataset.json -------------------------------------------------------------------------------
@pytest.mark.parametrize("changes, fragment", [
    ({"format": "1"}, "dataset.json: format must be an integer (a version number), not '1'"),
    ({"format": 1.0}, "format must be an integer (a version number), not 1.0"),
    ({"format": True}, "format must be an integer (a version number), not True"),
    ({"format": 2}, "dataset format 2, this code reads 1"),
    ({"obs_version": "2"}, "obs_version must be an integer (a version number), not '2'"),
    ({"obs_version": 3}, "observations of version 3, the encoder is at version 2"),
    ({"obs_version": ...}, "observations of version None"),
    ({"observation_size": 233}, "observation_size is 233; these rules need 234"),
    ({"num_actions": 10**6}, "num_actions is 1000000; these rules need 112"),
    ({"num_actions": 112.0}, "num_actions is 112.0"),
    ({"fields": ["obs"]}, "fields is ['obs']"),
    ({"agents": "greedy"}, "agents must be a list of different agent specs"),
    ({"agents": ["greedy", "greedy"]}, "agents must be a list of different agent specs"),
    ({"agents": [1, 2]}, "agents must be a list"),
    ({"agents": ["greedy", "no::such spec"]}, "agents: agent spec 'no::such spec': '' is not"),
    ({"rules": {"num_players": 9}}, "rules: "),
    ({"rules": "double-six"}, "rules: "),
    ({"decisions": -1}, "decisions must be a count"),
    ({"matches": "2"}, "matches must be a count"),
])  # fmt: skip
def test_bad_metadata_is_one_value_error_naming_the_file(ds, changes, fragment):
    change_info(ds, **changes)
    with pytest.raises(ValueError) as err:
        dataset_info(ds)
    assert str(ds) in str(err.value) and fragment in str(err.value), str(err.value)
    with pytest.raises(ValueError, match="dataset"):
        load_decisions(ds)


@pytest.mark.parametrize("content", [b"{", b"[1, 2]", b'"text"', b"\xff\xfe", b"[" * 100_000,
                                     b" " * (2 << 20)])
def test_a_dataset_json_that_is_no_metadata_is_refused(ds, content):
    (ds / INFO_FILE).write_bytes(content)
    with pytest.raises(ValueError, match=f"{ds} is not a dataset directory"):
        dataset_info(ds)


def test_a_fifo_or_a_folder_as_dataset_json_never_blocks(ds):
    (ds / INFO_FILE).unlink()
    os.mkfifo(ds / INFO_FILE)
    code = ("import sys; from agents.datasets import dataset_info\n"
            "try: dataset_info(sys.argv[1])\n"
            "except ValueError as err: print(err)")
    r = subprocess.run([sys.executable, "-c", code, str(ds)], cwd=ROOT, capture_output=True,
                       text=True, timeout=CHILD_TIMEOUT_S)
    assert "not a regular file" in r.stdout, r
    (ds / INFO_FILE).unlink()
    (ds / INFO_FILE).mkdir()
    with pytest.raises(ValueError, match="not a regular file"):
        dataset_info(ds)


# -- the decision arrays ------------------------------------------------------------------------
def _set(key, index, value):
    def change(arrays):
        arrays[key][index] = value
    return change


@pytest.mark.parametrize("change, fragment", [
    (_set("action", 0, 10**6), "row 0: action 1000000 is outside the action space (0..111)"),
    (_set("action", 1, -1), "row 1: action -1 is outside the action space"),
    (lambda a: a["mask"].__setitem__((0, a["action"][0]), False),
     "row 0: action {a0} is not legal under its mask"),
    (lambda a: a["mask"].__setitem__(3, False), "row 3: its mask has no legal action"),
    (lambda a: a["mask"].__setitem__(slice(None), True),  # read as legal
     "row 0: its mask has 112 legal actions; a hand of 7 tiles has at most 28"),
    (lambda a: a["mask"].__setitem__((0, slice(None, 8)), True) or a["obs"].__setitem__(
        (0, slice(0, 2)), 0), "row 0: its mask has a legal play of tile 0, which is not in"),
    (_set("obs", (2, 5), np.nan), "obs holds NaN or infinite values"),
    (_set("obs", (0, 0), np.inf), "obs holds NaN or infinite values"),
    (_set("obs", (1, 0), 1e30), "row 1: obs[0] = 1e+30 is outside its block 'hand' (0..1)"),
    (_set("obs", (0, 3), -0.5), "row 0: obs[3] = -0.5 is outside its block 'hand' (0..1)"),
    (_set("seat", 3, 2), "row 3: seat 2 is outside 0..1"),
    (_set("agent", 0, 5), "row 0: agent 5 is outside 0..1"),
    (_set("outcome", 0, 4), "row 0: outcome 4 is outside -1..1"),
    (lambda a: a["agent"].__setitem__(3, 1 - a["agent"][3]),  # read as it stood
     "seat {s3} of match 0 is played by agents "),
    (lambda a: a["seat"].__setitem__(3, 1 - a["seat"][3]), "; a seat has one agent in a match"),
    (_set("hand", 0, -3), "row 0: hand -3 is outside"),
    (_set("points", 0, -5), "row 0: points -5 is outside"),
    (_set("match", 0, 2**62),  # was read as it stood: no match of a 2-match dataset
     "row 0: match 4611686018427387904 is outside 0..1 (the dataset holds 2 matches, from 0)"),
    (_set("match", 3, 2), "row 3: match 2 is outside 0..1 (the dataset holds 2 matches"),
    (_set("match", 0, -1), "row 0: match -1 is outside 0..1"),
    (lambda a: a.update(obs=a["obs"][:, :-1]),
     "obs is float32 ({n}, 233); it must be float32 (N, 234)"),
    (lambda a: a.update(obs=a["obs"].astype(np.float64)), "obs is float64"),
    (lambda a: a.update(mask=a["mask"].astype(np.int8)), "mask is int8"),
    (lambda a: a.update(action=a["action"][:-1]),
     "its arrays differ in length (obs {n}, mask {n}, action {n1}, seat {n},"),
    (lambda a: a.update(seat=a["seat"][:-1]), "action {n}, seat {n1}, agent {n},"),
    (lambda a: a.update(action=a["action"].reshape(-1, 1)),
     "action is int64 ({n}, 1); it must be int64 (N,)"),
    (lambda a: a.pop("outcome"), "not a decisions file: missing outcome"),
    (lambda a: a.update(agent=np.array([{"x": 1}], dtype=object)),
     "agent holds Python objects (a pickle, which is never loaded)"),
])  # fmt: skip
def test_bad_arrays_are_one_value_error_naming_the_file(ds, change, fragment):
    with np.load(ds / SHARD) as data:
        a0, n, s3 = int(data["action"][0]), len(data["action"]), int(data["seat"][3])
    change_arrays(ds, change)
    fragment = fragment.format(a0=a0, n=n, n1=n - 1, s3=s3)
    refused(ds, fragment, SHARD)


@pytest.mark.filterwarnings("ignore::agents.datasets.IncompleteDatasetWarning")
@pytest.mark.parametrize("name, match, fragment", [
    ("decisions-0000.npz", 2**62, "match 4611686018427387904 is outside 0..999 (the matches of "
                                  "records/records-0000.jsonl.gz)"),
    ("decisions-0002.npz", 5, "match 5 is outside 2000..2999 (the matches of "
                              "records/records-0002.jsonl.gz)"),
    ("decisions-99999999999999999999.npz", 0, "match 0 is outside 9223372036854775807.."),
])
def test_a_match_index_outside_its_shard_is_refused(ds, name, match, fragment):
    """An incomplete dataset may hold any of its schedule's matches, but a decisions file
    holds those of its records shard only (named alike), whatever dataset.json says."""
    change_info(ds, complete=False)
    change_arrays(ds, _set("match", 0, match))
    (ds / SHARD).rename(ds / DECISIONS_DIR / name)
    refused(ds, fragment, f"{DECISIONS_DIR}/{name}")


@pytest.mark.parametrize("name", ["decisions-0001.npz", "decisions-old.npz"])
def test_a_decisions_file_repeating_another_s_matches_is_refused(ds, name):
    """A copy of decisions-0000.npz as decisions-0001.npz in a 2-match dataset was "row 0:
    match 0 is outside 1000..1 (the dataset holds 2 matches, from 0)"."""
    shutil.copy(ds / SHARD, ds / DECISIONS_DIR / name)
    refused(ds, "it repeats the decisions of match 0 and 1 other, which decisions-0000.npz "
                "already holds; a match's decisions are in one file", f"{DECISIONS_DIR}/{name}")


def test_a_decisions_file_past_a_complete_dataset_s_matches_is_refused(ds):
    (ds / SHARD).rename(ds / DECISIONS_DIR / "decisions-0001.npz")
    refused(ds, "a dataset of 2 matches has no such file: it would hold matches 1,000..1,999 "
                "(the matches of records/records-0001.jsonl.gz)",
            f"{DECISIONS_DIR}/decisions-0001.npz")


def test_an_incomplete_dataset_may_hold_matches_beyond_its_count(ds):
    """Matches finished out of order (several workers) leave gaps in an interrupted
    dataset's indexes: 999 in a 2-match dataset is one of shard 0000's."""
    change_info(ds, complete=False)
    change_arrays(ds, lambda a: a["match"].__setitem__(a["match"] == 1, 999))
    with pytest.warns(IncompleteDatasetWarning):
        assert set(load_decisions(ds)["match"].tolist()) == {0, 999}


def test_an_incomplete_dataset_is_read_with_a_warning_saying_how_to_finish_it(ds, capsys):
    """A dataset whose make_dataset run was interrupted ("complete": false) loaded without a
    word, as if it were the whole schedule: it is read (what it holds is whole, and a rerun
    of make_dataset resumes it) with one warning naming it and how to finish it; train_ppo
    --bc-dataset says it in one line."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        complete = load_decisions(ds)  # a complete dataset: no warning
    change_info(ds, complete=False)
    with pytest.warns(IncompleteDatasetWarning) as caught:
        assert len(load_decisions(ds)["action"]) == len(complete["action"])
    assert [str(w.message) for w in caught] == [
        f"{ds} is incomplete: it holds 2 matches, not all its schedule's (python -m "
        "experiments.make_dataset or build_dataset was interrupted); run it again with the "
        f"same arguments and the output folder {ds} to finish it"]
    pytest.importorskip("torch")
    from agents.sb3_pretrain import bc_dataset_demonstrations
    from dominoes_env.core import RuleConfig

    assert len(bc_dataset_demonstrations(str(ds), None, RuleConfig(target_score=40))["actions"])
    assert capsys.readouterr().err == f"warning: --bc-dataset: {caught[0].message}\n"


@pytest.mark.parametrize("damage, fragment", [
    (lambda b: b[: len(b) // 2], "not a readable .npz file"),
    (lambda b: b"", "not a readable .npz file"),
    (lambda b: b"PK" + bytes(200), "not a readable .npz file"),
    (lambda b: np.lib.format.MAGIC_PREFIX + b[6:], "a single .npy array"),
])
def test_a_damaged_decisions_file_is_one_value_error(ds, damage, fragment):
    path = ds / SHARD
    path.write_bytes(damage(path.read_bytes()))
    refused(ds, fragment, SHARD)


def test_the_decision_count_must_be_what_dataset_json_says(ds):
    info = dataset_info(ds)
    change_info(ds, decisions=info["decisions"] + 1)
    with pytest.raises(ValueError, match=f"hold {info['decisions']:,} decisions; {INFO_FILE} "
                                         f"says {info['decisions'] + 1:,}"):
        load_decisions(ds)



def test_a_decisions_file_of_no_rows_is_read_as_no_decisions(ds):
    """A decisions file of no rows was refused by its mask check in numpy's words, "cannot
    reshape array of size 0 into shape (0,newaxis,4)", naming neither the file nor a
    problem. Read, it holds nothing: what dataset.json counts then tells whether the dataset
    lacks decisions."""
    info = dataset_info(ds)
    change_arrays(ds, lambda a: a.update({k: v[:0] for k, v in a.items()}))
    empty = read_decisions(ds / SHARD, info)
    assert all(len(v) == 0 for v in empty.values())
    assert empty["obs"].shape == (0, 234) and empty["mask"].shape == (0, 112)
    refused(ds, f"its {DECISIONS_DIR}/ hold 0 decisions; {INFO_FILE} says "
                f"{info['decisions']:,}", "")
    change_info(ds, matches=0, decisions=0, complete=False)
    with pytest.warns(IncompleteDatasetWarning):
        assert all(len(v) == 0 for v in load_decisions(ds).values())


def test_make_dataset_writes_a_records_shard_without_records_as_no_decisions(ds, capsys):
    """A records shard without records (as a resume leaves a shard holding none of the
    schedule's matches: it drops their records) ended the dataset in numpy's "need at least
    one array to concatenate", its decisions and dataset.json unwritten."""
    good = load_decisions(ds)
    (ds / RECORDS_DIR / shard_name(1000)).write_bytes(b"")
    for _ in range(2):  # written, then kept on the next resume
        assert main([*ARGS, "--out", str(ds)]) == 0
        assert "Traceback" not in capsys.readouterr().err
        with np.load(ds / DECISIONS_DIR / "decisions-0001.npz") as data:
            assert data["obs"].shape == (0, 234) and data["action"].dtype == np.int64
        again = load_decisions(ds)
        assert all(np.array_equal(good[k], again[k]) for k in good)


def _without_spinner(info):
    info["rules"].pop("spinner")


@pytest.mark.parametrize("change, fragment, where", [
    (_set("points", 0, 30000), "row 0: points 30000 is outside 0..48 (the most a play scores",
     SHARD),
    (_set("hand_margin", 0, 30000), "row 0: hand_margin 30000 is outside -1512..1512", SHARD),
    (_set("hand", 0, 5), "row 0: hand 5 is outside 0..4 (max_hands)", SHARD),
    ({"matches": 99999}, "hold the decisions of 2 matches; dataset.json says 99,999", ""),
    ({"agents": ["greedy", "random", "search"]},
     "lists the agent 'search', which made no decision in this complete dataset", ""),
    (_without_spinner, "rules lack spinner (a dataset's rules are written whole", INFO_FILE),
    ({"seed": float("nan")}, "seed=nan must be an integer", INFO_FILE),
    ({"seed": -1}, "seed=-1 is out of range", INFO_FILE),
    ({"max_hands": 0}, "max_hands must be an integer in 1..32,768, not 0", INFO_FILE),
])  # fmt: skip
def test_counts_and_bounds_are_checked_against_the_rules_and_the_files(ds, change, fragment,
                                                                       where):
    """``points`` 30000 in a game to 40, ``hand_margin`` 30000, ``matches`` 99999 for the
    files' 2, an agent listed that never played, rules without ``spinner`` (a default
    assumed), ``seed`` NaN and ``max_hands`` 0 all loaded."""
    change_info(ds, max_hands=5)
    if isinstance(change, dict):
        change_info(ds, **change)
    elif where == INFO_FILE:
        info = json.loads((ds / INFO_FILE).read_text())
        change(info)
        (ds / INFO_FILE).write_text(json.dumps(info))
    else:
        change_arrays(ds, change)
    refused(ds, fragment, where)

def test_read_decisions_reads_a_good_file_unchanged(ds):
    info = dataset_info(ds)
    with np.load(ds / SHARD) as data:
        want = {k: data[k] for k in data.files}
    got = read_decisions(ds / SHARD, info)
    assert all(np.array_equal(got[k], want[k]) for k in want)


def test_train_ppo_refuses_a_damaged_dataset_before_its_run_folder(ds, tmp_path, capsys):
    """``train_ppo --bc-dataset`` read the decisions after making the run folder: a damaged
    decisions file (a match index of 2**62, an action of 10^6) ended it in a traceback
    (status 1) beside config.json, pool/ and run.json."""
    pytest.importorskip("torch")
    from experiments.train_ppo import main as train_main

    change_arrays(ds, _set("match", 0, 2**62))
    out = tmp_path / "run"
    assert train_main(["--bc-dataset", str(ds), "--target-score", "40", "--total-steps", "64",
                       "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err == (f"error: --bc-dataset: {ds / SHARD}: row 0: match 4611686018427387904 is "
                   "outside 0..1 (the dataset holds 2 matches, from 0)\n")
    assert not out.exists()


# -- the command resumes a damaged dataset or stops in one line ---------------------------------
def test_make_dataset_writes_a_damaged_decisions_file_again(ds, capsys):
    good = load_decisions(ds)
    (ds / SHARD).write_bytes(b"PK not a zip")  # it was a BadZipFile traceback
    assert main([*ARGS, "--out", str(ds)]) == 0
    assert "Traceback" not in capsys.readouterr().err
    again = load_decisions(ds)
    assert all(np.array_equal(good[k], again[k]) for k in good)


def _other_legal_action(arrays):
    row = int(np.flatnonzero(arrays["mask"].sum(axis=1) > 1)[0])  # a decision with a choice
    legal = np.flatnonzero(arrays["mask"][row])
    arrays["action"][row] = legal[legal != arrays["action"][row]][0]


def _flip(key, where):
    """Flip one value of ``key`` (``(row, None)``: the row's first illegal action made legal,
    an action no check of the file alone can tell from a legal one)."""
    def change(arrays):
        row, col = where
        if col is None:
            col = int(np.flatnonzero(~arrays["mask"][row] & (
                arrays["obs"][row, :arrays["mask"].shape[1] // 4].repeat(4) > 0))[0])
        arrays[key][row, col] = 1 - arrays[key][row, col]
    return change


@pytest.mark.parametrize("damage, fragment", [
    (lambda a: a.update({k: v[:-5] for k, v in a.items()}), "decisions; its game record has"),
    (lambda a: a.update({k: np.concatenate([v, v[-5:]]) for k, v in a.items()}),
     "decisions; its game record has"),
    (_other_legal_action, ": action "),
    (_flip("obs", (5, 10)), "match 0, decision 5: obs[10] is "),
    (_flip("mask", (5, None)), "match 0, decision 5: mask["),
    (lambda a: a["seat"].__setitem__(slice(None), 1 - a["seat"]), "decision 0: seat "),
    (lambda a: a["agent"].__setitem__(slice(None), 1 - a["agent"]), "decision 0: agent "),
])  # fmt: skip
def test_make_dataset_writes_again_decisions_that_disagree_with_their_records(
        ds, capsys, damage, fragment):
    """Rows cut, repeated, an action changed, an observation bit flipped, an illegal action
    marked legal, seats or agents swapped, in a readable file for the same matches: the rerun
    kept it and called the dataset complete (429 or 439 decisions for 434; the changed
    observation and mask as they were)."""
    good = load_decisions(ds)
    change_arrays(ds, damage)
    assert main([*ARGS, "--out", str(ds)]) == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"warning: {SHARD}: match ") \
        and fragment in err and err.endswith("; written again from the game records\n"), err
    again = load_decisions(ds)
    assert all(np.array_equal(good[k], again[k]) for k in good)


def test_make_dataset_writes_again_a_decisions_file_no_position_has(ds, capsys):
    """Every mask all true: the rerun kept it without a word (and load_decisions read it)."""
    good = load_decisions(ds)
    change_arrays(ds, lambda a: a["mask"].__setitem__(slice(None), True))
    assert main([*ARGS, "--out", str(ds)]) == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"warning: {SHARD}: row 0: ") \
        and "legal actions" in err and err.endswith("; written again from the game records\n"), err
    again = load_decisions(ds)
    assert all(np.array_equal(good[k], again[k]) for k in good)


def test_make_dataset_repairs_its_records_on_resume(ds, capsys):
    good = load_decisions(ds)
    shard = ds / RECORDS_DIR / shard_name(0)
    records = list(iter_records(shard))
    records[0]["match"]["seed"] += 1  # disagrees with matches.jsonl
    shard.write_bytes(b"".join(encode_record(r) for r in [*records, records[1]]))
    (ds / SHARD).unlink()
    assert main([*ARGS, "--out", str(ds)]) == 0
    err = capsys.readouterr().err
    assert err.count("warning: records/records-0000.jsonl.gz: the record of match") == 2, err
    again = load_decisions(ds)
    assert all(np.array_equal(good[k], again[k]) for k in good)


def test_make_dataset_on_records_it_cannot_read_is_one_line(ds, capsys):
    shard = ds / RECORDS_DIR / shard_name(0)
    shard.unlink()
    shard.mkdir()  # a folder where the shard was
    assert main([*ARGS, "--out", str(ds)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("\n") == 1 and "records-0000" in err, err


def test_imitation_reads_the_rules_of_a_dataset_json_as_the_dataset_reader_does(ds):
    """``dataset_demonstrations`` read ``dataset.json`` a second time as plain UTF-8, so a
    file the dataset reader takes (UTF-16, with its byte-order mark) was refused there with
    a codec error."""
    from agents.imitation import dataset_demonstrations
    from dominoes_env.core import RuleConfig

    info = (ds / INFO_FILE).read_text()
    (ds / INFO_FILE).write_bytes(info.encode("utf-16"))
    assert dataset_info(ds)["rules"]["target_score"] == 40  # the reader takes it
    demos = dataset_demonstrations(ds, rules=RuleConfig(target_score=40))
    assert len(demos["actions"]) > 0
