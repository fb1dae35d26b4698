"""Joining or starting Ray for the programs that use it (tournaments on ``--backend ray``,
RLlib training): one place that fails fast and says why in one line.

- An address to nothing (``--ray-address 127.0.0.1:1``) is refused within seconds: the address is
  reached over TCP before Ray is asked to join it (Ray itself retries for minutes without a
  word), and Ray's own wait for the cluster is bounded too.
- A local Ray that does not come up is tried again: on a busy machine the raylet can miss Ray's
  fixed start-up windows (15 s for its dashboard agent's ports, 30 s for ``ray.init``'s wait
  for the raylet), and a second try usually makes it. If every try fails, the cause is one
  line in :class:`RayStartError`. (What makes the windows hold at a load of 15 on two cores is
  an install without jsonschema's slow ``rfc3987-syntax`` import: ``constraints.txt``.)

Ray is imported only when a function here is called (the ``ray`` extra).

>>> split_address("127.0.0.1:6379"), split_address("ray://head:10001"), split_address("auto")
(('127.0.0.1', 6379), ('head', 10001), None)
>>> split_address("head:port")
Traceback (most recent call last):
...
ValueError: Ray address 'head:port' has no valid port; expected HOST:PORT, ray://HOST:PORT or auto
>>> split_address(":6379")
Traceback (most recent call last):
...
ValueError: Ray address ':6379' has no host; expected HOST:PORT, ray://HOST:PORT or auto
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import threading
from collections.abc import Sequence
from typing import Any

#: seconds to reach a cluster's address before giving up on it
CONNECT_TIMEOUT_S = 10.0
#: how often a local Ray's start-up is tried before :class:`RayStartError` (each try has Ray's
#: fixed 30-second window; at a load of 12 on two cores three tries in a row missed it)
START_ATTEMPTS = 5


class RayStartError(RuntimeError):
    """Ray could not be started here, or the cluster at an address could not be joined."""


def split_address(address: str) -> tuple[str, int] | None:
    """``(host, port)`` of a cluster address (``HOST:PORT`` or ``ray://HOST:PORT``), or
    ``None`` for ``auto`` (the cluster started on this machine by ``ray start``)."""
    if not isinstance(address, str) or not address.strip():
        raise ValueError(f"Ray address {address!r} is empty; expected HOST:PORT, "
                         "ray://HOST:PORT or auto")
    if address == "auto":
        return None
    expected = "expected HOST:PORT, ray://HOST:PORT or auto"
    if any(c.isspace() for c in address):  # the host's lookup said "Name or service not known"
        raise ValueError(f"Ray address {address!r} holds spaces; {expected}")
    scheme, sep, _ = address.partition("://")
    if sep and scheme != "ray":  # http://HOST:8265, the dashboard, was looked up as a host name
        raise ValueError(f"Ray address {address!r} starts with {scheme}://, which is not a Ray "
                         f"cluster's address (the dashboard's http:// address is not one); "
                         f"{expected}")
    rest = address.removeprefix("ray://")
    host, sep, port = rest.rpartition(":")
    if not sep or not (port.isascii() and port.isdigit()) or not 0 < int(port) < 65536:
        raise ValueError(f"Ray address {address!r} has no valid port; {expected}")
    if not host.strip("[]"):  # ":6379" was said to have no valid port
        raise ValueError(f"Ray address {address!r} has no host; {expected}")
    return host.strip("[]"), int(port)


def ray_address_from_environment() -> str | None:
    """The cluster address ``RAY_ADDRESS`` names (``None`` when unset or blank): Ray joins it
    instead of starting a local Ray, so it is joined as ``--ray-address`` is, checked first
    (with it set, a local start fails five times with "num_cpus and num_gpus must not be
    provided", which reads as a busy machine)."""
    return os.environ.get("RAY_ADDRESS", "").strip() or None


def check_reachable(address: str, timeout: float = CONNECT_TIMEOUT_S) -> None:
    """Raise :class:`RayStartError` unless something listens at ``address`` (a TCP connect)."""
    where = split_address(address)
    if where is None:
        return
    try:
        with socket.create_connection(where, timeout=timeout) as conn:
            speaks = _speaks_http2(conn)
    except OSError as err:
        reason = err.strerror or type(err).__name__
        raise RayStartError(f"no Ray cluster answers at {address} ({reason}); start one with "
                            "`ray start --head` or check the address") from None
    if not speaks:  # ray.init waited for minutes on a port where something else listens
        raise RayStartError(f"no Ray cluster answers at {address} (something listens there but "
                            "does not speak Ray's gRPC); check the address")


#: HTTP/2's client connection preface and an empty SETTINGS frame: what a gRPC client sends
_HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])


