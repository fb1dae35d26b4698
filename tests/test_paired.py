"""``agents.tournament.paired`` and ``python -m experiments.paired``: two agents compared match
by match on the same deals (a sign test over the matches only one of them won)."""

from __future__ import annotations

import json
import math
import os

import pytest

from agents.tournament import RuleConfig, TournamentConfig, TournamentDirError, run_tournament
from agents.tournament.paired import (
    EXACT_UP_TO,
    FinishedRun,
    compare_runs,
    format_comparison,
    read_run,
    sign_test_p,
)
from agents.tournament.runner import MATCHES_FILE
from experiments import paired as program

RULES = RuleConfig(target_score=30)


def _refused(capsys, argv: list[str]) -> str:
    """The one error line ``python -m experiments.paired ARGV`` ends with, status 2."""
    assert program.main(argv) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("error: "), line
    return line


def synthetic(agents, outcomes, rules=RULES, seed=0, folder="run"):
    """A run of ``agents`` (the second the reference) whose match ``i`` on deal seed ``i`` ends
    as ``outcomes[i]`` says for the first agent: 1 won, 0 lost, None undecided."""
    cand, ref = agents
    records = []
    for i, won in enumerate(outcomes):
        winner = None if won is None else (cand if won else ref)
        records.append({"seed": seed * 1000 + i, "seats": [cand, ref], "winner_agent": winner})
    return FinishedRun(folder, TournamentConfig(list(agents), rules, matches=len(outcomes),
                                                seed=seed), records)


def test_only_the_matches_that_differ_decide():
    a = synthetic(["A", "ref"], [1, 1, 1, 0, 1, None], folder="a")
    b = synthetic(["B", "ref"], [1, 0, 0, 0, 1, 1], folder="b")
    result = compare_runs(a, b)
    assert result.reference == "ref" and result.agents == ("A", "B")
    assert result.matches == 6 and result.scores == (4.5, 3.0)
    # A scored more in matches 1 and 2; B in match 5 (a win against A's undecided match)
    assert result.better == (2, 1) and result.unpaired == (0, 0)
    assert result.z == pytest.approx(1 / math.sqrt(3))
    assert result.p_value == 1.0  # 2 * P(X <= 1), X ~ Bin(3, 1/2) = 2 * 4 / 8
    assert result.shares == (0.75, 0.5)
    data = result.to_dict()
    assert data["better"] == (2, 1) and data["shares"] == [0.75, 0.5]
    assert json.loads(json.dumps(data))["intervals"][0][0] < 0.75


def test_matches_of_one_run_alone_are_counted_apart():
    a = synthetic(["A", "ref"], [1, 1, 1, 1], folder="a")
    b = synthetic(["B", "ref"], [0, 0], folder="b")
    result = compare_runs(a, b)
    assert result.matches == 2 and result.better == (2, 0) and result.unpaired == (2, 0)
    text = format_comparison(result)
    assert "2 matches paired" in text and "2 unpaired" in text and "z = +1.41" in text


