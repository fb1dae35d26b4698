"""record_io's public functions refuse bad arguments naming them (they raised AttributeError
for a bytes-like shard, and named a shard for a negative or impossible schedule index)."""

from __future__ import annotations

import pytest

from dominoes_env.core.records import RecordError
from dominoes_env.record_io import (
    MAX_SCHEDULE_INDEX,
    encode_record,
    read_record,
    scan_gzip_members,
    scan_shard,
    shard_name,
)

pytestmark = pytest.mark.timeout(60)


def test_a_bytes_like_shard_is_read_as_its_bytes():
    np = pytest.importorskip("numpy")
    data = encode_record({"n": 1}) + encode_record({"n": 2})
    for like in (memoryview(data), bytearray(data), np.frombuffer(data, dtype=np.uint8)):
        assert scan_shard(like).members == [b'{"n":1}\n', b'{"n":2}\n']
        assert scan_gzip_members(like) == scan_gzip_members(data)
    assert scan_shard(memoryview(b"abc")).members == []
    with pytest.raises(TypeError, match="must be bytes"):
        scan_shard("text")


@pytest.mark.parametrize("index", [-1, MAX_SCHEDULE_INDEX + 1, 10**30, True, 1.0, None])
def test_shard_name_refuses_an_index_no_shard_holds(index):
    with pytest.raises((ValueError, TypeError), match="index="):
        shard_name(index)
    assert shard_name(MAX_SCHEDULE_INDEX) == "records-9999.jsonl.gz"


@pytest.mark.parametrize("record", [None, [1, 2], "x", 3])
def test_encode_record_refuses_what_is_no_record(record):
    """A shard's line is a JSON object: ``None`` was encoded as the line ``null``."""
    with pytest.raises(TypeError, match="a record is a dict, not"):
        encode_record(record)


def test_an_empty_shard_holds_no_record(tmp_path):
    """It was said to hold "0 records; choose one with --match", which no match would find."""
    empty = tmp_path / "records-0000.jsonl.gz"
    empty.write_bytes(b"")
    with pytest.raises(RecordError, match=r"holds no record$"):
        read_record(empty)
