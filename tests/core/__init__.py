"""Exact tests of the game core (dominoes_env/core/), written where mutation testing
(`make mutation`, docs/results.md) showed the other tests let a changed rule pass."""
