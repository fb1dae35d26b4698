"""Expert iteration: the teacher's decisions are recorded (both sides when it plays itself),
the fit moves the policy toward the teacher's moves, the export plays as ``ppo:PATH``, and bad
input exits 2 before anything is played."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("optax")

from agents import make_agent  # noqa: E402
from agents.arena import play_match  # noqa: E402
from agents.imitation import collect_demonstrations  # noqa: E402
from agents.ppo import shipped_policy_path  # noqa: E402
from dominoes_env.core import RuleConfig  # noqa: E402
from dominoes_env.jax.networks import init_params  # noqa: E402
from experiments.expert_iteration import fit_actor, main  # noqa: E402

RULES = RuleConfig(target_score=50)


def test_a_teacher_playing_itself_is_recorded_on_both_sides():
    alone = collect_demonstrations("greedy", ["random"], RULES, 4, seed=5)
    both = collect_demonstrations("greedy", ["greedy"], RULES, 4, seed=5)
    assert len(both["actions"]) > 1.5 * len(alone["actions"])
    assert len(both["values"]) == len(both["actions"])
    # a hand's margins of the two sides cancel: the values of both sides sum to zero per hand
    assert abs(both["values"].mean()) < abs(both["values"]).mean()


def test_the_fit_learns_a_deterministic_teacher():
    import jax

    data = collect_demonstrations("greedy", ["greedy"], RULES, 40, seed=1)
    actor = init_params(jax.random.PRNGKey(0), data["obs"].shape[1], data["masks"].shape[1],
                        [64])["actor"]
    _, start = fit_actor(actor, data, epochs=0, batch_size=64, lr=3e-3, seed=0, log=str)
    _, stats = fit_actor(actor, data, epochs=15, batch_size=64, lr=3e-3, seed=0, log=str)
    # ~600 decisions: from 36% to about 70% of the held-out moves are the policy's first choice
    assert stats["heldout_loss"] < start["heldout_loss"] - 0.1
    assert stats["heldout_accuracy"] > start["heldout_accuracy"] + 0.2
    assert stats["decisions"] == len(data["actions"])


def test_one_iteration_writes_demos_and_a_playable_policy(tmp_path):
    out = tmp_path / "exit"
    assert main(["--out", str(out), "--teacher", "search:sims=8", "--opponents",
                 "search:sims=8", "greedy", "--matches", "4", "--workers", "1",
                 "--epochs", "1", "--batch-size", "32"]) == 0
    meta = json.loads((out / "policy.json").read_text())
    assert meta["teacher"] == "search:sims=8" and 0 <= meta["heldout_accuracy"] <= 1
    assert meta["trainer"] == "experiments.expert_iteration"
    with np.load(out / "demos.npz") as demos:
        assert demos["obs"].shape[0] == demos["actions"].shape[0] == meta["decisions"]
    rules = RuleConfig(target_score=30)
    result = play_match([make_agent(f"ppo:{out / 'policy.npz'}"), "random"], rules, 3)
    assert max(result.scores) >= 30
    # the saved decisions fit again without playing
    again = tmp_path / "again"
    assert main(["--out", str(again), "--data", str(out / "demos.npz"), "--epochs", "1",
                 "--batch-size", "32"]) == 0
    assert (again / "policy.npz").is_file() and not (again / "demos.npz").exists()
    # its metadata names the teacher that played those decisions, not --teacher's default
    assert json.loads((again / "policy.json").read_text())["teacher"] == "search:sims=8"


def test_too_few_decisions_say_where_they_came_from(tmp_path, capsys):
    """Refitting a --data file of too few decisions said "play more --matches (the decisions
    played are saved in OUT/demos.npz)": nothing had been played, and that file was not there."""
    played = tmp_path / "played"
    flags = ["--epochs", "1", "--batch-size", "100000", "--workers", "1"]
    assert main([*flags, "--teacher", "greedy", "--opponents", "random", "--matches", "2",
                 "--out", str(played)]) == 2
    err = capsys.readouterr().err
    assert "fewer than --batch-size 100000; play more --matches (the decisions played are " \
           f"saved in {played / 'demos.npz'})" in err, err
    refit = tmp_path / "refit"
    assert main([*flags, "--data", str(played / "demos.npz"), "--out", str(refit)]) == 2
    err = capsys.readouterr().err
    assert err.endswith(f"fewer than --batch-size 100000: --data {played / 'demos.npz'} holds "
                        "too few; give a smaller --batch-size or more decisions\n"), err
    assert "play more" not in err and "held out" in err


