"""The shared runner of every ``python -m`` program (being split into modules by what each
part does; for now the whole of it is in :mod:`.run_folders`)."""

from .run_folders import *  # noqa: F403
