"""Tables (2 players, 3, 4 in partnerships, 4 without): naming them from the rules, the shipped
policy of each, and ``ppo``, ``guided`` and ``best`` playing each one and refusing a policy
trained for another."""

from __future__ import annotations

import json
import re

import pytest

import agents.guided as guided_module
import agents.ppo as ppo_module
from agents import check_spec, make_agent
from agents.arena import play_match
from agents.best import ANY_TILES_SPEC, BEST_BY_TABLE, BestAgent, best_spec
from agents.guided import GUIDED_POLICIES, GuidedSearchAgent, guided_policy_path
from agents.ppo import (
    POLICY_DIR,
    POLICY_FILES,
    NumpyPolicy,
    PPOAgent,
    random_policy_npz,
    shipped_policy_path,
    shipped_tables,
)
from agents.search import SearchAgent
from agents.specs import parse_spec
from agents.tables import (
    TABLE_NAMES,
    TABLES,
    as_table,
    check_table,
    default_tiles,
    describe_table,
    table_of,
    table_rules,
)
from dominoes_env.core import MatchState, RuleConfig

FFA = RuleConfig(num_players=4, partnerships=False)


def test_every_rule_set_has_one_table():
    assert TABLES == ("2p", "3p", "4p_partnerships", "4p_free_for_all")
    assert [table_of(RuleConfig(num_players=n)) for n in (2, 3, 4)] == list(TABLES[:3])
    assert table_of(FFA) == "4p_free_for_all"
    assert table_of(RuleConfig(num_players=3, max_pip=9, target_score=100)) == "3p"
    assert [describe_table(t) for t in TABLES] == [
        "2 players", "3 players", "4 players in partnerships", "4 players without partnerships"]
    for table in TABLES:
        assert table_of(table_rules(table)) == table == as_table(table)
    assert [as_table(n) for n in (2, 3, 4)] == list(TABLES[:3])
    assert as_table(FFA) == "4p_free_for_all"
    assert set(TABLE_NAMES) == set(TABLES)


@pytest.mark.parametrize("bad", ["4p", "", 5, 1, True, 4.0, None, ["2p"]])
def test_what_is_not_a_table_is_refused(bad):
    with pytest.raises(ValueError, match="table"):
        as_table(bad)
    with pytest.raises(TypeError, match="rules must be a RuleConfig"):
        table_of(bad)


def test_numpy_player_counts_name_their_table():
    # as_table(np.int64(2)) was "not a table: np.int64(2); give ... a player count 2..4"
    np = pytest.importorskip("numpy")
    assert [as_table(np.int64(n)) for n in (2, 3, 4)] == list(TABLES[:3])
    assert as_table(np.int8(3)) == "3p"
    for bad in (np.int64(5), np.True_, np.float64(2.0)):
        with pytest.raises(ValueError, match="not a table: "):
            as_table(bad)


@pytest.mark.parametrize("bad", [None, {"num_players": 2}, "2p", 2])
def test_default_tiles_refuses_what_is_no_rule_set(bad):
    # default_tiles(None) was AttributeError: 'NoneType' object has no attribute 'max_pip'
    with pytest.raises(TypeError, match="rules must be a RuleConfig"):
        default_tiles(bad)
    assert default_tiles(RuleConfig(num_players=4, partnerships=False)) is True


def test_check_table_names_the_allowed_tables():
    with pytest.raises(ValueError, match=re.escape(
            "unknown table '5p'; allowed: 2p, 3p, 4p_partnerships, 4p_free_for_all")):
        check_table("5p")


def test_one_shipped_file_per_table():
    assert POLICY_FILES == {"2p": "ppo_2p.npz", "3p": "ppo_3p.npz",
                            "4p_partnerships": "ppo_4p_partnerships.npz",
                            "4p_free_for_all": "ppo_4p_free_for_all.npz"}
    assert shipped_policy_path(FFA) == POLICY_DIR / "ppo_4p_free_for_all.npz"
    assert shipped_policy_path(4) == shipped_policy_path(RuleConfig(num_players=4))
    assert shipped_policy_path("3p") == POLICY_DIR / "ppo_3p.npz"
    assert {"2p", "4p_partnerships"} <= set(shipped_tables())
    assert GUIDED_POLICIES == {"2p": "ppo_2p_obs2.npz", "3p": "ppo_3p_obs2.npz",
                               "4p_partnerships": "ppo_4p_partnerships_obs2.npz",
                               "4p_free_for_all": "ppo_4p_free_for_all_obs2.npz"}
    for table in TABLES:
        assert guided_policy_path(table) == POLICY_DIR / GUIDED_POLICIES[table]


