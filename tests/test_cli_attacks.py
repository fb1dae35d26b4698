"""Every program attacked by construction (issue 33, item 4): each ``python -m`` program of the
project (every ``experiments/*.py`` with a ``main``, every ``experiments/`` package with a
``__main__``, and ``python -m dominoes_env`` with its subcommands) is found on the file system,
its flags are read from its own argparse parser, and each flag is fed a table of bad values
chosen by what the flag takes (a number, a file to read, a folder to write, an agent spec...):
0, -1, 10**20, nan, inf, an empty string, a word for a number, a file where a folder is
expected and a folder where a file is, a read-only place, a path inside a missing folder.

Each attack runs ``main(argv)`` in this process, in an empty working directory, the program's
other flags set to valid values that keep any run tiny (``BASE``). It must be refused before
anything starts: exit status 2, exactly one ``error:`` line on stderr, no traceback, nothing
written (the working directory stays empty, the input files stay as they were), and no process
or JAX compilation started (tripwires stop those at once). A value a program legitimately
takes is allowed only where the test knows why: the flag's default, the field's declared range
(``config_field``'s ``low``/``high``), or an entry of ``ALLOWED`` with its reason; the parser
may then take it (the run is not started), or refuse it as any bad value. A huge value of a
flag whose size is memory (``MEMORY``) is never allowed: it must be refused against the
machine's memory. Attacks known to fail in programs this file's author could not fix are
strict xfails (``KNOWN``), so that their fix shows.

The readers of data files, and Ctrl-C or a closed output of the benchmarks, are attacked in
``tests/test_reader_attacks.py``.

A new program or a new flag is attacked the day it is added: a flag whose kind the tables below
do not know fails its case, naming the table to extend.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import importlib
import io
import multiprocessing.process
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from .helpers import (
    PROGRAM_NEEDS,
    discover_programs,
    main_module,
    program_parsers,
    skip_unless_installed,
)

ROOT = Path(__file__).resolve().parents[1]
HUGE = str(10**20)
NET_HUGE = "100000000,100000000"  # two hidden layers of 10**8: 10**16 weights

pytestmark = pytest.mark.timeout(120)


# -- the programs --------------------------------------------------------------------------------
PROGRAMS = discover_programs()


# -- what each flag takes, and the bad values of each kind ---------------------------------------
#: flags that take something other than what their argparse type says, by (program, dest);
#: "*" for every program
KINDS = {
    ("*", "out"): "out_dir", ("*", "save"): "out_file", ("*", "html"): "out_file",
    ("*", "extract"): "out_file", ("*", "resume"): "in_file", ("*", "init"): "in_file",
    ("*", "data"): "in_file", ("*", "opp_policy"): "in_file", ("*", "file"): "in_file",
    ("*", "bc_dataset"): "in_dir", ("experiments.train_rllib", "resume"): "in_dir",
    ("*", "agents"): "spec", ("*", "specs"): "spec", ("*", "agent"): "spec",
    ("*", "panel"): "spec",
    ("*", "opponents"): "spec", ("*", "oracle"): "spec", ("*", "teacher"): "spec",
    ("*", "eval_against"): "spec", ("*", "bc_teacher"): "spec", ("*", "bc_opponents"): "spec",
    ("experiments.train_ppo", "opponents"): "mix", ("*", "net"): "net",
    ("*", "device"): "text", ("*", "address"): "text", ("*", "ray_address"): "text",
    ("*", "bc_agent"): "text", ("*", "match"): "match", ("*", "names"): "notebook",
    ("experiments.paired", "run_a"): "in_dir", ("experiments.paired", "run_b"): "in_dir",
    ("experiments.paired", "reference"): "text",
    # programs that play a policy of their run folder by its agent spec (ppo:OUT/policy.npz)
    **{(f"experiments.{name}", "out"): "policy_out_dir" for name in (
        "train_jax", "train_ppo", "train_rllib", "expert_iteration", "best_response")},
}

#: the bad values of each kind; ``{name}`` is a file of the ``files`` fixture, ``{cwd}`` the
#: (empty) working directory
#: a number in Arabic-Indic digits (Python's int and float read them; '٥', a five, looks like 0)
NOT_ASCII = "\u0661"
#: values of 100,000 characters: an error line quoted them whole (a 100 KB line)
LONG_NUMBER, LONG_WORD = "9" * 100_000, "x" * 100_000
ATTACKS = {
    "int": ["0", "-1", HUGE, "nan", "inf", "", "abc", NOT_ASCII, LONG_NUMBER],
    "float": ["0", "-1", "1e20", "nan", "inf", "", "abc", NOT_ASCII, LONG_NUMBER],
    "choice": ["", "abc", "-1", LONG_WORD],
    "text": ["", "abc"],
    "match": ["", "abc", "-1", HUGE, LONG_WORD],
    "net": ["", "abc", "0", "-1", "nan", NET_HUGE, "\u0668"],
    "spec": ["", "nosuch", "search:sims=-1", "search:sims=\u0661\u0660", "ppo:{missing}",
             "ppo:{folder}", "ppo:{empty}", "ppo:{random}", "ppo:{truncated}",
             "search:sims=2,,", "ppo:{policy},", LONG_WORD],
    "mix": ["", "abc", "greedy=-1", "greedy=nan", "greedy=inf", "nosuch=1"],
    "out_dir": ["", "{file}", "{file}/run", "/proc/attack/run", "{readonly}/run", "missing/run"],
    # a folder no agent spec can name a policy in: ',' and '=' separate a spec's parameters
    "policy_out_dir": ["", "{file}", "{file}/run", "/proc/attack/run", "{readonly}/run",
                       "missing/run", "c,d/run", "lr=3e-4/run"],
    "out_file": ["", "{folder}", "{file}/out.x", "/proc/attack/out.x", "{readonly}/out.x",
                 "missing/out.x", "{existing}"],
    "in_file": ["", "{missing}", "{folder}", "{empty}", "{random}", "{truncated}"],
    "in_dir": ["", "{missing}", "{file}", "{folder}", "{random}"],
    "notebook": ["", "abc", "{folder}", "{file}"],
}

#: flags whose size is memory (games, environments, batches, workers, networks): a huge value
#: must be refused against the machine's memory before anything starts, whatever the range a
#: field declares
MEMORY = {"num_envs", "n_envs", "batches", "jax_envs", "ppo_envs", "minibatch", "batch_size",
          "train_batch_size", "minibatch_size", "env_runners", "envs_per_runner", "num_steps",
          "n_steps", "steps", "snapshots", "net", "workers", "positions",
          "num_minibatches"}

#: values a program legitimately takes though they are in the tables of bad values, by
#: (program or "*", dest, value): the reason (a flag's own default is always allowed)
ALLOWED = {
    ("*", "seed", "0"): "a seed is any integer in 0..2**64 - 1 (MAX_SEED): -1 and 10**20 are "
                        "refused by every program",
    ("*", "out", "missing/run"): "an output folder is made with its missing parents, as "
                                 "results/tournament-<hash> is",
    ("*", "max_hands", HUGE): "a match ends at its target score whatever the limit",
    ("*", "boneyard_reserve", "0"): "0 is the rules' default (no tile kept back)",
    ("experiments.tournament", "workers", HUGE): "more workers than CPUs are capped with a "
                                                 "warning (documented in --help)",
    ("experiments.demo", "workers", HUGE): "the tournament engine caps the workers at the CPUs",
    ("experiments.make_dataset", "workers", HUGE): "the tournament engine caps the workers at "
                                                   "the CPUs",
    ("dominoes_env", "seat", "0"): "seat 0 is a seat of every table",
    ("experiments.tournament", "move_timeout", "0"): "0 is no limit (documented in --help)",
}

#: valid values for every program's flags that keep any run tiny (an attack replaces one)
BASE: dict[str, dict[str, list[str]]] = {
    "experiments.bench_agents": {"specs": ["random"], "--positions": ["2"]},
    "experiments.benchmark": {"agent": ["greedy"], "--panel": ["random"], "--tables": ["2p"],
                              "--matches": ["2"], "--target-score": ["20"], "--out": ["run"],
                              "--no-progress": [], "--no-plot": []},
    "experiments.bench_engine": {"--seconds": ["0.01"], "--repeats": ["1"]},
    "experiments.bench_env": {"--seconds": ["0.01"], "--repeats": ["1"]},
    "experiments.bench_jax": {"--batches": ["1"], "--steps": ["1"], "--seconds": ["0.01"],
                              "--repeats": ["1"]},
    "experiments.bench_jax_observe": {"--configs": ["double-six-2p"], "--batch": ["1"],
                                      "--repeats": ["1"]},
    "experiments.bench_jax_pieces": {"--batch": ["1"], "--repeats": ["1"], "--calls": ["1"]},
    "experiments.bench_training": {"--net": ["8"], "--num-steps": ["2"], "--minibatch": ["4"],
                                   "--epochs": ["1"], "--jax-envs": ["2"], "--ppo-envs": ["2"],
                                   "--updates": ["1"], "--no-matmul": []},
    "experiments.best_response": {"--agent": ["greedy"], "--steps": ["64"], "--matches": ["2"],
                                  "--num-envs": ["2"], "--out": ["run"]},
    "experiments.decision_quality": {"specs": ["greedy"], "--oracle": ["guided:sims=8,race=0"],
                                     "--positions": ["2"], "--repeats": ["1"]},
    "experiments.demo": {"--matches": ["2"], "--workers": ["1"], "--target-score": ["20"],
                         "--out": ["run"]},
    "experiments.docs_notebooks": {},
    "experiments.expert_iteration": {"--out": ["run"], "--teacher": ["greedy"],
                                     "--opponents": ["greedy"], "--matches": ["2"],
                                     "--epochs": ["1"], "--batch-size": ["8"],
                                     "--workers": ["1"], "--eval-against": ["greedy"]},
    "experiments.make_dataset": {"--agents": ["random", "greedy"], "--matches": ["2"],
                                 "--out": ["run"], "--target-score": ["20"], "--quiet": []},
    "experiments.paired": {"run_a": ["{run_a}"], "run_b": ["{run_b}"]},
    "experiments.tournament": {"--agents": ["random", "greedy"], "--matches": ["2"],
                               "--out": ["run"], "--target-score": ["20"], "--quiet": [],
                               "--no-plots": []},
    "experiments.train_jax": {"--total-steps": ["8"], "--num-envs": ["2"], "--num-steps": ["2"],
                              "--num-minibatches": ["1"], "--update-epochs": ["1"],
                              "--net": ["8"], "--eval-every": ["0"], "--eval-matches": ["2"],
                              "--devices": ["1"], "--out": ["run"], "--no-progress": []},
    "experiments.train_ppo": {"--total-steps": ["64"], "--n-envs": ["2"], "--n-steps": ["32"],
                              "--batch-size": ["32"], "--net": ["8"], "--eval-matches": ["2"],
                              "--opponents": ["random=1"], "--out": ["run"]},
    "experiments.train_rllib": {"--iterations": ["1"], "--env-runners": ["0"],
                                "--train-batch-size": ["64"], "--minibatch-size": ["32"],
                                "--epochs": ["1"], "--net": ["8"], "--eval-matches": ["2"],
                                "--out": ["run"]},
    "dominoes_env replay": {"file": ["{shard}"], "--match": ["0"]},
    "dominoes_env play": {"--opponents": ["random"], "--seed": ["1"], "--target-score": ["20"]},
}

#: attacks known to fail, left for their program's owner: (program, dest, value) -> the reason;
#: each is a strict xfail, so that a fix shows (empty: every attack is refused)
KNOWN: dict[tuple[str, str, str], str] = {}
#: the known failures that start work no tripwire stops (a loop of matches in this process):
#: run in a child process with a time and a memory limit instead
ISOLATE: set[tuple[str, str, str]] = set()
#: the limits of such a child process
CHILD_SECONDS, CHILD_BYTES = 20, 8 * 2**30
#: the longest error line an attack may get: a line says what was wrong, in a readable length
MAX_ERROR_LINE = 2000


def flag_kind(program: str, action: argparse.Action) -> str | None:
    dest = action.dest.removeprefix("rule_")
    kind = KINDS.get((program, dest)) or KINDS.get(("*", dest))
    if kind:
        return kind
    if action.choices is not None:
        return "choice"
    name = getattr(action.type, "__name__", None)
    if action.type is int or name == "int":
        return "int"
    if action.type is float or name in ("float", "positive_seconds"):
        return "float"
    return None


def attacked(action: argparse.Action) -> bool:
    return not (isinstance(action, (argparse._HelpAction, argparse._SubParsersAction,
                                    argparse._VersionAction)) or action.nargs == 0)


@dataclasses.dataclass(frozen=True)
class Case:
    program: str  # "experiments.demo", "dominoes_env replay"
    prefix: tuple[str, ...]
    flag: str  # "--matches" or a positional's dest
    dest: str
    kind: str | None
    value: str
    positional: bool

    @property
    def id(self) -> str:
        value = self.value if len(self.value) <= 40 else f"{self.value[:3]}...x{len(self.value)}"
        return f"{self.program.removeprefix('experiments.')} {self.flag}={value!r}"


def cases() -> list[Case]:
    out = []
    for program in PROGRAMS:
        for prefix, parser in program_parsers(program):
            name = " ".join([program, *prefix])
            for action in filter(attacked, parser._actions):
                kind = flag_kind(program, action)
                flag = action.option_strings[0] if action.option_strings else action.dest
                for value in ATTACKS.get(kind, ["(no attacks)"]):
                    out.append(Case(name, tuple(prefix), flag, action.dest, kind, value,
                                    not action.option_strings))
    return out


CASES = cases()


def allowed_because(case: Case, parser: argparse.ArgumentParser) -> str | None:
    """Why the attack's value is a value the program legitimately takes (``None``: it is not)."""
    program = case.program.split()[0]
    dest = case.dest.removeprefix("rule_")
    for key in ((program, dest, case.value), ("*", dest, case.value)):
        if key in ALLOWED:
            return ALLOWED[key]
    action = next(a for a in parser._actions if a.dest == case.dest)
    if case.value == str(action.default) or case.value == "" == action.default:
        return "the flag's default"
    if case.kind not in ("int", "float") or (case.value == HUGE and dest in MEMORY):
        return None
    module = importlib.import_module(main_module(program))
    for obj in vars(module).values():  # the configuration dataclass the parser was built from
        if dataclasses.is_dataclass(obj) and isinstance(obj, type):
            field = {f.name: f for f in dataclasses.fields(obj)}.get(case.dest)
            if field is not None and {"low", "high"} & set(field.metadata):
                try:
                    parser_value = float(case.value)
                    meta = field.metadata
                    low, high = meta.get("low"), meta.get("high")
                    ok = (parser_value == parser_value and abs(parser_value) != float("inf")
                          and (low is None or (parser_value > low if meta.get("low_open")
                                               else parser_value >= low))
                          and (high is None or (parser_value < high if meta.get("high_open")
                                                else parser_value <= high)))
                except ValueError:
                    ok = False
                if ok:
                    return f"within {field.name}'s declared range"
    return None


