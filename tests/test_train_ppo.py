"""PPO training end to end at a tiny size: train, evaluate, snapshot, checkpoint, export, resume;
the exported policy plays as the ``ppo:PATH`` agent; the self-play pool grows and is sampled."""

from __future__ import annotations

import csv
import dataclasses
import json

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from agents import RandomAgent, make_agent  # noqa: E402
from agents.pool import OpponentPool  # noqa: E402
from agents.pool_env import PoolEnv  # noqa: E402
from agents.ppo import POLICY_DIR as REAL_POLICIES  # noqa: E402
from agents.ppo import NumpyPolicy, random_policy_npz  # noqa: E402
from agents.tables import describe_table  # noqa: E402
from dominoes_env.core import MatchState, RuleConfig  # noqa: E402
from experiments.train_ppo import (  # noqa: E402
    RunDirError,
    TrainConfig,
    main,
    parser_for,
    train,
)

from .helpers import error_lines  # noqa: E402

TINY = dict(total_steps=768, n_envs=2, n_steps=128, batch_size=128, n_epochs=2, net="16",
            snapshot_every=256, eval_every=512, eval_matches=2, checkpoint_every=256,
            target_score=50, opponents=["greedy=1", "random=1", "self=1"])


def interrupted_line(out) -> str:
    """The line a run in ``out`` stopped by Ctrl-C ends with, saved and exported."""
    last = out / "checkpoints" / "last.zip"
    return (f"error: interrupted; the run is saved in {last} and its policy exported to "
            f"{out / 'policy.npz'}: add --resume {last} to the same command to go on")


def test_tiny_training_run_end_to_end_then_resume(tmp_path, capsys):
    out = tmp_path / "run"
    policy = train(TrainConfig(out=str(out), seed=3, **TINY), command="test")
    meta = json.loads((out / "policy.json").read_text())
    assert meta["steps"] >= 768 and meta["rules"]["target_score"] == 50
    assert meta["obs_version"] >= 2 and meta["command"] == "test"
    assert (out / "tb").is_dir() and any((out / "tb").rglob("events.out.tfevents*"))
    rows = list(csv.DictReader(open(out / "eval.csv")))
    steps = [int(r["steps"]) for r in rows]
    assert steps[0] == 0 and steps[1] >= 512 and steps == sorted(set(steps))  # a curve from 0
    assert 0 <= float(rows[-1]["win_rate_vs_greedy"]) <= 1
    snapshots = sorted((out / "pool").glob("*.npz"))
    assert len(snapshots) >= 3  # at the start and every 256 steps
    assert (out / "checkpoints" / "last.zip").is_file()
    # --keep-checkpoints 3 (the default): every one was kept, without end
    names = ["last.zip", *(f"ppo_{n}_steps.zip" for n in (256, 512, 768))]
    assert sorted(p.name for p in (out / "checkpoints").iterdir()) == sorted(names)

    # the export plays as an agent spec, legal moves only
    agent = make_agent(f"ppo:{policy}", seed=0)
    match = MatchState(RuleConfig(target_score=50), seed=1)
    while not match.is_over:
        view = match.view(match.turn)
        code = agent.act(view) if match.turn == 0 else view.legal[0]
        assert code in view.legal
        match.play(code)

    # resume refusals come before anything is written
    before = (out / "config.json").read_text()
    last = out / "checkpoints" / "last.zip"
    (tmp_path / "trunc.zip").write_bytes(last.read_bytes()[:500])
    for resume, changes, message in [
        (tmp_path / "none.zip", {}, "none.zip': no such file"),
        (tmp_path / "trunc.zip", {}, "trunc.zip' is not a readable checkpoint"),
        (last, {"net": "32"}, "has hidden layers 16, not --net 32; pass --net 16"),
        (last, {"activation": "relu"}, "uses activation tanh, not --activation relu"),
        (last, {"players": 3}, "--players 3 needs"),
    ]:
        with pytest.raises(RunDirError, match=message):
            train(TrainConfig(out=str(out), seed=3, resume=str(resume), **{**TINY, **changes}))
    assert (out / "config.json").read_text() == before

    # resume: the step count continues from the checkpoint
    config = TrainConfig(out=str(out), seed=3, resume=str(out / "checkpoints" / "last.zip"),
                         **{**TINY, "total_steps": 1280})
    train(config, command="resume")
    meta = json.loads((out / "policy.json").read_text())
    assert meta["steps"] >= 1280
    rows = list(csv.DictReader(open(out / "eval.csv")))
    assert int(rows[-1]["steps"]) >= 1280
    assert len(sorted((out / "pool").glob("*.npz"))) > len(snapshots)
    assert "note:" not in capsys.readouterr().err  # the latest checkpoint: no word
    names = ["last.zip", *(f"ppo_{n}_steps.zip" for n in (768, 1024, 1280))]  # the 3 newest
    assert sorted(p.name for p in (out / "checkpoints").iterdir()) == sorted(names)

    # resume from an older checkpoint: the run goes back, and says so (it went back in silence)
    older = out / "checkpoints" / "ppo_768_steps.zip"
    train(TrainConfig(out=str(out), seed=3, resume=str(older), keep_checkpoints=1,
                      **{**TINY, "total_steps": 1024}), command="rewind")
    err = capsys.readouterr().err
    assert f"note: --resume {older} takes this run back to step 768 of the " in err, err
    # the one written now is kept, and the later ones the rewound run writes again
    names = ["last.zip", *(f"ppo_{n}_steps.zip" for n in (1024, 1280))]
    assert sorted(p.name for p in (out / "checkpoints").iterdir()) == sorted(names)


