"""Running tournaments: determinism across workers and backends, resume after a kill or Ctrl-C,
refusal of another tournament's directory, and a small end-to-end run of every format."""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import signal
import time
from pathlib import Path

import pytest

from agents.arena import TIMING_FIELDS
from agents.tournament import TournamentConfig, TournamentDirError, build_summary, run_tournament
from agents.tournament.runner import MATCHES_FILE, job_record
from dominoes_env.cli_support import MAX_MATCHES
from dominoes_env.core import RuleConfig
from experiments.tournament import main
from experiments.tournament.cli import default_out

from .helpers import CHILD_TIMEOUT_S, SLOW, cli, match_records, wait_for_lines

FAST = RuleConfig(target_score=60)


# -- determinism --------------------------------------------------------------------------------
def test_same_results_whatever_the_worker_count(tmp_path):
    config = TournamentConfig(["random", "greedy", "tests.tournament_agents:FirstLegalAgent"], FAST,
                              matches=6, seed=3)
    one = run_tournament(config, tmp_path / "w1", workers=1, progress=False)
    two = run_tournament(config, tmp_path / "w2", workers=2, progress=False)
    assert one.played == two.played == len(one.schedule.jobs) == 18
    assert match_records(tmp_path / "w1") == match_records(tmp_path / "w2")
    s1, s2 = build_summary(one), build_summary(two)
    s1.pop("last_run"), s2.pop("last_run")
    assert s1 == s2  # ratings too: computed in schedule order


def test_a_pool_plays_matches_in_batches_with_the_same_results(tmp_path):
    """200 matches on 2 workers go out in batches of 3 (``batch_size``): every match played
    once, the same records as one worker. (With chunksize > 1 ``imap_unordered`` returns a
    plain generator; the dead-worker watch once called ``next(timeout=...)`` on it and every
    run of more than 128 matches on 2 workers crashed.)"""
    from agents.tournament.runner import batch_size

    config = TournamentConfig(["random", "greedy"], FAST, matches=200, seed=9)
    assert batch_size(200, 2, 8) == 3
    two = run_tournament(config, tmp_path / "w2", workers=2, progress=False)
    one = run_tournament(config, tmp_path / "w1", workers=1, progress=False)
    assert two.played == one.played == 200
    assert match_records(tmp_path / "w2") == match_records(tmp_path / "w1")


def test_ray_backend_gives_the_same_results(tmp_path, one_local_ray):
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'ray[default]')")
    config = TournamentConfig(["random", "greedy"], FAST, matches=8, seed=5)
    local = run_tournament(config, tmp_path / "local", workers=1, progress=False)
    handler = signal.getsignal(signal.SIGTERM)
    remote = run_tournament(config, tmp_path / "ray", workers=2, backend="ray", progress=False)
    assert remote.played == local.played == 8
    assert match_records(tmp_path / "ray") == match_records(tmp_path / "local")
    assert not ray.is_initialized()  # the Ray it started is shut down again
    # and its SIGTERM handler (sys.exit(15)) with it: the process's own is back
    assert signal.getsignal(signal.SIGTERM) is handler


# -- resume ---------------------------------------------------------------------------------------
def test_resume_after_kill_loses_nothing_and_duplicates_nothing(tmp_path):
    out = tmp_path / "run"
    args = ["--agents", "random", SLOW, "--matches", "40", "--target-score", "60",
            "--workers", "2", "--out", str(out), "--quiet", "--no-plots"]  # fmt: skip
    proc = cli(*args)
    wait_for_lines(out / MATCHES_FILE, 6, proc)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=CHILD_TIMEOUT_S)
    with open(out / MATCHES_FILE, "a") as f:  # as if killed in the middle of a write
        f.write('{"index": 3, "key": "[1,[')
    results_before = (out / MATCHES_FILE).read_text().count("\n")
    assert 6 <= results_before < 40

    config = TournamentConfig(["random", SLOW], FAST, matches=40)
    run = run_tournament(config, out, workers=2, progress=False)
    assert run.played == 40 - results_before and len(run.records) == 40
    recs = match_records(out)
    assert sorted(recs) == sorted(job.key for job in run.schedule.jobs)
    for job in run.schedule.jobs[::7]:  # spot-check against a fresh replay
        fresh = job_record(job, FAST, config.max_hands)
        for key in TIMING_FIELDS:
            fresh.pop(key)
        assert recs[job.key] == fresh
    assert run_tournament(config, out, progress=False).played == 0  # complete: nothing to do


