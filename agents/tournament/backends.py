"""Where a tournament's matches are played: in this process or on local worker processes
(:func:`iter_local`), or as Ray tasks (:func:`iter_ray`). Both yield each match's record as it
finishes, the jobs sent out in batches (:func:`batch_size`).

>>> config = TournamentConfig(["random", "greedy"], RuleConfig(target_score=30), matches=2)
>>> [rec["seats"] for rec in iter_local(config.schedule().jobs, config, workers=1)]
[['random', 'greedy'], ['greedy', 'random']]
"""

from __future__ import annotations

import os
import pickle
import signal
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from dominoes_env.core import RuleConfig

from .jobs import job_record, play_batch
from .results_dir import TournamentConfig
from .schedule import MatchJob

BACKENDS = ("local", "ray")


class WorkerDiedError(ValueError):
    """A local worker process ended while it was playing matches."""


def max_workers() -> int:
    """The most local worker processes worth starting: the CPUs this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def _serve_batches(conn, inherited: list, rules: dict, max_hands: int, keep_record: bool,
                   move_timeout: float | None) -> None:
    """A local worker's loop: play each batch of jobs that arrives on ``conn`` and send back
    ``("ok", records)`` or ``("error", exception)``, until the parent is gone.

    ``inherited`` are the parent's ends of the workers' pipes, which a forked worker holds
    copies of: closed first, so that the parent's death reaches every worker as the end of its
    pipe."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C
    for other in inherited:
        other.close()
    cfg = RuleConfig.from_dict(rules)
    try:
        while True:
            jobs = conn.recv()
            try:
                reply: tuple[str, Any] = ("ok", [job_record(job, cfg, max_hands, keep_record,
                                                            move_timeout) for job in jobs])
            except Exception as err:  # an agent's fault, named by play_match: re-raised there
                reply = ("error", err)
            try:
                conn.send(reply)
            except (pickle.PicklingError, TypeError, AttributeError) as err:
                # an exception that cannot be pickled travels as its text
                conn.send(("error", RuntimeError(f"{type(err).__name__}: {err}")))
    except (EOFError, OSError):  # the parent closed the pipe, or died
        return


def _batches(jobs: Sequence[MatchJob], size: int) -> list[list[MatchJob]]:
    return [list(jobs[i : i + size]) for i in range(0, len(jobs), size)]


def batch_size(pending: int, parallel: int, cap: int) -> int:
    """Matches per dispatch: enough to keep dispatch overhead small next to play, small enough
    that every worker stays busy to the end and an interruption loses little.

    >>> batch_size(10, 2, 8), batch_size(2000, 2, 8), batch_size(100000, 4, 16)
    (1, 8, 16)
    """
    return max(1, min(cap, pending // (parallel * 32)))


def _worker_died(proc) -> WorkerDiedError:
    # a worker that died (an agent calling os._exit, a crash in native code) takes its matches
    # with it: the run stops instead of waiting for them
    proc.join(1)
    return WorkerDiedError(
        f"a worker process died (exit code {proc.exitcode}) in the middle of a match: an agent "
        "ended or crashed the process it was playing in; the finished matches are kept "
        "(--workers 1 plays in this process)")


def _send(conn, proc, batch: list[MatchJob]) -> None:
    try:
        conn.send(batch)
    except OSError:  # its end of the pipe is gone: the worker died
        raise _worker_died(proc) from None


def iter_local(jobs: Sequence[MatchJob], config: TournamentConfig, workers: int,
               keep_record: bool = False, move_timeout: float | None = None) -> Iterator[dict]:
    """Records as matches finish: in this process for one worker, else on worker processes.

    Each worker has a pipe of its own and shares no lock or queue with the others, so a run
    that stops (an agent's error, a worker that died, Ctrl-C) can kill every worker at once
    and never waits on a lock that a killed or hung worker holds (``multiprocessing.Pool``'s
    ``terminate`` can: it sits in ``Thread.join`` for minutes behind a hung agent)."""
    rules = config.rules
    if workers == 1:
        for job in jobs:
            yield job_record(job, rules, config.max_hands, keep_record, move_timeout)
        return
    import multiprocessing
    from multiprocessing.connection import wait

    batches = _batches(jobs, batch_size(len(jobs), workers, 8))
    batches.reverse()  # pop() hands them out in schedule order
    args = (rules.to_dict(), config.max_hands, keep_record, move_timeout)
    procs = []
    try:
        busy = {}  # connection -> its worker, while a batch is out
        for _ in range(min(workers, len(batches))):
            conn, child = multiprocessing.Pipe()
            inherited = [c for _, c in procs] + [conn]
            proc = multiprocessing.Process(target=_serve_batches,
                                           args=(child, inherited, *args), daemon=True)
            proc.start()
            child.close()
            procs.append((proc, conn))
            _send(conn, proc, batches.pop())
            busy[conn] = proc
        while busy:
            ready = wait([*busy, *(proc.sentinel for proc in busy.values())])
            for conn, proc in list(busy.items()):
                if conn in ready or conn.poll():
                    try:
                        status, payload = conn.recv()
                    except EOFError:
                        status, payload = "died", None
                elif proc.sentinel in ready:
                    status, payload = "died", None
                else:
                    continue
                if status == "died":
                    raise _worker_died(proc)
                if status == "error":
                    raise payload
                yield from payload
                if batches:
                    _send(conn, proc, batches.pop())
                else:
                    del busy[conn]
    finally:
        for proc, _ in procs:  # nothing shared: killing a worker can never block another
            if proc.is_alive():
                proc.kill()
        for proc, conn in procs:
            proc.join()
            conn.close()


def _project_root() -> str:
    return str(Path(__file__).resolve().parents[2])


def iter_ray(jobs: Sequence[MatchJob], config: TournamentConfig, workers: int,
             address: str | None = None, keep_record: bool = False,
             move_timeout: float | None = None) -> Iterator[dict]:
    """Records as Ray tasks finish. Each task plays a batch of matches; at most two batches per
    CPU are in flight. Uses a Ray already initialised in this process, else connects to
    ``address`` (a running cluster, whose workers must have this package importable), else
    starts a local Ray with ``workers`` CPUs and shuts it down afterwards."""
    try:
        import ray
    except ImportError as err:
        raise ValueError(f"backend='ray' needs Ray: pip install 'ray[default]' ({err})") from None
    from ..ray_cluster import init_ray, shutdown_ray

    # the workers import agents by spec from this package and from this process's path
    # (code_search_path: no runtime environment to set up, no agent process to wait on)
    extra = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    started = init_ray(address=address, num_cpus=workers,
                       code_search_path=[] if address else [_project_root(), *filter(None, extra)])
    in_flight: list = []
    try:
        parallel = max(1, int(ray.cluster_resources().get("CPU", workers)))
        task = ray.remote(num_cpus=1)(play_batch)
        rules_ref = ray.put(config.rules.to_dict())
        batches = _batches(jobs, batch_size(len(jobs), parallel, 16))
        batches.reverse()
        while batches or in_flight:
            while batches and len(in_flight) < 2 * parallel:
                in_flight.append(task.remote(rules_ref, config.max_hands, batches.pop(),
                                             keep_record, move_timeout))
            done, in_flight = ray.wait(in_flight, num_returns=1)
            for ref in done:
                yield from ray.get(ref)
    finally:
        for ref in in_flight:
            ray.cancel(ref, force=True)
        if started:
            shutdown_ray()
