"""Adversarial command-line runs: real signals (SIGINT), real file-system faults (a file where a
folder should be, a folder where a file should be, a read-only mount, a file-size limit that
makes writes fail like a full disk, /dev/full, a closed pipe), misbehaving agents and bad policy
files. Every run must end with its documented exit status and one ``error:`` line on stderr (no
traceback), never hang, and keep what it had finished (records replay, results resume)."""

from __future__ import annotations

import json
import os
import resource
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from agents.arena import TIMING_FIELDS
from agents.ppo import PolicyFileError, PPOAgent, random_policy_npz
from agents.tournament.runner import MATCHES_FILE
from dominoes_env.cli import main as dominoes_main
from dominoes_env.core import RuleConfig
from dominoes_env.core.records import load_record, replay_record, write_record
from dominoes_env.record_io import append_records
from experiments import bench_agents, decision_quality
from experiments.benchmark import main as benchmark_main
from experiments.tournament import main as tournament_main

from . import helpers

ROOT = Path(__file__).resolve().parents[1]
TA = "tests.tournament_agents"
FAST = ["--target-score", "20", "--quiet", "--no-plots"]


def one_error_line(err: str) -> str:
    """The single ``error:`` line of a run's stderr (and nothing that looks like a traceback)."""
    assert "Traceback" not in err, err
    lines = [ln for ln in err.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1, err
    return lines[0]


def spawn(module: str, *args: str, limit_bytes: int | None = None, **kwargs) -> subprocess.Popen:
    def setup():
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # even if the suite's shell ignored it
        if limit_bytes is not None:  # writes past the limit fail (EFBIG) like a full disk
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))

    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen([sys.executable, "-m", module, *args], cwd=ROOT, env=env,
                            preexec_fn=setup, **kwargs)


def wait_for(stream, marker: bytes, proc: subprocess.Popen,
             timeout: float = helpers.CHILD_TIMEOUT_S) -> bytes:
    """Read ``stream`` until ``marker`` shows up (the readiness signal before a test acts)."""
    seen = b""
    deadline = time.monotonic() + timeout
    fd = stream.fileno()
    while marker not in seen:
        left = deadline - time.monotonic()
        assert left > 0 and proc.poll() is None, (seen[-500:], proc.poll())
        ready, _, _ = select.select([fd], [], [], min(left, 1.0))
        if ready:
            chunk = os.read(fd, 65536)
            assert chunk, seen[-500:]
            seen += chunk
    return seen


def assert_record_replays(path: Path) -> dict:
    assert path.is_file() and not list(path.parent.glob(".record-*"))
    return replay_record(load_record(path))


# -- play --save --------------------------------------------------------------------------------
def play_args(*extra: str) -> list[str]:
    return ["play", "--opponents", "random", "--seed", "3", "--target-score", "20", *extra]


@pytest.mark.parametrize("make_path, fragment", [
    (lambda d: d, "is a directory"),
    (lambda d: d / "missing" / "r.json", "does not exist"),
    (lambda d: (d / "f").write_text("x") and d / "f" / "r.json", "is not a directory"),
    (lambda d: (d / "old.json").write_text("{}") and d / "old.json", "pass --overwrite"),
])  # fmt: skip
def test_play_save_path_is_checked_before_the_match(tmp_path, capsys, make_path, fragment):
    path = make_path(tmp_path)
    assert dominoes_main(play_args("--save", str(path))) == 2
    out, err = capsys.readouterr()
    assert fragment in one_error_line(err) and out == ""  # refused before the match began


@pytest.mark.skipif(not os.path.isdir("/sys") or os.access("/sys/fs", os.W_OK)
                    and os.path.ismount("/sys") is False, reason="needs a read-only /sys")
def test_play_save_into_a_read_only_folder(capsys):
    assert dominoes_main(play_args("--save", "/sys/record.json")) == 2
    assert "cannot write into '/sys'" in one_error_line(capsys.readouterr().err)


def test_play_overwrite_replaces_an_existing_record(tmp_path, monkeypatch, capsys):
    path = tmp_path / "r.json"
    path.write_text("old")
    monkeypatch.setattr(sys, "stdin", open(os.devnull))  # end of input: the human quits
    assert dominoes_main(play_args("--save", str(path), "--overwrite")) == 0
    assert "Record saved to" in capsys.readouterr().out
    assert_record_replays(path)


