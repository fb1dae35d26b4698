"""Every flag of every command says in ``--help`` what it does (not just its default)."""

from __future__ import annotations

import argparse
import importlib
import re

import pytest

COMMANDS = ["dominoes_env.cli", "experiments.tournament.cli", "experiments.train_ppo",
            "experiments.make_dataset", "experiments.bench_engine", "experiments.bench_env",
            "experiments.bench_agents", "experiments.demo", "experiments.bench_jax",
            "experiments.bench_training", "experiments.best_response", "experiments.train_jax",
            "experiments.train_rllib", "experiments.docs_notebooks"]
# commands whose module needs an extra beyond the base install: the module it imports
_NEEDS = {"experiments.train_ppo": "sb3_contrib", "experiments.bench_jax": "jax",
          "experiments.bench_training": "jax", "experiments.train_jax": "jax",
          "experiments.best_response": "jax", "experiments.train_rllib": "ray"}


class _Captured(Exception):
    pass


def _parsers(module_name: str, monkeypatch) -> list[argparse.ArgumentParser]:
    """The parser a command's ``main`` builds (caught at ``parse_args``), with its subcommands."""
    if module_name in _NEEDS:
        pytest.importorskip(_NEEDS[module_name])
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
