"""A JAX program's process, set up before its first computation: :func:`setup_jax` (CPU
devices, XLA's collectives made patient, JAX's persistent compilation cache in a folder
checked for use, 32 bits), as ``python -m experiments.train_jax`` starts.

The compilation cache matters on a CPU: compiling a trainer's update takes a minute on a
small machine, and JAX keeps what it compiled on disk for the next run of the same settings.
Two things can go wrong there that JAX does not handle in one line: a folder that cannot hold
the cache (:func:`cache_folder_problem`: JAX warns in many lines at every compilation, the
cache silently off) and an entry cut short by a full disk (:func:`cache_entry_damaged`: JAX
never replaces an entry, so the damage would be for good); :func:`checked_cache` says the first
in one warning line and removes the second.

Nothing here imports JAX at import time; :func:`setup_jax` imports it, after setting
``XLA_FLAGS``."""

from __future__ import annotations

import contextlib
import functools
import math
import os
import sys
import time
from pathlib import Path

from .jax_start import jax_in_32_bits

#: XLA's CPU collectives abort the process (a fatal check, no checkpoint) when one device's
#: thread reaches an all-reduce 40 s after the other: on a busy 2-core machine a starved thread
#: does. Training waits instead: an hour before giving up, ten minutes before a warning.
COLLECTIVE_FLAGS = {"xla_cpu_collective_call_terminate_timeout_seconds": 3600,
                    "xla_cpu_collective_timeout_seconds": 3600,
                    "xla_cpu_collective_call_warn_stuck_timeout_seconds": 600}


def patient_collectives(flags: str) -> str:
    """``flags`` (an ``XLA_FLAGS`` value) with :data:`COLLECTIVE_FLAGS` added, keeping any of
    them the user set. A value that does not start with ``-`` names a file XLA reads its flags
    from, and is kept as it is (flags added after it would make XLA look for a file of that
    whole name, and a good flags file would fail).

    >>> flags = patient_collectives("--xla_cpu_collective_timeout_seconds=5").split()
    >>> flags[0], len(flags)
    ('--xla_cpu_collective_timeout_seconds=5', 3)
    >>> patient_collectives("/etc/xla_flags.txt")
    '/etc/xla_flags.txt'
    """
    if flags.strip() and not flags.lstrip().startswith("-"):
        return flags
    given = {f.split("=", 1)[0].lstrip("-") for f in flags.split()}
    extra = [f"--{k}={v}" for k, v in COLLECTIVE_FLAGS.items() if k not in given]
    return " ".join([*flags.split(), *extra])


def setup_jax(devices: int = 0) -> None:
    """Before JAX starts: ``devices`` XLA CPU devices when more than one is asked for (each
    plays a share of the games), else one (once JAX has started, its devices stay); compiled
    updates kept on disk (``$JAX_COMPILATION_CACHE_DIR``, else
    ``~/.cache/straight-dominoes/jax``): compiling the game takes a minute on a small CPU.

    One CPU device is the default: two devices on 2 cores gave 4-7% more steps per second, but
    XLA's CPU all-reduce can wait forever for the other device's thread (measured: a 4-player
    run on a quiet 2-core machine hangs in its first update's rendezvous; a busy one aborts
    after 40 s), and one device's intra-op threads use every core anyway.

    A run is 32-bit whatever ``JAX_ENABLE_X64`` says (:func:`jax_in_32_bits`)."""
    os.environ["XLA_FLAGS"] = patient_collectives(os.environ.get("XLA_FLAGS", ""))
    import jax

    jax_in_32_bits("train_jax")
    with contextlib.suppress(RuntimeError):  # JAX has started: keep its devices
        jax.config.update("jax_num_cpu_devices", max(devices, 1))
    cache = (os.environ.get("JAX_COMPILATION_CACHE_DIR")
             or str(Path.home() / ".cache" / "straight-dominoes" / "jax"))
    # (JAX reads $JAX_COMPILATION_CACHE_DIR itself: it is set to none when it cannot be used)
    jax.config.update("jax_compilation_cache_dir", checked_cache(cache))