@pytest.mark.parametrize(("signum", "status"), [("SIGTERM", 143), ("SIGHUP", 129)])
def test_sigterm_or_a_closed_terminal_saves_finished_matches(tmp_path, signum, status):
    """SIGTERM and SIGHUP were caught as a Ctrl-C: the matches were kept but the run ended as
    "interrupted", status 130, so whoever sent them could not tell how it stopped."""
    out = tmp_path / "run"
    proc = cli("--agents", SLOW, "greedy", "--matches", "40", "--target-score", "60",
               "--workers", "1", "--out", str(out), "--quiet", "--no-plots")
    wait_for_lines(out / MATCHES_FILE, 2, proc)
    proc.send_signal(getattr(signal, signum))
    _, err = proc.communicate(timeout=CHILD_TIMEOUT_S)
    assert proc.returncode == status, err
    assert err.splitlines() == [f"error: stopped by {signum}; finished matches are saved in "
                                f"{out}; run the same command again to play the rest"], err
    assert 2 <= len(match_records(out)) < 40


def test_ctrl_c_saves_finished_matches_and_exits_130(tmp_path):
    out = tmp_path / "run"
    args = ["--agents", SLOW, "greedy", "--matches", "40", "--target-score", "60",
            "--workers", "2", "--out", str(out), "--quiet", "--no-plots"]  # fmt: skip
    # a shell that started this test suite in the background leaves SIGINT ignored, and an
    # ignored signal is inherited: give the run the default disposition, as a terminal would
    proc = cli(*args, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    wait_for_lines(out / MATCHES_FILE, 4, proc)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=CHILD_TIMEOUT_S)
    assert proc.returncode == 130
    assert "run the same command again" in err
    saved = match_records(out)
    assert 4 <= len(saved) < 40
    finish = cli(*args)
    _, err = finish.communicate(timeout=CHILD_TIMEOUT_S)
    assert finish.returncode == 0, err
    done = match_records(out)
    assert len(done) == 40 and all(done[k] == v for k, v in saved.items())
    assert (out / "summary.json").exists()


@pytest.mark.parametrize("gap_s", [0.0, 0.02, 0.1])
def test_ctrl_c_twice_at_a_terminal_is_one_stop(tmp_path, gap_s):
    """A terminal sends Ctrl-C to the whole process group (the workers too). A second one 20 ms
    after the first landed in the program's teardown and killed it (status -2) after it had
    said how it stopped."""
    out = tmp_path / "run"
    proc = cli("--agents", SLOW, "greedy", "--matches", "400", "--target-score", "60",
               "--workers", "2", "--out", str(out), "--quiet", "--no-plots",
               start_new_session=True,
               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    wait_for_lines(out / MATCHES_FILE, 2, proc)
    os.killpg(proc.pid, signal.SIGINT)
    time.sleep(gap_s)
    with contextlib.suppress(ProcessLookupError):  # all ended already
        os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=CHILD_TIMEOUT_S)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert f"finished matches are saved in {out}" in err
    assert 2 <= len(match_records(out)) < 400


def test_damaged_results_file_is_refused(tmp_path):
    config = TournamentConfig(["random", "greedy"], FAST, matches=2)
    run_tournament(config, tmp_path, progress=False)
    path = tmp_path / MATCHES_FILE
    path.write_text("not json\n" + path.read_text())
    with pytest.raises(TournamentDirError, match="matches.jsonl:1 is not a match record"):
        run_tournament(config, tmp_path, progress=False)


def test_matches_of_another_seed_are_refused_naming_the_line(tmp_path):
    """``cp ts0/matches.jsonl ts1/`` (the same tournament with --seed 0 and --seed 1): the
    resumed run reported seed 0's matches as seed 1's in silence; each line's match seed is
    checked against the schedule's."""
    seed0 = TournamentConfig(["random", "greedy"], FAST, matches=2, seed=0)
    seed1 = TournamentConfig(["random", "greedy"], FAST, matches=2, seed=1)
    run_tournament(seed0, tmp_path / "ts0", progress=False)
    run_tournament(seed1, tmp_path / "ts1", progress=False)
    (tmp_path / "ts1" / MATCHES_FILE).write_bytes((tmp_path / "ts0" / MATCHES_FILE).read_bytes())
    with pytest.raises(TournamentDirError, match=r"matches.jsonl:1 is not a match record of this "
                       r"tournament \(its match seed \d+ is not this tournament's \d+ for that "
                       r"match: it is a match of another run"):
        run_tournament(seed1, tmp_path / "ts1", progress=False)


@pytest.mark.parametrize("index", [99, 0.0, "0"])
def test_a_line_with_a_wrong_index_is_refused_naming_the_index(tmp_path, index):
    """A line whose key is the schedule's but whose index is not was refused as "match
    '[0,...]' is not in this tournament's schedule", blaming the key."""
    config = TournamentConfig(["random", "greedy"], FAST, matches=2)
    run_tournament(config, tmp_path, progress=False)
    path = tmp_path / MATCHES_FILE
    lines = path.read_text().splitlines(keepends=True)
    rec = json.loads(lines[0])
    want, rec["index"] = rec["index"], index
    path.write_text(json.dumps(rec) + "\n" + "".join(lines[1:]))
    with pytest.raises(TournamentDirError, match=re.escape(
            f"matches.jsonl:1 is not a match record of this tournament (its index {index!r} is "
            f"not {want}, the schedule's index of match {rec['key']!r})")):
        run_tournament(config, tmp_path, progress=False)


