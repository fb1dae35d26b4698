"""train_jax end to end at a tiny size: a couple of jitted updates, evaluation from step 0,
export in the ``ppo:PATH`` format (plays a legal match), checkpoint and resume, same seed same
policy, bad flags exit 2 before anything is written. One network shape throughout, so the
update compiles once per test process."""

from __future__ import annotations

import csv
import json
import time

import numpy as np
import pytest

pytest.importorskip("optax")
pytest.importorskip("pgx")

from agents import make_agent  # noqa: E402
from agents.arena import play_match  # noqa: E402
from agents.ppo import NumpyPolicy  # noqa: E402
from dominoes_env.core import RuleConfig  # noqa: E402
from dominoes_env.jax.networks import critic_value, init_params, mlp  # noqa: E402
from dominoes_env.jax.policy_files import export_npz  # noqa: E402
from dominoes_env.jax.selfplay import SelfPlay  # noqa: E402
from dominoes_env.obs import observation_spec  # noqa: E402
from experiments.train_jax import Config, build_parser, main, make_train  # noqa: E402
from tests.helpers import ROOT, jit_reset, update_failing_at  # noqa: E402

# 2 updates of 8 games x 4 decisions; evaluation with 2 matches per opponent
TINY = ["--num-envs", "8", "--num-steps", "4", "--num-minibatches", "2", "--update-epochs",
        "2", "--net", "16", "--total-steps", "64", "--eval-every", "32", "--eval-matches", "2",
        "--checkpoint-every", "32", "--target-score", "50", "--snapshot-every", "1",
        "--snapshots", "2", "--no-progress"]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("jax") / "run"
    assert main([*TINY, "--seed", "3", "--out", str(out)]) == 0
    return out


def test_tiny_run_writes_curve_checkpoint_and_a_playable_export(run):
    meta = json.loads((run / "policy.json").read_text())
    assert meta["steps"] == 64 and meta["rules"]["target_score"] == 50
    assert meta["obs_version"] >= 2 and meta["wall_s"] > 0
    assert meta["command"].startswith("python -m experiments.train_jax --num-envs 8")
    rows = list(csv.DictReader(open(run / "eval.csv")))
    assert [int(r["steps"]) for r in rows] == [0, 32, 64]  # the curve starts at step 0
    for r in rows:
        assert float(r["ci_low_vs_greedy"]) <= float(r["win_rate_vs_greedy"]) \
            <= float(r["ci_high_vs_greedy"])
        assert int(float(r["matches_vs_random"])) == 2
    assert any((run / "tb").rglob("events.out.tfevents*"))
    assert (run / "checkpoint.npz").is_file()
    timing = json.loads((run / "throughput.json").read_text())
    assert timing["steps_per_update"] == 32 and len(timing["update_s"]) == 2
    assert min(timing["update_s"]) > 0 and len(timing["update_cpu_s"]) == 2

    policy = NumpyPolicy(run / "policy.npz")  # the numpy format of agents.ppo
    assert policy.activation == "tanh" and len(policy.layers) == 1
    assert policy.metadata["rules"] == RuleConfig(target_score=50).to_dict()
    # play_match raises on any illegal action
    result = play_match([make_agent(f"ppo:{run / 'policy.npz'}"), "greedy"],
                        RuleConfig(target_score=50), seed=4)
    assert result.winner in (0, 1)


def test_resume_continues_the_step_count(run):
    assert main([*TINY, "--total-steps", "96", "--seed", "3", "--out", str(run),
                 "--resume", str(run / "checkpoint.npz")]) == 0
    meta = json.loads((run / "policy.json").read_text())
    assert meta["steps"] == 96
    rows = list(csv.DictReader(open(run / "eval.csv")))
    assert [int(r["steps"]) for r in rows][-1] == 96
    with np.load(run / "checkpoint.npz") as data:
        assert json.loads(str(data["meta"]))["steps"] == 96


def test_a_run_made_before_matmul_existed_resumes_and_a_bfloat16_resume_is_refused(
        run, tmp_path, capsys):
    """``--matmul`` came after runs were made: their markers have no ``matmul``, which means
    float32; resuming such a run in bfloat16 changes its arithmetic, a setting, so it is
    refused as any other change is."""
    import shutil

    old = tmp_path / "old"
    shutil.copytree(run, old)
    marker = json.loads((old / "run.json").read_text())
    # float32 and points are left out, as before the flags
    assert "matmul" not in marker["settings"] and "reward" not in marker["settings"]
    resume = [*TINY, "--seed", "3", "--out", str(old), "--resume", str(old / "checkpoint.npz")]
    assert main([*resume, "--total-steps", "128", "--eval-every", "0"]) == 0
    capsys.readouterr()
    assert main([*resume, "--total-steps", "160", "--matmul", "bfloat16"]) == 2
    assert "matmul: None there, 'bfloat16' now" in capsys.readouterr().err


def test_a_resume_at_its_total_steps_says_it_trains_nothing(run, tmp_path, capsys):
    """A checkpoint at or past --total-steps trained nothing and said "trained 300,000 steps"
    for --total-steps 200000, in silence; each such resume appended another eval.csv row for
    the same step and saved the checkpoint again with its wall_s grown. Now the run's files
    stay as they were (its policy exported again, as the checkpoint holds it), and the last
    line says nothing was trained."""
    import shutil

    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    steps = json.loads((copy / "policy.json").read_text())["steps"]
    kept = {name: (copy / name).read_bytes()
            for name in ("eval.csv", "checkpoint.npz", "config.json")}
    for _ in range(2):
        assert main([*TINY, "--total-steps", "32", "--seed", "3", "--out", str(copy),
                     "--resume", str(copy / "checkpoint.npz")]) == 0
        out, err = capsys.readouterr()
        assert (f"note: --resume {copy / 'checkpoint.npz'} is at step {steps:,}, not below "
                "--total-steps 32: nothing is trained") in err
        assert f"nothing trained: the run stays at {steps:,} steps; policy: " in out, out
        assert "trained 64" not in out
        assert {name: (copy / name).read_bytes() for name in kept} == kept
        assert json.loads((copy / "policy.json").read_text())["steps"] == steps


def test_resume_without_out_continues_the_checkpoints_own_run(run, tmp_path, monkeypatch,
                                                              capsys):
    """``--resume X/checkpoint.npz`` without ``--out`` went on in a new run in ``runs/jax``,
    without saying where; it continues the run in ``X``, as best_response's ``--resume``
    does (a stopped run says only "continue with --resume X/checkpoint.npz")."""
    import shutil

    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    monkeypatch.chdir(tmp_path)
    assert Config(resume=str(copy / "checkpoint.npz")).out == str(copy)
    assert Config().out == "runs/jax"
    assert main([*TINY, "--total-steps", "32", "--seed", "3",
                 "--resume", str(copy / "checkpoint.npz")]) == 0
    assert f"policy: {copy / 'policy.npz'}" in capsys.readouterr().out
    assert not (tmp_path / "runs").exists()


def test_the_run_s_seconds_count_from_its_first_work_of_training(tmp_path, monkeypatch):
    """The three trainers started their clocks at three points (train_jax before its JAX
    set-up, train_ppo before its environments, train_rllib once its algorithm was built):
    each resume added its start-up to train_jax's seconds of training. All three now count
    from the same point (dominoes_env.cli_support.RunClock): set up and loaded, before the
    step-0 evaluation (which counts)."""
    import experiments.train_jax as train_jax

    real = train_jax.make_train

    def slow(config):  # 2 s of set-up: not training
        time.sleep(2)
        return real(config)

    monkeypatch.setattr(train_jax, "make_train", slow)
    out = tmp_path / "run"
    assert main([*TINY, "--out", str(out)]) == 0
    with open(out / "eval.csv", newline="") as fh:
        walls = [float(row["wall_s"]) for row in csv.DictReader(fh)]
    assert walls[0] < 2 and walls == sorted(walls), walls


def test_time_limit_stops_training_then_exports(tmp_path, capsys):
    out = tmp_path / "run"
    assert main([*TINY, "--eval-every", "0", "--total-steps", "640", "--time-limit", "1e-4",
                 "--out", str(out)]) == 0
    assert json.loads((out / "policy.json").read_text())["steps"] == 32  # one update
    assert "(interrupted)" in capsys.readouterr().out


def test_an_update_s_seconds_include_its_logging(tmp_path, monkeypatch):
    """throughput.json times an update from its start to the next one's, its logging included
    (as train_ppo's spans include its callbacks): bench_training compares the two."""
    import experiments.train_jax as train_jax

    def slow(self, values, step):  # logging that takes 50 ms
        time.sleep(0.05)

    monkeypatch.setattr(train_jax.TensorBoard, "scalars", slow)
    out = tmp_path / "run"
    assert main([*TINY, "--eval-every", "0", "--out", str(out)]) == 0
    timing = json.loads((out / "throughput.json").read_text())
    assert len(timing["update_s"]) == 2 and min(timing["update_s"]) >= 0.05


