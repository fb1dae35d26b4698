"""A hostile user's attacks that the by-construction tables (``tests/test_cli_attacks.py``,
``tests/test_reader_attacks.py``, ``tests/test_output_policy.py``) do not make: a folder that
holds another tool's ``run.json`` beside the user's files, ``-`` as an output file, an empty
path or a non-boolean switch given to the public API, an agent parameter given twice."""

from __future__ import annotations

import contextlib
import errno
import importlib
import json
import os
import re
import subprocess

import pytest

from dominoes_env.cli_support import (
    CommandError,
    check_output_file,
    check_run_folder,
    run_of_checkpoint,
)
from dominoes_env.core import MatchState, RuleConfig

pytestmark = pytest.mark.timeout(120)


# -- the output policy ----------------------------------------------------------------------------
@pytest.mark.parametrize("marker", ['{"name": "my other tool"}', "[1, 2", ""])
def test_overwrite_never_empties_a_folder_whose_run_json_is_no_runs(tmp_path, marker):
    """A ``run.json`` without a program (another tool's, or damaged) counted as a run's marker:
    ``--overwrite`` then removed every file beside it (the user's notes too), though a folder
    of foreign files is never emptied."""
    out = tmp_path / "project"
    out.mkdir()
    (out / "run.json").write_text(marker)
    (out / "notes.txt").write_text("precious")
    for overwrite in (False, True):
        with pytest.raises(ValueError, match=r"holds files that are not a run's \('notes.txt'[);]"):
            check_run_folder(out, "experiments.tournament", {}, overwrite=overwrite,
                             outputs=("matches.jsonl",), rerun_resumes=True)
    assert (out / "notes.txt").read_text() == "precious"


def test_overwrite_still_replaces_a_run_with_a_damaged_marker(tmp_path):
    """What the fix above keeps: a folder of the program's own outputs beside a damaged
    marker is still a run's, replaced by ``--overwrite``."""
    out = tmp_path / "run"
    out.mkdir()
    (out / "run.json").write_text("[1, 2")
    (out / "matches.jsonl").write_text("")
    folder = check_run_folder(out, "p", {}, overwrite=True, outputs=("matches.jsonl",))
    assert folder.replaces


def test_a_dash_output_is_refused_not_written_as_a_file_named_dash(tmp_path, monkeypatch):
    """``replay r.json --extract -`` and ``play --save -`` wrote a file named ``-`` in the
    working directory, where a user expects standard output."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(CommandError, match="not standard output"):
        check_output_file("-", "--extract")
    check_output_file("./-", "--extract")  # a file named '-' is still reachable


def test_replay_extract_to_dash_is_one_line_and_writes_nothing(tmp_path, monkeypatch, capsys):
    from dominoes_env.cli import main
    from dominoes_env.core.records import write_record

    from . import helpers

    write_record(helpers.random_match(RuleConfig(target_score=30), 1).to_record(),
                 tmp_path / "r.json")
    monkeypatch.chdir(tmp_path)
    assert main(["replay", "r.json", "--extract", "-"]) == 2
    err = capsys.readouterr().err
    assert [line for line in err.splitlines() if line] == [
        "error: --extract '-': this command writes a file, not standard output; name the file "
        "(./- for a file named '-')"]
    assert sorted(os.listdir(tmp_path)) == ["r.json"]


@pytest.mark.parametrize("name", ["out.jsonl.gz", "out.jsonl", "out.json"])
def test_replay_extract_writes_the_format_its_name_says(tmp_path, capsys, name):
    """``replay r.json --extract out.jsonl.gz`` wrote plain JSON under a gzip shard's name,
    which replay then refused ("not a gzip file of records")."""
    from dominoes_env.cli import main
    from dominoes_env.core.records import load_record, write_record
    from dominoes_env.record_io import read_record

    from . import helpers

    record = helpers.random_match(RuleConfig(target_score=30), 1).to_record()
    write_record(record, tmp_path / "r.json")
    assert main(["replay", str(tmp_path / "r.json"), "--extract", str(tmp_path / name)]) == 0
    assert read_record(tmp_path / name) == load_record(tmp_path / "r.json")
    capsys.readouterr()
    assert main(["replay", str(tmp_path / name)]) == 0


@pytest.mark.parametrize("name", ["out.json.gz", "out.gz"])
def test_a_record_output_named_as_another_gzip_is_refused(tmp_path, capsys, name):
    """The name says gzip, the record would be JSON text: one line, nothing written, from
    replay --extract, play --save (before the match) and write_record."""
    from dominoes_env.cli import main
    from dominoes_env.core.records import write_record

    from . import helpers

    record = helpers.random_match(RuleConfig(target_score=30), 1).to_record()
    write_record(record, tmp_path / "r.json")
    for argv in (["replay", str(tmp_path / "r.json"), "--extract", str(tmp_path / name)],
                 ["play", "--opponents", "random", "--seed", "1", "--save", str(tmp_path / name)]):
        assert main(argv) == 2
        err = [line for line in capsys.readouterr().err.splitlines() if line]
        assert len(err) == 1 and "not another .gz" in err[0], err
    with pytest.raises(ValueError, match="not another .gz"):
        write_record(record, tmp_path / name)
    assert sorted(os.listdir(tmp_path)) == ["r.json"]


def test_play_save_to_a_gzip_shard_name_finds_a_free_shard_name(tmp_path):
    """A file that appeared at a ``.jsonl.gz`` --save path during the match: the record goes
    beside it as ``NAME-1.jsonl.gz`` (not ``NAME.jsonl-1.gz``, a name no reader takes)."""
    from dominoes_env.play import save_record
    from dominoes_env.record_io import read_record

    from . import helpers

    record = helpers.random_match(RuleConfig(target_score=30), 1).to_record()
    (tmp_path / "g.jsonl.gz").write_bytes(b"someone else's")
    written = save_record(record, str(tmp_path / "g.jsonl.gz"), overwrite=False)
    assert written == str(tmp_path / "g-1.jsonl.gz")
    assert read_record(written) == record


# -- the public API ------------------------------------------------------------------------------
def test_run_tournament_with_an_empty_out_writes_nothing_in_the_working_directory(
        tmp_path, monkeypatch):
    """``run_tournament(config, "")``: ``Path("")`` is ``.``, so the results went among the
    files of the working directory."""
    from agents.tournament import TournamentConfig
    from agents.tournament.runner import run_tournament

    monkeypatch.chdir(tmp_path)
    config = TournamentConfig(["random", "greedy"], RuleConfig(target_score=20), matches=2)
    for out in ("", "  "):
        with pytest.raises(ValueError, match="out=.* is empty"):
            run_tournament(config, out, progress=False)
    with pytest.raises(TypeError, match="must be a path"):
        run_tournament(config, None, progress=False)
    assert os.listdir(tmp_path) == []


def test_build_dataset_and_run_card_refuse_an_empty_out(tmp_path, monkeypatch):
    from agents.benchmark.run import run_card
    from agents.benchmark.tables import BenchmarkConfig
    from agents.datasets import build_dataset
    from agents.tournament import TournamentConfig

    monkeypatch.chdir(tmp_path)
    config = TournamentConfig(["random", "greedy"], RuleConfig(target_score=20), matches=2)
    with pytest.raises(ValueError, match="out='' is empty"):
        build_dataset(config, "", progress=False)
    with pytest.raises(ValueError, match="out='' is empty"):
        run_card(BenchmarkConfig("greedy", ["random"], ["2p"], matches=2), "", progress=False,
                 overwrite=True)
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("name", ["progress", "save_records"])
@pytest.mark.parametrize("value", ["no", 1, None])
def test_run_tournament_switches_are_booleans(tmp_path, name, value):
    """``save_records="no"`` kept the records (a non-empty string is true)."""
    from agents.tournament import TournamentConfig
    from agents.tournament.runner import run_tournament

    config = TournamentConfig(["random", "greedy"], RuleConfig(target_score=20), matches=2)
    kwargs = {"progress": False, name: value}
    with pytest.raises(TypeError, match=f"{name}=.* must be true or false"):
        run_tournament(config, tmp_path / "out", **kwargs)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("spec, key", [("search:sims=4,sims=400", "sims"),
                                       ("ppo:a.npz,path=b.npz", "path")])
def test_an_agent_parameter_given_twice_is_refused(spec, key):
    """The last one won without a word: ``search:sims=4,sims=400`` played 400 simulations."""
    from agents.specs import make_agent

    with pytest.raises(ValueError, match=f"gives '{key}' twice"):
        make_agent(spec)


def test_a_tournament_with_a_parameter_given_twice_is_one_line(tmp_path, capsys):
    from experiments.tournament.cli import main

    status = main(["--agents", "search:sims=4,sims=400", "greedy", "--matches", "2",
                   "--out", str(tmp_path / "out"), "--quiet", "--no-plots"])
    err = capsys.readouterr().err
    assert status == 2 and "Traceback" not in err
    assert [line for line in err.splitlines() if line.startswith("error:")] == [
        "error: agent spec 'search:sims=4,sims=400' gives 'sims' twice; give it once"]
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("rules", [None, "2p", {"num_players": 2}])
def test_check_spec_needs_rules(rules):
    """``check_spec("ppo", None)`` passed: the policy's table was never checked."""
    from agents.specs import check_spec

    with pytest.raises(TypeError, match="rules must be a RuleConfig"):
        check_spec("greedy", rules)


def _write_api_record(path, **kwargs):
    from dominoes_env.core.records import write_record

    write_record(MatchState(RuleConfig(), seed=1).to_record(), path, **kwargs)


def _write_api_policy(path, **kwargs):
    from agents.ppo import random_policy_npz

    random_policy_npz(path, RuleConfig(), hidden=(4,), **kwargs)


@pytest.mark.parametrize("write", [_write_api_record, _write_api_policy])
def test_the_api_writers_replace_no_link_device_fifo_or_folder(tmp_path, write):
    """``random_policy_npz('/dev/full', ...)`` (as root) and ``write_record(rec, 'mydev')``
    replaced the device node with a regular file, a FIFO likewise, a symbolic link by the file
    (its target left as it was); a folder was a bare IsADirectoryError. Each is a ValueError
    naming the path now, before anything is written; ``overwrite=False`` keeps a file."""
    target = tmp_path / "target.json"
    target.write_text("kept")
    (tmp_path / "lnk").symlink_to(target)
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "dir").mkdir()
    for name, kind in (("lnk", "is a symbolic link"), ("fifo", "is a FIFO"),
                       ("dir", "is a folder")):
        with pytest.raises(ValueError, match=f"^path '.*{name}' {kind}; name "):
            write(tmp_path / name)
    with pytest.raises(ValueError, match="^path '/dev/null' is a character device"):
        write("/dev/null")
    with pytest.raises(FileExistsError, match="pass overwrite=True to replace it"):
        write(target, overwrite=False)
    assert (tmp_path / "lnk").is_symlink() and target.read_text() == "kept"
    assert (tmp_path / "fifo").is_fifo() and os.path.exists("/dev/null")
    assert sorted(os.listdir(tmp_path)) == ["dir", "fifo", "lnk", "target.json"]
    write(tmp_path / "new")  # a new file, and an existing one replaced (the default)
    write(target)
    assert target.read_bytes() != b"kept"


def _a_card() -> dict:
    from agents.benchmark import CARD_KEYS, SCHEMA, SCHEMA_VERSION

    return {**dict.fromkeys(CARD_KEYS), "schema": SCHEMA, "schema_version": SCHEMA_VERSION,
            "tables": []}


