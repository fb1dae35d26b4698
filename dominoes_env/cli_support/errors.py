"""The two exceptions by which the shared runner's parts refuse: :class:`CommandError`, which
:func:`~dominoes_env.cli_support.runner.run_command` prints as one ``error:`` line (status 2),
and :class:`RefusedError`, a flag refused before the command starts, which is also the
``ValueError`` of the functions that check their arguments.

They have a module of their own because every other part raises them (the start-up checks,
the output paths, the memory check, the run folders) and the runner catches them: each part
imports them from here, with no import of the runner, which imports those parts."""

from __future__ import annotations


class CommandError(Exception):
    """A command cannot go on: its message is printed as ``error: <message>`` (status 2)."""


class RefusedError(CommandError, ValueError):
    """A flag refused before the command starts: both a :class:`CommandError` (one line from
    :func:`run_command`) and a ``ValueError`` (for the code that checks its arguments)."""
