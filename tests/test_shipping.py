"""``agents.shipping``: a trained policy replaces its table's shipped policy only if it beats it
against greedy on the same deals, and never from rules other than the table's default rules.

Every test points :data:`agents.ppo.POLICY_DIR` at a temporary folder: the real shipped
policies in ``agents/policies/`` are never touched."""

from __future__ import annotations

import json
import shutil

import pytest

from agents import shipping
from agents.ppo import random_policy_npz
from agents.shipping import ship_if_stronger, shipping_target
from agents.tables import TABLES, table_rules
from dominoes_env.core import RuleConfig

from .helpers import fake_shipping_rates, shipped_policies_in


@pytest.fixture
def policy_dir(tmp_path, monkeypatch):
    return shipped_policies_in(tmp_path / "policies", monkeypatch)


def exported(folder, rules=None, seed=1, steps=5):
    """A run's export in ``folder``: ``policy.npz`` (a random network) and its card."""
    rules = RuleConfig() if rules is None else rules
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "policy.npz"
    random_policy_npz(path, rules, hidden=(8,), seed=seed)
    (folder / "policy.json").write_text(json.dumps({"rules": rules.to_dict(), "steps": steps}))
    return path




@pytest.mark.parametrize("table", TABLES)
def test_the_default_rules_of_each_table_ship_to_its_file(policy_dir, table):
    assert shipping_target(table_rules(table)) == policy_dir / f"ppo_{table}.npz"


@pytest.mark.parametrize("rules, ours, theirs, name", [
    (RuleConfig(target_score=100), "target_score=100", "target_score=250", "ppo_2p.npz"),
    (RuleConfig(max_pip=9), "max_pip=9", "max_pip=6", "ppo_2p.npz"),
    (RuleConfig(num_players=4, partnerships=False, spinner="none", target_score=150),
     "target_score=150, spinner=none", "target_score=250, spinner=first_double",
     "ppo_4p_free_for_all.npz"),
])
def test_rules_other_than_the_tables_default_are_refused_naming_both(
        tmp_path, policy_dir, rules, ours, theirs, name):
    """The shipped path is the table's whatever the target score: a policy of
    ``target_score=100`` went over ``ppo_2p.npz``, the policy of the default rules, in
    silence. It is refused, before anything is played, on one line naming both rule sets."""
    message = f"a policy trained for {ours} is not shipped: {name} is the policy of "
    with pytest.raises(ValueError, match=f"^{message}") as err:
        shipping_target(rules)
    assert f"under the default rules ({theirs}); play it as ppo:PATH" in str(err.value)
    assert "\n" not in str(err.value)
    if rules.max_pip == 6:  # a policy file can be made for these rules: the same refusal
        path = exported(tmp_path / "run", rules)
        with pytest.raises(ValueError, match=f"^{message}"):
            ship_if_stronger(path, rules, matches=2)
    assert list(policy_dir.iterdir()) == []


def test_a_policy_trained_under_other_rules_than_given_is_refused(tmp_path, policy_dir,
                                                                   monkeypatch):
    calls = fake_shipping_rates(monkeypatch, {"run": 1.0, "policies": 0.0})
    path = exported(tmp_path / "run", RuleConfig(target_score=50))
    with pytest.raises(ValueError, match=r"^the policy at '.*policy\.npz' was trained for "
                                         r"target_score=50, not these rules \(target_score=250\);"
                                         " it is not shipped as ppo_2p.npz$"):
        ship_if_stronger(path, RuleConfig(), matches=2)
    random_policy_npz(path, RuleConfig(num_players=3), hidden=(8,))  # another table
    with pytest.raises(ValueError, match="trained for num_players=3, "):
        ship_if_stronger(path, RuleConfig(), matches=2)
    assert calls == [] and list(policy_dir.iterdir()) == []


def test_a_policy_without_its_card_is_refused(tmp_path, policy_dir, monkeypatch):
    calls = fake_shipping_rates(monkeypatch, {"run": 1.0, "policies": 0.0})
    path = exported(tmp_path / "run")
    (tmp_path / "run" / "policy.json").unlink()
    with pytest.raises(ValueError, match="has no card policy.json beside it"):
        ship_if_stronger(path, RuleConfig(), matches=2)
    assert calls == [] and list(policy_dir.iterdir()) == []


