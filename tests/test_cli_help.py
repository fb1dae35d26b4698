"""Every flag of every command says in ``--help`` what it does (not just its default), and a
flag it does not know is one ``error:`` line with exit status 2, not the whole usage."""

from __future__ import annotations

import argparse
import importlib
import re

import pytest

from agents.ppo import shipped_policy_path

from .helpers import PROGRAM_NEEDS, discover_programs, main_module, skip_unless_installed

#: the module whose ``main`` each ``python -m`` program runs, found on the file system
COMMANDS = [main_module(program) for program in discover_programs()]


class _Captured(Exception):
    pass


def _parsers(module_name: str, monkeypatch) -> list[argparse.ArgumentParser]:
    """The parser a command's ``main`` builds (caught at ``parse_args``), with its subcommands."""
    if module_name in PROGRAM_NEEDS:
        skip_unless_installed(PROGRAM_NEEDS[module_name])
    module = importlib.import_module(module_name)
    seen: list[argparse.ArgumentParser] = []

    def capture(self, *args, **kwargs):
        seen.append(self)
        raise _Captured

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", capture)
    with pytest.raises(_Captured):
        module.main([])
    parsers = list(seen)
    for parser in seen:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                parsers.extend(action.choices.values())
    return parsers


@pytest.mark.parametrize("module_name", COMMANDS)
def test_every_flag_has_a_help_text(module_name, monkeypatch):
    for parser in _parsers(module_name, monkeypatch):
        for action in parser._actions:
            if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
                continue
            name = "/".join(action.option_strings) or action.dest
            text = action.help or ""
            assert text and text is not argparse.SUPPRESS, (parser.prog, name)
            assert not re.fullmatch(r"\(?default .*", text), (parser.prog, name, text)


@pytest.mark.parametrize("module_name", COMMANDS)
def test_every_flag_names_its_default_at_most_once(module_name, monkeypatch):
    """``--help`` read "(default: on with 4 players) (default: None)" and "(default: start a
    local Ray) (default: None)": argparse's formatter appended the default to help texts that
    already said it, and showed ``None``."""
    for parser in _parsers(module_name, monkeypatch):
        formatter = parser._get_formatter()
        for action in parser._actions:
            if action.help in (None, argparse.SUPPRESS):
                continue
            text = formatter._expand_help(action)
            name = "/".join(action.option_strings) or action.dest
            assert text.count("(default") <= 1, (parser.prog, name, text)
            assert "(default: None)" not in text, (parser.prog, name, text)


@pytest.mark.parametrize("module_name", COMMANDS)
def test_an_unknown_flag_is_one_error_line_and_status_2(module_name, capsys):
    """Seven commands printed their whole usage (up to 33 lines) before this test."""
    if module_name in PROGRAM_NEEDS:
        skip_unless_installed(PROGRAM_NEEDS[module_name])
    module = importlib.import_module(module_name)
    argv = ["--no-such-flag"] if module_name != "dominoes_env.cli" else ["play", "--no-such-flag"]
    with pytest.raises(SystemExit) as exit_info:
        module.main(argv)
    assert exit_info.value.code == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), captured.err
    assert "--no-such-flag" in lines[0] or "required" in lines[0], lines[0]


@pytest.mark.parametrize("module_name, argv, says", [
    ("experiments.bench_agents", ["nosuch"], "nosuch"),
    ("experiments.bench_agents", ["search:sims=0"], "sims=0"),
    ("experiments.bench_agents", ["greedy", "--positions", "0"], "--positions"),
    ("experiments.bench_agents", [f"guided:policy={shipped_policy_path('2p')}", "--players", "3"],
     "trained for 2 players; these rules are 3 players"),
    ("experiments.decision_quality", ["greedy", "--oracle", "greedy"], "last_values"),
    ("experiments.decision_quality", ["greedy", "--repeats", "0"], "--repeats"),
    ("experiments.decision_quality", ["nosuch"], "nosuch"),
    ("experiments.demo", ["--matches", "0"], "matches=0"),
    ("experiments.demo", ["--workers", "0"], "--workers"),
    ("experiments.bench_engine", ["--seconds", "-1"], "--seconds"),
    ("experiments.bench_engine", ["--seconds", "inf"], "--seconds"),
    ("experiments.bench_env", ["--seconds", "nan"], "--seconds"),
    ("experiments.bench_jax", ["--seconds", "nan"], "--seconds"),
])
def test_a_bad_value_is_one_error_line_before_any_work(module_name, argv, says, capsys):
    """Before this test these ended in a traceback (an unknown spec, 0 positions or matches, a
    negative time) or ran forever (a time of nan or inf seconds)."""
    if module_name in PROGRAM_NEEDS:
        skip_unless_installed(PROGRAM_NEEDS[module_name])
    module = importlib.import_module(module_name)
    with pytest.raises(SystemExit) as exit_info:
        module.main(argv)
    assert exit_info.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and says in lines[0], lines


@pytest.mark.parametrize("module_name", COMMANDS)
def test_help_to_a_full_device_is_one_error_line_and_status_2(module_name, capsys, monkeypatch):
    """argparse drops a failed write: ``--help > /dev/full`` printed nothing and ended with
    status 0, as if the help had been shown."""
    if module_name in PROGRAM_NEEDS:
        skip_unless_installed(PROGRAM_NEEDS[module_name])
    module = importlib.import_module(module_name)
    with open("/dev/full", "w") as full:
        monkeypatch.setattr("sys.stdout", full)
        with pytest.raises(SystemExit) as exit_info:
            module.main(["--help"])
    assert exit_info.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines == ["error: cannot write the output: No space left on device"], lines


#: each ``python -m`` program and its console script (``pyproject.toml``'s ``[project.scripts]``)
SCRIPTS = {"experiments.train_ppo": "dominoes-train",
           "experiments.tournament": "dominoes-tournament", "dominoes_env": "dominoes"}


@pytest.mark.parametrize("program", discover_programs())
def test_usage_names_the_program_as_it_was_started(program, monkeypatch):
    """``python -m experiments.train_ppo --help`` printed ``usage: dominoes-train`` (and its
    errors ``dominoes-train: error:``), a name the docs never use to start it; the console
    script's name is kept for the console script."""
    main = main_module(program)
    monkeypatch.setattr("sys.argv", ["/somewhere/" + program.rsplit(".", 1)[-1] + ".py"])
    for parser in _parsers(main, monkeypatch):
        assert parser.prog.startswith(f"python -m {program}"), (program, parser.prog)
    if program in SCRIPTS:
        monkeypatch.setattr("sys.argv", [f"/venv/bin/{SCRIPTS[program]}"])
        assert _parsers(main, monkeypatch)[0].prog == SCRIPTS[program]
