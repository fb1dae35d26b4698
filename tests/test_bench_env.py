"""The environment benchmark script runs and prints its table (figures are not checked here:
speed claims live in the script's output, not in timed tests)."""

from experiments import bench_env


def test_bench_env_prints_a_table(capsys):
    assert bench_env.main(["--seconds", "0.02", "--repeats", "1"]) == 0
    out = capsys.readouterr().out
    assert "straight_dominoes 2p" in out and "straight_dominoes 4p" in out
    assert "steps/s" in out


def test_run_aec_counts_decisions():
    import dominoes_env

    assert bench_env.run_aec(lambda: dominoes_env.env(num_players=3), 0.02) > 0