def first_line_changed(out: Path, change) -> dict:
    """Rewrite the first line of ``out``'s matches.jsonl through ``change(line)`` (in place);
    returns the line as it was."""
    path = out / MATCHES_FILE
    lines = path.read_text().splitlines(keepends=True)
    first = json.loads(lines[0])
    line = json.loads(lines[0])
    change(line)
    path.write_text(json.dumps(line) + "\n" + "".join(lines[1:]))
    return first


def _loser(line: dict) -> int:
    return 1 - line["winner"]


#: lines of a 2-player match to 60 (win_check immediate, max_hands 1000) that no match ends with
IMPOSSIBLE_LINES = {
    "huge scores": (lambda r: r.update(scores=[-5, 10**25], winner=0),
                    "scores must be multiples of 5 in 0.."),
    "a negative score": (lambda r: r["scores"].__setitem__(_loser(r), -5),
                         "scores must be multiples of 5 in 0.."),
    "a score past what its hands can score": (
        lambda r: r.update(hands=1, scores=[10**4, 0], winner=0, seat_points=[0, 0],
                           winner_agent=r["seats"][0]), "in 0..1,512 (what 1 hands"),
    "a score no play or award gives": (lambda r: r["scores"].__setitem__(_loser(r), 1),
                                       "scores must be multiples of 5"),
    "the other winner": (lambda r: r.update(winner=_loser(r),
                                            winner_agent=r["seats"][_loser(r)]),
                         "do not end a match to 60 (win_check 'immediate') with winner"),
    "no winner before max_hands": (lambda r: r.update(winner=None, winner_agent=None),
                                   "an undecided match (winner null) is stopped after "
                                   "max_hands=1000 hands"),
    "the loser at the target": (lambda r: r["scores"].__setitem__(_loser(r), 60),
                                "do not end a match to 60"),
    "no hand": (lambda r: r.update(hands=0), "hands must be an integer in 1..1000"),
    "more hands than max_hands": (lambda r: r.update(hands=1001), "in 1..1000 (max_hands)"),
    "winner_agent of the loser": (lambda r: r.update(winner_agent=r["seats"][_loser(r)]),
                                  "the agent of winner"),
    "no winner_agent": (lambda r: r.pop("winner_agent"), "missing winner_agent"),
    "duration_s NaN": (lambda r: r.update(duration_s=math.nan),
                       "duration_s must be a finite number >= 0, not nan"),
    "duration_s negative": (lambda r: r.update(duration_s=-1.0), "not -1.0"),
    "duration_s a string": (lambda r: r.update(duration_s="1"), "not '1'"),
    # an int past the largest float: math.isfinite of it was an OverflowError
    "duration_s huge": (lambda r: r.update(duration_s=10**400),
                        "duration_s must be a finite number >= 0, not 1000"),
    "fewer plays than hands": (lambda r: r.update(plays=0), "plays must be an integer in"),
    "seat points past the score": (
        lambda r: r["seat_points"].__setitem__(_loser(r), r["scores"][_loser(r)] + 5),
        "in plays, more than its score"),
    "seat points of one seat": (lambda r: r.update(seat_points=[0]),
                                "seat_points must be 2 multiples of 5"),
    "first_leader no seat": (lambda r: r.update(first_leader=2), "first_leader must be a seat"),
    "another table": (lambda r: r.update(table=r["table"][::-1]), "its table or deal differs"),
    "another deal": (lambda r: r.update(deal=r["deal"] + 1), "its table or deal differs"),
}


@pytest.mark.parametrize("change, problem", IMPOSSIBLE_LINES.values(), ids=IMPOSSIBLE_LINES)
def test_a_line_no_match_ends_with_is_refused_naming_the_problem(tmp_path, change, problem):
    """A line whose scores, winner, hands, winner_agent or duration no match can end with
    (``"scores": [-5, 10**25]``, a winner the scores contradict) was read back on resume as
    it said: only a replay of its game record (--save-records) caught it, and a tournament
    without records, or a benchmark card, counted 3.3e24 points per hand. It is refused as a
    damaged line, naming the line and what is wrong, and the file is left as it is."""
    config = TournamentConfig(["random", "greedy"], FAST, matches=2)
    run_tournament(config, tmp_path, progress=False)
    first_line_changed(tmp_path, change)
    before = (tmp_path / MATCHES_FILE).read_text()
    with pytest.raises(TournamentDirError) as caught:
        run_tournament(config, tmp_path, progress=False)
    message = str(caught.value)
    assert message.startswith(f"{tmp_path / MATCHES_FILE}:1 is not a match record of this "
                              "tournament ("), message
    assert problem in message and message.endswith("the file is damaged: remove that line, "
                                                   "or use another output folder"), message
    assert (tmp_path / MATCHES_FILE).read_text() == before


