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


@pytest.mark.parametrize("keys", [{1: 2, "1": 3}, {True: 1, "true": 2}, {None: 1}, {2.5: 0}])
def test_a_record_writer_refuses_keys_json_would_turn_into_text(keys, tmp_path):
    """JSON writes every key as text: {1: 2, "1": 3} was written as an object holding "1"
    twice, a file the project's own readers then refused (the writer made a file nobody
    reads), and {1: 2} read back as {"1": 2}. Each writer refuses it, naming the key, and
    writes nothing."""
    from dominoes_env.core import MatchState, RecordError
    from dominoes_env.core.records import write_record
    from dominoes_env.record_io import append_records

    record = {**MatchState(seed=1).to_record(), "match": {"seats": ["a", "b"], "notes": keys}}
    key = next(iter(keys))
    named = rf"the key {key!r} \({type(key).__name__}\) is not text"
    with pytest.raises(TypeError, match=named):
        encode_record(record)
    with pytest.raises(RecordError, match=named):
        write_record(record, tmp_path / "r.json")
    with pytest.raises(RecordError, match=rf"record 1: not JSON \({named}"):
        append_records(tmp_path / shard_name(0), [record])
    assert list(tmp_path.iterdir()) == []
    record["match"]["notes"] = {str(k): v for k, v in keys.items() if not isinstance(k, bool)}
    write_record(record, tmp_path / "r.json")  # text keys are written
