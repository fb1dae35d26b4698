"""``--save-records``: every match's game record, kept next to ``matches.jsonl``.

Records live in ``DIR/records/records-NNNN.jsonl.gz``: shard ``NNNN`` holds the matches whose
schedule index is in ``[NNNN * 1000, NNNN * 1000 + 999]``. Each line is a game record (the
format of ``shared/RULES.md``) with one more field, ``"match": {"index", "key", "seats",
"seed"}``, naming its line in ``matches.jsonl``; each line is its own gzip member, so a shard
is an ordinary gzip file (``zcat`` reads it) that grows by whole records.

Exactness across interruptions: a match's record is appended and flushed *before* its line in
``matches.jsonl``. When a run starts, records cut off by a crash are dropped, and so are records
of matches that ``matches.jsonl`` does not hold (the run was killed between the two writes);
those matches are played again. Matches in ``matches.jsonl`` without a record (a directory
first run without ``--save-records``) are played again for their records, which must agree
with the stored outcome. So after any interruption and a resume, every match in
``matches.jsonl`` has exactly one record and every record one match.

Read one with ``python -m dominoes_env replay DIR --match INDEX`` (or the shard's path).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from dominoes_env.core.files import atomic_write
from dominoes_env.record_files import (
    RECORDS_DIR,
    encode_record,
    scan_gzip_members,
    shard_name,
)


def game_line(job_rec: dict[str, Any], game: dict[str, Any]) -> dict[str, Any]:
    """The record line of a match: its game record plus the ``match`` field."""
    meta = {k: job_rec[k] for k in ("index", "key", "seats", "seed")}
    return {**game, "match": meta}


class RecordStore:
    """The shards of one results directory; opened by the run that holds the directory lock."""

    def __init__(self, out: Path):
        self.folder = Path(out) / RECORDS_DIR
        self._handles: dict[str, Any] = {}

    def load(self, keep: Iterable[str]) -> set[str]:
        """Keys of the complete records whose match is in ``keep``; every other byte is cut
        from the shards (atomically rewritten when anything has to go)."""
        keep = set(keep)
        found: set[str] = set()
        if not self.folder.is_dir():
            return found
        for path in sorted(self.folder.glob("records-*.jsonl.gz")):
            data = path.read_bytes()
            members, end = scan_gzip_members(data)
            kept: list[bytes] = []
            dropped = end < len(data)
            for raw in members:
                try:
                    key = json.loads(raw)["match"]["key"]
                except (ValueError, KeyError, TypeError):
                    key = None
                if key in keep and key not in found:
                    found.add(key)
                    kept.append(raw)
                else:
                    dropped = True
            if dropped:
                with atomic_write(path, "wb") as f:
                    f.write(b"".join(_recompress(raw) for raw in kept))
        return found

    def append(self, line: dict[str, Any]) -> None:
        """Append one record line to its shard and flush it (before ``matches.jsonl``)."""
        name = shard_name(line["match"]["index"])
        handle = self._handles.get(name)
        if handle is None:
            self.folder.mkdir(parents=True, exist_ok=True)
            handle = self._handles[name] = open(self.folder / name, "ab")  # noqa: SIM115
        handle.write(encode_record(line))
        handle.flush()

    def close(self) -> None:
        for handle in self._handles.values():
            handle.close()
        self._handles.clear()


def _recompress(raw: bytes) -> bytes:
    import gzip

    return gzip.compress(raw, compresslevel=6, mtime=0)


def clear_records(out: str | os.PathLike) -> None:
    """Remove the record shards a run wrote into ``out`` (and the folder when empty)."""
    folder = Path(out) / RECORDS_DIR
    if not folder.is_dir():
        return
    for path in folder.glob("records-*.jsonl.gz*"):
        path.unlink()
    try:
        folder.rmdir()
    except OSError:
        pass
