"""``experiments.bench_agents``: every agent times every position, interleaved."""

from __future__ import annotations

from agents import positions
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
    assert [spec for spec, _ in calls] == ["random", "greedy", "greedy", "random"] * 3
    assert calls[0][1] == calls[1][1]  # both agents see the same position, one after the other


def test_the_command_prints_one_row_per_agent(capsys):
    rows = bench_agents.main(["random", "greedy", "--positions", "4"])
    out = capsys.readouterr().out
    assert len(rows) == 2 and "x first" in out and "interleaved" in out