_SUMMARY = {"format": "head_to_head", "agents": ["a", "b"],
            "pairs": [{"a": "a", "b": "b", "a_win_rate": 0.5}],
            "ratings": {"a": {"mu": 25.0, "ci95": [20.0, 30.0]},
                        "b": {"mu": 24.0, "ci95": [19.0, 29.0]}}}


def _write_heatmap(path, **kwargs):
    from agents.tournament.report import plot_heatmap

    plot_heatmap(_SUMMARY, path, **kwargs)


def _write_ratings(path, **kwargs):
    from agents.tournament.report import plot_ratings

    plot_ratings(_SUMMARY, path, **kwargs)


def _write_card(path, **kwargs):
    from agents.benchmark import write_card

    write_card(_a_card(), path, **kwargs)


@pytest.mark.parametrize("write", [_write_heatmap, _write_ratings, _write_card])
def test_the_report_and_card_writers_replace_no_link_device_fifo_or_folder(tmp_path, write):
    """``plot_heatmap(summary, 'mydev')``, ``plot_ratings`` and ``write_card`` (through
    ``save_figure`` and ``atomic_write``, without the output policy the other writers follow)
    replaced a device node (as root), a FIFO and a symbolic link with a regular file. Each is
    a ValueError naming the path now, before anything is written; ``overwrite=False`` keeps a
    file."""
    pytest.importorskip("matplotlib")
    target = tmp_path / "target.png"
    target.write_text("kept")
    (tmp_path / "lnk.png").symlink_to(target)
    os.mkfifo(tmp_path / "fifo.png")
    (tmp_path / "dir.png").mkdir()
    odd = [("lnk.png", "is a symbolic link"), ("fifo.png", "is a FIFO"),
           ("dir.png", "is a folder")]
    if os.geteuid() == 0:  # a node of /dev/null's numbers, made here: never a real device
        import stat

        os.mknod(tmp_path / "dev.png", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        odd.append(("dev.png", "is a character device"))
    for name, kind in odd:
        with pytest.raises(ValueError, match=f"^path '.*{name}' {kind}; name "):
            write(tmp_path / name)
    with pytest.raises(FileExistsError, match="pass overwrite=True to replace it"):
        write(target, overwrite=False)
    assert (tmp_path / "lnk.png").is_symlink() and target.read_text() == "kept"
    assert (tmp_path / "fifo.png").is_fifo() and (tmp_path / "dir.png").is_dir()
    assert os.geteuid() != 0 or (tmp_path / "dev.png").is_char_device()
    assert sorted(os.listdir(tmp_path)) == sorted([name for name, _ in odd] + ["target.png"])
    write(tmp_path / "new.png")  # a new file, and an existing one replaced (the default)
    write(target)
    assert target.read_bytes() != b"kept"


def test_write_summary_replaces_no_link_in_the_folder(tmp_path):
    """``write_summary(s, 'wsdir')`` with ``wsdir/summary.json`` a symbolic link replaced the
    link with the file in silence."""
    from agents.tournament.report import write_summary

    (tmp_path / "elsewhere.json").write_text("kept")
    (tmp_path / "summary.json").symlink_to(tmp_path / "elsewhere.json")
    with pytest.raises(ValueError, match="summary '.*summary.json' is a symbolic link"):
        write_summary(_SUMMARY, tmp_path)
    assert (tmp_path / "summary.json").is_symlink()
    assert (tmp_path / "elsewhere.json").read_text() == "kept"
    (tmp_path / "summary.json").unlink()
    assert json.loads(write_summary(_SUMMARY, tmp_path).read_text()) == _SUMMARY


@pytest.mark.parametrize(("card", "error", "message"), [
    ({}, ValueError, "card is not a benchmark card: keys missing: 'schema'"),
    ({"x": float("nan")}, ValueError, "card is not a benchmark card: keys missing"),
    ({**_a_card(), "wall_s": float("nan")}, ValueError, "card is not JSON"),
    ({**_a_card(), "schema": "mine"}, ValueError, "schema 'mine' version 1, not "),
    ({**_a_card(), "tables": [{"cells": []}]}, ValueError, "table 0 is not a dict of the keys"),
    ([1], TypeError, "card must be a benchmark card"),
])
def test_write_card_writes_only_a_card(tmp_path, card, error, message):
    """``write_card({}, 'one_backup.json')`` replaced a game record with ``{}`` without a word,
    and ``write_card({'x': nan}, ...)`` wrote ``{"x": NaN}``, which is no JSON."""
    from agents.benchmark import write_card

    (tmp_path / "one_backup.json").write_text("the user's record")
    with pytest.raises(error, match=message):
        write_card(card, tmp_path / "one_backup.json")
    assert (tmp_path / "one_backup.json").read_text() == "the user's record"
    assert os.listdir(tmp_path) == ["one_backup.json"]


# -- replay ---------------------------------------------------------------------------------------
@pytest.fixture
def record_file(tmp_path):
    from dominoes_env.core.records import write_record

    from . import helpers

    write_record(helpers.random_match(RuleConfig(target_score=30), 1).to_record(),
                 tmp_path / "r.json")
    return tmp_path / "r.json"


@pytest.mark.parametrize("extra", [[], ["--extract", "{tmp}/seat1.json"]])
def test_replay_seat_without_a_view_is_refused(record_file, capsys, extra):
    """``replay r.json --seat 1 --extract seat1.json`` wrote every seat's tiles (and the JSON
    output showed them too): a user sharing seat 1's view shared the whole deal."""
    from dominoes_env.cli import main

    argv = [a.replace("{tmp}", str(record_file.parent)) for a in extra]
    assert main(["replay", str(record_file), "--seat", "1", *argv]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == ("error: --seat shows a seat's view with --steps or --html; "
                                 "the JSON output and --extract hold every seat's tiles\n")
    assert sorted(os.listdir(record_file.parent)) == ["r.json"]
    assert main(["replay", str(record_file), "--seat", "1", "--steps"]) == 0  # still a view


def test_replay_of_a_file_that_is_no_record_names_the_file(tmp_path, capsys):
    """``replay run.json`` (a tournament's run marker) said only "the record lacks the field
    'rules'", without naming which file."""
    from dominoes_env.cli import main

    (tmp_path / "run.json").write_text('{"program": "experiments.tournament"}')
    assert main(["replay", str(tmp_path / "run.json")]) == 2
    assert capsys.readouterr().err == (
        f"error: {str(tmp_path / 'run.json')!r}: the record lacks the field 'rules'\n")


# -- files that are not what they seem -----------------------------------------------------------
@pytest.fixture
def demos(tmp_path):
    """A small valid demonstrations file of expert_iteration (greedy's decisions)."""
    import numpy as np

    from agents.demos import DEMO_KEYS, save_demos

    rules = RuleConfig()
    from dominoes_env.obs import observation_spec

    layout = observation_spec(2).layout(rules)
    obs = np.zeros((4, layout.size), np.float32)
    obs[:, layout.hand.start] = 1  # tile 0 in hand: its plays are the legal ones
    masks = np.zeros((4, rules.num_tiles * 4), bool)
    masks[:, 0] = True
    data = dict(zip(DEMO_KEYS, [obs, masks, np.zeros(4, np.int64), np.zeros(4, np.float32)],
                    strict=True))
    save_demos(tmp_path / "demos.npz", data, {"teacher": "greedy", "opponents": ["greedy"],
                                              "matches": 1, "seed": 0, "rules": rules.to_dict()})
    return tmp_path / "demos.npz"


@pytest.mark.parametrize("damage", ["fifo", "huge header"])
def test_expert_iteration_data_that_is_a_fifo_or_declares_a_terabyte(demos, damage):
    """``--data FIFO`` waited for a writer for ever; an array declaring a terabyte was a
    MemoryError traceback (``np.load`` straight, not the shared capped reader)."""
    import signal

    from agents.demos import load_demos

    from . import helpers

    if damage == "fifo":
        demos.unlink()
        os.mkfifo(demos)
    else:
        helpers.with_a_huge_array_header(demos, "obs")

    def hung(signum, frame):
        raise AssertionError("load_demos still reading after 30 s")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(30)
    try:
        with pytest.raises(ValueError, match=f"--data {str(demos)!r} is not a demonstrations "
                                             "file"):
            load_demos(str(demos), RuleConfig())
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def test_expert_iteration_reads_its_own_demonstrations(demos):
    from agents.demos import load_demos

    data, teacher = load_demos(str(demos), RuleConfig())
    assert teacher == "greedy" and data["obs"].shape[0] == 4


@pytest.mark.parametrize("name", ["config.json", "matches.jsonl"])
@pytest.mark.parametrize("odd", ["fifo", "link to /dev/zero", "link to a file"])
def test_a_tournament_folder_holding_a_fifo_or_a_link_is_refused(tmp_path, capsys, name, odd):
    """A resumed tournament whose config.json or matches.jsonl was a FIFO waited for ever; a
    link to /dev/zero read until the memory ran out (the kernel killed it); a link to another
    file would have been cut at its last newline and appended to."""
    from agents.tournament import TournamentConfig
    from agents.tournament.runner import run_tournament
    from experiments.tournament.cli import main

    argv = ["--agents", "random", "greedy", "--matches", "2", "--target-score", "20",
            "--quiet", "--no-plots", "--out", str(tmp_path / "run")]
    assert main(argv) == 0
    capsys.readouterr()
    target = tmp_path / "run" / name
    other = tmp_path / "other.txt"
    other.write_text("keep\\nme")
    target.unlink()
    {"fifo": lambda: os.mkfifo(target), "link to /dev/zero": lambda: target.symlink_to(
        "/dev/zero"), "link to a file": lambda: target.symlink_to(other)}[odd]()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and "Traceback" not in err, err
    kind = "a FIFO" if odd == "fifo" else "a symbolic link"
    assert f"holds {name!r}, which is {kind}, not a regular file or folder" in err
    config = TournamentConfig(["random", "greedy"], RuleConfig(target_score=20), matches=2)
    with pytest.raises(ValueError, match=f"is {kind}, not a regular file"):
        run_tournament(config, tmp_path / "run", progress=False)
    assert other.read_text() == "keep\\nme"


@pytest.mark.parametrize("odd", ["fifo", "link to /dev/zero"])
def test_train_rllib_resume_folder_whose_metadata_is_a_fifo_is_refused(tmp_path, odd):
    """``train_rllib --resume CK`` read ``CK/metadata.json`` with ``read_text()``: a FIFO
    blocked it for ever, a link to /dev/zero read until the memory ran out."""
    from experiments.train_rllib import RllibConfig, check_run

    (tmp_path / "ck").mkdir()
    meta = tmp_path / "ck" / "metadata.json"
    os.mkfifo(meta) if odd == "fifo" else meta.symlink_to("/dev/zero")
    kind = "a FIFO" if odd == "fifo" else "a symbolic link"
    with pytest.raises(ValueError, match=rf"not an RLlib checkpoint folder \(metadata.json: it "
                                         rf"is {kind}, not a regular file\)"):
        check_run(RllibConfig(out=str(tmp_path / "out"), resume=str(tmp_path / "ck")))
    assert not (tmp_path / "out").exists()


# -- the environment a program runs in -----------------------------------------------------------
@pytest.mark.parametrize("program", ["replay", "tournament"])
def test_an_output_that_cannot_encode_the_pictures_is_no_traceback(tmp_path, record_file,
                                                                   program):
    """With ``PYTHONIOENCODING=ascii`` (an ASCII or cp1252 terminal) the pictures' ``·`` and the
    tables' ``±`` ended ``replay --steps``, ``play`` and the tournament in a
    ``UnicodeEncodeError`` traceback; they are shown as ``?``."""
    import subprocess
    import sys

    from . import helpers

    argv = {"replay": ["dominoes_env", "replay", str(record_file), "--steps"],
            "tournament": ["experiments.tournament", "--agents", "random", "greedy",
                           "--matches", "2", "--target-score", "20", "--quiet", "--no-plots",
                           "--out", str(tmp_path / "out")]}[program]
    env = {**os.environ, "PYTHONIOENCODING": "ascii", "PYTHONPATH": str(helpers.ROOT)}
    proc = subprocess.run([sys.executable, "-m", *argv], capture_output=True, env=env,
                          timeout=helpers.CHILD_TIMEOUT_S, cwd=tmp_path)
    assert proc.returncode == 0 and b"Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert b"?" in proc.stdout


@pytest.mark.parametrize("program", ["play", "replay", "tournament"])
def test_the_c_locale_shows_the_pictures_as_question_marks(tmp_path, record_file, program):
    """In the C locale Python writes standard output as ASCII with ``surrogateescape``, which
    the runner left as it was (it switched only ``strict``): ``play`` ended in a
    ``UnicodeEncodeError`` traceback at the table's ``·``, and ``replay --steps`` and the
    tournament lost their output and said, wrongly, that standard output was closed."""
    import subprocess
    import sys

    from . import helpers

    argv = {"play": ["dominoes_env", "play", "--opponents", "random", "--seed", "1"],
            "replay": ["dominoes_env", "replay", str(record_file), "--steps"],
            "tournament": ["experiments.tournament", "--agents", "random", "greedy",
                           "--matches", "2", "--target-score", "20", "--workers", "1",
                           "--no-plots", "--out", str(tmp_path / "out")]}[program]
    env = {**os.environ, "LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0",
           "PYTHONPATH": str(helpers.ROOT)}
    env.pop("PYTHONIOENCODING", None)
    proc = subprocess.run([sys.executable, "-m", *argv], capture_output=True, env=env,
                          input=b"1\nq\n", timeout=helpers.CHILD_TIMEOUT_S, cwd=tmp_path)
    assert proc.returncode == 0 and b"Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert b"error:" not in proc.stderr
    assert b"?" in proc.stdout


def test_an_output_that_keeps_file_names_bytes_keeps_them_and_replaces_the_rest():
    """``surrogateescape`` (the C locale's) is kept for what it writes, a file name's bytes
    that are not text; only what it cannot write becomes ``?``."""
    import io
    import sys

    from dominoes_env.cli_support import run_command

    def command() -> int:
        print("a\xb7b", os.fsdecode(b"x\xffy"))
        return 0

    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="ascii", errors="surrogateescape")
    before = sys.stdout
    sys.stdout = stream
    try:
        assert run_command(command, quiet_stdout=False) == 0
        stream.flush()
    finally:
        sys.stdout = before
    assert raw.getvalue() == b"a?b x\xffy\n"


def test_an_encoding_failure_is_not_said_to_be_a_closed_output():
    """A ``UnicodeEncodeError`` is a ``ValueError``, as a closed file's write is: a standard
    output that could not encode a character was reported as closed."""
    from dominoes_env.cli_support.runner import QuietStream, lost_output_message

    class Ascii:
        def write(self, text):
            return len(text.encode("ascii"))

    out = QuietStream(Ascii())
    out.write("a\xb7b")
    assert out.failed
    message = lost_output_message(out)
    assert "closed" not in message and "(ascii) cannot write '\xb7'" in message


# -- long names -----------------------------------------------------------------------------------
def test_a_file_whose_name_fits_is_written_even_when_long(tmp_path):
    """A name of 240 characters fits the file system (255), but ``atomic_write``'s temporary
    file beside it (``.NAME-tmp-PID-XXXXXXXX.tmp``) did not: every write of it failed with
    "File name too long"."""
    from dominoes_env.core.atomic_files import atomic_write, remove_stale_temporaries

    path = tmp_path / ("x" * 240 + ".html")
    with atomic_write(path) as f:
        f.write("page")
        (temporary,) = os.listdir(tmp_path)  # the write's own, beside the file
    assert path.read_text() == "page" and os.listdir(tmp_path) == [path.name]
    # a killed writer's temporary file of this name is still found and removed
    writer = f"-tmp-{os.getpid()}-"
    assert writer in temporary
    stale = tmp_path / temporary.replace(writer, "-tmp-999999999-", 1)
    assert len(stale.name.encode()) <= 255
    stale.write_text("half")
    assert remove_stale_temporaries(path) == [stale.name]


def test_play_refuses_a_save_name_too_long_before_the_match(tmp_path, capsys):
    """``play --save NAME`` with a name longer than the file system allows was found only
    after the match, played by hand, when the record could not be written."""
    from dominoes_env.cli import main

    save = tmp_path / ("z" * 256)
    assert main(["play", "--opponents", "random", "--seed", "1", "--save", str(save)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("error: --save ") and err.count("\n") == 1
    assert "its name is 256 bytes; this file system allows 255" in err
    assert os.listdir(tmp_path) == []


# -- text that a report's libraries read as markup ------------------------------------------------
def test_agent_specs_with_rich_markup_or_mathtext_are_shown_as_written(tmp_path, capsys):
    """A policy path with brackets (``ppo:.../[/]p.npz``) ended the tournament's report in a
    rich MarkupError traceback and ``[red]`` vanished from the names shown; one with ``$...$``
    ended the plots in a matplotlib ParseFatalException traceback, after the matches."""
    pytest.importorskip("matplotlib")
    pytest.importorskip("rich")
    from agents.ppo import random_policy_npz
    from experiments.tournament.cli import main

    (tmp_path / "[").mkdir()
    markup = tmp_path / "[" / "]p.npz"  # its spec reads ppo:.../[/]p.npz
    coloured = tmp_path / "[red]q.npz"
    maths = tmp_path / "a$\\foo$.npz"
    for seed, path in enumerate((markup, coloured, maths)):  # three policies, not one thrice
        random_policy_npz(path, RuleConfig(), hidden=(8,), seed=seed)
    specs = [f"ppo:{path}" for path in (markup, coloured, maths)]
    out = tmp_path / "out"
    status = main(["--agents", *specs, "--matches", "2", "--target-score", "20", "--quiet",
                   "--out", str(out)])
    stdout, err = capsys.readouterr()
    assert status == 0 and "Traceback" not in err, err[-2000:]
    assert "[/]p.npz" in stdout and "[red]q.npz" in stdout
    assert (out / "winrate_heatmap.png").stat().st_size and (out / "ratings.png").stat().st_size


# -- a second stop while the first is being handled ----------------------------------------------
def test_a_second_sigterm_while_saving_does_not_cut_the_save(capsys):
    """``make_dataset`` sent SIGTERM twice (a service manager, a user's ``kill`` repeated)
    ended in a ``Stopped`` traceback (status 1): the second signal raised again inside the
    first one's saving or inside the runner's report of it."""
    import signal
    import time

    from dominoes_env.cli_support import Stopped, run_command

    saved = []
    before, before_term = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)

    def body() -> int:
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
        except Stopped:
            os.kill(os.getpid(), signal.SIGTERM)  # the second one, while the work is saved
            saved.append("work")
            raise
        return 0

    assert run_command(body) == 143
    assert saved == ["work"]
    assert capsys.readouterr().err == "error: stopped by SIGTERM\n"
    assert signal.getsignal(signal.SIGINT) is before  # Ctrl-C as before once it returned
    assert signal.getsignal(signal.SIGTERM) is before_term


# -- a stop that surfaces as another exception ---------------------------------------------------
@pytest.mark.parametrize("signame, status, line", [
    ("SIGINT", 130, "error: interrupted\n"),
    ("SIGTERM", 143, "error: stopped by SIGTERM\n"),
])
@pytest.mark.parametrize("chained", [True, False])
def test_a_stop_that_a_library_turns_into_another_exception_is_the_stop(
        capsys, signame, status, line, chained):
    """``bench_jax`` interrupted while XLA compiled ended once in a JAX-filtered traceback,
    status 1 (a fresh clone's suite): the Ctrl-C was raised inside code that turned it into
    another exception. After a stop signal, an exception that is not a command's own error is
    the stop's doing: one line and the stop's status, with or without the interruption kept in
    the exception's chain."""
    import signal
    import time

    from dominoes_env.cli_support import run_command

    def body() -> int:
        try:
            os.kill(os.getpid(), getattr(signal, signame))
            time.sleep(5)
        except KeyboardInterrupt as stop:
            if chained:
                raise SystemError("returned a result with an exception set") from stop
        raise RuntimeError("the library's own words for it")

    # a Ctrl-C reaches Python as KeyboardInterrupt, as in a terminal: the suite's worker may
    # have inherited another SIGINT handler (a suite started in the background inherits SIGINT
    # ignored), and the kill then did nothing
    was = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        assert run_command(body) == status
    finally:
        signal.signal(signal.SIGINT, was)
    assert capsys.readouterr().err == line


def test_an_exception_with_no_stop_signal_is_not_taken_for_one():
    """An exception that carries a ``KeyboardInterrupt`` no signal sent (an agent raised it
    itself) stays the error it is."""
    from dominoes_env.cli_support import run_command

    def body() -> int:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as stop:
            raise ValueError("a bug") from stop

    with pytest.raises(ValueError, match="a bug"):
        run_command(body)


# -- a policy file that is valid but not what it says --------------------------------------------
@pytest.mark.parametrize("change, extra", [({"num_layers": 1}, "'b1', 'w1'"),
                                           ({"w9": [0.0]}, "'w9'")])
def test_a_policy_with_layers_it_does_not_use_is_refused(tmp_path, change, extra):
    """``num_layers=1`` in a file that holds ``w1``/``b1`` chained (a 256-wide layer fits the
    head) and played a network that was never trained, silently; an unknown array was ignored."""
    import numpy as np

    from agents.ppo import PPOAgent, random_policy_npz

    path = tmp_path / "p.npz"
    random_policy_npz(path, RuleConfig(), hidden=(8, 8))
    arrays = dict(np.load(path))
    arrays.update({key: np.array(value) for key, value in change.items()})
    with open(path, "wb") as f:
        np.savez(f, **arrays)
    with pytest.raises(ValueError, match=f"holds {extra}, which a policy of num_layers="):
        PPOAgent(str(path))


# -- train_ppo's opponent mix ---------------------------------------------------------------------
@pytest.mark.parametrize("mix, fragment", [
    (["random=1", "random=2"], "opponent 'random' is given twice"),
    (["greedy=1", "self=0.5", "self=0.5"], "opponent 'self' is given twice"),
    (["random=1e308", "greedy=1e308"], "the opponent weights add up to more than a float holds"),
])
def test_train_ppo_opponent_mix_given_twice_or_overflowing(mix, fragment):
    """``--opponents random=1 random=2`` was taken without a word; weights whose total
    overflows to inf started the run, whose environments then died in tracebacks ("Total of
    weights must be finite") and a ConnectionResetError."""
    pytest.importorskip("sb3_contrib")
    from experiments.train_ppo import TrainConfig

    with pytest.raises(ValueError, match=fragment):
        TrainConfig(opponents=mix).opponent_mix()


@pytest.mark.jax
def test_train_jax_opponent_mix_that_overflows_is_refused():
    """``--opp-greedy 1e308 --opp-random 1e308``: their total is inf, every share 0; the run
    started and trained on that mix with only numpy's overflow warning."""
    pytest.importorskip("jax")
    from experiments.train_jax import Config

    with pytest.raises(ValueError, match="weights add up to more than a float holds"):
        Config(opp_greedy=1e308, opp_random=1e308)


@pytest.mark.parametrize("opponent", ["ppo:{p}", "guided:policy={p}"])
def test_play_never_saves_over_an_opponents_policy(tmp_path, monkeypatch, capsys, opponent):
    """``play --opponents ppo:p.npz --save p.npz --overwrite`` replaced the policy it played
    with the match's JSON record: an output that is an input is refused, ``--overwrite`` or
    not (the shipped policies' folder too)."""
    from agents.ppo import random_policy_npz
    from dominoes_env.cli import main

    monkeypatch.chdir(tmp_path)
    random_policy_npz(tmp_path / "p.npz", RuleConfig(), hidden=(8,))
    before = (tmp_path / "p.npz").read_bytes()
    spec = opponent.format(p="p.npz")
    assert main(["play", "--opponents", spec, "--seed", "1", "--save", "p.npz",
                 "--overwrite"]) == 2
    assert capsys.readouterr().err == ("error: --save 'p.npz' is an input of this command; "
                                       "write elsewhere\n")
    assert (tmp_path / "p.npz").read_bytes() == before
    import agents

    shipped = os.path.join(os.path.dirname(agents.__file__), "policies", "ppo_2p.npz")
    assert main(["play", "--opponents", "ppo", "--seed", "1", "--save", shipped,
                 "--overwrite"]) == 2
    assert "is an input of this command" in capsys.readouterr().err


def test_python_m_dominoes_env_cli_runs_the_command():
    """``python -m dominoes_env.cli replay`` (the module the help names) did nothing and ended
    with status 0: a typo'd command line passed as if it had worked."""
    import subprocess
    import sys

    from . import helpers

    proc = subprocess.run([sys.executable, "-m", "dominoes_env.cli", "replay"],
                          capture_output=True, text=True, timeout=helpers.CHILD_TIMEOUT_S,
                          env={**os.environ, "PYTHONPATH": str(helpers.ROOT)})
    assert proc.returncode == 2 and proc.stderr.startswith("error: "), proc
    assert "the following arguments are required: file" in proc.stderr


# -- two runs into one folder at once -------------------------------------------------------------
@contextlib.contextmanager
def _run_of_another_process(out):
    """A run of program ``p`` started in ``out`` by another process, which holds its folder
    (its run lock) until the block ends."""
    import sys

    from . import helpers

    code = ("import sys, time; from dominoes_env.cli_support import check_run_folder, "
            "start_run_folder\n"
            "start_run_folder(check_run_folder(sys.argv[1], 'p', {}))\n"
            "print('started', flush=True); time.sleep(60)")
    holder = subprocess.Popen([sys.executable, "-c", code, str(out)], stdout=subprocess.PIPE,
                              text=True, env={**os.environ, "PYTHONPATH": str(helpers.ROOT)})
    try:
        assert holder.stdout.readline() == "started\n"
        yield holder
    finally:
        holder.kill()
        holder.wait()


def test_a_run_folder_in_use_by_another_process_is_refused(tmp_path, capsys):
    """``train_jax --resume A/checkpoint.npz`` started twice at once (or an ``--overwrite`` of
    a run still going) was accepted: both wrote the same checkpoint, policy and eval.csv, or
    the second emptied the first's folder under it. The folder is locked while a run writes
    into it."""
    import time

    from dominoes_env.cli_support import check_run_folder, start_run_folder

    out = tmp_path / "run"
    with _run_of_another_process(out):
        (out / "ckpt.npz").write_text("the other run's")
        for overwrite in (False, True):
            folder = check_run_folder(out, "p", {}, resume=out / "ckpt.npz",
                                      overwrite=overwrite)
            with pytest.raises(ValueError, match="is being written by another run"):
                start_run_folder(folder)
        assert (out / "ckpt.npz").read_text() == "the other run's"
    time.sleep(0.1)
    start_run_folder(check_run_folder(out, "p", {}, overwrite=True))  # free once it ended
    assert sorted(os.listdir(out)) == ["run.json"]


def test_a_run_folder_another_run_is_starting_in_is_refused_as_such(tmp_path):
    """Two ``train_ppo`` runs started at once into one new ``--out``: the second found the
    first's marker and no checkpoint, and said "it has no checkpoint to continue from (...: it
    stopped before saving one)" of a run alive and writing; it says that run is writing the
    folder now."""
    out = tmp_path / "run"
    with _run_of_another_process(out):
        with pytest.raises(ValueError, match="is being written by another run"):
            check_run_folder(out, "p", {}, resume_hint=str(out / "ckpt.npz"))
    with pytest.raises(ValueError, match="it has no checkpoint"):  # once it ended: as before
        check_run_folder(out, "p", {}, resume_hint=str(out / "ckpt.npz"))


def test_a_tournament_whose_folder_is_removed_while_it_runs_stops(tmp_path, capsys,
                                                                   monkeypatch):
    """``rm -rf`` of a tournament's ``--out`` while it ran: it wrote on into its unlinked
    ``matches.jsonl``, made the folder again for its next shard and its summary, and ended
    with status 0, its summary saying the run was complete with every match lost (and a rerun
    there replayed them all). It stops at its next write, in one line, status 2, and makes
    nothing again."""
    import shutil

    from agents.tournament import runner
    from experiments.tournament.cli import main as tournament_main

    out = tmp_path / "X"
    real_iter = runner.iter_local

    def removing(*args, **kwargs):
        for number, rec in enumerate(real_iter(*args, **kwargs)):
            yield rec
            if number == 0:  # the first match written: the folder goes
                shutil.rmtree(out)

    monkeypatch.setattr(runner, "iter_local", removing)
    status = tournament_main(["--agents", "random", "greedy", "--matches", "6",
                              "--target-score", "20", "--workers", "1", "--quiet",
                              "--no-plots", "--save-records", "--out", str(out)])
    err = capsys.readouterr().err
    assert status == 2, err
    assert err.count("\n") == 1 and err.startswith("error: "), err
    assert "was removed or replaced while the run was writing it" in err
    assert not out.exists()


@pytest.mark.parametrize("program", ["tournament", "make_dataset"])
def test_a_file_where_a_run_keeps_a_folder_is_refused_before_the_games(tmp_path, capsys,
                                                                        program):
    """``--out X --save-records`` with a file ``X/records`` (``make_dataset``: ``decisions``)
    played its games and wrote the run's files first, then stopped with "File exists"."""
    from experiments.make_dataset import main as dataset_main
    from experiments.tournament.cli import main as tournament_main

    name = {"tournament": "records", "make_dataset": "decisions"}[program]
    out = tmp_path / "X"
    out.mkdir()
    (out / name).write_text("a file")
    argv = ["--agents", "random", "greedy", "--matches", "2", "--target-score", "20",
            "--quiet", "--out", str(out)]
    main = {"tournament": lambda: tournament_main([*argv, "--no-plots", "--save-records"]),
            "make_dataset": lambda: dataset_main(argv)}[program]
    try:
        status = main()
    except SystemExit as usage:  # make_dataset refuses its --out as a usage error
        status = usage.code
    assert status == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert (f"--out {str(out)!r} holds {name!r}, a file where the run writes a folder; remove "
            "it, pass --overwrite to replace the run, or name a new folder") in err, err
    assert os.listdir(out) == [name]


def test_a_ray_address_that_answers_but_is_no_cluster_writes_nothing(tmp_path, capsys):
    """``--backend ray --ray-address HOST:PORT`` where something listens but no Ray cluster
    runs waited in ``ray.init`` for minutes (over two, here), with config.json, matches.jsonl
    and run.json written already (``auto`` with no cluster left them behind too, as Ray was
    joined after the run folder was started)."""
    pytest.importorskip("ray")
    import socket

    from experiments.tournament.cli import main

    with socket.socket() as listener:  # answers the TCP connect, speaks no Ray
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        address = f"127.0.0.1:{listener.getsockname()[1]}"
        status = main(["--agents", "random", "greedy", "--matches", "2", "--target-score", "20",
                       "--quiet", "--no-plots", "--backend", "ray", "--ray-address", address,
                       "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert status == 2 and "Traceback" not in err, err[-2000:]
    assert err.splitlines()[-1] == (f"error: no Ray cluster answers at {address} (something "
                                    "listens there but does not speak Ray's gRPC); check the "
                                    "address")
    assert not (tmp_path / "out").exists()


def test_ray_address_in_the_environment_is_checked_as_the_flag_is(tmp_path, capsys,
                                                                  monkeypatch):
    """With ``RAY_ADDRESS`` set (to a cluster that is gone), ``--backend ray`` failed five local
    starts with Ray's "num_cpus and num_gpus must not be provided", blamed on a busy machine,
    after writing the run folder; the address is checked as ``--ray-address`` is."""
    pytest.importorskip("ray")
    from experiments.tournament.cli import main

    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:1")
    status = main(["--agents", "random", "greedy", "--matches", "2", "--target-score", "20",
                   "--quiet", "--no-plots", "--backend", "ray", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert status == 2 and err.splitlines()[-1].startswith(
        "error: no Ray cluster answers at 127.0.0.1:1"), err[-2000:]
    assert not (tmp_path / "out").exists()


def test_overwrite_replaces_the_run_and_keeps_the_users_own_files(tmp_path, capsys):
    """``--overwrite`` on a run's folder removed everything in it, notes the user had put
    beside the run too; it removes the run's files (the program's outputs, the marker)."""
    from experiments.tournament.cli import main

    out = tmp_path / "run"
    argv = ["--agents", "random", "greedy", "--matches", "2", "--target-score", "20",
            "--quiet", "--no-plots", "--out", str(out)]
    assert main([*argv, "--save-records"]) == 0
    (out / "notes.txt").write_text("what I saw in this run")
    assert main([*argv, "--overwrite"]) == 0
    assert (out / "notes.txt").read_text() == "what I saw in this run"
    assert sorted(os.listdir(out)) == ["config.json", "matches.jsonl", "notes.txt", "run.json",
                                       "summary.json"]  # the old records/ went with its run


def test_overwrite_of_another_programs_run_leaves_the_new_run_alone(tmp_path, capsys):
    """``tournament --overwrite`` over a dataset removed the tournament's own outputs only: the
    dataset's ``dataset.json`` and ``decisions/`` stayed beside the new matches (and still
    loaded), as a trainer's ``policy.npz`` stayed under a dataset written over its run. The
    folder afterwards holds the new run, and the user's own files, alone."""
    from experiments.make_dataset import main as make_dataset
    from experiments.tournament.cli import main as tournament

    out = tmp_path / "run"
    argv = ["--agents", "random", "greedy", "--matches", "1", "--target-score", "20",
            "--quiet", "--out", str(out)]
    assert make_dataset(argv) == 0
    dataset = sorted([*os.listdir(out), "notes.txt"])
    assert {"dataset.json", "decisions"} <= set(dataset)
    (out / "notes.txt").write_text("what I saw in this run")
    assert tournament([*argv, "--no-plots", "--overwrite"]) == 0
    assert sorted(os.listdir(out)) == ["config.json", "matches.jsonl", "notes.txt", "run.json",
                                       "summary.json"]
    assert make_dataset([*argv, "--overwrite"]) == 0  # and back
    assert sorted(os.listdir(out)) == dataset
    assert (out / "notes.txt").read_text() == "what I saw in this run"


def test_overwrite_removes_the_outputs_of_the_replaced_runs_program(tmp_path, monkeypatch):
    """The rule under the test above, for any two programs: what replacing a run removes is
    this program's outputs and those the code knows the replaced run's program to write
    (``PROGRAM_OUTPUTS``); a run of a program whose outputs are unknown is refused where the
    folder holds anything else, not half replaced; the same program's is replaced as before."""
    import json

    from dominoes_env import cli_support
    from dominoes_env.cli_support import start_run_folder

    monkeypatch.setitem(cli_support.PROGRAM_OUTPUTS, "a", ("ckpt*", "tb"))
    out = tmp_path / "run"
    start_run_folder(check_run_folder(out, "a", {}, outputs=("ckpt*", "tb")))
    assert json.loads((out / "run.json").read_text())["outputs"] == ["ckpt*", "tb"]
    for name in ("ckpt1.npz", "shared.json", "notes.txt"):
        (out / name).write_text(name)
    (out / "tb").mkdir()
    start_run_folder(check_run_folder(out, "b", {}, overwrite=True, outputs=("shared.json",)))
    assert sorted(os.listdir(out)) == ["notes.txt", "run.json"]
    marker = json.loads((out / "run.json").read_text())
    for listed in (None, "ckpt*", ["../x"], [1], ["notes.txt"]):  # whatever it lists
        if listed is None:
            marker.pop("outputs", None)
        else:
            marker["outputs"] = listed
        (out / "run.json").write_text(json.dumps(marker))
        with pytest.raises(ValueError, match=r"holds a run of 'b', whose files --overwrite "
                                             r"cannot tell from yours \('notes.txt'\)"):
            check_run_folder(out, "a", {}, overwrite=True, outputs=("ckpt*",))
        assert check_run_folder(out, "b", {}, overwrite=True, outputs=("x",)).replaces
    assert sorted(os.listdir(out)) == ["notes.txt", "run.json"]


def test_overwrite_never_removes_what_an_edited_marker_lists(tmp_path, capsys):
    """``make_dataset --overwrite`` onto a tournament whose run.json's "outputs" had been
    edited to list the user's ``notes.txt`` and ``mydata``: both were deleted with the run, in
    silence. What a program's run writes is the code's list, never the marker's: they stay, and
    a warning says so."""
    import json

    from experiments.make_dataset import main as make_dataset
    from experiments.tournament.cli import main as tournament

    out = tmp_path / "ov1"
    argv = ["--agents", "random", "greedy", "--matches", "1", "--target-score", "20",
            "--quiet", "--out", str(out)]
    assert tournament([*argv, "--no-plots"]) == 0
    (out / "notes.txt").write_text("mine")
    (out / "mydata").mkdir()
    (out / "mydata" / "a").write_text("mine too")
    marker = json.loads((out / "run.json").read_text())
    marker["outputs"] += ["notes.txt", "mydata"]
    (out / "run.json").write_text(json.dumps(marker))
    capsys.readouterr()
    assert make_dataset([*argv, "--overwrite"]) == 0
    assert (out / "notes.txt").read_text() == "mine"
    assert (out / "mydata" / "a").read_text() == "mine too"
    err = capsys.readouterr().err
    assert "warning: " in err and "kept 'mydata', 'notes.txt'" in err, err
    assert "dataset.json" in os.listdir(out)


def test_every_programs_outputs_are_the_ones_overwrite_knows():
    """``PROGRAM_OUTPUTS`` (what --overwrite removes of another program's run) holds each
    program's own list of outputs."""
    from dominoes_env.cli_support import PROGRAM_OUTPUTS
    from experiments import benchmark, demo, make_dataset, train_jax
    from experiments.tournament import cli as tournament

    assert PROGRAM_OUTPUTS["experiments.tournament"] == tournament.OUTPUTS
    assert PROGRAM_OUTPUTS["experiments.demo"] == demo.OUTPUTS
    assert PROGRAM_OUTPUTS["experiments.make_dataset"] == make_dataset.OUTPUTS
    assert PROGRAM_OUTPUTS["experiments.benchmark"] == benchmark.OUTPUT_NAMES
    assert PROGRAM_OUTPUTS["experiments.train_jax"] == train_jax.OUTPUTS
    for name in ("train_ppo", "train_rllib", "expert_iteration"):
        module = importlib.import_module(f"experiments.{name}")
        extra = ("iteration[0-9]*",) if name == "expert_iteration" else ()
        assert PROGRAM_OUTPUTS[f"experiments.{name}"] == (*module.OUTPUTS, *extra), name


def test_every_programs_folders_are_among_its_outputs():
    """``OUTPUT_FOLDERS`` names, for each program, which of its outputs are folders."""
    from dominoes_env.cli_support import PROGRAM_OUTPUTS
    from dominoes_env.cli_support.run_folders import OUTPUT_FOLDERS

    assert set(OUTPUT_FOLDERS) == set(PROGRAM_OUTPUTS)
    for program, folders in OUTPUT_FOLDERS.items():
        assert set(folders) <= set(PROGRAM_OUTPUTS[program]), program


def test_cli_support_re_exports_every_name_of_its_run_folders_module():
    """The package restated ``run_folders.__all__`` by hand, and the two lists drifted apart
    (``OUTPUT_FOLDERS`` was public there and missing here): the package's ``__all__`` now reads
    it, so it holds every name of it, each the module's own object, and no name twice."""
    from dominoes_env import cli_support
    from dominoes_env.cli_support import run_folders

    names = cli_support.__all__
    assert len(names) == len(set(names))
    assert set(run_folders.__all__) <= set(names)
    for name in names:
        assert hasattr(cli_support, name), name
    for name in run_folders.__all__:
        assert getattr(cli_support, name) is getattr(run_folders, name), name


@pytest.mark.parametrize("program", sorted(
    ["experiments.tournament", "experiments.train_jax", "experiments.train_ppo",
     "experiments.benchmark", "experiments.make_dataset", "experiments.train_rllib"]))
def test_an_output_of_the_wrong_kind_is_refused_before_the_run_goes_on(tmp_path, program):
    """``train_jax --resume`` with a folder named ``eval.csv`` in the run trained, saved its
    checkpoint, then stopped on "Is a directory" without its policy; ``tb`` as a file was a raw
    errno line. Every output the run would write a file to, found a folder (and the reverse), is
    refused with the checks of the folder, before anything is written."""
    import fnmatch

    from dominoes_env.cli_support import PROGRAM_OUTPUTS, start_run_folder
    from dominoes_env.cli_support.run_folders import OUTPUT_FOLDERS

    outputs = PROGRAM_OUTPUTS[program]
    for name in (n for n in outputs if not any(c in n for c in "*?[")):
        out = tmp_path / name.replace(".", "_")
        start_run_folder(check_run_folder(out, program, {}, outputs=outputs))
        folder = any(fnmatch.fnmatchcase(name, p) for p in OUTPUT_FOLDERS[program])
        if folder:
            (out / name).write_text("a file")
        else:
            (out / name).mkdir()
        before = sorted(os.listdir(out))
        wanted = "file" if not folder else "folder"
        with pytest.raises(ValueError, match=f"holds '{re.escape(name)}', a "
                                             f"{'folder' if not folder else 'file'} where the "
                                             f"run writes a {wanted}; remove it"):
            check_run_folder(out, program, {}, rerun_resumes=True, outputs=outputs)
        assert sorted(os.listdir(out)) == before
        assert check_run_folder(out, program, {}, overwrite=True, outputs=outputs).replaces


# -- a full disk ---------------------------------------------------------------------------------
@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EFBIG, errno.EDQUOT])
def test_a_full_disk_while_writing_a_file_is_one_line_naming_it(capsys, code):
    """A file that found no room (its name given, as ``atomic_write`` gives it) ended a command
    in a traceback (status 1), unless the command caught it itself."""
    from dominoes_env.cli_support import run_command

    def body() -> int:
        raise OSError(code, os.strerror(code), "/runs/x/policy.npz")

    assert run_command(body) == 2
    assert capsys.readouterr().err == f"error: cannot write '/runs/x/policy.npz': " \
                                      f"{os.strerror(code)}\n"


def test_a_failing_device_is_named_without_saying_write(capsys):
    """EIO comes from reads as well as writes: the line said "cannot write" for either."""
    from dominoes_env.cli_support import run_command

    def body() -> int:
        raise OSError(errno.EIO, os.strerror(errno.EIO), "/runs/x/policy.npz")

    assert run_command(body) == 2
    assert capsys.readouterr().err == f"error: '/runs/x/policy.npz': {os.strerror(errno.EIO)}\n"


# -- closed standard streams ----------------------------------------------------------------------
@pytest.mark.parametrize("args, closing", [
    (["play", "--opponents", "random", "--seed", "1", "--target-score", "20",
      "--save", "{tmp}/p.json"], "<&-"),
    (["play", "--opponents", "random", "--seed", "1", "--target-score", "20"], "</dev/null >&-"),
    (["replay", "{record}"], ">&-"),
    (["--help"], ">&-"),
    (["replay", "{record}", "--match", "-1"], "2>&-"),
])  # fmt: skip
def test_a_closed_standard_stream_reads_and_writes_nothing(record_file, args, closing):
    """``play <&-`` and every program with ``>&-`` ended in an ``AttributeError`` traceback
    (``sys.stdin``/``sys.stdout`` are ``None`` then); with ``2>&-`` the error line went to
    stdout (``print(file=None)`` writes there), into the data a caller reads. Then ``>&-``
    dropped the output and ended with status 0 (``replay --match 0 >&-``: the record went
    nowhere); it now says the output was not written, status 2, as ``| head -c1`` does."""
    import subprocess
    import sys
    from pathlib import Path

    tmp = record_file.parent
    argv = [a.format(tmp=tmp, record=record_file) for a in args]
    script = f'exec "$0" -m dominoes_env "$@" {closing}'
    proc = subprocess.run(["bash", "-c", script, sys.executable, *argv], cwd=tmp,
                          capture_output=True, text=True, timeout=100,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])})
    assert "Traceback" not in proc.stderr, proc.stderr
    if "2>&-" in closing:
        assert proc.returncode == 2 and proc.stdout == "", proc.stdout
    elif ">&-" in closing:
        assert proc.returncode == 2, proc
        assert proc.stderr == "error: standard output is closed; the output was not written\n"
    else:
        assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    if "<&-" in closing:  # the end of input: the match is quit and saved
        assert (tmp / "p.json").is_file() and "Record saved" in proc.stdout


def run_with_full_stderr(module: str, argv: list[str], cwd) -> subprocess.CompletedProcess:
    """``python -m module argv 2>/dev/full``: every write to standard error fails (ENOSPC)."""
    import sys
    from pathlib import Path

    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    return subprocess.run(["bash", "-c", 'exec "$0" -m "$@" 2>/dev/full', sys.executable,
                           module, *argv], cwd=cwd, capture_output=True, text=True,
                          timeout=300,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])})


