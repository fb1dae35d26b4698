"""train_jax on a busy machine: XLA's CPU all-reduce must wait for a starved device thread.

A 4-player run at a load of 15 died with "Termination timeout for `all reduce` ... of 40
seconds exceeded. Exiting to ensure a consistent program state": with one XLA device per core,
a device thread the scheduler starved for 40 s aborted the process (no checkpoint, no line of
ours). ``setup_jax`` gives the collectives an hour.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest

from tests.helpers import ROOT

PROBE = """
import os
from dominoes_env.cli_support import setup_jax
setup_jax(int(os.environ["DEVICES"]))
import jax, jax.numpy as jnp
flags = dict(f.lstrip('-').split('=', 1) for f in os.environ['XLA_FLAGS'].split())
print(flags['xla_cpu_collective_call_terminate_timeout_seconds'], flags['xla_dump_to'])
print(jax.device_count(), jax.pmap(lambda x: jax.lax.psum(x, 'i'), axis_name='i')(
    jnp.ones(jax.device_count())).tolist())
"""


@pytest.mark.parametrize("devices", [0, 2])
def test_setup_jax_gives_collectives_an_hour_and_keeps_the_users_xla_flags(tmp_path, devices):
    """One CPU device unless more are asked for (XLA's CPU collectives can hang)."""
    env = {**os.environ, "DEVICES": str(devices), "PYTHONPATH": str(ROOT),
           "XLA_FLAGS": f"--xla_dump_to={tmp_path}",
           "JAX_PLATFORMS": "cpu", "JAX_COMPILATION_CACHE_DIR": str(tmp_path / "cache")}
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    first, second = out.stdout.splitlines()
    assert first == f"3600 {tmp_path}"
    n = max(devices, 1)
    assert second == f"{n} {[float(n)] * n}"


CACHE_PROBE = """
from dominoes_env.cli_support import setup_jax
setup_jax()
import jax, jax.numpy as jnp
print(jax.config.jax_compilation_cache_dir, float(jax.jit(lambda x: x + 1)(jnp.float32(1))))
"""


def test_a_cache_folder_that_cannot_be_used_is_one_warning_line(tmp_path):
    """A JAX_COMPILATION_CACHE_DIR that is a file gave a many-line UserWarning at every
    compilation, the cache silently off; it is now one line, and JAX is not pointed at it."""
    (tmp_path / "file").write_text("x")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "JAX_PLATFORMS": "cpu",
           "JAX_COMPILATION_CACHE_DIR": str(tmp_path / "file")}
    out = subprocess.run([sys.executable, "-c", CACHE_PROBE], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[1] == "2.0" and out.stdout.split()[0] != str(tmp_path / "file")
    assert out.stderr == (f"warning: compiled updates are not kept on disk: "
                          f"{str(tmp_path / 'file')!r} cannot be made (File exists)\n")


def test_a_cache_folder_that_cannot_be_used_is_warned_about_once_a_run(tmp_path):
    """train_jax sets JAX up at its start and again when it trains: the warning about a cache
    folder it cannot use was printed twice in every run."""
    (tmp_path / "file").write_text("x")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "JAX_PLATFORMS": "cpu",
           "JAX_COMPILATION_CACHE_DIR": str(tmp_path / "file")}
    out = subprocess.run([sys.executable, "-m", "experiments.train_jax", "--total-steps", "16",
                          "--num-envs", "2", "--num-steps", "8", "--num-minibatches", "1",
                          "--update-epochs", "1", "--net", "8", "--no-progress",
                          "--eval-every", "0", "--eval-matches", "2", "--out",
                          str(tmp_path / "run")], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stderr.splitlines() == [f"warning: compiled updates are not kept on disk: "
                                       f"{str(tmp_path / 'file')!r} cannot be made (File "
                                       "exists)"]


FULL_DISK_PROBE = """
import os, resource, signal
from dominoes_env.cli_support import setup_jax
setup_jax()
import jax, jax.numpy as jnp
jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)  # every compilation kept
if os.environ.get("DISK_FULL_AT"):  # writes past this many bytes fail, as on a full disk
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    limit = int(os.environ["DISK_FULL_AT"])
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))
print(float(jax.jit(lambda x: jnp.sin(x) * 3 + 1)(jnp.float32(1))))
"""


def aged(cache: Path) -> None:
    """Every entry of ``cache`` written half a minute ago: ``setup_jax`` leaves an entry written
    moments ago to its next check (another process may be writing it)."""
    then = time.time() - 30
    for entry in cache.glob("*-cache"):
        os.utime(entry, (then, then))


def test_a_cache_entry_written_moments_ago_is_left_for_the_next_check(tmp_path):
    """Two processes share a cache: one starts while the other writes an entry (in place, no
    lock). Read half-written, the entry looked cut short, and the one starting removed it and
    warned of damage (a test that read a program's exact output saw that warning once the
    suite kept every compiled program). It is checked at the next start instead."""
    from dominoes_env.cli_support import remove_damaged_cache_entries
    from dominoes_env.cli_support.jax_process import CACHE_WRITING_S

    entry = tmp_path / "jit_f-0123-cache"
    entry.write_bytes(b"")  # what another process's write looks like at its start
    assert remove_damaged_cache_entries(str(tmp_path)) == [] and entry.exists()
    then = time.time() - CACHE_WRITING_S - 1
    os.utime(entry, (then, then))  # still empty once its writer should be done: cut short
    assert remove_damaged_cache_entries(str(tmp_path)) == [entry.name]
    assert not entry.exists()


def test_a_cache_entry_cut_short_by_a_full_disk_is_removed_and_written_again(tmp_path):
    """The disk filling while JAX writes a compiled function to the cache leaves the entry cut
    short (JAX writes it in place, not through a temporary file), and JAX kept it for good:
    its ``put`` skips a key whose file exists, so every later run warned "Error reading
    persistent compilation cache entry ... incomplete or truncated stream" in many lines and
    compiled again. ``setup_jax`` now removes such an entry (one line) and the run writes it
    whole; an entry that decompresses but that XLA cannot load is still only JAX's warning."""
    cache = tmp_path / "cache"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "JAX_PLATFORMS": "cpu",
           "JAX_COMPILATION_CACHE_DIR": str(cache)}
    full = subprocess.run([sys.executable, "-c", FULL_DISK_PROBE], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, env={**env, "DISK_FULL_AT": "1000"})
    assert full.returncode == 0 and full.stdout == "3.5244128704071045\n", full.stderr
    entries = sorted(cache.glob("jit__lambda-*-cache"))
    assert [e.stat().st_size for e in entries] == [1000], full.stderr  # cut short
    removed = (f"damaged compiled update(s) removed from the cache {str(cache)!r} (cut short, "
               "as a full disk leaves them): compiled again\n")
    # as the full disk left it, empty, not zlib; then zlib of what XLA cannot deserialize
    for damage in (None, b"", b"\x78\x9c garbage", zlib.compress(b"garbage" * 100)):
        if damage is not None:
            entries[0].write_bytes(damage)
        aged(cache)
        later = subprocess.run([sys.executable, "-c", FULL_DISK_PROBE], cwd=ROOT, env=env,
                               capture_output=True, text=True, timeout=300)
        assert later.returncode == 0 and later.stdout == "3.5244128704071045\n", later.stderr
        assert "Traceback" not in later.stderr
        if damage != zlib.compress(b"garbage" * 100):
            # (the first run cut short every function it compiled after the limit)
            count = len(list(cache.glob("*-cache"))) if damage is None else 1
            assert later.stderr == f"warning: {count} {removed}"
            entry = entries[0].read_bytes()
            assert len(entry) > 1000 and zlib.decompress(entry)  # written whole again
        else:
            assert "Error reading persistent compilation cache entry for 'jit__lambda'" \
                in later.stderr


def test_the_flags_train_jax_adds_are_flags_xla_takes():
    """``XLA_FLAGS`` is checked in a child process only where the user set it (train_jax
    started that child on every run, for flags of its own): so the program's own flags are
    checked here, against the installed jaxlib."""
    from dominoes_env.cli_support import patient_collectives, xla_flags_problem

    assert xla_flags_problem(patient_collectives("")) is None
    assert xla_flags_problem("--xla_no_such_flag=1") is not None  # the check can fail
