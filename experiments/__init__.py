"""Experiments: tournaments, training and benchmarks built on ``agents`` and ``dominoes_env``.

Nothing below this layer imports it.
"""