#: rule options whose matches end every way a line can say: draws (max_hands), the loser past
#: the target (end_of_hand), partnerships, three and four sides
ENDINGS = {
    "2p draws": (RuleConfig(target_score=200), 2),
    "2p end_of_hand": (RuleConfig(target_score=30, win_check="end_of_hand"), 1000),
    "3p end_of_hand, draws": (RuleConfig(num_players=3, target_score=60,
                                         win_check="end_of_hand"), 2),
    "4p partnerships, draws": (RuleConfig(num_players=4, target_score=100), 2),
    "4p free for all": (RuleConfig(num_players=4, partnerships=False, target_score=30,
                                   win_check="end_of_hand", blocked_award="difference"), 2),
    "double-nine, no spinner": (RuleConfig(max_pip=9, spinner="none", target_score=40), 1000),
}


@pytest.mark.parametrize("rules, max_hands", ENDINGS.values(), ids=ENDINGS)
def test_every_line_a_match_ends_with_is_read_back(tmp_path, rules, max_hands):
    """The checks of a line refuse no line a match writes: a rerun reads every finished match
    back and plays none, under rule options that end matches undecided (a draw at max_hands),
    with the loser past the target (end_of_hand), at two, three and four sides."""
    config = TournamentConfig(["random", "greedy"], rules, matches=12, seed=1,
                              max_hands=max_hands)
    first = run_tournament(config, tmp_path, progress=False)
    again = run_tournament(config, tmp_path, progress=False)
    assert again.played == 0 and again.records == first.records
    draws = [r for r in first.records if r["winner"] is None]
    past = [r for r in first.records if r["winner"] is not None
            and sorted(r["scores"])[-2] >= rules.target_score]  # a loser past the target too
    assert draws if max_hands < 1000 else not draws
    if rules.win_check == "end_of_hand" and max_hands == 1000:
        assert past, [r["scores"] for r in first.records]


def test_a_second_different_line_of_a_match_is_refused_and_a_repeated_one_is_read_once(tmp_path):
    """A run writes each match once: a second line of a match that says something else was
    passed over in silence (the first was kept); the same line twice is one match."""
    config = TournamentConfig(["random", "greedy"], FAST, matches=2)
    run_tournament(config, tmp_path, progress=False)
    path = tmp_path / MATCHES_FILE
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines) + lines[0])
    assert len(run_tournament(config, tmp_path, progress=False).records) == 2
    other = json.loads(lines[0])
    other["duration_s"] += 1.0  # another run of the match (a line a match can end with)
    path.write_text("".join(lines) + json.dumps(other) + "\n")
    with pytest.raises(TournamentDirError, match=re.escape(
            f"matches.jsonl:3 is a second record of match {other['key']!r}, unlike the first "
            "(line 1)")):
        run_tournament(config, tmp_path, progress=False)


def test_results_without_their_config_say_every_way_on(tmp_path, capsys):
    """A run folder whose config.json was deleted was answered with "use another --out" only,
    though ``--overwrite`` starts afresh there."""
    args = ["--agents", "random", "greedy", "--matches", "2", "--target-score", "40", "--out",
            str(tmp_path), "--quiet", "--no-plots"]
    assert main(args) == 0
    (tmp_path / "config.json").unlink()
    capsys.readouterr()
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "but no config.json" in err and "--overwrite" in err
    assert "another output folder" in err
    assert main([*args, "--overwrite"]) == 0


@pytest.mark.parametrize("spec", ["ppo:{p}", "guided:sims=2,policy={p}"])
def test_a_tournament_is_not_resumed_with_a_replaced_policy_file(tmp_path, capsys, spec):
    """A tournament stopped, its ``ppo:p.npz`` replaced by another policy, then resumed: the
    new policy's matches were added to the old one's under the same name, two players mixed
    in one row, without a word (neither config.json nor run.json knew the file)."""
    from agents.ppo import random_policy_npz

    rules = RuleConfig(target_score=20)
    policy = tmp_path / "p.npz"
    random_policy_npz(policy, rules, hidden=(8,), seed=1)
    agents = [spec.format(p=policy), "greedy"]
    out = tmp_path / "run"
    config = TournamentConfig(agents, rules, matches=2)
    run_tournament(config, out, progress=False)
    stored = json.loads((out / "config.json").read_text())["agent_files"]
    assert list(stored) == [str(policy)]
    lines = (out / MATCHES_FILE).read_text().splitlines(keepends=True)
    (out / MATCHES_FILE).write_text(lines[0])  # stopped after its first match
    random_policy_npz(policy, rules, hidden=(8,), seed=2)
    with pytest.raises(TournamentDirError, match=re.escape(f"agents read {str(policy)!r}, and "
                                                           "that file changed")):
        run_tournament(config, out, progress=False)
    random_policy_npz(policy, rules, hidden=(8,), seed=1)  # put back: it resumes
    assert run_tournament(config, out, progress=False).played == len(lines) - 1


