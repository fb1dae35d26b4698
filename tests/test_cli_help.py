"""Every flag of every command says in ``--help`` what it does (not just its default)."""

from __future__ import annotations

import argparse
import importlib
import re

import pytest

COMMANDS = ["dominoes_env.cli", "experiments.tournament.cli", "experiments.train_ppo",
            "experiments.make_dataset", "experiments.bench_engine", "experiments.bench_env",
            "experiments.bench_agents", "experiments.demo"]


class _Captured(Exception):
    pass


def _parsers(module_name: str, monkeypatch) -> list[argparse.ArgumentParser]:
    """The parser a command's ``main`` builds (caught at ``parse_args``), with its subcommands."""
    if module_name == "experiments.train_ppo":
        pytest.importorskip("sb3_contrib")
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
