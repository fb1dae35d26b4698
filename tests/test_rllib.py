"""RLlib (the ``rllib`` extra): ``python -m experiments.train_rllib`` trains two tiny iterations
of self-play PPO with the masking RLModule; the export equals the module and plays legal
matches as ``ppo:PATH``."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from agents.ppo import NumpyPolicy
from dominoes_env import straight_dominoes_v1
from dominoes_env.cli_support import TrainingStopped
from dominoes_env.core import RuleConfig
from experiments.train_rllib import main

from .helpers import CHILD_TIMEOUT_S, error_lines

pytest.importorskip("ray.rllib")


@pytest.mark.parametrize("config", ["ab", 5, [("num_players", 2)]])
def test_make_env_names_an_env_config_that_is_no_mapping(config):
    from agents.rllib import make_env

    with pytest.raises(TypeError, match="^env_config must be a dict of the env's options"):
        make_env(config)  # "ab": dict()'s own "dictionary update sequence element" ValueError


def test_make_env_passes_its_options_on():
    from agents.rllib import make_env

    env = make_env({"num_players": 3})
    assert len(env.get_agent_ids()) == 3


def test_bad_flags_exit_2_with_one_line(capsys):
    for argv in (["--players", "7"], ["--iterations", "0"], ["--episode", "set"],
                 ["--minibatch-size", "500", "--train-batch-size", "100"]):
        with pytest.raises(SystemExit) as exit_info:
            main(argv)
        assert exit_info.value.code == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("error: python -m experiments.train_rllib:")


def test_help_describes_every_flag():
    out = subprocess.run([sys.executable, "-m", "experiments.train_rllib", "--help"],
                         capture_output=True, text=True, timeout=CHILD_TIMEOUT_S)
    assert out.returncode == 0
    text = " ".join(out.stdout.split())
    for flag in ("--iterations ITERATIONS training iterations", "--env-runners ENV_RUNNERS Ray",
                 "--players {2,3,4} seats", "--address ADDRESS address of a running Ray",
                 "--out OUT output folder", "--seed SEED seed"):
        assert flag in text


def test_an_address_to_nothing_is_one_line_and_writes_nothing(tmp_path, capsys):
    assert main(["--address", "127.0.0.1:1", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [err[0]] and "no Ray cluster answers at 127.0.0.1:1" in err[0]
    assert not (tmp_path / "o").exists()


@pytest.mark.timeout(900)  # a local Ray's start-up is tried up to three times (agents.ray_cluster)
def test_train_two_iterations_export_and_play(tmp_path, one_local_ray):
    """One run (the checks share it: a fixture would run once per xdist worker)."""
    out = tmp_path / "rllib"
    cmd = [sys.executable, "-m", "experiments.train_rllib", "--iterations", "2",
           "--env-runners", "0", "--train-batch-size", "200", "--minibatch-size", "100",
           "--epochs", "1", "--net", "32,32", "--num-cpus", "1", "--seed", "3",
           "--out", str(out), "--eval-matches", "2", "--eval-every", "1"]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=840)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-4000:]
    check_progress_and_files(out, run.stdout)
    # the learning curve, as train_jax and train_ppo write it: the initial policy, then after
    # each iteration (--eval-every 1), at RLlib's env steps
    assert eval_steps(out) == [0, 200, 400]
    check_export_equals_the_rl_module(out)
    check_plays_legal_matches_as_an_agent_spec(out)


def check_progress_and_files(out, stdout):
    with open(out / "progress.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert [int(r["iteration"]) for r in rows] == [1, 2]
    assert [float(r["env_steps"]) for r in rows] == [200.0, 400.0]
    assert all(float(r["episode_len_mean"]) > 5 for r in rows)
    assert (out / "checkpoint" / "algorithm_state.pkl").is_file()
    assert any((out / "tb").iterdir())
    meta = json.loads((out / "policy.json").read_text())
    assert meta["source"] == "rllib" and RuleConfig(**meta["rules"]) == RuleConfig()
    assert "[2/2]" in stdout and "[eval] steps 400: vs greedy" in stdout


#: eval.csv's columns: those of train_jax and train_ppo (the same evaluation_row call)
EVAL_COLUMNS = ["steps", "wall_s", *(f"{figure}_vs_{opponent}" for opponent in ("greedy", "random")
                                     for figure in ("win_rate", "ci_low", "ci_high", "margin",
                                                    "matches"))]


def eval_steps(out) -> list[int]:
    """The ``steps`` of each row of ``out/eval.csv``, its header checked, every row complete."""
    with open(out / "eval.csv", newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == EVAL_COLUMNS
    for row in rows[1:]:
        assert len(row) == len(EVAL_COLUMNS) and all(float(v) == float(v) for v in row)
        assert 0 <= float(row[2]) <= 1 and row[6] == row[11]  # a win rate; matches each
    return [int(row[0]) for row in rows[1:]]


def check_export_equals_the_rl_module(out):
    """The numpy export computes the module's masked logits (no torch needed to play it)."""
    import torch
    from ray.rllib.core.columns import Columns
    from ray.rllib.core.rl_module.rl_module import RLModule

    module = RLModule.from_checkpoint(
        out / "checkpoint" / "learner_group" / "learner" / "rl_module" / "shared")
    policy = NumpyPolicy(out / "policy.npz")
    assert policy.activation == "tanh" and [w.shape for w, _ in policy.layers] == [
        (234, 32), (32, 32)]
    env = straight_dominoes_v1.env(num_players=2)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    obs_list = []
    while env.agents and len(obs_list) < 20:
        obs = env.last()[0]
        obs_list.append(obs)
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    batch = {Columns.OBS: {
        "observation": torch.as_tensor(np.stack([o["observation"] for o in obs_list])),
        "action_mask": torch.as_tensor(np.stack([o["action_mask"] for o in obs_list]))}}
    with torch.no_grad():
        logits = module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS].numpy()
    for row, obs in zip(logits, obs_list, strict=True):
        legal = obs["action_mask"] == 1
        np.testing.assert_allclose(row[legal], policy.logits(obs["observation"])[legal],
                                   rtol=1e-4, atol=1e-5)
        assert (row[~legal] < -1e30).all()  # masked