@pytest.mark.parametrize("program", ["tournament", "make_dataset"])
def test_an_interruption_before_any_match_points_at_no_saved_match(tmp_path, capsys,
                                                                   monkeypatch, program):
    """An agent's module that raised KeyboardInterrupt when imported: the run said "finished
    matches are saved in OUT; run the same command again" though no match had finished (and
    no folder was made)."""
    import importlib

    (tmp_path / "kbmod_stop.py").write_text("raise KeyboardInterrupt\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    command = importlib.import_module(f"experiments.{program}").main
    out = tmp_path / "run"
    assert command(["--agents", "kbmod_stop:A", "greedy", "--matches", "1", "--target-score",
                    "20", "--quiet", "--out", str(out)]) == 130
    err = capsys.readouterr().err
    what = "match" if program == "tournament" else "game"
    assert err.splitlines() == [f"error: interrupted; no {what} had finished"], err


@pytest.mark.parametrize("program", ["tournament", "make_dataset", "benchmark"])
def test_an_agent_that_raises_keyboardinterrupt_itself_is_the_agents_error(tmp_path, capsys,
                                                                           monkeypatch,
                                                                           program):
    """An agent whose ``act()`` raised KeyboardInterrupt (no Ctrl-C came) was taken for a
    Ctrl-C: status 130, "interrupted before any match finished". No stop signal came, so it
    is the agent's error: one line naming it, status 2."""
    import importlib

    (tmp_path / "kbmod_act.py").write_text(
        "from agents.base import Agent\n"
        "class KB(Agent):\n"
        "    def act(self, view):\n"
        "        raise KeyboardInterrupt\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    command = importlib.import_module(f"experiments.{program}").main
    argv = (["kbmod_act:KB", "--panel", "greedy", "--tables", "2p", "--no-plot",
             "--no-progress"] if program == "benchmark" else
            ["--agents", "kbmod_act:KB", "greedy", "--quiet"])
    assert command([*argv, "--matches", "1", "--target-score", "20",
                    "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("error: agent 'kbmod_act:KB' at seat"), err
    assert "raised KeyboardInterrupt in act()" in err[0], err


def test_a_run_folder_removed_mid_run_is_not_said_to_keep_its_matches(tmp_path, monkeypatch):
    """Its error line said "matches already finished there are kept" with nothing there."""
    import shutil

    import agents.tournament.runner as runner

    config = TournamentConfig(["random", "greedy"], FAST, matches=2)
    out = tmp_path / "run"

    def removed(*args, **kwargs):
        shutil.rmtree(out)
        raise FileNotFoundError(2, "No such file or directory", str(out / MATCHES_FILE))

    monkeypatch.setattr(runner, "_run_in_dir", removed)
    with pytest.raises(TournamentDirError, match="no finished match is kept there"):
        run_tournament(config, out, progress=False)


# -- refusing another tournament's directory ------------------------------------------------------
def test_mismatched_arguments_on_an_existing_dir_are_refused(tmp_path, capsys):
    base = ["--agents", "random", "greedy", "--matches", "2", "--target-score", "40",
            "--out", str(tmp_path), "--quiet", "--no-plots"]  # fmt: skip
    assert main(base) == 0
    before = (tmp_path / MATCHES_FILE).read_text()
    capsys.readouterr()
    assert main([*base, "--seed", "9"]) == 2
    err = capsys.readouterr().err
    assert "different arguments (seed: 0 there, 9 now)" in err and "another --out" in err
    assert main([*base[:-2], "--target-score", "50", "--no-plots", "--quiet"]) == 2
    assert "rules.target_score: 40 there, 50 now" in capsys.readouterr().err
    config = TournamentConfig(["random", "greedy"], RuleConfig(target_score=40), matches=3)
    with pytest.raises(TournamentDirError, match="matches: 2 there, 3 now"):
        run_tournament(config, tmp_path, progress=False)
    assert (tmp_path / MATCHES_FILE).read_text() == before  # nothing written
    assert main([*base, "--workers", "2"]) == 0  # workers do not change results: accepted


def test_bad_arguments_are_refused_before_any_play(tmp_path, capsys):
    assert main(["--agents", "random", "nonsense", "--out", str(tmp_path / "a"), "--quiet"]) == 2
    assert "unknown agent spec 'nonsense'" in capsys.readouterr().err
    assert not (tmp_path / "a" / MATCHES_FILE).exists()
    assert main(["--agents", "random", "greedy", "--players", "3", "--partnerships"]) == 2
    assert capsys.readouterr().err == ("error: partnerships=True is not allowed with "
                                       "num_players=3; partnerships need exactly 4 players\n")
    with pytest.raises(SystemExit):
        main(["--agents", "random", "greedy", "--spinner", "sideways"])
    with pytest.raises(ValueError, match="workers=0"):
        run_tournament(TournamentConfig(["random", "greedy"]), tmp_path / "b", workers=0)
    with pytest.raises(ValueError, match="backend='mpi'"):
        run_tournament(TournamentConfig(["random", "greedy"]), tmp_path / "b", backend="mpi")


def test_default_out_names_the_arguments():
    a = TournamentConfig(["random", "greedy"], matches=10)
    assert default_out(a) == default_out(TournamentConfig(["random", "greedy"], matches=10))
    assert default_out(a) != default_out(TournamentConfig(["random", "greedy"], matches=11))
    assert default_out(a).startswith("results/tournament-")


# -- end to end, every format -----------------------------------------------------------------
@pytest.mark.parametrize(
    "options, fmt, pairs, total",
    [
        (["--players", "2"], "head_to_head", 3, 12),
        (["--players", "4"], "partnerships", 3, 12),
        (["--players", "3"], "free_for_all", 3, 3),
        (["--players", "4", "--no-partnerships"], "free_for_all", 3, 12),
    ],
)
def test_end_to_end_each_format(tmp_path, capsys, options, fmt, pairs, total):
    agents = ["random", "greedy", "tests.tournament_agents:FirstLegalAgent"]
    argv = ["--agents", *agents, *options, "--matches", "3", "--target-score", "50",
            "--out", str(tmp_path), "--quiet", "--seed", "2"]  # fmt: skip
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "agents, best rated first" in printed and "greedy" in printed
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["format"] == fmt and summary["complete"]
    assert summary["total_matches"] == summary["finished_matches"] == total
    assert len(summary["pairs"]) == pairs
    for p in summary["pairs"]:
        assert set(p) >= {"a", "b", "matches", "a_wins", "b_wins", "draws", "a_win_rate",
                          "a_win_rate_ci95"}  # fmt: skip
        assert p["a_wins"] + p["b_wins"] + p["draws"] == p["matches"] > 0
        lo, hi = p["a_win_rate_ci95"]
        assert 0 <= lo <= p["a_win_rate"] <= hi <= 1
    for a in agents:
        assert summary["points_per_hand"][a] > 0
        r = summary["ratings"][a]
        assert r["ci95"][0] < r["mu"] < r["ci95"][1] and r["sigma"] > 0
    if fmt == "free_for_all":
        assert sum(t["matches"] for t in summary["tables"]) == total
    for name in ("winrate_heatmap.png", "ratings.png", "config.json"):
        assert (tmp_path / name).stat().st_size > 0
    recs = match_records(tmp_path)
    for rec in recs.values():
        assert set(rec) >= {"seed", "seats", "scores", "winner", "winner_agent", "hands", "plays"}


def test_demo_runs_and_prints_the_table(tmp_path, capsys):
    from experiments import demo

    assert demo.demo_agents()[:2] == ["random", "greedy"]
    (tmp_path / MATCHES_FILE).write_text("left over from an older demo\n")
    argv = ["--matches", "2", "--target-score", "30", "--workers", "1", "--out", str(tmp_path)]
    # an older demo is replaced only with --overwrite (a demo resumes as its tournament does,
    # and a folder without the run's config.json cannot be resumed)
    assert demo.main(argv) == 2
    assert "with overwrite=True (--overwrite)" in capsys.readouterr().err
    assert (tmp_path / MATCHES_FILE).read_text() == "left over from an older demo\n"
    assert demo.main([*argv, "--overwrite"]) == 0
    assert "agents, best rated first" in capsys.readouterr().out
    n = len(demo.demo_agents())
    assert len(match_records(tmp_path)) == 2 * n * (n - 1) // 2  # 2 matches per pair


@pytest.mark.parametrize("program", ["experiments.demo", "experiments.tournament"])
def test_demo_and_tournament_share_the_librarys_schedule_count_outputs_and_stop_note(
        program, tmp_path, monkeypatch, capsys):
    """The demo restated the tournament command's definitions (``BYTES_PER_MATCH = 2048`` "as
    experiments.tournament counts", its outputs, its Ctrl-C words), and the command kept a
    ``machine_memory`` wrapper nothing called: both programs now read the one definition of
    each in the library (:mod:`agents.tournament`)."""
    import importlib

    from agents.tournament import results_dir, schedule
    from dominoes_env.cli_support import memory

    module = importlib.import_module("experiments.tournament.cli" if program.endswith(
        "tournament") else program)
    assert module.OUTPUTS is results_dir.RUN_OUTPUTS
    assert module.interrupted_note is results_dir.interrupted_note
    assert not hasattr(module, "machine_memory") and not hasattr(module, "BYTES_PER_MATCH")
    # the memory a match is counted to take is the library's: raising it there refuses the run
    monkeypatch.setattr(memory, "machine_memory", lambda: 2**30)
    monkeypatch.setattr(schedule, "BYTES_PER_MATCH", 2**30)
    argv = ["--matches", "2", "--target-score", "30", "--out", str(tmp_path / "run")]
    if program == "experiments.tournament":
        argv = ["--agents", "random", "greedy", *argv]
    with pytest.raises(SystemExit) if program == "experiments.demo" else contextlib.nullcontext():
        assert importlib.import_module(program).main(argv) == 2
    err = capsys.readouterr().err
    assert "--matches 2 needs about " in err and " matches); this machine has 1 GiB" in err, err
    assert not (tmp_path / "run").exists()


def test_an_interrupted_tournament_says_what_it_kept(tmp_path):
    from agents.tournament.results_dir import interrupted_note

    assert interrupted_note(tmp_path) == "no match had finished"
    (tmp_path / MATCHES_FILE).write_text("")
    assert interrupted_note(tmp_path) == "no match had finished"
    (tmp_path / MATCHES_FILE).write_text("{}\n")
    assert interrupted_note(tmp_path) == (f"finished matches are saved in {tmp_path}; run the "
                                          "same command again to play the rest")


def test_the_demo_refuses_an_empty_out_in_the_output_policys_words(tmp_path, capsys):
    from experiments import demo

    with pytest.raises(SystemExit) as ended:
        demo.main(["--matches", "2", "--out", " "])
    assert ended.value.code == 2
    assert "--out is empty; name the run's folder" in capsys.readouterr().err


def test_a_closed_output_is_one_line_and_status_2_and_the_results_are_kept(tmp_path):
    # rich's console used to exit with status 1 and no word when nobody read the table
    import os
    import subprocess
    import sys

    read, write = os.pipe()
    os.close(read)  # nobody reads the output: printing the table fails with EPIPE
    proc = subprocess.Popen(
        [sys.executable, "-m", "experiments.tournament", "--agents", "random", "greedy",
         "--matches", "2", "--target-score", "30", "--no-plots", "--quiet",
         "--out", str(tmp_path / "run")],
        cwd=Path(__file__).parents[1], stdout=write, stderr=subprocess.PIPE, text=True)
    os.close(write)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 2 and "Traceback" not in err, err
    assert err.strip().splitlines()[-1].startswith("error: standard output was closed"), err
    assert (tmp_path / "run" / MATCHES_FILE).read_text().count("\n") == 2


@pytest.mark.parametrize("writer", ["run_tournament", "build_dataset"])
@pytest.mark.parametrize("own_folder", [True, False])
def test_a_writer_of_the_api_into_a_file_names_no_flag(tmp_path, writer, own_folder):
    """``run_tournament`` or ``build_dataset`` called from Python with ``out`` a regular file
    said "--out '...' is a file, not a directory": a flag its caller never typed. The refusal
    is a ``ValueError`` naming the path and no flag, whether the writer checks its folder
    itself or a caller did (``before_writing``), and the file is left as it was."""
    from agents.datasets import build_dataset

    out = tmp_path / "results"
    out.write_text("not a folder")
    config = TournamentConfig(["random", "greedy"], RuleConfig(target_score=20), matches=1)
    kwargs = {} if own_folder else {"before_writing": lambda: None}
    write = run_tournament if writer == "run_tournament" else build_dataset
    with pytest.raises(ValueError) as refused:
        write(config, out, progress=False, **kwargs)
    message = str(refused.value)
    assert "--out" not in message and repr(str(out)) in message, message
    assert "is a file, not a folder" in message, message
    assert out.read_text() == "not a folder"


@pytest.mark.timeout(60)
@pytest.mark.parametrize("matches", [10**7 + 1, 10**9, 10**12])
def test_a_config_of_more_matches_than_max_matches_is_refused(matches):
    """The schedule is built whole: 10**12 matches ran for ever, 10**9 ended in MemoryError."""
    with pytest.raises(ValueError, match=r"^matches=\d+ is out of range; allowed: 1\.\.10000000$"):
        TournamentConfig(["random", "greedy"], matches=matches)
    assert TournamentConfig(["random", "greedy"], matches=MAX_MATCHES).matches == MAX_MATCHES


@pytest.mark.timeout(60)
def test_a_config_of_more_than_max_matches_in_all_its_pairings_is_refused(tmp_path):
    """``matches`` per pairing was bounded, the pairings together not: 5 agents at four
    players with 10**7 each asked .schedule() for some 45 GB; a forged config.json too."""
    agents = ["random", "greedy", "search", "ppo", "best"]
    free_for_all = RuleConfig(num_players=4, partnerships=False)
    message = r"^matches=10000000 at each of the 5 tables of these 5 agents schedules 50,000,000"
    with pytest.raises(ValueError, match=message):
        TournamentConfig(agents, free_for_all, matches=MAX_MATCHES)
    with pytest.raises(ValueError, match=r"at each of the 3 pairings .* schedules 30,000,000"):
        TournamentConfig(agents[:3], matches=MAX_MATCHES)
    folder = tmp_path / "forged"
    folder.mkdir()
    config = TournamentConfig(agents, free_for_all, matches=2).to_dict()
    (folder / "config.json").write_text(json.dumps({**config, "matches": MAX_MATCHES}))
    from agents.tournament.paired import read_run

    with pytest.raises(TournamentDirError, match="schedules 50,000,000 matches"):
        read_run(folder)


def test_a_move_timeout_past_play_match_s_bound_is_refused_before_the_folder_is_written(
        tmp_path):
    """``move_timeout=1e9`` was refused by play_match only after run.json, config.json and
    matches.jsonl were written."""
    config = TournamentConfig(["random", "greedy"], RuleConfig(target_score=20), matches=2)
    with pytest.raises(ValueError, match=r"^move_timeout=1000000000\.0 is out of range; "
                                         r"allowed: > 0 and <= 86400\.0$"):
        run_tournament(config, tmp_path / "out", move_timeout=1e9, progress=False)
    assert not (tmp_path / "out").exists()


@pytest.mark.timeout(60)
@pytest.mark.parametrize("program", ["experiments.tournament", "experiments.make_dataset"])
def test_the_memory_check_counts_the_schedule_without_listing_its_tables(
        tmp_path, monkeypatch, capsys, program):
    """The memory check listed every table (``len(tables_for(...))``: 300 agents at four
    players were 3.3e8 tables, a MemoryError traceback), and counted ``matches`` a table where
    a free-for-all table plays whole deals of 4 rotations: 88 agents with ``--matches 1`` were
    said to need 2,331,890 matches, not the 9,327,560 they schedule."""
    import importlib

    from agents.tournament import schedule
    from dominoes_env.cli_support import memory

    module = importlib.import_module(program)
    module = importlib.import_module("experiments.tournament.cli") if program.endswith(
        "tournament") else module

    def listed(*args):
        raise AssertionError("the tables were listed")

    for owner in (schedule, module):
        monkeypatch.setattr(owner, "tables_for", listed, raising=False)
    monkeypatch.setattr(memory, "machine_memory", lambda: 2**30)
    agents = [f"search:sims={i}" for i in range(1, 89)]
    argv = ["--agents", *agents, "--players", "4", "--no-partnerships", "--matches", "1",
            "--out", str(tmp_path / "out"), "--quiet"]
    with contextlib.suppress(SystemExit):  # make_dataset's parser.error exits
        assert module.main(argv) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("error: ") and "(9,327,560 matches); this machine has 1 GiB" in line
    assert not (tmp_path / "out").exists()


def test_a_huge_matches_file_is_refused_on_resume(tmp_path, capsys):
    """A 40 GB (sparse) matches.jsonl was read whole when the run was resumed: a MemoryError
    traceback. It is refused in one line, and left as it is."""
    argv = ["--agents", "random", "greedy", "--matches", "2", "--target-score", "20", "--quiet",
            "--no-plots", "--out", str(tmp_path / "run")]
    assert main(argv) == 0
    capsys.readouterr()
    path = tmp_path / "run" / MATCHES_FILE
    os.truncate(path, 40 << 30)
    assert main(argv) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line == (f"error: {path} is 42,949,672,960 bytes; a tournament of 2 matches writes "
                    "at most 2,097,152 (MAX_LINE_BYTES a match): it is no matches file of this "
                    "run; remove it, or use another output folder")
    assert path.stat().st_size == 40 << 30


def test_a_line_longer_than_max_line_bytes_is_refused(tmp_path):
    from agents.tournament.runner import MAX_LINE_BYTES

    config = TournamentConfig(["random", "greedy"], RuleConfig(target_score=20), matches=2)
    run_tournament(config, tmp_path, progress=False)
    with open(tmp_path / MATCHES_FILE, "ab") as f:
        f.write(b" " * (MAX_LINE_BYTES + 1) + b"\n")
    with pytest.raises(TournamentDirError, match=r"matches.jsonl:3 is longer than 1,048,576 "
                                                 "bytes, no match record"):
        run_tournament(config, tmp_path, progress=False)