# -- the files the attacks point at ---------------------------------------------------------------
@pytest.fixture(scope="session")
def files(tmp_path_factory) -> dict[str, str]:
    """Input files for the attacks and the baselines, outside every working directory."""
    import numpy as np

    from agents.ppo import random_policy_npz
    from dominoes_env.core import RuleConfig
    from dominoes_env.record_io import append_records

    from . import helpers

    d = tmp_path_factory.mktemp("attack-files")
    (d / "file.txt").write_text("a file, not a folder")
    (d / "folder").mkdir()
    (d / "empty.npz").write_bytes(b"")
    (d / "random.npz").write_bytes(np.random.default_rng(0).bytes(4096))
    random_policy_npz(d / "policy.npz", RuleConfig(), hidden=(8,))
    (d / "truncated.npz").write_bytes((d / "policy.npz").read_bytes()[:300])
    (d / "existing.x").write_text("keep me")
    record = helpers.random_match(RuleConfig(target_score=30), 3).to_record()
    append_records(d / "records.jsonl.gz",
                   [dict(record, match={"index": i, "key": str(i)}) for i in range(2)])
    from agents.tournament import TournamentConfig, run_tournament

    for name, agent in (("run_a", "greedy"), ("run_b", "random")):  # on the same deals
        run_tournament(TournamentConfig([agent, "search:sims=2"], RuleConfig(target_score=20),
                                        matches=2, seed=1), d / name, progress=False)
    return {"run_a": str(d / "run_a"), "run_b": str(d / "run_b"),
            "file": str(d / "file.txt"), "folder": str(d / "folder"),
            "empty": str(d / "empty.npz"), "random": str(d / "random.npz"),
            "truncated": str(d / "truncated.npz"), "missing": str(d / "missing" / "x.npz"),
            "existing": str(d / "existing.x"), "shard": str(d / "records.jsonl.gz"),
            "policy": str(d / "policy.npz"), "readonly": readonly_folder(d), "root": str(d)}