def check_plays_legal_matches_as_an_agent_spec(out):
    from agents.arena import play_match

    rules = RuleConfig(num_players=2, target_score=100)
    for seed in range(3):  # an illegal move would raise ValueError naming the agent
        result = play_match([f"ppo:{out / 'policy.npz'}", "random"], rules, seed=seed)
        assert result.winner in (0, 1) and result.plays > 0


@pytest.mark.timeout(900)  # a local Ray's start-up is tried up to three times (agents.ray_cluster)
def test_sigterm_saves_the_checkpoint_and_exports_the_policy(tmp_path, one_local_ray):
    """ray.init put its own SIGTERM handler (sys.exit(15)) in place of the command's: a
    scheduler ending a run got status 15, no line, no checkpoint and no policy. Now the run is
    saved and exported as at its end, one line says where, status 143."""
    import signal

    from .helpers import spawn_program, wait_for_text

    out = tmp_path / "rllib"
    args = ["--env-runners", "0", "--train-batch-size", "200", "--minibatch-size", "100",
            "--epochs", "1", "--net", "32,32", "--num-cpus", "1", "--seed", "3", "--out",
            str(out), "--eval-matches", "0"]
    proc = spawn_program("experiments.train_rllib", "--iterations", "1000", *args)
    wait_for_text(proc.stdout, "[1/1000]", proc)  # an iteration finished
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=CHILD_TIMEOUT_S)
    assert proc.returncode == 143, err[-4000:]
    checkpoint = out / "checkpoint"
    assert error_lines(err) == [
        f"error: stopped by SIGTERM; the run is saved in {checkpoint} (continue with --resume "
        f"{checkpoint}) and its policy exported to {out / 'policy.npz'}"]
    assert (checkpoint / "algorithm_state.pkl").is_file()
    meta = json.loads((out / "policy.json").read_text())
    assert meta["stopped"] == "stopped by SIGTERM" and meta["iterations"] >= 1
    with open(out / "progress.csv") as fh:  # the saved run is its last completed iteration's
        assert len(list(csv.DictReader(fh))) == meta["iterations"]
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".checkpoint")) == []
    check_export_equals_the_rl_module(out)  # the learner's weights, not the env runners' older
    check_plays_legal_matches_as_an_agent_spec(out)
    # its own checkpoint resumes, as the line says: RLlib reads the folder with the digests in it
    run = subprocess.run([sys.executable, "-m", "experiments.train_rllib", "--iterations", "1",
                          *args, "--resume", str(checkpoint)], capture_output=True, text=True,
                         timeout=840)
    assert run.returncode == 0, run.stderr[-4000:]
    with open(out / "progress.csv") as fh:
        rows = list(csv.DictReader(fh))
    steps = [float(r["env_steps"]) for r in rows]
    assert len(steps) == meta["iterations"] + 1 and steps[-1] == steps[-2] + 200
    # numbered on from the run's iterations (they went 1, 2, 1 across the resume)
    assert [int(r["iteration"]) for r in rows] == list(range(1, len(rows) + 1))
    assert json.loads((out / "policy.json").read_text())["iterations"] == len(rows)
    # the checkpoint recorded the run's wall seconds, which the resumed run goes on from
    assert json.loads((out / "policy.json").read_text())["wall_s"] > meta["wall_s"] > 0


@pytest.mark.parametrize("bad", [np.nan, -np.inf])
def test_an_export_of_diverged_weights_is_refused_and_writes_nothing(tmp_path, bad):
    """export_module wrote NaN/inf weights through an unchecked writer: the policy of a
    diverged run was written and refused only when ``ppo:PATH`` read it. (A module of the
    shape export_module reads: no Ray is started.)"""
    import torch

    from agents.rllib import export_module
    from dominoes_env.policy_format import PolicyFileError

    module = tiny_module()
    with torch.no_grad():
        module.encoder.actor_encoder[0].weight[2, 5] = bad
    path = tmp_path / "policy.npz"
    with pytest.raises(PolicyFileError) as info:
        export_module(module, path, {"rules": RuleConfig().to_dict()})
    assert str(info.value) == f"policy file {str(path)!r}: w0 holds NaN or infinite values"
    assert list(tmp_path.iterdir()) == []  # no file, no temporary file


def tiny_module():
    """A module of the shape export_module reads (an actor encoder and a pi head)."""
    from torch import nn

    module = nn.Module()
    module.encoder = nn.Module()
    module.encoder.actor_encoder = nn.Sequential(nn.Linear(234, 8), nn.Tanh())
    module.pi = nn.Sequential(nn.Linear(8, 112))
    return module