def _speaks_http2(conn: socket.socket) -> bool:
    """Whether the server on ``conn`` answers HTTP/2 (gRPC: Ray's cluster and client servers
    do) with its SETTINGS frame; a server that says nothing within the connection timeout, or
    answers something else (an HTTP/1 server, ssh), does not."""
    try:
        conn.sendall(_HTTP2_PREFACE)
        head = b""
        while len(head) < 9:
            chunk = conn.recv(9 - len(head))
            if not chunk:
                return False
            head += chunk
    except OSError:  # timed out, or reset
        return False
    return head[3] == 4  # the frame's type: SETTINGS


def _first_line(err: BaseException) -> str:
    text = str(err).strip() or type(err).__name__
    return text.splitlines()[0]


#: the SIGTERM handler this process had before :func:`init_ray` started Ray (put back by
#: :func:`shutdown_ray`)
_SIGTERM_BEFORE_RAY: list = []


def init_ray(*, address: str | None = None, num_cpus: int | None = None,
             code_search_path: Sequence[str] = (), attempts: int = START_ATTEMPTS,
             **kwargs: Any) -> bool:
    """Join the cluster at ``address``, or start a local Ray with ``num_cpus`` CPUs; return
    whether this call started (and so should shut down) Ray. A Ray already initialised in this
    process is used as it is (``False``). Extra keyword arguments go to ``ray.init``.

    A SIGTERM handler the process had (a command's, from
    :func:`dominoes_env.cli_support.run_command`: work saved, one line, status 143) is put back
    after ``ray.init``, which puts in its own (``sys.exit(15)``: status 15, without a word,
    nothing saved); without one, Ray's stays while Ray runs (it shuts Ray down on the way out),
    and :func:`shutdown_ray` takes it away with Ray."""
    try:
        import ray
    except ImportError as err:
        raise ValueError(f"Ray is not installed: pip install 'ray[default]' ({err})") from None
    if ray.is_initialized():
        return False
    address = address or ray_address_from_environment()
    # SIGTERM's handler, on the main thread (where it can be put back), else None
    original = (signal.getsignal(signal.SIGTERM)
                if threading.current_thread() is threading.main_thread() else None)
    try:
        started = _init_ray(ray, address, num_cpus, code_search_path, attempts, kwargs)
    finally:
        if callable(original):  # a program's own handler: put back at once
            signal.signal(signal.SIGTERM, original)
    if started and original is not None:
        _SIGTERM_BEFORE_RAY[:] = [original]
    return started


def shutdown_ray() -> None:
    """``ray.shutdown()``, then the SIGTERM handler the process had before :func:`init_ray`
    started Ray: Ray's own (``sys.exit(15)``), which ``ray.init`` installs where the process
    had none of its own, must not outlive the Ray it is there for (a SIGTERM after a Ray
    tournament would end a user's process with status 15)."""
    import ray

    ray.shutdown()
    if _SIGTERM_BEFORE_RAY and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _SIGTERM_BEFORE_RAY.pop())


def _init_ray(ray, address: str | None, num_cpus: int | None, code_search_path: Sequence[str],
              attempts: int, kwargs: dict[str, Any]) -> bool:
    kwargs.setdefault("logging_level", logging.WARNING)
    if address:
        check_reachable(address)
        # Ray's own wait for the cluster's GCS, bounded (by default it retries for minutes)
        os.environ.setdefault("RAY_gcs_server_port_wait_time_s", str(int(CONNECT_TIMEOUT_S)))
        try:
            ray.init(address=address, **kwargs)
        except Exception as err:  # Ray raises plain Exception, ConnectionError, RuntimeError
            raise RayStartError(f"could not join the Ray cluster at {address}: "
                                f"{_first_line(err)}") from None
        return True
    if code_search_path:
        kwargs["job_config"] = ray.job_config.JobConfig(code_search_path=list(code_search_path))
    kwargs.setdefault("include_dashboard", False)
    last: BaseException | None = None
    for _ in range(max(1, attempts)):
        try:
            ray.init(num_cpus=num_cpus, **kwargs)
            return True
        except Exception as err:  # e.g. "The current node timed out during startup"
            last = err
            ray.shutdown()  # stop what did start before trying again
    raise RayStartError(f"could not start a local Ray in {attempts} attempts (a busy machine "
                        f"can delay its start-up): {_first_line(last)}") from None
