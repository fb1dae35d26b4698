"""Whether what a flag asks for fits in this machine's memory, checked before a command starts.

:func:`machine_memory` is the memory this process may use (the machine's, or less under
``ulimit -v``); :func:`check_fits_in_memory` refuses, in one line naming the flag, a
``--positions`` or a population that would end in a ``MemoryError`` (or the machine's
swapping) hours into a run."""

from __future__ import annotations

import os

from .errors import RefusedError


def machine_memory() -> int:
    """The memory this process may use, in bytes: this machine's physical memory, or less
    where the process's address space is limited (``ulimit -v``: a run that fits the machine
    but not the limit would end in a ``MemoryError`` hours in)."""
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    try:
        import resource

        limit = resource.getrlimit(resource.RLIMIT_AS)[0]
    except (ImportError, OSError, ValueError):  # pragma: no cover - not on POSIX
        return memory
    return memory if limit == resource.RLIM_INFINITY or limit <= 0 else min(memory, limit)


def check_fits_in_memory(what: str, count: int, bytes_each: int, detail: str = "") -> None:
    """:class:`RefusedError` unless ``count`` things of ``bytes_each`` bytes fit in this
    machine's memory; the one-line message names ``what`` (the flag and its value), what it
    needs (``detail`` says of what, in parentheses) and what the machine has.

    >>> check_fits_in_memory("--positions 10", 10, 8192)
    >>> check_fits_in_memory("--positions 10**20", 10**20, 8192)
    Traceback (most recent call last):
    ...
    dominoes_env.cli_support.errors.RefusedError: --positions 10**20 needs about ... GiB...
    """
    memory = machine_memory()
    need = count * bytes_each
    if need > memory:
        raise RefusedError(f"{what} needs about {need / 2**30:,.0f} GiB of memory"
                           f"{f' ({detail})' if detail else ''}; this machine has "
                           f"{memory / 2**30:,.0f} GiB")
