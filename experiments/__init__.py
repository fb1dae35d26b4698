"""Experiments: tournaments, training and benchmarks built on ``agents`` and ``dominoes_env``.

Nothing below this layer imports it.
"""

import dominoes_env  # noqa: F401, E402 - first: under python -m experiments.X, a Ctrl-C while
# the program imports is one line (the hook dominoes_env installs before its own first import)