def test_same_seed_same_policy(tmp_path, capsys):
    import jax

    flags = [*TINY, "--eval-every", "0", "--seed", "5"]
    assert main([*flags, "--out", str(tmp_path / "a")]) == 0
    assert main([*flags, "--out", str(tmp_path / "b")]) == 0
    # and under JAX_ENABLE_X64 (a TypeError from the game there; then a run of its own): the
    # run switches it off, with a note
    jax.config.update("jax_enable_x64", True)
    try:
        assert main([*flags, "--out", str(tmp_path / "c")]) == 0
        assert not jax.config.jax_enable_x64
    finally:
        jax.config.update("jax_enable_x64", False)
    assert "note: JAX_ENABLE_X64 is ignored: train_jax computes in 32 bits" in \
        capsys.readouterr().err
    a = np.load(tmp_path / "a" / "policy.npz")
    for other in ("b", "c"):
        b = np.load(tmp_path / other / "policy.npz")
        for key in ("w0", "b0", "action_w", "action_b"):
            np.testing.assert_array_equal(a[key], b[key])


def test_tiny_run_in_bfloat16_exports_a_float32_policy_close_to_its_network(tmp_path):
    """``--matmul bfloat16``: the rollout, its opponents and the update compute their products
    from bfloat16 inputs; the policy file holds the float32 weights, which ``agents.ppo``
    plays in float32 (its logits within bfloat16's rounding of the network's)."""
    import jax.numpy as jnp

    out = tmp_path / "bf16"
    assert main([*TINY, "--eval-every", "0", "--matmul", "bfloat16", "--out", str(out)]) == 0
    assert json.loads((out / "config.json").read_text())["matmul"] == "bfloat16"
    with np.load(out / "policy.npz") as stored:
        assert all(stored[k].dtype == np.float32 for k in ("w0", "b0", "action_w", "action_b"))
    policy = NumpyPolicy(out / "policy.npz")
    layers = [*policy.layers, (policy.action_w, policy.action_b)]
    actor = [{"w": jnp.asarray(w), "b": jnp.asarray(b)} for w, b in layers]
    obs = np.random.default_rng(0).random((5, policy.obs_size)).astype(np.float32)
    np.testing.assert_allclose(policy.logits(obs), np.asarray(mlp(actor, obs, jnp.bfloat16)),
                               rtol=0.05, atol=0.05)
    result = play_match([make_agent(f"ppo:{out / 'policy.npz'}"), "greedy"],
                        RuleConfig(target_score=50), seed=4)
    assert result.winner in (0, 1)


@pytest.mark.parametrize("flags, message", [
    (["--num-envs", "0"], "num_envs=0 is out of range; allowed: 1..2147483647"),
    (["--net", "abc"], "net='abc'"),
    (["--opp-greedy", "-1"], "opp_greedy=-1.0 is out of range; allowed: >= 0"),
    (["--num-envs", "3", "--num-minibatches", "2", "--num-steps", "1"], "not divisible"),
    (["--players", "5"], "argument --players: invalid choice: 5 (choose from 2, 3, 4)"),
    (["--critic", "oracle"], "invalid choice: 'oracle'"),
    (["--matmul", "float16"], "invalid choice: 'float16'"),
    (["--reward", "wins"], "invalid choice: 'wins' (choose from 'points', 'match')"),
    (["--reward", "match", "--target-score", "600"], "--reward match: a match equity table is "
                                                     "built for targets up to 500 points"),
    (["--obs-version", "1"], "observation version 1 is not one the JAX game serves; it serves "
                             "2, 3, 4"),
    (["--resume", "no/such/checkpoint.npz"], "no such checkpoint file"),
    # each trained (or hung, or failed late) before it was bounded as train_ppo bounds it
    (["--gamma", "2"], "gamma=2.0 is out of range; allowed: >= 0 and <= 1"),
    (["--gae-lambda", "5"], "gae_lambda=5.0 is out of range"),
    (["--clip-eps", "1e300"], "clip_eps=1e+300 is out of range"),
    (["--reward-scale", "1e38"], "reward_scale=1e+38 is out of range; allowed: >= 0 and <= 1000"),
    # 1e300 overflowed float32: numpy's two-line cast warning came first
    (["--vf-coef", "1e300"], "vf_coef=1e+300 is out of range; allowed: >= 0 and <= 1000"),
    (["--max-grad-norm", "1e300"], "max_grad_norm=1e+300 is out of range; allowed: >= 0 and "
                                   "<= 1000000"),
    (["--eval-matches", "100000000000"], "eval_matches=100000000000 is out of range"),
    (["--total-steps", "100000000000", "--num-envs", "2", "--num-steps", "8"],
     "is 6,250,000,000 updates of 16 steps; at most 2,147,483,647"),
    (["--net", ",".join(["8"] * 65)], "net gives 65 hidden layers; a policy file holds at most 64"),
    # counts the jitted update holds as int32: an OverflowError traceback at the first update
    (["--snapshot-every", "1000000000000"], "snapshot_every=1000000000000 is out of range; "
                                            "allowed: 1..2147483647"),
    (["--update-epochs", "10000000000"], "update_epochs=10000000000 is out of range"),
    (["--num-minibatches", "2", "--update-epochs", "2000000000"],
     "num_minibatches * update_epochs (Adam steps per update) = 4,000,000,000; at most "
     "2,147,483,647"),
])
def test_bad_flags_exit_2_with_one_line_before_writing(tmp_path, capsys, flags, message):
    """A value out of a field's range is refused by the parser (SystemExit), one that only the
    whole configuration shows by main (status 2): one ``error:`` line either way."""
    out = tmp_path / "never"
    try:
        code = main([*flags, "--out", str(out)])
    except SystemExit as exit_:
        code = exit_.code
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and err.count("\n") == 1
    assert not out.exists()


@pytest.mark.parametrize("flag", ["--init", "--resume"])
def test_a_checkpoint_that_is_no_file_is_named_for_what_it_is(tmp_path, capsys, flag):
    """A FIFO or a folder given as --init or --resume was "no such checkpoint file"."""
    import os

    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "folder").mkdir()
    for name, kind in (("fifo", "a FIFO"), ("folder", "a folder")):
        assert main([flag, str(tmp_path / name), "--out", str(tmp_path / "never")]) == 2
        assert capsys.readouterr().err == (f"error: {flag} {str(tmp_path / name)!r}: it is "
                                           f"{kind}, not a checkpoint file\n")
    assert not (tmp_path / "never").exists()
    if flag == "--resume":  # without --out the folder's parent was taken for the run, and the
        # refusal named it: "--out ... holds files that are not a run's"
        assert main([flag, str(tmp_path / "folder")]) == 2
        assert capsys.readouterr().err == (f"error: --resume {str(tmp_path / 'folder')!r} is a "
                                           "folder; name the checkpoint file in it (the line "
                                           "that stopped its run says which)\n")


def test_resume_with_another_seed_exits_2(run, tmp_path, capsys):
    """``--resume`` with another ``--seed`` trained on: the run's key goes on from its
    checkpoint, so the seed changed only the seeds of its evaluation matches, and config.json and
    policy.json then named a seed the run was not trained from (train_ppo refuses it)."""
    checkpoint = run / "checkpoint.npz"
    before = checkpoint.read_bytes()
    for out in (run, tmp_path / "never"):
        assert main([*TINY, "--total-steps", "128", "--seed", "4", "--out", str(out),
                     "--resume", str(checkpoint)]) == 2
        assert capsys.readouterr().err == (f"error: --resume {str(checkpoint)!r} was trained "
                                           "with seed=3, this run has seed=4\n")
    assert checkpoint.read_bytes() == before and not (tmp_path / "never").exists()


def test_mismatched_or_foreign_checkpoint_exits_2(run, tmp_path, capsys):
    out = tmp_path / "never"
    assert main([*TINY, "--net", "32", "--out", str(out),
                 "--resume", str(run / "checkpoint.npz")]) == 2
    assert "net='16', this run has net='32'" in capsys.readouterr().err
    assert main([*TINY, "--critic", "full", "--out", str(out),
                 "--resume", str(run / "checkpoint.npz")]) == 2
    assert "critic='obs', this run has critic='full'" in capsys.readouterr().err
    assert main([*TINY, "--obs-version", "3", "--out", str(out),
                 "--resume", str(run / "checkpoint.npz")]) == 2
    assert "obs_version=2, this run has obs_version=3" in capsys.readouterr().err
    assert main([*TINY, "--out", str(out), "--resume", str(run / "policy.npz")]) == 2
    assert "is not a train_jax checkpoint" in capsys.readouterr().err
    # a checkpoint whose arrays were damaged (NaN weights): refused before anything is written
    with np.load(run / "checkpoint.npz") as data:
        arrays = {k: data[k] for k in data.files}
    leaf = next(k for k, v in arrays.items() if v.dtype == np.float32 and v.ndim == 2)
    np.savez(tmp_path / "nan.npz", **{**arrays, leaf: np.full_like(arrays[leaf], np.nan)})
    assert main([*TINY, "--seed", "3", "--out", str(out), "--resume",
                 str(tmp_path / "nan.npz")]) == 2  # the run's seed: its arrays are the fault
    err = capsys.readouterr().err
    assert "holds NaN or infinite values" in err and err.count("\n") == 1
    assert not out.exists()
    # an earlier run's directory without --resume
    assert main([*TINY, "--out", str(run)]) == 2
    err = capsys.readouterr().err
    assert ("holds another run (of experiments.train_jax); pass --resume "
            f"{run / 'checkpoint.npz'}") in err


