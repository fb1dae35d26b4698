"""The output policy, by construction (issue 33): every ``python -m`` program that writes a
folder or a file (found from its own parser: a ``--out``, ``--save``, ``--html`` or
``--extract`` flag) is run twice into the same place. The second run is refused (status 2, one
``error:`` line, the first run's files unchanged, no process started) unless it is the same run
(``--resume``, or a tournament's repeated command) or ``--overwrite`` replaces the first; an
output that is a symbolic link, a device or one of the command's inputs is refused too.

A folder run is stopped as soon as it has started (its run marker is written:
:func:`dominoes_env.cli_support.start_run_folder`), so the test takes seconds whatever the
program trains; a file output (``play --save``, ``replay --html``) is a whole tiny run.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import io
import json
import multiprocessing.process
import os
import resource
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dominoes_env.cli_support import RUN_MARKER, check_run_folder, start_run_folder
from dominoes_env.core.atomic_files import atomic_write, remove_stale_temporaries

from .helpers import (
    CHILD_TIMEOUT_S,
    PROGRAM_NEEDS,
    ROOT,
    discover_programs,
    main_module,
    program_parsers,
    skip_unless_installed,
)

pytestmark = pytest.mark.timeout(180)

#: the flags that name what a program writes, by dest: a folder or a file
OUTPUT_FLAGS = {"out": "folder", "save": "file", "html": "file", "extract": "file"}

#: a tiny run of every program that writes a folder; ``{out}`` is the folder
FOLDER_RUNS = {
    "experiments.tournament": ["--agents", "random", "greedy", "--matches", "2",
                               "--target-score", "20", "--quiet", "--no-plots"],
    "experiments.demo": ["--matches", "2", "--workers", "1", "--target-score", "20"],
    "experiments.make_dataset": ["--agents", "random", "greedy", "--matches", "2",
                                 "--target-score", "20", "--quiet"],
    "experiments.expert_iteration": ["--matches", "2", "--epochs", "1", "--workers", "1",
                                     "--teacher", "greedy", "--opponents", "random",
                                     "--eval-against", "random"],
    "experiments.train_jax": ["--total-steps", "8", "--num-envs", "2", "--num-steps", "2",
                              "--num-minibatches", "1", "--update-epochs", "1", "--net", "8",
                              "--eval-every", "0", "--eval-matches", "2", "--devices", "1",
                              "--no-progress"],
    "experiments.train_ppo": ["--total-steps", "64", "--n-envs", "2", "--n-steps", "32",
                              "--batch-size", "32", "--net", "8", "--eval-matches", "2",
                              "--opponents", "random=1"],
    "experiments.train_rllib": ["--iterations", "1", "--env-runners", "0",
                                "--train-batch-size", "64", "--minibatch-size", "32",
                                "--epochs", "1", "--net", "8", "--eval-matches", "2"],
    "experiments.best_response": ["--agent", "greedy", "--steps", "64", "--matches", "2",
                                  "--num-envs", "2"],
    "experiments.benchmark": ["greedy", "--panel", "random", "--tables", "2p", "--matches", "2",
                              "--no-plot", "--no-progress"],
}
#: what a program starts before its folder, passed over here (the folder starts right after it;
#: what it starts is no part of the output policy): train_rllib starts Ray first, so that a
#: cluster that is not there leaves nothing written
PASSED_OVER = {"experiments.train_rllib": ("init_ray",)}
#: programs whose repeated command continues the run in its folder (a tournament resumes; the
#: demo, a tournament, too: it said "holds another run" to its own command, finished or stopped)
RERUN_RESUMES = {"experiments.tournament", "experiments.make_dataset", "experiments.demo"}
#: programs whose folder is written by another program they run: best_response's run is its
#: trainer's (a subprocess), started here as that trainer with the flags best_response gives it
STARTED_BY = {"experiments.best_response": (
    "experiments.train_jax", ["--total-steps", "64", "--num-envs", "2", "--devices", "1",
                              "--no-progress"])}
#: an output that is an input of the command, by program: ``{out}`` the output, ``{input}`` a
#: file inside it that the command reads (replacing the run would remove it)
OUT_IS_INPUT = {
    "experiments.train_jax": ["--init", "{input}", "--overwrite"],
    "experiments.expert_iteration": ["--init", "{input}", "--overwrite"],
    "experiments.tournament": ["--agents", "greedy", "ppo:{input}", "--overwrite"],
    "experiments.make_dataset": ["--agents", "greedy", "ppo:{input}", "--overwrite"],
    "experiments.benchmark": ["ppo:{input}", "--overwrite"],  # the agent: the positional
}


def output_flags() -> list[tuple[str, tuple[str, ...], str, str]]:
    """``(program, subcommand prefix, flag, "folder" | "file")`` of every output flag found."""
    found = []
    for program in discover_programs():
        for prefix, parser in program_parsers(program):
            for action in parser._actions:
                if action.dest in OUTPUT_FLAGS and action.option_strings:
                    found.append((program, tuple(prefix), action.option_strings[0],
                                  OUTPUT_FLAGS[action.dest]))
    return found


OUTPUTS = output_flags()
#: programs whose folder is not yet under the shared policy, for their owner: (program, test)
#: -> the reason; strict xfails, so that the fix shows
KNOWN: dict[tuple[str, str], str] = {}


def in_process(programs, test: str = "") -> list:
    """pytest params of ``programs`` whose ``main`` runs in the test's own process: a program
    that imports JAX runs in the JAX session only (conftest.py: no fork in a process where JAX
    has started, and the other session forks)."""
    return [pytest.param(p, marks=[
        *([pytest.mark.xfail(strict=True, reason=KNOWN[p, test])] if (p, test) in KNOWN else []),
        *([pytest.mark.jax] if PROGRAM_NEEDS.get(p) == "jax" else [])]) for p in sorted(programs)]


def folder_programs(test: str) -> list:
    """The programs with an output folder, as params of a test that runs them in-process."""
    return in_process({p for p, _, _, kind in OUTPUTS if kind == "folder"}, test)


FOLDER_PROGRAMS = sorted({p for p, _, _, kind in OUTPUTS if kind == "folder"})


class Started(BaseException):
    """A run got as far as starting its folder: the output policy let it start."""


class WorkStarted(BaseException):
    """A refused run started a process first."""


@contextlib.contextmanager
def stop_at_start(program: str):
    """Every run folder the program starts is started for real, then the run is stopped; no
    process may start before (a tripwire)."""
    module = importlib.import_module(main_module(program))
    module = sys.modules[module.main.__module__]  # where main is written (a package's cli)

    def started(folder):
        start_run_folder(folder)
        raise Started(folder.path)

    def refuse(*args, **kwargs):
        raise WorkStarted("a process was started")

    saved = [*((module, name, lambda *args, **kwargs: None)
               for name in PASSED_OVER.get(program, ())),
             (module, "start_run_folder", started),
             (multiprocessing.process.BaseProcess, "start", refuse),
             (subprocess.Popen, "__init__", refuse)]
    originals = [getattr(owner, name, None) for owner, name, _ in saved]
    for owner, name, value in saved:
        setattr(owner, name, value)
    try:
        yield
    finally:
        for (owner, name, _), original in zip(saved, originals, strict=True):
            if original is None:
                delattr(owner, name)
            else:
                setattr(owner, name, original)


def run(program: str, argv: list[str], cwd: Path) -> tuple[object, str]:
    """``(outcome, stderr)`` of ``main(argv)`` in ``cwd``: the exit status, or ``"started"``."""
    module = importlib.import_module(main_module(program))
    err = io.StringIO()
    before, stdin = os.getcwd(), sys.stdin
    os.chdir(cwd)
    sys.stdin = io.StringIO("")
    try:
        with (contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err),
              stop_at_start(program)):
            try:
                status = module.main(argv)
            except SystemExit as stop:
                status = stop.code
            except Started:
                status = "started"
    finally:
        os.chdir(before)
        sys.stdin = stdin
    return status, err.getvalue()


def snapshot(folder: Path) -> dict[str, str]:
    """Every entry under ``folder`` with a digest of its content."""
    found = {}
    for path in sorted(folder.rglob("*")):
        key = str(path.relative_to(folder))
        found[key] = ("dir" if path.is_dir() else
                      hashlib.sha256(path.read_bytes()).hexdigest())
    return found


def assert_refused(status, err: str, *fragments: str) -> None:
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert status == 2 and len(lines) == 1, (status, err[-1500:])
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def needs(program: str) -> None:
    if program in PROGRAM_NEEDS:
        skip_unless_installed(PROGRAM_NEEDS[program])


def start_first_run(program: str, out: Path, cwd: Path) -> dict[str, str]:
    """The first run into ``out``, stopped once started; returns what ``out`` then holds."""
    starter, argv = STARTED_BY.get(program, (program, FOLDER_RUNS[program]))
    status, err = run(starter, [*argv, "--out", str(out)], cwd)
    assert status == "started", (status, err[-1500:])
    marker = json.loads((out / RUN_MARKER).read_text())
    assert marker["program"] == starter
    return snapshot(out)


# -- the programs found --------------------------------------------------------------------------
def test_every_program_with_an_output_folder_has_a_tiny_run():
    """A new program that writes a folder is checked the day it is added: it needs its run."""
    assert set(FOLDER_PROGRAMS) == set(FOLDER_RUNS)
    assert {"experiments.train_jax", "experiments.tournament"} <= set(FOLDER_PROGRAMS)
    files = {(p, f) for p, _, f, kind in OUTPUTS if kind == "file"}
    assert {("dominoes_env", "--save"), ("dominoes_env", "--html")} <= files


# -- a folder: run twice ---------------------------------------------------------------------------
@pytest.mark.parametrize("program", folder_programs("second_run"))
def test_a_second_run_into_the_same_folder_is_refused_unless_overwrite(program, tmp_path):
    needs(program)
    out, cwd = tmp_path / "run", tmp_path / "cwd"
    cwd.mkdir()
    before = start_first_run(program, out, cwd)
    argv = [*FOLDER_RUNS[program], "--out", str(out)]
    # the same command again: refused, but where it is the same run (a tournament resumes)
    status, err = run(program, argv, cwd)
    if program in RERUN_RESUMES and program not in STARTED_BY:
        assert status == "started", (status, err[-1500:])
    else:
        assert_refused(status, err, repr(str(out)), "holds another run", "--overwrite")
    assert snapshot(out) == before
    # another run (another seed) into the same folder: refused, nothing changed
    status, err = run(program, [*argv, "--seed", "7"], cwd)
    assert_refused(status, err, repr(str(out)), "--overwrite")
    assert snapshot(out) == before
    # with --overwrite: the first run's files are replaced by the new run's; a file the user
    # put beside them (no output of the program) stays
    (out / "left-over.txt").write_text("the user's notes")
    if program in STARTED_BY:  # allowed: the trainer's process is started
        with pytest.raises(WorkStarted):
            run(program, [*argv, "--seed", "7", "--overwrite"], cwd)
        return
    status, err = run(program, [*argv, "--seed", "7", "--overwrite"], cwd)
    assert status == "started", (status, err[-1500:])
    marker = json.loads((out / RUN_MARKER).read_text())
    assert marker["program"] == program
    assert sorted(os.listdir(out)) == sorted([RUN_MARKER, "left-over.txt"])
    assert cwd.exists() and os.listdir(cwd) == []


@pytest.mark.parametrize("program", folder_programs("no_run"))
def test_a_folder_that_is_no_run_is_never_emptied(program, tmp_path):
    """``--overwrite`` replaces a run; a folder of other files (no run marker) is refused."""
    needs(program)
    out, cwd = tmp_path / "mine", tmp_path / "cwd"
    cwd.mkdir()
    out.mkdir()
    (out / "thesis.tex").write_text("years of work")
    for extra in ([], ["--overwrite"]):
        status, err = run(program, [*FOLDER_RUNS[program], "--out", str(out), *extra], cwd)
        assert_refused(status, err, "holds files that are not a run's", "thesis.tex")
    assert snapshot(out) == {"thesis.tex": hashlib.sha256(b"years of work").hexdigest()}


@pytest.mark.parametrize("program", folder_programs("link"))
def test_a_folder_output_that_is_a_link_is_refused(program, tmp_path):
    check_link_or_device(program, "link", tmp_path)


@pytest.mark.parametrize("program", folder_programs("device"))
def test_a_folder_output_that_is_a_device_is_refused(program, tmp_path):
    check_link_or_device(program, "device", tmp_path)


@pytest.mark.parametrize("program", folder_programs("long"))
def test_a_folder_output_whose_name_is_too_long_is_one_line(program, tmp_path):
    """A name longer than the file system takes (it was an OSError traceback)."""
    check_link_or_device(program, "long", tmp_path)


def check_link_or_device(program: str, where: str, tmp_path: Path) -> None:
    needs(program)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    target = tmp_path / "target"
    target.mkdir()
    if where == "link":
        out = tmp_path / "link"
        out.symlink_to(target, target_is_directory=True)
    elif where == "long":
        out = tmp_path / ("a" * 300)
    else:
        out = Path(os.devnull)
    for extra in ([], ["--overwrite"]):
        status, err = run(program, [*FOLDER_RUNS[program], "--out", str(out), *extra], cwd)
        assert_refused(status, err, "File name too long" if where == "long" else repr(str(out)))
    assert os.listdir(target) == [] and os.listdir(cwd) == []


#: the programs that write TensorBoard logs into their folder (best_response: its trainer's)
TENSORBOARD = {"experiments.train_jax", "experiments.train_ppo", "experiments.train_rllib",
               "experiments.best_response"}


@pytest.mark.parametrize("program", folder_programs("not utf-8"))
def test_a_folder_named_with_bytes_that_are_not_utf8(program, tmp_path):
    """``train_ppo --out $'run\\xff'`` ended in a UnicodeEncodeError traceback of TensorBoard's
    writer, ``train_jax`` and ``best_response`` in a line naming no file ("'utf-8' codec can't
    encode character '\\udcff'"), each after making the run's folder: a program that writes
    TensorBoard logs refuses such a name before anything is written; the others run there."""
    needs(program)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    out = os.fsdecode(os.fsencode(tmp_path) + b"/run\xff")
    status, err = run(program, [*FOLDER_RUNS[program], "--out", out], cwd)
    if program in TENSORBOARD:
        assert_refused(status, err, "is not UTF-8 text")
        assert not os.path.lexists(out)
    else:
        assert status == "started", (status, err[-1500:])
    assert os.listdir(cwd) == []


@pytest.mark.parametrize("program", in_process(OUT_IS_INPUT))
def test_a_folder_output_that_holds_an_input_is_never_replaced(program, tmp_path):
    """``--out`` holding a file the command reads, with ``--overwrite``: refused (replacing the
    run would remove its own input), the input unchanged."""
    from agents.ppo import random_policy_npz
    from dominoes_env.core import RuleConfig

    needs(program)
    out, cwd = tmp_path / "run", tmp_path / "cwd"
    cwd.mkdir()
    start_first_run(program, out, cwd)
    policy = out / "policy.npz"
    random_policy_npz(policy, RuleConfig(), hidden=(8,))
    before = snapshot(out)
    extra = [a.replace("{input}", str(policy)) for a in OUT_IS_INPUT[program]]
    argv = [*FOLDER_RUNS[program], *extra, "--out", str(out)]
    if "--agents" in extra:  # the agents replace the run's own
        i = FOLDER_RUNS[program].index("--agents")
        argv = [*FOLDER_RUNS[program][:i], *FOLDER_RUNS[program][i + 3:], *extra,
                "--out", str(out)]
    if program == "experiments.benchmark":  # the agent benchmarked replaces the run's own
        argv = [*FOLDER_RUNS[program][1:], *extra, "--out", str(out)]
    status, err = run(program, argv, cwd)
    assert_refused(status, err, "an input of this command", str(policy))
    assert snapshot(out) == before


#: a spec whose policy file is the working directory (``ppo:.``), by program: the flags that
#: give it (the program's own agents replaced)
FOLDER_AS_POLICY = {
    "experiments.tournament": ["--agents", "greedy", "ppo:."],
    "experiments.make_dataset": ["--agents", "greedy", "ppo:."],
    "experiments.expert_iteration": ["--teacher", "ppo:."],
    "experiments.train_ppo": ["--opponents", "ppo:.=1"],
    "experiments.benchmark": ["ppo:."],
}


@pytest.mark.parametrize("program", in_process(FOLDER_AS_POLICY))
def test_a_folder_given_as_a_policy_file_is_named_as_such(program, tmp_path):
    """``--agents ppo:.`` with ``--out`` in the working directory was refused as an output
    inside an input ('.'): the spec is checked first, and its folder named as no policy file."""
    needs(program)
    argv = list(FOLDER_RUNS[program])
    for flag in ("--agents", "--teacher", "--opponents"):  # the run's own agents: replaced
        if flag in FOLDER_AS_POLICY[program] and flag in argv:
            i = argv.index(flag) + 1
            while i < len(argv) and not argv[i].startswith("--"):
                del argv[i]
            del argv[i - 1]
    if program == "experiments.benchmark":
        argv = argv[1:]  # the agent benchmarked is the positional
    status, err = run(program, [*FOLDER_AS_POLICY[program], *argv, "--out", "run"], tmp_path)
    assert_refused(status, err, "agent spec 'ppo:.'", "'.'", "not a", "policy file")
    assert "an input of this command" not in err and os.listdir(tmp_path) == []


def test_guided_policy_ppo_names_no_file_even_beside_a_folder_of_that_name(tmp_path,
                                                                           monkeypatch):
    """``guided:policy=ppo`` (the table's shipped ``ppo`` policy) was refused as "'ppo' is a
    folder, not a policy file" in a working directory holding a folder ``ppo``; it reads no
    file there, so none is an input. ``policy=./ppo`` names the folder and is refused."""
    from dominoes_env.cli_support import RefusedError, paths_in_specs

    (tmp_path / "ppo").mkdir()
    monkeypatch.chdir(tmp_path)
    assert paths_in_specs(["guided:policy=ppo", "guided:sims=8,policy=ppo"]) == []
    assert paths_in_specs(["ppo:ppo/p.npz"]) == []  # no such file
    with pytest.raises(RefusedError, match="'./ppo' is a folder, not a policy file"):
        paths_in_specs(["guided:policy=./ppo"])
    with pytest.raises(RefusedError, match="'ppo' is a folder, not a policy file"):
        paths_in_specs(["ppo:ppo"])  # ppo:PATH has no names: the folder is named


def test_the_folder_policy_does_not_depend_on_a_program(tmp_path):
    """What the refusals above rest on, in one place: the run marker's settings decide whether
    a rerun or a ``--resume`` is the same run."""
    out = tmp_path / "run"
    start_run_folder(check_run_folder(out, "p", {"lr": 0.1, "rules": {"target": 50}}))
    inside, outside = out / "ckpt.npz", tmp_path / "other.npz"
    folder = check_run_folder(out, "p", {"lr": 0.1, "rules": {"target": 50}}, resume=inside)
    assert folder.resumes and not folder.replaces
    with pytest.raises(ValueError, match="pass --resume with its checkpoint"):
        check_run_folder(out, "p", {"lr": 0.1, "rules": {"target": 50}}, resume=outside)
    with pytest.raises(ValueError, match=r"different arguments \(lr: 0.1 there, 0.2 now; "
                                         r"rules.target: 50 there, 60 now\)"):
        check_run_folder(out, "p", {"lr": 0.2, "rules": {"target": 60}}, resume=inside)
    with pytest.raises(ValueError, match="holds a run of 'p', which q cannot continue"):
        check_run_folder(out, "q", {"lr": 0.1, "rules": {"target": 50}}, rerun_resumes=True)
    with pytest.raises(ValueError, match="is, holds or lies in an input"):
        check_run_folder(out / "sub", "p", {}, inputs=(out,))
    (out / RUN_MARKER).write_text("[1, 2")  # a damaged marker: named as such
    with pytest.raises(ValueError, match=r"holds a damaged run.json .*pass --overwrite"):
        check_run_folder(out, "p", {}, resumable=False)
    start_run_folder(check_run_folder(out, "p", {"lr": 1}, overwrite=True))
    assert json.loads((out / RUN_MARKER).read_text())["settings"] == {"lr": 1}


# -- a file: write twice -----------------------------------------------------------------------
def file_command(flag: str, target: str, files: dict[str, str]) -> list[str]:
    """A tiny ``python -m dominoes_env`` command that writes ``target`` with ``flag``."""
    if flag == "--save":
        return ["play", "--opponents", "random", "--seed", "3", "--target-score", "20",
                "--save", target]
    return ["replay", files["record"], flag, target]


@pytest.fixture
def record(tmp_path) -> dict[str, str]:
    from dominoes_env.core import RuleConfig

    from . import helpers

    path = tmp_path / "inputs" / "record.json"
    path.parent.mkdir()
    path.write_text(json.dumps(helpers.random_match(RuleConfig(target_score=30), 3).to_record()))
    return {"record": str(path)}


@pytest.mark.parametrize("program, prefix, flag", sorted(
    (p, pre, f) for p, pre, f, kind in OUTPUTS if kind == "file"))
def test_a_file_output_is_written_once_unless_overwrite(program, prefix, flag, record,
                                                        tmp_path):
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    target = tmp_path / "out" / "written"
    target.parent.mkdir()
    argv = file_command(flag, str(target), record)
    assert argv[0] == prefix[0], "a new subcommand with an output: give it a file_command"
    status, err = run(program, argv, cwd)
    assert status == 0 and target.is_file(), err[-1500:]
    before = target.read_bytes()
    status, err = run(program, argv, cwd)  # again: refused, the file unchanged
    assert_refused(status, err, "exists; pass --overwrite")
    assert target.read_bytes() == before
    status, err = run(program, [*argv, "--overwrite"], cwd)
    assert status == 0, err[-1500:]
    # an input, a link, a device: refused even with --overwrite
    link = tmp_path / "out" / "link"
    link.symlink_to(target)
    bad = [(str(link), "is a symbolic link"), (os.devnull, "is not a regular file")]
    if prefix[0] == "replay":
        bad.append((record["record"], "is an input of this command"))
    for path, fragment in bad:
        status, err = run(program, [*file_command(flag, path, record), "--overwrite"], cwd)
        assert_refused(status, err, fragment)
    assert os.listdir(cwd) == [] and sorted(os.listdir(tmp_path / "out")) == ["link", "written"]
    assert os.path.islink(link) and target.read_bytes() == before


# -- atomic writes: a killed writer's temporary file ---------------------------------------------
@pytest.mark.parametrize("program", [
    "experiments.expert_iteration", "experiments.train_ppo",
    pytest.param("experiments.train_jax", marks=pytest.mark.jax)])
def test_a_closed_standard_output_does_not_stop_a_trainer(program, tmp_path):
    """``train_jax ... | head -c1`` stopped the training at its first progress line with no
    checkpoint (the same command then offered a --resume of a file that was not there);
    ``expert_iteration`` stopped after its demonstrations, ``train_ppo`` after its first line.
    The run goes on to its end; then one line says the output was lost (status 2)."""
    needs(program)
    read, write = os.pipe()
    os.close(read)  # nobody reads the output: the first write fails with EPIPE
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    more = ["--batch-size", "8"] if program == "experiments.expert_iteration" else []  # it trains
    proc = subprocess.run([sys.executable, "-m", program, *FOLDER_RUNS[program], *more,
                           "--out", "run"],
                          cwd=tmp_path, env=env, stdout=write, stderr=subprocess.PIPE,
                          text=True, timeout=CHILD_TIMEOUT_S)
    os.close(write)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert lines[-1] == "error: standard output was closed before the output was written"
    assert (tmp_path / "run" / "policy.npz").is_file(), sorted(os.listdir(tmp_path / "run"))


@pytest.mark.parametrize("program, argv, says", [
    ("experiments.tournament", FOLDER_RUNS["experiments.tournament"], "results: "),
    ("experiments.make_dataset", FOLDER_RUNS["experiments.make_dataset"], "decisions in "),
])
def test_a_path_with_control_characters_is_shown_escaped(program, argv, says, tmp_path):
    """``--out $'esc\\x1b[31mRED\\nx'``: the last line printed the escape and the newline raw
    (the terminal turned red, the line split in two); a path that does not print is shown with
    Python's escapes, as error lines show it."""
    name = "esc\x1b[31mRED\nx"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", program, *argv, "--out", name], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=CHILD_TIMEOUT_S)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "\x1b" not in proc.stdout + proc.stderr
    (line,) = [x for x in (proc.stdout + proc.stderr).splitlines() if says in x]
    assert line.endswith(f"{says}{name!r}"), line
    assert (tmp_path / name).is_dir()


def test_a_run_that_overwrite_cannot_remove_is_named_as_such(tmp_path, monkeypatch):
    """``make_dataset --overwrite`` onto a tournament whose summary.json was immutable: the
    tournament's records were removed, then "cannot write the results ...; matches already
    finished there are kept", as if its own write had failed with matches played. The line
    says the old run could not be removed; the old run's marker is removed last, and stays."""
    import errno

    from dominoes_env.cli_support import RefusedError

    out = tmp_path / "run"
    start_run_folder(check_run_folder(out, "experiments.tournament", {"x": 1},
                                      outputs=("summary.json", "records")))
    (out / "records").mkdir()
    (out / "summary.json").write_text("{}")
    folder = check_run_folder(out, "experiments.make_dataset", {}, overwrite=True,
                              outputs=("dataset.json",))
    unlink = os.unlink

    def immutable(path, *args, **kwargs):
        if str(path).endswith("summary.json"):
            raise PermissionError(errno.EPERM, "Operation not permitted", str(path))
        return unlink(path, *args, **kwargs)

    monkeypatch.setattr(os, "unlink", immutable)
    with pytest.raises(RefusedError, match=r"--overwrite cannot remove the run in .*summary\.json"
                       r".*Operation not permitted.*nothing of this run was written"):
        start_run_folder(folder)
    assert json.loads((out / RUN_MARKER).read_text())["program"] == "experiments.tournament"


def test_a_writer_killed_mid_write_leaves_no_temporary_file_behind(tmp_path):
    """SIGKILL while a checkpoint is rewritten leaves its temporary file (nothing can remove
    it then); the next write of the same file removes it, and a live writer's is kept."""
    target = tmp_path / "checkpoint.npz"
    script = textwrap.dedent(f"""
        import sys, time
        from dominoes_env.core.atomic_files import atomic_write
        with atomic_write({str(target)!r}, "wb") as f:
            f.write(b"x" * 1_000_000)
            f.flush()
            print("writing", flush=True)
            time.sleep(60)
    """)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, env=env,
                            text=True)
    try:
        assert proc.stdout.readline() == "writing\n"
        temporaries = [p.name for p in tmp_path.iterdir()]
        assert len(temporaries) == 1 and temporaries[0].startswith(".checkpoint.npz-tmp-")
        assert remove_stale_temporaries(target) == []  # its writer is alive: kept
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=CHILD_TIMEOUT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert [p.name for p in tmp_path.iterdir()] == temporaries  # left behind by the kill
    with atomic_write(target, "wb") as f:
        f.write(b"whole")
    assert [p.name for p in tmp_path.iterdir()] == ["checkpoint.npz"]
    assert target.read_bytes() == b"whole"


# -- a full disk -----------------------------------------------------------------------------------
#: the file-size limit each program's tiny run is given (past it a write fails with EFBIG, as on a
#: full disk); 3,000 bytes is past the run marker, so the run gets to its own files (a trainer's
#: first checkpoint, a tournament's matches)
FULL_AT = 3000
#: programs the limit cannot be tried on, and why
NOT_UNDER_A_LIMIT = {"experiments.train_rllib": "Ray's own processes inherit the limit and "
                     "cannot start (five attempts, minutes; the error is one line)"}


def private_jax_cache(folder: Path) -> dict[str, str]:
    """The environment of a child whose JAX compilation cache is ``folder``, holding links to
    the entries of the user's cache (so it compiles no more than it would there), so that what
    the child writes stays in ``folder``. JAX writes a cache entry in place, never replacing
    one that exists: under the file-size limit, entries cut at 3,000 bytes were left in
    ``~/.cache/straight-dominoes/jax``, and every later ``train_jax`` of those settings warned
    "Error reading persistent compilation cache entry" and compiled again."""
    real = Path(os.environ.get("JAX_COMPILATION_CACHE_DIR")
                or Path.home() / ".cache" / "straight-dominoes" / "jax")
    folder.mkdir()
    if real.is_dir():
        for entry in real.iterdir():
            if entry.name.endswith("-cache") and entry.is_file():
                (folder / entry.name).symlink_to(entry)
    return {**os.environ, "JAX_COMPILATION_CACHE_DIR": str(folder)}


@pytest.mark.timeout(CHILD_TIMEOUT_S + 60)  # a whole run: a trainer compiles first
@pytest.mark.parametrize("program", FOLDER_PROGRAMS)  # each in a child: none imports JAX here
def test_a_full_disk_ends_every_program_with_one_line(program, tmp_path):
    """Every program that writes a folder, run with too little room: it finishes, or ends with
    status 2 and one ``error:`` line (naming the file when a file's write failed), leaving no
    temporary file. ``train_jax``, ``train_ppo`` and ``best_response`` ended in a traceback
    (status 1): an error with no file name was not a standard output's error."""
    if program in NOT_UNDER_A_LIMIT:
        pytest.skip(NOT_UNDER_A_LIMIT[program])
    needs(program)
    out = tmp_path / "run"

    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (FULL_AT, FULL_AT))

    done = subprocess.run([sys.executable, "-m", program, *FOLDER_RUNS[program], "--out",
                           str(out)], cwd=ROOT, env=private_jax_cache(tmp_path / "cache"),
                          capture_output=True, text=True, timeout=CHILD_TIMEOUT_S,
                          preexec_fn=limit)
    if done.returncode != 0:
        assert_refused(done.returncode, done.stderr)
        assert "File too large" in done.stderr, done.stderr[-1500:]
    assert [name for _, _, names in os.walk(tmp_path) for name in names
            if name.endswith(".tmp")] == []
    written = [p for p in (tmp_path / "cache").iterdir() if not p.is_symlink()]
    assert all(p.stat().st_size <= FULL_AT for p in written)  # what the limit cut stays here


