"""``train_jax --ship``: a trained policy and its card go to its table's file in
``agents/policies/``, only if it beats the shipped one against greedy."""

from __future__ import annotations

import json

import pytest

import agents.ppo as ppo_module
from agents.ppo import NumpyPolicy, random_policy_npz
from agents.tables import TABLES, table_rules
from experiments import train_jax

#: train_jax's Config checks its observation version and opponents against the JAX game, so
#: every test here starts JAX: they run in the JAX session (conftest.py)
pytestmark = pytest.mark.jax


def run_folder(tmp_path, table):
    """A finished run's folder at ``table``: ``policy.npz`` and its card."""
    out = tmp_path / "run"
    out.mkdir()
    rules = table_rules(table)
    random_policy_npz(out / "policy.npz", rules, hidden=(8,), seed=1)
    (out / "policy.json").write_text(json.dumps({"rules": rules.to_dict(), "steps": 5}))
    flags = {"players": rules.num_players, "partnerships": rules.partnerships}
    return out, train_jax.Config(out=str(out), **flags)


@pytest.fixture
def policy_dir(tmp_path, monkeypatch):
    folder = tmp_path / "policies"
    folder.mkdir()
    monkeypatch.setattr(ppo_module, "POLICY_DIR", folder)
    return folder


@pytest.mark.parametrize("table", TABLES)
def test_ship_copies_to_the_tables_file(tmp_path, policy_dir, monkeypatch, table):
    rates = {}
    monkeypatch.setattr(train_jax, "evaluate_policy", lambda path, config, opponents, matches:
                        {"win_rate_vs_greedy": rates[path.parent.name]})
    out, config = run_folder(tmp_path, table)
    rates["run"] = 0.6
    assert train_jax.ship(out, config, matches=10)
    target = policy_dir / f"ppo_{table}.npz"
    assert sorted(p.name for p in policy_dir.iterdir()) == [f"ppo_{table}.json", target.name]
    assert target.read_bytes() == (out / "policy.npz").read_bytes()
    assert json.loads(target.with_suffix(".json").read_text())["steps"] == 5
    assert NumpyPolicy(target).table == table
    rates["policies"] = 0.6  # the shipped one is as strong: kept
    random_policy_npz(out / "policy.npz", table_rules(table), hidden=(8,), seed=2)
    assert not train_jax.ship(out, config, matches=10)
    assert target.read_bytes() != (out / "policy.npz").read_bytes()


def test_ship_plays_the_free_for_all_table(tmp_path, policy_dir, capsys):
    """A 4-player run without partnerships is evaluated there and lands in its own file, next
    to (not over) the partnership policy."""
    random_policy_npz(policy_dir / "ppo_4p_partnerships.npz", table_rules("4p_partnerships"),
                      hidden=(8,))
    before = (policy_dir / "ppo_4p_partnerships.npz").read_bytes()
    out, config = run_folder(tmp_path, "4p_free_for_all")
    assert train_jax.ship(out, config, matches=2)
    printed = capsys.readouterr().out
    assert "vs greedy over 2 matches: new " in printed and ", shipped -1.000" in printed
    assert f"shipped: {policy_dir / 'ppo_4p_free_for_all.npz'}" in printed
    assert (policy_dir / "ppo_4p_free_for_all.npz").is_file()
    assert (policy_dir / "ppo_4p_partnerships.npz").read_bytes() == before