@pytest.mark.parametrize("quiet", [[], ["--quiet"]])
def test_a_full_standard_error_does_not_stop_a_tournament(tmp_path, quiet):
    """``tournament 2>/dev/full``: the progress bar's failed write ended the run with status 2
    before its first match (0 of 60 played), and with ``--quiet`` a run that had written
    everything ended with status 2 for its last line (``results: ...``). Standard error is
    dropped once it fails; the work and its status are the same as with a working one."""
    proc = run_with_full_stderr("experiments.tournament", [
        "--agents", "random", "greedy", "--matches", "3", "--target-score", "20", "--no-plots",
        "--out", "run", *quiet], tmp_path)
    assert proc.returncode == 0, proc.stdout[-2000:]
    assert len((tmp_path / "run" / "matches.jsonl").read_text().splitlines()) == 4
    assert (tmp_path / "run" / "summary.json").is_file() and "random" in proc.stdout


def test_a_failing_standard_error_is_dropped_and_the_command_goes_on(capsys, monkeypatch):
    """The runner's rule under the test above, for any command: a write or flush to stderr
    that fails is dropped with every later one, and the command's own status stands."""
    import io
    import sys

    from dominoes_env.cli_support import run_command

    class Full(io.StringIO):
        def write(self, text):
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(sys, "stderr", Full())
    done = []

    def body() -> int:
        print("progress", file=sys.stderr, flush=True)
        sys.stderr.write("more")
        done.append(True)
        print("the result")
        return 0

    assert run_command(body) == 0 and done == [True]
    assert capsys.readouterr().out == "the result\n"
    assert isinstance(sys.stderr, Full)  # the stream before it is back


