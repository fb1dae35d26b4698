"""Joining and starting Ray (agents.ray_cluster): an address to nothing fails fast in one line,
a local start that misses Ray's start-up window is tried again."""

from __future__ import annotations

import re
import socket
import time

import pytest

from agents.ray_cluster import RayStartError, check_reachable, init_ray, split_address


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("address", ["", "   ", "head", "head:", ":6379", "head:0", "head:70000",
                                     "ray://head:x", 6379])
def test_a_malformed_address_is_refused_naming_it(address):
    with pytest.raises(ValueError, match="Ray address"):
        split_address(address)


@pytest.mark.parametrize("address, says", [
    (":6379", "has no host"),  # was "has no valid port"
    ("[]:6379", "has no host"),
    ("http://head:8265", "starts with http://"),  # was looked up as the host "http://head"
    ("https://head:10001", "starts with https://"),
    ("head:x", "has no valid port"),
])  # fmt: skip
def test_a_malformed_address_says_what_is_wrong(address, says):
    with pytest.raises(ValueError, match=f"^Ray address '{re.escape(address)}' {says}"):
        split_address(address)


def test_an_address_to_nothing_fails_fast_in_one_line():
    start = time.monotonic()
    with pytest.raises(RayStartError) as err:
        check_reachable(f"127.0.0.1:{closed_port()}")
    assert time.monotonic() - start < 5
    assert "no Ray cluster answers at 127.0.0.1:" in str(err.value)
    assert "\n" not in str(err.value)


def test_init_ray_with_an_address_to_nothing_never_starts_ray(monkeypatch):
    ray = pytest.importorskip("ray")
    calls = []
    monkeypatch.setattr(ray, "init", lambda **kw: calls.append(kw))
    with pytest.raises(RayStartError, match="no Ray cluster answers"):
        init_ray(address="127.0.0.1:1")
    assert calls == [] and not ray.is_initialized()


def test_a_local_start_that_times_out_is_tried_again(monkeypatch):
    ray = pytest.importorskip("ray")
    attempts, shutdowns = [], []

    def flaky_init(**kwargs):
        attempts.append(kwargs)
        if len(attempts) < 3:
            raise Exception("The current node timed out during startup. This could happen ...")

    monkeypatch.setattr(ray, "init", flaky_init)
    monkeypatch.setattr(ray, "shutdown", lambda: shutdowns.append(1))
    assert init_ray(num_cpus=2, code_search_path=["/somewhere"]) is True
    assert len(attempts) == 3 and len(shutdowns) == 2
    assert attempts[-1]["num_cpus"] == 2 and attempts[-1]["include_dashboard"] is False
    assert attempts[-1]["job_config"].code_search_path == ["/somewhere"]


def test_a_local_start_that_always_fails_is_one_line_naming_the_cause(monkeypatch):
    ray = pytest.importorskip("ray")

    def failing_init(**kwargs):
        raise Exception("The current node timed out during startup.\nmore lines")

    monkeypatch.setattr(ray, "init", failing_init)
    monkeypatch.setattr(ray, "shutdown", lambda: None)
    with pytest.raises(RayStartError) as err:
        init_ray(num_cpus=1, attempts=2)
    assert str(err.value) == ("could not start a local Ray in 2 attempts (a busy machine can "
                              "delay its start-up): The current node timed out during startup.")
