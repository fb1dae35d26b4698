"""``experiments.make_dataset`` (:mod:`agents.datasets`): records plus per-decision arrays;
behaviour cloning reads them; the example dataset shipped in ``datasets/`` loads and agrees with
its own records."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from agents.arena import DuplicateDealMatch, play_match
from agents.datasets import DECISIONS_DIR, FIELDS, INFO_FILE, load_decisions
from agents.imitation import dataset_demonstrations
from dominoes_env.core import RuleConfig
from dominoes_env.core.records import replay_record
from dominoes_env.obs.v2 import observation_size
from dominoes_env.record_io import RECORDS_DIR, iter_records
from experiments.make_dataset import main

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "datasets" / "search-vs-search"


def build(tmp_path, *extra, agents=("greedy", "random")):
    out = tmp_path / "ds"
    assert main(["--agents", *agents, "--matches", "4", "--target-score", "60", "--out",
                 str(out), "--quiet", *extra]) == 0
    return out


def records_of(out: Path) -> list[dict]:
    recs = [r for p in sorted((out / RECORDS_DIR).glob("*.jsonl.gz")) for r in iter_records(p)]
    return sorted(recs, key=lambda r: r["match"]["index"])


def check_dataset(out: Path) -> dict:
    """The arrays agree with the records and the matches: one row per play, legal actions,
    the stored outcome, hand margins that are the hand's point differences."""
    info = json.loads((out / INFO_FILE).read_text())
    data = load_decisions(out)
    rules = RuleConfig.from_dict(info["rules"])
    n = len(data["action"])
    assert n == info["decisions"] and set(data) == set(FIELDS)
    assert info["observation_size"] == observation_size(rules)
    assert data["obs"].shape == (n, info["observation_size"])
    assert data["mask"].shape == (n, info["num_actions"])
    assert data["mask"][np.arange(n), data["action"]].all()
    matches = {json.loads(line)["index"]: json.loads(line)
               for line in (out / "matches.jsonl").read_text().splitlines()}
    recs = records_of(out)
    assert len(recs) == len(matches) == info["matches"]
    assert [r["match"]["index"] for r in recs] == sorted(matches)
    assert sorted(set(data["match"].tolist())) == sorted(matches)
    for rec in recs:
        rows = data["match"] == rec["match"]["index"]
        outcome = replay_record(rec)
        played = [p for h in outcome["hands"] for p in h["move_points"]]
        assert data["points"][rows].tolist() == played
        m = matches[rec["match"]["index"]]
        sides = [rules.side_of(s) for s in data["seat"][rows]]
        expected = [0 if m["winner"] is None else (1 if s == m["winner"] else -1) for s in sides]
        assert data["outcome"][rows].tolist() == expected
        agents = [info["agents"][a] for a in data["agent"][rows]]
        assert agents == [m["seats"][s] for s in data["seat"][rows]]
        # hand margins: two sides, so the two sides' margins are opposite in each hand
        if rules.num_sides == 2:
            for h in set(data["hand"][rows].tolist()):
                sel = rows & (data["hand"] == h)
                by_side = {rules.side_of(s): g for s, g in zip(data["seat"][sel],
                                                               data["hand_margin"][sel],
                                                               strict=True)}
                if len(by_side) == 2:
                    assert by_side[0] == -by_side[1]
    return info


def test_dataset_rows_are_what_the_seats_saw(tmp_path):
    out = build(tmp_path)
    check_dataset(out)
    # the observations are the ones the agents were given live: replay the first match's deals
    # with its agents and compare the seat-0 rows
    data = load_decisions(out)
    first = records_of(out)[0]
    meta = first["match"]
    from dominoes_env.obs.v2 import encode_observation

    rules = RuleConfig.from_dict(first["rules"])
    match = DuplicateDealMatch(rules, meta["seed"])
    rows = np.flatnonzero(data["match"] == meta["index"])
    for row in rows:
        view = match.view(match.turn)
        assert np.array_equal(encode_observation(view), data["obs"][row])
        match.play(int(data["action"][row]))
    assert play_match(meta["seats"], rules, meta["seed"]).scores == tuple(match.scores)