def test_a_failing_standard_output_does_not_stop_a_command(capsys, monkeypatch):
    """``train_jax ... | head -c1``: the first progress line's failed write stopped the training
    with no checkpoint. A failing stdout is dropped like stderr; the command does its work to
    the end, then one line says the output was lost (status 2)."""
    import io
    import sys

    from dominoes_env.cli_support import run_command

    class Full(io.StringIO):
        def write(self, text):
            raise OSError(errno.ENOSPC, "No space left on device")

    full = Full()
    monkeypatch.setattr(sys, "stdout", full)
    done = []

    def body() -> int:
        print("step 0: progress", flush=True)
        done.append("trained")
        print("the result")
        return 0

    assert run_command(body) == 2 and done == ["trained"]
    assert capsys.readouterr().err == "error: cannot write the output: No space left on device\n"
    assert sys.stdout is full  # the stream before it is back


def test_an_over_long_output_path_is_cut_in_its_error_line(tmp_path):
    """``replay --html (42 folders of 100 characters)/x.html`` said so in one error line of
    8,383 characters, the path uncut twice; each quote is cut to 200 characters."""
    path = os.path.join(str(tmp_path), *(["d" * 100] * 42), "x.html")
    with pytest.raises(CommandError, match="does not exist") as err:
        check_output_file(path, "--html")
    assert len(str(err.value)) < 500, len(str(err.value))


