"""agents.blas.single_thread: every BLAS numpy uses runs on one thread inside, as before after."""

from __future__ import annotations

import numpy as np  # noqa: F401 - loads the BLAS under test
from threadpoolctl import threadpool_info, threadpool_limits

from agents.blas import single_thread


def blas_threads() -> list[int]:
    return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]


def test_one_thread_inside_and_the_previous_count_after():
    with threadpool_limits(limits=2, user_api="blas"):
        before = blas_threads()
        assert before and all(n == 2 for n in before)
        with single_thread():
            assert all(n == 1 for n in blas_threads())
        assert blas_threads() == before
