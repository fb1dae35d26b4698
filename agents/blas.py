"""One BLAS thread while an agent evaluates small networks.

numpy's OpenBLAS splits even an 8-row matrix product over every core. For the small products a
search agent makes thousands of times per decision that is no faster on an idle machine, and on
a busy one (a tournament with several workers, other jobs) the threads wait for each other and a
product that takes 50 microseconds takes milliseconds. :func:`single_thread` sets the BLAS
libraries numpy has loaded to one thread for the ``with`` block and restores the previous
counts after it, so a decision uses one core, like the other agents. The libraries are found
and controlled by threadpoolctl, once per process (about 10 microseconds a block after that).

>>> import numpy as np
>>> with single_thread():
...     float(np.ones((8, 8)).dot(np.ones(8))[0])
8.0
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache


@cache
def _controller():
    import numpy  # noqa: F401 - the BLAS to control is the one numpy loads
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


@contextmanager
def single_thread() -> Iterator[None]:
    """Run the block with every BLAS library numpy uses on one thread."""
    with _controller().limit(limits=1, user_api="blas"):
        yield