def test_an_error_line_escapes_what_does_not_print(capsys):
    """A stop note or a message holding a path with an escape sequence sent it to the terminal
    raw; the one error line shows it with Python's escapes."""
    from dominoes_env.cli_support import print_error

    print_error("finished matches are saved in esc\x1b[31mRED\nx")
    assert capsys.readouterr().err == "error: finished matches are saved in esc\\x1b[31mRED x\n"


@pytest.mark.parametrize("content, kept, words", [
    (b"steps,win\n0,0.5\n8,0.25\n", 2, None),
    (b"steps,win\n0,0.5\ngarbage\n8,0.25\n", 2, "line 3 held no row"),
    (b"steps,win\n0,0.5\n\xff\n8,0.2", 1, "line 3 and 1 more held no row"),
    (b"steps,win\n0,0.5\n1,2,3\n", 1, "line 3 held no row"),
    (b"steps,win\nnan,nan\n8,0.25\n", 1, "line 2 held no row"),
    (b"steps,win\n1e400,inf\n8,-inf\n16,0.5\n", 1, "line 2 and 1 more held no row"),
])
def test_a_trainers_eval_log_keeps_only_its_rows_of_numbers(tmp_path, content, kept, words):
    """``train_jax`` / ``train_ppo --resume`` appended their rows after garbage lines put in
    ``eval.csv`` (or a line cut by a kill): the file is written again from its good rows, with
    one warning line naming it."""
    from dominoes_env.cli_support import keep_numeric_rows

    path = tmp_path / "eval.csv"
    path.write_bytes(content)
    note = keep_numeric_rows(path)
    if words is None:
        assert note is None and path.read_bytes() == content
        return
    assert note.startswith(f"warning: {path}: {words}") and f"its {kept} good row" in note
    assert len(path.read_bytes().splitlines()) == kept + 1