def test_play_ctrl_c_at_the_prompt_saves_the_record(tmp_path):
    path = tmp_path / "r.json"
    proc = spawn("dominoes_env", *play_args("--save", str(path)), stdin=subprocess.PIPE,
                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wait_for(proc.stdout, b"Your move", proc)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=helpers.CHILD_TIMEOUT_S)
    assert proc.returncode == 130
    assert one_error_line(err.decode()) == f"error: interrupted; record saved to {path}"
    assert_record_replays(path)


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_play_stopped_by_sigterm_or_a_closed_terminal_saves_the_record(tmp_path, signum, status):
    path = tmp_path / "r.json"
    proc = spawn("dominoes_env", *play_args("--save", str(path)), stdin=subprocess.PIPE,
                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wait_for(proc.stdout, b"Your move", proc)
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=helpers.CHILD_TIMEOUT_S)
    assert proc.returncode == status
    name = signal.Signals(signum).name
    assert one_error_line(err.decode()) == f"error: stopped by {name}; record saved to {path}"
    assert_record_replays(path)


def test_make_dataset_stopped_by_sigterm_keeps_its_games_and_says_so(tmp_path):
    # it died of the signal (status -15), without the line saying what was kept
    out = tmp_path / "ds"
    proc = spawn("experiments.make_dataset", "--agents", "random", helpers.SLOW, "--matches",
                 "400", "--target-score", "60", "--quiet", "--out", str(out),
                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    helpers.wait_for_lines(out / MATCHES_FILE, 2, proc)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=helpers.CHILD_TIMEOUT_S)
    assert proc.returncode == 143, err
    assert err.splitlines() == [f"error: stopped by SIGTERM; finished games are saved in {out}; "
                                "run the same command again to finish"], err
    assert len(lines_of(out / MATCHES_FILE)) >= 2


