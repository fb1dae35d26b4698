"""``atomic_write``: the one way files are written (records, pages, policies, checkpoints,
tournament state, datasets): whole or not at all, with a new file's usual permissions."""

from __future__ import annotations

import errno
import os
import subprocess
import sys

import numpy as np
import pytest

from agents.ppo import random_policy_npz
from dominoes_env.core import MatchState, RuleConfig
from dominoes_env.core.atomic_files import atomic_write
from dominoes_env.core.records import write_record

from .helpers import CHILD_TIMEOUT_S, ROOT


def test_writes_text_and_bytes_and_leaves_only_the_file(tmp_path):
    with atomic_write(tmp_path / "a.txt") as f:
        f.write("text ∂")
    with atomic_write(tmp_path / "b.npz", "wb") as f:
        np.savez(f, x=np.arange(3))
    assert (tmp_path / "a.txt").read_text(encoding="utf-8") == "text ∂"
    assert np.load(tmp_path / "b.npz")["x"].tolist() == [0, 1, 2]
    assert sorted(os.listdir(tmp_path)) == ["a.txt", "b.npz"]


def test_an_error_while_writing_keeps_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / "f.json"
    path.write_text("old")
    with pytest.raises(RuntimeError, match="disk"), atomic_write(path) as f:
        f.write("new, half")
        raise RuntimeError("disk full")
    assert path.read_text() == "old"
    assert os.listdir(tmp_path) == ["f.json"]


def test_an_interrupt_while_writing_leaves_no_file(tmp_path):
    with pytest.raises(KeyboardInterrupt), atomic_write(tmp_path / "f") as f:
        f.write("x")
        raise KeyboardInterrupt
    assert os.listdir(tmp_path) == []


def test_no_overwrite_refuses_an_existing_file(tmp_path):
    path = tmp_path / "f"
    path.write_text("keep")
    with pytest.raises(FileExistsError), atomic_write(path, overwrite=False) as f:
        f.write("other")
    assert path.read_text() == "keep"
    assert os.listdir(tmp_path) == ["f"]
    with atomic_write(tmp_path / "g", overwrite=False) as f:
        f.write("new")
    assert (tmp_path / "g").read_text() == "new"


def test_permissions_are_a_new_files_not_a_temporary_files(tmp_path):
    old = os.umask(0o022)
    try:
        write_record(MatchState(RuleConfig(), seed=0).to_record(), tmp_path / "r.json")
        random_policy_npz(tmp_path / "p.npz", RuleConfig(), hidden=(4,))
    finally:
        os.umask(old)
    for name in ("r.json", "p.npz"):
        assert (tmp_path / name).stat().st_mode & 0o777 == 0o644


def test_bad_mode_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="mode must be 'w' or 'wb'"), \
            atomic_write(tmp_path / "f", "a"):
        pass
    assert os.listdir(tmp_path) == []


def test_a_policy_export_that_fails_leaves_no_temporary_file(tmp_path, monkeypatch):
    """Before the shared helper, a failed export left ``p.npz.tmp`` beside the target."""
    import agents.ppo

    def broken_savez(fh, **arrays):
        fh.write(b"PK half an archive")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(agents.ppo.np, "savez", broken_savez)
    with pytest.raises(OSError, match="No space"):
        random_policy_npz(tmp_path / "p.npz", RuleConfig(), hidden=(4,))
    assert os.listdir(tmp_path) == []


def test_a_full_disk_names_the_file_it_could_not_write(tmp_path):
    """The system reports a full disk (here a file-size limit: EFBIG) without a file name; the
    error ``atomic_write`` raises names the file, and nothing is left behind."""
    script = f"""
import resource, signal
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000))
from dominoes_env.core.atomic_files import atomic_write
try:
    with atomic_write({str(tmp_path / "big.json")!r}) as f:
        f.write("x" * 100_000)
except OSError as err:
    print(err.errno, err.filename)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=CHILD_TIMEOUT_S, check=True)
    assert done.stdout.split() == [str(errno.EFBIG), str(tmp_path / "big.json")]
    assert os.listdir(tmp_path) == []


def test_an_error_that_is_not_a_full_disk_is_raised_as_it_came(tmp_path):
    with pytest.raises(PermissionError) as caught, atomic_write(tmp_path / "f") as f:
        f.write("x")
        raise PermissionError(errno.EACCES, "Permission denied", "/elsewhere")
    assert caught.value.filename == "/elsewhere"
    with pytest.raises(OSError) as caught, atomic_write(tmp_path / "f") as f:
        raise OSError(errno.ENOSPC, "No space left on device", "/another/file")
    assert caught.value.filename == "/another/file"  # a file already named stays named
    assert os.listdir(tmp_path) == []


def test_an_append_that_finds_no_room_names_its_file_even_when_the_close_fails_again(tmp_path):
    """The close that flushes a failed write's leftover bytes raises again, without a file name:
    a tournament that filled its disk said "(RUN_FOLDER: File too large)" instead of naming
    ``matches.jsonl``."""
    log = tmp_path / "log.jsonl"
    script = f"""
import resource, signal
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000))
from dominoes_env.core.atomic_files import appending, writes_to
try:
    with appending({str(log)!r}) as f:
        for _ in range(100):
            with writes_to({str(log)!r}):
                f.write("x" * 99 + "\\n")
                f.flush()
except OSError as err:
    print(err.errno, err.filename)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=CHILD_TIMEOUT_S, check=True)
    assert done.stdout.split() == [str(errno.EFBIG), str(log)]
    assert log.stat().st_size == 1000


def test_a_tournament_on_a_full_disk_names_the_file_it_could_not_append_to(tmp_path):
    """``matches.jsonl`` and the record shards are appended to, not written atomically: a
    failed append is one line naming the file, and a rerun finishes the matches."""
    script = """
import resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (1500, 1500))
from experiments.tournament.cli import main
sys.exit(main(sys.argv[1:]))
"""
    for out, extra, full in (("plain", [], "matches.jsonl"),
                             ("records", ["--save-records"], "records/records-0000.jsonl.gz")):
        args = ["--agents", "greedy", "random", "--matches", "20", "--workers", "1",
                "--no-plots", "--quiet", "--out", str(tmp_path / out), *extra]
        done = subprocess.run([sys.executable, "-c", script, *args], capture_output=True,
                              text=True, timeout=CHILD_TIMEOUT_S, cwd=ROOT)
        assert done.returncode == 2, done.stderr[-1500:]
        assert done.stderr.count("\n") == 1
        assert f"({tmp_path / out / full}: File too large)" in done.stderr
        again = subprocess.run([sys.executable, "-m", "experiments.tournament", *args],
                               capture_output=True, text=True, timeout=CHILD_TIMEOUT_S, cwd=ROOT)
        assert again.returncode == 0, again.stderr[-1500:]
        assert len((tmp_path / out / "matches.jsonl").read_text().splitlines()) == 20