def _tournament_record() -> dict:
    """A tournament's game record of one match, ``greedy`` in seat 0 (its ``match`` field)."""
    from agents.tournament.record_store import game_line
    from agents.tournament.runner import job_record
    from agents.tournament.schedule import make_schedule

    rules = RuleConfig(target_score=20)
    job = make_schedule(["random", "greedy"], rules, 2, 0).jobs[1]
    line = job_record(job, rules, 10, keep_record=True)
    return game_line(line, line.pop("_game"))


def _without_match(record: dict) -> dict:
    return {k: v for k, v in record.items() if k != "match"}


def _with_index(record: dict, index) -> dict:
    return {**record, "match": {**record["match"], "index": index}}


@pytest.mark.parametrize("agents, change, error, message", [
    ("random greedy", None, TypeError, r"^agents must be a list of agent specs, got 'random "),
    (None, None, TypeError, r"^agents must be a list of agent specs, got None$"),
    (["random", "search"], None, ValueError,
     r"^the record's match\.seats\[0\] 'greedy' is none of the agents \['random', 'search'\]$"),
    (["random", "greedy"], _without_match, ValueError, r"^the record has no 'match' object"),
    (["random", "greedy"], lambda r: _with_index(r, 2**70), ValueError,
     r"^the record's match\.index 1180591620717411303424 is no schedule index; allowed: "
     r"0\.\.9999999$"),
    (["random", "greedy"], lambda r: _with_index(r, -3), ValueError,
     r"^the record's match\.index -3 is no schedule index"),
    (["random", "greedy"], lambda r: {**r, "match": {"index": 1}}, ValueError,
     r"^the record's match\.seats None must list the agent of each of its 2 seats$"),
    (["random", "greedy"], lambda r: None, ValueError, r"^a record must be a JSON object"),
])  # fmt: skip
def test_record_decisions_checks_its_agents_and_the_record_s_match(agents, change, error,
                                                                   message):
    """A str of agents was searched for substrings (wrong indexes, silently), a seat's agent
    missing from them was "'greedy' is not in list", a missing key a KeyError, ``None`` not
    subscriptable, an index of 2**70 an OverflowError and -3 was taken."""
    from agents.datasets import record_decisions

    record = _tournament_record()
    rows = record_decisions(record, ["random", "greedy"])
    by_seat = [["random", "greedy"].index(s) for s in record["match"]["seats"]]
    assert rows["agent"].tolist() == [by_seat[s] for s in rows["seat"]]
    with pytest.raises(error, match=message):
        record_decisions(record if change is None else change(record), agents)


def test_dataset_resumes_and_rewrites_nothing_finished(tmp_path):
    out = build(tmp_path)
    shard = next((out / DECISIONS_DIR).glob("*.npz"))
    stamp = shard.stat().st_mtime_ns
    assert main(["--agents", "greedy", "random", "--matches", "4", "--target-score", "60",
                 "--out", str(out), "--quiet"]) == 0
    assert shard.stat().st_mtime_ns == stamp  # same matches: the arrays are kept as they are


def test_four_player_dataset(tmp_path):
    info = check_dataset(build(tmp_path, "--players", "4"))
    assert info["rules"]["num_players"] == 4


