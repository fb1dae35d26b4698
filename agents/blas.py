"""One BLAS thread while an agent evaluates small networks.

numpy's OpenBLAS splits even an 8-row matrix product over every core. For the small products a
search agent makes thousands of times per decision that is no faster on an idle machine, and on
a busy one (a tournament with several workers, other jobs) the threads wait for each other and a
product that takes 50 microseconds takes milliseconds. :func:`single_thread` sets OpenBLAS to one
thread for the ``with`` block and restores the previous count after it, so a decision uses one
core, like the other agents. It finds OpenBLAS the way threadpoolctl does (the shared libraries
numpy bundles or has loaded, by their exported ``*openblas*set_num_threads*`` symbol); with
another BLAS, or none found, it does nothing.

>>> with single_thread():
...     pass
"""

from __future__ import annotations

import ctypes
import glob
import os
from contextlib import contextmanager
from functools import cache

_NAMES = ("openblas_set_num_threads", "openblas_set_num_threads64_",
          "scipy_openblas_set_num_threads", "scipy_openblas_set_num_threads64_")


def _candidates() -> list[str]:
    import numpy

    here = os.path.dirname(os.path.dirname(numpy.__file__))
    paths = sorted(glob.glob(os.path.join(here, "numpy.libs", "*openblas*")))
    paths += sorted(glob.glob(os.path.join(here, "numpy", ".dylibs", "*openblas*")))
    try:  # Linux: the libraries this process has loaded
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.split()[-1]
                if "openblas" in os.path.basename(path).lower() and path not in paths:
                    paths.append(path)
    except OSError:
        pass
    return paths


@cache
def _controls():
    """``(get, set)`` thread-count functions of numpy's OpenBLAS, or ``None``."""
    for path in _candidates():
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for name in _NAMES:
            setter = getattr(lib, name, None)
            getter = getattr(lib, name.replace("set_", "get_"), None)
            if setter is not None and getter is not None:
                getter.restype = ctypes.c_int
                setter.argtypes = [ctypes.c_int]
                return getter, setter
    return None


@contextmanager
def single_thread():
    """Run the block with OpenBLAS on one thread (no effect without OpenBLAS)."""
    controls = _controls()
    if controls is None:
        yield
        return
    get, put = controls
    before = get()
    if before == 1:
        yield
        return
    put(1)
    try:
        yield
    finally:
        put(before)