# -- a save that an interruption cannot cut ------------------------------------------------------
@pytest.fixture
def ctrl_c_raises(monkeypatch):
    """Ctrl-C as at a terminal (a test worker may have it ignored), restored afterwards."""
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, old)


@pytest.mark.parametrize("name", ["SIGINT", "SIGTERM", "SIGHUP"])
def test_signals_held_deliver_the_first_stop_after_the_block(ctrl_c_raises, name):
    """A stop signal inside :func:`signals_held` lets the block finish, then reaches the
    handler it would have met: a ``KeyboardInterrupt``, or a command's ``Stopped``."""
    from dominoes_env.cli_support import Stopped, signals_held, stop_on_signals

    restore = stop_on_signals()
    done = []
    try:
        with pytest.raises(KeyboardInterrupt) as stop:
            with signals_held():
                signal.raise_signal(getattr(signal, name))
                signal.raise_signal(signal.SIGINT)  # a second one: only the first is delivered
                done.append("whole")
    finally:
        restore()
    assert done == ["whole"]
    if name == "SIGINT":
        assert type(stop.value) is KeyboardInterrupt
    else:
        assert isinstance(stop.value, Stopped) and stop.value.signum == getattr(signal, name)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_signals_held_leave_an_ignored_signal_ignored(monkeypatch):
    from dominoes_env.cli_support import signals_held

    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with signals_held():
            signal.raise_signal(signal.SIGINT)
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, old)