def test_bad_arguments_exit_2(tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        main(["--agents", "greedy", "greedy", "--matches", "2", "--out", str(tmp_path / "x")])
    assert e.value.code == 2 and "given twice" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:  # named as every other usage error (no prefix was)
        main(["--agents", "random", "greedy", "--matches", "2", "--out", str(tmp_path / "x"),
              "--workers", "0"])
    assert e.value.code == 2 and capsys.readouterr().err == (
        "error: python -m experiments.make_dataset: argument --workers: workers=0 is out of "
        "range; allowed: >= 1 (see python -m experiments.make_dataset --help)\n")
    with pytest.raises(ValueError, match="not a dataset directory"):
        load_decisions(tmp_path)


def test_more_hands_than_the_arrays_hold_is_refused_before_any_game(tmp_path, capsys):
    """--max-hands 33000 played every game, then ended in an OverflowError traceback writing
    hand 32,768 into the int16 hand field, the folder left without dataset.json."""
    from agents.datasets import build_dataset
    from agents.tournament import TournamentConfig

    out = tmp_path / "big"
    with pytest.raises(SystemExit) as e:
        main(["--agents", "random", "greedy", "--matches", "1", "--out", str(out),
              "--max-hands", "33000", "--quiet"])
    err = capsys.readouterr().err
    assert e.value.code == 2 and err.count("\n") == 1, err
    assert "max_hands=33,000: a dataset's hand numbers are int16; allowed: at most 32,768" in err
    config = TournamentConfig(["random", "greedy"], RuleConfig(), matches=1, max_hands=32769)
    with pytest.raises(ValueError, match="at most 32,768"):
        build_dataset(config, out)
    assert not out.exists()


def test_behaviour_cloning_reads_a_dataset(tmp_path):
    out = build(tmp_path, agents=("greedy", "random"))
    rules = RuleConfig(target_score=60)
    greedy = dataset_demonstrations(out, "greedy", rules)
    both = dataset_demonstrations(out, None, rules)
    assert 0 < len(greedy["actions"]) < len(both["actions"])
    assert (greedy["masks"].sum(axis=1) > 1).all()  # forced moves are no lesson
    assert set(greedy) == {"obs", "masks", "actions", "values"}
    with pytest.raises(ValueError, match="target_score: 60 there, 250 here"):
        dataset_demonstrations(out, None, RuleConfig())
    with pytest.raises(ValueError, match="agent 'search' is not in this dataset"):
        dataset_demonstrations(out, "search", rules)
    # and it fits: greedy's choices are learnable from its observations
    from sb3_contrib import MaskablePPO

    from agents.imitation import pretrain_policy
    from dominoes_env import SingleAgentEnv

    model = MaskablePPO("MlpPolicy", SingleAgentEnv(rules=rules), seed=0,
                        policy_kwargs={"net_arch": [64, 64]})
    first = pretrain_policy(model, greedy, epochs=1, log=lambda _: None)
    last = pretrain_policy(model, greedy, epochs=30, log=lambda _: None)
    assert last["policy_loss"] < first["policy_loss"]


def test_train_ppo_takes_a_dataset_flag_and_refuses_a_wrong_one_early(tmp_path, capsys):
    from experiments.train_ppo import TrainConfig
    from experiments.train_ppo import main as train_main

    config = TrainConfig(bc_dataset=str(EXAMPLE), bc_agent="search")
    assert config.bc_dataset == str(EXAMPLE)
    with pytest.raises(ValueError, match="not both"):
        TrainConfig(bc_dataset=str(EXAMPLE), bc_teacher="greedy")
    with pytest.raises(ValueError, match="give bc_dataset too"):
        TrainConfig(bc_agent="greedy")
    with pytest.raises(ValueError, match="not a dataset directory"):
        TrainConfig(bc_dataset=str(tmp_path))
    with pytest.raises(ValueError, match="under other rules"):
        TrainConfig(bc_dataset=str(EXAMPLE), target_score=100)
    with pytest.raises(ValueError, match="bc_agent 'greedy' is not in"):
        TrainConfig(bc_dataset=str(EXAMPLE), bc_agent="greedy")
    out = tmp_path / "run"
    assert train_main(["--bc-dataset", str(tmp_path / "none"), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "not a dataset directory" in err and err.count("\n") == 1
    assert not out.exists()  # refused before anything was written


def test_the_shipped_example_dataset_loads_and_agrees_with_its_records():
    info = check_dataset(EXAMPLE)
    assert info["complete"] and info["agents"] == ["search", "search:sims=100"]
    size = sum(p.stat().st_size for p in EXAMPLE.rglob("*") if p.is_file())
    assert size < 600_000, f"the example dataset grew to {size:,} bytes"
    data = dataset_demonstrations(EXAMPLE, "search", RuleConfig.from_dict(info["rules"]))
    assert len(data["actions"]) > 300