@pytest.mark.parametrize("content", [b"steps;wall_s\n8,3.9\n", b"{\n0,0.5\n", b"\n"])
def test_a_trainers_eval_log_with_a_damaged_header_is_kept_beside(tmp_path, content):
    """A header damaged (its commas turned to ';') dropped the good rows under it with it, in
    a warning saying "its header held no row of this run's numbers": the file is now kept
    whole as ``eval.csv.damaged`` (a free name beside), the warning names it, and the log
    starts again; an empty log is removed without a word (nothing of it is lost)."""
    from dominoes_env.cli_support import keep_numeric_rows

    path = tmp_path / "eval.csv"
    (tmp_path / "eval.csv.damaged").write_bytes(b"an older one\n")
    path.write_bytes(content)
    note = keep_numeric_rows(path)
    aside = tmp_path / "eval.csv.damaged.2"
    assert not path.exists() and aside.read_bytes() == content
    assert note.startswith(f"warning: {path}: its first line is no header of column names")
    assert f"kept as {aside}" in note and note.count("\n") == 0
    path.write_bytes(b"")
    assert keep_numeric_rows(path) is None and not path.exists()
    # the file set aside is the run's: --overwrite replaces it with the rest of the run
    import fnmatch

    from experiments import train_jax, train_ppo

    for outputs in (train_jax.OUTPUTS, train_ppo.OUTPUTS):
        assert any(fnmatch.fnmatchcase(aside.name, pattern) for pattern in outputs)


@pytest.mark.jax
def test_a_full_standard_error_does_not_stop_train_jax(tmp_path):
    """``train_jax 2>/dev/full``: the progress bar's failed write ended the training with
    status 2 right after its first evaluation, with no checkpoint and no policy."""
    proc = run_with_full_stderr("experiments.train_jax", [
        "--total-steps", "64", "--num-envs", "2", "--num-steps", "8", "--num-minibatches", "1",
        "--update-epochs", "1", "--net", "8", "--eval-matches", "2", "--out", "run"], tmp_path)
    assert proc.returncode == 0, proc.stdout[-2000:]
    assert {"checkpoint.npz", "policy.npz"} <= set(os.listdir(tmp_path / "run"))


# -- a checkpoint's counters ----------------------------------------------------------------------
@pytest.mark.jax
@pytest.mark.parametrize("key, value", [("steps", 2**70), ("steps", 1e308), ("steps", 2.5),
                                        ("steps", True), ("wall_s", 1e308), ("wall_s", -0.5)])
def test_a_checkpoint_whose_counters_are_damaged_is_refused_naming_them(tmp_path, key, value):
    """``train_jax --resume`` of a checkpoint saying 2**70 steps was a TypeError traceback;
    1e308 steps ended in "error: Value out of range: 1000...0" (300 digits), 2.5 steps was
    resumed, and 1e308 seconds was printed as the run's time."""
    pytest.importorskip("jax")
    import json

    import numpy as np

    from dominoes_env.jax.checkpoints import read_checkpoint, save_checkpoint
    from dominoes_env.obs import DEFAULT_VERSION

    settings = {"players": 2, "partnerships": None, "target_score": 250, "net": "8",
                "critic": "obs", "num_envs": 2, "num_steps": 2, "snapshots": 1,
                "obs_version": DEFAULT_VERSION}
    path = tmp_path / "checkpoint.npz"
    save_checkpoint({"params": {"w": np.zeros((3, 2), np.float32)}}, settings, 4, 1.5, path)
    assert read_checkpoint(path, settings)["steps"] == 4
    arrays = dict(np.load(path))
    meta = json.loads(str(arrays["meta"]))
    arrays["meta"] = np.array(json.dumps({**meta, key: value}))
    np.savez(path, **arrays)
    with pytest.raises(ValueError, match=f"its {key} is .*, not a"):
        read_checkpoint(path, settings)


# -- play's prompt --------------------------------------------------------------------------------
@pytest.mark.parametrize("typed", ["a" * 100_000, "9" * 4000])
def test_play_does_not_echo_a_huge_bad_move_back(typed):
    """A 50 MB line typed (or piped) at the prompt was printed back whole in "'aaa...' is not
    a number", and a 4,000-digit number in "There is no move 999...": the terminal flooded."""
    import io

    from dominoes_env.play import QuitGame, TerminalGame

    class Idle:  # an agent: TerminalGame refuses an object without act(view)
        def act(self, view):
            return view.legal[0]

    out = io.StringIO()
    game = TerminalGame([Idle()], RuleConfig(), seed=1,
                        stdin=io.StringIO(typed + "\nq\n"), stdout=out)
    with pytest.raises(QuitGame):
        game.ask(3)
    said = out.getvalue()
    assert len(said) < 300 and ("is not a number" in said or "There is no move" in said
                                or "Line too long" in said), said


# -- the benchmarks' times ------------------------------------------------------------------------
@pytest.mark.parametrize("program", ["bench_engine", "bench_env"])
@pytest.mark.parametrize("seconds, fragment", [("1e-300", ">= 0.001"),
                                               ("3600.0000001", "not 3600.0000001")])
def test_a_benchmark_time_too_short_or_just_too_long_is_one_line(capsys, program, seconds,
                                                                 fragment):
    """``--seconds 1e-300`` timed no round and ended in a ZeroDivisionError traceback;
    ``--seconds 3600.0000001`` was refused as "at most 3600, not 3600"."""
    import importlib

    main = importlib.import_module(f"experiments.{program}").main
    with pytest.raises(SystemExit) as stop:
        main(["--seconds", seconds, "--repeats", "1"])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and err.count("error:") == 1 and fragment in err, err


# -- a policy's training rules --------------------------------------------------------------------
@pytest.mark.parametrize("rules, fragment", [
    ({"max_pip": 12}, "metadata's rules need 648 inputs and 364 actions at obs_version 2; "
                      "the weights have 234 and 112"),
    ({"max_pip": 6, "evil": 1}, "metadata's rules: unknown rule option(s) evil"),
    ({"max_pip": "6"}, "metadata's rules: max_pip='6' must be an integer"),
    ({"max_pip": 6, "obs_version": 3}, "metadata's rules need 346 inputs and 112 actions at "
     "obs_version 3; the weights have 234 and 112 (they fit these rules at obs_version 2)"),
])  # fmt: skip
def test_a_policy_whose_rules_contradict_its_weights_is_refused(tmp_path, rules, fragment):
    """A policy whose metadata said it was trained at double-12 (with double-6 weights), or
    with a rule option no version has, was read and played at double-6 without a word; an
    obs_version changed from 2 to 3 was said as if the rules did not fit the weights."""
    import json

    import numpy as np

    from agents.ppo import random_policy_npz
    from dominoes_env.policy_format import PolicyFileError, read_policy

    path = tmp_path / "p.npz"
    random_policy_npz(path, RuleConfig(), hidden=(8,))
    arrays = dict(np.load(path))
    metadata = json.loads(str(arrays["metadata"]))
    version = rules.pop("obs_version", metadata["obs_version"])
    arrays["metadata"] = np.array(json.dumps({**metadata, "rules": rules,
                                              "obs_version": version}))
    np.savez(path, **arrays)
    with pytest.raises(PolicyFileError) as refused:
        read_policy(path)
    assert fragment in str(refused.value)


