"""Every benchmark prints the machine's load average at its start and at its end
(:func:`dominoes_env.throughput.load_line`), so a figure taken on a busy machine says so."""

from __future__ import annotations

import importlib
import re

import pytest

from dominoes_env import throughput

from .helpers import PROGRAM_NEEDS, discover_programs, skip_unless_installed

#: each benchmark at its smallest size (bench_training runs in tests/jax/test_train_jax.py)
TINY = {"experiments.bench_engine": ["--seconds", "0.01", "--repeats", "1"],
        "experiments.bench_env": ["--seconds", "0.01", "--repeats", "1"],
        "experiments.bench_agents": ["random", "--positions", "2"],
        "experiments.bench_jax": ["--batches", "1", "--steps", "1", "--seconds", "0.01",
                                  "--repeats", "1"],
        "experiments.bench_jax_observe": ["--configs", "double-six-2p", "--batch", "1",
                                          "--repeats", "1"],
        "experiments.bench_jax_pieces": ["--batch", "1", "--repeats", "1", "--calls", "1"]}
LINE = re.compile(r"load average at (start|end) \(1, 5, 15 min\): \d+\.\d\d, \d+\.\d\d, "
                  r"\d+\.\d\d on \d+ CPUs")


def test_every_benchmark_program_is_covered():
    benches = {p for p in discover_programs() if p.startswith("experiments.bench_")}
    assert benches == {*TINY, "experiments.bench_training"}


@pytest.mark.parametrize("program", [  # each runs here: the JAX ones in the JAX session
    pytest.param(p, marks=[pytest.mark.jax] if PROGRAM_NEEDS.get(p) == "jax" else [])
    for p in sorted(TINY)])
def test_a_benchmark_prints_the_load_average_first_and_last(program, capsys):
    if program in PROGRAM_NEEDS:
        skip_unless_installed(PROGRAM_NEEDS[program])
    if program == "experiments.bench_engine":
        pytest.importorskip("rich")
    status = importlib.import_module(program).main(TINY[program])
    assert status in (0, None) or isinstance(status, list)
    lines = capsys.readouterr().out.strip().splitlines()
    assert [LINE.fullmatch(lines[0]) and LINE.fullmatch(lines[0])[1],
            LINE.fullmatch(lines[-1]) and LINE.fullmatch(lines[-1])[1]] == ["start", "end"], lines


def test_load_line_reads_the_system_and_says_when_it_has_none(monkeypatch):
    monkeypatch.setattr(throughput.os, "getloadavg", lambda: (1.234, 0.5, 0.0))
    monkeypatch.setattr(throughput.os, "cpu_count", lambda: 2)
    assert throughput.load_average() == [1.23, 0.5, 0.0]
    assert throughput.load_line("start") == \
        "load average at start (1, 5, 15 min): 1.23, 0.50, 0.00 on 2 CPUs"

    def unavailable():
        raise OSError("no load average here")

    monkeypatch.setattr(throughput.os, "getloadavg", unavailable)
    assert throughput.load_average() is None
    assert throughput.load_line("end") == "load average at end: not available on this system " \
                                         "(2 CPUs)"


def test_the_benchmark_card_prints_the_load_average_first_and_last(tmp_path, capsys):
    """``python -m experiments.benchmark`` is a benchmark too (its card's decision times): its
    table between the two load lines (it printed the table alone, and its card.json keeps
    only the load at the end)."""
    pytest.importorskip("rich")
    from experiments import benchmark

    assert benchmark.main(["greedy", "--panel", "random", "--tables", "2p", "--matches", "2",
                           "--target-score", "30", "--out", str(tmp_path / "card"),
                           "--no-progress", "--no-plot"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert [LINE.fullmatch(lines[0]) and LINE.fullmatch(lines[0])[1],
            LINE.fullmatch(lines[-1]) and LINE.fullmatch(lines[-1])[1]] == ["start", "end"], lines
    assert any("benchmark card: greedy" in line for line in lines[1:-1])