@pytest.mark.parametrize("shipped_rate, ships", [(0.4, True), (0.6, False), (0.5, False)])
def test_only_a_strictly_stronger_policy_ships(tmp_path, policy_dir, monkeypatch, capsys,
                                               shipped_rate, ships):
    calls = fake_shipping_rates(monkeypatch, {"run": 0.5, "policies": shipped_rate})
    old = exported(policy_dir / "old", seed=9, steps=1)
    target = policy_dir / "ppo_2p.npz"
    shutil.move(old, target)
    shutil.move(policy_dir / "old" / "policy.json", target.with_suffix(".json"))
    before = target.read_bytes(), target.with_suffix(".json").read_bytes()
    path = exported(tmp_path / "run", seed=1, steps=5)
    lines = []
    assert ship_if_stronger(path, RuleConfig(), matches=10, seed=7, out=lines.append) is ships
    # both on the same deals: the same matches and seed, against greedy only
    assert [c[1:] for c in calls] == [(10, 7, ("greedy",))] * 2
    assert calls[0][0] == f"ppo:{path}" and calls[1][0] == f"ppo:{target}"
    assert lines[0] == f"vs greedy over 10 matches: new 0.500, shipped {shipped_rate:.3f}"
    if ships:
        assert lines[1:] == [f"shipped: {target}"]
        assert target.read_bytes() == path.read_bytes()
        assert json.loads(target.with_suffix(".json").read_text())["steps"] == 5
    else:
        assert lines[1:] == [f"not shipped: {target} is at least as strong"]
        assert (target.read_bytes(), target.with_suffix(".json").read_bytes()) == before
    assert capsys.readouterr().out == ""  # all through ``out``


def test_the_card_is_copied_before_the_policy(tmp_path, policy_dir, monkeypatch):
    fake_shipping_rates(monkeypatch, {"run": 0.5})
    copies = []
    monkeypatch.setattr(shipping, "atomic_copy", lambda source, dest: copies.append(
        (source.name, dest.name)))
    assert ship_if_stronger(exported(tmp_path / "run"), RuleConfig(), matches=2, out=print)
    assert copies == [("policy.json", "ppo_2p.json"), ("policy.npz", "ppo_2p.npz")]


@pytest.mark.parametrize("shipped_before", [True, False])
def test_a_failed_copy_of_the_policy_leaves_the_card_of_the_policy_beside_it(
        tmp_path, policy_dir, monkeypatch, shipped_before):
    """A full disk while the policy is copied: the card copied just before is taken back (the
    old one restored, or the new one removed where none was shipped), so the shipped card never
    describes another policy than the one beside it."""
    import errno

    fake_shipping_rates(monkeypatch, {"run": 0.5, "policies": 0.1})
    target = policy_dir / "ppo_2p.npz"
    if shipped_before:
        old = exported(policy_dir / "old", seed=9, steps=1)
        shutil.move(old, target)
        shutil.move(policy_dir / "old" / "policy.json", target.with_suffix(".json"))
    before = {p.name: p.read_bytes() for p in policy_dir.glob("ppo_2p.*")}
    real = shipping.atomic_copy

    def copy(source, dest):
        if dest == target:
            raise OSError(errno.ENOSPC, "No space left on device")
        real(source, dest)

    monkeypatch.setattr(shipping, "atomic_copy", copy)
    with pytest.raises(OSError, match="No space left"):
        ship_if_stronger(exported(tmp_path / "run", steps=5), RuleConfig(), matches=2, out=print)
    assert {p.name: p.read_bytes() for p in policy_dir.glob("ppo_2p.*")} == before


def test_ships_where_none_is_shipped_and_not_over_an_equal_copy(tmp_path, policy_dir, capsys):
    """Played for real (one deal in its 6 seatings against greedy): with no shipped policy
    the new one ships, and prints ``shipped -1.000`` as ``train_jax --ship`` does; the same
    policy again is exactly as strong on the same deals, and is not shipped."""
    rules = table_rules("3p")
    path = exported(tmp_path / "run", rules)
    assert ship_if_stronger(path, rules, matches=6, seed=3)
    target = policy_dir / "ppo_3p.npz"
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("vs greedy over 6 matches: new ") and out[0].endswith(
        ", shipped -1.000")
    assert out[1:] == [f"shipped: {target}"]
    assert sorted(p.name for p in policy_dir.iterdir()) == ["ppo_3p.json", "ppo_3p.npz"]
    assert target.read_bytes() == path.read_bytes()
    (tmp_path / "run" / "policy.json").write_text(json.dumps({"rules": rules.to_dict(),
                                                              "steps": 6}))
    assert not ship_if_stronger(path, rules, matches=6, seed=3)
    new, shipped = capsys.readouterr().out.splitlines()[0].split(": ", 1)[1].split(", ")
    assert new.removeprefix("new ") == shipped.removeprefix("shipped ")
    assert json.loads(target.with_suffix(".json").read_text())["steps"] == 5  # kept



def test_a_policy_path_no_agent_spec_can_name_is_refused_before_playing(tmp_path, policy_dir,
                                                                        monkeypatch):
    """Both policies are played as ``ppo:PATH`` specs, whose ``,`` and ``=`` separate
    parameters: such a path is refused with one line before any match is played."""
    calls = fake_shipping_rates(monkeypatch, {"a,b": 0.9, "policies": 0.1})
    path = exported(tmp_path / "a,b")
    with pytest.raises(ValueError, match=r"policy_path .*could not be named in an agent spec"):
        ship_if_stronger(path, RuleConfig(), matches=2)
    assert calls == [] and not list(policy_dir.iterdir())