@pytest.mark.jax
def test_replay_of_a_target_beyond_every_game_is_one_line_on_both_backends(tmp_path, capsys):
    """``replay r.json --backend jax`` of a record whose target score the JAX game could not
    hold (the core then played any) ended in a ValueError traceback from the JAX game's
    constructor. Both games now share the rules' bound (65,536): such a record is refused by
    either backend in one line naming the rule."""
    pytest.importorskip("jax")
    from dominoes_env.cli import main

    from . import helpers

    record = helpers.random_match(RuleConfig(target_score=30), 1).to_record()
    record["rules"]["target_score"] = 10**30
    (tmp_path / "r.json").write_text(json.dumps(record))  # write_record refuses it
    for backend in ("core", "jax"):
        assert main(["replay", str(tmp_path / "r.json"), "--backend", backend]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "target_score=" in err and "1..65536" in err, err


# -- train_ppo's minibatch ------------------------------------------------------------------------
@pytest.mark.parametrize("batch_size", [1, 63, 128])
def test_train_ppo_refuses_a_minibatch_of_one_row_or_beyond_the_rollout(tmp_path, capsys,
                                                                         batch_size):
    """``--batch-size 1`` (or 63 of a 64-step rollout: a last minibatch of one row) normalised
    the advantages by the spread of one number: NaN, then a torch ValueError traceback after
    config.json, pool/ and checkpoints/ were written; ``--batch-size 128`` of a 64-step
    rollout trained on the whole rollout without a word."""
    pytest.importorskip("sb3_contrib")
    from experiments.train_ppo import main

    argv = ["--total-steps", "64", "--n-envs", "2", "--n-steps", "32", "--net", "8",
            "--eval-matches", "2", "--opponents", "random=1", "--out", str(tmp_path / "run"),
            "--batch-size", str(batch_size)]
    try:
        status = main(argv)
    except SystemExit as stop:  # refused by the parser
        status = stop.code
    err = capsys.readouterr().err
    assert status == 2 and err.count("error:") == 1 and "batch" in err, err
    assert not (tmp_path / "run").exists()


def test_train_rllib_refuses_a_minibatch_of_one_row(tmp_path, capsys):
    """``--minibatch-size 1``: every loss and the entropy were NaN (the advantages normalised
    by the spread of one number), no update took, and the untrained policy was exported as the
    run's result with status 0."""
    from experiments.train_rllib import main

    with pytest.raises(SystemExit) as stop:
        main(["--iterations", "1", "--env-runners", "0", "--train-batch-size", "64",
              "--minibatch-size", "1", "--net", "8", "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and err.count("error:") == 1 and "minibatch_size" in err, err
    assert not (tmp_path / "run").exists()


def test_expert_iteration_data_whose_metadata_names_a_key_twice_is_refused(demos):
    """``--data`` whose metadata gave ``teacher`` twice was fitted, the policy card naming
    whichever came last."""
    import json

    import numpy as np

    from agents.demos import load_demos

    arrays = dict(np.load(demos))
    arrays["meta"] = np.array(str(arrays["meta"]).rstrip()[:-1] + ', "teacher": "search"}')
    assert json.loads(str(arrays["meta"]))["teacher"] == "search"  # json keeps the last
    np.savez(demos, **arrays)
    with pytest.raises(ValueError, match="the key 'teacher' appears twice"):
        load_demos(str(demos), RuleConfig())


@pytest.mark.parametrize("meta, words", [
    ([1, 2], "its meta: a JSON list, not an object"),
    ({"matches": -5}, "matches must be a count of matches in 1..10,000,000 (what --matches "
                      "plays), not -5"),
    ({"matches": 1.5}, "matches must be a count"),
    ({"matches": 0}, "matches must be a count"),  # it holds decisions: some match was played
    ({"matches": 10**30}, "matches must be a count of matches in 1..10,000,000"),
    ({"teacher": "no::such spec"}, "its meta: agent spec 'no::such spec': '' is not a class"),
    ({"opponents": ["greedy", "nosuch"]}, "its meta: unknown agent spec 'nosuch'; known"),
    # every action legal: the dataset reader refuses it as no position has it
    ({"masks": True}, "row 0: its mask has 112 legal actions; a hand of 1 tiles has at most 4"),
    ({"masks": "tile 1"}, "row 0: its mask has a legal play of tile 1, which is not in the hand"),
    ({"seed": float("nan")}, "seed"),
    ({"seed": -1}, "seed"),
    ({"teacher": 7}, "teacher must be an agent spec"),
    ({"opponents": "greedy"}, "opponents must be a list of agent specs"),
    ({"rules": None}, "its meta: it lacks 'rules'"),
    ({"rules": {"num_players": 2}}, "rules lack "),
    ({"rules": {"num_players": "two"}}, "num_players"),
    ({"values": 1e6}, "value 1e+06 is outside -"),
])
def test_expert_iteration_data_whose_metadata_or_values_are_nonsense_is_refused(
        demos, meta, words):
    """``--data`` whose metadata was a JSON list was refused in Python's words ("list indices
    must be integers or slices, not str"); one saying ``"matches": -5`` or ``"seed": NaN``, or
    without its rules (the default ones assumed), and one whose values were 1e6 (no hand's
    margin comes near) were fitted in silence, and so were ``"matches": 10**30``, a teacher
    spec that names no agent (the fitted policy's card named it) and masks no position has
    (every action legal). They are checked as a dataset's metadata and masks are, by the
    same code."""
    import json

    import numpy as np

    from agents.demos import load_demos

    arrays = dict(np.load(demos))
    if isinstance(meta, list):
        arrays["meta"] = np.array(json.dumps(meta))
    elif "values" in meta:
        arrays["values"] = np.full_like(arrays["values"], meta["values"])
    elif meta.get("masks") is True:
        arrays["masks"][:] = True
    elif "masks" in meta:  # a play of tile 1, not in hand, beside tile 0's
        arrays["masks"][:, 4] = True
    else:
        fields = {**json.loads(str(arrays["meta"])), **meta}
        arrays["meta"] = np.array(json.dumps({k: v for k, v in fields.items() if v is not None}))
    np.savez(demos, **arrays)
    with pytest.raises(ValueError) as err:
        load_demos(str(demos), RuleConfig())
    assert words in str(err.value) and f"--data {str(demos)!r}" in str(err.value), err.value


# -- a working directory that was removed --------------------------------------------------------
@pytest.mark.parametrize("argv", [
    ["experiments.train_ppo", "--total-steps", "64", "--out", "run"],
    ["dominoes_env", "play", "--opponents", "random", "--save", "s.json"],
    ["experiments.tournament", "--agents", "random", "greedy", "--out", "run"],
])  # fmt: skip
def test_a_removed_working_directory_is_one_line(tmp_path, argv):
    """Run from a folder removed under the shell: ``play --save s.json`` ended in a
    FileNotFoundError traceback naming no file, and ``train_ppo`` died importing torch
    ("Intel oneMKL FATAL ERROR: Cannot load libtorch_cpu.so", status 2, no error line)."""
    import subprocess
    import sys
    from pathlib import Path

    gone = tmp_path / "gone"
    gone.mkdir()
    script = 'cd "$1" && rmdir "$1" && shift && exec "$0" -m "$@" </dev/null'
    proc = subprocess.run(["bash", "-c", script, sys.executable, str(gone), *argv],
                          capture_output=True, text=True, timeout=100,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])})
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == ("error: the working directory no longer exists (it was removed); "
                           "cd to a folder that exists\n"), proc.stderr


@pytest.mark.parametrize("check", ["file", "folder"])
def test_a_relative_output_in_a_removed_working_directory_names_the_cause(monkeypatch, check):
    """``check_output_file("s.json")`` with the working directory removed raised a bare
    FileNotFoundError (a traceback naming no file) from ``os.path.realpath``."""
    from dominoes_env.cli_support import check_out_dir

    def gone():
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT))

    monkeypatch.setattr(os, "getcwd", gone)
    with pytest.raises(CommandError, match="the working directory no longer exists"):
        if check == "file":
            check_output_file("s.json", "--save")
        else:
            check_out_dir("run", "--out")


@pytest.mark.parametrize("program, argv, fragment", [
    ("bench_jax", ["--batches", "1", "1", "--steps", "1", "--seconds", "0.01", "--repeats", "1"],
     "--batches 1 given twice"),
    ("bench_training", ["--net", "8", "--num-steps", "2", "--minibatch", "1", "--jax-envs", "2",
                        "--ppo-envs", "2", "--updates", "1", "--no-matmul"],
     "--minibatch must be >= 2"),
])  # fmt: skip
def test_benchmark_flags_refused_before_any_timing(capsys, program, argv, fragment):
    """``bench_jax --batches 1 1`` compiled and timed, then ended in a zip() ValueError
    traceback; ``bench_training --minibatch 1`` timed train_jax for seconds, then its
    train_ppo child refused the minibatch."""
    import importlib

    main = importlib.import_module(f"experiments.{program}").main
    with pytest.raises(SystemExit) as stop:
        main(argv)
    err = capsys.readouterr().err
    assert stop.value.code == 2 and err.count("error:") == 1 and fragment in err, err


# -- best_response after a stop --------------------------------------------------------------------
def test_best_response_continues_the_run_its_stop_line_names(tmp_path, monkeypatch, capsys):
    """A stopped best_response said "continue with --resume OUT/checkpoint.npz" (its trainer's
    line), but best_response had no --resume, and the same command again was refused (the
    folder holds a run): the only way on was --overwrite, the training so far thrown away."""
    import experiments.best_response as program

    out = tmp_path / "run"
    out.mkdir()
    (out / "checkpoint.npz").write_bytes(b"the trainer checks it")
    seen = {}

    def trainer(module, flags):
        seen["flags"] = flags
        return 143  # stopped again: no evaluation

    monkeypatch.setattr(program, "run_program", trainer)
    base = ["--agent", "greedy", "--steps", "64", "--matches", "2", "--num-envs", "2"]
    assert program.main([*base, "--out", str(out), "--resume", str(out / "checkpoint.npz")]) == 143
    flags = seen["flags"]
    assert flags[flags.index("--resume") + 1] == str(out / "checkpoint.npz")
    assert flags[flags.index("--out") + 1] == str(out) and "--overwrite" not in flags
    # a run stopped without --out named only its checkpoint: --resume alone continues it
    # (it was refused: "give --out", the stop line's way on was not the whole way)
    assert program.main([*base, "--resume", str(out / "checkpoint.npz")]) == 143
    flags = seen["flags"]
    assert flags[flags.index("--out") + 1] == str(out)
    assert run_of_checkpoint("r/checkpoints/last.zip") == "r"  # train_ppo's
    # the run's folder itself: its parent was taken for the run ("holds files that are not a
    # run's" about a folder the user never named)
    assert program.main([*base, "--resume", str(out)]) == 2
    assert "is a folder; name the checkpoint file in it" in capsys.readouterr().err
    assert program.main([*base, "--out", str(tmp_path / "other"), "--resume",
                         str(out / "checkpoint.npz")]) == 2
    assert "is not a checkpoint in --out" in capsys.readouterr().err