def test_the_fit_is_the_same_under_jax_enable_x64(tmp_path, capsys):
    """``JAX_ENABLE_X64`` is switched off for the run, with a note: the fit's learning rate and
    data were 64-bit there, and a seed gave another policy."""
    import jax

    flags = ["--teacher", "greedy", "--opponents", "random", "--matches", "2", "--workers",
             "1", "--epochs", "1", "--batch-size", "8"]
    assert main([*flags, "--out", str(tmp_path / "a")]) == 0
    jax.config.update("jax_enable_x64", True)
    try:
        assert main([*flags, "--out", str(tmp_path / "b")]) == 0
    finally:
        jax.config.update("jax_enable_x64", False)
    assert "note: JAX_ENABLE_X64 is ignored: expert_iteration computes in 32 bits" in \
        capsys.readouterr().err
    a, b = np.load(tmp_path / "a" / "policy.npz"), np.load(tmp_path / "b" / "policy.npz")
    for key in ("w0", "b0", "action_w", "action_b"):
        np.testing.assert_array_equal(a[key], b[key])


@pytest.mark.parametrize("flags, says", [
    (["--matches", "0"], "--matches"),
    # past what a demonstrations file may say it holds: the run's own --data was refused
    (["--matches", "10000001"], "--matches must be at most 10,000,000, not 10,000,001"),
    (["--teacher", "nosuch"], "nosuch"),
    (["--data", "/nonexistent/demos.npz"], "demonstrations"),
    (["--init", "/nonexistent/p.npz"], "p.npz"),
    # a policy of another table (ppo at 3 players is the shipped 3-player policy now)
    (["--players", "3", "--init", str(shipped_policy_path("2p"))], "these rules need"),
    (["--lr", "inf"], "--lr"),  # trained to NaN parameters before the check said finite
])
def test_bad_input_exits_2_before_playing(tmp_path, capsys, flags, says):
    out = tmp_path / "bad"
    assert main(["--out", str(out), *flags]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and says in err and "\n" not in err
    assert not out.exists()


def test_a_policy_or_demonstrations_of_another_observation_version_are_refused(tmp_path,
                                                                                capsys):
    """Expert iteration fits observation version 2 (what the demonstrations record): a version 3
    --init policy is refused naming its version and the one served (it failed later, inside
    the fit, before), and so is a --data file whose observations are not version 2's, or that
    holds an illegal move, NaN, or an observation no position encodes (1e30 was fitted)."""
    from agents.ppo import random_policy_npz

    v3 = tmp_path / "v3.npz"
    random_policy_npz(v3, RuleConfig(), hidden=(8,), obs_version=3)
    out = tmp_path / "bad"
    assert main(["--out", str(out), "--init", str(v3)]) == 2
    err = capsys.readouterr().err.strip()
    assert "reads observation version 3; expert iteration serves version 2" in err, err
    hand = np.zeros((4, 234), np.float32)
    hand[:, 0] = 1  # tile 0 in hand, its 4 plays legal (every action legal is no position)
    good = {"obs": hand, "masks": np.arange(112) < np.full((4, 1), 4),
            "actions": np.arange(4), "values": np.zeros(4, np.float32)}
    for name, change, says in (
            ("wide", {"obs": np.zeros((4, 346), np.float32)}, "needs (4, 234)"),
            ("nan", {"values": np.array([0, np.nan, 0, 0], np.float32)}, "NaN"),
            ("huge", {"obs": np.where(np.eye(4, 234, 5, bool), 1e30, 0).astype(np.float32)},
             "row 0: obs[5] = 1e+30 is outside its block 'hand' (0..1)"),
            ("negative", {"obs": np.full((4, 234), -1, np.float32)}, "obs[0] = -1 is outside"),
            ("illegal", {"masks": np.arange(112) < np.ones((4, 1))}, "not legal"),
            ("all legal", {"masks": np.ones((4, 112), bool)},
             "row 0: its mask has 112 legal actions; a hand of 1 tiles has at most 4")):
        path = tmp_path / f"{name}.npz"
        meta = {"teacher": "greedy", "opponents": ["greedy"], "matches": 1, "seed": 0,
                "rules": RuleConfig().to_dict()}
        np.savez(path, **{**good, **change}, meta=np.array(json.dumps(meta)))
        assert main(["--out", str(out), "--data", str(path), "--players", "2"]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("error: --data") and says in err and "\n" not in err, err
    assert not out.exists()


@pytest.mark.parametrize(("signum", "status"), [("SIGINT", 130), ("SIGTERM", 143)])
def test_stopped_while_playing_saves_the_finished_matches(tmp_path, signum, status):
    """A Ctrl-C while the teacher played ended in a traceback and SIGTERM killed the run: the
    matches played were lost either way. Now their decisions are saved, and the one line says
    where. The matches are played in two processes forked before JAX started (JAX warned on
    every fork: "os.fork() ... will likely lead to a deadlock")."""
    import re
    import signal

    from agents.demos import load_demos
    from tests.helpers import CHILD_TIMEOUT_S, error_lines, spawn_program, wait_for_text

    out = tmp_path / "exit"
    proc = spawn_program("experiments.expert_iteration", "--out", str(out), "--teacher",
                         "greedy", "--opponents", "random", "--matches", "100000", "--workers",
                         "2", "--epochs", "1", "--batch-size", "8")
    seen = wait_for_text(proc.stderr, re.compile(r"\| [1-9]\d*/100000"), proc)  # a match ended
    proc.send_signal(getattr(signal, signum))
    _, err = proc.communicate(timeout=CHILD_TIMEOUT_S)
    err = seen + err
    assert proc.returncode == status, err
    assert "os.fork()" not in err, err
    words = "interrupted" if signum == "SIGINT" else f"stopped by {signum}"
    [line] = error_lines(err)
    said = re.fullmatch(rf"error: {words}; the decisions of the (\d+) finished matches are "
                        rf"saved in {re.escape(str(out / 'demos.npz'))} \(fit them with --data "
                        rf"and another --out\)", line)
    assert said, line
    data, teacher = load_demos(str(out / "demos.npz"), RuleConfig())
    assert teacher == "greedy" and len(data["actions"]) > 0
    with np.load(out / "demos.npz") as f:
        assert json.loads(str(f["meta"]))["matches"] == int(said.group(1))
    assert not (out / "policy.npz").exists()


def test_stopped_by_a_closed_terminal_while_fitting_exports_the_best_fit_so_far(tmp_path):
    """SIGHUP (the terminal closed) during a long fit killed it: every epoch was lost. Now the
    best parameters so far are exported, their JSON saying at which epoch the fit stopped."""
    import re
    import signal

    from agents.demos import save_demos
    from tests.helpers import CHILD_TIMEOUT_S, error_lines, spawn_program, wait_for_text

    rules = RuleConfig()
    demos = tmp_path / "demos.npz"
    save_demos(demos, collect_demonstrations("greedy", ["greedy"], rules, 6, seed=2),
               {"teacher": "greedy", "opponents": ["greedy"], "matches": 6, "seed": 2,
                "rules": rules.to_dict()})
    out = tmp_path / "exit"
    proc = spawn_program("experiments.expert_iteration", "--out", str(out), "--data",
                         str(demos), "--epochs", "100000", "--batch-size", "8", "--lr", "1e-3")
    seen = wait_for_text(proc.stdout, re.compile(r"\[fit\] epoch \d+/100000: .* \*\n"), proc)
    proc.send_signal(signal.SIGHUP)
    _, err = proc.communicate(timeout=CHILD_TIMEOUT_S)
    assert proc.returncode == 129, err
    [line] = error_lines(err)
    assert re.fullmatch(rf"error: stopped by SIGHUP; the best fit so far \(epoch \d+ of 100000\) "
                        rf"is exported to {re.escape(str(out / 'policy.npz'))}", line), line
    meta = json.loads((out / "policy.json").read_text())
    assert meta["stopped_at_epoch"] >= 1 and meta["teacher"] == "greedy"
    assert max(play_match([make_agent(f"ppo:{out / 'policy.npz'}"), "random"],
                          RuleConfig(target_score=30), 3).scores) >= 30
    assert seen


@pytest.mark.parametrize("flag", ["--out", "--init"])
def test_a_path_no_agent_spec_can_name_is_refused_before_playing(tmp_path, capsys, flag):
    """Its evaluation plays ``ppo:OUT/.../policy.npz`` and its guided teacher
    ``guided:policy=INIT``: a path with ',' broke them after the run had started. Now one
    line names the flag, status 2, and nothing is written."""
    odd = str(tmp_path / "c,d" / ("run" if flag == "--out" else "p.npz"))
    out = odd if flag == "--out" else str(tmp_path / "run")
    assert main(["--out", out, *([flag, odd] if flag == "--init" else [])]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {flag} {odd!r}: ") and err.count("\n") == 1, err
    assert "could not be named in an agent spec (',' and '='" in err
    assert list(tmp_path.iterdir()) == []
