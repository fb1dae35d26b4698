"""Playing scheduled matches: one job's record (the line ``matches.jsonl`` stores) and a batch
of jobs, the unit that a local worker process or a Ray task plays."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dominoes_env.core import RuleConfig

from ..arena import play_match
from .schedule import MatchJob


def job_record(job: MatchJob, rules: RuleConfig, max_hands: int,
               keep_record: bool = False, move_timeout: float | None = None) -> dict[str, Any]:
    """Play one scheduled match and return its record (the line stored in ``matches.jsonl``);
    with ``keep_record`` its game record travels along under ``"_game"`` (removed before the
    line is stored)."""
    result = play_match(job.seats, rules, job.seed, max_hands=max_hands, keep_record=keep_record,
                        move_timeout=move_timeout)
    rec: dict[str, Any] = {"index": job.index, "key": job.key, "table": list(job.table),
                           "deal": job.deal}  # fmt: skip
    rec.update(result.to_record())
    rec["seats"] = list(job.seats)
    owners = [job.seats[rules.seats_of(side)[0]] for side in range(rules.num_sides)]
    rec["winner_agent"] = None if result.winner is None else owners[result.winner]
    if keep_record:
        rec["_game"] = result.game
    return rec


def play_batch(rules: dict, max_hands: int, jobs: Sequence[MatchJob],
               keep_record: bool = False, move_timeout: float | None = None) -> list[dict]:
    """Play several jobs in one worker call (the unit a pool chunk or a Ray task carries)."""
    cfg = RuleConfig.from_dict(rules)
    return [job_record(job, cfg, max_hands, keep_record, move_timeout) for job in jobs]