class HalfUpdatedAlgorithm:
    """Stands for RLlib's Algorithm (no Ray): each ``train()`` is an update in two steps, and
    its second iteration is stopped between them (as a signal can land between two minibatches'
    gradient steps). ``get_state`` returns numpy views of the live weights, as RLlib's does."""

    def __init__(self):
        self.module, self.iterations = tiny_module(), 0
        self.initial = {k: v.detach().numpy().copy() for k, v in
                        self.module.state_dict().items()}

    def train(self) -> dict:
        import torch

        with torch.no_grad():
            self.module.pi[0].bias += 1.0
            if self.iterations == 1:
                raise KeyboardInterrupt  # Ctrl-C in the middle of the second update
            self.module.encoder.actor_encoder[0].bias += 1.0
        self.iterations += 1
        return {}

    def get_state(self) -> dict:
        return {"weights": {k: v.detach().numpy() for k, v in
                            self.module.state_dict().items()}, "iterations": self.iterations}

    def set_state(self, state: dict) -> None:
        import torch

        self.module.load_state_dict({k: torch.as_tensor(v)
                                     for k, v in state["weights"].items()})
        self.iterations = state["iterations"]

    def save_to_path(self, path) -> None:
        os.makedirs(path)
        np.savez(os.path.join(path, "weights.npz"), **self.get_state()["weights"])

    def get_module(self, name):
        return self.module

    def stop(self) -> None:
        pass


def _use_the_stand_in(monkeypatch, program, algo) -> None:
    """Make ``program`` (experiments.train_rllib) train ``algo`` without starting Ray."""

    class Config:
        def build_algo(self):
            return algo

    monkeypatch.setattr(program, "init_ray", lambda **kwargs: None)
    monkeypatch.setattr(program, "algorithm_config", lambda cfg: Config())


def test_a_stop_inside_an_iteration_saves_the_last_completed_one(tmp_path, monkeypatch):
    """A stop during an iteration saved and exported the parameters as it found them: an
    update partly applied (here the head's step without the encoder's), that no iteration
    ever produced. Now the state after the last completed iteration is saved and exported."""
    import experiments.train_rllib as program

    algo = HalfUpdatedAlgorithm()

    _use_the_stand_in(monkeypatch, program, algo)
    out = tmp_path / "run"
    cfg = program.parse_config(["--iterations", "5", "--out", str(out), "--eval-matches", "0",
                                "--net", "8"])
    with pytest.raises(TrainingStopped) as stopped:
        program.train(cfg)
    assert stopped.value.out == out and isinstance(stopped.value.stop, KeyboardInterrupt)
    assert not stopped.value.nothing_saved and stopped.value.export_error is None
    after_one = {**algo.initial, "pi.0.bias": algo.initial["pi.0.bias"] + 1,
                 "encoder.actor_encoder.0.bias": algo.initial["encoder.actor_encoder.0.bias"] + 1}
    saved = np.load(out / "checkpoint" / "weights.npz")
    for key, value in after_one.items():
        np.testing.assert_allclose(saved[key], value, err_msg=key)
    policy = NumpyPolicy(out / "policy.npz")
    assert policy.metadata["iterations"] == 1 and policy.metadata["stopped"] == "interrupted"
    np.testing.assert_allclose(policy.layers[0][1], after_one["encoder.actor_encoder.0.bias"])
    np.testing.assert_allclose(policy.action_b, after_one["pi.0.bias"])


def test_weights_that_are_not_finite_from_the_start_end_the_run_with_nothing_saved(
        tmp_path, monkeypatch, capsys):
    """A run whose weights went NaN wrote a policy.npz that ppo:PATH then refused (or, once
    the export was checked, saved the NaN state as its checkpoint); now its first iteration is
    found not finite: one line says so and that nothing was saved, status 1 (a failed run, not
    bad input). (No Ray: the algorithm is a stand-in.)"""
    import torch

    import experiments.train_rllib as program

    algo = HalfUpdatedAlgorithm()
    with torch.no_grad():
        algo.module.pi[0].weight[0, 0] = float("nan")

    _use_the_stand_in(monkeypatch, program, algo)
    out = tmp_path / "run"
    status = program.main(["--iterations", "5", "--out", str(out), "--eval-matches", "0",
                           "--net", "8"])
    err = capsys.readouterr().err
    assert status == 1, err
    assert error_lines(err) == [
        "error: iteration 1 made non-finite weights (NaN or infinite: the training diverged; "
        "try a smaller --lr); nothing of it was saved; no checkpoint of the run was saved"]
    assert not any((out / name).exists() for name in ("checkpoint", "policy.npz",
                                                      "policy.json"))


class PicklingAlgorithm(HalfUpdatedAlgorithm):
    """The stand-in saving and restoring as RLlib does: its checkpoint folder holds
    ``rllib_checkpoint.json`` and a pickle of its state, which ``restore_from_path``
    unpickles. Its updates are never stopped halfway."""

    def train(self) -> dict:
        self.iterations += 1
        return {}

    def save_to_path(self, path) -> None:
        import pickle

        os.makedirs(path)
        with open(os.path.join(path, "rllib_checkpoint.json"), "w") as f:
            json.dump({"type": "Algorithm", "checkpoint_version": "2.1"}, f)
        with open(os.path.join(path, "algorithm_state.pkl"), "wb") as f:
            pickle.dump(self.get_state(), f)

    def restore_from_path(self, path) -> None:
        import pickle

        with open(os.path.join(path, "algorithm_state.pkl"), "rb") as f:
            self.set_state(pickle.load(f))