@functools.cache
def checked_cache(cache: str) -> str | None:
    """``cache`` made ready to hold the compilation cache, or ``None`` when it cannot, with
    one warning line; once a process for each folder (``setup_jax`` runs at a command's start
    and again as train_jax's run starts, and a folder that cannot be used is warned about once)."""
    problem = cache_folder_problem(cache)
    if problem:  # JAX warned in many lines at every compilation, the cache silently off
        print(f"warning: compiled updates are not kept on disk: {cache!r} {problem}",
              file=sys.stderr)
        return None
    removed = remove_damaged_cache_entries(cache)
    if removed:
        print(f"warning: {len(removed)} damaged compiled update(s) removed from the cache "
              f"{cache!r} (cut short, as a full disk leaves them): compiled again",
              file=sys.stderr)
    return cache


def cache_folder_problem(folder: str) -> str | None:
    """Why ``folder`` cannot hold the compilation cache (made if missing), or ``None``."""
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as err:
        return f"cannot be made ({err.strerror or err})"
    if not os.path.isdir(folder):
        return "is not a folder"
    if not os.access(folder, os.W_OK | os.X_OK):
        return "is not writable"
    return None


#: the file in the compilation cache whose time is when its entries were last checked
CACHE_CHECKED = ".straight-dominoes-checked"
#: entries written this long before a check are checked again at the next one (a file's time
#: can lag the clock, and an entry may be being written while the check runs)
CACHE_CHECK_MARGIN_S = 60.0
#: entries written this recently are left for the next check: another process may be writing
#: one (JAX writes in place, without a lock), and read half-written it looks cut short
CACHE_WRITING_S = 10.0
#: how a zstd frame starts (JAX compresses its entries with zstd when it can, else zlib)
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def remove_damaged_cache_entries(folder: str) -> list[str]:
    """Remove the entries of the compilation cache in ``folder`` written since its last check
    (all of them at the first) that are damaged (:func:`cache_entry_damaged`); their names.
    An entry written in the last :data:`CACHE_WRITING_S` seconds is left to the next check.

    JAX writes an entry in place and never replaces one that exists, so an entry cut short
    by a full disk would stay for good: every later run of those settings would warn "Error
    reading persistent compilation cache entry" in many lines and compile again. Removed, it is
    compiled and written whole by this run. (An entry that decompresses but that XLA cannot
    load is still JAX's to warn about.)"""
    stamp = os.path.join(folder, CACHE_CHECKED)
    started = time.time()
    try:
        since = os.stat(stamp).st_mtime - CACHE_CHECK_MARGIN_S
    except OSError:
        since = -math.inf
    removed = []
    with contextlib.suppress(OSError), os.scandir(folder) as entries:
        for entry in entries:
            if not entry.name.endswith("-cache") or not entry.is_file(follow_symlinks=False):
                continue  # a link is another cache's entry: left to it
            try:
                written = entry.stat(follow_symlinks=False).st_mtime
                if written < since or written > started - CACHE_WRITING_S:
                    continue  # checked before, or perhaps still being written
                with open(entry.path, "rb") as f:
                    damaged = cache_entry_damaged(f.read())
                if damaged:
                    os.unlink(entry.path)
                    removed.append(entry.name)
            except OSError:  # gone (another run removed it) or unreadable: JAX's to judge
                continue
    with contextlib.suppress(OSError):
        os.close(os.open(stamp, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o644))
        os.utime(stamp, (started, started), follow_symlinks=False)
    return removed


def cache_entry_damaged(data: bytes) -> bool:
    """Whether a compilation cache entry is cut short: empty, or a zlib or zstd stream that
    ends before its end (or is not one). An entry of another format is left to JAX.

    >>> import zlib
    >>> whole = zlib.compress(bytes(1000))
    >>> cache_entry_damaged(whole), cache_entry_damaged(whole[:-5]), cache_entry_damaged(b"")
    (False, True, True)
    """
    import zlib

    if len(data) < len(ZSTD_MAGIC):
        return True
    if data[0] == 0x78:  # a zlib header
        stream = zlib.decompressobj()
    elif data.startswith(ZSTD_MAGIC):
        stream = _zstd_stream()
        if stream is None:  # no zstd here: JAX could not have written it here either
            return False
    else:
        return False
    try:
        stream.decompress(data)
    except Exception:  # zlib.error, ZstdError: not a stream
        return True
    return not getattr(stream, "eof", True)


def _zstd_stream():
    """A zstd decompressor with ``decompress`` and ``eof``, as JAX picks one, or ``None``."""
    try:
        from compression import zstd  # Python 3.14

        return zstd.ZstdDecompressor()
    except ImportError:
        pass
    try:
        import zstandard
    except ImportError:
        return None
    return zstandard.ZstdDecompressor().decompressobj()
