"""``experiments.bench_agents``: every agent times every position, interleaved."""

from __future__ import annotations

import time

import pytest

from agents import positions
from agents.search import distinct_moves
from dominoes_env.core import RuleConfig
from experiments import bench_agents


def test_every_agent_decides_every_position_in_alternating_order(monkeypatch):
    views = positions.positions(RuleConfig(), 6, seed=1)
    calls = []
    real = positions.make_agent

    def spy(spec, seed=None):
        agent = real(spec, seed=seed)
        act = agent.act
        agent.act = lambda view: calls.append((spec, len(view.history))) or act(view)
        return agent

    monkeypatch.setattr(positions, "make_agent", spy)
    rows = bench_agents.bench(["random", "greedy"], views)
    assert [r["spec"] for r in rows] == ["random", "greedy"]
    assert [r["decisions"] for r in rows] == [6, 6]
    # the ratio is each spec's mean time over the first spec's (times differ run to run, the
    # relation does not)
    assert rows[0]["ratio"] == 1.0 and rows[1]["ratio"] == rows[1]["mean_ms"] / rows[0]["mean_ms"]
    # first one untimed decision per spec (warm_up), then the timed ones
    assert [spec for spec, _ in calls] == ["random", "greedy"] + ["random", "greedy",
                                                                  "greedy", "random"] * 3
    assert calls[2][1] == calls[3][1]  # both agents see the same position, one after the other


def test_what_a_process_builds_once_is_not_charged_to_the_first_decision(monkeypatch):
    # an agent whose first decision in the process builds a table for 0.3 s (as guided's match
    # equity table): the warm-up builds it, so no timed decision takes that long
    built = []
    real = positions.make_agent

    def slow_once(spec, seed=None):
        agent = real(spec, seed=seed)
        act = agent.act

        def first_builds(view):
            if not built:
                built.append(time.sleep(0.3))
            return act(view)

        agent.act = first_builds
        return agent

    monkeypatch.setattr(positions, "make_agent", slow_once)
    rows = bench_agents.bench(["greedy"], positions.positions(RuleConfig(), 4, seed=3))
    assert built and rows[0]["max_ms"] < 150


def test_the_warm_up_decides_a_position_with_a_choice(monkeypatch):
    views = positions.positions(RuleConfig(), 15, seed=1)[12:]  # one move, one move, two
    seen = []
    real = positions.make_agent

    def spy(spec, seed=None):
        agent = real(spec, seed=seed)
        act = agent.act
        agent.act = lambda view: seen.append(view) or act(view)
        return agent

    monkeypatch.setattr(positions, "make_agent", spy)
    bench_agents.warm_up(["greedy"], views)
    assert [len(distinct_moves(v)) for v in views] == [1, 1, 2]
    assert seen == [views[2]]


def test_the_command_prints_one_row_per_agent(capsys):
    rows = bench_agents.main(["random", "greedy", "--positions", "4"])
    out = capsys.readouterr().out
    assert len(rows) == 2 and "x first" in out and "interleaved" in out


def test_the_positions_can_be_four_players_without_partnerships(monkeypatch, capsys):
    seen = []
    real = bench_agents.bench
    monkeypatch.setattr(bench_agents, "bench",
                        lambda specs, views, seed=0: seen.extend(views) or real(specs, views, seed))
    bench_agents.main(["greedy", "--players", "4", "--no-partnerships", "--positions", "3"])
    assert len(seen) == 3 and {v.rules for v in seen} == {RuleConfig(num_players=4,
                                                                     partnerships=False)}
    seen.clear()
    bench_agents.main(["greedy", "--players", "4", "--positions", "3"])  # the default: partners
    assert {v.rules.partnerships for v in seen} == {True}


@pytest.mark.parametrize(("flags", "says"), [
    (["--players", "3", "--partnerships"], "partnerships=True is not allowed with num_players=3"),
    (["--positions", "0"], "--positions must be >= 1, not 0"),
    (["--players", "2", "search:sims=0"], "sims"),
])
def test_a_bad_table_is_one_line_and_nothing_on_stdout(capsys, flags, says):
    """Refused before the first line: the load average went to stdout before the refusal."""
    with pytest.raises(SystemExit) as err:
        bench_agents.main(["greedy", *flags])
    assert err.value.code == 2
    out, err_text = capsys.readouterr()
    assert says in err_text and out == ""


def test_cpu_ms_is_the_processor_time_each_decision_took(monkeypatch):
    # a processor clock that advances 3 ms per reading: every decision reads it twice
    ticks = iter(range(10**6))
    monkeypatch.setattr(bench_agents.time, "process_time", lambda: 0.003 * next(ticks))
    rows = bench_agents.bench(["random", "greedy"], positions.positions(RuleConfig(), 4, seed=2))
    assert [round(r["cpu_ms"], 9) for r in rows] == [3.0, 3.0]
