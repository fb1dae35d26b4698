"""``experiments.decision_quality``: agents judged against a larger search on the same positions."""

from __future__ import annotations

import pytest

from agents.greedy import GreedyAgent
from agents.positions import positions
from agents.search import distinct_moves
from dominoes_env.core import RuleConfig
from experiments import decision_quality


def test_the_oracle_judged_by_itself_has_no_regret():
    """The oracle's own choice is its best mean: the same spec and seed agrees every time."""
    views = positions(RuleConfig(), 40, seed=2)
    oracle, _ = decision_quality.decide("search:sims=40", views, seed=1000)
    among = [i for i, v in enumerate(views) if len(distinct_moves(v)) > 1]
    assert len(among) > 10
    row = decision_quality.score(oracle, [oracle[i][0] for i in among], among)
    assert row == {"positions": len(among), "regret": 0.0, "regret_se": 0.0, "agree": 1.0}


def test_a_worse_player_has_more_regret():
    """Against a search of 400 rollouts, random moves lose more than a search of 100."""
    views = positions(RuleConfig(), 60, seed=3)
    rows = decision_quality.run(["search:sims=100", "random"], "search:sims=400", views,
                                repeats=2, seed=0)
    search, rand = rows
    assert search["positions"] == rand["positions"] > 20
    assert rand["regret"] > search["regret"] + 2 * (rand["regret_se"] + search["regret_se"])
    assert search["agree"] > rand["agree"]


def test_the_command_prints_one_row_per_agent(capsys):
    rows = decision_quality.main(["greedy", "random", "--oracle", "search:sims=20",
                                  "--positions", "20", "--repeats", "1"])
    out = capsys.readouterr().out
    assert [r["spec"] for r in rows] == ["greedy", "random"] and "agree" in out


class CountingGreedy(GreedyAgent):
    """Greedy, counting its decisions: an oracle that reports no move's value."""

    calls = 0

    def act(self, view):
        CountingGreedy.calls += 1
        return super().act(view)


def test_an_oracle_without_move_values_is_refused():
    views = positions(RuleConfig(), 10, seed=1)
    with pytest.raises(ValueError, match="last_values"):
        decision_quality.run(["random"], "greedy", views, repeats=1, seed=0)


def test_an_oracle_without_move_values_is_refused_at_its_first_choice(capsys):
    """``--oracle ismcts:sims=2000`` (no ``last_values``) was refused only once it had decided
    every position: 44 s for 20 positions, 11 minutes with the default 300. It is refused at
    the first position with a choice, before any more search."""
    spec = "tests.test_decision_quality:CountingGreedy"
    views = positions(RuleConfig(), 40, seed=1)
    first = next(i for i, v in enumerate(views) if len(distinct_moves(v)) > 1)
    assert first < 10
    CountingGreedy.calls = 0
    with pytest.raises(ValueError, match="last_values"):
        decision_quality.run(["random"], spec, views, repeats=1, seed=0)
    assert CountingGreedy.calls == first + 1
    CountingGreedy.calls = 0
    with pytest.raises(SystemExit) as err:
        decision_quality.main(["greedy", "--oracle", spec, "--positions", "40", "--repeats", "1"])
    assert err.value.code == 2 and 1 <= CountingGreedy.calls < 10
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "does not report a value for every distinct move (last_values)" in line, line


@pytest.mark.parametrize("program, argv", [
    ("decision_quality", ["greedy", "greedy", "--oracle", "search:sims=4", "--positions", "2"]),
    ("bench_agents", ["random", "greedy", "random", "--positions", "2"]),
])
def test_a_spec_given_twice_is_one_line_and_exit_2(program, argv, capsys):
    """``decision_quality greedy greedy`` and ``bench_agents random random`` took the same spec
    twice and printed two rows told apart by nothing (``benchmark --panel`` and the tournament
    refuse it)."""
    import importlib

    with pytest.raises(SystemExit) as err:
        importlib.import_module(f"experiments.{program}").main(argv)
    assert err.value.code == 2
    twice = "greedy" if program == "decision_quality" else "random"
    assert capsys.readouterr().err.strip().splitlines() == [
        f"error: python -m experiments.{program}: agent spec(s) given twice: {twice}; list "
        f"each agent once (see python -m experiments.{program} --help)"]


def test_ctrl_c_prints_the_agents_judged_so_far(capsys, monkeypatch):
    """Ctrl-C threw away every agent already judged ('error: interrupted', no table), and
    nothing showed how far the work was (no progress at all for minutes): the finished rows
    are printed before the runner's line, and every decision ticks the progress bar."""
    views = positions(RuleConfig(), 6, seed=1)
    ticks = []
    rows = decision_quality.run(["greedy", "random"], "search:sims=10", views, repeats=2,
                                seed=0, tick=lambda: ticks.append(1))
    assert len(ticks) == len(views) * (1 + 2 * 2) and len(rows) == 2
    real = decision_quality.decide

    def stop_at_random(spec, views, seed, **kwargs):
        if spec == "random":
            raise KeyboardInterrupt
        return real(spec, views, seed, **kwargs)

    monkeypatch.setattr(decision_quality, "decide", stop_at_random)
    with pytest.raises(SystemExit) as err:
        decision_quality.main(["greedy", "random", "--oracle", "search:sims=10",
                               "--positions", "6", "--repeats", "1"])
    captured = capsys.readouterr()
    assert err.value.code == 130 and "error: interrupted" in captured.err
    assert "(interrupted: 1 of 2 agents judged)" in captured.out
    assert "greedy" in captured.out and "\nrandom" not in captured.out, captured.out


@pytest.mark.parametrize("stop_in, says", [
    ("search:sims=10", "the oracle had decided 4 of 6 positions and no agent was judged yet "
                       "(fewer --positions, or a smaller --oracle, end sooner)"),
    ("random", "1 of 2 agents judged (the table above); random had made 4 of its 6 decisions"),
])
def test_ctrl_c_says_how_far_the_run_had_come(capsys, monkeypatch, stop_in, says):
    """A Ctrl-C while the oracle decided (minutes with the defaults) said only "error:
    interrupted": nothing of the time spent was reported. The stop's one line says how far the
    work had come."""
    real = decision_quality.decide

    def stop_after_four(spec, views, seed, **kwargs):
        if spec != stop_in:
            return real(spec, views, seed, **kwargs)
        for made, _ in enumerate(views):  # a view taken after another: that one is decided
            if made == 4:
                raise KeyboardInterrupt

    monkeypatch.setattr(decision_quality, "decide", stop_after_four)
    with pytest.raises(SystemExit) as err:
        decision_quality.main(["greedy", "random", "--oracle", "search:sims=10",
                               "--positions", "6", "--repeats", "1"])
    assert err.value.code == 130
    assert capsys.readouterr().err == f"error: interrupted; {says}\n"