def test_checkpoint_rotation_removes_only_checkpoints(tmp_path):
    """``--keep-checkpoints 1`` deleted the user's 5-byte text file
    ``checkpoints/ppo_20_steps.zip`` without a word: every file of a checkpoint's name went.
    Only real checkpoints (a MaskablePPO save's zip members) go now."""
    import zipfile

    from agents.sb3_run import prune_checkpoints

    for steps in (16, 32, 48):
        with zipfile.ZipFile(tmp_path / f"ppo_{steps}_steps.zip", "w") as z:
            for member in ("data", "policy.pth", "policy.optimizer.pth"):
                z.writestr(member, "")
    (tmp_path / "ppo_20_steps.zip").write_text("mine\n")
    removed = prune_checkpoints(tmp_path, 48, 1)
    assert [p.name for p in removed] == ["ppo_16_steps.zip", "ppo_32_steps.zip"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ppo_20_steps.zip", "ppo_48_steps.zip"]
    assert (tmp_path / "ppo_20_steps.zip").read_text() == "mine\n"


@pytest.mark.parametrize(("steps", "keep", "error", "says"), [
    (48, 0, ValueError, "keep=0 is out of range; allowed: >= 1"),
    (48, -1, ValueError, "keep=-1 is out of range"),
    (48, 2.5, TypeError, "keep=2.5 must be an integer"),
    (48, None, TypeError, "keep=None must be an integer"),
    ("300", 1, TypeError, "steps='300' must be an integer"),
    (-1, 1, ValueError, "steps=-1 is out of range"),
])  # fmt: skip
def test_checkpoint_rotation_refuses_a_bad_count_before_removing_anything(
        tmp_path, steps, keep, error, says):
    """``keep=0`` (or -1) removed every checkpoint, the one just written too, which the
    docstring says is always kept; ``keep=2.5`` or ``steps="300"`` was a bare TypeError."""
    import zipfile

    from agents.sb3_run import prune_checkpoints

    for n in (16, 32, 48):
        with zipfile.ZipFile(tmp_path / f"ppo_{n}_steps.zip", "w") as z:
            for member in ("data", "policy.pth", "policy.optimizer.pth"):
                z.writestr(member, "")
    with pytest.raises(error, match=f"^{says}"):
        prune_checkpoints(tmp_path, steps, keep)
    assert len(list(tmp_path.iterdir())) == 3


POOLED = dict(n_envs=1, vec_env="dummy", n_steps=16, batch_size=16, n_epochs=1, net="8",
              eval_every=10**6, eval_matches=2, checkpoint_every=10**6, target_score=50)


def test_a_resume_trains_only_against_the_pool_snapshots_the_run_wrote(tmp_path, capsys):
    """A damaged ``pool/snapshot_*.npz`` ended a resume with status 1 and "policy file ...: not
    a policy .npz file; it was not written"; a snapshot replaced by another network, or one
    put there, was trained against in silence. The run records each snapshot's sha256 and a
    resume refuses (status 2, before anything is written) a changed or unknown one."""
    out = tmp_path / "run"
    train(TrainConfig(out=str(out), total_steps=32, **POOLED))
    (snapshot,) = sorted((out / "pool").glob("*.npz"))
    own = snapshot.read_bytes()
    last = str(out / "checkpoints" / "last.zip")
    argv = ["--out", str(out), "--resume", last, "--total-steps", "64", "--n-envs", "1",
            "--vec-env", "dummy", "--n-steps", "16", "--batch-size", "16", "--n-epochs", "1",
            "--net", "8", "--eval-every", "1000000", "--eval-matches", "2",
            "--checkpoint-every", "1000000", "--target-score", "50"]
    extra = out / "pool" / "snapshot_000000099.npz"
    for damage, words in [
        (lambda: snapshot.write_bytes(b"x" * 100), "changed since the run wrote it"),
        (lambda: random_policy_npz(snapshot, RuleConfig(target_score=50), hidden=(8,)),
         "changed since the run wrote it"),
        (lambda: extra.write_bytes(own), "is no snapshot this run wrote"),
    ]:
        damage()
        before = (out / "config.json").read_text()
        assert main(argv) == 2
        (line,) = error_lines(capsys.readouterr().err)
        assert words in line and "pool" in line and "remove it" in line, line
        assert (out / "config.json").read_text() == before
        snapshot.write_bytes(own)
        extra.unlink(missing_ok=True)
    # the record damaged (a key twice: the last value was taken, and the untouched snapshot
    # said to have changed), or removed while a stranger took the snapshot's place (trained
    # against in silence, and the check off for good): refused, naming the record
    record = out / "pool" / "digests.json"
    kept = record.read_text()
    twice = kept.rstrip().rstrip("}") + f', "{snapshot.name}": "x"}}'
    for damage, words in [
        (lambda: record.write_text(twice), f"is damaged (the key '{snapshot.name}' appears twice"),
        (lambda: record.write_text('{"snapshot_000000001.npz": 1}'), "is damaged ("),
        (lambda: record.write_text("[]"), "is damaged (not a JSON object"),
        (lambda: (record.unlink(), random_policy_npz(snapshot, RuleConfig(target_score=50),
                                                      hidden=(8,))),
         "its pool holds no digests.json"),
    ]:
        damage()
        assert main(argv) == 2
        (line,) = error_lines(capsys.readouterr().err)
        assert words in line and "remove the pool's snapshots" in line, line
        assert "changed since" not in line
        record.write_text(kept)
        snapshot.write_bytes(own)
    # garbage appended to eval.csv: the resume's rows went after it, the log left mixed
    with open(out / "eval.csv", "ab") as f:
        f.write(b"garbage\n\xff\n1,2")
    assert main(argv) == 0
    assert ("eval.csv: line 4 and 2 more held no row of this run's numbers; written again from "
            "its 2 good rows") in capsys.readouterr().err
    rows = list(csv.reader(open(out / "eval.csv")))
    assert len(rows) == 4 and all(float(x) == float(x) for row in rows[1:] for x in row)


def test_partnership_training_plays_the_partner_with_the_learner(tmp_path):
    env = PoolEnv([("greedy", 1.0), ("random", 1.0)], self_weight=1.0,
                  rules=RuleConfig(num_players=4, target_score=50), episode="hand")
    assert env.learner == "side" and len(env.pools) == 2
    both = 0
    for seed in range(10):
        _, info = env.reset(seed=seed)
        side_seats = set(env.rules.seats_of(env.rules.side_of(info["seat"])))
        seats, done = set(), False
        while not done:
            seats.add(env.seat)
            _, _, done, _, _ = env.step(int(env.action_masks().nonzero()[0][0]))
        assert seats <= side_seats
        both += seats == side_seats
    assert both >= 5


def test_an_existing_run_is_not_overwritten_without_resume(tmp_path):
    out = tmp_path / "run"
    (out / "checkpoints").mkdir(parents=True)
    (out / "config.json").write_text("{}")
    (out / "checkpoints" / "ppo_256_steps.zip").write_bytes(b"x")
    with pytest.raises(RunDirError, match="--resume .*ppo_256_steps.zip"):
        train(TrainConfig(out=str(out), **TINY))
    assert (out / "config.json").read_text() == "{}"  # refused before anything was written


def test_resume_without_out_continues_the_checkpoints_own_run():
    """``--resume X/checkpoints/last.zip`` without ``--out`` trained on in ``runs/ppo``, in
    silence; it continues the run in ``X``, as best_response's and train_jax's do."""
    parser = parser_for(TrainConfig)
    config = TrainConfig(**vars(parser.parse_args(["--resume", "r/checkpoints/last.zip"])))
    assert config.out == "r"
    assert TrainConfig().out == "runs/ppo"
    assert TrainConfig(out="o", resume="r/checkpoints/last.zip").out == "o"


def test_print_settings_prints_the_run_settings_and_writes_nothing(tmp_path, capsys):
    """``--print-settings`` (what best_response compares with the run in ``--out``): the flags
    checked as a run checks them, the settings a run's marker holds as one JSON line, status
    0, and nothing written; a bad flag is still one error line, status 2."""
    from experiments.train_ppo import run_settings

    out = tmp_path / "run"
    argv = ["--net", "16", "--n-envs", "2", "--n-steps", "32", "--batch-size", "32",
            "--opponents", "random=1", "--out", str(out)]
    assert main([*argv, "--print-settings"]) == 0
    printed, err = capsys.readouterr()
    (line,) = printed.splitlines()
    config = TrainConfig(**vars(parser_for(TrainConfig).parse_args(argv)))
    assert json.loads(line) == json.loads(json.dumps(run_settings(config), sort_keys=True,
                                                     default=str))
    assert "print_settings" not in json.loads(line)
    assert not out.exists() and list(tmp_path.iterdir()) == []
    assert main([*argv, "--batch-size", "1000", "--print-settings"]) == 2
    printed, err = capsys.readouterr()
    assert printed == "" and len(error_lines(err)) == 1
    assert not out.exists()


def test_pool_env_grows_and_samples_the_self_play_pool(tmp_path):
    rules = RuleConfig(num_players=3, target_score=50)
    env = PoolEnv([("random", 1.0)], self_weight=9.0, max_snapshots=10, rules=rules,
                  episode="hand")
    paths = []
    for i in range(3):
        path = tmp_path / f"snap{i}.npz"
        random_policy_npz(path, rules, hidden=(8,), seed=i)
        paths.append(path)
    assert [env.add_snapshot(str(p)) for p in paths] == [1, 2, 3]
    for seed in range(30):
        env.reset(seed=seed)
        done = False
        while not done:
            mask = env.action_masks()
            _, _, done, _, _ = env.step(int(mask.nonzero()[0][0]))
    draws = env.pool_draws()
    sampled = {k for k in draws if k.startswith("self:")}
    assert len(sampled) == 3  # every snapshot was drawn
    assert sum(draws[k] for k in sampled) > draws.get("random", 0)


def test_pool_keeps_the_newest_snapshots_and_rejects_bad_weights():
    pool = OpponentPool([(RandomAgent(), 1.0)], seed=0, self_weight=1.0)
    agents = [RandomAgent() for _ in range(5)]
    for a in agents:
        pool.add_snapshot(a, max_snapshots=3)
    assert pool.snapshots == agents[2:]
    with pytest.raises(ValueError, match="positive"):
        pool.add(RandomAgent(), 0)
    with pytest.raises(ValueError, match="empty"):
        OpponentPool(seed=0).reset(seed=1)


@pytest.mark.parametrize("fixed, words", [
    ([], "fixed is empty"),
    (["greedy=1"], "pairs such as"),
    ([("nosuch", 1.0)], "unknown agent spec 'nosuch'"),
    ([("greedy", -1)], "positive"),
])
def test_pool_env_refuses_a_mix_it_cannot_draw_from(fixed, words):
    with pytest.raises(ValueError, match=words):  # ParameterTypeError is a ValueError too
        PoolEnv(fixed, rules=RuleConfig())


def test_pool_env_seeds_its_pools_by_seed_rank_and_seat():
    """What train_ppo's environments drew before PoolEnv took plain arguments: seat ``k``'s
    pool of env ``rank`` is seeded ``derive_seed(seed, "pool", rank, k)``."""
    from agents.arena import derive_seed

    env = PoolEnv([("greedy", 1.0), ("random", 1.0)], rules=RuleConfig(num_players=3),
                  seed=7, rank=2)
    for k, pool in enumerate(env.pools):
        assert pool.rng.getstate() == OpponentPool(seed=derive_seed(7, "pool", 2, k)).rng.getstate()


@pytest.mark.parametrize("changes, message", [
    ({"opponents": ["greedy"]}, "SPEC=WEIGHT"),
    ({"opponents": ["self=1"]}, "at least one fixed agent"),
    ({"opponents": ["nobody=1"]}, "unknown agent spec"),
    ({"episode": "game"}, "episode"),
    ({"net": "wide"}, "hidden sizes"),
    ({"total_steps": 0}, "total_steps"),
    ({"players": 5}, "num_players"),
    ({"learning_rate": -1}, "learning_rate=-1.0 is out of range"),
    ({"gae_lambda": float("nan")}, "gae_lambda=nan must be a finite number"),
    ({"ent_coef": float("inf")}, "ent_coef=inf must be a finite number"),
    ({"gamma": 5}, "gamma=5.0 is out of range; allowed: > 0 and <= 1"),
    ({"clip_range": -1}, "clip_range=-1.0 is out of range"),
    ({"max_snapshots": 0}, "max_snapshots=0 is out of range"),
    ({"bc_matches": 0}, "bc_matches=0 is out of range"),
    ({"bc_epochs": 0}, "bc_epochs=0 is out of range"),
    ({"device": "gpu9"}, "device='gpu9'"),
    ({"n_envs": 2.0}, "n_envs=2.0 must be an integer"),
    # stable-baselines3 seeds numpy's legacy generator: 2**32 was a ValueError traceback there
    ({"seed": 2**32}, "seed=4294967296 is out of range; allowed: 0..4294967295"),
    ({"bc_teacher": "ppo", "players": 3}, "no shipped PPO policy exists for 3 players"),
    # '' was read as the working directory: "--resume '.': it is a folder"
    ({"resume": ""}, "^--resume is empty; name a checkpoint .zip"),
    ({"resume": "  "}, "^--resume is empty"),
    # each field by its declared type: "no" was taken as true (ship=True shipped the policy
    # without a strength check), a number or bytes for a path or spec was a bare error later
    ({"ship": "no"}, "^ship='no' must be true or false, not str"),
    ({"overwrite": 0}, "^overwrite=0 must be true or false, not int"),
    ({"out": 5}, r"^out=5 must be a path \(str or os.PathLike\), not int"),
    ({"resume": b"r.zip"}, r"^resume=b'r.zip' must be a path"),
    ({"opponents": ["greedy=1", 5]}, "^opponents=5 must be a str, not int"),
    ({"opponents": "greedy=1"}, "^opponents='greedy=1' must be a list, not str"),
    ({"net": 16}, "^net=16 must be a str, not int"),
    # an opponent is built and checked against the table, as bc_opponents are: this passed,
    # and the run died in a 41-line traceback after writing config.json, pool/ and run.json
    ({"opponents": ["greedy=1", "ppo:/nonexistent.npz=1"]},
     "policy file '/nonexistent.npz': no such file"),
])  # fmt: skip
def test_bad_configuration_is_a_clear_error(changes, message, tmp_path, monkeypatch):
    import agents.ppo

    monkeypatch.setattr(agents.ppo, "POLICY_DIR", tmp_path)  # no shipped policy for any table
    with pytest.raises(ValueError, match=message):
        TrainConfig(**changes)


def test_a_path_field_takes_a_pathlib_path_and_a_tuple_of_specs(tmp_path):
    config = TrainConfig(out=tmp_path / "run", opponents=("greedy=1", "random=1"))
    assert config.out == str(tmp_path / "run") and config.opponents == ["greedy=1", "random=1"]


def test_train_from_python_checks_memory_before_writing_anything(tmp_path):
    """Only the command line checked the run fitted in memory: ``train(TrainConfig(n_envs=
    10**7))`` wrote config.json, pool/ and run.json and then started its environments."""
    from dominoes_env.cli_support import RefusedError

    out = tmp_path / "run"
    with pytest.raises(RefusedError, match="this run needs about"):
        train(TrainConfig(out=str(out), n_envs=10**7, vec_env="dummy"))
    assert not out.exists()


@pytest.mark.parametrize("device, gpus, mps, refused", [
    ("mps", 0, False, "available: cpu$"),
    ("cuda", 0, True, "available: cpu, mps$"),
    ("cuda:1", 1, False, "available: cpu, cuda, cuda:0$"),
    ("cuda:0", 1, False, None),
    ("mps", 0, True, None),
    ("auto", 0, False, None),
])  # fmt: skip
def test_a_device_torch_cannot_use_is_refused_before_anything_is_written(
        device, gpus, mps, refused, tmp_path, monkeypatch, capsys):
    """``--device mps`` on a torch built without it ended in torch's ``RuntimeError``
    traceback, status 1, after ``config.json``, ``run.json`` and ``pool/`` were written (and
    ``cuda:N`` past the last GPU the same way); it is one line naming what torch can use."""
    import torch

    from agents.sb3_run import check_device

    monkeypatch.setattr(torch.cuda, "is_available", lambda: gpus > 0)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: gpus)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: mps)
    if refused is None:
        check_device(device)
        return
    with pytest.raises(ValueError, match=f"^--device {device}: torch cannot use it here; "
                                         f"{refused}"):
        check_device(device)
    out = tmp_path / "run"
    assert main(["--total-steps", "64", "--n-envs", "1", "--n-steps", "64", "--batch-size", "32",
                 "--vec-env", "dummy", "--device", device, "--out", str(out)]) == 2
    lines = error_lines(capsys.readouterr().err)
    assert len(lines) == 1 and lines[0].startswith(f"error: --device {device}: "), lines
    assert not out.exists()


