"""``python -m experiments.docs_notebooks`` stopped while a notebook runs: one line saying what
is left to run, status 130 (Ctrl-C), 143 (SIGTERM) or 129 (SIGHUP, a closed terminal), no
notebook half-written, and no kernel left running (kernels run in a session of their own, so
nothing else stops them)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from tests.helpers import CHILD_TIMEOUT_S, ROOT, error_lines, wait_for_path

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

#: the program with its notebooks' folders moved to the test's (it writes into docs/ otherwise)
PROGRAM = """
import signal, sys
from pathlib import Path
import experiments.docs_notebooks as program
signal.signal(signal.SIGINT, signal.default_int_handler)  # even if the suite's shell ignores it
program.SOURCE, program.TARGET = Path(sys.argv[1]), Path(sys.argv[2])
sys.exit(program.main(sys.argv[3:]))
"""
#: a cell that says which process runs it (its kernel), then runs longer than any test
SLOW_CELL = """import os, time
with open(os.environ["KERNEL_PID_FILE"] + ".part", "w") as f:
    f.write(str(os.getpid()))
os.replace(os.environ["KERNEL_PID_FILE"] + ".part", os.environ["KERNEL_PID_FILE"])
time.sleep(3600)"""


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, dead and waiting to be reaped, does not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.parametrize(("signum", "status"),
                         [("SIGINT", 130), ("SIGTERM", 143), ("SIGHUP", 129)])
def test_stopped_while_a_notebook_runs_kills_its_kernel_and_says_what_is_left(tmp_path, signum,
                                                                              status):
    """SIGTERM was a traceback (nbclient's own handler) and SIGHUP killed the program: either
    way the kernel went on running its cell, orphaned."""
    source, target = tmp_path / "notebooks", tmp_path / "docs"
    source.mkdir()
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(SLOW_CELL)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, source / "slow.ipynb")
    pid_file = tmp_path / "kernel.pid"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "KERNEL_PID_FILE": str(pid_file)}
    proc = subprocess.Popen([sys.executable, "-c", PROGRAM, str(source), str(target), "slow"],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    kernel = None
    try:
        wait_for_path(pid_file, proc)  # the kernel runs the slow cell
        kernel = int(pid_file.read_text())
        proc.send_signal(getattr(signal, signum))
        _, err = proc.communicate(timeout=CHILD_TIMEOUT_S)
        assert proc.returncode == status, err
        words = "interrupted" if signum == "SIGINT" else f"stopped by {signum}"
        assert error_lines(err) == [
            f"error: {words} while running slow; 0 of 1 notebooks were stored; to finish: "
            f"python -m experiments.docs_notebooks slow"]
        assert not target.exists() or not list(target.iterdir())
        deadline = time.monotonic() + CHILD_TIMEOUT_S
        while alive(kernel) and time.monotonic() < deadline:  # init reaps it
            time.sleep(0.05)
        assert not alive(kernel), "the kernel is still running"
    finally:
        if proc.poll() is None:
            proc.kill()
        if kernel is not None and alive(kernel):
            os.kill(kernel, signal.SIGKILL)