def test_signals_held_outside_the_main_thread_run_the_block_as_it_is():
    import threading

    from dominoes_env.cli_support import signals_held

    ran = []

    def body():
        with signals_held():
            ran.append(signal.getsignal(signal.SIGINT))

    thread = threading.Thread(target=body)
    thread.start()
    thread.join()
    assert ran == [signal.getsignal(signal.SIGINT)]


def test_a_picture_cut_by_ctrl_c_is_not_left_half_written(tmp_path, monkeypatch):
    """A tournament's plots were written by ``savefig`` straight into their files: a Ctrl-C in
    the middle left half a PNG (and a later reader an unreadable picture)."""
    import matplotlib.figure

    from agents.tournament import TournamentConfig, build_summary, run_tournament
    from agents.tournament.report import plot_heatmap, plot_ratings
    from dominoes_env.core import RuleConfig

    run = run_tournament(TournamentConfig(["random", "greedy"], RuleConfig(target_score=30),
                                          matches=2), tmp_path / "run", progress=False)
    summary = build_summary(run)
    real = matplotlib.figure.Figure.savefig

    def cut(self, fname, *args, **kwargs):
        real(self, fname, *args, **kwargs)
        raise KeyboardInterrupt  # after the bytes are written, before the file is whole

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", cut)
    for plot in (plot_heatmap, plot_ratings):
        with pytest.raises(KeyboardInterrupt):
            plot(summary, tmp_path / "picture.png")
        assert list(tmp_path.glob("*picture*")) == [] and list(tmp_path.glob(".*")) == []
    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", real)
    assert plot_heatmap(summary, tmp_path / "picture.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("where", ["missing folder", "not a folder", "a folder in its place"])
def test_a_file_that_cannot_be_created_is_named_not_its_temporary_file(tmp_path, where):
    """``viewer(record, save="/proc/page.html")`` raised "No such file or directory:
    '/proc/.page.html-tmp-4242-x1y2z3.tmp'": a name the caller never gave; a resumed
    tournament whose summary.json had become a folder said "cannot write the report in 'run'
    (run/.summary.json-tmp-28027-aqu97tfq.tmp: Is a directory)"."""
    (tmp_path / "file.txt").write_text("a file")
    (tmp_path / "page.html").mkdir()
    parent = {"missing folder": tmp_path / "missing", "not a folder": tmp_path / "file.txt",
              "a folder in its place": tmp_path}[where]
    target = parent / "page.html"
    with pytest.raises(OSError) as caught, atomic_write(target) as f:
        f.write("never")
    assert caught.value.filename == str(target), caught.value


def test_overwrite_never_removes_the_working_directory(tmp_path, monkeypatch, capsys):
    """``--out .. --overwrite`` run from inside the run's records/ removed the old run, the
    working directory with it, then could not write the new run (``..`` led nowhere) and said
    that the finished matches were kept: the user was left with nothing."""
    from experiments.tournament import main

    args = ["--agents", "random", "greedy", "--matches", "2", "--target-score", "20",
            "--quiet", "--no-plots", "--save-records"]
    assert main([*args, "--out", str(tmp_path / "run")]) == 0
    before = sorted(p.name for p in (tmp_path / "run").rglob("*"))
    capsys.readouterr()
    monkeypatch.chdir(tmp_path / "run" / "records")
    assert main([*args, "--out", "..", "--overwrite"]) == 2
    err = capsys.readouterr().err
    assert err.count("error:") == 1 and "holds the working directory" in err, err
    assert sorted(p.name for p in (tmp_path / "run").rglob("*")) == before
    monkeypatch.chdir(tmp_path / "run")  # from the run folder itself: nothing of it is removed
    assert main([*args, "--out", ".", "--overwrite"]) == 0


# -- links below a run folder ----------------------------------------------------------------
def run_program(program: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    """``python -m program ARGS`` run whole in ``cwd`` (output captured, text)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", program, *args], cwd=cwd, env=env, text=True,
                          capture_output=True, timeout=CHILD_TIMEOUT_S)


@pytest.mark.parametrize("linked", ["matches/2p", "matches/2p/00-greedy"])
def test_a_link_anywhere_below_a_run_folder_is_refused_not_written_through(tmp_path, linked):
    """A resumed benchmark card whose ``matches/2p`` (or a cell's folder) was a symbolic link
    wrote its ``config.json`` and ``matches.jsonl`` into the link's target, outside ``--out``:
    only the entries at the top of the folder were checked. Every entry below the program's
    outputs is checked now (in the shared :func:`check_run_folder`): one line, nothing
    written there or in the target."""
    argv = ["random", "--tables", "2p", "--panel", "greedy", "--matches", "1", "--no-plot",
            "--no-progress", "--out", "card"]
    done = run_program("experiments.benchmark", *argv, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-1500:]
    target = tmp_path / "elsewhere"  # empty, so that a write through the link shows
    target.mkdir()
    (tmp_path / "card" / linked).rename(tmp_path / "moved")
    (tmp_path / "card" / linked).symlink_to(target, target_is_directory=True)
    before = snapshot(tmp_path / "card")
    done = run_program("experiments.benchmark", *argv, "--resume", cwd=tmp_path)
    assert_refused(done.returncode, done.stderr, repr(linked), "a symbolic link")
    assert snapshot(tmp_path / "card") == before and os.listdir(target) == []
    # the shared check, for every program's outputs: a link deep in a tournament's records
    out = tmp_path / "run"
    start_run_folder(check_run_folder(out, "p", {}, outputs=("records",)))
    (out / "records" / "deep").mkdir(parents=True)
    (out / "records" / "deep" / "shard").symlink_to(tmp_path / "victim")
    with pytest.raises(ValueError, match=r"holds 'records/deep/shard', which is a symbolic"):
        check_run_folder(out, "p", {}, rerun_resumes=True, outputs=("records",))


@pytest.mark.parametrize("program", ["experiments.tournament", "experiments.make_dataset",
                                     "experiments.benchmark"])
def test_a_run_marker_that_is_a_folder_is_one_line_and_overwrite_replaces_it(program,
                                                                            tmp_path):
    """``run.json`` a folder: the marker's reader raised IsADirectoryError from ``os.fdopen``,
    and the runner's handler then failed itself (a ``TypeError`` decoding the error's file
    name, the descriptor 3): a traceback, even with --overwrite."""
    from dominoes_env.cli_support import run_command

    out, cwd = tmp_path / "run", tmp_path / "cwd"
    cwd.mkdir()
    start_first_run(program, out, cwd)
    (out / RUN_MARKER).unlink()
    (out / RUN_MARKER).mkdir()
    extra = ["--resume"] if program == "experiments.benchmark" else []
    status, err = run(program, [*FOLDER_RUNS[program], "--out", str(out), *extra], cwd)
    assert_refused(status, err, repr(str(out)), "--overwrite")
    status, err = run(program, [*FOLDER_RUNS[program], "--out", str(out), "--overwrite"], cwd)
    assert status == "started", (status, err[-1500:])
    assert json.loads((out / RUN_MARKER).read_text())["program"] == program

    def fails() -> int:
        raise IsADirectoryError(21, "Is a directory", 3)

    with contextlib.redirect_stderr(io.StringIO()) as caught:
        assert run_command(fails) == 2
    assert caught.getvalue() == "error: '<file descriptor 3>': Is a directory\n"


#: a damaged run marker -> what the refusal says is wrong with it
DAMAGED_MARKERS = {
    "cut": (lambda m: m[:len(m) // 2], "it is not valid JSON: "),
    "empty": (lambda m: b"", "it is empty"),
    "latin-1": (lambda m: m.replace(b'"program"', b'"pr\xe9gram"'), "not UTF-8 text: byte 0xe9"),
    "UTF-16": (lambda m: m.decode().encode("utf-16"), "not UTF-8 text: byte 0xff at offset 0"),
    "list": (lambda m: b"[1, 2]", "it holds a JSON list, not an object"),
    "huge int": (lambda m: m.replace(b"{", b'{"x": ' + b"9" * 5000 + b",", 1),
                 "a number too long to read"),
    "deep": (lambda m: b"[" * 100_000 + b"]" * 100_000, "it is nested too deeply"),
    "NUL": (lambda m: m.replace(b'"program"', b'"pro\x00gram"'), "Invalid control character"),
    "program 7": (lambda m: m.replace(b'"program": "p"', b'"program": 7'),
                  "its 'program' is 7, not a program's name"),
    "no program": (lambda m: m.replace(b'"program"', b'"programme"'), "it names no 'program'"),
    "key twice": (lambda m: m.replace(b"{", b'{"program": "q",', 1),
                  "the key 'program' appears twice in one object"),
    "folder": (None, "it is a folder, not a file"),
}


@pytest.mark.parametrize("damage", sorted(DAMAGED_MARKERS))
def test_a_damaged_run_marker_is_named_as_damaged_and_why(tmp_path, damage):
    """A damaged ``run.json`` was "another run with different arguments (it is a run of an
    unknown program)", whatever was wrong, and a duplicate key (the last ``program`` won) or
    UTF-16 text was taken as it stood: now the marker is read as strictly as every untrusted
    JSON file, and the refusal names it, says what is wrong and that --overwrite replaces the
    run; a byte order mark is still fine."""
    out = tmp_path / "run"
    start_run_folder(check_run_folder(out, "p", {"seed": 1}))
    marker = out / RUN_MARKER
    whole = marker.read_bytes()
    mutate, why = DAMAGED_MARKERS[damage]
    if mutate is None:
        marker.unlink()
        marker.mkdir()
    else:
        assert mutate(whole) != whole
        marker.write_bytes(mutate(whole))
    with pytest.raises(ValueError) as refused:
        check_run_folder(out, "p", {"seed": 1}, rerun_resumes=True)
    message = str(refused.value)
    assert "holds a damaged run.json (" in message and why in message, message
    assert "--overwrite" in message and "another run" not in message
    folder = check_run_folder(out, "p", {"seed": 1}, overwrite=True)
    start_run_folder(folder)
    assert json.loads(marker.read_text())["program"] == "p"
    marker.write_bytes(b"\xef\xbb\xbf" + whole)  # a byte order mark: the same run
    assert check_run_folder(out, "p", {"seed": 1}, rerun_resumes=True).resumes


#: the programs that save their work when stopped and say so: where they play, and the words
STOP_SAVES = {
    "experiments.tournament": ("experiments.tournament.cli", "run_tournament",
                               "no match had finished"),
    "experiments.make_dataset": ("agents.datasets", "build_dataset", "no game had finished"),
    "experiments.benchmark": ("experiments.benchmark", "run_card",
                              "the card so far are in"),
    "experiments.demo": ("experiments.demo", "run_tournament", "no match had finished"),
}


@pytest.mark.parametrize("signum, status", [(None, 130), (signal.SIGTERM, 143),
                                            (signal.SIGHUP, 129)])
@pytest.mark.parametrize("program", sorted(STOP_SAVES))
def test_a_stopped_run_says_what_it_kept_on_one_line(program, signum, status, tmp_path,
                                                     monkeypatch):
    """SIGTERM and SIGHUP printed three lines (a blank one, "interrupted: finished matches are
    saved in X; ...", "error: stopped by SIGTERM"), a Ctrl-C two: the promise is one line,
    saying how the run stopped, what it kept and how to go on, with the signal's status."""
    from dominoes_env.cli_support import Stopped

    where, name, words = STOP_SAVES[program]

    def stopped(*args, **kwargs):
        raise KeyboardInterrupt if signum is None else Stopped(signum)

    monkeypatch.setattr(importlib.import_module(where), name, stopped)
    module = importlib.import_module(main_module(program))
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        result = module.main([*FOLDER_RUNS[program], "--out", str(tmp_path / "run")])
    how = "interrupted" if signum is None else f"stopped by {signal.Signals(signum).name}"
    lines = err.getvalue().splitlines()
    if program == "experiments.demo":  # its heading comes first
        assert lines[0].startswith("demo tournament: "), lines
        lines = lines[1:]
    assert result == status and len(lines) == 1, (result, lines)
    assert lines[0].startswith(f"error: {how}; ") and words in lines[0], lines


@pytest.mark.parametrize("program, last", [
    ("experiments.demo", "demo finished in "), ("experiments.tournament", "results: "),
    ("experiments.make_dataset", "2 matches, ")])
def test_a_ctrl_c_as_the_last_line_is_printed_leaves_a_finished_run_finished(
        program, last, ctrl_c_raises, tmp_path):
    """The demo said "demo finished in 2.1 s; results in dm3" and ended with status 130: a
    Ctrl-C had landed in the print of that line, inside the command. Once its last line is
    out, a command has ended (``say_finished``)."""

    class CtrlCAtTheEnd(io.StringIO):
        def write(self, text):
            written = super().write(text)
            if text.startswith(last):
                os.kill(os.getpid(), signal.SIGINT)
                for _ in range(1000):  # bytecode, where Python runs a signal's handler
                    pass
            return written

    module = importlib.import_module(main_module(program))
    out = CtrlCAtTheEnd()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        status = module.main([*FOLDER_RUNS[program], "--out", str(tmp_path / "run")])
    assert status == 0 and "error:" not in out.getvalue(), out.getvalue()[-800:]
    assert out.getvalue().splitlines()[-1].startswith(last)


def test_a_stop_after_a_command_has_ended_does_not_change_how_it_ended(tmp_path):
    """A Ctrl-C that landed after the demo's last line ("demo finished ... results in X") made
    the run end with status 130: in the runner's last steps ("error: interrupted" after the
    finished line), or in the interpreter's teardown, which puts the signals' default actions
    back (killed by SIGINT, no line at all). A command that has ended and said so ends so."""
    from dominoes_env.cli_support import run_command

    class FlushThenCtrlC(io.StringIO):
        def flush(self):
            os.kill(os.getpid(), signal.SIGINT)  # lands in the runner, once the body returned
            for _ in range(1000):  # bytecode, where Python runs a signal's handler
                pass

    err = io.StringIO()
    with contextlib.redirect_stdout(FlushThenCtrlC()), contextlib.redirect_stderr(err):
        assert run_command(lambda: 0) == 0
    assert err.getvalue() == ""
    script = tmp_path / "late.py"
    script.write_text(textwrap.dedent("""
        import os, signal, time
        signal.signal(signal.SIGINT, signal.default_int_handler)  # as at a terminal
        from dominoes_env.cli_support import end_program, run_command

        class Late:  # a Ctrl-C while the interpreter tears the finished program down
            def __del__(self):
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(0.2)

        late = Late()
        end_program(run_command(lambda: 0))
    """))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                          text=True, timeout=CHILD_TIMEOUT_S)
    assert done.returncode == 0 and done.stderr == "", (done.returncode, done.stderr)


@pytest.mark.parametrize("program", in_process(
    p for p in FOLDER_PROGRAMS if p not in STARTED_BY and p != "experiments.make_dataset"))
def test_a_refusal_offers_to_continue_only_a_run_this_program_can_continue(program, tmp_path):
    """train_jax onto a dataset said "pass --resume X/checkpoint.npz to continue it" (a dataset
    has no checkpoint), make_dataset or the benchmark onto a trainer's run "repeat its
    arguments to continue it": another program's run is named as such, with --overwrite
    only; and a run of this program with no checkpoint (stopped before its first) is not
    offered a --resume of a file that is not there."""
    needs(program)
    out, cwd = tmp_path / "run", tmp_path / "cwd"
    cwd.mkdir()
    before = start_first_run("experiments.make_dataset", out, cwd)
    status, err = run(program, [*FOLDER_RUNS[program], "--out", str(out)], cwd)
    assert_refused(status, err, "holds a run of 'experiments.make_dataset', which "
                                f"{program} cannot continue", "--overwrite")
    assert "--resume" not in err and "repeat" not in err and snapshot(out) == before
    other = tmp_path / "unsaved"
    start_run_folder(check_run_folder(other, "p", {"lr": 1}))
    for settings in ({"lr": 1}, {"lr": 2}):
        with pytest.raises(ValueError, match=r"it has no checkpoint to continue from "
                                             r"\('.*ck.npz' is not there.*--overwrite") as no:
            check_run_folder(other, "p", settings, resume_hint=str(other / "ck.npz"))
        assert "pass --resume" not in str(no.value)


def test_a_run_started_in_the_folder_after_the_check_is_never_written_over(tmp_path):
    """train_jax checks --out at once but starts its run (locks the folder, writes run.json)
    only once JAX has started, seconds later: a make_dataset --overwrite (or a tournament)
    started and finished there in between, and train_jax then wrote its run marker and
    config.json over the dataset's, without --overwrite; the dataset became 'a run of
    experiments.train_jax'. The folder must still hold what the check saw."""
    out = tmp_path / "run"
    late = check_run_folder(out, "slow", {"lr": 1})  # a new folder
    start_run_folder(check_run_folder(out, "quick", {}))  # another run, started meanwhile
    with pytest.raises(ValueError, match=r"another run \('quick'\) started in .* after this "
                                         r"command checked it"):
        start_run_folder(late)
    assert json.loads((out / RUN_MARKER).read_text())["program"] == "quick"
    late = check_run_folder(out, "slow", {}, overwrite=True)  # replacing the run there...
    start_run_folder(check_run_folder(out, "other", {}, overwrite=True))  # ...replaced first
    with pytest.raises(ValueError, match=r"another run \('other'\) started"):
        start_run_folder(late)
    assert json.loads((out / RUN_MARKER).read_text())["program"] == "other"
    start_run_folder(check_run_folder(out, "other", {}, rerun_resumes=True))  # unchanged: fine


def test_the_api_applies_the_commands_folder_policy_in_its_own_words(tmp_path):
    """``run_tournament`` and ``build_dataset`` called from Python wrote through a symbolic link
    the command refuses, turned a linked tournament into a dataset, and diffed a trainer's or a
    dataset's run as "a tournament with different arguments ... choose another --out
    directory". They check their folder as the commands do, in words without flags; a
    tournament resumes, and ``overwrite=True`` replaces another program's run."""
    import json

    from agents.datasets import build_dataset
    from agents.tournament import TournamentConfig, run_tournament
    from dominoes_env.core import RuleConfig

    cfg = TournamentConfig(["random", "greedy"], RuleConfig(target_score=20), matches=1)
    real = tmp_path / "realdir"
    real.mkdir()
    link = tmp_path / "lnk"
    link.symlink_to(real)
    for play in (run_tournament, build_dataset):
        with pytest.raises(ValueError, match=r"^out '.*lnk' is a symbolic link") as refused:
            play(cfg, link, progress=False)
        assert "--" not in str(refused.value)
    assert os.listdir(real) == []
    trainer = tmp_path / "j1"
    trainer.mkdir()
    (trainer / "run.json").write_text(json.dumps(
        {"program": "experiments.train_jax", "settings": {"anneal_lr": True},
         "outputs": ["config.json", "policy.npz"]}))
    (trainer / "config.json").write_text("{}")
    dataset = tmp_path / "ds"
    build_dataset(cfg, dataset, progress=False)
    for play, folder, program in ((run_tournament, trainer, "experiments.train_jax"),
                                  (run_tournament, dataset, "experiments.make_dataset")):
        with pytest.raises(ValueError, match=rf"holds a run of '{program}', which "
                                             r"experiments.tournament cannot continue; pass "
                                             r"overwrite=True to replace it") as refused:
            play(cfg, folder, progress=False)
        assert "different arguments" not in str(refused.value)
        assert "--" not in str(refused.value)
    tournament = tmp_path / "tr"
    assert run_tournament(cfg, tournament, progress=False).played == 2
    assert run_tournament(cfg, tournament, progress=False).played == 0  # resumed: complete
    with pytest.raises(ValueError, match=r"holds a run of 'experiments.tournament', which "
                                         r"experiments.make_dataset cannot continue"):
        build_dataset(cfg, tournament, progress=False)
    assert build_dataset(cfg, tournament, progress=False, overwrite=True)["matches"] == 2
    assert json.loads((tournament / "run.json").read_text())["program"] == \
        "experiments.make_dataset"
    run_tournament(cfg, trainer, progress=False, overwrite=True)
    assert sorted(os.listdir(trainer)) == ["config.json", "matches.jsonl", "run.json"]


# -- the clear helpers: a run of their own kind, nothing else --------------------------------------
def _tournament(out: Path):
    from agents.tournament import TournamentConfig, run_tournament
    from dominoes_env.core import RuleConfig

    return run_tournament(TournamentConfig(["random", "greedy"], RuleConfig(target_score=30),
                                           matches=2), out, progress=False, save_records=True)


def test_clear_card_removes_only_a_cards_folder(tmp_path):
    """``clear_card('user_proj')`` (public: ``agents.benchmark.__all__``), where user_proj held
    the user's card.json and matches/season1/results.csv and no benchmark.json, deleted both.
    It is refused now (nothing removed); a card's folder is cleared, the user's notes kept."""
    from agents.benchmark import BenchmarkDirError, clear_card

    user = tmp_path / "user_proj"
    (user / "matches" / "season1").mkdir(parents=True)
    (user / "card.json").write_text("{}")
    (user / "matches" / "season1" / "results.csv").write_text("mine")
    with pytest.raises(BenchmarkDirError, match=r"^out '.*user_proj' is not the folder of a "
                                                r"run of experiments.benchmark \(no benchmark"):
        clear_card(user)
    assert (user / "matches" / "season1" / "results.csv").read_text() == "mine"
    assert (user / "card.json").read_text() == "{}"
    (user / RUN_MARKER).write_text(json.dumps({"program": "experiments.tournament"}))
    with pytest.raises(BenchmarkDirError, match="holds a run of 'experiments.tournament', not "):
        clear_card(user)
    (user / RUN_MARKER).write_text(json.dumps({"program": "experiments.benchmark"}))
    (user / "notes.txt").write_text("mine")
    clear_card(user)  # a card's run (its marker says so): its files go, and the marker
    assert os.listdir(user) == ["notes.txt"]
    clear_card(user)  # nothing of a card there: nothing to do
    clear_card(tmp_path / "missing")
    (tmp_path / "lnk").symlink_to(user)
    with pytest.raises(BenchmarkDirError, match="is a symbolic link"):
        clear_card(tmp_path / "lnk")


def test_clear_results_removes_only_a_tournaments_run(tmp_path):
    """``clear_results('cres_ds')`` on a dataset's copy removed its config.json, matches.jsonl
    and records/; it is refused now. A tournament's run goes whole, its run marker too (a
    marker left behind refused the next run of other sizes), the user's files stay."""
    from agents.tournament import TournamentDirError
    from agents.tournament.runner import clear_results

    run = tmp_path / "run"
    _tournament(run)
    (run / "notes.txt").write_text("mine")
    data = tmp_path / "cres_ds"
    data.mkdir()
    for name in ("config.json", "matches.jsonl", "dataset.json"):
        (data / name).write_text((run / name).read_text() if name != "dataset.json" else "{}")
    (data / "records").mkdir()
    with pytest.raises(TournamentDirError, match=r"^out '.*cres_ds' is not the folder of a run"
                                                 r" of experiments.tournament or "
                                                 r"experiments.demo \(it holds 'dataset.json'"):
        clear_results(data)
    (data / RUN_MARKER).write_text(json.dumps({"program": "experiments.make_dataset"}))
    with pytest.raises(TournamentDirError, match="holds a run of 'experiments.make_dataset'"):
        clear_results(data)
    assert sorted(os.listdir(data)) == sorted(["config.json", "matches.jsonl", "dataset.json",
                                               "records", RUN_MARKER])
    clear_results(run)
    assert os.listdir(run) == ["notes.txt"]
    (run / "notes.txt").unlink()
    _tournament(run)  # and a run starts there afresh


def test_clear_records_never_follows_a_link(tmp_path):
    """``clear_records('cr1')`` where cr1/records was a symbolic link to ../outside_recs deleted
    the shards outside cr1; the link alone goes now. A folder that is no tournament's (a
    dataset) is refused."""
    from agents.tournament import TournamentDirError
    from agents.tournament.record_store import clear_records

    run = tmp_path / "cr1"
    _tournament(run)
    (run / "records").rename(tmp_path / "outside_recs")
    (run / "records").symlink_to("../outside_recs")
    shards = sorted(os.listdir(tmp_path / "outside_recs"))
    assert shards
    clear_records(run)
    assert not os.path.lexists(run / "records")
    assert sorted(os.listdir(tmp_path / "outside_recs")) == shards
    (run / RUN_MARKER).write_text(json.dumps({"program": "experiments.make_dataset"}))
    (tmp_path / "outside_recs").rename(run / "records")
    with pytest.raises(TournamentDirError, match="holds a run of 'experiments.make_dataset'"):
        clear_records(run)
    assert sorted(os.listdir(run / "records")) == shards
