"""The four tables Straight Dominoes is played at, named from the rules.

A table is how many seats there are and whether they play in two partnerships; it decides
which trained policy can play (a policy reads one table's observation and was trained against
that table's opponents) and which agent is strongest. The tournament's formats
(:func:`agents.tournament.schedule.format_of`) are the same split, with the player count
kept apart at free-for-all tables.

=====================  ==============================  ===================================
table                  rules                           shipped policy (``ppo``)
=====================  ==============================  ===================================
``2p``                 2 players                       ``agents/policies/ppo_2p.npz``
``3p``                 3 players                       ``agents/policies/ppo_3p.npz``
``4p_partnerships``    4 players in two partnerships   ``.../ppo_4p_partnerships.npz``
``4p_free_for_all``    4 players, no partnerships      ``.../ppo_4p_free_for_all.npz``
=====================  ==============================  ===================================

>>> from dominoes_env.core import RuleConfig
>>> table_of(RuleConfig(num_players=4, partnerships=False))
'4p_free_for_all'
>>> describe_table(table_of(RuleConfig(num_players=4)))
'4 players in partnerships'
>>> table_rules("3p").num_players
3
"""

from __future__ import annotations

import operator

from dominoes_env.core import RuleConfig
from dominoes_env.core.validation import is_bool, short_repr

#: every table, in the order commands list them
TABLES = ("2p", "3p", "4p_partnerships", "4p_free_for_all")

#: how messages and docs name each table
TABLE_NAMES = {
    "2p": "2 players",
    "3p": "3 players",
    "4p_partnerships": "4 players in partnerships",
    "4p_free_for_all": "4 players without partnerships",
}


def table_of(rules: RuleConfig) -> str:
    """The table ``rules`` are played at: one of :data:`TABLES`."""
    if not isinstance(rules, RuleConfig):
        raise TypeError(f"rules must be a RuleConfig, got {type(rules).__name__}")
    if rules.num_players == 4:
        return "4p_partnerships" if rules.partnerships else "4p_free_for_all"
    return f"{rules.num_players}p"


def check_table(table: str) -> str:
    """``table`` if it is one of :data:`TABLES`, else ``ValueError`` naming the allowed ones."""
    if not isinstance(table, str) or table not in TABLE_NAMES:
        raise ValueError(f"unknown table {table!r}; allowed: {', '.join(TABLES)}")
    return table


def as_table(where: str | int | RuleConfig) -> str:
    """A table from a table name, a :class:`RuleConfig`, or a player count (the default rules
    for that many players: 4 means partnerships, as ``RuleConfig(num_players=4)``).

    Any integer type counts players (numpy's too: ``np.int64(2)`` is ``"2p"``); a bool or a
    float does not.

    >>> as_table(2), as_table(4), as_table("4p_free_for_all")
    ('2p', '4p_partnerships', '4p_free_for_all')
    """
    if isinstance(where, RuleConfig):
        return table_of(where)
    if isinstance(where, str):
        return check_table(where)
    count = None
    if not is_bool(where):
        try:
            count = operator.index(where)
        except Exception:  # noqa: BLE001 - not an integer (a user __index__ may raise anything)
            count = None
    if count is not None and 2 <= count <= 4:
        return table_of(RuleConfig(num_players=count))
    raise ValueError(f"not a table: {short_repr(where)}; give a RuleConfig, a player count 2..4 "
                     f"or one of {', '.join(TABLES)}")


def describe_table(table: str) -> str:
    """How people name ``table``: ``'4 players without partnerships'``."""
    return TABLE_NAMES[check_table(table)]


def default_tiles(rules: RuleConfig) -> bool:
    """Whether ``rules`` use the tiles of their table's default rules (double-six), which every
    shipped policy reads.

    >>> default_tiles(RuleConfig(num_players=3)), default_tiles(RuleConfig(max_pip=9))
    (True, False)
    """
    table = table_of(rules)  # TypeError for what is no RuleConfig (None was an AttributeError)
    return rules.max_pip == table_rules(table).max_pip


def table_rules(table: str) -> RuleConfig:
    """The default rules at ``table``."""
    table = check_table(table)
    if table == "4p_free_for_all":
        return RuleConfig(num_players=4, partnerships=False)
    return RuleConfig(num_players=int(table[0]))