def readonly_folder(d: Path) -> str:
    """A folder nobody may write into: mode 0o500, or ``/proc`` for root (whom modes don't
    stop)."""
    if os.geteuid() == 0:
        return "/proc"
    folder = d / "readonly"
    folder.mkdir()
    folder.chmod(0o500)
    return str(folder)


def expand(text: str, files: dict[str, str]) -> str:
    return re.sub(r"\{(\w+)\}", lambda m: files[m.group(1)], text)


def command_line(program: str, values: dict[str, list[str]], files: dict[str, str]) -> list[str]:
    """``values`` (flag or positional dest -> its values) as the program's argv."""
    prefix = program.split()[1:]
    positionals = [v for k, vs in values.items() if not k.startswith("-") for v in vs]
    options = [t for k, vs in values.items() if k.startswith("-") for t in (k, *vs)]
    return [*prefix, *[expand(t, files) for t in positionals + options]]


def build_argv(case: Case, files: dict[str, str]) -> list[str]:
    """The program's baseline with the attacked flag's value replaced (a list keeps its valid
    values but the last, which becomes the attack)."""
    values = {k: list(v) for k, v in BASE[case.program].items()}
    key = case.dest if case.positional else case.flag
    kept = values.get(key, [])[:-1]
    values[key] = [*kept, case.value]
    return command_line(case.program, values, files)


