"""``train_jax --ship``: a trained policy and its card go to its table's file in
``agents/policies/``, only if it beats the shipped one against greedy
(:func:`agents.shipping.ship_if_stronger`), and never from rules other than the table's default
rules: refused before anything is trained or written. A refusal after the training is one
``error:`` line, status 2."""

from __future__ import annotations

import json

import pytest

import agents.evaluation
from agents.ppo import NumpyPolicy, random_policy_npz
from agents.tables import TABLES, table_rules
from experiments import train_jax

from .helpers import fake_shipping_rates, shipped_policies_in

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
    return shipped_policies_in(tmp_path / "policies", monkeypatch)




@pytest.mark.parametrize("table", TABLES)
def test_ship_copies_to_the_tables_file(tmp_path, policy_dir, monkeypatch, table):
    rates = {}
    fake_shipping_rates(monkeypatch, rates)
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


#: 2 updates of 8 games x 4 decisions, evaluated only at the end, over 2 matches
TINY = ["--num-envs", "8", "--num-steps", "4", "--num-minibatches", "2", "--update-epochs",
        "2", "--net", "16", "--total-steps", "64", "--eval-every", "0", "--eval-matches", "2",
        "--checkpoint-every", "64", "--snapshot-every", "1", "--snapshots", "2",
        "--no-progress"]


def test_ship_with_rules_other_than_the_tables_default_is_refused_before_training(
        tmp_path, policy_dir, capsys):
    """``--target-score 100 --ship`` trained the whole run and then put its policy over
    ``ppo_2p.npz``, the policy of the default rules (target 250), which ``ppo`` plays at every
    target score. It is refused as the flags are checked: one line, status 2, nothing
    written."""
    out = tmp_path / "never"
    assert train_jax.main([*TINY, "--target-score", "100", "--ship", "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.err == ("error: --ship: a policy trained for target_score=100 is not shipped: "
                            "ppo_2p.npz is the policy of 2 players under the default rules "
                            "(target_score=250); play it as ppo:PATH\n")
    assert captured.out == ""
    assert not out.exists() and list(policy_dir.iterdir()) == []
    with pytest.raises(ValueError, match="^--ship: a policy trained for target_score=100"):
        train_jax.Config(target_score=100, ship=True, out=str(out))
    assert train_jax.Config(target_score=100, out=str(out)).target_score == 100  # no --ship


@pytest.mark.parametrize("problem", ["unreadable", "policy file error"])
def test_a_ship_refused_after_training_is_one_line_and_status_2(tmp_path, policy_dir,
                                                                monkeypatch, capsys, problem):
    """A refusal of the shipping after the run trained and exported (here a shipped policy
    that cannot be read) is one ``error:`` line naming ``--ship``, the problem and the run's
    policy, status 2, and the shipped file as it was. A ``PolicyFileError`` from there was
    taken for the run's own diverged export: status 1, "it was not written; the run is saved
    in ...", though the run's policy was written."""
    damaged = policy_dir / "ppo_2p.npz"
    damaged.write_bytes(b"not a policy")
    out = tmp_path / "run"
    real = agents.evaluation.evaluation_row

    def row(agent, rules, *, matches, seed, opponents):
        if agent == f"ppo:{out / 'policy.npz'}":  # the run's policy at the shipping: not played
            return {"win_rate_vs_greedy": 0.5}
        if agent == f"ppo:{damaged}" and problem == "policy file error":
            NumpyPolicy(damaged)  # a PolicyFileError, not evaluation_row's ValueError
        # the run's evaluations, and the damaged shipped policy (refused before it plays)
        return real(agent, rules, matches=matches, seed=seed, opponents=opponents)

    monkeypatch.setattr(agents.evaluation, "evaluation_row", row)
    assert train_jax.main([*TINY, "--ship", "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert "trained 64 steps" in captured.out
    err = captured.err.splitlines()
    assert len(err) == 1 and err[0].startswith("error: --ship: "), err
    assert f"policy file {str(damaged)!r}: not a policy .npz file" in err[0], err
    assert err[0].endswith(f"; the run's policy is {out / 'policy.npz'}"), err
    assert NumpyPolicy(out / "policy.npz").metadata["steps"] == 64
    assert damaged.read_bytes() == b"not a policy"
    assert sorted(p.name for p in policy_dir.iterdir()) == ["ppo_2p.npz"]