# -- JAX_PLATFORMS naming a backend that is not here ---------------------------------------------
@pytest.mark.jax
@pytest.mark.parametrize("platform", ["tpu", "cuda"])
def test_jax_platforms_naming_a_missing_backend_is_one_line(record_file, platform):
    """``JAX_PLATFORMS=tpu`` (a RuntimeError from JAX) and ``JAX_PLATFORMS=cuda`` without CUDA
    (a bare AssertionError from JAX) ended train_jax, the JAX benchmarks and ``replay --backend
    jax`` in a traceback."""
    pytest.importorskip("jax")
    import subprocess
    import sys
    from pathlib import Path

    proc = subprocess.run([sys.executable, "-m", "dominoes_env", "replay", str(record_file),
                           "--backend", "jax"], capture_output=True, text=True, timeout=100,
                          env={**os.environ, "JAX_PLATFORMS": platform,
                               "PYTHONPATH": str(Path(__file__).parents[1])})
    if proc.returncode == 0:
        pytest.skip(f"this machine has a {platform} backend")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: JAX cannot start: "), proc.stderr


# -- XLA_FLAGS that XLA refuses -------------------------------------------------------------------
@pytest.mark.jax
@pytest.mark.parametrize("program, flags, refused", [
    ("train_jax", "--no_such_flag", "Unknown flag in XLA_FLAGS: --no_such_flag"),
    ("bench_jax", "--no_such_flag", "Unknown flag in XLA_FLAGS: --no_such_flag"),
    ("replay", "--xla_cpu_multi_thread_eigen=maybe",
     "Couldn't interpret value maybe for flag xla_cpu_multi_thread_eigen"),
    ("replay", "no_such_flags_file", 'Could not open file "no_such_flags_file"'),
])
def test_xla_flags_that_xla_refuses_are_one_line(record_file, tmp_path, program, flags, refused):
    """A bad ``XLA_FLAGS`` made XLA end the process as JAX started its backend: a C++ fatal
    log line, status 1 (or SIGABRT), no line of ours. The shared runner checks the flags before
    the first ``import jax`` of a command; a good XLA_FLAGS still runs."""
    pytest.importorskip("jax")
    import subprocess
    import sys
    from pathlib import Path

    out = tmp_path / "run"
    command = {"train_jax": ["experiments.train_jax", "--out", str(out), "--total-steps", "1000"],
               "bench_jax": ["experiments.bench_jax"],
               "replay": ["dominoes_env", "replay", str(record_file), "--backend", "jax"]}
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1]), "JAX_PLATFORMS": "cpu",
           "JAX_COMPILATION_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.run([sys.executable, "-m", *command[program]], capture_output=True,
                          text=True, timeout=200, env={**env, "XLA_FLAGS": flags})
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(f"error: XLA refused XLA_FLAGS={flags!r}: {refused}")
    assert proc.stderr.endswith(" (unset XLA_FLAGS or correct it)\n"), proc.stderr
    assert proc.stderr.count("\n") == 1 and proc.stdout == "" and not out.exists()
    if program == "replay":  # the same command with flags XLA takes
        good = subprocess.run([sys.executable, "-m", *command[program]], capture_output=True,
                              text=True, timeout=200,
                              env={**env, "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false"})
        assert good.returncode == 0 and good.stdout.startswith("{"), good.stderr



@pytest.mark.jax
def test_train_jax_keeps_an_xla_flags_file_as_it_is(tmp_path):
    """XLA reads a value of ``XLA_FLAGS`` that does not start with ``-`` as the name of a
    file of flags. ``train_jax`` added its collective timeouts after it, so XLA looked for a
    file named by the whole string and a good flags file failed."""
    pytest.importorskip("jax")
    import subprocess
    import sys
    from pathlib import Path

    flags = tmp_path / "xla_flags.txt"
    flags.write_text("--xla_cpu_multi_thread_eigen=false\n")
    code = ("from dominoes_env.cli_support import setup_jax; setup_jax(); import jax.numpy as jnp; "
            "print(int(jnp.ones(3).sum()))")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1]), "JAX_PLATFORMS": "cpu",
           "JAX_COMPILATION_CACHE_DIR": str(tmp_path / "cache"), "XLA_FLAGS": str(flags)}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=200, env=env)
    assert proc.returncode == 0 and proc.stdout == "3\n", proc.stderr

def test_play_keeps_the_match_when_its_save_folder_goes_away(tmp_path, monkeypatch, capsys):
    """The --save folder removed during the match (checked before it, gone at its end): the
    record was lost with the error line, however long the match had been played."""
    import io
    import shutil
    import sys
    import tempfile

    from dominoes_env.cli import main
    from dominoes_env.core.records import load_record, replay_record

    folder = tmp_path / "saves"
    folder.mkdir()
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))

    class Leaving(io.StringIO):
        def readline(self, *args):
            shutil.rmtree(folder, ignore_errors=True)  # gone before the first move is typed
            return super().readline(*args)

    monkeypatch.setattr(sys, "stdin", Leaving("1\nq\n"))
    status = main(["play", "--opponents", "random", "--seed", "1", "--target-score", "20",
                   "--save", str(folder / "x.json")])
    err = capsys.readouterr().err
    assert status == 2 and err.count("error:") == 1, err
    rescued = list((tmp_path / "tmp").glob("dominoes-record-*.json"))
    assert len(rescued) == 1 and f"it is saved in {rescued[0]} instead" in err, err
    replay_record(load_record(rescued[0]))  # the match as far as it went


@pytest.mark.parametrize("kind", [FileNotFoundError, PermissionError, IsADirectoryError])
def test_a_file_gone_or_refused_under_a_running_command_is_one_line(capsys, kind):
    """train_jax whose --out was removed mid-run ended in a FileNotFoundError traceback
    naming jrm/checkpoint.npz: a named file that went away (or turned read-only, or became a
    folder) under a command is the environment's doing, one line like a full disk."""
    from dominoes_env.cli_support import run_command

    code = {FileNotFoundError: errno.ENOENT, PermissionError: errno.EACCES,
            IsADirectoryError: errno.EISDIR}[kind]

    def body() -> int:
        raise kind(code, os.strerror(code), "/runs/x/checkpoint.npz")

    assert run_command(body) == 2
    assert capsys.readouterr().err == f"error: '/runs/x/checkpoint.npz': {os.strerror(code)}\n"


@pytest.mark.parametrize("status", [0, 2])
def test_a_library_thread_that_loses_its_file_is_no_traceback(capsys, status):
    """train_jax whose --out was removed mid-run: TensorBoard's writer thread printed
    "Exception in thread Thread-2: Traceback ... FileNotFoundError" beside the error line.
    Reported in the one line when the command itself ended well, dropped when it failed (its
    own line says why)."""
    import threading

    from dominoes_env.cli_support import print_error, run_command

    def body() -> int:
        def write():
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), "run/tb/events")

        thread = threading.Thread(target=write)
        thread.start()
        thread.join()
        if status:
            print_error("'run/checkpoint.npz': No such file or directory")
        return status

    assert run_command(body) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("error:") == 1, err
    assert ("run/tb/events" in err) == (status == 0), err


def test_train_rllib_resume_takes_the_checkpoints_it_writes(tmp_path):
    """Ray 2.x marks a checkpoint folder with rllib_checkpoint.json; ``--resume`` looked only
    for metadata.json, so every checkpoint train_rllib writes was refused ("not an RLlib
    checkpoint folder (metadata.json: missing)") and a stopped run could never go on as its
    own last line says."""
    from agents.rllib_checkpoint import write_manifest
    from experiments.train_rllib import RllibConfig, check_run

    (tmp_path / "ck").mkdir()
    config = RllibConfig(out=str(tmp_path / "out"), resume=str(tmp_path / "ck"))
    with pytest.raises(ValueError, match=r"\(rllib_checkpoint.json: missing\)"):
        check_run(config)
    (tmp_path / "ck" / "rllib_checkpoint.json").write_text(
        '{"state_file": "algorithm_state", "ray_version": "2.60.0", "checkpoint_version": "2.1"}')
    write_manifest(tmp_path / "ck")  # as train_rllib does beside what Ray writes
    check_run(config)
    assert not (tmp_path / "out").exists()


def test_train_rllib_resume_of_a_damaged_checkpoint_is_one_line(tmp_path, monkeypatch, capsys):
    """A checkpoint whose algorithm_state.pkl was cut short ended in an UnpicklingError
    traceback from RLlib's restore (reached once --resume took the checkpoints it writes)."""
    import pickle

    pytest.importorskip("ray.rllib")
    import experiments.train_rllib as program
    from agents.rllib_checkpoint import write_manifest

    class Algorithm:
        def restore_from_path(self, path):
            raise pickle.UnpicklingError("pickle data was truncated")

    class Config:
        def build_algo(self):
            return Algorithm()

    monkeypatch.setattr(program, "init_ray", lambda **kwargs: None)  # no Ray started
    monkeypatch.setattr(program, "algorithm_config", lambda cfg: Config())
    (tmp_path / "ck").mkdir()
    (tmp_path / "ck" / "rllib_checkpoint.json").write_text('{"checkpoint_version": "2.1"}')
    (tmp_path / "ck" / "algorithm_state.pkl").write_bytes(b"\x80\x04")  # cut short
    write_manifest(tmp_path / "ck")  # written by train_rllib, damaged before it was
    status = program.main(["--iterations", "1", "--env-runners", "0", "--train-batch-size",
                           "64", "--minibatch-size", "32", "--net", "8", "--out",
                           str(tmp_path / "out"), "--resume", str(tmp_path / "ck")])
    err = capsys.readouterr().err
    assert status == 2 and "Traceback" not in err, err
    assert err.strip().splitlines() == [f"error: --resume {str(tmp_path / 'ck')!r} cannot be "
                                        "restored (UnpicklingError: pickle data was truncated)"]


def test_a_path_with_a_null_character_is_named():
    """``run_tournament(out="x\\0y")`` said "embedded null byte", naming no parameter."""
    from agents.tournament import TournamentConfig, run_tournament
    from dominoes_env.core.validation import as_path

    with pytest.raises(ValueError, match="out='x\\\\x00y' holds a null character"):
        as_path("out", "x\0y")
    config = TournamentConfig(["random", "greedy"], RuleConfig(target_score=20), matches=2)
    with pytest.raises(ValueError, match="out=.* holds a null character"):
        run_tournament(config, "x\0y", progress=False)


@pytest.mark.parametrize("name", ["config.json", "matches.jsonl"])
def test_an_expected_file_that_is_a_folder_is_named_a_folder(tmp_path, capsys, name):
    """A resumed tournament (or benchmark cell) whose config.json or matches.jsonl was a
    folder said it 'is not a regular file (a link, a FIFO or a device)': what it is is said,
    as for a --resume checkpoint of train_ppo that is a folder ('not a regular file')."""
    from agents.sb3_run import RunDirError, check_checkpoint
    from experiments.tournament.cli import main

    argv = ["--agents", "random", "greedy", "--matches", "2", "--target-score", "20",
            "--quiet", "--no-plots", "--out", str(tmp_path / "run")]
    assert main(argv) == 0
    capsys.readouterr()
    (tmp_path / "run" / name).unlink()
    (tmp_path / "run" / name).mkdir()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert f"holds {name!r}, a folder where the run writes a file; remove it" in err, err
    with pytest.raises(RunDirError, match=r"--resume '.*ck.zip': it is a folder, not a "
                                        r"checkpoint file"):
        (tmp_path / "ck.zip").mkdir()
        check_checkpoint(tmp_path / "ck.zip", RuleConfig(), "256,256", "tanh")