def snapshot(folder: str) -> dict[str, tuple[int, float]]:
    found = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            info = os.lstat(path)
            found[path] = (info.st_size, info.st_mtime)
    return found


# -- running an attack ---------------------------------------------------------------------------
class WorkStarted(BaseException):
    """An attack got as far as starting a process: it was not refused before work began."""


@contextlib.contextmanager
def tripwires():
    """No process may start during an attack (a tournament's workers, a vectorised env, a
    trainer run as a child, Ray, a notebook kernel)."""
    def trip(what: str):
        def refuse(*args, **kwargs):
            raise WorkStarted(f"started {what}")
        return refuse

    saved = [(multiprocessing.process.BaseProcess, "start", "a process"),
             (subprocess.Popen, "__init__", "a subprocess")]
    if "jax" in sys.modules:  # the JAX twin is imported already (prepare_jax): its own jits too
        saved.append((sys.modules["jax"], "jit", "a JAX compilation"))
    originals = [getattr(owner, name) for owner, name, _ in saved]
    for owner, name, what in saved:
        setattr(owner, name, trip(what))
    try:
        yield
    finally:
        for (owner, name, _), original in zip(saved, originals, strict=True):
            setattr(owner, name, original)


def prepare_jax() -> None:
    """Import the JAX twin and the library the JAX programs use, so that the tripwire on
    ``jax.jit`` trips on a compilation a program starts, not on a module's own decorators."""
    import pkgutil

    import dominoes_env.jax

    for info in pkgutil.iter_modules(dominoes_env.jax.__path__, "dominoes_env.jax."):
        importlib.import_module(info.name)


