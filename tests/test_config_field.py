"""``config_field``: one declaration of a program's flag (default, help, allowed values) that
the command line and the configuration dataclass both enforce."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass

import pytest

from dominoes_env.cli_support import check_config, check_settings, config_field, config_parser

from .helpers import CHILD_TIMEOUT_S


@dataclass
class Run:
    steps: int = config_field(10, "steps to train", low=1)
    lr: float = config_field(3e-4, "learning rate", low=0, high=1, low_open=True)
    share: float = config_field(0.5, "a share", low=0, high=1)
    mode: str = config_field("fast", "how", choices=("fast", "slow"))
    sizes: list[int] = config_field(lambda: [64], "layer sizes", low=1, high=4096)
    cpus: int | None = config_field(None, "CPUs", low=1)
    odd: int = config_field(3, "an int above 2.5", low=2.5, low_open=True)
    name: str = config_field("x", "free text")

    def __post_init__(self):
        check_config(self)


def parse(*argv):
    return config_parser(Run, "train", "Train.").parse_args(list(argv))


def test_good_values_pass_and_are_coerced():
    args = parse("--steps", "5", "--lr", "1", "--share", "0", "--mode", "slow", "--sizes", "8",
                 "16", "--cpus", "2", "--odd", "3")
    assert vars(args) == {"steps": 5, "lr": 1.0, "share": 0.0, "mode": "slow", "sizes": [8, 16],
                          "cpus": 2, "odd": 3, "name": "x"}
    run = Run(**vars(args))
    assert run.sizes == [8, 16] and run.cpus == 2
    np = pytest.importorskip("numpy")
    assert type(Run(steps=np.int64(7)).steps) is int


@pytest.mark.parametrize(("argv", "words"), [
    (["--lr", "0"], ["--lr", "lr=0.0 is out of range; allowed: > 0 and <= 1"]),
    (["--lr", "nan"], ["--lr", "lr=nan must be a finite number"]),
    (["--share", "1.5"], ["--share", "allowed: >= 0 and <= 1"]),
    (["--steps", "0"], ["--steps", "steps=0 is out of range; allowed: >= 1"]),
    (["--steps", "1.5"], ["--steps", "invalid int value: '1.5'"]),
    (["--mode", "medium"], ["--mode", "invalid choice: 'medium'"]),
    (["--sizes", "8", "0"], ["--sizes", "sizes=0 is out of range"]),
    (["--cpus", "0"], ["--cpus", "cpus=0"]),
    (["--odd", "2"], ["--odd", "odd=2 is out of range; allowed: >= 3"]),
])
def test_the_command_line_refuses_a_bad_value_in_one_line(argv, words, capsys):
    with pytest.raises(SystemExit) as stop:
        parse(*argv)
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: train: argument ")
    for word in words:
        assert word in err[0]


@pytest.mark.parametrize(("changes", "error", "message"), [
    ({"lr": 0}, ValueError, "lr=0.0 is out of range"),
    ({"lr": "0.1"}, TypeError, "lr='0.1' must be a number"),
    ({"steps": 2.0}, TypeError, "steps=2.0 must be an integer"),
    ({"steps": True}, TypeError, "steps=True must be an integer"),
    ({"mode": "medium"}, ValueError, "mode='medium' is not allowed; allowed: 'fast', 'slow'"),
    ({"sizes": [8, 0]}, ValueError, "sizes=0 is out of range"),
    ({"sizes": "8"}, TypeError, "sizes='8' must be a list"),
])
def test_the_dataclass_refuses_what_the_command_line_refuses(changes, error, message):
    with pytest.raises(error, match=message.replace("(", r"\(").replace(".", r"\.")):
        Run(**changes)


@dataclass
class Typed:
    fast: bool = config_field(False, "go fast")
    where: str | None = config_field(None, "a folder", path=True)
    specs: list[str] = config_field(lambda: ["a"], "specs")


@pytest.mark.parametrize(("changes", "message"), [
    ({"fast": "no"}, "fast='no' must be true or false, not str"),
    ({"fast": 1}, "fast=1 must be true or false, not int"),
    ({"where": 5}, r"where=5 must be a path \(str or os.PathLike\), not int"),
    ({"where": b"x"}, "where=b'x' must be a path"),
    ({"specs": "ab"}, "specs='ab' must be a list, not str"),
    ({"specs": ["a", 5]}, "specs=5 must be a str, not int"),
])
def test_every_field_is_checked_by_its_declared_type(changes, message):
    """Only fields with choices or a range were checked: a bool field took ``"no"`` (as true),
    a path field a number, a list field a string (read letter by letter)."""

    @dataclass
    class Checked(Typed):
        def __post_init__(self):
            check_config(self)

    with pytest.raises(TypeError, match=f"^{message}"):
        Checked(**changes)
    from pathlib import Path

    good = Checked(fast=True, where=Path("out"), specs=("b", "c"))
    assert (good.fast, good.where, good.specs) == (True, "out", ["b", "c"])


@pytest.mark.parametrize(("settings", "message"), [
    ({"lr": 0}, "lr=0.0 is out of range"),
    ({"steps": "5"}, "steps='5' must be an integer"),
    ({"mode": "medium"}, "mode='medium' is not allowed; allowed: 'fast', 'slow'"),
    ({"mode": None}, "mode=None must be a str, not NoneType"),
    ({"sizes": [8, 0]}, "sizes=0 is out of range"),
    ({"cpus": 0}, "cpus=0 is out of range"),
    # a field without a range still takes its flag's type only
    ({"name": 5}, "name=5 must be a str, not int"),
])
def test_saved_settings_are_held_to_the_command_lines_rules(settings, message):
    """A checkpoint's saved settings (``train_jax --resume``) were read without a check: a
    matmul of 'float16' or null, or update_epochs=-1, was taken."""
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(".", r"\.")):
        check_settings(Run, settings)
    # every value a run may have passes; a name that is no field (another version's) and a
    # field left out are let be; None only where the default is None
    check_settings(Run, {"steps": 5, "lr": 1, "mode": "slow", "sizes": [8], "cpus": None,
                         "name": "y", "removed_since": [1, 2]})


def test_the_help_shows_the_range():
    text = " ".join(config_parser(Run, "train", "Train.").format_help().split())
    assert "learning rate (> 0 and <= 1) (default: 0.0003)" in text


@pytest.mark.parametrize(("kwargs", "message"), [
    (dict(help=""), "needs a help text"),
    (dict(help="h", low=2, high=1), "low=2 is above high=1"),
    (dict(help="h", low="a"), "low='a' must be a number"),
    (dict(help="h", choices=()), "choices is empty"),
])
def test_a_bad_declaration_is_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        config_field(1, **kwargs)


@pytest.mark.parametrize(("module", "argv", "flag"), [
    ("experiments.train_ppo", ["--learning-rate", "0"], "--learning-rate"),
    ("experiments.train_ppo", ["--gamma", "5"], "--gamma"),
    ("experiments.train_ppo", ["--eval-matches", "0"], "--eval-matches"),
    # train_rllib took a learning rate of 0 and a negative number of CPUs before
    ("experiments.train_rllib", ["--lr", "0"], "--lr"),
    ("experiments.train_rllib", ["--gamma", "5"], "--gamma"),
    ("experiments.train_rllib", ["--num-cpus", "-2"], "--num-cpus"),
])
def test_the_training_programs_declare_their_ranges(module, argv, flag, capsys):
    import importlib

    if module.endswith("train_ppo"):
        pytest.importorskip("sb3_contrib")
    program = importlib.import_module(module)
    with pytest.raises(SystemExit) as stop:
        program.main(argv)
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"argument {flag}:" in err[0] and "out of range" in err[0]


def test_train_rllib_refused_a_zero_learning_rate_only_on_the_command_line_too():
    from experiments.train_rllib import RllibConfig

    with pytest.raises(ValueError, match="lr=0.0 is out of range"):
        RllibConfig(lr=0)
    with pytest.raises(ValueError, match="num_cpus=0 is out of range"):
        RllibConfig(num_cpus=0)


def test_memory_sized_values_are_checked_against_the_process_limit():
    """A value that fits the machine but not the process's address-space limit (``ulimit -v``)
    ended in a MemoryError once the run had started; it is refused before any work."""
    code = ("import resource; resource.setrlimit(resource.RLIMIT_AS, (2**31, 2**31)); "
            "from dominoes_env.cli_support import check_fits_in_memory, machine_memory; "
            "assert machine_memory() == 2**31, machine_memory(); "
            "check_fits_in_memory('--positions 10**6', 10**6, 4096)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True,
                          timeout=CHILD_TIMEOUT_S)
    assert proc.returncode == 1 and b"RefusedError: --positions 10**6 needs about 4 GiB" in \
        proc.stderr, proc.stderr