def test_every_config_field_is_a_flag(capsys):
    args = parser_for(TrainConfig).parse_args(["--players", "4", "--no-partnerships", "--opponents",
                                               "greedy=1", "search:sims=8=0.5", "--ship"])
    config = TrainConfig(**vars(args))
    assert config.players == 4 and config.partnerships is False and config.ship is True
    assert config.opponent_mix() == ([("greedy", 1.0), ("search:sims=8", 0.5)], 0.0)
    assert main(["--net", "0"]) == 2
    assert "hidden sizes" in capsys.readouterr().err


# -- --ship -----------------------------------------------------------------------------------
#: a tiny run at the default rules (a shipped policy is one of the table's default rules), with
#: --ship
SHIP_FLAGS = ["--total-steps", "256", "--n-envs", "1", "--n-steps", "128", "--batch-size",
              "128", "--n-epochs", "1", "--net", "16", "--snapshot-every", "10000",
              "--eval-every", "10000", "--eval-matches", "2", "--checkpoint-every", "10000",
              "--opponents", "greedy=1", "--vec-env", "dummy", "--seed", "1", "--ship"]


@pytest.fixture
def ship_dir(tmp_path, monkeypatch):
    """The shipped policies' folder, pointed at an empty temporary one (``agents/policies/``
    is never written), and the --ship evaluation cut to 20 matches."""
    import agents.ppo
    from experiments import train_ppo

    folder = tmp_path / "policies"
    folder.mkdir()
    monkeypatch.setattr(agents.ppo, "POLICY_DIR", folder)
    monkeypatch.setattr(train_ppo, "SHIP_MATCHES", 20)
    return folder


def test_ship_keeps_a_shipped_policy_that_is_stronger(tmp_path, ship_dir, capsys):
    """``--ship`` copied a 256-step run's policy (observation version 2) over the table's
    shipped one (version 4, trained for hours) unconditionally, and ``ppo`` and ``best``
    played it. Both now play greedy on the same deals; the stronger shipped one stays."""
    import shutil

    import agents.ppo

    real = agents.ppo.POLICY_FILES["2p"]
    target = ship_dir / real
    for source in (REAL_POLICIES / real, (REAL_POLICIES / real).with_suffix(".json")):
        shutil.copy(source, ship_dir / source.name)
    before = target.read_bytes(), target.with_suffix(".json").read_bytes()
    out = tmp_path / "run"
    assert main([*SHIP_FLAGS, "--out", str(out)]) == 0
    assert (target.read_bytes(), target.with_suffix(".json").read_bytes()) == before
    assert (out / "policy.npz").is_file()
    lines = capsys.readouterr().out.splitlines()
    assert lines[-3].startswith("trained 256 steps")
    new, shipped = (float(x.split()[-1]) for x in lines[-2].split(": ", 1)[1].split(", "))
    assert lines[-2].startswith("vs greedy over 20 matches: new ") and shipped > new
    assert lines[-1] == f"not shipped: {target} is at least as strong"


