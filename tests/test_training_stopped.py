"""The three trainers' stopped run: one exception, :class:`~dominoes_env.cli_support.
TrainingStopped` (named fields), and one ending, :func:`~dominoes_env.cli_support.
end_stopped_training` (a line, the stop's status). Each program's ``main`` is driven with its
``train`` replaced by one that raises the exception, so every branch of each program's line is
pinned, byte for byte, for Ctrl-C (130), SIGTERM (143) and SIGHUP (129); the real stops (a
signal sent to a training process) are tested with each trainer."""

from __future__ import annotations

import pickle
import signal
import sys
from pathlib import Path

import pytest

from dominoes_env.cli_support import Stopped, TrainingStopped, end_stopped_training

from .helpers import error_lines

STOPS = {"SIGINT": (KeyboardInterrupt, 130, "interrupted"),
         "SIGTERM": (lambda: Stopped(signal.SIGTERM), 143, "stopped by SIGTERM"),
         "SIGHUP": (lambda: Stopped(signal.SIGHUP), 129, "stopped by SIGHUP")}
REFUSED = "policy file 'x/policy.npz': w0 holds NaN or infinite values"

#: each program: the module needed to run its main, flags that keep it tiny, and its line
#: (``kept``) for a run in ``out`` by the exception's fields
PROGRAMS = {
    "train_jax": ("jax", ["--num-envs", "8", "--num-steps", "4", "--num-minibatches", "2",
                          "--net", "16", "--total-steps", "64", "--no-progress"]),
    "train_ppo": ("sb3_contrib", ["--total-steps", "64", "--n-envs", "1", "--n-steps", "32",
                                  "--batch-size", "32", "--net", "8"]),
    "train_rllib": ("ray.rllib", ["--iterations", "1", "--env-runners", "0", "--net", "8",
                                  "--eval-matches", "0"]),
}


def expected_kept(program: str, out: Path, refused: str | None, nothing_saved: bool) -> str:
    """What each trainer said after the stop's words before the shared exception (its lines,
    copied from the three handlers it replaced)."""
    if program == "train_jax":
        kept = (f"saved in {str(out)!r} and its policy not exported ({refused})" if refused
                else f"saved and exported in {str(out)!r}")
        return f"the run so far is {kept} (continue with --resume {out / 'checkpoint.npz'})"
    if program == "train_ppo":
        last = out / "checkpoints" / "last.zip"
        policy = (f"its policy not exported ({refused})" if refused else
                  f"its policy exported to {out / 'policy.npz'}")
        return (f"the run is saved in {last} and {policy}: add --resume {last} to the same "
                "command to go on")
    if nothing_saved:
        return "no iteration had finished: nothing was saved"
    policy = (f"its policy not exported ({refused})" if refused else
              f"its policy exported to {out / 'policy.npz'}")
    return (f"the run is saved in {out / 'checkpoint'} (continue with --resume "
            f"{out / 'checkpoint'}) and {policy}")


# train_jax's main imports JAX: its cases run in the JAX session (conftest.py)
CASES = [pytest.param(program, stop, refused, nothing_saved,
                      marks=[pytest.mark.jax] if program == "train_jax" else [])
         for program in PROGRAMS for stop in STOPS for refused in (None, REFUSED)
         for nothing_saved in ((False, True) if program == "train_rllib" and not refused
                               else (False,))]


@pytest.mark.parametrize("program, stop, refused, nothing_saved", CASES)
def test_each_trainer_ends_a_stopped_run_with_its_line_and_the_stops_status(
        tmp_path, monkeypatch, capsys, program, stop, refused, nothing_saved):
    import importlib

    pytest.importorskip(PROGRAMS[program][0])
    module = importlib.import_module(f"experiments.{program}")
    make_stop, status, words = STOPS[stop]
    out = tmp_path / "run"

    def stopped(config, *args, **kwargs):
        raise TrainingStopped(Path(config.out), make_stop(), export_error=refused,
                              nothing_saved=nothing_saved)

    monkeypatch.setattr(module, "train", stopped)
    assert module.main([*PROGRAMS[program][1], "--out", str(out)]) == status
    assert error_lines(capsys.readouterr().err) == [
        f"error: {words}; {expected_kept(program, out, refused, nothing_saved)}"]


def test_the_programs_raise_the_one_shared_exception():
    """No program keeps a copy of its own: the name a program has is the shared class."""
    for program in ("train_ppo", "train_rllib", "train_jax"):
        source = (Path(__file__).resolve().parents[1] / "experiments" / f"{program}.py")
        text = source.read_text()
        assert "class TrainingStopped" not in text and "class Interrupted" not in text
        assert "TrainingStopped(" in text and "end_stopped_training(" in text


def test_the_exception_has_named_fields_and_survives_a_copy(monkeypatch, capsys):
    monkeypatch.setattr(sys, "unraisablehook", sys.unraisablehook)  # quiet_teardown sets it
    stopped = TrainingStopped("runs/a", Stopped(signal.SIGTERM), export_error=REFUSED)
    assert (stopped.out, stopped.export_error, stopped.nothing_saved) == (
        Path("runs/a"), REFUSED, False)
    assert str(stopped) == (f"stopped by SIGTERM; the run in 'runs/a' is saved and its policy "
                            f"not exported ({REFUSED})")
    assert "nothing of the run in 'b' was saved" in str(
        TrainingStopped("b", KeyboardInterrupt(), nothing_saved=True))
    copy = pickle.loads(pickle.dumps(stopped))  # a process pool hands exceptions back so
    assert (copy.out, copy.export_error, copy.nothing_saved) == (Path("runs/a"), REFUSED, False)
    assert isinstance(copy.stop, Stopped) and copy.stop.signum == signal.SIGTERM
    assert end_stopped_training(copy, "kept") == 143
    assert capsys.readouterr().err == "error: stopped by SIGTERM; kept\n"