def test_export_matches_the_jax_network(tmp_path):
    import jax

    params = init_params(jax.random.PRNGKey(0), 234, 112, Config(net="8,4").hidden())
    actor = jax.tree.map(lambda x: x + 0.1, params["actor"])  # non-zero biases too
    path = tmp_path / "p.npz"
    export_npz(actor, path, {"rules": RuleConfig().to_dict()})
    obs = np.random.default_rng(0).random((5, 234)).astype(np.float32)
    np.testing.assert_allclose(NumpyPolicy(path).logits(obs), np.asarray(mlp(actor, obs)),
                               rtol=1e-4, atol=1e-4)


def test_opponent_policy_is_checked_before_training(tmp_path, capsys):
    from agents.ppo import random_policy_npz

    relu = tmp_path / "relu.npz"
    random_policy_npz(relu, RuleConfig(), hidden=(8,), activation="relu")
    four = tmp_path / "four.npz"
    random_policy_npz(four, RuleConfig(num_players=4), hidden=(8,))
    random_policy_npz(tmp_path / "fine.npz", RuleConfig(), hidden=(8,))
    out = tmp_path / "never"
    for flags, message in ((["--opp-policy", str(relu)], "uses relu"),
                           # the tables by name, not only the sizes
                           (["--opp-policy", str(four)], "--opp-policy: policy file "
                            f"{str(four)!r}: was trained for 4 players in partnerships, not "
                            "these rules' 2 players: it takes 252 inputs and 112 actions; "
                            "these rules need 234 and 112"),
                           (["--opp-policy", str(tmp_path / "no.npz")], "no such file"),
                           (["--opp-policy-weight", "1"], "needs --opp-policy PATH"),
                           # loaded, and never played (its share of the envs was 0)
                           ([*TINY, "--opp-policy", str(tmp_path / "fine.npz")],
                            "which is 0: give a positive --opp-policy-weight")):
        assert main([*flags, "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and message in err, err
    assert not out.exists()


def test_make_train_keys_its_cache_by_the_opponent_policy_file_contents(tmp_path):
    """The update was cached by the --opp-policy path: a file rewritten between two runs in
    one process was still played as it was at the first."""
    from agents.ppo import random_policy_npz

    path = tmp_path / "opp.npz"
    random_policy_npz(path, RuleConfig(), hidden=(8,), seed=1)
    config = Config(num_envs=8, num_steps=4, num_minibatches=2, net="16", opp_policy=str(path),
                    opp_policy_weight=1.0)
    first = make_train(config)[1]
    assert make_train(config)[1] is first  # the same file: the compiled update again
    random_policy_npz(path, RuleConfig(), hidden=(8,), seed=2)
    assert make_train(config)[1] is not first


def test_best_response_plays_a_policy_train_jax_cannot_play_on_the_maskable_ppo_path(tmp_path):
    """Every ppo:PATH went to train_jax, a relu policy too, which train_jax refused ("uses
    relu") after the command was printed."""
    from agents.ppo import random_policy_npz
    from experiments.best_response import jittable

    relu, tanh = tmp_path / "relu.npz", tmp_path / "tanh.npz"
    random_policy_npz(relu, RuleConfig(), hidden=(8,), activation="relu")
    random_policy_npz(tanh, RuleConfig(), hidden=(8,))
    assert jittable(f"ppo:{relu}") is None
    assert jittable(f"ppo:{tanh}") == ("ppo", str(tanh))


def test_best_response_refuses_bad_input(tmp_path, capsys):
    from experiments.best_response import jittable
    from experiments.best_response import main as best_response

    assert best_response(["--agent", "nonsense", "--steps", "10"]) == 2
    assert "unknown agent spec 'nonsense'" in capsys.readouterr().err
    assert best_response(["--agent", "greedy", "--steps", "0"]) == 2
    assert "--steps and --matches must be >= 1" in capsys.readouterr().err
    # an empty --out was taken for no --out (a temporary folder), where others refuse it
    assert best_response(["--agent", "greedy", "--steps", "64", "--num-envs", "2",
                          "--out", ""]) == 2
    assert "--out is empty" in capsys.readouterr().err
    assert jittable("ppo:x.npz") == ("ppo", "x.npz") and jittable("greedy") == ("greedy", "")
    assert jittable("search:sims=5") is None
    # an observation version the response's trainer cannot serve: one line, nothing trained
    assert best_response(["--agent", "search", "--steps", "10", "--obs-version", "3"]) == 2
    assert "the response is a MaskablePPO run, which serves version 2" in capsys.readouterr().err
    assert best_response(["--agent", "ppo", "--steps", "10", "--obs-version", "2"]) == 2
    assert "reads observation version 4, and a response to it reads the same" in \
        capsys.readouterr().err
    # more updates than train_jax trains: it said "more --num-envs / --num-steps", a flag
    # best_response has not
    assert best_response(["--agent", "greedy", "--steps", "1000000000000", "--num-envs", "2",
                          "--matches", "2", "--out", str(tmp_path / "big")]) == 2
    err = capsys.readouterr().err
    assert err == ("error: --steps 1,000,000,000,000 is 15,625,000,000 updates of train_jax (2 "
                   "games (--num-envs) x 32 steps); it trains at most 2,147,483,647: give "
                   "fewer --steps or more --num-envs\n")
    assert not (tmp_path / "big").exists()


def test_best_response_resuming_a_run_it_did_not_train_names_its_own_flags(run, tmp_path,
                                                                            capsys):
    """``best_response --resume`` of a plain train_jax run passed on the trainer's refusal,
    "repeat its arguments to continue it", listing --net and --devices, which best_response
    has not: it now says that it continues only a best response it trained, and how to go
    on, before the trainer starts."""
    import shutil

    from experiments.best_response import main as best_response
    from tests.helpers import error_lines

    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    assert best_response(["--agent", "greedy", "--steps", "64", "--num-envs", "2",
                          "--matches", "2", "--resume", str(copy / "checkpoint.npz")]) == 2
    out, err = capsys.readouterr()
    (line,) = error_lines(err)
    assert "best response to" not in out  # refused before its trainer started
    assert f"--out {str(copy)!r} holds a run of experiments.train_jax with other arguments " \
           "than this best response gives it (" in line and "net: '16' there" in line, line
    assert "best_response continues only a best response it trained" in line, line
    assert "repeat its arguments" not in line, line


def test_print_settings_prints_the_run_settings_and_writes_nothing(tmp_path, capsys):
    """``--print-settings`` (what best_response compares with the run in ``--out``): the flags
    checked as a run checks them, the settings a run's marker holds as one JSON line, status
    0, and nothing written; a bad flag is still one error line, status 2."""
    from experiments.train_jax import run_settings
    from tests.helpers import error_lines

    out = tmp_path / "run"
    argv = [*TINY, "--out", str(out)]
    assert main([*argv, "--print-settings"]) == 0
    printed, err = capsys.readouterr()
    (line,) = printed.splitlines()
    config = Config(**vars(build_parser().parse_args(argv)))
    assert json.loads(line) == json.loads(json.dumps(run_settings(config), sort_keys=True,
                                                     default=str))
    assert json.loads(line)["net"] == "16" and "print_settings" not in json.loads(line)
    assert not out.exists() and list(tmp_path.iterdir()) == []
    assert main([*argv, "--num-minibatches", "3", "--print-settings"]) == 2
    printed, err = capsys.readouterr()
    assert printed == "" and len(error_lines(err)) == 1
    assert not out.exists()


def test_sample_actions_follows_the_masked_softmax():
    """The two-level inverse-CDF sampler: the empirical frequencies of 40,000 draws match
    softmax(logits) within 4 standard errors, and a masked action is never drawn."""
    import jax
    import jax.numpy as jnp

    from dominoes_env.jax.networks import sample_actions

    rng = np.random.default_rng(0)
    logits = rng.normal(size=(3, 112)).astype(np.float32)
    mask = rng.random((3, 112)) < 0.1
    mask[:, 5] = True
    masked = jnp.where(jnp.asarray(mask), jnp.asarray(logits), -1e9)
    draws = jax.jit(jax.vmap(lambda k: sample_actions(k, masked)))(
        jax.random.split(jax.random.PRNGKey(1), 40_000))  # [40000, 3]
    draws = np.asarray(draws)
    probs = np.asarray(jax.nn.softmax(masked, axis=-1))
    for row in range(3):
        freq = np.bincount(draws[:, row], minlength=112) / len(draws)
        assert not freq[~mask[row]].any()
        se = np.sqrt(probs[row] * (1 - probs[row]) / len(draws))
        assert np.all(np.abs(freq - probs[row]) <= 4 * se + 1e-9)


@pytest.mark.parametrize("weights, n, sizes", [
    ([0.35, 0.25, 0.35, 0.05, 0.0], 512, [179, 128, 179, 26]),
    ([0.35, 0.25, 0.35, 0.05, 0.0], 8, [3, 2, 3]),  # random's 0.4 env rounds away
    ([0, 0, 1, 0, 0], 7, [7]),
    ([0, 0, 0, 0, 1], 5, [5]),
    ([1, 1, 1, 0, 0], 10, [4, 3, 3]),
])  # fmt: skip
def test_opponent_slots_cover_every_env_once_in_proportion(weights, n, sizes):
    from dominoes_env.jax.selfplay import opponent_slots

    slots = opponent_slots(weights, n)
    assert [b - a for _, a, b in slots] == sizes
    assert slots[0][1] == 0 and slots[-1][2] == n
    assert all(prev[2] == nxt[1] for prev, nxt in zip(slots, slots[1:], strict=False))
    assert all(weights[kind] > 0 for kind, _, _ in slots)


def _two_devices():
    import jax

    if len(jax.devices()) < 2:
        pytest.skip("needs two JAX devices (conftest.py asks for two CPU devices)")
    return jax.devices()[:2]


def test_data_parallel_gradient_is_the_whole_minibatch_gradient():
    """Two devices, each with half the rows: the average of their gradients (advantages
    normalised over both halves) is the gradient of the loss on the whole minibatch."""
    import jax
    import jax.numpy as jnp
    from jax.sharding import Mesh
    from jax.sharding import PartitionSpec as P

    from experiments.train_jax import Transition, device_mean, normalise_advantages, ppo_loss

    mesh = Mesh(np.array(_two_devices()), ("d",))
    config = Config(net="16", critic="full")
    params = init_params(jax.random.PRNGKey(0), 234, 112, config.hidden(), 56)
    rng = np.random.default_rng(0)
    n = 64
    mask = rng.random((n, 112)) < 0.2
    mask[:, 7] = True
    action = np.array([rng.choice(np.flatnonzero(row)) for row in mask], np.int32)
    batch = Transition(jnp.asarray(rng.random((n, 234)), jnp.float32),
                       jnp.asarray(rng.random((n, 56)) < 0.5, jnp.float32), jnp.asarray(mask),
                       jnp.asarray(action), jnp.asarray(rng.normal(size=n) - 3, jnp.float32),
                       jnp.asarray(rng.normal(size=n), jnp.float32),
                       jnp.zeros(n, jnp.float32), jnp.zeros(n, bool))
    adv = jnp.asarray(rng.normal(size=n) * 3 + 1, jnp.float32)  # far from normalised
    target = jnp.asarray(rng.normal(size=n), jnp.float32)

    # jitted, as the trainer runs it (op by op it compiled 160 small programs: 8 s)
    grad = jax.jit(lambda params, batch, adv, target: jax.grad(ppo_loss, has_aux=True)(
        params, batch, normalise_advantages(adv), target, config))
    whole = grad(params, batch, adv, target)

    def per_device(params, batch, adv, target):
        g = jax.grad(ppo_loss, has_aux=True)(params, batch, normalise_advantages(adv, "d"),
                                             target, config)
        return device_mean(g, "d")

    split = jax.jit(jax.shard_map(per_device, mesh=mesh, in_specs=(P(), P("d"), P("d"), P("d")),
                                  out_specs=P(), check_vma=False))(params, batch, adv, target)
    for a, b in zip(jax.tree.leaves(whole), jax.tree.leaves(split), strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-4, atol=1e-6)
    # the halves alone differ: the test would see a per-device normalisation
    half = grad(params, jax.tree.map(lambda x: x[: n // 2], batch), adv[: n // 2],
                target[: n // 2])
    assert not np.allclose(np.asarray(half[1]["policy_loss"]), np.asarray(whole[1]["policy_loss"]))


def test_update_on_two_devices_splits_the_games_and_keeps_the_rest_equal():
    import jax

    _two_devices()
    config = Config(**vars(build_parser().parse_args([*TINY, "--devices", "2"])))
    init, update, devices = make_train(config)
    assert devices == 2
    runner = init(jax.random.PRNGKey(1))
    for _ in range(2):
        runner, metrics = update(runner)
    assert np.isfinite([float(v) for v in metrics.values()]).all()
    games = jax.tree.leaves(runner["games"])[0]
    assert [s.data.shape[0] for s in games.addressable_shards] == [4, 4]  # 8 games, 4 each
    for name in ("params", "opt", "snaps", "key", "update"):
        for leaf in jax.tree.leaves(runner[name]):
            first, second = (np.asarray(s.data) for s in leaf.addressable_shards)
            np.testing.assert_array_equal(first, second)
    # the two devices played different games
    first, second = (np.asarray(s.data) for s in games.addressable_shards)
    assert not np.array_equal(first, second)


def test_update_does_one_collective_per_minibatch():
    """On CPU devices every collective is a rendezvous where a core waits: the update has five
    (in its text, a scan's body once): the minibatch's averaged gradient (one flat vector),
    the epoch's advantage mean and variance, and the two episode counts of the metrics. With a
    ``pmean`` per gradient leaf it had 16; with five it ran 1.10-1.26x as fast on two cores."""
    import re

    import jax

    _two_devices()
    init, update, devices = make_train(Config(**vars(build_parser().parse_args(
        [*TINY, "--devices", "2"]))))
    text = update.lower(init(jax.random.PRNGKey(1))).as_text()
    assert devices == 2 and len(re.findall(r"stablehlo\.all_reduce", text)) == 5


def test_one_cpu_device_unless_more_are_asked_for():
    """XLA's CPU all-reduce can wait forever for the other device's thread: a 4-player run on
    two CPU devices hung in its first update on a quiet 2-core machine. On a CPU the default is
    one device; ``--devices 2`` still splits the games."""
    import jax

    _two_devices()
    assert make_train(Config(**vars(build_parser().parse_args(TINY))))[2] == 1
    assert Config(num_envs=512).device_count(len(jax.devices()), cpu=False) == 2


def test_devices_flag_is_checked(tmp_path, capsys):
    out = tmp_path / "never"
    assert main([*TINY, "--devices", "3", "--out", str(out)]) == 2
    assert "must both split evenly over devices=3" in capsys.readouterr().err
    assert main([*TINY, "--devices", "4", "--num-envs", "16", "--out", str(out)]) == 2
    assert "devices=4, but JAX sees 2" in capsys.readouterr().err
    assert not out.exists()
    assert main([*TINY, "--devices", "1", "--eval-every", "0", "--out", str(out)]) == 0
    assert json.loads((out / "policy.json").read_text())["devices"] == 1


@pytest.mark.parametrize("name", ["experiments.train_jax", "experiments.bench_training"])
def test_docstring_examples(name):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_bench_training_gives_train_jax_its_products_and_times_them_alike(dtype):
    """``--jax-matmul`` reaches train_jax as ``--matmul``, and the network-arithmetic line
    times a plain product computed the same way (a float32 peak beside bfloat16 products
    understated how near the peak they run)."""
    from experiments.bench_training import build_parser, jax_flags, matmul_gflops

    flags = jax_flags(build_parser().parse_args(["--jax-matmul", dtype]))
    assert flags[flags.index("--matmul") + 1] == dtype
    assert matmul_gflops(0.05, dtype) > 0


def test_bench_training_runs_both_trainers_as_commands(capsys):
    """The benchmark's own code path at a tiny size: each trainer runs as its own command and
    reports its updates' seconds; the JSON last line has the figures the docs quote."""
    from experiments.bench_training import main as bench

    assert bench(["--net", "16", "--num-steps", "4", "--minibatch", "16", "--jax-envs", "8",
                  "--ppo-envs", "4", "--epochs", "2", "--updates", "2", "--no-matmul",
                  "--compile-cache", "shared"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert [line.split(":")[0] for line in lines[2:4]] == ["train_jax", "train_ppo"]
    assert lines[0].startswith("load average at start") and lines[-2].startswith(
        "load average at end")
    assert lines[1].endswith("NOT matched: games per rollout train_jax 8, train_ppo 4")
    assert "compiling: " in lines[2] and "steps per CPU-second" in lines[2]
    result = json.loads(lines[-1])
    assert len(result["load_average_start"]) == len(result["load_average_end"]) == 3
    for key in ("train_jax_steps_per_s", "train_ppo_steps_per_s", "ratio",
                "train_jax_steps_per_cpu_s", "train_ppo_steps_per_cpu_s", "ratio_cpu",
                "train_jax_first_update_s", "train_jax_cpu_s", "train_ppo_wall_s"):
        assert result[key] > 0, key
    assert result["train_jax_compile_s"] >= 0
    assert result["ratio"] == pytest.approx(
        result["train_jax_steps_per_s"] / result["train_ppo_steps_per_s"], rel=0.01)
    assert result["ratio_cpu"] == pytest.approx(
        result["train_jax_steps_per_cpu_s"] / result["train_ppo_steps_per_cpu_s"], rel=0.01)
    assert result["jax_envs"] == 8 and result["minibatch"] == 16
    assert result["games_matched"] is False and result["compile_cache"] == "shared"


def test_bench_training_gives_both_trainers_the_same_opponents_and_games():
    """Each trainer's own configuration, built from the flags the benchmark passes it: the
    same share of games against a network (train_jax: its current policy and a snapshot;
    train_ppo: its self-play pool), greedy and random, and the same games per rollout."""
    from experiments import train_ppo
    from experiments.bench_training import OPPONENTS, jax_flags, ppo_flags
    from experiments.bench_training import build_parser as bench_parser

    args = bench_parser().parse_args([])
    jax = Config(**vars(build_parser().parse_args([*jax_flags(args), "--out", "x"])))
    ppo = train_ppo.TrainConfig(**vars(train_ppo.parser_for(train_ppo.TrainConfig).parse_args(
        [*ppo_flags(args), "--out", "x"])))
    mix = jax.opponent_mix()
    fixed, pool = ppo.opponent_mix()
    assert {"network": mix["self"] + mix["snapshot"], "greedy": mix["greedy"],
            "random": mix["random"]} == pytest.approx(OPPONENTS)
    assert {"network": pool, **dict(fixed)} == pytest.approx(OPPONENTS)
    assert jax.num_envs == ppo.n_envs == 256 and jax.batch == ppo.n_steps * ppo.n_envs
    assert jax.minibatch_size == ppo.batch_size and jax.update_epochs == ppo.n_epochs


def test_bench_training_times_a_cold_compile_unless_told(monkeypatch, tmp_path, capsys):
    """--compile-cache fresh (the default) gives train_jax an empty JAX compilation cache of
    its own; shared leaves the user's."""
    import experiments.bench_training as bench_training

    seen = {}

    def fake(name, flags, out, updates, extra_env=None):
        seen[name] = extra_env or {}
        return bench_training.Run(name, 10, [5.0, 1.0, 1.0], [5.0, 1.0, 1.0], 9.0, 9.0)

    monkeypatch.setattr(bench_training, "run_trainer", fake)
    monkeypatch.setattr(bench_training, "require", lambda *a: None)
    assert bench_training.main(["--no-matmul"]) == 0
    cache = seen["train_jax"]["JAX_COMPILATION_CACHE_DIR"]
    assert "bench_training_" in cache and cache.endswith("jax_cache") and not seen["train_ppo"]
    assert bench_training.main(["--no-matmul", "--compile-cache", "shared"]) == 0
    assert seen["train_jax"] == {}
    out = capsys.readouterr().out
    assert "compiling: 4.0 s, fresh cache" in out and "compiling: 4.0 s, shared cache" in out
    assert "games per rollout 256 each" in out


def test_a_diverged_run_names_its_checkpoint_only_if_there_is_one(monkeypatch, tmp_path, capsys):
    """A policy that could not be exported at the step-0 evaluation said "the run is saved in
    OUT/checkpoint.npz", and there was none."""
    from pathlib import Path

    import experiments.train_jax as program
    from dominoes_env.policy_format import PolicyFileError

    def diverged(config, command=""):  # after its first checkpoint when told
        if saved:
            Path(config.out).mkdir()
            (Path(config.out) / "checkpoint.npz").write_bytes(b"")
        raise PolicyFileError(f"{config.out}/eval_policy.npz", "w0 holds NaN")

    monkeypatch.setattr(program, "train", diverged)
    saved = False
    assert program.main([*TINY, "--out", str(tmp_path / "a")]) == 1
    assert capsys.readouterr().err.endswith("it was not written; no checkpoint of the run was "
                                            "saved yet\n")
    saved = True
    assert program.main([*TINY, "--out", str(tmp_path / "b")]) == 1
    assert capsys.readouterr().err.endswith(f"the run is saved in {tmp_path / 'b'}"
                                            "/checkpoint.npz\n")


def test_bench_training_names_a_failed_trainer_by_its_error(monkeypatch, tmp_path):
    """A trainer that died in a JAX traceback was named by the traceback's last line: JAX's
    "For simplicity, JAX has removed its internal frames..." (the TypeError above it unseen)."""
    import subprocess

    import experiments.bench_training as bench_training
    from dominoes_env.cli_support import CommandError

    def fails(argv, stdout, **kwargs):
        stdout.write("Traceback (most recent call last):\n  File ...\nTypeError: Cannot "
                     "concatenate arrays\n--------------------\nFor simplicity, JAX has removed "
                     "its internal frames from the traceback of the following exception.\n")
        return 1

    monkeypatch.setattr(subprocess, "call", fails)
    with pytest.raises(CommandError) as err:
        bench_training.run_trainer("train_jax", [], tmp_path / "run", 1)
    assert str(err.value).startswith("train_jax exited with status 1: TypeError: Cannot "
                                     "concatenate arrays (its output: "), err.value


def test_bench_training_refuses_bad_flags(capsys):
    from experiments.bench_training import main as bench

    for flags, message in ((["--updates", "0"], "--updates must be >= 1"),
                           (["--warmup", "0"], "--warmup must be >= 1"),
                           (["--jax-envs", "3"], "must be a multiple of --minibatch"),
                           (["--net", "x"], "give hidden sizes")):
        with pytest.raises(SystemExit) as exit_:
            bench(flags)
        assert exit_.value.code == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, err


def test_bench_training_names_a_missing_extra_in_one_line(monkeypatch, capsys):
    import experiments.bench_training as bench_training
    from dominoes_env.optional import require

    monkeypatch.setattr(bench_training, "require",
                        lambda module, extra, purpose: require("no_such_module_here", extra,
                                                               purpose))
    assert bench_training.main(["--updates", "1"]) == 2
    err = capsys.readouterr().err
    assert err == ("error: the training benchmark needs no_such_module_here: "
                   "pip install 'straight-dominoes[jax]'\n")


def test_match_scores_deal_a_share_of_hands_at_random_match_scores():
    """--match-scores: that share of the new hands starts at a random match score (multiples
    of 5 up to 50 below the target, each side on its own), and their observations show it."""
    import jax

    def fresh(share):
        sp = SelfPlay(RuleConfig(target_score=100), 400, match_scores=share)
        return sp, jit_reset(sp, jax.random.PRNGKey(3), 400).state

    _, zero = fresh(0.0)
    assert not np.asarray(zero.game_state.scores).any()
    sp, state = fresh(0.5)
    scores = np.asarray(state.game_state.scores)
    moved = scores.any(axis=1)
    assert 0.4 < moved.mean() < 0.6  # 400 hands, share 0.5
    assert (scores % 5 == 0).all() and scores.min() >= 0 and scores.max() == 50
    assert len(np.unique(scores[moved])) == 11  # 0, 5, ..., 50, both sides apart
    assert (scores[moved, 0] != scores[moved, 1]).mean() > 0.8
    np.testing.assert_array_equal(np.asarray(state.observation),
                                  np.asarray(jax.jit(jax.vmap(sp.env.observe))(state)))
    assert not np.array_equal(np.asarray(state.observation)[moved],
                              np.asarray(zero.observation)[moved])
    _, every = fresh(1.0)
    assert (np.asarray(every.game_state.scores).sum(axis=1) > 0).mean() > 0.95  # 0-0 is 1 in 400


@pytest.mark.parametrize("share", [-0.1, 1.5])
def test_match_scores_must_be_a_share(share):
    with pytest.raises(ValueError, match="match_scores"):
        Config(match_scores=share)


def test_a_config_built_in_python_is_checked_like_the_command_line():
    for kwargs, says in (({"num_envs": 0}, "num_envs=0 is out of range"),
                         ({"critic": "oracle"}, "critic='oracle' is not allowed"),
                         ({"lr": float("nan")}, "lr=nan must be a finite number"),
                         ({"obs_version": 9}, "observation version 9 is not one the JAX game")):
        with pytest.raises(ValueError, match=says):
            Config(**kwargs)


@pytest.mark.parametrize(("kwargs", "says"), [
    ({"overwrite": "no"}, "overwrite='no' must be true or false, not str"),
    ({"anneal_lr": "false"}, "anneal_lr='false' must be true or false, not str"),
    ({"partnerships": 1, "players": 4}, "partnerships=1 must be true or false, not int"),
    ({"resume": 5}, r"resume=5 must be a path \(str or os.PathLike\), not int"),
    ({"out": 5}, "out=5 must be a path"),
    ({"init": b"x"}, "init=b'x' must be a path"),
    ({"opp_policy": 5, "opp_policy_weight": 1}, "opp_policy=5 must be a path"),
    ({"net": 16}, "net=16 must be a str, not int"),
    ({"players": True}, "players=True must be an integer, not a boolean"),
])  # fmt: skip
def test_a_config_field_of_the_wrong_type_is_refused_before_any_file(tmp_path, kwargs, says):
    """Only fields with choices or a range were checked: ``overwrite="no"`` was taken as true
    (and the previous run's files were removed), ``anneal_lr="false"`` annealed, and a number
    for a path was a bare ``AttributeError``/``TypeError`` later."""
    with pytest.raises((ValueError, TypeError), match=f"^{says}"):
        Config(**{"out": str(tmp_path / "run"), **kwargs})
    assert not (tmp_path / "run").exists()
    assert Config(out=tmp_path / "run").out == str(tmp_path / "run")  # a Path still works


@pytest.mark.parametrize("players", [2, 4])
def test_full_critic_sees_every_other_hand_and_the_boneyard(players):
    """``--critic full``: with the observation's own hand and layout, the critic's extra
    inputs place every tile exactly once, each other seat's hand in the observation's
    relative order (its size is the observation's ``others_hand_size``), and rank the tiles
    left in the boneyard ``0 .. k-1`` in draw order (the draws take from the front, as many as
    the observation's boneyard count says are gone); the policy's observation is unchanged.
    ``--critic obs`` adds nothing."""
    import jax
    import jax.numpy as jnp

    from dominoes_env.obs.v2 import observation_layout

    rules = RuleConfig(num_players=players)
    sp = SelfPlay(rules, 64, opponents={"greedy": 1}, full_critic=True)
    lay = observation_layout(rules)
    t, hand_size, bone = 28, rules.hand_size, rules.boneyard_size
    step = jax.jit(lambda g, a, k: sp.step(g, a, None, None, k))
    hidden_info = jax.jit(sp.hidden_info)
    games = jit_reset(sp, jax.random.PRNGKey(1), 64)
    key = jax.random.PRNGKey(2)
    seen_draws = False
    for _ in range(16):
        obs = np.asarray(games.state.observation)
        extra = np.asarray(hidden_info(games.state))
        assert extra.shape == (64, (players + 1) * t)
        others = extra[:, : (players - 1) * t].reshape(64, players - 1, t)
        boneyard, order = extra[:, (players - 1) * t: players * t], extra[:, players * t:]
        np.testing.assert_allclose(boneyard.sum(1) / max(bone, 1), obs[:, lay.boneyard][:, 0],
                                   atol=1e-6)
        for left, row in zip(boneyard, order, strict=True):
            ranks = np.sort(np.round((1 - row[left == 1]) * max(bone, 1)))
            np.testing.assert_array_equal(ranks, np.arange(left.sum()))
            assert (row[left == 0] == 0).all()
        where = obs[:, lay.hand] + others.sum(1) + boneyard + obs[:, lay.played]
        np.testing.assert_array_equal(where, 1.0)
        np.testing.assert_allclose(others.sum(2) / hand_size, obs[:, lay.others_hand_size],
                                   atol=1e-6)
        seen_draws |= bool((others.sum(2) > hand_size).any())
        key, k = jax.random.split(key)
        games, _, _ = step(games, jnp.argmax(games.state.legal_action_mask, 1), k)
    # with a boneyard the hands grew by drawing from it, and every tile stayed placed
    assert seen_draws == (rules.boneyard_size > 0)
    no_extra = SelfPlay(rules, 8)
    games = jax.eval_shape(lambda key: no_extra.reset(key, 8), jax.random.PRNGKey(0))
    assert no_extra.hidden_info(games.state).shape == (8, 0)


def test_tiny_run_with_the_full_critic_exports_an_observation_only_policy(tmp_path):
    out = tmp_path / "full"
    assert main([*TINY, "--critic", "full", "--eval-every", "0", "--out", str(out)]) == 0
    meta = json.loads((out / "policy.json").read_text())
    assert meta["config"]["critic"] == "full"
    assert NumpyPolicy(out / "policy.npz").logits(np.zeros((1, 234), np.float32)).shape == (1, 112)


def test_tiny_run_rewarded_by_the_match_race_at_three_players(tmp_path):
    out = tmp_path / "race"
    assert main([*TINY, "--players", "3", "--reward", "match", "--eval-every", "0",
                 "--out", str(out)]) == 0
    meta = json.loads((out / "policy.json").read_text())
    assert meta["config"]["reward"] == "match" and meta["rules"]["num_players"] == 3
    assert json.loads((out / "run.json").read_text())["settings"]["reward"] == "match"
    result = play_match([make_agent(f"ppo:{out / 'policy.npz'}"), "greedy", "greedy"],
                        RuleConfig(num_players=3, target_score=50), seed=4)
    assert result.winner in (0, 1, 2)


def test_reward_match_values_two_sides_by_the_table_and_more_by_the_race():
    from dominoes_env.jax.match_equity import MatchRace, MatchTable
    from experiments.train_jax import self_play

    for players, model in ((2, MatchTable), (3, MatchRace), (4, MatchTable)):
        sp = self_play(Config(players=players, reward="match", num_envs=4, num_steps=1,
                              num_minibatches=1), 4)
        assert type(sp.equity) is model
    assert self_play(Config(num_envs=4, num_steps=1, num_minibatches=1), 4).equity is None


def test_tiny_run_on_observation_version_3_exports_a_policy_that_reads_it(tmp_path, capsys):
    out = tmp_path / "v3"
    assert main([*TINY, "--obs-version", "3", "--eval-every", "0", "--out", str(out)]) == 0
    policy = NumpyPolicy(out / "policy.npz")
    assert policy.obs_spec.version == 3 and policy.obs_size == 346
    assert policy.metadata["config"]["obs_version"] == 3
    result = play_match([make_agent(f"ppo:{out / 'policy.npz'}"), "greedy"],
                        RuleConfig(target_score=50), seed=4)
    assert result.winner in (0, 1)
    # a version 3 policy as a fixed opponent of a version 2 run: refused before training
    never = tmp_path / "never"
    assert main([*TINY, "--opp-policy", str(out / "policy.npz"), "--opp-policy-weight", "0.5",
                 "--out", str(never)]) == 2
    assert "reads observation version 3, not version 2" in capsys.readouterr().err
    assert not never.exists()
    # a best response to it reads version 3 too
    from experiments.best_response import main as best_response

    response = tmp_path / "response"
    assert best_response(["--agent", f"ppo:{out / 'policy.npz'}", "--steps", "64",
                          "--matches", "2", "--num-envs", "2", "--out", str(response)]) == 0
    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert report["matches"] == 2 and report["steps"] == 64  # one update of 2 games x 32
    assert NumpyPolicy(response / "policy.npz").obs_spec.version == 3


@pytest.mark.parametrize("players", [2, 3])
def test_a_new_hand_at_match_scores_waits_for_the_learner(players):
    """Every new game, however high its random score, reaches the learner's turn before the
    match can end: a step ends with every game waiting for the learner (a game that ended
    before the learner's first move would be replaced by itself for ever)."""
    import jax
    import jax.numpy as jnp

    sp = SelfPlay(RuleConfig(num_players=players), 256, opponents={"greedy": 1},
                  match_scores=1.0)
    params = init_params(jax.random.PRNGKey(0), sp.obs_size, sp.num_actions, [8])
    step = jax.jit(lambda g, a, k: sp.step(g, a, params["actor"], params["actor"], k))
    games = jit_reset(sp, jax.random.PRNGKey(1), 256)
    key = jax.random.PRNGKey(2)
    for _ in range(12):
        key, k = jax.random.split(key)
        games, _, _ = step(games, jnp.argmax(games.state.legal_action_mask, 1), k)
        side = np.asarray(sp.side_of)[np.asarray(games.state.current_player)]
        assert (side == np.asarray(games.side)).all()
        assert not np.asarray(games.state.terminated).any()


def test_init_grows_an_earlier_run_to_a_later_observation_version(run, tmp_path, capsys):
    """``--init``: network surgery from the version 2 run onto version 4. The new inputs get
    zero weights, so the warm-started actor gives the old logits; every snapshot is that actor;
    the run trains and exports a version 4 policy."""
    import jax

    from dominoes_env.core import MatchState
    from dominoes_env.jax.checkpoints import warm_start

    config = Config(**{**vars(build_parser().parse_args([*TINY, "--obs-version", "4"])),
                       "out": str(tmp_path / "unused")})
    init, _, _ = make_train(config)
    runner = warm_start(str(run / "checkpoint.npz"), init(jax.random.PRNGKey(1)), config)
    old = NumpyPolicy(run / "policy.npz")
    w0 = np.asarray(runner["params"]["actor"][0]["w"])
    assert w0.shape == (570, 16) and not w0[234:].any()
    match = MatchState(RuleConfig(target_score=50), seed=2)
    obs = observation_spec(4).encode(match.view(match.turn))[None]
    np.testing.assert_allclose(np.asarray(mlp(runner["params"]["actor"], obs)),
                               old.logits(obs[:, :234]), rtol=1e-5, atol=1e-6)
    snaps = runner["snaps"][0]["w"]
    assert snaps.shape[0] == 2 and all(np.array_equal(s, w0) for s in np.asarray(snaps))
    assert not np.asarray(runner["params"]["critic"][0]["w"])[234:].any()

    out = tmp_path / "grown"
    assert main([*TINY, "--obs-version", "4", "--eval-every", "0", "--out", str(out),
                 "--init", str(run / "checkpoint.npz")]) == 0
    policy = NumpyPolicy(out / "policy.npz")
    assert policy.obs_spec.version == 4 and policy.metadata["steps"] == 64
    assert policy.metadata["config"]["init"] == str(run / "checkpoint.npz")
    capsys.readouterr()
    # refused before anything is written: a later version into an earlier one, another
    # network, --init with --resume, no such file
    never = tmp_path / "never"
    for flags, message in (
            (["--init", str(out / "checkpoint.npz")], "reads observation version 4; this run "
                                                      "reads 2"),
            (["--init", str(run / "checkpoint.npz"), "--net", "32"], "net='16', this run has "
                                                                     "net='32'"),
            (["--init", str(run / "checkpoint.npz"), "--resume", str(run / "checkpoint.npz")],
             "pass one"),
            (["--init", str(tmp_path / "none.npz")], "no such checkpoint file")):
        assert main([*TINY, *flags, "--out", str(never)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: --init") and message in err and err.count("\n") == 1
    assert not never.exists()


@pytest.mark.parametrize("anneal_lr", [False, True])
def test_init_takes_the_networks_of_a_run_with_another_optimizer(run, anneal_lr):
    """``--init`` takes only the networks, so a checkpoint whose optimizer state has another
    structure (``--anneal-lr`` keeps a step count of its own) starts a run without it: it was
    refused as "holds 34 arrays; this run's trainer has 33". The whole file is still checked,
    by the structure of the run that wrote it."""
    import jax

    from dominoes_env.jax.checkpoints import warm_start

    flags = [*TINY, "--anneal-lr" if anneal_lr else "--no-anneal-lr"]
    config = Config(**{**vars(build_parser().parse_args(flags)), "out": "unused"})
    init, _, _ = make_train(config)
    fresh = init(jax.random.PRNGKey(1))
    runner = warm_start(str(run / "checkpoint.npz"), fresh, config)
    saved = NumpyPolicy(run / "policy.npz")
    np.testing.assert_array_equal(np.asarray(runner["params"]["actor"][0]["w"]),
                                  saved.layers[0][0])
    assert jax.tree.structure(runner["opt"]) == jax.tree.structure(fresh["opt"])


def test_init_from_an_exported_policy_starts_its_critic_from_the_actor(run, tmp_path, capsys):
    """``--init`` with an exported policy (a shipped one keeps no value network): the actor
    is the policy's, grown to version 4 with zero weights for the new inputs; the critic's
    hidden layers are copies of the actor's (``--critic full``: its hidden-information inputs
    at zero weights) under a zero value head, so it starts out predicting 0."""
    import jax

    from dominoes_env.core import MatchState
    from dominoes_env.jax.checkpoints import warm_start

    old = NumpyPolicy(run / "policy.npz")
    match = MatchState(RuleConfig(target_score=50), seed=5)
    obs = observation_spec(4).encode(match.view(match.turn))[None]
    for critic in ("obs", "full"):
        config = Config(**{**vars(build_parser().parse_args(
            [*TINY, "--obs-version", "4", "--critic", critic])), "out": str(tmp_path / "no")})
        init, _, _ = make_train(config)
        runner = warm_start(str(run / "policy.npz"), init(jax.random.PRNGKey(1)), config)
        params = runner["params"]
        np.testing.assert_allclose(np.asarray(mlp(params["actor"], obs)),
                                   old.logits(obs[:, :234]), rtol=1e-5, atol=1e-6)
        actor_w0, critic_w0 = (np.asarray(params[k][0]["w"]) for k in ("actor", "critic"))
        extra = 0 if critic == "obs" else critic_w0.shape[0] - 570
        assert critic_w0.shape == (570 + extra, 16) and (critic == "obs") == (extra == 0)
        np.testing.assert_array_equal(critic_w0[:570], actor_w0)
        assert not critic_w0[234:].any() and not np.asarray(params["critic"][-1]["w"]).any()
        value = critic_value(params["critic"], obs, np.ones((1, extra), np.float32))
        assert np.asarray(value).tolist() == [0.0]
    out = tmp_path / "from_policy"
    assert main([*TINY, "--obs-version", "4", "--eval-every", "0", "--out", str(out),
                 "--init", str(run / "policy.npz")]) == 0
    assert NumpyPolicy(out / "policy.npz").obs_spec.version == 4
    capsys.readouterr()
    # refused before anything is written: other hidden layers, another player count
    never = tmp_path / "never"
    for flags, message in (
            (["--net", "32"], "has hidden layers 16; this run has --net 32"),
            (["--players", "3"], "takes 234 inputs and 112 actions; these rules need")):
        assert main([*TINY, "--init", str(run / "policy.npz"), *flags, "--out", str(never)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: --init") and message in err and err.count("\n") == 1
    assert not never.exists()


STALL = """
import sys, time
import experiments.train_jax as train_jax
from tests.helpers import update_failing_at
train_jax.STALL_FLOOR_S = 1.0
# the third update never returns, as one wedged in XLA's CPU runtime
train_jax.make_train = update_failing_at(train_jax.make_train, 3, lambda: time.sleep(30))
sys.exit(train_jax.main(sys.argv[1:]))
"""


def test_an_update_that_never_returns_ends_the_run_with_one_line(tmp_path):
    """A jitted update wedged in XLA's CPU runtime (threads busy, no error) left a run hanging
    silently for as long as nobody looked; the watchdog ends it with one line naming the
    checkpoint to resume."""
    import subprocess
    import sys

    out = tmp_path / "run"
    argv = [*TINY, "--total-steps", "160", "--eval-every", "0", "--out", str(out)]
    proc = subprocess.run([sys.executable, "-c", STALL, *argv], capture_output=True, text=True,
                          timeout=600, cwd=ROOT)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 1 and len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: an update has not finished after")
    assert f"the last checkpoint (64 steps) is kept: continue with --resume {out}" in lines[0]
    assert (out / "checkpoint.npz").is_file()


def test_ctrl_c_saves_exports_and_ends_with_status_130(tmp_path, monkeypatch, capsys):
    """A Ctrl-C kept the run (checkpoint, evaluation, policy) but the command ended with
    status 0, as if it had trained to its end."""
    import experiments.train_jax as train_jax

    def ctrl_c():
        raise KeyboardInterrupt

    monkeypatch.setattr(train_jax, "make_train",
                        update_failing_at(train_jax.make_train, 2, ctrl_c))
    out = tmp_path / "run"
    assert main([*TINY, "--total-steps", "160", "--eval-every", "0", "--out", str(out)]) == 130
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: interrupted; the run so far is saved and exported in {str(out)!r} "
                   f"(continue with --resume {out / 'checkpoint.npz'})"]
    for name in ("checkpoint.npz", "policy.npz", "policy.json", "eval.csv"):
        assert (out / name).is_file(), name
    assert json.loads((out / "policy.json").read_text())["steps"] == 32


def test_a_signal_during_an_update_is_delivered_once_the_update_is_done(tmp_path, monkeypatch,
                                                                        capsys):
    """SIGTERM raised its exception wherever the main thread was, inside JAX's own code too,
    which could leave a lock taken that the save after the stop needed: a fresh-clone run sent
    train_jax SIGTERM and it never ended, printing nothing for 300 s. The signal is now held
    while an update runs and delivered after it: the update finishes and counts."""
    import signal

    import experiments.train_jax as train_jax
    from tests.helpers import update_failing_at

    monkeypatch.setattr(train_jax, "make_train", update_failing_at(
        train_jax.make_train, 2, lambda: signal.raise_signal(signal.SIGTERM)))
    out = tmp_path / "run"
    assert main([*TINY, "--total-steps", "320", "--eval-every", "0", "--out", str(out)]) == 143
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: stopped by SIGTERM; the run so far is saved and exported in "
                   f"{str(out)!r} (continue with --resume {out / 'checkpoint.npz'})"]
    assert json.loads((out / "policy.json").read_text())["steps"] == 64  # the 2nd update too


def diverging_at(make_train, call: int, stop_at: int | None = None, value: float = np.nan):
    """``make_train`` whose update leaves NaN actor weights from its ``call``-th call on (a
    diverged run; every one of them ``value`` when that is a number), and raises
    ``KeyboardInterrupt`` at its ``stop_at``-th call (if given)."""
    import jax
    import jax.numpy as jnp

    def wrapped(config):
        init, update, devices = make_train(config)
        calls = []

        def update_then_diverge(runner):
            calls.append(1)
            if len(calls) == stop_at:
                raise KeyboardInterrupt
            runner, metrics = update(runner)
            if len(calls) >= call:
                nan = jax.tree.map(lambda a: a * np.nan if np.isnan(value)
                                   else jnp.full_like(a, value), runner["params"]["actor"])
                runner = {**runner, "params": {**runner["params"], "actor": nan}}
            return runner, metrics

        return init, update_then_diverge, devices

    return wrapped


def test_a_diverged_run_is_one_line_status_1_and_no_policy_file(tmp_path, monkeypatch, capsys):
    """A run whose weights went NaN ended with status 2, as if a flag were bad (train_ppo and
    train_rllib end such a run with 1), and trained on, saving its NaN weights as its
    checkpoint: now it stops at the first update that diverged, before it is saved, with one
    line naming the update and the checkpoint kept, status 1, and no policy file."""
    import experiments.train_jax as train_jax

    monkeypatch.setattr(train_jax, "make_train", diverging_at(train_jax.make_train, 2))
    out = tmp_path / "run"
    status = main([*TINY, "--total-steps", "160", "--eval-every", "0", "--out", str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    checkpoint = out / "checkpoint.npz"
    assert status == 1, err
    assert err == ["error: the update reaching 64 steps made non-finite weights (NaN or "
                   "infinite: the training diverged; try a smaller --lr, --reward-scale or "
                   "--vf-coef); nothing of it was saved; the last checkpoint "
                   f"{str(checkpoint)!r} is kept as it was"]
    with np.load(checkpoint) as data:  # the first update's, which --resume takes
        assert json.loads(str(data["meta"]))["steps"] == 32
    for name in ("policy.npz", "policy.json", "eval_policy.npz"):
        assert not (out / name).exists(), name


def test_weights_too_large_for_a_policy_file_end_the_run_as_a_diverged_one(
        tmp_path, monkeypatch, capsys):
    """An update whose weights were finite but above the policy file's MAX_WEIGHT (1e6)
    passed the check, which was isfinite alone: the run saved them as its checkpoint (which
    --resume then refused: its reader holds the arrays to the same bound) and ended only when
    an export refused them. The check is now the policy file's own rule
    (policy_format.weights_problem); the line names the condition, not NaN."""
    import experiments.train_jax as train_jax

    real = train_jax.make_train
    monkeypatch.setattr(train_jax, "make_train", diverging_at(real, 2, value=1e7))
    out = tmp_path / "run"
    args = [*TINY, "--eval-every", "0", "--out", str(out)]
    assert main([*args, "--total-steps", "160"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    checkpoint = out / "checkpoint.npz"
    assert err == ["error: the update reaching 64 steps made weights too large for a policy "
                   "file (params['actor'][0]['b'] holds a value of magnitude 1e+07; a policy's "
                   "weights are at most 1e+06: the training diverged; try a smaller --lr, "
                   "--reward-scale or --vf-coef); nothing of it was saved; the last checkpoint "
                   f"{str(checkpoint)!r} is kept as it was"]
    for name in ("policy.npz", "policy.json", "eval_policy.npz"):
        assert not (out / name).exists(), name
    monkeypatch.setattr(train_jax, "make_train", real)  # the checkpoint kept goes on
    assert main([*args, "--resume", str(checkpoint)]) == 0, capsys.readouterr().err
    assert json.loads((out / "policy.json").read_text())["steps"] == 64


def test_a_diverged_resume_leaves_the_checkpoint_and_policy_as_they_were(tmp_path, monkeypatch,
                                                                         capsys):
    """A resumed run whose first update went NaN trained on and saved the NaN weights over
    the good checkpoint it continued (which --resume then refused): the run was lost."""
    import experiments.train_jax as train_jax

    out = tmp_path / "run"
    assert main([*TINY, "--eval-every", "0", "--out", str(out)]) == 0
    kept = {name: (out / name).read_bytes() for name in ("checkpoint.npz", "policy.npz")}
    monkeypatch.setattr(train_jax, "make_train", diverging_at(train_jax.make_train, 1))
    capsys.readouterr()
    assert main([*TINY, "--eval-every", "0", "--total-steps", "128", "--out", str(out),
                 "--resume", str(out / "checkpoint.npz")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: the update reaching 96 steps made "
                                               "non-finite weights"), err
    assert {name: (out / name).read_bytes() for name in kept} == kept


def test_a_run_whose_first_update_is_nan_stops_at_the_first_update(tmp_path, monkeypatch,
                                                                    capsys):
    """--vf-coef 1e300 (infinite in float32, refused by its bound now) made every update NaN:
    the run trained to its end, saving NaN checkpoints, and failed only at the export."""
    import experiments.train_jax as train_jax

    monkeypatch.setattr(train_jax, "make_train", diverging_at(train_jax.make_train, 1))
    out = tmp_path / "run"
    assert main([*TINY, "--eval-every", "0", "--out", str(out)]) == 1
    err = capsys.readouterr().err
    from tests.helpers import error_lines

    (line,) = error_lines(err)
    assert line.startswith("error: the update reaching 32 steps made non-finite "), line
    assert line.endswith("(NaN or infinite: the training diverged; try a smaller --lr, "
                         "--reward-scale or --vf-coef); nothing of it was saved; no checkpoint "
                         "of the run was saved"), line
    assert not (out / "checkpoint.npz").exists() and not (out / "policy.npz").exists()


@pytest.mark.parametrize(("signum", "status"), [("SIGTERM", 143), ("SIGHUP", 129)])
def test_sigterm_or_a_closed_terminal_saves_exports_and_ends_stopped(tmp_path, signum, status):
    """SIGTERM (a scheduler ending the job) or SIGHUP (the terminal closed) killed the run at
    once: no export of what it had learned, only the last periodic checkpoint."""
    import signal

    from tests.helpers import CHILD_TIMEOUT_S, error_lines, spawn_program, wait_for_path

    out = tmp_path / "run"
    proc = spawn_program("experiments.train_jax", *TINY, "--total-steps", str(10**9),
                         "--eval-every", "0", "--time-limit", "0", "--out", str(out))
    wait_for_path(out / "checkpoint.npz", proc)  # it is training: it saved once
    proc.send_signal(getattr(signal, signum))
    _, err = proc.communicate(timeout=CHILD_TIMEOUT_S)
    assert proc.returncode == status, err
    assert error_lines(err) == [
        f"error: stopped by {signum}; the run so far is saved and exported in {str(out)!r} "
        f"(continue with --resume {out / 'checkpoint.npz'})"]
    assert json.loads((out / "policy.json").read_text())["steps"] >= 32
    assert not [p.name for p in out.iterdir() if ".tmp" in p.name]


@pytest.mark.parametrize(("signum", "status"),
                         [("SIGINT", 130), ("SIGTERM", 143), ("SIGHUP", 129)])
def test_best_response_stopped_passes_the_signal_to_its_trainer_which_saves(tmp_path, signum,
                                                                           status):
    """SIGTERM or SIGHUP killed best_response and left its trainer running, orphaned; a Ctrl-C
    sent to best_response alone (not its terminal's group) was never passed on, and it waited
    for the whole training. Now the trainer gets the signal, saves and exports, and says so
    in the one line; best_response ends with its status."""
    import signal

    from tests.helpers import (
        CHILD_TIMEOUT_S,
        error_lines,
        spawn_program,
        wait_for_text,
    )

    out = tmp_path / "response"
    proc = spawn_program("experiments.best_response", "--agent", "greedy", "--steps",
                         str(10**9), "--matches", "2", "--num-envs", "8", "--out", str(out))
    seen = wait_for_text(proc.stderr, "ret=", proc)  # the trainer's bar after an update
    proc.send_signal(getattr(signal, signum))
    _, err = proc.communicate(timeout=CHILD_TIMEOUT_S)
    err = seen + err
    assert proc.returncode == status, err
    words = "interrupted" if signum == "SIGINT" else f"stopped by {signum}"
    assert error_lines(err) == [
        f"error: {words}; the run so far is saved and exported in {str(out)!r} "
        f"(continue with --resume {out / 'checkpoint.npz'})"]
    assert json.loads((out / "policy.json").read_text())["steps"] > 0
    NumpyPolicy(out / "policy.npz")  # the response, whole


@pytest.mark.parametrize("name", ["c,d", "lr=3e-4"])
def test_an_out_no_agent_spec_can_name_is_refused_before_anything_is_written(tmp_path, capsys,
                                                                              name):
    """The evaluation plays ``ppo:OUT/eval_policy.npz``: a run folder with ',' or '=' in its
    path trained, then ended in a cryptic line about a bad parameter of an agent spec. Now one
    line names --out and the reason, status 2, before anything is compiled or written."""
    out = tmp_path / name / "run"
    assert main([*TINY, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err == (f"error: --out {str(out)!r}: a policy in it could not be named in an agent "
                   "spec (',' and '=' separate a spec's parameters); choose a folder without "
                   "them\n")
    assert list(tmp_path.iterdir()) == []


def test_best_response_refuses_an_out_no_agent_spec_can_name(tmp_path, capsys):
    """best_response evaluates its response as ``ppo:OUT/policy.npz``, after training it."""
    from experiments.best_response import main as best_response

    out = tmp_path / "c,d"
    assert best_response(["--agent", "greedy", "--steps", "64", "--num-envs", "2",
                          "--matches", "2", "--out", str(out)]) == 2
    assert capsys.readouterr().err.startswith(f"error: --out {str(out)!r}: a policy in it "
                                              "could not be named in an agent spec")
    assert list(tmp_path.iterdir()) == []
