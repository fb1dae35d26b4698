"""The benchmark card: how strong one agent is, against a fixed panel, at every table.

One agent (any spec, :mod:`agents.specs`) plays each opponent of the panel (:data:`PANEL`:
``random``, ``greedy``, ``search``, ``ppo``, ``best``) at each table (:data:`TABLES`, from
:mod:`agents.tables`: 2 players, 3, 4 in partnerships, 4 without) on duplicate deals with the
tournament engine (:mod:`agents.tournament`: head-to-head and partnerships with the sides
exchanged per deal, free-for-all in the two-agent field, every rotation). The card gives per
opponent and table the agent's win rate with its Wilson 95% interval, points per hand and its
decision time, mean and 95th percentile; an opponent that cannot play a table (no shipped
policy for it) is ``n/a`` with the reason.

>>> import tempfile
>>> config = BenchmarkConfig("greedy", panel=["random"], tables=["2p"], matches=2,
...                          rule_options={"target_score": 30})
>>> with tempfile.TemporaryDirectory() as out:
...     card = run_card(config, out, progress=False).card
>>> cell = card["tables"][0]["cells"][0]
>>> cell["opponent"], cell["matches"], card["complete"]
('random', 2, True)

The pieces: :mod:`.tables` (tables, panel, :class:`BenchmarkConfig`), :mod:`.run` (playing the
cells into a folder that survives interruption), :mod:`.stats` (one cell's figures),
:mod:`.card` (the JSON and its schema) and :mod:`.render` (the printed table and the picture).
The command line is ``python -m experiments.benchmark``.
"""

from .card import CARD_KEYS, CELL_KEYS, SCHEMA, SCHEMA_VERSION, TABLE_KEYS, build_card, write_card
from .render import card_rows, plot_card, print_card
from .run import (
    CARD_FILE,
    CONFIG_FILE,
    OUTPUT_NAMES,
    PICTURE_FILE,
    BenchmarkDirError,
    CardRun,
    clear_card,
    collect,
    plan,
    run_card,
    spec_slug,
)
from .stats import cell_stats
from .tables import PANEL, TABLES, BenchmarkConfig, rules_at

__all__ = [
    "CARD_FILE", "CARD_KEYS", "CELL_KEYS", "CONFIG_FILE", "OUTPUT_NAMES", "PANEL", "PICTURE_FILE",
    "SCHEMA", "SCHEMA_VERSION", "TABLES", "TABLE_KEYS", "BenchmarkConfig", "BenchmarkDirError",
    "CardRun", "build_card", "card_rows", "cell_stats", "clear_card", "collect", "plan",
    "plot_card", "print_card", "rules_at", "run_card", "spec_slug", "write_card",
]  # fmt: skip