@pytest.mark.parametrize("path", sorted(POLICY_DIR.glob("*.npz")), ids=lambda p: p.name)
def test_every_shipped_policy_has_its_card(path):
    """Each policy file has a JSON card beside it (rules, observation version, steps, wall
    time, the command that trained it) that agrees with the file, and a table file holds a
    policy of its table."""
    card = json.loads(path.with_suffix(".json").read_text())
    assert {"rules", "obs_version", "steps", "wall_s", "command"} <= set(card)
    assert card["command"].startswith("python -m experiments.")
    assert card["steps"] > 0 and card["wall_s"] > 0
    policy = NumpyPolicy(path)
    assert card["obs_version"] == policy.metadata["obs_version"] == policy.obs_spec.version
    assert table_of(RuleConfig.from_dict(card["rules"])) == policy.table
    if path.name in POLICY_FILES.values():
        assert POLICY_FILES[policy.table] == path.name


def shipped_or_skip(table):
    path = shipped_policy_path(table)
    if not path.is_file():
        pytest.skip(f"no shipped policy for {describe_table(table)} yet ({path.name})")
    return path


@pytest.mark.parametrize("table", TABLES)
def test_ppo_plays_the_shipped_policy_of_every_table(table):
    path = shipped_or_skip(table)
    rules = table_rules(table).replace(target_score=100)
    agent = check_spec("ppo", rules)
    assert agent.policy.path == path and agent.policy.table == table
    seats = ["ppo" if rules.side_of(s) == 0 else "greedy" for s in range(rules.num_players)]
    result = play_match(seats, rules, seed=3)  # raises on an illegal action
    assert max(result.scores) >= 100


@pytest.mark.parametrize("table", TABLES)
def test_best_plays_every_table(table):
    rules = table_rules(table).replace(target_score=100)
    spec = BEST_BY_TABLE[table]
    assert best_spec(rules) == best_spec(table) == spec
    name = spec.partition(":")[0]
    if name == "guided":
        shipped_or_skip(table)
    agent = make_agent("best", seed=1)
    agent.check_rules(rules)
    assert agent.spec == spec
    assert type(agent.agent) is {"guided": GuidedSearchAgent, "search": SearchAgent}[name]
    if name == "guided":
        assert agent.agent.policy_agent.policy.table == table
        assert agent.agent.infer == parse_spec(spec)[1].get("infer", 1.0)
    match = MatchState(rules, seed=2)
    view = match.view(match.turn)
    assert agent.act(view) in view.legal


def test_best_chooses_again_when_partnerships_change(monkeypatch):
    monkeypatch.setitem(BEST_BY_TABLE, "4p_free_for_all", "greedy")
    agent = BestAgent(seed=0)
    agent.check_rules(RuleConfig(num_players=4))
    assert agent.spec == BEST_BY_TABLE["4p_partnerships"]
    agent.check_rules(FFA)
    assert agent.spec == "greedy" and type(agent.agent).__name__ == "GreedyAgent"


@pytest.fixture
def policy_dir(tmp_path, monkeypatch):
    """An empty shipped-policy folder (``ppo`` and ``guided`` read it)."""
    monkeypatch.setattr(ppo_module, "POLICY_DIR", tmp_path)
    monkeypatch.setattr(guided_module, "POLICY_DIR", tmp_path)
    return tmp_path


@pytest.mark.parametrize("table", TABLES)
def test_a_missing_shipped_policy_is_named(policy_dir, table):
    random_policy_npz(policy_dir / "ppo_2p.npz", RuleConfig(), hidden=(8,))
    if table == "2p":
        return
    flags = {"2p": "2", "3p": "3", "4p_partnerships": "4",
             "4p_free_for_all": "4 --no-partnerships"}[table]
    for spec in ("ppo", "guided", *(["best"] if BEST_BY_TABLE[table].startswith("guided") else [])):
        with pytest.raises(ValueError) as err:
            check_spec(spec, table_rules(table))
        assert str(err.value) == (
            f"agent spec {spec!r} cannot play these rules: no shipped PPO policy exists for "
            f"{describe_table(table)} (ppo_{table}.npz is not in {policy_dir}; shipped: "
            f"2 players); train one with python -m experiments.train_jax --players {flags} "
            "--out DIR (--ship copies it there), or pass ppo:PATH")