def test_ship_copies_a_policy_where_none_is_shipped_but_not_over_an_equal_one(
        tmp_path, ship_dir, capsys):
    from experiments.train_ppo import ship_policy

    out = tmp_path / "run"
    assert main([*SHIP_FLAGS, "--out", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    target = ship_dir / "ppo_2p.npz"
    assert lines[-2].startswith("vs greedy over 20 matches: new ")
    assert lines[-2].endswith(", shipped -1.000")
    assert lines[-1] == f"shipped: {target}"
    assert sorted(p.name for p in ship_dir.iterdir()) == ["ppo_2p.json", "ppo_2p.npz"]
    assert target.read_bytes() == (out / "policy.npz").read_bytes()
    assert target.with_suffix(".json").read_bytes() == (out / "policy.json").read_bytes()
    # the same policy again: as strong on the same deals, not shipped (its card stays)
    card = json.loads((out / "policy.json").read_text())
    (out / "policy.json").write_text(json.dumps({**card, "steps": 1}))
    assert not ship_policy(out, TrainConfig(out=str(out), seed=1, ship=True))
    new, shipped = capsys.readouterr().out.splitlines()[0].split(": ", 1)[1].split(", ")
    assert new.removeprefix("new ") == shipped.removeprefix("shipped ")
    assert json.loads(target.with_suffix(".json").read_text())["steps"] == card["steps"]


@pytest.mark.parametrize("fields, flags, table, ours", [
    ({"target_score": 50}, ["--target-score", "50"], "2p", "target_score=50"),
    ({"players": 4, "partnerships": False, "target_score": 100},
     ["--players", "4", "--no-partnerships", "--target-score", "100"], "4p_free_for_all",
     "target_score=100"),
])
def test_ship_refuses_rules_other_than_the_tables_default_before_training(
        tmp_path, ship_dir, capsys, fields, flags, table, ours):
    """The shipped file is the table's whatever the target score, so ``--target-score 50
    --ship`` trained and then put a policy of matches to 50 in place of the policy of the
    default rules. It is one error line naming both rule sets, status 2, before anything is
    written."""
    out = tmp_path / "run"
    assert main([*SHIP_FLAGS, *flags, "--out", str(out)]) == 2
    lines = error_lines(capsys.readouterr().err)
    assert lines == [f"error: --ship: a policy trained for {ours} is not shipped: ppo_{table}.npz "
                     f"is the policy of {describe_table(table)} under the default rules "
                     "(target_score=250); play it as ppo:PATH"]
    assert not out.exists() and list(ship_dir.iterdir()) == []
    with pytest.raises(ValueError, match=f"^--ship: a policy trained for {ours} is not "):
        TrainConfig(out=str(out), ship=True, opponents=["greedy=1"], **fields)
    assert not out.exists()


def test_ship_refused_after_training_is_an_error_line(tmp_path, ship_dir, capsys):
    """A shipped file that cannot be played (damaged) is not replaced in silence: the run is
    trained and exported, then one error line (status 2) says why it was not shipped."""
    target = ship_dir / "ppo_2p.npz"
    target.write_bytes(b"not a policy")
    out = tmp_path / "run"
    assert main([*SHIP_FLAGS, "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.out.splitlines()[-1].startswith("trained 256 steps")
    lines = error_lines(captured.err)
    assert len(lines) == 1 and lines[0].startswith("error: --ship: ")
    assert lines[0].endswith(f"; the run's policy is {out / 'policy.npz'}")
    assert str(target) in lines[0] and target.read_bytes() == b"not a policy"
    assert not target.with_suffix(".json").exists()


def test_behaviour_cloning_fits_a_deterministic_teacher():
    from sb3_contrib import MaskablePPO

    from agents.imitation import collect_demonstrations, pretrain_policy
    from dominoes_env import SingleAgentEnv

    rules = RuleConfig(target_score=100)
    data = collect_demonstrations("greedy", ["random"], rules, 16, seed=1)
    n = len(data["actions"])
    assert n > 200 and data["masks"][np.arange(n), data["actions"]].all()  # legal actions only
    assert data["obs"].shape == (n, 234) and data["values"].shape == (n,)
    model = MaskablePPO("MlpPolicy", SingleAgentEnv(rules=rules), seed=0,
                        policy_kwargs={"net_arch": [64, 64]})
    first = pretrain_policy(model, data, epochs=1, log=lambda _: None)
    last = pretrain_policy(model, data, epochs=40, log=lambda _: None)
    assert last["accuracy"] > max(0.8, first["accuracy"])  # greedy is learnable from move_points
    assert last["policy_loss"] < first["policy_loss"]


def test_demonstrations_are_the_same_whatever_the_workers():
    from agents.imitation import collect_demonstrations

    rules = RuleConfig(target_score=60)
    one = collect_demonstrations("greedy", ["random", "greedy"], rules, 6, seed=2, workers=1)
    two = collect_demonstrations("greedy", ["random", "greedy"], rules, 6, seed=2, workers=2)
    for key in one:
        assert np.array_equal(one[key], two[key]), key


@pytest.mark.parametrize("name, status, words", [
    ("SIGTERM", 143, "stopped by SIGTERM"),
    ("SIGINT", 130, "interrupted"),
    ("SIGHUP", 129, "stopped by SIGHUP"),
])
def test_a_stop_saves_and_exports_the_run_and_ends_with_its_status(tmp_path, name, status,
                                                                   words):
    """A SIGTERM was caught as a Ctrl-C: the run was saved but the command said
    "interrupted" and ended with 130, so a scheduler (or best_response, which passes its
    signal on) could not tell it was stopped by SIGTERM. And a stop saved ``last.zip`` but
    exported no ``policy.npz``: what the run had learned could not be played (train_jax and
    train_rllib export it)."""
    import signal

    from tests.helpers import CHILD_TIMEOUT_S, error_lines, spawn_program, wait_for_path

    out = tmp_path / "run"
    proc = spawn_program("experiments.train_ppo", "--total-steps", str(10**9), "--n-envs", "2",
                         "--vec-env", "dummy", "--n-steps", "128", "--batch-size", "128",
                         "--n-epochs", "1", "--net", "16", "--eval-every", str(10**9),
                         "--eval-matches", "2", "--checkpoint-every", "256", "--target-score",
                         "50", "--opponents", "greedy=1", "--out", str(out))
    wait_for_path(out / "checkpoints" / "ppo_256_steps.zip", proc)  # it is training
    proc.send_signal(getattr(signal, name))
    _, err = proc.communicate(timeout=CHILD_TIMEOUT_S)
    assert proc.returncode == status, err[-3000:]
    last = out / "checkpoints" / "last.zip"
    assert error_lines(err) == [f"error: {words}; the run is saved in {last} and its policy "
                                f"exported to {out / 'policy.npz'}: add --resume {last} to the "
                                "same command to go on"]
    assert last.is_file()
    meta = json.loads((out / "policy.json").read_text())
    assert meta["stopped"] == words and meta["steps"] >= 256
    agent = make_agent(f"ppo:{out / 'policy.npz'}")
    assert agent.policy.metadata["steps"] == meta["steps"]


def test_a_stop_during_an_update_saves_the_last_completed_update(tmp_path, monkeypatch, capsys):
    """A Ctrl-C during an update's epochs saved and exported the model with that update half
    applied (some of its gradient steps taken); the run is now saved as its last completed
    update left it (its step count SB3's: the steps collected)."""
    import sb3_contrib
    import torch

    real_train, real_step = sb3_contrib.MaskablePPO.train, torch.optim.Adam.step
    completed = []  # the policy as each completed update left it
    steps = []

    def train_and_keep(self):
        real_train(self)
        completed.append({k: v.clone() for k, v in self.policy.state_dict().items()})

    def step_or_stop(self, *args, **kwargs):
        steps.append(1)
        if len(steps) == 6:  # an update is 2 epochs of 2 minibatches: the second one's 2nd step
            raise KeyboardInterrupt
        return real_step(self, *args, **kwargs)

    monkeypatch.setattr(sb3_contrib.MaskablePPO, "train", train_and_keep)
    monkeypatch.setattr(torch.optim.Adam, "step", step_or_stop)
    out = tmp_path / "run"
    status = main(["--total-steps", "512", "--n-envs", "1", "--n-steps", "128", "--batch-size",
                   "64", "--n-epochs", "2", "--net", "16", "--eval-every", str(10**9),
                   "--eval-matches", "2", "--target-score", "50", "--opponents", "greedy=1",
                   "--out", str(out)])
    assert status == 130, capsys.readouterr().err[-3000:]
    assert len(completed) == 1 and len(steps) == 6
    saved = sb3_contrib.MaskablePPO.load(out / "checkpoints" / "last.zip", device="cpu")
    assert saved.num_timesteps == 256  # two rollouts collected, one update learned from
    for key, value in saved.policy.state_dict().items():
        assert torch.equal(value, completed[0][key]), key
    assert json.loads((out / "policy.json").read_text())["steps"] == 256


def test_a_ctrl_c_during_an_update_is_delivered_once_the_update_is_done(tmp_path, monkeypatch,
                                                                        capsys):
    """A Ctrl-C raised its exception wherever the main thread was, inside torch's and SB3's
    code too; it is now held while they work and delivered at the next environment step, so
    the update under way finishes and is kept."""
    import signal

    import sb3_contrib
    import torch

    real_train, real_step = sb3_contrib.MaskablePPO.train, torch.optim.Adam.step
    completed, steps = [], []

    def train_and_keep(self):
        real_train(self)
        completed.append({k: v.clone() for k, v in self.policy.state_dict().items()})

    def step_with_ctrl_c(self, *args, **kwargs):
        steps.append(1)
        if len(steps) == 6:  # an update is 2 epochs of 2 minibatches: inside the second one
            signal.raise_signal(signal.SIGINT)
        return real_step(self, *args, **kwargs)

    monkeypatch.setattr(sb3_contrib.MaskablePPO, "train", train_and_keep)
    monkeypatch.setattr(torch.optim.Adam, "step", step_with_ctrl_c)
    old = signal.signal(signal.SIGINT, signal.default_int_handler)  # as at a terminal
    try:
        out = tmp_path / "run"
        status = main(["--total-steps", "1024", "--n-envs", "1", "--n-steps", "128",
                       "--batch-size", "64", "--n-epochs", "2", "--net", "16", "--eval-every",
                       str(10**9), "--eval-matches", "2", "--target-score", "50", "--opponents",
                       "greedy=1", "--out", str(out)])
    finally:
        signal.signal(signal.SIGINT, old)
    assert status == 130, capsys.readouterr().err[-3000:]
    assert len(completed) == 2 and len(steps) == 8  # the second update ran to its end
    saved = sb3_contrib.MaskablePPO.load(out / "checkpoints" / "last.zip", device="cpu")
    for key, value in saved.policy.state_dict().items():
        assert torch.equal(value, completed[1][key]), key


def test_a_ctrl_c_while_a_checkpoint_is_written_saves_it_whole(tmp_path, monkeypatch, capsys):
    """A Ctrl-C in the middle of SB3's checkpoint save reached torch's zip writer, which
    raised its own ``RuntimeError`` ("unexpected pos") in place of the interruption: the run
    ended with a traceback and status 1, and left half a checkpoint. The save now finishes,
    whole, and the stop follows it."""
    import io
    import signal

    import sb3_contrib
    import torch

    from tests.helpers import error_lines

    class InterruptedWrites(io.RawIOBase):  # a Ctrl-C arrives with the writer's second write
        def __init__(self, file):
            self.file, self.writes = file, 0

        def writable(self):
            return True

        def write(self, data):
            self.writes += 1
            if self.writes == 2:
                signal.raise_signal(signal.SIGINT)
            return self.file.write(data)

    real_save, saves = torch.save, []

    def save_interrupted_once(obj, f, *args, **kwargs):
        saves.append(1)
        return real_save(obj, InterruptedWrites(f) if len(saves) == 1 else f, *args, **kwargs)

    monkeypatch.setattr(torch, "save", save_interrupted_once)
    old = signal.signal(signal.SIGINT, signal.default_int_handler)  # as at a terminal
    try:
        out = tmp_path / "run"
        status = main(["--total-steps", "1024", "--n-envs", "1", "--n-steps", "128",
                       "--batch-size", "128", "--n-epochs", "1", "--net", "16", "--eval-every",
                       str(10**9), "--eval-matches", "2", "--checkpoint-every", "256",
                       "--target-score", "50", "--opponents", "greedy=1", "--out", str(out)])
    finally:
        signal.signal(signal.SIGINT, old)
    err = capsys.readouterr().err
    assert status == 130, err[-3000:]
    assert error_lines(err) == [interrupted_line(out)]
    assert sorted(p.name for p in (out / "checkpoints").iterdir()) == ["last.zip",
                                                                      "ppo_256_steps.zip"]
    for path in (out / "checkpoints").iterdir():
        assert sb3_contrib.MaskablePPO.load(path, device="cpu").num_timesteps == 256


@pytest.mark.parametrize("stopped", [False, True])
def test_a_diverged_run_is_one_line_and_no_policy_file(tmp_path, monkeypatch, capsys, stopped):
    """A run whose weights went NaN wrote a policy.npz that ppo:PATH then refused; the export
    is now refused as it is made: one line naming the file and the problem, no policy file,
    the checkpoint kept; status 1 (a failed run, not bad input), or the stop's status when a
    Ctrl-C ended the run."""
    import sb3_contrib
    import torch

    import agents.ppo_export

    real_export, real_learn = agents.ppo_export.export_policy, sb3_contrib.MaskablePPO.learn

    def diverged(model, path, metadata=None):
        if path.name == "policy.npz":
            with torch.no_grad():
                model.policy.action_net.weight[0, 0] = float("nan")
        return real_export(model, path, metadata)

    def learn_then_ctrl_c(self, *args, **kwargs):
        real_learn(self, *args, **kwargs)
        raise KeyboardInterrupt

    monkeypatch.setattr(agents.ppo_export, "export_policy", diverged)
    if stopped:
        monkeypatch.setattr(sb3_contrib.MaskablePPO, "learn", learn_then_ctrl_c)
    out = tmp_path / "run"
    status = main(["--total-steps", "128", "--n-envs", "1", "--n-steps", "128", "--batch-size",
                   "128", "--n-epochs", "1", "--net", "16", "--eval-every", str(10**9),
                   "--eval-matches", "2", "--target-score", "50", "--opponents", "greedy=1",
                   "--out", str(out)])
    err = capsys.readouterr().err
    from tests.helpers import error_lines

    last = out / "checkpoints" / "last.zip"
    refused = (f"policy file {str(out / 'policy.npz')!r}: action_w holds NaN or infinite "
               "values")
    assert status == (130 if stopped else 1), err[-3000:]
    assert error_lines(err) == [
        f"error: interrupted; the run is saved in {last} and its policy not exported "
        f"({refused}): add --resume {last} to the same command to go on" if stopped else
        f"error: {refused}; it was not written; the run is saved in {last}"]
    assert last.is_file() and not (out / "policy.npz").exists()
    assert not (out / "policy.json").exists()


#: a run of 4 updates of 128 steps that snapshots and checkpoints after every rollout and
#: evaluates every other one
DIVERGING_FLAGS = ["--total-steps", "512", "--n-envs", "1", "--vec-env", "dummy", "--n-steps",
                   "128", "--batch-size", "128", "--n-epochs", "1", "--net", "16",
                   "--snapshot-every", "128", "--eval-every", "256", "--eval-matches", "2",
                   "--checkpoint-every", "128", "--keep-checkpoints", "10", "--target-score",
                   "50", "--opponents", "greedy=1", "self=1", "--seed", "2"]
TOO_LARGE = "holds a value of magnitude 1e+07; a policy's weights are at most 1e+06"


def _sound(model) -> bool:
    """Every weight of ``model``'s policy and value networks passes the policy file's rule."""
    from dominoes_env.policy_format import weights_problem

    return all(weights_problem(name, p.detach()) is None
               for name, p in model.policy.named_parameters())


@pytest.mark.parametrize(("update", "tensor", "value", "made"), [
    (2, "action_net.weight", float("nan"), "non-finite weights (NaN or infinite: "),
    (2, "mlp_extractor.value_net.0.weight", 1e7, "weights too large for a policy file "
     f"(mlp_extractor.value_net.0.weight {TOO_LARGE}: "),
    (4, "action_net.weight", -1e7, f"weights too large for a policy file (action_net.weight "
     f"{TOO_LARGE}: "),
], ids=["nan-actor", "1e7-critic", "1e7-actor-last-update"])
def test_a_diverged_update_is_never_counted(tmp_path, monkeypatch, capsys, update, tensor, value,
                                            made):
    """train_ppo checked no update: a NaN (or a weight above the policy format's 1e6) was
    caught only when a snapshot, an evaluation or the export refused it, and the run was then
    saved in last.zip as it ended, diverged; one only in the value network was never caught
    at all. Each update is now checked as it ends (the last before the final evaluation), by
    the policy file's own rule, as train_jax and train_rllib check theirs: one line naming the
    problem and the step, status 1, last.zip holding the run as the update before left it,
    and no snapshot, evaluation, checkpoint or policy of the diverged one."""
    import csv

    import sb3_contrib
    import torch

    from tests.helpers import error_lines

    real_train = sb3_contrib.MaskablePPO.train
    completed = []  # the policy as each update left it

    def train_then_diverge(self):
        real_train(self)
        if len(completed) + 1 == update:
            with torch.no_grad():
                dict(self.policy.named_parameters())[tensor].view(-1)[3] = value
        completed.append({k: v.clone() for k, v in self.policy.state_dict().items()})

    monkeypatch.setattr(sb3_contrib.MaskablePPO, "train", train_then_diverge)
    out = tmp_path / "run"
    status = main([*DIVERGING_FLAGS, "--out", str(out)])
    err = capsys.readouterr().err
    last, steps = out / "checkpoints" / "last.zip", 128 * update
    assert status == 1, err[-3000:]
    assert error_lines(err) == [
        f"error: the update reaching {steps:,} steps made {made}the training diverged; try a "
        f"smaller --learning-rate); nothing of it was saved; the run as it was before that "
        f"update is saved in {last}"]
    assert len(completed) == update  # no update after it
    saved = sb3_contrib.MaskablePPO.load(last, device="cpu")
    assert saved.num_timesteps == steps  # the steps collected, as the run's checkpoints count
    for key, kept in saved.policy.state_dict().items():
        assert torch.equal(kept, completed[update - 2][key]), key
    checkpoints = sorted((out / "checkpoints").iterdir())
    assert sorted(p.name for p in checkpoints) == sorted(
        ["last.zip", *(f"ppo_{n}_steps.zip" for n in range(128, steps + 1, 128))])
    for path in checkpoints:
        assert _sound(sb3_contrib.MaskablePPO.load(path, device="cpu")), path
    for path in [*(out / "pool").glob("*.npz"), out / "eval_policy.npz"]:
        assert NumpyPolicy(path).metadata["steps"] <= steps, path  # read: the rule holds
    with open(out / "eval.csv", newline="") as fh:
        assert [int(row["steps"]) for row in csv.DictReader(fh)] == list(range(0, steps + 1, 256))
    assert not (out / "policy.npz").exists() and not (out / "policy.json").exists()


class _Abandoned(BaseException):
    """An exit out of training that is neither an error nor a stop (as ``SystemExit`` is)."""


@pytest.mark.parametrize("how", ["nan", "sound-weights", "nan-then-exit"])
def test_an_update_diverging_in_its_middle_is_never_saved(tmp_path, monkeypatch, capsys, how):
    """An update whose first minibatch step made a NaN was checked only as it ended: the next
    minibatch's distribution raised torch's ValueError (a tensor dump), and the run saved the
    half-applied NaN update in last.zip and ended with status 2. That error is now the
    divergence it is: one line, status 1, last.zip as the update before left it, no policy.
    An error out of an update that leaves the weights sound goes on as it was (status 2, the
    run saved as it ended); whatever else leaves an update with NaN weights, last.zip is never
    saved with them."""
    import sb3_contrib
    import torch

    from tests.helpers import error_lines

    real_train = sb3_contrib.MaskablePPO.train
    completed = []  # the policy as each update left it

    def train(self):
        if len(completed) == 1:  # update 2: its first minibatch step diverges
            real_step = self.policy.optimizer.step

            def step(*args, **kwargs):
                result = real_step(*args, **kwargs)
                if how == "sound-weights":
                    raise ValueError("not a divergence")
                with torch.no_grad():
                    self.policy.action_net.weight.view(-1)[3] = float("nan")
                if how == "nan-then-exit":
                    raise _Abandoned
                return result

            monkeypatch.setattr(self.policy.optimizer, "step", step)
        real_train(self)
        completed.append({k: v.clone() for k, v in self.policy.state_dict().items()})

    monkeypatch.setattr(sb3_contrib.MaskablePPO, "train", train)
    out = tmp_path / "run"
    flags = [*DIVERGING_FLAGS, "--out", str(out)]
    flags[flags.index("--batch-size") + 1] = "64"  # two minibatches an update
    last = out / "checkpoints" / "last.zip"
    if how == "nan-then-exit":
        with pytest.raises(_Abandoned):
            main(flags)
    else:
        status = main(flags)
        err = capsys.readouterr().err
        assert status == (2 if how == "sound-weights" else 1), err[-3000:]
        assert error_lines(err) == [
            "error: not a divergence" if how == "sound-weights" else
            "error: the update reaching 256 steps made non-finite weights (NaN or infinite: the "
            "training diverged; try a smaller --learning-rate); nothing of it was saved; the run "
            f"as it was before that update is saved in {last}"]
    assert len(completed) == 1  # update 2 never ended
    saved = sb3_contrib.MaskablePPO.load(last, device="cpu")
    assert saved.num_timesteps == 256 and _sound(saved)
    same = [torch.equal(kept, completed[0][key]) for key, kept in saved.policy.state_dict().items()]
    # sound weights: saved as they ended; NaN ones: as update 1 left them
    assert not all(same) if how == "sound-weights" else all(same)
    assert sorted(p.name for p in (out / "checkpoints").iterdir()) == [
        "last.zip", "ppo_128_steps.zip", "ppo_256_steps.zip"]
    assert not (out / "policy.npz").exists() and not (out / "policy.json").exists()


def test_a_behaviour_cloning_diverging_in_its_middle_is_one_line(tmp_path, monkeypatch, capsys):
    """A behaviour cloning whose first step made a NaN ended in torch's ValueError (a tensor
    dump, status 2, where status 1 was promised). It is now the divergence it is: one line,
    status 1, nothing saved (no bc.json, checkpoint, evaluation or policy)."""
    import torch

    from tests.helpers import error_lines

    real_step, steps = torch.optim.Adam.step, []

    def step(self, *args, **kwargs):  # the cloning's optimizer: the first Adam to step
        result = real_step(self, *args, **kwargs)
        steps.append(1)
        if len(steps) == 1:
            with torch.no_grad():
                self.param_groups[0]["params"][0].view(-1)[3] = float("nan")
        return result

    monkeypatch.setattr(torch.optim.Adam, "step", step)
    out = tmp_path / "run"
    status = main([*DIVERGING_FLAGS, "--bc-teacher", "greedy", "--bc-matches", "2",
                   "--workers", "1", "--bc-epochs", "2", "--out", str(out)])
    err = capsys.readouterr().err
    assert status == 1, err[-3000:]
    assert error_lines(err) == [
        "error: the behaviour cloning made non-finite weights (NaN or infinite: the training "
        "diverged); nothing of it was saved"]
    assert len(steps) == 1  # not a step after it
    assert not (out / "bc.json").exists() and not (out / "checkpoints").exists()
    assert not (out / "eval.csv").exists() and not (out / "policy.npz").exists()
    assert not list((out / "pool").iterdir())


def test_a_diverged_behaviour_cloning_is_not_trained_on(tmp_path, monkeypatch, capsys):
    """A behaviour cloning that made a NaN in the value network was trained on (the first
    update spread it everywhere, and the run saved what it made). It is now checked before the
    first rollout: one line, status 1, nothing saved."""
    import numpy as np
    import torch

    import agents.imitation
    from tests.helpers import error_lines

    def demonstrations(*args, **kwargs):
        return {"actions": np.zeros(4, dtype=np.int64)}

    def pretrain(model, data, **kwargs):
        with torch.no_grad():
            model.policy.value_net.weight[0, 0] = float("nan")
        return {"accuracy": 1.0, "policy_loss": 0.0, "value_loss": 0.0}

    monkeypatch.setattr(agents.imitation, "collect_demonstrations", demonstrations)
    monkeypatch.setattr(agents.imitation, "pretrain_policy", pretrain)
    out = tmp_path / "run"
    status = main([*DIVERGING_FLAGS, "--bc-teacher", "greedy", "--bc-matches", "1",
                   "--workers", "1", "--out", str(out)])
    err = capsys.readouterr().err
    assert status == 1, err[-3000:]
    assert error_lines(err) == [
        "error: the behaviour cloning made non-finite weights (NaN or infinite: the training "
        "diverged); nothing of it was saved"]
    assert not (out / "checkpoints").exists() and not (out / "eval.csv").exists()
    assert not (out / "policy.npz").exists() and not list((out / "pool").iterdir())
    assert not (out / "bc.json").exists()  # written only for a cloning that passed


class _Touch:
    """A pickle that creates a file when it is loaded (what a hostile checkpoint could run)."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        import pathlib

        return pathlib.Path.touch, (pathlib.Path(self.path),)


def _with_data(source, target, change):
    import zipfile

    with zipfile.ZipFile(source) as z:
        entries = {name: z.read(name) for name in z.namelist()}
    data = json.loads(entries["data"])
    change(data)
    entries["data"] = json.dumps(data).encode()
    with zipfile.ZipFile(target, "w") as z:
        for name, raw in entries.items():
            z.writestr(name, raw)


def test_resume_runs_no_code_from_the_checkpoint(tmp_path):
    """stable-baselines3 unpickles the objects in a checkpoint's JSON (cloudpickle): a
    ``--resume`` zip with a payload in its observation space ran it (a file appeared) before
    the checkpoint was even checked. Its known entries are now rebuilt, not read, and an
    entry it does not know is refused."""
    import base64
    import pickle

    small = {**TINY, "total_steps": 256, "eval_every": 10_000, "checkpoint_every": 256}
    train(TrainConfig(out=str(tmp_path / "run"), seed=1, **small))
    last = tmp_path / "run" / "checkpoints" / "last.zip"
    marker = tmp_path / "ran"
    payload = {":type:": "x", ":serialized:": base64.b64encode(pickle.dumps(
        _Touch(marker))).decode()}
    _with_data(last, tmp_path / "space.zip", lambda d: d.update(observation_space={
        **d["observation_space"], ":serialized:": payload[":serialized:"]}))
    _with_data(last, tmp_path / "extra.zip", lambda d: d.update(evil=payload))
    with pytest.raises(RunDirError, match="holds a pickled 'evil', which is never unpickled"):
        train(TrainConfig(out=str(tmp_path / "b"), resume=str(tmp_path / "extra.zip"), **small))
    train(TrainConfig(out=str(tmp_path / "a"), resume=str(tmp_path / "space.zip"),
                      **{**small, "total_steps": 512}))
    assert json.loads((tmp_path / "a" / "policy.json").read_text())["steps"] >= 512
    assert not marker.exists()


SMALL = {**TINY, "total_steps": 256, "eval_every": 10_000, "checkpoint_every": 256}
#: SMALL as flags (a resume to 512 steps: one more rollout of 2 envs x 128 steps)
SMALL_FLAGS = ["--total-steps", "512", "--n-envs", "2", "--n-steps", "128", "--batch-size",
               "128", "--n-epochs", "2", "--net", "16", "--snapshot-every", "256",
               "--eval-every", "10000", "--eval-matches", "2", "--checkpoint-every", "256",
               "--target-score", "50", "--opponents", "greedy=1", "random=1", "self=1",
               "--seed", "1"]


@pytest.fixture(scope="module")
def small_checkpoint(tmp_path_factory):
    """A checkpoint of a SMALL run (256 steps), shared by the tests that edit copies of it."""
    out = tmp_path_factory.mktemp("small") / "run"
    train(TrainConfig(out=str(out), seed=1, **SMALL))
    return out / "checkpoints" / "last.zip"


def _edited(source, target, change=None, *, drop=(), text=None):
    """A copy of the checkpoint zip ``source`` at ``target``: its data entry changed by
    ``change`` (a function of the parsed JSON) or replaced by ``text``, members in ``drop``
    left out."""
    import zipfile

    with zipfile.ZipFile(source) as z:
        entries = {name: z.read(name) for name in z.namelist() if name not in drop}
    if change is not None:
        data = json.loads(entries["data"])
        change(data)
        entries["data"] = json.dumps(data).encode()
    if text is not None:
        entries["data"] = text(entries["data"].decode()).encode()
    with zipfile.ZipFile(target, "w") as z:
        for name, raw in entries.items():
            z.writestr(name, raw)
    return target


def _set(key, value):
    return lambda data: data.update({key: value})


STEPS = "an integer in 0..9,007,199,254,740,992 is expected"
WALL = "a number >= 0 and <= 9007199254740992 is expected"


@pytest.mark.parametrize("edit, why", [
    (dict(change=_set("learning_rate", float("nan"))),
     "its learning_rate is nan; a number > 0 and <= 1 is expected"),
    (dict(change=_set("learning_rate", "x")),
     "its learning_rate is 'x'; a number > 0 and <= 1 is expected"),
    # an int past the largest float: math.isfinite of it was an OverflowError
    (dict(change=_set("gamma", 10**400)),
     f"its gamma is 1{'0' * 56}...; a number > 0 and <= 1 is expected"),
    (dict(change=_set("num_timesteps", "16")), f"its num_timesteps is '16'; {STEPS}"),
    (dict(change=_set("num_timesteps", 10**30)),
     f"its num_timesteps is 1000000000000000000000000000000; {STEPS}"),
    (dict(change=_set("num_timesteps", -100)), f"its num_timesteps is -100; {STEPS}"),
    (dict(change=_set("num_timesteps", 16.5)), f"its num_timesteps is 16.5; {STEPS}"),
    (dict(change=_set("batch_size", 0)),
     "its batch_size is 0; an integer in 2..9,007,199,254,740,992 is expected"),
    (dict(change=_set("gamma", 5.0)), "its gamma is 5.0; a number > 0 and <= 1 is expected"),
    (dict(change=_set("gamma", float("nan"))),
     "its gamma is nan; a number > 0 and <= 1 is expected"),
    (dict(change=lambda data: data.pop("policy_class")), "it has no policy_class entry"),
    (dict(change=lambda data: data.pop("num_timesteps")), "it has no num_timesteps entry"),
    (dict(change=_set("env", 5)),
     "it holds an entry 'env', which a MaskablePPO checkpoint does not"),
    (dict(change=_set("rollout_buffer_kwargs", {"buffer_size": -1})),
     "its rollout_buffer_kwargs is {'buffer_size': -1}; {} is expected"),
    (dict(text=lambda t: t.replace('"num_timesteps": 256', '"num_timesteps": 256, '
                                   '"num_timesteps": 999')),
     "its data entry is ambiguous (the key 'num_timesteps' appears twice in one object)"),
    # the run's wall seconds it recorded (train_ppo's own entry), from which a resume counts on
    (dict(change=_set("wall_s", "12")), f"its wall_s is '12'; {WALL}"),
    (dict(change=_set("wall_s", -1.5)), f"its wall_s is -1.5; {WALL}"),
    (dict(change=_set("wall_s", float("inf"))), f"its wall_s is inf; {WALL}"),
    (dict(change=_set("wall_s", True)), f"its wall_s is True; {WALL}"),
    (dict(drop=("policy.pth",)), "it has no 'policy.pth' member"),
    (dict(drop=("policy.optimizer.pth",)), "it has no 'policy.optimizer.pth' member"),
])
def test_resume_refuses_a_checkpoint_whose_entries_were_changed(tmp_path, capsys,
                                                                small_checkpoint, edit, why):
    """stable-baselines3 sets every entry of a checkpoint's data as an attribute of the model:
    a ``--resume`` zip with a NaN or text learning rate, a step count of "16", 10**30 or -100,
    a batch size of 0 or a gamma of 5, no policy_class, a key given twice or no policy.pth
    ended in a library traceback (status 1) or trained in silence ("trained 44 steps"). Each
    is now one line naming the file and the entry, status 2, nothing written."""
    zipped = _edited(small_checkpoint, tmp_path / "edited.zip", **edit)
    out = tmp_path / "run"
    assert main([*SMALL_FLAGS, "--out", str(out), "--resume", str(zipped)]) == 2
    assert error_lines(capsys.readouterr().err) == [
        f"error: --resume {str(zipped)!r} is not a readable checkpoint ({why})"]
    assert not out.exists()


def test_resume_of_a_zip_whose_network_file_is_damaged_is_one_line(tmp_path, capsys,
                                                                  small_checkpoint):
    """A checkpoint zip whose policy.pth was damaged ended in torch's UnpicklingError
    traceback, whose words advise loading it again with weights_only=False ("arbitrary code
    execution")."""
    import zipfile

    zipped = tmp_path / "damaged.zip"
    with zipfile.ZipFile(small_checkpoint) as z:
        entries = {name: z.read(name) for name in z.namelist()}
    entries["policy.pth"] = b"garbage" * 10
    with zipfile.ZipFile(zipped, "w") as z:
        for name, raw in entries.items():
            z.writestr(name, raw)
    out = tmp_path / "run"
    assert main([*SMALL_FLAGS, "--out", str(out), "--resume", str(zipped)]) == 2
    lines = error_lines(capsys.readouterr().err)
    assert len(lines) == 1 and "a network file in it is damaged" in lines[0], lines
    assert "weights_only" not in lines[0] and not out.exists()


@pytest.mark.parametrize(("value", "problem"), [
    (float("inf"), "mlp_extractor.value_net.0.weight holds NaN or infinite values"),
    (1e7, f"mlp_extractor.value_net.0.weight {TOO_LARGE}"),
], ids=["inf", "1e7"])
def test_resume_refuses_a_checkpoint_whose_weights_a_policy_file_refuses(
        tmp_path, capsys, small_checkpoint, value, problem):
    """A checkpoint holding weights a policy file refuses (what a diverged run saved before
    each update was checked) was trained on; one above the policy format's 1e6 in the value
    network was never caught. It is now refused as its --resume is read: one line, status 2,
    nothing written."""
    import io
    import zipfile

    import torch

    zipped = tmp_path / "diverged.zip"
    with zipfile.ZipFile(small_checkpoint) as z:
        entries = {name: z.read(name) for name in z.namelist()}
    weights = torch.load(io.BytesIO(entries["policy.pth"]), weights_only=True)
    weights["mlp_extractor.value_net.0.weight"][1, 2] = value
    raw = io.BytesIO()
    torch.save(weights, raw)
    entries["policy.pth"] = raw.getvalue()
    with zipfile.ZipFile(zipped, "w") as z:
        for name, member in entries.items():
            z.writestr(name, member)
    out = tmp_path / "run"
    assert main([*SMALL_FLAGS, "--out", str(out), "--resume", str(zipped)]) == 2
    assert error_lines(capsys.readouterr().err) == [
        f"error: --resume {str(zipped)!r} holds weights a policy file refuses ({problem}: the "
        "file was changed, or its run diverged); resume an earlier checkpoint of the run"]
    assert not out.exists()


def test_a_resume_trains_on_with_the_command_settings(tmp_path, capsys, small_checkpoint):
    """A checkpoint saying n_steps 99, n_envs 7 and gamma 0.5 overrode --n-steps 128 and
    --gamma 1 in silence ("trained 115 steps" where the command asked for rollouts of 128).
    The command's settings now win, and a line says that the checkpoint's differed."""
    zipped = _edited(small_checkpoint, tmp_path / "edited.zip",
                     lambda data: data.update(n_steps=99, n_envs=7, gamma=0.5))
    out = tmp_path / "run"
    assert main([*SMALL_FLAGS, "--out", str(out), "--resume", str(zipped)]) == 0
    assert (f"note: --resume {zipped} was trained with n_steps=99, gamma=0.5, n_envs=7; this "
            "run goes on with --n-steps 128 --gamma 1.0 --n-envs 2") in capsys.readouterr().err
    assert json.loads((out / "policy.json").read_text())["steps"] == 512  # one rollout of 256


def test_a_run_trains_whole_updates_and_its_bar_and_line_say_so(tmp_path, capsys, monkeypatch,
                                                                small_checkpoint):
    """A resume to --total-steps 6400 from step 6,225 asked stable-baselines3 for 175 steps: it
    trained a whole update of 176, its bar ended at "176/175" and the line said "trained 6,401
    steps" with no word of why. The steps asked are now whole updates, and the line says."""
    from sb3_contrib import MaskablePPO

    asked = []
    learn = MaskablePPO.learn

    def spy(self, total_timesteps, *args, **kwargs):
        asked.append(total_timesteps)
        return learn(self, total_timesteps, *args, **kwargs)

    monkeypatch.setattr(MaskablePPO, "learn", spy)
    flags = [*SMALL_FLAGS]
    flags[flags.index("--total-steps") + 1] = "300"  # the checkpoint holds 256; updates of 256
    out = tmp_path / "run"
    assert main([*flags, "--out", str(out), "--resume", str(small_checkpoint)]) == 0
    assert asked == [256] and json.loads((out / "policy.json").read_text())["steps"] == 512
    assert ("trained 512 steps (--total-steps 300 rounded up to whole updates of 256)"
            in capsys.readouterr().out)


def test_a_resume_at_its_total_steps_says_it_trains_nothing(tmp_path, capsys, small_checkpoint):
    """A checkpoint at or past --total-steps trained nothing and said "trained 256 steps"."""
    flags = [*SMALL_FLAGS]
    flags[flags.index("--total-steps") + 1] = "100"
    out = tmp_path / "run"
    assert main([*flags, "--out", str(out), "--resume", str(small_checkpoint)]) == 0
    assert (f"note: --resume {small_checkpoint} is at step 256, not below --total-steps 100: "
            "nothing is trained") in capsys.readouterr().err
    assert json.loads((out / "policy.json").read_text())["steps"] == 256


@pytest.mark.parametrize("total", ["256", "100"])
def test_a_resume_with_nothing_to_train_leaves_the_run_as_it_was(tmp_path, capsys,
                                                                 small_checkpoint, total):
    """A --resume at or past --total-steps still added its start-up seconds: each such
    resume saved last.zip again with a larger wall_s (policy.json's went 1.1, 2.1, 2.9),
    appended another eval.csv row for the same step, and ended "trained 256 steps in 3 s".
    Now it is idle, as train_jax's is: the run's files stay byte for byte as they were, its
    policy is exported again as the checkpoint holds it, with the wall seconds it recorded,
    and the last line says nothing was trained."""
    import shutil

    from agents.sb3_checkpoint import read_data

    run = tmp_path / "run"
    shutil.copytree(small_checkpoint.parent.parent, run)
    last = run / "checkpoints" / "last.zip"
    recorded = read_data(last)["wall_s"]
    kept = {name: (run / name).read_bytes() for name in (
        "eval.csv", "config.json", "throughput.json", "eval_policy.npz", "checkpoints/last.zip",
        "checkpoints/ppo_256_steps.zip")}
    logs = sorted(p.relative_to(run) for p in (run / "tb").rglob("*"))
    flags = [*SMALL_FLAGS]
    flags[flags.index("--total-steps") + 1] = total
    for _ in range(2):
        assert main([*flags, "--out", str(run), "--resume", str(last)]) == 0
        out, err = capsys.readouterr()
        assert (f"note: --resume {last} is at step 256, not below --total-steps {total}: "
                "nothing is trained") in err
        assert out.splitlines()[-1] == (f"nothing trained: the run stays at 256 steps; policy: "
                                        f"{run / 'policy.npz'}")
        assert {name: (run / name).read_bytes() for name in kept} == kept
        card = json.loads((run / "policy.json").read_text())
        assert card["steps"] == 256 and card["wall_s"] == recorded
        assert NumpyPolicy(run / "policy.npz").metadata["wall_s"] == recorded
        assert sorted(p.relative_to(run) for p in (run / "tb").rglob("*")) == logs


def test_the_checkpoint_schema_holds_the_ranges_of_the_flags():
    """A checkpoint's training settings may take the values their flags take, no others."""
    from agents.sb3_checkpoint import ENTRIES

    fields = {f.name: f.metadata for f in dataclasses.fields(TrainConfig)}
    for name in ("learning_rate", "n_steps", "batch_size", "n_epochs", "gamma", "gae_lambda",
                 "ent_coef", "seed"):
        meta, check = fields[name], ENTRIES[name]
        assert (check(meta["low"]) is None) == (not meta.get("low_open")), name
        assert check(meta["low"] - 1) is not None, name
        if "high" in meta:
            assert check(meta["high"]) is None and check(meta["high"] + 1) is not None, name


def test_a_stopped_pool_of_demonstration_workers_ends_whatever_sigterm_handler_it_inherits():
    """The workers are forked with the parent's signal handlers: with a Python handler for
    SIGTERM (a command's runner installs one before expert_iteration forks its workers), a
    Ctrl-C while a worker was inside a match made the pool's ``terminate`` send SIGTERM, which
    only ran that handler; the worker played on and ``terminate`` waited for it in ``join``."""
    import subprocess
    import sys

    from tests.helpers import ROOT

    script = (
        "import signal, time\n"
        "signal.signal(signal.SIGTERM, lambda *args: None)\n"
        "import agents.imitation as imitation\n"
        "from agents.arena import derive_seed\n"
        "from dominoes_env.core import RuleConfig\n"
        "real = imitation.play_and_record\n"
        "def slow(job):  # the second match never ends\n"
        "    if job[3] != derive_seed(1, 'bc', 0):\n"
        "        time.sleep(3600)\n"
        "    return real(job)\n"
        "imitation.play_and_record = slow\n"
        "class CtrlC(list):  # Ctrl-C as the first match's decisions arrive\n"
        "    def append(self, item):\n"
        "        raise KeyboardInterrupt\n"
        "try:\n"
        "    imitation.collect_demonstrations('greedy', ['random'], RuleConfig(target_score=20),\n"
        "                                     2, seed=1, workers=2, finished=CtrlC())\n"
        "except KeyboardInterrupt:\n"
        "    print('stopped')\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0 and done.stdout == "stopped\n", done.stderr[-1500:]


def test_a_value_error_out_of_the_run_is_one_error_line(tmp_path, capsys, monkeypatch):
    """A ``ValueError`` from the run (an evaluation's agent spec refused, a reader's check)
    reached a traceback; it is one ``error:`` line, status 2."""
    import experiments.train_ppo as program

    def refused(config, command=None):
        raise ValueError("agent spec 'ppo:x': refused")

    monkeypatch.setattr(program, "train", refused)
    status = main(["--out", str(tmp_path / "run"), "--net", "16", "--n-envs", "2",
                   "--n-steps", "32", "--batch-size", "32", "--opponents", "random=1"])
    err = capsys.readouterr().err
    assert status == 2, err
    assert error_lines(err) == ["error: agent spec 'ppo:x': refused"]


def test_a_resumed_run_counts_its_wall_seconds_on_from_its_checkpoint(tmp_path, monkeypatch):
    """``wall_s`` (eval.csv, policy.json) counted this process's seconds only: a run resumed
    from its checkpoint started its learning curve's wall time again near 0, where train_jax and
    train_rllib carry it across ``--resume``. Each checkpoint now records the run's wall
    seconds, and a resume counts on from them.

    The clock started before the environments were made and the model built or loaded, where
    train_rllib's started once its algorithm was built: each resume added its start-up to the
    run's seconds of training. All three trainers now count from the same point
    (:class:`~dominoes_env.cli_support.RunClock`): set up and loaded, before the first work of
    training (here the step-0 evaluation, which counts)."""
    import time

    import agents.sb3_callbacks
    import experiments.train_ppo as program
    from agents.sb3_checkpoint import read_data

    real_set_up, real_evaluation = program.make_vec_env, agents.sb3_callbacks.evaluation_row

    def slow_set_up(config):  # 3 s of start-up: not training
        time.sleep(3)
        return real_set_up(config)

    def slow_evaluation(*args, **kwargs):  # 2 s of each evaluation of the first run: training
        time.sleep(2)
        return real_evaluation(*args, **kwargs)

    out = tmp_path / "run"
    monkeypatch.setattr(program, "make_vec_env", slow_set_up)
    monkeypatch.setattr(agents.sb3_callbacks, "evaluation_row", slow_evaluation)
    train(TrainConfig(out=str(out), seed=1, **SMALL))
    monkeypatch.setattr(agents.sb3_callbacks, "evaluation_row", real_evaluation)
    first = json.loads((out / "policy.json").read_text())["wall_s"]
    last = out / "checkpoints" / "last.zip"
    recorded = read_data(last)["wall_s"]
    train(TrainConfig(out=str(out), seed=1, resume=str(last), **{**SMALL, "total_steps": 512}))
    rows = list(csv.DictReader(open(out / "eval.csv")))
    assert [int(r["steps"]) for r in rows] == [0, 256, 512]
    walls = [float(r["wall_s"]) for r in rows]
    assert walls[0] < 3, walls  # the start-up before it is not the run's training
    assert walls == sorted(walls) and walls[1] >= 2, walls  # on from the first run's
    assert walls[2] - recorded < 3, (walls, recorded)  # nor the resume's: one rollout's
    assert json.loads((out / "policy.json").read_text())["wall_s"] >= first >= walls[1]
    # every checkpoint records the run's wall seconds when it was saved
    saved = [read_data(out / "checkpoints" / name)["wall_s"]
             for name in ("ppo_256_steps.zip", "ppo_512_steps.zip", "last.zip")]
    assert walls[0] <= saved[0] <= walls[1] <= saved[1] <= walls[2] <= saved[2], (walls, saved)


def test_a_checkpoint_saved_before_wall_seconds_were_recorded_resumes_from_0(
        tmp_path, capsys, small_checkpoint):
    """A checkpoint that records no wall seconds (saved before train_ppo recorded them) is
    resumed, its run's seconds before it counted as 0, in silence."""
    zipped = _edited(small_checkpoint, tmp_path / "old.zip", lambda data: data.pop("wall_s"))
    out = tmp_path / "run"
    assert main([*SMALL_FLAGS, "--out", str(out), "--resume", str(zipped)]) == 0
    assert error_lines(capsys.readouterr().err) == []
    assert json.loads((out / "policy.json").read_text())["wall_s"] >= 0


def test_a_second_stop_while_a_stopped_run_is_exported_is_dropped(tmp_path, monkeypatch,
                                                                   capsys):
    """A stopped run saved its checkpoint with the stop signals held but exported its policy
    without: a SIGTERM (or a second Ctrl-C) then cut the export short, and the command ended
    with the second stop's words and status ("stopped by SIGTERM", 143) and no policy. As in
    train_jax, once a stop is delivered later ones are dropped until the run is saved and
    exported: the first stop's line and status."""
    import signal

    import sb3_contrib

    import agents.ppo_export

    real_export, real_learn = agents.ppo_export.export_policy, sb3_contrib.MaskablePPO.learn

    def learn_then_ctrl_c(self, *args, **kwargs):
        result = real_learn(self, *args, **kwargs)
        signal.raise_signal(signal.SIGINT)  # held, delivered as the learning returns
        return result

    def export_with_more_stops(model, path, metadata=None):
        if path.name == "policy.npz":
            signal.raise_signal(signal.SIGTERM)
            signal.raise_signal(signal.SIGINT)
        return real_export(model, path, metadata)

    monkeypatch.setattr(sb3_contrib.MaskablePPO, "learn", learn_then_ctrl_c)
    monkeypatch.setattr(agents.ppo_export, "export_policy", export_with_more_stops)
    old = signal.signal(signal.SIGINT, signal.default_int_handler)  # as at a terminal
    try:
        out = tmp_path / "run"
        status = main(["--total-steps", "128", "--n-envs", "1", "--n-steps", "128",
                       "--batch-size", "128", "--n-epochs", "1", "--net", "16", "--eval-every",
                       str(10**9), "--eval-matches", "2", "--target-score", "50",
                       "--opponents", "greedy=1", "--out", str(out)])
    finally:
        signal.signal(signal.SIGINT, old)
    err = capsys.readouterr().err
    assert status == 130, err[-3000:]
    assert error_lines(err) == [interrupted_line(out)]
    assert json.loads((out / "policy.json").read_text())["stopped"] == "interrupted"
