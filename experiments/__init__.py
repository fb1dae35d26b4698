"""Experiments: tournaments, training and benchmarks built on ``agents`` and ``dominoes_env``.

Nothing below this layer imports it.
"""

import dominoes_env  # noqa: F401, E402 - under python -m experiments.X, a Ctrl-C while the
# program imports is one line (dominoes_env.startup), installed before those imports