@pytest.mark.parametrize(("trained", "played"), [
    ("4p_partnerships", "4p_free_for_all"), ("4p_free_for_all", "4p_partnerships"),
    ("2p", "3p"), ("3p", "4p_free_for_all")])
def test_a_policy_for_another_table_is_refused_naming_both(tmp_path, trained, played):
    path = tmp_path / "policy.npz"
    random_policy_npz(path, table_rules(trained), hidden=(8,))
    want = (f"the policy at {str(path)!r} was trained for {describe_table(trained)}; these "
            f"rules are {describe_table(played)}")
    with pytest.raises(ValueError) as err:
        PPOAgent(path).check_rules(table_rules(played))
    assert str(err.value) == want
    for spec in (f"ppo:{path}", f"guided:policy={path}"):
        with pytest.raises(ValueError) as err:
            check_spec(spec, table_rules(played))
        assert str(err.value) == f"agent spec {spec!r} cannot play these rules: {want}"
    check_spec(f"ppo:{path}", table_rules(trained))  # its own table


def test_a_shipped_file_holding_another_tables_policy_is_refused(policy_dir):
    random_policy_npz(policy_dir / "ppo_4p_free_for_all.npz", RuleConfig(num_players=4),
                      hidden=(8,))
    with pytest.raises(ValueError, match="was trained for 4 players in partnerships; these "
                                         "rules are 4 players without partnerships"):
        check_spec("ppo", FFA)


def test_the_shipped_ppo_follows_the_table(policy_dir):
    for table in TABLES:
        random_policy_npz(policy_dir / POLICY_FILES[table], table_rules(table), hidden=(8,))
    agent, guided = PPOAgent(seed=0), GuidedSearchAgent(seed=0, sims=8)
    for table in (*TABLES, "2p"):
        match = MatchState(table_rules(table), seed=1)
        view = match.view(match.turn)
        assert agent.act(view) in view.legal and guided.act(view) in view.legal
        assert agent.policy.table == table == guided.policy_agent.policy.table
        assert agent.policy.path == policy_dir / POLICY_FILES[table]
    assert repr(agent) == "PPOAgent(shipped, deterministic=True)"


def test_metadata_rules_that_name_no_table_are_refused(tmp_path):
    from agents.ppo import PolicyFileError, save_policy_npz

    path = tmp_path / "p.npz"
    random_policy_npz(path, RuleConfig(), hidden=(8,))
    arrays = dict(__import__("numpy").load(path))
    meta = json.loads(str(arrays.pop("metadata")))
    for key in ("format", "activation", "num_layers"):
        arrays.pop(key)
    # written raw: save_policy_npz checks the rules it is given as the reader does
    import numpy as np

    bad = dict(np.load(path))
    bad["metadata"] = np.array(json.dumps({**meta, "rules": {"num_players": 5}}))
    np.savez(path, **bad)
    with pytest.raises(PolicyFileError, match="metadata's rules: num_players=5 is out of range"):
        NumpyPolicy(path)
    save_policy_npz(path, arrays, "tanh", {k: v for k, v in meta.items() if k != "rules"})
    assert NumpyPolicy(path).table is None  # no rules: only the sizes are checked
    PPOAgent(path).check_rules(RuleConfig(target_score=100))


def test_the_old_partnership_policy_path_loads_with_a_warning():
    with pytest.warns(DeprecationWarning, match="ppo_4p.npz is now ppo_4p_partnerships.npz"):
        agent = make_agent(f"ppo:{POLICY_DIR / 'ppo_4p.npz'}")
    assert agent.path == POLICY_DIR / "ppo_4p_partnerships.npz"
    assert agent.policy.table == "4p_partnerships"


@pytest.mark.parametrize("table", TABLES)
def test_best_plays_search_with_tiles_no_shipped_policy_reads(table):
    """Every shipped policy reads its table's double-six tiles; with double-nine ``best`` is
    ``search`` (it stopped at its first decision: "no shipped policy plays double-9 tiles")."""
    rules = table_rules(table).replace(max_pip=9, target_score=100)
    assert best_spec(rules) == ANY_TILES_SPEC == "search"
    assert best_spec(table) == BEST_BY_TABLE[table]  # a table's name: its default tiles
    agent = make_agent("best", seed=1)
    agent.check_rules(rules)
    assert agent.spec == "search" and type(agent.agent) is SearchAgent
    match = MatchState(rules, seed=2)
    view = match.view(match.turn)
    assert agent.act(view) in view.legal
    agent.check_rules(table_rules(table))  # back at the default tiles: the table's best again
    assert agent.spec == BEST_BY_TABLE[table]
