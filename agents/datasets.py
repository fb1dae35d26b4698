"""Decision datasets for imitation learning and offline RL: the game records of a tournament
and every decision in them as arrays.

:func:`build_dataset` plays the games as a tournament (:mod:`agents.tournament`: duplicate deals,
seats exchanged, every match seeded, resumable: call it again on the same directory after an
interruption) with ``save_records=True``. The directory then holds:

- ``config.json``, ``matches.jsonl``, ``records/records-NNNN.jsonl.gz``: the tournament and
  every match's game record (``python -m dominoes_env replay DIR --match INDEX --html m.html``
  watches one);
- ``decisions/decisions-NNNN.npz``: one per records shard, the decisions of its matches, row
  by row in play order (arrays below); each is written whole (temporary file, then rename);
- ``dataset.json``: the format version, the observation version and size, the number of
  actions, the agents (``agent`` indexes this list), the rules and the counts.

Arrays of a ``decisions-NNNN.npz`` (N rows, one per play, forced plays included):

==============  ==================  ===========================================================
``obs``         float32 [N, O]      the acting seat's observation (``encode_observation``)
``mask``        bool [N, A]         its legal actions (``action_mask``)
``action``      int64 [N]           the action taken (tile index * 4 + end)
``seat``        int8 [N]            the acting seat
``agent``       int16 [N]           which agent acted (index into ``dataset.json["agents"]``)
``match``       int64 [N]           the match's schedule index (its line in ``matches.jsonl``)
``hand``        int16 [N]           the hand of the match, from 0
``points``      int16 [N]           points the play scored at once
``hand_margin`` int16 [N]           in that hand, the acting side's points minus the best
                                    other side's (plays and award): a per-hand return
``outcome``     int8 [N]            +1 the acting side won the match, -1 lost, 0 undecided
==============  ==================  ===========================================================

:func:`load_decisions` reads them back as one dict of arrays;
:func:`agents.imitation.dataset_demonstrations` turns them into what behaviour cloning fits
(``python -m experiments.train_ppo --bc-dataset DIR``). The command line that builds one is
``python -m experiments.make_dataset``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from dominoes_env.core import MatchState, RuleConfig
from dominoes_env.core.files import atomic_write
from dominoes_env.core.records import replay_steps
from dominoes_env.obs.actions import action_mask
from dominoes_env.obs.v2 import VERSION as OBS_VERSION
from dominoes_env.obs.v2 import encode_observation, observation_size
from dominoes_env.record_files import RECORDS_DIR, iter_records

from .tournament.runner import TournamentConfig, run_tournament

__all__ = ["DECISIONS_DIR", "FIELDS", "FORMAT_VERSION", "INFO_FILE", "build_dataset",
           "dataset_info", "load_decisions", "record_decisions", "write_decisions"]

FORMAT_VERSION = 1
DECISIONS_DIR = "decisions"
INFO_FILE = "dataset.json"
FIELDS = ("obs", "mask", "action", "seat", "agent", "match", "hand", "points", "hand_margin",
          "outcome")  # fmt: skip


def record_decisions(record: dict, agents: list[str]) -> dict[str, np.ndarray]:
    """Every play of a tournament's game record as rows of the arrays above (the record's
    ``match`` field gives the schedule index and the agents by seat)."""
    rules = RuleConfig.from_dict(record["rules"])
    meta = record["match"]
    seat_agent = [agents.index(spec) for spec in meta["seats"]]
    match = MatchState(rules, auto_deal=False)
    cols: dict[str, list] = {k: [] for k in FIELDS}
    for step in replay_steps(record):  # each hand's positions, then where the record leaves it
        match = step.match
        if step.move == 0:
            start = list(match.scores)
            first = len(cols["action"])
        if step.code is not None:
            seat = step.seat
            view = match.view(seat)
            cols["obs"].append(encode_observation(view))
            cols["mask"].append(action_mask(view).astype(bool))
            cols["action"].append(step.code)
            cols["seat"].append(seat)
            cols["agent"].append(seat_agent[seat])
            cols["match"].append(meta["index"])
            cols["hand"].append(step.hand)
            cols["points"].append(step.points)
            continue
        gained = [b - a for a, b in zip(start, match.scores, strict=True)]
        for row in range(first, len(cols["action"])):
            side = rules.side_of(cols["seat"][row])
            others = [g for s, g in enumerate(gained) if s != side]
            cols["hand_margin"].append(gained[side] - max(others))
    winner = match.winner
    cols["outcome"] = [0 if winner is None else (1 if rules.side_of(s) == winner else -1)
                       for s in cols["seat"]]
    return _arrays(cols, rules)


def _arrays(cols: dict[str, list], rules: RuleConfig) -> dict[str, np.ndarray]:
    n_obs = observation_size(rules)
    n_act = rules.tiles.num_tiles * 4
    return {
        "obs": np.array(cols["obs"], dtype=np.float32).reshape(-1, n_obs),
        "mask": np.array(cols["mask"], dtype=bool).reshape(-1, n_act),
        "action": np.array(cols["action"], dtype=np.int64),
        "seat": np.array(cols["seat"], dtype=np.int8),
        "agent": np.array(cols["agent"], dtype=np.int16),
        "match": np.array(cols["match"], dtype=np.int64),
        "hand": np.array(cols["hand"], dtype=np.int16),
        "points": np.array(cols["points"], dtype=np.int16),
        "hand_margin": np.array(cols["hand_margin"], dtype=np.int16),
        "outcome": np.array(cols["outcome"], dtype=np.int8),
    }


def _save_npz(path: Path, arrays: dict[str, np.ndarray]) -> None:
    with atomic_write(path, "wb") as f:
        np.savez_compressed(f, **arrays)


def write_decisions(out: Path, config: TournamentConfig) -> dict[str, int]:
    """Turn every records shard into its ``decisions/*.npz`` (skipping shards whose arrays are
    already there for exactly the same matches); returns the counts."""
    agents = list(config.agents)
    folder = out / DECISIONS_DIR
    folder.mkdir(exist_ok=True)
    matches = decisions = 0
    for shard in sorted((out / RECORDS_DIR).glob("records-*.jsonl.gz")):
        records = sorted(iter_records(shard), key=lambda r: r["match"]["index"])
        target = folder / shard.name.replace("records-", "decisions-").replace(".jsonl.gz", ".npz")
        indexes = [r["match"]["index"] for r in records]
        if target.exists():
            with np.load(target) as old:
                if sorted(set(old["match"].tolist())) == indexes:
                    matches += len(records)
                    decisions += len(old["action"])
                    continue
        parts = [record_decisions(r, agents) for r in records]
        arrays = {k: np.concatenate([p[k] for p in parts]) for k in FIELDS}
        _save_npz(target, arrays)
        matches += len(records)
        decisions += len(arrays["action"])
    return {"matches": matches, "decisions": decisions}


def build_dataset(config: TournamentConfig, out: str | os.PathLike, *, workers: int = 1,
                  progress: bool = True) -> dict[str, Any]:
    """Play the games (resuming what ``out`` already holds), write the decision arrays and
    ``dataset.json``; returns its content."""
    out = Path(out)
    run = run_tournament(config, out, workers=workers, progress=progress, save_records=True)
    counts = write_decisions(out, config)
    rules = config.rules
    info = {
        "format": FORMAT_VERSION, "obs_version": OBS_VERSION,
        "observation_size": observation_size(rules), "num_actions": rules.tiles.num_tiles * 4,
        "agents": list(config.agents), "rules": rules.to_dict(), "seed": config.seed,
        "max_hands": config.max_hands, "fields": list(FIELDS), **counts,
        "complete": run.complete,
    }  # fmt: skip
    with atomic_write(out / INFO_FILE) as f:
        f.write(json.dumps(info, indent=2) + "\n")
    return info


def dataset_info(path: str | os.PathLike) -> dict[str, Any]:
    """``DIR/dataset.json``, checked: a ``ValueError`` names what is wrong with a directory
    that is not a dataset this code reads (missing, another format or observation version)."""
    path = Path(path)
    try:
        info = json.loads((path / INFO_FILE).read_text())
        info["rules"], info["agents"]  # noqa: B018 - the fields every reader needs
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise ValueError(f"{path} is not a dataset directory ({INFO_FILE}: {err}); make one "
                         "with python -m experiments.make_dataset") from None
    if info.get("format") != FORMAT_VERSION:
        raise ValueError(f"{path}: dataset format {info.get('format')!r}, this code reads "
                         f"{FORMAT_VERSION}")
    if info.get("obs_version") != OBS_VERSION:
        raise ValueError(f"{path}: observations of version {info.get('obs_version')}, the "
                         f"encoder is at version {OBS_VERSION}; rebuild the dataset")
    return info


def load_decisions(path: str | os.PathLike, *, agent: str | None = None,
                   unforced: bool = False) -> dict[str, np.ndarray]:
    """Every decision of a dataset directory as one dict of arrays (shards in order).

    ``agent`` keeps only that agent's decisions (a spec listed in ``dataset.json``);
    ``unforced`` keeps only decisions with more than one legal action. ``ValueError`` names
    what is wrong with a directory that is not a dataset."""
    path = Path(path)
    info = dataset_info(path)
    shards = sorted((path / DECISIONS_DIR).glob("decisions-*.npz"))
    if not shards:
        raise ValueError(f"{path} holds no {DECISIONS_DIR}/*.npz")
    parts = []
    for shard in shards:
        with np.load(shard) as data:
            parts.append({k: data[k] for k in FIELDS})
    out = {k: np.concatenate([p[k] for p in parts]) for k in FIELDS}
    keep = np.ones(len(out["action"]), dtype=bool)
    if agent is not None:
        if agent not in info["agents"]:
            raise ValueError(f"agent {agent!r} is not in this dataset; it has: "
                             f"{', '.join(info['agents'])}")
        keep &= out["agent"] == info["agents"].index(agent)
    if unforced:
        keep &= out["mask"].sum(axis=1) > 1
    return {k: v[keep] for k, v in out.items()}
