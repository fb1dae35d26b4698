"""A real two-node Ray cluster on this machine: ``ray start --head``, a second node joining it
with ``ray start --address``, then a tournament through ``--ray-address`` (the same records as
the local backend) and a tiny ``train_rllib --address`` run.

The cluster is the test's own: a private temporary folder, free ports, token authentication
with a token file of its own, nodes on loopback addresses (127.0.0.2 and 127.0.0.3: Ray turns
127.0.0.1 into the machine's external address), each ``ray start --block`` a child in a process
group of its own, stopped by its process id and its group when the test ends, pass or fail. No
other Ray process on the machine is touched (never ``ray stop``: it stops every Ray here).

A node that misses one of Ray's fixed start-up windows on a busy machine (its raylet waits 15 s
for the dashboard agent's port file, ``ray start`` 30 s for the raylet to register) is started
again, up to :data:`START_ATTEMPTS` times; a node that never comes up fails the test with the
cause in one line.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from .helpers import ROOT, match_records

pytest.importorskip("ray")

#: tries per node before the test fails (a try ends when ``ray start`` gives up, or at the limit)
START_ATTEMPTS = 3
#: the longest one ``ray start`` may take (its own windows are 15 s + 30 s; a busy machine
#: stretches the imports before them); only a hang ever waits this long
START_LIMIT_S = 240.0
#: how long a node gets to stop on SIGTERM before its process group is killed
STOP_GRACE_S = 10.0
#: the loopback address of each node (not 127.0.0.1, which Ray replaces by the external address)
NODE_IPS = ("127.0.0.2", "127.0.0.3")
STARTED = "Ray runtime started."


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def first_error(text: str) -> str | None:
    """The line of a Ray log that says why a start failed, shortened to its message."""
    for pattern in (r"Check failed: (.*)", r"^\w*(?:Exception|Error): (.*)",
                    r"(The current node timed out during startup[^.]*)"):
        for match in re.finditer(pattern, text, re.MULTILINE):
            line = match.group(1).strip()
            if line:
                return line[:300]
    return None


class LocalCluster:
    """Ray nodes started by ``ray start --block`` in child processes, all in ``root``."""

    def __init__(self, root: Path):
        self.root = root
        token = root / "token"
        token.write_text(secrets.token_hex(32))
        token.chmod(0o600)
        self.env = {**os.environ, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(token),
                    "RAY_USAGE_STATS_ENABLED": "0", "RAY_agent_register_timeout_ms": "120000",
                    # stop in seconds on SIGTERM (no drain: nothing serves traffic here)
                    "RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S": "0"}
        for name in ("RAY_ADDRESS", "RAY_NODE_IP_ADDRESS"):
            self.env.pop(name, None)
        self.nodes: list[subprocess.Popen] = []
        self.address: str | None = None
        self.failures: list[str] = []

    def node_flags(self, ip: str) -> list[str]:
        ports = ("--node-manager-port", "--object-manager-port", "--metrics-export-port",
                 "--dashboard-agent-listen-port", "--dashboard-agent-grpc-port",
                 "--runtime-env-agent-port")
        # no log monitor (nothing reads the workers' logs): one Python process less starting
        # beside the dashboard agent, which must be up within the raylet's 15 s
        flags = ["--node-ip-address", ip, "--num-cpus", "1", "--block", "--disable-usage-stats",
                 "--include-log-monitor", "false", "--min-worker-port", "0",
                 "--max-worker-port", "0"]
        for flag in ports:
            flags += [flag, str(free_port())]
        return flags

    def start_head(self) -> str:
        def command(attempt: int) -> list[str]:
            temp = self.root / f"h{attempt}"  # Ray's socket paths must stay short
            temp.mkdir()
            self.address = f"{NODE_IPS[0]}:{free_port()}"
            return ["--head", "--port", self.address.rpartition(":")[2],
                    "--temp-dir", str(temp), "--include-dashboard", "false",
                    "--no-monitor",  # no autoscaler: this cluster's nodes are fixed
                    "--dashboard-port", str(free_port()),
                    "--ray-client-server-port", str(free_port()), *self.node_flags(NODE_IPS[0])]
        self._start("head", command)
        return self.address

    def add_node(self) -> None:
        self._start("node 2", lambda attempt: ["--address", self.address,
                                               *self.node_flags(NODE_IPS[1])])

    def _start(self, name: str, command) -> None:
        ray = str(Path(sys.executable).with_name("ray"))
        for attempt in range(1, START_ATTEMPTS + 1):
            log = self.root / f"{name.replace(' ', '')}-{attempt}.log"
            with open(log, "w") as out:
                proc = subprocess.Popen([ray, "start", *command(attempt)], env=self.env,
                                        cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL, start_new_session=True)
            self.nodes.append(proc)
            why = self._wait_started(proc, log)
            if why is None:
                return
            self.failures.append(f"{name}, try {attempt}: {why}")
            self._stop(proc)
            self.nodes.remove(proc)
        pytest.fail(f"the {name} of a local Ray cluster did not start in {START_ATTEMPTS} "
                    f"tries: {'; '.join(self.failures)}", pytrace=False)

    def _wait_started(self, proc: subprocess.Popen, log: Path) -> str | None:
        """``None`` once the node runs, else why it did not start (one line)."""
        deadline = time.monotonic() + START_LIMIT_S
        while time.monotonic() < deadline:
            text = log.read_text(errors="replace")
            if STARTED in text:
                return None
            if proc.poll() is not None:
                return (first_error(text) or first_error(self._ray_logs())
                        or f"ray start exited with status {proc.returncode}")
            time.sleep(0.5)
        return (f"ray start did not finish in {START_LIMIT_S:.0f} s "
                f"({first_error(self._ray_logs()) or 'no error in the logs'})")

    def _ray_logs(self) -> str:
        """The newest raylet log (the node that just failed)."""
        logs = sorted(self.root.glob("h*/session_*/logs/raylet*.out"),
                      key=lambda path: path.stat().st_mtime)
        return logs[-1].read_text(errors="replace") if logs else ""

    @staticmethod
    def _stop(proc: subprocess.Popen) -> None:
        """SIGTERM to the node's ``ray start`` (it stops its Ray processes), then SIGKILL to its
        process group and to every process it started that is still there."""
        import psutil

        try:
            tree = psutil.Process(proc.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            tree = []
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                pass
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        for child in tree:
            try:
                child.kill()  # psutil checks that the pid still names the same process
            except psutil.NoSuchProcess:
                pass
        proc.wait()
        psutil.wait_procs(tree, timeout=STOP_GRACE_S)

    def stop(self) -> None:
        for proc in reversed(self.nodes):  # the joined node first, the head last
            self._stop(proc)
        self.nodes.clear()


@pytest.fixture
def two_node_cluster(one_local_ray):
    root = Path(tempfile.mkdtemp(prefix="rc", dir="/tmp"))  # short: Ray's socket paths
    cluster = LocalCluster(root)
    try:
        cluster.start_head()
        cluster.add_node()
        yield cluster
    finally:
        cluster.stop()
        shutil.rmtree(root, ignore_errors=True)


def run_module(module: str, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    run = subprocess.run([sys.executable, "-m", module, *args], env=env, cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-4000:]
    return run


@pytest.mark.timeout(1800)  # each node may take START_ATTEMPTS tries on a busy machine
def test_a_tournament_and_rllib_training_run_on_a_two_node_cluster(tmp_path, two_node_cluster):
    cluster = two_node_cluster
    args = ["--agents", "random", "greedy", "--matches", "8", "--seed", "5",
            "--target-score", "60", "--quiet", "--no-plots"]
    run_module("experiments.tournament", *args, "--out", str(tmp_path / "local"), env=cluster.env)
    run_module("experiments.tournament", *args, "--out", str(tmp_path / "ray"), "--workers", "2",
               "--backend", "ray", "--ray-address", cluster.address, env=cluster.env)
    local, remote = match_records(tmp_path / "local"), match_records(tmp_path / "ray")
    assert len(local) == 8
    assert remote == local

    out = tmp_path / "rllib"
    run = run_module("experiments.train_rllib", "--address", cluster.address, "--iterations", "1",
                     "--env-runners", "2", "--train-batch-size", "100", "--minibatch-size", "50",
                     "--epochs", "1", "--net", "16", "--seed", "1", "--eval-matches", "2",
                     "--out", str(out), env=cluster.env)
    assert "[1/1]" in run.stdout
    assert (out / "policy.npz").is_file() and (out / "checkpoint").is_dir()