class MakesAFolder:
    """A pickle that runs code when loaded: it makes the folder ``path``."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return os.mkdir, (self.path,)


@pytest.mark.parametrize("change", ["pickle replaced", "file added", "manifest removed"])
def test_resume_refuses_a_checkpoint_it_did_not_write_before_unpickling_it(
        tmp_path, monkeypatch, capsys, change):
    """``--resume`` of a checkpoint whose ``algorithm_state.pkl`` was replaced by a pickle
    whose ``__reduce__`` runs a command ran the command before the program refused the state.
    RLlib checkpoints are pickles, so a checkpoint resumes only as train_rllib wrote it: the
    SHA-256 of each file, written with the checkpoint, is checked before anything is read, and
    the folder is restored from a copy of the bytes checked. (No Ray: the algorithm is a
    stand-in that pickles its state as RLlib does.)"""
    import pickle

    import experiments.train_rllib as program
    from agents.rllib_checkpoint import MANIFEST

    _use_the_stand_in(monkeypatch, program, PicklingAlgorithm())
    out = tmp_path / "run"
    checkpoint = out / "checkpoint"
    args = ["--out", str(out), "--eval-matches", "0", "--net", "8"]
    assert program.main(["--iterations", "1", *args]) == 0
    resumed = ["--iterations", "2", *args, "--resume", str(checkpoint)]
    assert program.main(resumed) == 0, capsys.readouterr().err  # its own checkpoint: resumes
    with open(out / "progress.csv") as fh:
        assert len(list(csv.DictReader(fh))) == 3
    capsys.readouterr()
    ran = tmp_path / "the payload ran"
    why = {"pickle replaced": "algorithm_state.pkl differs from the file it wrote",
           "file added": "'extra.pkl' is not one of the files it wrote",
           "manifest removed": f"it holds no {MANIFEST}, the digests of its files that "
                               "train_rllib writes with each checkpoint"}[change]
    if change == "pickle replaced":
        (checkpoint / "algorithm_state.pkl").write_bytes(pickle.dumps(MakesAFolder(ran)))
    elif change == "file added":
        (checkpoint / "extra.pkl").write_bytes(pickle.dumps(MakesAFolder(ran)))
    else:
        (checkpoint / MANIFEST).unlink()
    before = sorted(p.name for p in out.iterdir())
    assert program.main(resumed) == 2
    assert not ran.exists()
    assert error_lines(capsys.readouterr().err) == [
        f"error: --resume {str(checkpoint)!r} was not written by train_rllib or was changed "
        f"since ({why}): RLlib checkpoints are pickles, which run code when loaded; resume only "
        "a checkpoint of your own run"]
    assert sorted(p.name for p in out.iterdir()) == before


def test_a_checkpoint_replaced_after_the_check_is_not_unpickled(tmp_path, monkeypatch, capsys):
    """The digests are checked before Ray starts, seconds before RLlib reads the folder: a
    pickle replaced in between is not read, since the folder restored is a private copy of the
    bytes whose digests were checked."""
    import pickle

    import experiments.train_rllib as program

    _use_the_stand_in(monkeypatch, program, PicklingAlgorithm())
    out = tmp_path / "run"
    checkpoint = out / "checkpoint"
    args = ["--out", str(out), "--eval-matches", "0", "--net", "8"]
    assert program.main(["--iterations", "1", *args]) == 0
    ran = tmp_path / "the payload ran"

    def start_ray_then_replace(**kwargs):
        (checkpoint / "algorithm_state.pkl").write_bytes(pickle.dumps(MakesAFolder(ran)))

    monkeypatch.setattr(program, "init_ray", start_ray_then_replace)
    assert program.main(["--iterations", "2", *args, "--resume", str(checkpoint)]) == 2
    assert not ran.exists()
    assert "algorithm_state.pkl differs from the file it wrote" in capsys.readouterr().err


class CountingAlgorithm(PicklingAlgorithm):
    """The pickling stand-in reporting RLlib's lifetime env steps (100 per iteration), which
    a resumed run goes on counting."""

    def train(self) -> dict:
        super().train()
        return {"num_env_steps_sampled_lifetime": 100 * self.iterations}


def test_eval_csv_is_written_as_the_other_trainers_write_it(tmp_path, monkeypatch, capsys):
    """train_rllib evaluated only at the end, against random only, and wrote no eval.csv: its
    learning curves could not be set beside train_jax's and train_ppo's. Now the same rows
    (evaluation_row against greedy and random, after steps and wall_s) go to eval.csv before
    the first iteration, every --eval-every iterations and at the end; a resume appends to the
    rows the run left, after dropping a line cut by a kill; --overwrite starts it again; with
    --eval-matches 0 there is none. (No Ray: the algorithm is a stand-in.)"""
    import experiments.train_rllib as program

    _use_the_stand_in(monkeypatch, program, CountingAlgorithm())
    out = tmp_path / "run"
    args = ["--out", str(out), "--eval-matches", "2", "--net", "8"]
    assert program.main(["--iterations", "5", "--eval-every", "2", *args]) == 0
    assert eval_steps(out) == [0, 200, 400, 500]  # the initial policy, 2, 4, the end (5)
    stdout = capsys.readouterr().out
    assert "[eval] steps 0: vs greedy" in stdout and "[eval] steps 500: vs greedy" in stdout
    assert NumpyPolicy(out / "eval_policy.npz").metadata["env_steps"] == 500
    with open(out / "eval.csv", "a") as fh:
        fh.write("700,1.5,0.2")  # a row cut by a kill

    _use_the_stand_in(monkeypatch, program, CountingAlgorithm())
    resumed = ["--iterations", "3", "--eval-every", "2", *args, "--resume",
               str(out / "checkpoint")]
    assert program.main(resumed) == 0, capsys.readouterr().err
    assert eval_steps(out) == [0, 200, 400, 500, 700, 800]  # no second initial row
    assert "line 6 held no row of this run's numbers" in capsys.readouterr().err

    _use_the_stand_in(monkeypatch, program, CountingAlgorithm())
    assert program.main(["--iterations", "2", "--eval-every", "0", *args, "--overwrite"]) == 0
    assert eval_steps(out) == [200]  # --eval-every 0: at the end only

    for extra in (["--eval-matches", "0"], []):
        _use_the_stand_in(monkeypatch, program, CountingAlgorithm())
        fresh = tmp_path / f"none{len(extra)}"
        assert program.main(["--iterations", "1", "--out", str(fresh), "--net", "8", *extra,
                             *(["--eval-every", "0"] if not extra else [])]) == 0
        names = sorted(p.name for p in fresh.iterdir())
        assert ("eval.csv" in names) == (not extra), names
    assert eval_steps(tmp_path / "none0") == [100]  # default --eval-matches: evaluated
    with open(tmp_path / "none0" / "eval.csv") as fh:
        assert next(csv.DictReader(fh))["matches_vs_greedy"] == "200"


def test_a_stop_before_the_first_iteration_saves_nothing_and_says_so(tmp_path, monkeypatch,
                                                                     capsys):
    """The one branch of train_rllib's stopped line that names no checkpoint: a new run
    stopped before any iteration ended (its initial evaluation made) has none."""
    import experiments.train_rllib as program

    class StoppedAtOnce(CountingAlgorithm):
        def train(self) -> dict:
            raise KeyboardInterrupt

    _use_the_stand_in(monkeypatch, program, StoppedAtOnce())
    out = tmp_path / "run"
    assert program.main(["--iterations", "3", "--out", str(out), "--eval-matches", "2",
                         "--net", "8"]) == 130
    assert error_lines(capsys.readouterr().err) == [
        "error: interrupted; no iteration had finished: nothing was saved"]
    assert eval_steps(out) == [0] and not (out / "checkpoint").exists()


def test_a_policy_that_diverged_before_an_evaluation_ends_the_run_with_nothing_saved(
        tmp_path, monkeypatch, capsys):
    """An evaluation exports the policy first: weights that are not finite end the run there
    as a diverged run ends (one line, status 1), no policy written; the NaN state is not saved
    either (it was saved as the run's checkpoint)."""
    import torch

    import experiments.train_rllib as program

    algo = CountingAlgorithm()
    with torch.no_grad():
        algo.module.pi[0].weight[0, 0] = float("nan")
    _use_the_stand_in(monkeypatch, program, algo)
    out = tmp_path / "run"
    assert program.main(["--iterations", "3", "--out", str(out), "--eval-matches", "2",
                         "--net", "8"]) == 1
    assert error_lines(capsys.readouterr().err) == [
        f"error: policy file {str(out / 'eval_policy.npz')!r}: action_w holds NaN or infinite "
        "values; it was not written; no checkpoint of the run was saved"]
    assert not any((out / name).exists() for name in ("checkpoint", "policy.npz", "eval.csv"))


@pytest.mark.parametrize("name", ["c,d", "lr=3e-4"])
def test_an_out_no_agent_spec_can_name_is_refused_before_ray_starts(tmp_path, monkeypatch,
                                                                    capsys, name):
    """A run folder with ',' or '=' in its path: the evaluation (on by default) plays
    ``ppo:OUT/eval_policy.npz``, which the spec parser reads as parameters, and the run ended
    in a ``ValueError`` traceback after Ray had started and the folder was made. Now one line
    names --out and the reason, status 2, before Ray starts and with nothing written."""
    import experiments.train_rllib as program

    _use_the_stand_in(monkeypatch, program, CountingAlgorithm())
    monkeypatch.setattr(program, "init_ray", lambda **kwargs: pytest.fail("Ray started"))
    out = tmp_path / name / "run"
    status = program.main(["--iterations", "1", "--out", str(out), "--net", "8",
                           "--eval-matches", "2"])
    err = capsys.readouterr().err
    assert status == 2, err
    assert error_lines(err) == [
        f"error: --out {str(out)!r}: a policy in it could not be named in an agent spec (',' "
        "and '=' separate a spec's parameters); choose a folder without them"]
    assert list(tmp_path.iterdir()) == []


def test_a_value_error_of_an_evaluation_is_one_error_line(tmp_path, monkeypatch, capsys):
    """A ``ValueError`` from the run (an evaluation's agent spec refused, a reader's check)
    reached a traceback; it is one ``error:`` line, status 2, as in the other trainers.
    (No Ray: the algorithm is a stand-in.)"""
    import experiments.train_rllib as program

    def refused(*args, **kwargs):
        raise ValueError("agent spec 'ppo:x': refused")

    _use_the_stand_in(monkeypatch, program, CountingAlgorithm())
    monkeypatch.setattr(program, "evaluate", refused)
    status = program.main(["--iterations", "1", "--out", str(tmp_path / "run"), "--net", "8",
                           "--eval-matches", "2"])
    err = capsys.readouterr().err
    assert status == 2, err
    assert error_lines(err) == ["error: agent spec 'ppo:x': refused"]


#: the losses RLlib reports for the shared policy, as ReportingAlgorithm gives them
LOSSES = {"policy_loss": 0.5, "vf_loss": 1.0, "entropy": 2.0, "mean_kl_loss": 0.01}


class ReportingAlgorithm(CountingAlgorithm):
    """The counting stand-in reporting the learner's losses too, where RLlib's result has
    them (``progress.csv``'s ``policy_loss``... columns and ``rllib/*`` scalars)."""

    def train(self) -> dict:
        return {**super().train(), "learners": {"shared": dict(LOSSES)}}


class DivergingAlgorithm(ReportingAlgorithm):
    """The reporting stand-in whose iteration ``at`` (counted from this instance's first)
    diverges as an update can: it makes the head's weights NaN (``what="weights"``), or one of
    them 1e7, finite but more than a policy file holds (``what="large"``), or reports a NaN
    policy loss with weights still finite (``what="policy_loss"``)."""

    def __init__(self, at: int, what: str):
        super().__init__()
        self.at, self.what, self.trained = at, what, 0

    def train(self) -> dict:
        import torch

        result = super().train()
        self.trained += 1
        if self.trained == self.at:
            if self.what in ("weights", "large"):
                with torch.no_grad():
                    self.module.pi[0].weight[0, 0] = float("nan" if self.what == "weights"
                                                           else 1e7)
            else:
                result["learners"]["shared"][self.what] = float("nan")
        return result


def saved_state(checkpoint) -> dict:
    """The state the pickling stand-in saved in the folder ``checkpoint``."""
    import pickle

    with open(checkpoint / "algorithm_state.pkl", "rb") as f:
        return pickle.load(f)


def progress_rows(out) -> list[dict]:
    with open(out / "progress.csv", newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.mark.parametrize("evaluated", [False, True])
@pytest.mark.parametrize("what", ["weights", "policy_loss", "large"])
def test_a_diverged_iteration_is_not_saved_and_the_last_finite_one_is(tmp_path, monkeypatch,
                                                                      capsys, what, evaluated):
    """An iteration that made NaN weights went on to be saved as the run's checkpoint, and
    the divergence was reported only when the policy's export refused it (a NaN loss with
    finite weights was never reported). Now each iteration is checked before it counts: the
    diverged one is neither logged nor saved, the checkpoint holds the last sound iteration,
    no policy is exported, one line says so, status 1. (No Ray: the algorithm is a stand-in.)

    A weight of 1e7 (finite, above the policy file's MAX_WEIGHT) passed the check, which was
    torch.isfinite alone: the run went on and saved it as its checkpoint, ending in status 1
    when the final export refused it; with evaluations, the evaluation's export refused it
    and the run saved that very state, its row in progress.csv, under a line saying "the run
    as its last finite iteration left it is saved". The check is now the policy file's own
    rule (policy_format.weights_problem), and the line names the condition."""
    import experiments.train_rllib as program

    _use_the_stand_in(monkeypatch, program, DivergingAlgorithm(at=3, what=what))
    out = tmp_path / "run"
    status = program.main(["--iterations", "5", "--out", str(out), "--net", "8",
                           *(["--eval-matches", "2", "--eval-every", "1"] if evaluated
                             else ["--eval-matches", "0"])])
    err = capsys.readouterr().err
    assert status == 1, err
    checkpoint = out / "checkpoint"
    problem = ("weights too large for a policy file (pi.0.weight holds a value of magnitude "
               "1e+07; a policy's weights are at most 1e+06: the training diverged; try a "
               "smaller --lr)" if what == "large" else
               f"non-finite {what} (NaN or infinite: the training diverged; try a smaller --lr)")
    assert error_lines(err) == [
        f"error: the iteration reaching 300 env steps made {problem}; nothing of it was saved; "
        f"the run as its last sound iteration (2) left it is saved in {checkpoint}"]
    state = saved_state(checkpoint)
    assert state["iterations"] == 2
    assert all(np.abs(w).max() <= 1e6 for w in state["weights"].values())  # finite too
    assert json.loads((checkpoint / program.RUN_FILE).read_text())["iterations"] == 2
    assert len(progress_rows(out)) == 2
    assert not (out / "policy.npz").exists() and not (out / "policy.json").exists()
    if evaluated:
        assert eval_steps(out) == [0, 100, 200]


@pytest.mark.parametrize("when", ["periodic", "final"])
def test_a_state_an_evaluation_refuses_is_never_saved(tmp_path, monkeypatch, capsys, when):
    """An evaluation whose export refused the policy (PolicyFileError) ended the run by
    saving the state it found, which was the refused one. The refused state is never saved:
    the iteration's before it is. (The iteration check now refuses first whatever the export
    would, so this stands in for a refusal the check missed: the check is switched off.)

    The refused iteration's row stayed in progress.csv and its rllib/* scalars in TensorBoard
    (logged before the evaluation), while the checkpoint counted the iteration before it: a
    --resume logged that iteration's number a second time. An iteration to be evaluated (every
    --eval-every, or the last) is now exported before it counts, so the refused one is never
    logged, and a resume numbers on from the last row."""
    import tensorboardX

    import experiments.train_rllib as program

    monkeypatch.setattr(tensorboardX, "SummaryWriter", RecordingWriter)
    _use_the_stand_in(monkeypatch, program, DivergingAlgorithm(at=3, what="large"))
    monkeypatch.setattr(program, "check_finite", lambda *args: None)
    out = tmp_path / "run"
    args = ["--out", str(out), "--net", "8", "--eval-matches", "2"]
    status = program.main(["--iterations", "5" if when == "periodic" else "3", *args,
                           "--eval-every", "1" if when == "periodic" else "0"])
    err = capsys.readouterr().err
    assert status == 1, err
    checkpoint = out / "checkpoint"
    assert error_lines(err) == [
        f"error: policy file {str(out / 'eval_policy.npz')!r}: action_w holds a value of "
        "magnitude 1e+07; a policy's weights are at most 1e+06 (the file was changed, or its "
        "run diverged); it was not written; the run as its last sound iteration (2) left it is "
        f"saved in {checkpoint}"]
    state = saved_state(checkpoint)
    assert state["iterations"] == 2
    assert all(np.abs(w).max() <= 1e6 for w in state["weights"].values())
    assert not (out / "policy.npz").exists() and not (out / "policy.json").exists()
    assert [int(r["iteration"]) for r in progress_rows(out)] == [1, 2]
    assert sorted({step for tag, step in RecordingWriter.scalars if tag.startswith("rllib/")}) \
        == [1, 2]
    if when == "periodic":
        assert eval_steps(out) == [0, 100, 200]

    _use_the_stand_in(monkeypatch, program, ReportingAlgorithm())
    assert program.main(["--iterations", "2", *args, "--eval-every", "0", "--resume",
                         str(checkpoint)]) == 0, capsys.readouterr().err
    assert [int(r["iteration"]) for r in progress_rows(out)] == [1, 2, 3, 4]
    assert sorted({step for tag, step in RecordingWriter.scalars if tag.startswith("rllib/")}) \
        == [3, 4]


def test_a_resume_that_diverges_keeps_the_checkpoint_and_policy_it_found(tmp_path, monkeypatch,
                                                                         capsys):
    """A resumed run whose first iteration diverged saved its NaN state over the good
    checkpoint it had resumed: nothing was left to go on from. Now the checkpoint and the
    policy stay byte for byte as they were, and the line says so."""
    import experiments.train_rllib as program

    out = tmp_path / "run"
    checkpoint = out / "checkpoint"
    args = ["--out", str(out), "--eval-matches", "0", "--net", "8"]
    _use_the_stand_in(monkeypatch, program, ReportingAlgorithm())
    assert program.main(["--iterations", "2", *args]) == 0

    def contents() -> dict[str, bytes]:
        """The run's files, but its marker and TensorBoard's (each run writes an events file)."""
        return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*"))
                if p.is_file() and p.name != "run.json" and p.parent.name != "tb"}

    before = contents()
    _use_the_stand_in(monkeypatch, program, DivergingAlgorithm(at=1, what="weights"))
    capsys.readouterr()
    status = program.main(["--iterations", "3", *args, "--resume", str(checkpoint)])
    err = capsys.readouterr().err
    assert status == 1, err
    assert error_lines(err) == [
        "error: the iteration reaching 300 env steps made non-finite weights (NaN or infinite: "
        "the training diverged; try a smaller --lr); nothing of it was saved; the last "
        f"checkpoint {str(checkpoint)!r} is kept as it was"]
    after = contents()
    assert [name for name in before if after.get(name) != before[name]] == []
    assert {"checkpoint/algorithm_state.pkl", "policy.npz", "policy.json"} <= set(after)


class RecordingWriter:
    """Stands for TensorBoard's ``SummaryWriter``: keeps the ``(tag, step)`` of each scalar,
    and sends itself a Ctrl-C as the scalar ``stop_at`` is added."""

    stop_at: tuple[str, int] | None = None
    scalars: list[tuple[str, int]] = []

    def __init__(self, logdir):
        RecordingWriter.scalars = []

    def add_scalar(self, tag, value, step):
        import signal

        if (tag, step) == self.stop_at:
            signal.raise_signal(signal.SIGINT)
        self.scalars.append((tag, step))

    def close(self):
        pass


#: the scalars each log holds at a step: an iteration's (the NaN columns left out) and an
#: evaluation's
ITERATION_SCALARS = {f"rllib/{name}" for name in ("env_steps", "policy_loss", "vf_loss",
                                                  "entropy", "mean_kl")}
EVAL_SCALARS = {f"eval/{name}" for name in EVAL_COLUMNS[1:]}


@pytest.mark.parametrize("where", ["iteration scalars", "evaluation scalars", "eval.csv row"])
def test_a_stop_while_the_logs_are_written_lets_them_finish(tmp_path, monkeypatch, capsys,
                                                            where):
    """A Ctrl-C landing while an iteration's or an evaluation's logs were written cut them
    there: TensorBoard got part of a step's scalars (and a scalar cut inside the writer can
    leave its lock taken), eval.csv lost the row whose scalars were logged. Now the stop
    waits until the logs of the iteration (or evaluation) are whole, and the run saved is
    the one they describe. (No Ray: the algorithm is a stand-in.)"""
    import signal

    import tensorboardX

    import experiments.train_rllib as program

    monkeypatch.setattr(RecordingWriter, "stop_at", {
        "iteration scalars": ("rllib/policy_loss", 2),
        "evaluation scalars": ("eval/win_rate_vs_greedy", 200), "eval.csv row": None}[where])
    monkeypatch.setattr(tensorboardX, "SummaryWriter", RecordingWriter)
    real_append = program.append_eval_row

    def append_stopped(path, row):
        if row["steps"] == 200:
            signal.raise_signal(signal.SIGINT)
        real_append(path, row)

    if where == "eval.csv row":
        monkeypatch.setattr(program, "append_eval_row", append_stopped)
    _use_the_stand_in(monkeypatch, program, ReportingAlgorithm())
    out = tmp_path / "run"
    old = signal.signal(signal.SIGINT, signal.default_int_handler)  # as at a terminal
    try:
        status = program.main(["--iterations", "5", "--eval-every", "2", "--eval-matches", "2",
                               "--out", str(out), "--net", "8"])
    finally:
        signal.signal(signal.SIGINT, old)
    assert status == 130, capsys.readouterr().err
    logged: dict[int, set[str]] = {}
    for tag, step in RecordingWriter.scalars:
        logged.setdefault(step if tag.startswith("rllib/") else -step - 1, set()).add(tag)
    evaluated = [0] if where == "iteration scalars" else [0, 200]
    assert logged == {**{it: ITERATION_SCALARS for it in (1, 2)},
                      **{-steps - 1: EVAL_SCALARS for steps in evaluated}}
    assert eval_steps(out) == evaluated
    assert len(progress_rows(out)) == 2 == saved_state(out / "checkpoint")["iterations"]
    assert json.loads((out / "policy.json").read_text())["iterations"] == 2


class SlowAlgorithm(ReportingAlgorithm):
    """The reporting stand-in whose iterations take a quarter of a second each."""

    def train(self) -> dict:
        import time

        time.sleep(0.25)
        return super().train()


def test_wall_seconds_go_on_from_the_checkpoint_at_a_resume(tmp_path, monkeypatch, capsys):
    """A resumed run counted its wall seconds from 0 again: eval.csv's wall_s (and
    progress.csv's seconds) fell back at each resume, and the policy's card had none. Now the
    checkpoint records them and a resume goes on from there, as train_jax's does."""
    import experiments.train_rllib as program

    out = tmp_path / "run"
    args = ["--out", str(out), "--eval-matches", "2", "--eval-every", "1", "--net", "8"]

    def eval_walls() -> list[tuple[int, float]]:
        with open(out / "eval.csv", newline="") as fh:
            return [(int(r["steps"]), float(r["wall_s"])) for r in csv.DictReader(fh)]

    _use_the_stand_in(monkeypatch, program, SlowAlgorithm())
    assert program.main(["--iterations", "2", *args]) == 0, capsys.readouterr().err
    last = eval_walls()[-1][1]
    assert last >= 0.5  # each iteration sleeps 0.25 s; wall_s is rounded to 0.1 s

    _use_the_stand_in(monkeypatch, program, SlowAlgorithm())
    assert program.main(["--iterations", "2", *args, "--resume", str(out / "checkpoint")]) == 0
    walls = eval_walls()
    assert [steps for steps, _ in walls] == [0, 100, 200, 300, 400]
    assert [wall for _, wall in walls] == sorted(wall for _, wall in walls), walls
    assert all(wall >= last + 0.2 for steps, wall in walls if steps > 200), walls
    seconds = [float(r["seconds"]) for r in progress_rows(out)]
    assert seconds == sorted(seconds) and seconds[2] >= last + 0.2, seconds
    # the checkpoint recorded the run's seconds as the card says them; a resume adds its own
    recorded = json.loads((out / "checkpoint" / program.RUN_FILE).read_text())["wall_s"]
    assert json.loads((out / "policy.json").read_text())["wall_s"] == recorded >= last + 0.45


class IteratingAlgorithm(ReportingAlgorithm):
    """The reporting stand-in keeping RLlib's own count of its iterations, ``iteration``, as
    ``Algorithm`` does (its state holds it, so a restore puts it back)."""

    @property
    def iteration(self) -> int:
        return self.iterations


def test_a_resume_numbers_its_iterations_on_from_the_run_s(tmp_path, monkeypatch, capsys):
    """A resumed run numbered its iterations from 1 again: progress.csv's iteration column and
    the TensorBoard rllib/* steps went 1, 2, 1, 2, the curves lying over one another. The
    checkpoint now records the run's completed iterations (beside its wall seconds) and a
    resume numbers on from them; --iterations is still the count this command runs. A
    checkpoint saved before the count was recorded goes on from RLlib's own count (here the
    stand-in's), and a run file whose count is no count is refused."""
    import tensorboardX

    import experiments.train_rllib as program
    from agents.rllib_checkpoint import write_manifest

    monkeypatch.setattr(tensorboardX, "SummaryWriter", RecordingWriter)
    out = tmp_path / "run"
    checkpoint = out / "checkpoint"
    args = ["--out", str(out), "--eval-matches", "0", "--net", "8"]
    _use_the_stand_in(monkeypatch, program, IteratingAlgorithm())
    assert program.main(["--iterations", "2", *args]) == 0
    _use_the_stand_in(monkeypatch, program, IteratingAlgorithm())
    assert program.main(["--iterations", "3", *args, "--resume", str(checkpoint)]) == 0
    stdout = capsys.readouterr().out
    assert [int(r["iteration"]) for r in progress_rows(out)] == [1, 2, 3, 4, 5]
    assert sorted({step for tag, step in RecordingWriter.scalars}) == [3, 4, 5]
    assert "[3/5]" in stdout and "[5/5]" in stdout
    record = json.loads((checkpoint / program.RUN_FILE).read_text())
    assert record["iterations"] == 5 == json.loads((out / "policy.json").read_text())[
        "iterations"]

    # a checkpoint whose run file records no iterations: RLlib's count (the stand-in's, 5)
    (checkpoint / program.RUN_FILE).write_text(json.dumps({"wall_s": record["wall_s"]}))
    write_manifest(checkpoint)
    _use_the_stand_in(monkeypatch, program, IteratingAlgorithm())
    assert program.main(["--iterations", "1", *args, "--resume", str(checkpoint)]) == 0
    assert [int(r["iteration"]) for r in progress_rows(out)] == [1, 2, 3, 4, 5, 6]
    # ... and an algorithm without one: 0 (the count starts again, as before it was recorded)
    (checkpoint / program.RUN_FILE).write_text(json.dumps({"wall_s": record["wall_s"]}))
    write_manifest(checkpoint)
    _use_the_stand_in(monkeypatch, program, ReportingAlgorithm())
    assert program.main(["--iterations", "1", *args, "--resume", str(checkpoint)]) == 0
    assert int(progress_rows(out)[-1]["iteration"]) == 1
    capsys.readouterr()

    for bad in ("7", -1, 2.5, True, 2**60):
        (checkpoint / program.RUN_FILE).write_text(json.dumps({"wall_s": 1.0,
                                                               "iterations": bad}))
        write_manifest(checkpoint)
        _use_the_stand_in(monkeypatch, program, IteratingAlgorithm())
        assert program.main(["--iterations", "1", *args, "--resume", str(checkpoint)]) == 2
        assert error_lines(capsys.readouterr().err) == [
            f"error: --resume {str(checkpoint)!r} cannot be restored (ValueError: "
            f"{program.RUN_FILE} holds no count of iterations (a whole number in "
            "0..9,007,199,254,740,992))"]
