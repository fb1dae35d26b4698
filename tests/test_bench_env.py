"""The environment benchmark script runs and prints its table (figures are not checked here:
speed claims live in the script's output, not in timed tests)."""

from dominoes_env import throughput
from experiments import bench_env


def test_bench_env_prints_a_table(capsys):
    assert bench_env.main(["--seconds", "0.02", "--repeats", "1"]) == 0
    out = capsys.readouterr().out
    assert "straight_dominoes 2p" in out and "straight_dominoes 4p" in out
    assert "steps/s" in out


def test_run_aec_counts_each_decision_once(monkeypatch):
    """A clock that reads 0 at the start, is past the deadline after the first match and reads
    2 at the end: the figure is that match's plays over 2 seconds. Forced draws and passes
    happen inside ``step`` and the finished seats' closing ``step(None)`` decides nothing, so
    neither counts."""
    import dominoes_env

    made = []

    def make():
        made.append(dominoes_env.env(num_players=3))
        return made[-1]

    ticks = iter([0.0, 1.0, 2.0])
    monkeypatch.setattr(throughput, "clock", lambda: next(ticks))
    rate = throughput.run_aec(make, 0.5)
    match = made[0].unwrapped.match
    assert match.winner is not None  # one whole match was played
    hands = match.finished_hands + ([] if match.hand in match.finished_hands else [match.hand])
    plays = sum(len(hand.moves) for hand in hands)
    events = sum(len(hand.history) for hand in hands)
    assert events > plays > 0  # there were draws or passes not to count
    assert rate == plays / 2