def test_make_dataset_on_a_full_disk_names_the_file_and_a_rerun_finishes(tmp_path):
    """A decision file that did not fit (here a file-size limit past the games' records) ended
    with ``error: [Errno 27] File too large``: no file named, and no word of what was kept."""
    from experiments.make_dataset import main as make_dataset_main

    args = ["--agents", "random", "greedy", "--matches", "20", "--quiet", "--out",
            str(tmp_path / "ds")]
    proc = spawn("experiments.make_dataset", *args, limit_bytes=30_000,
                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, err = proc.communicate(timeout=helpers.CHILD_TIMEOUT_S)
    assert proc.returncode == 2, err
    line = one_error_line(err)
    assert line.startswith(f"error: cannot write the dataset in {str(tmp_path / 'ds')!r} (")
    assert "decisions-" in line and "File too large" in line, line
    assert line.endswith("the games finished there are kept: run the same command again to "
                         "finish")
    assert not [f for _, _, files in os.walk(tmp_path) for f in files if f.endswith(".tmp")]
    assert make_dataset_main(args) == 0
    info = json.loads((tmp_path / "ds" / "dataset.json").read_text())
    assert info["complete"] and info["matches"] == 20


def test_play_reads_bytes_that_are_not_utf8_as_a_bad_move(tmp_path):
    path = tmp_path / "r.json"
    proc = spawn("dominoes_env", *play_args("--save", str(path)), stdin=subprocess.PIPE,
                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.communicate(b"\xff\xfe1\n" + b"q\n", timeout=helpers.CHILD_TIMEOUT_S)
    assert proc.returncode == 0, err.decode()
    assert b"is not a number" in out and b"Traceback" not in err
    assert_record_replays(path)


def test_play_input_that_cannot_be_decoded_at_all_is_one_line(tmp_path):
    """``PYTHONIOENCODING=utf-16`` and typed text with no byte-order mark: the decoder fails on
    the stream's start, which ``errors="replace"`` does not cover, and the game ended in a
    ``UnicodeError`` traceback; it ends as on ``q``, with one line, and its record is saved."""
    path = tmp_path / "r.json"
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONIOENCODING": "utf-16"}
    proc = subprocess.Popen([sys.executable, "-m", "dominoes_env", *play_args("--save",
                                                                           str(path))],
                            cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    _, err = proc.communicate(b"1\nq\n", timeout=helpers.CHILD_TIMEOUT_S)
    assert proc.returncode == 2, err
    line = one_error_line(err.decode("utf-16"))
    assert line.startswith("error: standard input cannot be read as utf-16: "), line
    assert "record saved to" in line
    assert_record_replays(path)


def test_play_save_to_a_symbolic_link_is_refused(tmp_path, capsys):
    (tmp_path / "target.json").write_text("{}")
    (tmp_path / "link.json").symlink_to(tmp_path / "target.json")
    assert dominoes_main(play_args("--save", str(tmp_path / "link.json"), "--overwrite")) == 2
    assert "is a symbolic link" in one_error_line(capsys.readouterr().err)
    assert (tmp_path / "target.json").read_text() == "{}"


def test_play_ctrl_c_while_an_agent_thinks_saves_the_record(tmp_path):
    path = tmp_path / "r.json"
    proc = spawn("dominoes_env", "play", "--opponents", f"{TA}:AnnouncingSleeper", "--seed", "1",
                 "--save", str(path), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                 stderr=subprocess.PIPE)
    proc.stdin.write(b"1\n" * 50)
    proc.stdin.flush()
    wait_for(proc.stderr, b"thinking", proc)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=helpers.CHILD_TIMEOUT_S)
    assert proc.returncode == 130 and "record saved" in one_error_line(err.decode())
    assert_record_replays(path)


def test_play_agent_that_raises_ends_with_its_name_and_the_record(tmp_path):
    path = tmp_path / "r.json"
    proc = subprocess.run(
        [sys.executable, "-m", "dominoes_env", "play", "--opponents", f"{TA}:LateRaisingAgent",
         "--seed", "2", "--save", str(path)], cwd=ROOT, input=b"1\n" * 200, capture_output=True,
        timeout=120)
    line = one_error_line(proc.stderr.decode())
    assert proc.returncode == 2
    assert (f"agent '{TA}:LateRaisingAgent' at seat 1 raised RuntimeError in act(): late boom"
            in line)
    assert line.endswith(f"record saved to {path}")
    record = load_record(path)
    assert sum(len(h["moves"]) for h in record["hands"]) >= 4  # 3 agent moves and the human's
    assert_record_replays(path)


def test_play_closed_output_pipe_saves_the_record(tmp_path):
    path = tmp_path / "r.json"
    read, write = os.pipe()
    os.close(read)  # nobody reads the output: the first write fails with EPIPE
    proc = spawn("dominoes_env", *play_args("--save", str(path)), stdin=subprocess.PIPE,
                 stdout=write, stderr=subprocess.PIPE)
    os.close(write)
    _, err = proc.communicate(b"1\n" * 200, timeout=helpers.CHILD_TIMEOUT_S)
    assert proc.returncode == 2
    assert "standard output was closed" in one_error_line(err.decode())
    assert_record_replays(path)


def test_play_full_disk_loses_no_file_and_says_so(tmp_path):
    path = tmp_path / "r.json"
    proc = spawn("dominoes_env", *play_args("--save", str(path)), limit_bytes=100,
                 stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, err = proc.communicate(b"1\n" * 200, timeout=helpers.CHILD_TIMEOUT_S)
    assert proc.returncode == 2
    assert "the record could not be written" in one_error_line(err.decode())
    assert sorted(os.listdir(tmp_path)) == []  # neither half a record nor a temporary file


# -- tournaments: misbehaving agents, specs, file-system faults ------------------------------
def tour(tmp_path, *agents: str, extra=(), out="o") -> list[str]:
    return ["--agents", *agents, "--matches", "6", "--out", str(tmp_path / out), *FAST, *extra]


def lines_of(path: Path) -> list[dict]:
    return [json.loads(ln) for ln in path.read_text().splitlines()]


@pytest.mark.parametrize("agent, what", [
    ("RaisingAgent", "raised RuntimeError in act(): boom from a test agent"),
    ("FloatAgent", "(float), not an action code"),
    ("ExitingAgent", "raised SystemExit in act(): 5"),
])  # fmt: skip
def test_misbehaving_agent_stops_the_run_naming_it(tmp_path, capsys, agent, what):
    args = tour(tmp_path, "random", f"{TA}:{agent}")
    assert tournament_main(args) == 2
    line = one_error_line(capsys.readouterr().err)
    assert f"agent '{TA}:{agent}' at seat " in line and what in line
    assert "(match seed " in line
    finished = lines_of(tmp_path / "o" / MATCHES_FILE)
    if agent == "RaisingAgent":  # the matches before the failing one are kept
        assert len(finished) >= 1
        assert all(rec["winner"] is not None for rec in finished)


#: the programs that ask agents to decide single positions, with flags that keep them short
POSITION_PROGRAMS = {
    "bench_agents": (bench_agents.main, ["--positions", "4"]),
    "decision_quality": (decision_quality.main,
                         ["--positions", "4", "--repeats", "1", "--oracle", "search:sims=4"]),
}


@pytest.mark.parametrize("program", sorted(POSITION_PROGRAMS))
@pytest.mark.parametrize("agent, what", [
    ("BadAnswerAgent:answer=huge", "returned 1000000, not a legal action; legal: ["),
    ("BadAnswerAgent:answer=none", "returned None (NoneType), not an action code"),
    ("BadAnswerAgent:answer=bool", "returned True (bool), not an action code"),
    ("BadAnswerAgent:answer=none,moves=1", "returned None (NoneType), not an action code"),
    ("FloatAgent", "(float), not an action code"),
    ("LateRaisingAgent:moves=0", "raised RuntimeError in act(): late boom"),
    ("LateRaisingAgent:moves=1", "raised RuntimeError in act(): late boom"),
    ("ExitingAgent", "raised SystemExit in act(): 5"),
])  # fmt: skip
def test_misbehaving_agent_stops_the_position_programs_naming_it(program, agent, what, capsys):
    # as a tournament does: one line naming the agent and its seat, status 2; not a KeyError
    # traceback (decision_quality), nor a bad answer timed as a decision (bench_agents).
    # moves=1: the agent's first answer is good, so the timed loop meets the bad one
    main, flags = POSITION_PROGRAMS[program]
    with pytest.raises(SystemExit) as stop:
        main(["greedy", f"{TA}:{agent}", *flags])
    assert stop.value.code == 2
    line = one_error_line(capsys.readouterr().err)
    assert line.startswith(f"error: agent '{TA}:{agent}' at seat ") and what in line, line


def test_a_mock_is_no_agent_for_the_position_programs(capsys):
    # unittest.mock:MagicMock builds and has an act(): its answer is a MagicMock
    for main, flags in POSITION_PROGRAMS.values():
        with pytest.raises(SystemExit) as stop:
            main(["unittest.mock:MagicMock", *flags])
        assert stop.value.code == 2
        assert "agent 'unittest.mock:MagicMock' at seat " in one_error_line(
            capsys.readouterr().err)


@pytest.mark.parametrize("program", ["tournament", "benchmark"])
def test_an_agent_module_that_fails_on_import_is_one_line(tmp_path, monkeypatch, capsys,
                                                         program):
    # a SyntaxError in the user's module was a 47-line traceback and exit status 1
    (tmp_path / "syntax_error_agent.py").write_text("def f(:\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = "syntax_error_agent:A"
    if program == "tournament":
        status = tournament_main(tour(tmp_path, spec, "greedy"))
    else:
        status = benchmark_main([spec, "--tables", "2p", "--panel", "greedy", "--matches", "2",
                                 "--out", str(tmp_path / "o"), "--no-plot", "--no-progress"])
    assert status == 2
    assert one_error_line(capsys.readouterr().err) == (
        f"error: agent spec '{spec}': importing module 'syntax_error_agent' failed with "
        "SyntaxError: invalid syntax (syntax_error_agent.py, line 1)")
    assert not (tmp_path / "o").exists()


#: the longest a run with a hung agent may take to stop, from its start: under a second on a quiet
#: machine, a few seconds at a load of 8 (its worker processes start slower); a stalled
#: shutdown took minutes (524 s once), so this bound still catches it
STOP_LIMIT_S = 60


@pytest.mark.parametrize("workers", ["1", "2"])
def test_hung_agent_is_stopped_by_the_move_time_limit(tmp_path, capsys, workers):
    start = time.monotonic()
    args = tour(tmp_path, "random", f"{TA}:HangingAgent",
                extra=("--move-timeout", "0.5", "--workers", workers))
    assert tournament_main(args) == 2
    assert time.monotonic() - start < STOP_LIMIT_S
    assert "took longer than the move time limit of 0.5 s" in one_error_line(
        capsys.readouterr().err)


def test_a_hung_agent_never_stalls_the_worker_processes_shutdown(tmp_path, capsys):
    # multiprocessing.Pool.terminate() sat in Thread.join for minutes behind a hung agent in
    # about half of such runs; each run here must stop soon after the move time limit
    for attempt in range(5):
        start = time.monotonic()
        args = tour(tmp_path / str(attempt), "random", f"{TA}:HangingAgent",
                    extra=("--move-timeout", "0.5", "--workers", "2", "--matches", "8"))
        assert tournament_main(args) == 2
        assert time.monotonic() - start < STOP_LIMIT_S, f"run {attempt} took too long to stop"
        assert "took longer than the move time limit" in one_error_line(capsys.readouterr().err)


def test_spec_that_cannot_serve_the_table_writes_nothing(tmp_path, capsys, monkeypatch):
    import agents.ppo

    monkeypatch.setattr(agents.ppo, "POLICY_DIR", tmp_path / "policies")  # none shipped
    assert tournament_main(tour(tmp_path, "greedy", "ppo", "random", extra=("--players", "3"))) == 2
    assert "no shipped PPO policy exists for 3 players" in one_error_line(capsys.readouterr().err)
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(("spec", "extra", "fragment"), [
    ("search:value=match", ("--players", "3", "--target-score", "600"),
     "targets up to 500 points"),
    ("guided:value=match", ("--target-score", "1000"), "targets up to 500 points"),
    ("search:value=points", (), "value='points' is not allowed; allowed: margin, match"),
])
def test_match_value_the_rules_cannot_serve_is_one_line(tmp_path, capsys, spec, extra, fragment):
    assert tournament_main(tour(tmp_path, spec, "greedy", extra=extra)) == 2
    assert fragment in one_error_line(capsys.readouterr().err)
    assert not (tmp_path / "o").exists()


def test_workers_are_capped_with_a_warning(tmp_path, capsys):
    assert tournament_main(tour(tmp_path, "random", "greedy", extra=("--workers", "1000"))) == 0
    assert "warning: workers=1000 capped at" in capsys.readouterr().err


@pytest.mark.parametrize("make_out, fragment", [
    (lambda d: (d / "f").write_text("x") and d / "f", "f' is a file, not a folder"),
    (lambda d: (d / "f").write_text("x") and d / "f" / "sub", "f' is a file, not a folder"),
    (lambda d: (d / "o" / MATCHES_FILE).mkdir(parents=True) or d / "o", MATCHES_FILE),
])  # fmt: skip
def test_results_dir_faults_are_one_line_errors(tmp_path, capsys, make_out, fragment):
    out = make_out(tmp_path)
    assert tournament_main(["--agents", "random", "greedy", "--matches", "2", "--out", str(out),
                            *FAST]) == 2
    assert fragment in one_error_line(capsys.readouterr().err)


def test_incomplete_results_line_is_refused(tmp_path, capsys):
    args = tour(tmp_path, "random", "greedy")
    assert tournament_main(args) == 0
    with open(tmp_path / "o" / MATCHES_FILE, "a") as f:
        f.write('{"key": "[0,[\\"random\\",\\"greedy\\"]]"}\n')
    capsys.readouterr()
    assert tournament_main(args) == 2
    assert "is not a match record of this tournament (missing index" in one_error_line(
        capsys.readouterr().err)


def test_full_disk_keeps_finished_matches_and_resume_is_exact(tmp_path):
    args = ["--agents", "random", "greedy", "--matches", "20", *FAST]
    proc = spawn("experiments.tournament", *args, "--out", str(tmp_path / "full"),
                 limit_bytes=1500, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 2
    assert "matches already finished there are kept" in one_error_line(err.decode())
    kept = (tmp_path / "full" / MATCHES_FILE).read_bytes()
    assert 0 < kept.count(b"\n") < 20
    assert tournament_main([*args, "--out", str(tmp_path / "full")]) == 0  # resume
    assert tournament_main([*args, "--out", str(tmp_path / "clean")]) == 0
    strip = lambda recs: [{k: v for k, v in r.items() if k not in TIMING_FIELDS}  # noqa: E731
                          for r in recs]
    assert strip(sorted(lines_of(tmp_path / "full" / MATCHES_FILE), key=lambda r: r["index"])) \
        == strip(lines_of(tmp_path / "clean" / MATCHES_FILE))


# -- bad policy files --------------------------------------------------------------------------
def _policy(tmp_path, name="p.npz", **arrays_changes):
    path = tmp_path / name
    random_policy_npz(path, RuleConfig(), hidden=(8,))
    if arrays_changes:
        with np.load(path) as data:
            arrays = dict(data)
        for key, value in arrays_changes.items():
            if value is None:
                arrays.pop(key)
            else:
                arrays[key] = value
        np.savez(path, **arrays)
    return path


def _bad_policies(tmp_path):
    good = _policy(tmp_path, "good.npz")
    (tmp_path / "empty.npz").write_bytes(b"")
    (tmp_path / "trunc.npz").write_bytes(good.read_bytes()[:300])
    np.save(tmp_path / "arr.npy", np.zeros(3))
    with np.load(good) as data:
        w0 = data["w0"]
    return {
        "missing.npz": "no such file",
        ".": "not a regular file",
        "empty.npz": "not a policy .npz file",
        "trunc.npz": "npz file",
        "arr.npy": "a single .npy array",
        _policy(tmp_path, "nokey.npz", action_b=None).name: "missing action_b",
        _policy(tmp_path, "layers.npz", num_layers=np.array(3)).name: "w1, b1, w2, b2 missing",
        _policy(tmp_path, "neg.npz", num_layers=np.array(-1)).name: "num_layers=-1",
        _policy(tmp_path, "nan.npz", w0=np.full_like(w0, np.nan)).name: "w0 holds NaN",
        _policy(tmp_path, "shape.npz", b0=np.zeros(5)).name: "layer 0 has weights",
        _policy(tmp_path, "meta.npz", metadata=np.array("{")).name: "metadata is not JSON",
        # untrusted input (issue 33): a pickle, a header declaring terabytes, metadata that
        # lacks fields or contradicts the weights
        _policy(tmp_path, "pickle.npz", w0=np.array([{"x": 1}], dtype=object)).name:
            "w0 holds Python objects (a pickle, which is never loaded)",
        helpers.with_a_huge_array_header(_policy(tmp_path, "huge.npz")).name:
            "w0 declares float64 (1000000, 1000000)",
        _policy(tmp_path, "inf.npz", action_b=np.full(112, np.inf)).name: "action_b holds NaN",
        # finite in the file, infinite in float32 (1e300) or float64 (a longdouble 1e400):
        # a tournament played NaN probabilities with status 0
        _policy(tmp_path, "big.npz", w0=w0.astype(np.float64) * 1e300).name:
            "w0 holds a value of magnitude",
        _policy(tmp_path, "long.npz", b0=np.full(8, np.longdouble("1e400"))).name:
            "a policy's weights are float16, float32 or float64",
        _policy(tmp_path, "head.npz", action_w=np.zeros(112)).name: "action_w must be a 2-D",
        _policy(tmp_path, "list.npz", metadata=np.array("[]")).name: "must be a JSON object",
        _meta(tmp_path, "nosize.npz", obs_size=None).name: "metadata lacks obs_size",
        _meta(tmp_path, "size.npz", obs_size=100).name: "metadata says obs_size=100; the "
                                                        "weights have 234",
        _meta(tmp_path, "acts.npz", num_actions=True).name: "metadata says num_actions=True",
        _meta(tmp_path, "rules.npz", rules="double-six").name: "rules must be a JSON object",
        _meta(tmp_path, "nover.npz", obs_version=None).name: "records no obs_version",
        _meta(tmp_path, "ver.npz", obs_version="2").name: "observation version '2', which",
    }


def _meta(tmp_path, name, **changes):
    """A policy whose metadata has ``changes`` (``None``: the field removed)."""
    path = _policy(tmp_path, name)
    with np.load(path) as data:
        arrays = dict(data)
    meta = json.loads(str(arrays["metadata"]))
    meta.update(changes)
    arrays["metadata"] = np.array(json.dumps({k: v for k, v in meta.items() if v is not None}))
    np.savez(path, **arrays)
    return path


def test_bad_policy_files_are_one_clear_error(tmp_path):
    for name, fragment in _bad_policies(tmp_path).items():
        path = tmp_path / name
        with pytest.raises(PolicyFileError) as info:
            PPOAgent(path)
        assert str(path) in str(info.value) and fragment in str(info.value), (name, info.value)


def test_a_policy_expanding_past_its_limit_is_refused_unread(tmp_path, monkeypatch):
    import dominoes_env.policy_format

    path = _policy(tmp_path, "p.npz")
    monkeypatch.setattr(dominoes_env.policy_format, "MAX_POLICY_BYTES", path.stat().st_size // 2)
    with pytest.raises(PolicyFileError, match="its arrays expand to .* bytes; at most"):
        PPOAgent(path)


def test_policy_for_other_rules_is_refused_before_a_match(tmp_path, capsys):
    path = _policy(tmp_path)  # two players, double-six
    assert tournament_main(tour(tmp_path, f"ppo:{path}", "random",
                                extra=("--max-pip", "9"))) == 2
    line = one_error_line(capsys.readouterr().err)
    assert f"the policy at '{path}' takes " in line and "these rules need" in line
    assert not (tmp_path / "o").exists()
    for name in ("trunc.npz", "nan.npz", "big.npz", "long.npz"):
        _bad_policies(tmp_path)
        assert tournament_main(tour(tmp_path, f"ppo:{tmp_path / name}", "random")) == 2
        assert name in one_error_line(capsys.readouterr().err)


# -- replay --------------------------------------------------------------------------------------
def replay_outputs_setup(tmp_path) -> dict[str, Path]:
    """A record, a two-record shard and a tournament folder holding the shard."""
    rec = helpers.random_match(RuleConfig(target_score=50), 10).to_record()
    write_record(rec, tmp_path / "r.json")
    tour_dir = tmp_path / "t"
    (tour_dir / "records").mkdir(parents=True)
    shard = tour_dir / "records" / "s.jsonl.gz"
    append_records(shard, [dict(rec, match={"index": i, "key": str(i)}) for i in range(2)])
    (tmp_path / "old.html").write_text("keep me")
    (tmp_path / "link.json").symlink_to(tmp_path / "old.html")
    return {"R": tmp_path / "r.json", "S": shard, "T": tour_dir, "OLD": tmp_path / "old.html",
            "LINK": tmp_path / "link.json"}


@pytest.mark.parametrize(("args", "fragment"), [
    (["S", "--match", "1", "--extract", "S"], "is an input of this command"),
    (["R", "--html", "R", "--overwrite"], "is an input of this command"),
    (["T", "--match", "1", "--html", "T/records/s.jsonl.gz", "--overwrite"], "is an input"),
    (["R", "--extract", "/dev/stdout"], "is a symbolic link"),
    (["R", "--extract", "LINK", "--overwrite"], "is a symbolic link"),
    (["R", "--html", "OLD"], "exists; pass --overwrite"),
    (["R", "--html", "/dev/null", "--overwrite"], "is not a regular file"),
    (["R", "--html", "x.html", "--extract", "x.html"], "name the same file"),
    (["R", "--html", ""], "is empty"),
])  # fmt: skip
def test_replay_never_overwrites_its_input_a_link_or_a_file_without_overwrite(
        tmp_path, monkeypatch, capsys, args, fragment):
    paths = replay_outputs_setup(tmp_path)
    before = {p: p.read_bytes() for p in paths.values() if p.is_file()}
    monkeypatch.chdir(tmp_path)

    def expand(arg: str) -> str:
        head, _, tail = arg.partition("/")
        return str(paths[head] / tail if tail else paths[head]) if head in paths else arg

    assert dominoes_main(["replay", *map(expand, args)]) == 2
    out, err = capsys.readouterr()
    assert fragment in one_error_line(err) and out == ""
    assert {p: p.read_bytes() for p in before} == before
    assert not (tmp_path / "x.html").exists()


def test_replay_overwrite_replaces_an_earlier_page(tmp_path, capsys):
    paths = replay_outputs_setup(tmp_path)
    assert dominoes_main(["replay", str(paths["R"]), "--html", str(paths["OLD"]),
                          "--overwrite"]) == 0
    assert paths["OLD"].read_text().startswith("<!doctype html>")


def test_replay_never_blocks_on_a_fifo_or_a_device(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for target, fragment in ((fifo, "not a regular file"), ("/dev/zero", "not a regular file"),
                             (tmp_path, "holds no game records")):
        proc = subprocess.run([sys.executable, "-m", "dominoes_env", "replay", str(target)],
                              cwd=ROOT, capture_output=True, text=True,
                              timeout=helpers.CHILD_TIMEOUT_S)
        assert proc.returncode == 2 and fragment in one_error_line(proc.stderr), proc.stderr


def test_replay_output_to_a_full_device_or_a_closed_pipe(tmp_path):
    from .helpers import random_match

    path = tmp_path / "r.json"
    path.write_text(json.dumps(random_match(RuleConfig(target_score=30), 1).to_record()))
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "dominoes_env", "replay", str(path)],
                              cwd=ROOT, stdout=full, stderr=subprocess.PIPE, text=True,
                              timeout=helpers.CHILD_TIMEOUT_S)
    assert proc.returncode == 2
    assert "No space left on device" in one_error_line(proc.stderr)
    read, write = os.pipe()
    os.close(read)
    proc = subprocess.run([sys.executable, "-m", "dominoes_env", "replay", str(path)], cwd=ROOT,
                          stdout=write, stderr=subprocess.PIPE, text=True,
                          timeout=helpers.CHILD_TIMEOUT_S)
    os.close(write)
    assert proc.returncode == 2 and "standard output was closed" in one_error_line(proc.stderr)


# -- train_ppo --------------------------------------------------------------------------------
def test_train_ctrl_c_ends_with_one_line_and_a_resumable_checkpoint(tmp_path):
    pytest.importorskip("sb3_contrib")
    out = tmp_path / "run"
    proc = spawn("experiments.train_ppo", "--total-steps", "1000000", "--n-envs", "2",
                 "--n-steps", "64", "--batch-size", "64", "--net", "8", "--eval-matches", "2",
                 "--target-score", "20", "--opponents", "random=1", "--out", str(out),
                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wait_for(proc.stdout, b"[eval] steps 0", proc, timeout=120)  # training has begun
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130
    last, policy = out / "checkpoints" / "last.zip", out / "policy.npz"
    assert one_error_line(err.decode()) == (
        f"error: interrupted; the run is saved in {last} and its policy exported to {policy}: "
        f"add --resume {last} to the same command to go on")
    assert last.is_file() and policy.is_file()


@pytest.mark.parametrize("flags, fragment", [
    (["--learning-rate", "-1"], "learning_rate=-1.0 is out of range"),
    (["--gae-lambda", "nan"], "gae_lambda=nan must be a finite number"),
    (["--device", "gpu"], "device='gpu'"),
    (["--resume", "/nonexistent/last.zip"], "no such file"),
])  # fmt: skip
def test_train_bad_flags_are_one_line_and_write_nothing(tmp_path, capsys, flags, fragment):
    pytest.importorskip("sb3_contrib")
    from experiments.train_ppo import main as train_main

    try:
        code = train_main([*flags, "--out", str(tmp_path / "run")])
    except SystemExit as stop:  # refused by the parser (a flag's declared range), before main
        code = stop.code
    assert code == 2
    assert fragment in one_error_line(capsys.readouterr().err)
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("main, argv, fragment", [
    (tournament_main, ["--agents", "random", "greedy", "--matches", "1.5"],
     "argument --matches: invalid int value: '1.5'"),
    (dominoes_main, ["replay"], "the following arguments are required: file"),
    (dominoes_main, ["play", "--opponents", "random", "--seed", "x"], "invalid int value: 'x'"),
])  # fmt: skip
def test_usage_errors_are_one_line(capsys, main, argv, fragment):
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and fragment in one_error_line(err) and "--help" in err


def test_agent_that_kills_its_worker_process_does_not_hang_the_run(tmp_path, capsys):
    args = tour(tmp_path, "random", f"{TA}:ProcessKillingAgent", extra=("--workers", "2"))
    assert tournament_main(args) == 2
    assert "a worker process died (exit code 3)" in one_error_line(capsys.readouterr().err)
    assert (tmp_path / "o" / MATCHES_FILE).is_file()


@pytest.mark.parametrize("address, fragment", [
    ("127.0.0.1:1", "no Ray cluster answers at 127.0.0.1:1"),
    ("127.0.0.1:port", "has no valid port"),
    (" 127.0.0.1:1", "Ray address ' 127.0.0.1:1' holds spaces"),  # "Name or service not known"
])  # fmt: skip
def test_a_ray_address_to_nothing_is_one_line_within_seconds(tmp_path, capsys, address, fragment):
    pytest.importorskip("ray")
    start = time.monotonic()
    args = tour(tmp_path, "random", "greedy", extra=("--backend", "ray", "--ray-address", address))
    assert tournament_main(args) == 2
    assert time.monotonic() - start < 30  # Ray itself retried for more than ten minutes
    assert fragment in one_error_line(capsys.readouterr().err)
    assert not (tmp_path / "o").exists()
