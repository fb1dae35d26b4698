"""Record files: one record (``.json``) or many, one per line (``.jsonl``, or gzip-compressed
``.jsonl.gz`` as tournaments keep them under ``DIR/records/``).

A record kept by a tournament carries a ``"match"`` field next to ``rules`` and ``hands``
(``{"index", "key", "seats", "seed"}``: the line of ``matches.jsonl`` it belongs to), which is
how :func:`read_record` finds one record in a shard.

A ``.jsonl.gz`` shard is a series of gzip members, one per record (``gzip.open`` and ``zcat``
read it whole), so a writer appends a record with one ``write`` and a reader can tell a
complete record from one cut off by a crash.

>>> import tempfile, os
>>> from dominoes_env.core import MatchState
>>> rec = MatchState(seed=1).to_record()
>>> with tempfile.TemporaryDirectory() as d:
...     path = os.path.join(d, "x.jsonl.gz")
...     append_records(path, [dict(rec, match={"index": 7, "key": "k7"})])
...     read_record(path, "7")["match"]["key"], len(list(iter_records(path)))
('k7', 1)
"""

from __future__ import annotations

import gzip
import json
import os
import zlib
from collections.abc import Iterable, Iterator
from typing import Any

from .core.errors import RecordError
from .core.records import load_record, parse_record, read_record_bytes

SHARD_SUFFIXES = (".jsonl", ".jsonl.gz")
#: a tournament's ``records/`` folder: shard ``k`` holds the matches with schedule index
#: ``k * SHARD_SIZE`` to ``(k + 1) * SHARD_SIZE - 1``
RECORDS_DIR = "records"
SHARD_SIZE = 1000


def shard_name(index: int) -> str:
    """The shard of a tournament's ``records/`` that holds the match with schedule ``index``.

    >>> shard_name(0), shard_name(12345)
    ('records-0000.jsonl.gz', 'records-0012.jsonl.gz')
    """
    return f"records-{index // SHARD_SIZE:04d}.jsonl.gz"


def _find_in_dir(folder: str, match: str | None) -> dict:
    """A record from a tournament directory (or its ``records/`` folder) by match index/key."""
    sub = os.path.join(folder, RECORDS_DIR)
    if os.path.isdir(sub):
        folder = sub
    shards = sorted(f for f in os.listdir(folder) if f.startswith("records-") and is_shard(f))
    if not shards:
        raise RecordError(f"{folder!r} holds no game records (run the tournament with "
                          "--save-records)")
    if match is None:
        raise RecordError(f"{folder!r} is a folder of records; choose one with --match INDEX "
                          "(or KEY) from matches.jsonl")
    if match.isdigit() and shard_name(int(match)) in shards:  # the shard it must be in first
        shards.remove(shard_name(int(match)))
        shards.insert(0, shard_name(int(match)))
    for name in shards:
        for rec in iter_records(os.path.join(folder, name)):
            if _matches(rec, match):
                return rec
    raise RecordError(f"{folder!r} holds no record of match {match!r}")


def is_shard(path: str | os.PathLike) -> bool:
    """Whether ``path`` names a file of many records (by its suffix)."""
    return os.fspath(path).endswith(SHARD_SUFFIXES)


def encode_record(record: dict) -> bytes:
    """One record as one gzip member holding one JSON line (what a shard appends)."""
    line = json.dumps(record, separators=(",", ":")).encode() + b"\n"
    return gzip.compress(line, compresslevel=6, mtime=0)


def append_records(path: str | os.PathLike, records: Iterable[dict]) -> None:
    """Append records to a ``.jsonl.gz`` shard (each as its own gzip member) and flush."""
    with open(path, "ab") as f:
        for rec in records:
            f.write(encode_record(rec))
        f.flush()


def scan_gzip_members(data: bytes) -> tuple[list[bytes], int]:
    """The complete members of a gzip byte string (decompressed) and the offset where the
    complete part ends (a crash can leave a partial member after it)."""
    out: list[bytes] = []
    pos = 0
    while pos < len(data):
        d = zlib.decompressobj(wbits=31)
        try:
            chunk = d.decompress(data[pos:])
        except zlib.error:
            break
        if not d.eof:
            break
        out.append(chunk)
        pos = len(data) - len(d.unused_data)
    return out, pos


def _lines(path: str) -> Iterator[tuple[int, bytes]]:
    data = read_record_bytes(path)
    if path.endswith(".gz"):
        members, end = scan_gzip_members(data)
        if end < len(data) and not members:
            raise RecordError(f"{path!r} is not a gzip file of records")
        data = b"".join(members)
    for number, line in enumerate(data.splitlines(), 1):
        if line.strip():
            yield number, line


def iter_records(path: str | os.PathLike) -> Iterator[dict]:
    """Every record in a file: the one of a ``.json`` file, or each line of a shard (a line cut
    off by a crash at the end of a ``.jsonl.gz`` shard is skipped)."""
    path = os.fspath(path)
    if not is_shard(path):
        yield load_record(path)
        return
    for number, line in _lines(path):
        yield parse_record(line, f"{path}:{number}")


def _matches(record: Any, match: str) -> bool:
    meta = record.get("match") if isinstance(record, dict) else None
    if not isinstance(meta, dict):
        return False
    return str(meta.get("index")) == match or meta.get("key") == match


def read_record(path: str | os.PathLike, match: str | int | None = None) -> dict:
    """One record from a file. In a shard, ``match`` picks it by the tournament's match index
    or key (a shard of one record needs none); ``path`` may also be a tournament directory
    run with ``--save-records`` (or its ``records/`` folder). :class:`RecordError` when there
    is no such record or the choice is ambiguous."""
    path = os.fspath(path)
    if os.path.isdir(path):
        return _find_in_dir(path, None if match is None else str(match))
    if not is_shard(path):
        if match is not None:
            raise RecordError(f"{path!r} holds one record; --match applies to .jsonl(.gz) shards")
        return load_record(path)
    if match is None:
        records = list(iter_records(path))
        if len(records) == 1:
            return records[0]
        raise RecordError(f"{path!r} holds {len(records)} records; choose one with "
                          "--match INDEX (or KEY) from matches.jsonl")
    match = str(match)
    for rec in iter_records(path):
        if _matches(rec, match):
            return rec
    raise RecordError(f"{path!r} holds no record of match {match!r}")