def test_the_sign_test_is_the_exact_binomial_tail():
    assert sign_test_p(9, 1) == 2 * 11 / 1024 == sign_test_p(1, 9)
    assert sign_test_p(0, 0) == sign_test_p(5, 5) == 1.0
    assert sign_test_p(10, 0) == 2 / 1024
    assert sign_test_p(60, 100) == 2 * sum(math.comb(160, i) for i in range(61)) / 2**160
    # beyond EXACT_UP_TO trials the normal approximation, within 1e-4 of the exact sum there
    for a, b in ((EXACT_UP_TO // 2 + 111, EXACT_UP_TO // 2 - 110),
                 (EXACT_UP_TO // 2 + 51, EXACT_UP_TO // 2 - 50)):
        assert a + b == EXACT_UP_TO + 1
        n, term, tail = a + b, 1, 1  # the tail's terms one from the next (math.comb: seconds)
        for i in range(b):
            term = term * (n - i) // (i + 1)
            tail += term
        assert sign_test_p(a, b) == pytest.approx(2 * tail / 2**n, abs=1e-4)


@pytest.mark.parametrize("change, message", [
    (dict(rules=RULES.replace(target_score=50)), "played under other rules \\(target_score"),
    (dict(seed=1), "no match on the same deal with the same seats: their --seed differ"),
    (dict(agents=["B", "other"]), "share no agent"),
    (dict(agents=["ref", "A"]), "share both agents"),
])
def test_runs_that_cannot_be_paired_are_refused_naming_why(change, message):
    a = synthetic(["A", "ref"], [1, 0], folder="a")
    b = synthetic(change.pop("agents", ["B", "ref"]), [1, 0], folder="b", **change)
    with pytest.raises(ValueError, match=message):
        compare_runs(a, b)


def test_the_reference_is_given_when_both_agents_are_shared():
    a = synthetic(["A", "ref"], [1, 0], folder="a")
    b = synthetic(["A", "ref"], [0, 0], folder="b")
    assert compare_runs(a, b, reference="ref").better == (1, 0)
    with pytest.raises(ValueError, match="reference 'nosuch' is not an agent of both runs"):
        compare_runs(a, b, reference="nosuch")
    with pytest.raises(TypeError, match="FinishedRun"):
        compare_runs(a, "b")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Two real tournaments on the same deals: greedy and search:sims=4 each against random."""
    root = tmp_path_factory.mktemp("paired")
    for name, agent in (("a", "greedy"), ("b", "search:sims=4")):
        run_tournament(TournamentConfig([agent, "random"], RULES, 4, seed=5), root / name,
                       progress=False)
    return root / "a", root / "b"


def test_real_runs_pair_every_match(runs):
    a, b = (read_run(x) for x in runs)
    assert len(a.records) == len(b.records) == 4
    result = compare_runs(a, b)
    assert result.reference == "random" and result.matches == 4
    assert result.unpaired == (0, 0)
    wins = [sum(r["winner_agent"] == agent for r in run.records)
            for run, agent in ((a, "greedy"), (b, "search:sims=4"))]
    assert result.scores == tuple(wins)


def test_the_program_prints_the_comparison(runs, capsys):
    assert program.main([str(runs[0]), str(runs[1])]) == 0
    out = capsys.readouterr().out
    assert out.startswith("4 matches paired (the same deals and seats against 'random')")
    assert "A  greedy" in out and "B  search:sims=4" in out and "sign test p =" in out
    assert program.main([str(runs[0]), str(runs[1]), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["matches"] == 4 and data["agents"] == ["greedy", "search:sims=4"]


def test_a_run_being_written_is_read_without_touching_it(runs, tmp_path):
    """A tournament's reader cut off the half-written last line it found: beside a running
    tournament, that cut the line the run was writing."""
    import shutil

    folder = tmp_path / "live"
    shutil.copytree(runs[0], folder)
    path = folder / MATCHES_FILE
    with open(path, "ab") as f:
        f.write(b'{"index": 3, "key": ')  # the run is writing this line now
    before = path.read_bytes()
    assert len(read_run(folder).records) == 4
    assert path.read_bytes() == before


@pytest.mark.parametrize("damage", ["fifo", "folder", "no config"])
def test_a_damaged_run_folder_is_one_error_line(runs, tmp_path, damage, capsys):
    import shutil

    folder = tmp_path / "damaged"
    shutil.copytree(runs[0], folder)
    if damage == "fifo":
        (folder / MATCHES_FILE).unlink()
        os.mkfifo(folder / MATCHES_FILE)  # read whole, it blocked for good
    elif damage == "folder":
        (folder / MATCHES_FILE).unlink()
        (folder / MATCHES_FILE).mkdir()
    else:
        (folder / "config.json").unlink()
    with pytest.raises(TournamentDirError, match=str(folder)):
        read_run(folder)
    line = _refused(capsys, [str(folder), str(runs[1])])
    assert str(folder) in line


def _forged(runs, tmp_path, name="forged", **config):
    """A copy of run A with its config.json changed as ``config`` says."""
    import shutil

    folder = tmp_path / name
    shutil.copytree(runs[0], folder)
    stored = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**stored, **config}))
    return folder


def _no_long_schedule(monkeypatch):
    """Make building more than a few thousand deals of a schedule fail at once."""
    from agents.tournament import schedule

    calls, seatings = [0], schedule.seatings

    def counted(*args):
        calls[0] += 1
        if calls[0] > 10_000:
            raise AssertionError("a long schedule is being built")
        return seatings(*args)

    monkeypatch.setattr(schedule, "seatings", counted)


def test_a_forged_match_count_builds_only_the_schedule_the_matches_reach(
        runs, tmp_path, monkeypatch, capsys):
    """A config.json saying ``"matches": 10000000`` (two agents: within MAX_MATCHES) built the
    whole schedule, 10**7 jobs (some 5 GB, a minute), to read four lines."""
    from dominoes_env.cli_support import MAX_MATCHES

    folder = _forged(runs, tmp_path, matches=MAX_MATCHES)
    _no_long_schedule(monkeypatch)
    run = read_run(folder)
    assert run.config.matches == MAX_MATCHES and len(run.records) == 4
    assert run.records == read_run(runs[0]).records
    assert program.main([str(folder), str(runs[1])]) == 0
    assert capsys.readouterr().out.startswith("4 matches paired")


def test_a_line_far_into_a_forged_schedule_is_refused_against_the_memory(
        runs, tmp_path, monkeypatch, capsys):
    """A line on deal 9,999,990 of such a run needs its whole schedule: refused in one line
    where it would not fit, never built."""
    from dominoes_env.cli_support import MAX_MATCHES, memory

    folder = _forged(runs, tmp_path, matches=MAX_MATCHES)
    line = json.loads((folder / MATCHES_FILE).read_text().splitlines()[0])
    line["key"] = json.dumps([9_999_990, line["seats"]], separators=(",", ":"))
    with open(folder / MATCHES_FILE, "a") as f:
        f.write(json.dumps(line) + "\n")
    _no_long_schedule(monkeypatch)
    monkeypatch.setattr(memory, "machine_memory", lambda: 2**30)
    with pytest.raises(TournamentDirError, match=r"schedule needs about 19 GiB of memory "
                                                 r"\(10,000,000 matches\); this machine has 1"):
        read_run(folder)
    error = _refused(capsys, [str(folder), str(runs[1])])
    assert "GiB of memory" in error


def test_a_run_of_many_agents_is_refused_before_its_schedule_is_counted(runs, tmp_path,
                                                                        capsys):
    """A config.json of 20,000 agents (189 KB) reached 3.8 GB and 20 s before the comparison
    said it takes two agents."""
    agents = ["random", "greedy"] + [f"search:sims={i}" for i in range(1, 19_999)]
    folder = _forged(runs, tmp_path, agents=agents, matches=1)
    error = _refused(capsys, [str(folder), str(runs[1])])
    assert "played 20,000 agents ('random', 'greedy'" in error
    assert "a paired comparison takes two tournaments of 2 agents each" in error
    with pytest.raises(TournamentDirError, match="played 3 agents"):
        read_run(_forged(runs, tmp_path, "three", agents=["greedy", "random", "search"]),
                 agents=2)


@pytest.mark.parametrize("folder", ["same", "trailing slash", "link"])
def test_a_run_compared_with_itself_is_refused(runs, tmp_path, folder, capsys):
    """``paired A A --reference random`` compared a run with itself: p = 1, and no word."""
    other = {"same": str(runs[0]), "trailing slash": str(runs[0]) + os.sep,
             "link": str(tmp_path / "link")}[folder]
    if folder == "link":
        os.symlink(runs[0], other)
    error = _refused(capsys, [str(runs[0]), other, "--reference", "random"])
    assert "are the same run" in error


def test_a_huge_matches_file_is_refused_not_read(runs, tmp_path, capsys):
    """A 40 GB (sparse) matches.jsonl was read whole: a MemoryError traceback."""
    import shutil

    folder = tmp_path / "huge"
    shutil.copytree(runs[0], folder)
    os.truncate(folder / MATCHES_FILE, 40 << 30)
    with pytest.raises(TournamentDirError, match=r"matches.jsonl is 42,949,672,960 bytes; a "
                                                 r"tournament of 4 matches writes at most "):
        read_run(folder)
    error = _refused(capsys, [str(folder), str(runs[1])])
    assert "42,949,672,960 bytes" in error


@pytest.mark.parametrize("encoding", ["utf-16", "utf-32", "utf-16-le"])
@pytest.mark.parametrize("name", ["config.json", MATCHES_FILE])
def test_a_run_file_that_is_not_utf8_is_refused(runs, tmp_path, encoding, name):
    """``json.loads`` of bytes guesses their encoding: a config.json or a matches.jsonl in
    UTF-16 or UTF-32 was read as the run, where the run marker's reader takes UTF-8 only."""
    import shutil

    folder = tmp_path / "encoded"
    shutil.copytree(runs[0], folder)
    path = folder / name
    text = path.read_text(encoding="utf-8")
    if name == MATCHES_FILE:  # each line encoded as json.loads reads it: a line at a time
        path.write_bytes(b"\n".join(line.encode(encoding) for line in text.splitlines())
                         + b"\n")
    else:
        path.write_bytes(text.encode(encoding))
    with pytest.raises(TournamentDirError, match="not a tournament's config.json|not a match "
                                                 "record"):
        read_run(folder)
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())  # a byte order mark is still taken
    assert len(read_run(folder).records) == 4