def run_attack(program: str, argv: list[str], cwd: Path) -> tuple[object, str, str]:
    """``(exit status, stdout, stderr)`` of ``main(argv)`` run here, in ``cwd``."""
    module = importlib.import_module(main_module(program))
    out, err = io.StringIO(), io.StringIO()
    before = os.getcwd()
    stdin = sys.stdin
    os.chdir(cwd)
    sys.stdin = io.StringIO("")  # an interactive program reads the end of its input
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), tripwires():
            try:
                status = module.main(argv)
            except SystemExit as stop:
                status = stop.code
    finally:
        os.chdir(before)
        sys.stdin = stdin
    return status, out.getvalue(), err.getvalue()


def run_attack_in_child(program: str, argv: list[str], cwd: Path) -> tuple[object, str, str]:
    """``(exit status, stdout, stderr)`` of ``python -m program argv`` in ``cwd``, stopped
    (with every process it started) after ``CHILD_SECONDS``, its memory limited."""
    import resource

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    # no preexec_fn: Python then starts the child without running Python code in a fork of
    # this multithreaded (JAX) process; the memory limit is set on the child right after
    proc = subprocess.Popen([sys.executable, "-m", program, *argv], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    with contextlib.suppress(OSError):  # the child may already have ended
        resource.prlimit(proc.pid, resource.RLIMIT_AS, (CHILD_BYTES, CHILD_BYTES))
    try:
        out, err = proc.communicate(timeout=CHILD_SECONDS)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        err += f"\n(still running after {CHILD_SECONDS} s)"
    return proc.returncode, out, err


def program_of(case: Case) -> str:
    return case.program.split()[0]


def marks(case: Case) -> list:
    program = program_of(case)
    found = [pytest.mark.jax] if PROGRAM_NEEDS.get(program) == "jax" else []
    reason = KNOWN.get((program, case.dest, case.value))
    if reason:
        found.append(pytest.mark.xfail(strict=True, reason=reason))
    return found


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id, marks=marks(c)) for c in CASES])
def test_every_flag_refuses_every_bad_value(case: Case, files, tmp_path):
    program = program_of(case)
    if program in PROGRAM_NEEDS:
        skip_unless_installed(PROGRAM_NEEDS[program])
    if PROGRAM_NEEDS.get(program) == "jax":
        prepare_jax()
    assert case.kind is not None, (
        f"{case.program} {case.flag}: this test does not know what the flag takes; add it to "
        "KINDS (or give it an argparse type), so that it is attacked")
    assert case.program in BASE, f"{case.program}: give BASE valid values for its flags"
    argv = build_argv(case, files)
    parser = dict((tuple(p), q) for p, q in program_parsers(program))[case.prefix]
    reason = allowed_because(case, parser)
    if reason:  # a legitimate value: the parser may take it (the run itself is not started)
        with contextlib.suppress(SystemExit), contextlib.redirect_stderr(io.StringIO()):
            parser.parse_args(argv[len(case.prefix):])
            return  # taken; else refused by the parser: it must be refused as any bad value
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    inputs = snapshot(files["root"])
    try:
        if (program, case.dest, case.value) in ISOLATE:
            status, out, err = run_attack_in_child(program, argv, cwd)
        else:
            status, out, err = run_attack(program, argv, cwd)
    except WorkStarted as started:
        pytest.fail(f"{case.id}: {started} instead of refusing the value (argv {argv})")
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert status == 2 and len(lines) == 1, (status, err[-2000:], argv)
    assert len(lines[0]) <= MAX_ERROR_LINE, f"{case.id}: a line of {len(lines[0]):,} characters"
    assert sorted(os.listdir(cwd)) == [], f"{case.id} wrote {os.listdir(cwd)}"
    assert snapshot(files["root"]) == inputs, f"{case.id} changed its input files"


