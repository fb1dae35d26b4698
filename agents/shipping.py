"""Shipping a trained policy: a trainer's ``--ship`` puts the policy it exported in its table's
shipped place (:func:`agents.ppo.shipped_policy_path`, the policy the ``ppo`` and ``best``
agents play) only if it is stronger than the one shipped there.

:func:`ship_if_stronger` plays the new policy and the shipped one against greedy on the same
deals (:func:`agents.evaluation.evaluation_row`, one seed), prints both win rates and copies
the new policy's card and then its file over the shipped ones only if the new one wins more
often; :func:`shipping_target` is its check of the rules, for a trainer to refuse ``--ship``
before it trains. A table's shipped policy is the one of its default rules (double-six, to
250; :func:`agents.tables.table_rules`), so a policy trained under other rules (another target
score, other tiles) is never shipped: it plays as ``ppo:PATH``.

>>> from dominoes_env.core import RuleConfig
>>> shipping_target(RuleConfig(num_players=3)).name
'ppo_3p.npz'
>>> shipping_target(RuleConfig(target_score=100))
Traceback (most recent call last):
...
ValueError: a policy trained for target_score=100 is not shipped: ppo_2p.npz is the policy of
2 players under the default rules (target_score=250); play it as ppo:PATH
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from dominoes_env.cli_support import (
    MAX_MATCHES,
    RefusedError,
    quoted_path,
    shown_path,
    signals_held,
)
from dominoes_env.core import RuleConfig
from dominoes_env.core.atomic_files import atomic_copy, atomic_write
from dominoes_env.core.validation import as_int, as_path, as_seed, short_repr

from . import evaluation, ppo
from .specs import check_spec_path
from .tables import describe_table, table_of, table_rules

__all__ = ["SHIP_OPPONENT", "ship_if_stronger", "shipping_target"]

#: the opponent that decides whether a policy ships
SHIP_OPPONENT = "greedy"
#: the matches against it (on the deals of a trainer's run seed) that decide it: both
#: trainers' ``--ship``
SHIP_MATCHES = 1000


def _differences(ours: RuleConfig, theirs: RuleConfig) -> tuple[str, str]:
    """The rule options in which ``ours`` and ``theirs`` differ, as ``name=value`` lists."""
    names = [n for n in RuleConfig.field_names() if getattr(ours, n) != getattr(theirs, n)]
    return (", ".join(f"{n}={getattr(ours, n)}" for n in names),
            ", ".join(f"{n}={getattr(theirs, n)}" for n in names))


def shipping_target(rules: RuleConfig) -> Path:
    """Where a policy trained under ``rules`` ships: its table's shipped policy file
    (:func:`agents.ppo.shipped_policy_path`), which may not exist yet. Rules other than the
    table's default rules (another target score, other tiles...) are a ``ValueError`` naming
    both: the shipped file is the policy of the default rules, which ``ppo`` plays whatever the
    target score, so a policy of ``target_score=100`` never replaces the shipped one."""
    if not isinstance(rules, RuleConfig):
        raise TypeError(f"rules must be a RuleConfig, got {short_repr(rules)}")
    table = table_of(rules)
    default = table_rules(table)
    if rules != default:
        ours, theirs = _differences(rules, default)
        raise ValueError(f"a policy trained for {ours} is not shipped: "
                         f"{ppo.POLICY_FILES[table]} is the policy of {describe_table(table)} "
                         f"under the default rules ({theirs}); play it as ppo:PATH")
    return ppo.shipped_policy_path(rules)


def _win_rate(path: Path, rules: RuleConfig, matches: int, seed: int) -> float:
    """The policy at ``path`` against :data:`SHIP_OPPONENT`: its win rate over ``matches``
    matches on the deals of ``seed`` (a trainer's evaluation, rounded to 4 places)."""
    row = evaluation.evaluation_row(f"ppo:{path}", rules, matches=matches, seed=seed,
                                    opponents=(SHIP_OPPONENT,))
    return row[f"win_rate_vs_{SHIP_OPPONENT}"]


def ship_if_stronger(policy_path: str | os.PathLike, rules: RuleConfig, *,
                     matches: int = SHIP_MATCHES,
                     seed: int = 0, out: Callable[[str], object] = print) -> bool:
    """Ship the policy at ``policy_path`` (an exported ``.npz`` with its card, the ``.json``
    of the same name beside it) as the shipped policy of ``rules``' table
    (:func:`shipping_target`) if it beats the shipped one against greedy; returns whether it
    shipped.

    Both play ``matches`` matches against greedy under ``rules`` on the same deals
    (:func:`agents.evaluation.evaluation_row` with ``seed``, a trainer's run seed), and
    ``out`` gets ``vs greedy over N matches: new X, shipped Y`` (``Y`` is ``-1.000`` where
    none is shipped yet). Only a strictly higher win rate ships: the card is copied over the
    shipped card, then the policy over the shipped policy (each whole or not at all, with
    Ctrl-C, SIGTERM and SIGHUP held until both are copied), and ``out`` gets
    ``shipped: PATH``; else ``not shipped: PATH is at least as strong``.

    Refused with a ``ValueError`` before anything is played or written: rules other than the
    table's default rules (:func:`shipping_target`), a policy file that is not a valid export
    (:class:`~dominoes_env.policy_format.PolicyFileError`) or records other rules than
    ``rules`` (or none), a missing card, ``matches`` outside 1..``MAX_MATCHES``, a bad seed.
    """
    target = shipping_target(rules)
    path = Path(as_path("policy_path", policy_path))
    check_spec_path("policy_path", path)  # both policies are played as ppo:PATH specs
    matches = as_int("matches", matches, 1, MAX_MATCHES)
    seed = as_seed(seed)
    recorded = ppo.NumpyPolicy(path).metadata.get("rules")
    if recorded is None:
        raise ValueError(f"the policy at {quoted_path(path)} records no rules it was trained "
                         "for; a shipped policy must")
    try:
        trained = RuleConfig.from_dict(recorded)
    except (TypeError, ValueError) as err:
        raise ValueError(f"the policy at {quoted_path(path)} records rules that are not valid "
                         f"({err})") from None
    if trained != rules:
        theirs, ours = _differences(trained, rules)
        raise ValueError(f"the policy at {quoted_path(path)} was trained for {theirs}, not "
                         f"these rules ({ours}); it is not shipped as {target.name}")
    card = path.with_suffix(".json")
    if not card.is_file():
        raise ValueError(f"the policy at {quoted_path(path)} has no card {card.name} beside it; "
                         "a policy ships with its card")
    new = _win_rate(path, rules, matches, seed)
    old = _win_rate(target, rules, matches, seed) if target.is_file() else -1.0
    out(f"vs {SHIP_OPPONENT} over {matches} matches: new {new:.3f}, shipped {old:.3f}")
    if new <= old:
        out(f"not shipped: {shown_path(target)} is at least as strong")
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    with signals_held():  # a stop between the two: the new card by the old policy
        _ship_pair(card, path, target)
    out(f"shipped: {shown_path(target)}")
    return True


def ship_run(out: str | os.PathLike, rules: RuleConfig, *, matches: int = SHIP_MATCHES,
             seed: int = 0) -> bool:
    """A trainer's ``--ship``: :func:`ship_if_stronger` of the run's ``policy.npz`` in the
    folder ``out``; a refusal is a :class:`~dominoes_env.cli_support.RefusedError` (the
    program's ``error: --ship: ...`` line, status 2) naming the run's policy, never a policy
    file's error (a damaged shipped policy is not a diverged run)."""
    policy = Path(out) / "policy.npz"
    try:
        return ship_if_stronger(policy, rules, matches=matches, seed=seed)
    except ValueError as err:
        raise RefusedError(f"--ship: {err}; the run's policy is {shown_path(policy)}") from None


def _ship_pair(card: Path, policy: Path, target: Path) -> None:
    """Copy ``card`` and ``policy`` over the shipped pair at ``target`` (its ``.json`` card
    first), each copy atomic; if the policy's copy fails (a full disk), the old card is put
    back (or the new one removed where there was none), so the pair never describes another
    policy than the one beside it."""
    shipped_card = target.with_suffix(".json")
    old_card = shipped_card.read_bytes() if shipped_card.is_file() else None
    atomic_copy(card, shipped_card)
    try:
        atomic_copy(policy, target)
    except BaseException:
        if old_card is None:
            shipped_card.unlink(missing_ok=True)
        else:
            with atomic_write(shipped_card, "wb") as f:
                f.write(old_card)
        raise