@pytest.mark.parametrize("program", sorted(BASE))
def test_the_baselines_are_valid(program, files):
    """Each attack changes one flag of a valid command line, so that what refuses it is that
    flag's value, not a missing required flag."""
    name, *prefix = program.split()
    parser = dict((tuple(p), q) for p, q in program_parsers(name))[tuple(prefix)]
    parser.parse_args(command_line(program, BASE[program], files)[len(prefix):])


def test_every_program_found_has_a_baseline():
    """A new program (or subcommand) is attacked the day it is added: it needs its BASE."""
    walked = {" ".join([p, *prefix]) for p in PROGRAMS for prefix, _ in program_parsers(p)}
    assert walked == set(BASE)
    assert {"experiments.tournament", "experiments.train_jax", "dominoes_env"} <= set(PROGRAMS)


# -- flags that must mean what they say ------------------------------------------------------------
def test_every_players_flag_offers_the_same_tables():
    """best_response and expert_iteration took any ``--players`` (5 reached their trainer or
    RuleConfig), where every other program offers 2, 3 or 4 in its usage and refuses the rest
    at the parse."""
    found = []
    for program in PROGRAMS:
        for _prefix, parser in program_parsers(program):
            for action in parser._actions:
                if "--players" in action.option_strings:
                    found.append(program)
                    assert tuple(action.choices or ()) == (2, 3, 4), program
    assert {"experiments.best_response", "experiments.expert_iteration"} <= set(found)


def test_best_response_and_train_jax_refuse_the_same_number_of_updates():
    """best_response restated train_jax's ``MAX_UPDATES`` (2**31 - 1, an int32 update
    counter) as its own ``MAX_JAX_UPDATES``: it now imports the library's one, which
    train_jax's equals."""
    import experiments.best_response as best_response
    import experiments.train_jax as train_jax
    from dominoes_env import cli_support

    assert best_response.MAX_JAX_UPDATES is cli_support.MAX_JAX_UPDATES
    assert train_jax.MAX_UPDATES == cli_support.MAX_JAX_UPDATES == 2**31 - 1


def test_best_response_trains_whole_updates_and_reports_the_steps_trained(tmp_path,
                                                                         monkeypatch, capsys):
    """``best_response --agent guided:sims=2 --steps 16`` trained 4,096 steps (one train_ppo
    update of 16 games; a bar of '4,096/16' and an evaluation every 16 steps), --num-envs was
    train_jax's only, and the report said "steps": 16. Now --steps short of one update is one
    line, --num-envs sizes either trainer, the trainer is asked for whole updates and the
    report gives what it trained."""
    import json

    import agents.evaluation
    import experiments.best_response as program

    for flags, says in [
            (["--agent", "guided:sims=2", "--steps", "16", "--players", "3"],
             "--steps 16 is less than one update of train_ppo: 16 games (--num-envs) x 256 "
             "steps = 4,096"),
            (["--agent", "search:sims=2", "--steps", "64", "--num-envs", "2"],
             "2 games (--num-envs) x 256 steps = 512"),
            (["--agent", "greedy", "--steps", "64"], "512 games (--num-envs) x 32 steps")]:
        assert program.main([*flags, "--matches", "2"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and says in err, err
    seen = {}

    def trainer(module, flags):
        seen["flags"] = flags
        out = Path(flags[flags.index("--out") + 1])
        out.mkdir(parents=True, exist_ok=True)
        total = flags[flags.index("--total-steps") + 1]
        (out / "policy.json").write_text(json.dumps({"steps": int(total)}))
        return 0

    monkeypatch.setattr(program, "run_program", trainer)
    monkeypatch.setattr(agents.evaluation, "evaluate", lambda *a, **k: {
        "win_rate": 0.5, "ci_low": 0.1, "ci_high": 0.9, "margin": 0.0, "matches": 6})
    out = tmp_path / "br"
    assert program.main(["--agent", "search:sims=2", "--steps", "600", "--num-envs", "2",
                         "--matches", "2", "--players", "3", "--out", str(out)]) == 0
    flags = seen["flags"]
    for flag, value in [("--n-envs", "2"), ("--total-steps", "1024"), ("--batch-size", "512"),
                        ("--n-steps", "256")]:
        assert flags[flags.index(flag) + 1] == value, flags
    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert report["steps"] == 1024 and report["matches"] == 6


@pytest.mark.parametrize("trainer, agent, hint", [
    ("train_ppo", "search:sims=2", os.path.join("checkpoints", "last.zip")),
    ("train_jax", "greedy", "checkpoint.npz"),
])
def test_best_response_names_the_run_in_out_as_its_trainers(tmp_path, monkeypatch, capsys,
                                                            trainer, agent, hint):
    """``best_response --agent search:sims=2 --out brp`` run twice said the first run was one
    "of 'experiments.train_ppo', which experiments.train_jax cannot continue": the folder was
    checked as train_jax's whatever trainer the agent needs. It is checked as the trainer's,
    with the checkpoint that trainer resumes from; the other trainer's run is not its own."""
    import experiments.best_response as program
    from dominoes_env.cli_support import check_run_folder, start_run_folder

    def trainer_started(module, flags):
        raise AssertionError(f"{module} started")

    monkeypatch.setattr(program, "run_program", trainer_started)
    out = tmp_path / "brp"
    start_run_folder(check_run_folder(out, f"experiments.{trainer}", {"seed": 0}))
    (out / hint).parent.mkdir(parents=True, exist_ok=True)
    (out / hint).write_bytes(b"a checkpoint")
    argv = ["--steps", "512", "--num-envs", "2", "--matches", "2", "--out", str(out)]
    assert program.main(["--agent", agent, *argv]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line == (f"error: --out {str(out)!r} holds another run (of experiments.{trainer}); "
                    f"pass --resume {out / hint} to continue it, pass --overwrite to replace "
                    "it, or name a new folder")
    other = "greedy" if trainer == "train_ppo" else "search:sims=2"
    assert program.main(["--agent", other, *argv]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert f"holds a run of 'experiments.{trainer}', which experiments." in line, line
    assert f"which experiments.{trainer} cannot" not in line, line


@pytest.mark.parametrize("program, argv, says", [
    ("experiments.bench_jax_observe", ["--configs", "double-six-2p", "double-six-2p"],
     "--configs double-six-2p given twice; list each once"),
    ("experiments.docs_notebooks", ["--quick", "01_game_and_environment",
                                    "01_game_and_environment"],
     "notebook(s) given twice: 01_game_and_environment; list each once"),
])
def test_a_name_given_twice_is_one_line(program, argv, says, capsys):
    """The config was timed twice in two rows of one name, the notebook run twice (bench_jax
    refuses --batches 1 1, the tournament --agents greedy greedy)."""
    module = importlib.import_module(program)
    with pytest.raises(SystemExit) as exit_:
        module.main(argv)
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and says in err and err.count("\n") == 1, err


@pytest.mark.parametrize("program, argv, says", [
    # --lr nan named --eval-matches too, which was fine
    ("experiments.expert_iteration", ["--out", "{tmp}/run", "--lr", "nan"],
     "error: --lr must be a number in (0, 1], not nan\n"),
    ("experiments.expert_iteration", ["--out", "{tmp}/run", "--eval-matches", "-1"],
     "error: --eval-matches must be >= 0, not -1\n"),
    # an empty name was a blank in the list ("unknown notebook(s) ; available: ...")
    ("experiments.docs_notebooks", ["--quick", "", "a b"],
     "error: python -m experiments.docs_notebooks: unknown notebook(s) '', 'a b'; available: "
     "01_game_and_environment, "),
])
def test_a_bad_value_is_named_alone(program, argv, says, tmp_path, capsys):
    """The error line names the flag that is wrong, and no other."""
    module = importlib.import_module(program)
    try:
        code = module.main([a.replace("{tmp}", str(tmp_path)) for a in argv])
    except SystemExit as exit_:
        code = exit_.code
    err = capsys.readouterr().err
    assert code == 2 and err.startswith(says) and err.count("\n") == 1, err
    assert not (tmp_path / "run").exists()


def test_a_suffix_decides_the_format_in_any_case(tmp_path, capsys):
    """``replay --extract x.JSONL.GZ`` wrote plain JSON text under a gzip shard's name (the
    suffix was compared case-sensitively), and a shard of that name was read as JSON;
    ``x.JSON.GZ`` was written as plain JSON too."""
    import gzip

    from dominoes_env.cli import main
    from dominoes_env.core import RuleConfig
    from dominoes_env.core.records import write_record
    from dominoes_env.record_io import iter_records, read_record

    from . import helpers

    record = helpers.random_match(RuleConfig(target_score=30), 1).to_record()
    write_record(record, tmp_path / "r.json")
    shard = tmp_path / "x.JSONL.GZ"
    assert main(["replay", str(tmp_path / "r.json"), "--extract", str(shard)]) == 0
    assert gzip.decompress(shard.read_bytes()).startswith(b"{")
    assert read_record(shard) == record and list(iter_records(shard)) == [record]
    assert main(["replay", str(shard)]) == 0
    capsys.readouterr()
    assert main(["replay", str(tmp_path / "r.json"), "--extract", str(tmp_path / "y.Json.Gz")]) == 2
    assert "not another .gz" in capsys.readouterr().err
    assert not (tmp_path / "y.Json.Gz").exists()


#: the shipped 2-player policy, as a path a user gives (``ppo`` plays it at that table)
SHIPPED_2P = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                          "agents", "policies", "ppo_2p.npz")


@pytest.mark.parametrize("agents, says", [
    (["search:sims=5", "search:sims=05"],
     "agent spec(s) given twice: search:sims=05, search:sims=5; list each agent once"),
    (["random", " random"], "agent spec ' random' has spaces around it; write 'random'"),
    (["random", "greedy\t"], "agent spec 'greedy\\t' has spaces around it; write 'greedy'"),
    (["search:sims=5,epsilon=0", "search:sims=5,epsilon=0.0"],
     "agent spec(s) given twice: search:sims=5,epsilon=0, search:sims=5,epsilon=0.0; list each "
     "agent once"),
    (["search:sims=5", "search:sims=5,epsilon=0.0"],
     "agent spec(s) given twice: search:sims=5, search:sims=5,epsilon=0.0; list each agent "
     "once"),
    (["ppo", f"ppo:{SHIPPED_2P}"],
     f"agent spec(s) given twice: ppo, ppo:{SHIPPED_2P}; list each agent once"),
    # the same number, but not one the agent takes: its own error, not "given twice"
    (["search:sims=5", "search:sims=5.0"],
     "agent spec 'search:sims=5.0': sims=5.0 must be an integer, not float"),
])
def test_agent_specs_are_compared_as_agents(agents, says, tmp_path, capsys):
    """``--agents search:sims=5 search:sims=05`` played one agent against itself (the "given
    twice" check compared the text), and ``random ' random'`` made two rows of one agent; so
    did ``epsilon=0`` next to ``epsilon=0.0``, a default spelt out, and ``ppo`` next to the
    shipped policy's path. ``TournamentConfig`` refuses them with the same words (one check)."""
    from agents.specs import make_agent
    from agents.tournament import TournamentConfig
    from experiments.tournament.cli import main

    with pytest.raises(ValueError) as refused:
        TournamentConfig(["greedy", *agents])
    assert str(refused.value) == says

    out = tmp_path / "t"
    assert main(["--agents", *agents, "--matches", "1", "--out", str(out), "--quiet",
                 "--no-plots"]) == 2
    err = capsys.readouterr().err
    assert err == f"error: {says}\n" and not out.exists(), err
    if "spaces" in says:
        with pytest.raises(ValueError, match="has spaces around it"):
            make_agent(agents[1])


def test_no_number_flag_reads_digit_grouping():
    """``--matches 1_0`` ran 10 matches (also make_dataset --seed 1_000, replay --seat 0_1,
    the spec parameter sims=1_0): Python's int and float read '_' as digit grouping. Every
    number flag of every program refuses it (its argparse type, called as argparse calls it)."""
    from agents.specs import make_agent
    from dominoes_env.policy_format import hidden_sizes

    checked = []
    for case in CASES:
        if case.kind in ("int", "float") and case.value == "0":  # one case per number flag
            parser = dict((tuple(p), parser) for p, parser in program_parsers(
                case.program.split()[0]))[case.prefix]
            action = next(a for a in parser._actions if a.dest == case.dest)
            with pytest.raises((ValueError, TypeError, argparse.ArgumentTypeError)):
                action.type("1_0" if case.kind == "int" else "1_0.5")
            checked.append(case.id)
    assert len(checked) > 50, checked
    with pytest.raises(ValueError, match="net='1_0'"):
        hidden_sizes("1_0")
    with pytest.raises(ValueError, match="sims='1_0' must be an integer"):
        make_agent("search:sims=1_0")


def test_no_number_flag_reads_a_tiny_number_as_zero():
    """``--move-timeout 1e-400`` (a tiny limit) ran with no limit at all: Python's float reads a
    number below the smallest float as 0. Every float flag of every program refuses it (its
    argparse type, called as argparse calls it), and so does a spec parameter."""
    from agents.specs import make_agent

    checked = []
    for case in CASES:
        if case.kind == "float" and case.value == "0":  # one case per float flag
            parser = dict((tuple(p), parser) for p, parser in program_parsers(
                case.program.split()[0]))[case.prefix]
            action = next(a for a in parser._actions if a.dest == case.dest)
            with pytest.raises((ValueError, TypeError, argparse.ArgumentTypeError)):
                action.type("1e-400")
            checked.append(case.id)
    assert len(checked) > 20, checked
    with pytest.raises(ValueError, match="epsilon='1e-400' must be a number"):
        make_agent("search:epsilon=1e-400")
