"""Record files: one record (``.json``) or many, one per line (``.jsonl``, or gzip-compressed
``.jsonl.gz`` as tournaments keep them under ``DIR/records/``).

A record kept by a tournament carries a ``"match"`` field next to ``rules`` and ``hands``
(``{"index", "key", "seats", "seed"}``: the line of ``matches.jsonl`` it belongs to), which is
how :func:`read_record` finds one record in a shard.

A ``.jsonl.gz`` shard is a series of gzip members, one per record (``gzip.open`` and ``zcat``
read it whole), so a writer appends a record with one ``write`` and a reader can tell a
complete record from one cut off by a crash.

Every shard is untrusted input. A damaged gzip member is named (its place and bytes:
:class:`ShardDamage`) and the records after it are still read (:func:`scan_shard` goes on at
the next member header); a shard expands to at most :data:`MAX_SHARD_BYTES` and a member to
at most ``MAX_RECORD_BYTES`` when decompressed (read with ``max_length``, never whole); a
record read from a tournament's ``records/`` is checked against its line of
``matches.jsonl`` (:func:`record_disagreement`).

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
import stat
import zlib
from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple

from .core.atomic_files import check_output_path
from .core.errors import RecordError
from .core.records import (
    GZIP_RECORDS_SUFFIX,
    MAX_RECORD_BYTES,
    is_gzip_records_name,
    load_record,
    parse_record,
    read_record_bytes,
    record_shape_problem,
    record_text,
    replay_match,
)
from .core.validation import (
    DuplicateKeyError,
    as_bool,
    as_int,
    dump_json,
    is_bool,
    parse_json,
    short_repr,
)

SHARD_SUFFIXES = (".jsonl", ".jsonl.gz")
#: a tournament's ``records/`` folder: shard ``k`` holds the matches with schedule index
#: ``k * SHARD_SIZE`` to ``(k + 1) * SHARD_SIZE - 1``
RECORDS_DIR = "records"
SHARD_SIZE = 1000
#: schedule indices a shard name holds: four digits of shards (``records-9999``) of
#: :data:`SHARD_SIZE` matches, the ``--matches`` limit (``MAX_MATCHES``, 10**7)
MAX_SCHEDULE_INDEX = 10_000 * SHARD_SIZE - 1


def shard_name(index: int) -> str:
    """The shard of a tournament's ``records/`` that holds the match with schedule ``index``.

    >>> shard_name(0), shard_name(12345)
    ('records-0000.jsonl.gz', 'records-0012.jsonl.gz')
    """
    # -1 was named 'records--001.jsonl.gz', and 10**30 a shard no tournament writes
    index = as_int("index", index, 0, MAX_SCHEDULE_INDEX)
    return f"records-{index // SHARD_SIZE:04d}.jsonl.gz"


def is_shard(path: str | os.PathLike) -> bool:
    """Whether ``path`` names a file of many records (by its suffix, in any case)."""
    return os.fspath(path).lower().endswith(SHARD_SUFFIXES)


def encode_record(record: dict) -> bytes:
    """One record as one gzip member holding one JSON line (what a shard appends); JSON has
    no NaN, so a value that is not JSON is a ``ValueError`` (``TypeError`` for a type, and
    for a record that is not a JSON object, ``None`` among them), and its keys must be text
    (:func:`~dominoes_env.core.validation.dump_json`: ``{1: 2, "1": 3}`` would be a line
    holding a key twice, which the shard's readers refuse)."""
    if not isinstance(record, dict):
        raise TypeError(f"a record is a dict, not {type(record).__name__}")
    return _gzip_line(dump_json(record, (",", ":")))


def _gzip_line(text: str) -> bytes:
    return gzip.compress(text.encode() + b"\n", compresslevel=6, mtime=0)


def append_records(path: str | os.PathLike, records: Iterable[dict]) -> None:
    """Append records to a ``.jsonl.gz`` shard (each as its own gzip member) and flush.

    Every record is checked before anything is written, as :func:`write_record` checks one
    (a record's shape, JSON without NaN): :class:`RecordError` naming the record's place (1:
    the first), and the shard is left as it was (so ``{}`` or ``"x"`` never becomes a record
    no reader takes). ``path`` must have a ``.jsonl.gz`` name and must not be a symbolic link, a
    folder, a device or a FIFO (``ValueError``)."""
    text = check_output_path(path, overwrite=True)
    if not is_gzip_records_name(text):
        raise ValueError(f"path {short_repr(text)}: records are appended to a "
                         f"{GZIP_RECORDS_SUFFIX} shard")
    members = []
    for i, record in enumerate(records, 1):
        try:
            members.append(_gzip_line(record_text(record, separators=(",", ":"))))
        except RecordError as err:
            raise RecordError(f"record {i}: {err}") from None
    with open(path, "ab") as f:
        f.write(b"".join(members))
        f.flush()


# -- reading a shard: every readable member, the damaged ones named --------------------------
#: the most a shard may expand to when decompressed, all its members together (a record of a
#: match to 250 is a few kilobytes: a shard of 1,000 is a few megabytes); one member expands to
#: at most :data:`~dominoes_env.core.records.MAX_RECORD_BYTES`, what a ``.json`` record may hold
MAX_SHARD_BYTES = 4 * MAX_RECORD_BYTES
#: the most places a shard may have where a gzip member starts but cannot be read (each
#: damaged member is one, or a few) before it is refused whole
MAX_DAMAGED = 10_000
GZIP_MAGIC = b"\x1f\x8b\x08"  #: how every gzip member starts (the magic bytes and deflate)
_FEED, _MAX_FEED = 1 << 12, 1 << 20  # compressed bytes handed to the decompressor at a time
_INCOMPLETE = "an incomplete gzip member (the data ends inside it)"


class ShardDamage(NamedTuple):
    """A stretch of a shard that holds no readable gzip member (skipped by the readers)."""

    member: int  #: its place among the shard's members (1: the first), counted as one
    offset: int  #: the byte where it starts
    size: int  #: its length in bytes
    reason: str  #: what is wrong there

    def __str__(self) -> str:
        return (f"gzip member {self.member} (bytes {self.offset:,} to "
                f"{self.offset + self.size - 1:,}) is damaged: {self.reason}")


class ShardCut(NamedTuple):
    """The member a shard's data ends inside (cut off by a crash while appending, or a copy
    cut short): no damage to the records before it, but a record looked for may be in it."""

    name: str  #: the shard's file name
    member: int  #: its place among the shard's members (1: the first)
    offset: int  #: the byte where it starts
    size: int  #: its length in bytes, to the end of the data

    def __str__(self) -> str:
        return (f"{self.name} is cut short: it ends inside gzip member {self.member} (bytes "
                f"{self.offset:,} to {self.offset + self.size - 1:,})")


class ShardScan(NamedTuple):
    """What :func:`scan_shard` found in a shard's bytes."""

    members: list[bytes]  #: every readable member, decompressed, in file order
    offsets: list[int]  #: the byte where each of them starts
    damaged: list[ShardDamage]  #: unreadable stretches between (or after) them
    end: int  #: where the shard stops being whole: after it, a member cut off by a crash


class _Oversize(Exception):
    pass


def _inflate(view: memoryview, pos: int, limit: int, spent: list[int]) -> tuple[bytes, int] | None:
    """The gzip member at ``pos`` decompressed and the offset after it; ``None`` when the data
    ends inside it; ``zlib.error`` when it is not a valid member; :class:`_Oversize` past
    ``limit`` bytes. ``spent`` counts the work: ``[0]`` the bytes decompressed, ``[1]`` the
    compressed bytes read (a member's own, or all that a failed attempt was given)."""
    d = zlib.decompressobj(wbits=31)
    parts: list[bytes] = []
    size = 0
    step = _FEED  # small at first: what follows the member is copied to unused_data
    while True:
        if pos >= len(view):
            return None
        feed = view[pos : pos + step]
        pos += len(feed)
        spent[1] += len(feed)
        step = min(2 * step, _MAX_FEED)
        # max_length one past the limit: a longer member stops here, never fills memory
        chunk = d.decompress(feed, limit - size + 1)
        size += len(chunk)
        spent[0] += len(chunk)
        if size > limit:
            raise _Oversize
        parts.append(chunk)
        if d.eof:
            spent[1] -= len(d.unused_data)
            return b"".join(parts), pos - len(d.unused_data)


def _zlib_reason(err: zlib.error) -> str:
    text = str(err)
    return text.split(": ", 1)[1] if ": " in text else text


def scan_shard(data: bytes, name: str = "the shard") -> ShardScan:
    """Every readable gzip member of a shard's bytes, decompressed: a damaged member is named
    (:class:`ShardDamage`) and the scan goes on at the next member header after it, so one
    damaged record never hides the records after it. A member cut off at the very end (a
    crash while appending) is no damage: :attr:`ShardScan.end` is where it starts.

    :class:`~dominoes_env.core.errors.RecordError` when the shard expands to more than
    :data:`MAX_SHARD_BYTES`, or when its damage would take more than :data:`MAX_DAMAGED`
    attempts (or more than two reads of the shard) to pass over; a member expanding to more
    than :data:`~dominoes_env.core.records.MAX_RECORD_BYTES` is damaged.

    >>> one, two = encode_record({"n": 1}), encode_record({"n": 2})
    >>> scan = scan_shard(one + b"garbage" + two + two[:9])
    >>> scan.members, scan.offsets == [0, len(one) + 7], scan.end == len(one + b"garbage" + two)
    ([b'{"n":1}\\n', b'{"n":2}\\n'], True, True)
    >>> print(scan.damaged[0])
    gzip member 2 (bytes 28 to 34) is damaged: incorrect header check
    """
    if not isinstance(data, bytes):
        # a bytes-like object (memoryview, bytearray, a numpy array) has no .find: read its bytes
        try:
            data = memoryview(data).tobytes()
        except TypeError:
            raise TypeError(f"a shard's data must be bytes (or bytes-like), not "
                            f"{type(data).__name__}") from None
    view = memoryview(data)
    members: list[bytes] = []
    offsets: list[int] = []
    damaged: list[ShardDamage] = []
    spent = [0, 0]
    pos = failed = 0
    bad: tuple[int, str] | None = None  # (start, reason) of the unreadable stretch being skipped
    while pos < len(data):
        room = min(MAX_RECORD_BYTES, MAX_SHARD_BYTES - spent[0])
        try:
            found = _inflate(view, pos, room, spent)
            reason = _INCOMPLETE
        except zlib.error as err:
            found, reason = None, _zlib_reason(err)
        except _Oversize:
            if room < MAX_RECORD_BYTES:
                raise RecordError(
                    f"{name!r} expands to more than {MAX_SHARD_BYTES:,} bytes when decompressed "
                    f"(at gzip member {len(members) + 1}, byte {pos:,}); a shard of records is "
                    "at most that") from None
            found, reason = None, (f"it expands to more than {MAX_RECORD_BYTES:,} bytes (a "
                                   "record is at most that)")
        if found is not None:
            if bad is not None:
                damaged.append(ShardDamage(len(members) + len(damaged) + 1, bad[0], pos - bad[0],
                                           bad[1]))
                bad = None
            members.append(found[0])
            offsets.append(pos)
            pos = found[1]
            continue
        failed += 1
        if failed > MAX_DAMAGED or spent[1] > 2 * len(data) + MAX_RECORD_BYTES:
            # a few damaged members cost a few reads of them; this is not a shard of records
            raise RecordError(f"{name!r} is not a shard of records: past byte {pos:,}, gzip "
                              "members start again and again but none can be read")
        if bad is None:
            bad = (pos, reason)
        pos = data.find(GZIP_MAGIC, pos + 1)
        if pos < 0:
            break
    end = len(data)
    if bad is not None:
        if bad[1] == _INCOMPLETE:  # a member the data ends inside: a crash cut it off
            end = bad[0]
        else:
            damaged.append(ShardDamage(len(members) + len(damaged) + 1, bad[0],
                                       len(data) - bad[0], bad[1]))
    return ShardScan(members, offsets, damaged, end)


def scan_gzip_members(data: bytes) -> tuple[list[bytes], int]:
    """The complete members of a gzip byte string (decompressed) up to the first one that
    cannot be read, and the offset where that whole part ends (see :func:`scan_shard`, which
    goes on past a damaged member and names it)."""
    scan = scan_shard(data)
    if not scan.damaged:
        return scan.members, scan.end
    first = scan.damaged[0]
    return scan.members[: first.member - 1], first.offset


def _entries(path: str) -> Iterator[tuple[str, Any]]:
    """A record file's lines in order, as ``("line", (where, bytes))``, with each damaged
    stretch of a ``.jsonl.gz`` shard in its place as ``("damage", ShardDamage)`` and, last, the
    member its data ends inside as ``("cut", ShardCut)``."""
    data = read_record_bytes(path)
    if not path.lower().endswith(".gz"):
        for number, line in enumerate(data.splitlines(), 1):
            if line.strip():
                yield "line", (f"{path}:{number}", line)
        return
    scan = scan_shard(data, path)
    if data and not scan.members:
        why = f" ({scan.damaged[0]})" if scan.damaged else ""
        raise RecordError(f"{path!r} is not a gzip file of records{why}")
    places = sorted([*zip(scan.offsets, scan.members, strict=True),
                     *((d.offset, d) for d in scan.damaged)], key=lambda place: place[0])
    for number, (_, item) in enumerate(places, 1):
        if isinstance(item, ShardDamage):
            yield "damage", item
            continue
        lines = [line for line in item.splitlines() if line.strip()]
        for j, line in enumerate(lines, 1):
            where = f"{path} (gzip member {number}" + (f", line {j})" if len(lines) > 1 else ")")
            yield "line", (where, line)
    if scan.end < len(data):
        yield "cut", ShardCut(os.path.basename(path), len(places) + 1, scan.end,
                              len(data) - scan.end)


def game_record(value: Any, where: str) -> dict:
    """``value`` (a parsed JSON file or line) when it has the shape of a game record: an
    object with a ``rules`` object and a ``hands`` list (what is inside is checked as the
    record replays: :func:`~dominoes_env.core.records.record_rules`). :class:`RecordError`
    naming ``where`` and what is wrong otherwise: a tournament's ``config.json`` or
    ``summary.json`` read as a record came back as "one record"."""
    problem = record_shape_problem(value)
    if problem is not None:
        raise RecordError(f"{where!r}: {problem}")
    return value


def _path_text(path: Any) -> str:
    """``path`` (``str``, ``bytes`` or ``os.PathLike``) as text; ``TypeError`` naming the
    parameter otherwise (bytes such as ``b"one.json"`` are decoded as a file name)."""
    try:
        return os.fsdecode(path)
    except TypeError:
        raise TypeError(f"path must be a str, bytes or os.PathLike, not "
                        f"{type(path).__name__}") from None


def _parse_line(where: str, line: bytes) -> dict:
    return game_record(parse_record(line, where), where)


def iter_records(path: str | os.PathLike, *, skip_damaged: bool = False) -> Iterator[dict]:
    """Every record in a file: the one of a ``.json`` file, or each line of a shard (a line cut
    off by a crash at the end of a ``.jsonl.gz`` shard is skipped).

    A damaged gzip member of a shard is a :class:`RecordError` naming it (its place and bytes)
    when it is reached; ``skip_damaged=True`` goes on to the records after it instead."""
    skip_damaged = as_bool("skip_damaged", skip_damaged)
    path = _path_text(path)
    if not is_shard(path):
        yield game_record(load_record(path), path)
        return
    for kind, item in _entries(path):
        if kind == "cut":  # what a crash while appending leaves: no record lost before it
            continue
        if kind == "damage":
            if skip_damaged:
                continue
            raise RecordError(f"{path!r}: {item} (the records after it are read with "
                              "skip_damaged=True; resuming its tournament repairs the shard)")
        yield _parse_line(*item)


def _matches(record: Any, match: str) -> bool:
    meta = record.get("match") if isinstance(record, dict) else None
    if not isinstance(meta, dict):
        return False
    index, key = meta.get("index"), meta.get("key")
    return (type(index) is int and str(index) == match) or (isinstance(key, str) and key == match)


def _pick(path: str, match: str) -> tuple[list[dict], list[ShardDamage | ShardCut]]:
    """The records of ``match`` (index or key) in a shard, and the shard's damaged members and
    the member its data ends inside (any of which may have held the record)."""
    found: list[dict] = []
    damaged: list[ShardDamage | ShardCut] = []
    for kind, item in _entries(path):
        if kind in ("damage", "cut"):
            damaged.append(item)
            continue
        record = parse_record(item[1], item[0])
        if _matches(record, match):  # another line's faults are not this record's
            found.append(game_record(record, item[0]))
    return found, damaged


def _none_found(path: str, match: str, damaged: list[ShardDamage | ShardCut]) -> RecordError:
    """The error for a record not found, naming the damaged members and the cut-off ones that
    may have held it (a shard cut short is never reported as if whole and without it)."""
    broken = [d for d in damaged if isinstance(d, ShardDamage)]
    notes = [str(cut) for cut in damaged if isinstance(cut, ShardCut)]
    if broken:
        notes.insert(0, f"{broken[0]}" + (f" (and {len(broken) - 1} more)" if len(broken) > 1
                                          else ""))
    note = ("" if not notes else f"; {notes[0]}, which may have held it" if len(notes) == 1
            else f"; {'; '.join(notes)} (each may have held it)")
    return RecordError(f"{path!r} holds no record of match {match!r}{note}")


def _one(path: str, match: str, line: dict | None = None) -> dict:
    """The one record of ``match`` in the shard ``path``, checked against its ``line`` of
    ``matches.jsonl`` when there is one."""
    found, damaged = _pick(path, match)
    if not found:
        raise _none_found(path, match, damaged)
    if len(found) > 1:
        raise RecordError(f"{path!r} holds {len(found)} records of match {match!r}; a match "
                          "has one (resuming its tournament repairs the shard)")
    if line is not None:
        try:  # a record that cannot replay says so: no line of matches.jsonl is at fault
            record_ends(found[0])
        except RecordError as err:
            raise RecordError(f"{path!r}: the record of match {match!r} does not replay "
                              f"({err})") from None
        problem = record_disagreement(found[0], line)
        if problem:
            raise RecordError(f"{path!r}: the record of match {match!r} disagrees with "
                              f"{MATCHES_FILE} ({problem}); resuming its tournament plays "
                              "the match again, which repairs the shard or names the changed "
                              "line")
    return found[0]


# -- a tournament's records against its matches.jsonl ---------------------------------------
#: a tournament's file of finished matches, one JSON object per line (agents.tournament)
MATCHES_FILE = "matches.jsonl"
_MAX_LINE = 1 << 20  # the longest line of matches.jsonl looked at (a line is ~300 bytes)


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def record_disagreement(record: Any, line: Any) -> str | None:
    """What in a tournament's game record disagrees with its match's ``line`` of
    ``matches.jsonl``, or ``None``: the record's ``match`` field must repeat the line's
    ``index``, ``key``, ``seats`` and ``seed``, and its replay must end with the line's
    ``scores``, ``winner`` and number of ``hands`` (a record the rules forbid disagrees too).

    >>> from dominoes_env.core import MatchState
    >>> meta = {"index": 0, "key": "k", "seats": ["a", "b"], "seed": 5}
    >>> rec = dict(MatchState(seed=1).to_record(), match=meta)  # one hand dealt, no move yet
    >>> line = dict(meta, scores=[0, 0], winner=None, hands=1)
    >>> record_disagreement(rec, line) is None, record_disagreement(rec, dict(line, seed=6))
    (True, 'its seed 5 is not the 6 of matches.jsonl')
    """
    meta = record.get("match") if isinstance(record, dict) else None
    if not isinstance(meta, dict):
        return "it has no 'match' field"
    if not isinstance(line, dict):
        return f"its line of {MATCHES_FILE} is not a JSON object"
    for field in ("index", "key", "seats", "seed"):
        if not _same(meta.get(field), line.get(field)):
            return (f"its {field} {_show(meta.get(field))} is not the "
                    f"{_show(line.get(field))} of {MATCHES_FILE}")
    try:
        ends = record_ends(record)
    except RecordError as err:
        return f"it does not replay: {err}"
    wanted = (line.get("scores"), line.get("winner"), line.get("hands"))
    if ends != wanted:
        return (f"its replay ends with scores {ends[0]}, winner {ends[1]} after {ends[2]} hands; "
                f"{MATCHES_FILE} says {_show(wanted[0])}, {_show(wanted[1])}, "
                f"{_show(wanted[2])}")
    return None


def record_ends(record: Any) -> tuple[list[int], int | None, int]:
    """What a game record's replay ends with: its scores, its winner and its number of hands,
    as a line of ``matches.jsonl`` says them. :class:`RecordError` if it does not replay."""
    match, summaries = replay_match(record)
    return list(match.scores), match.winner, len(summaries)


def record_dispute(record: Any, line: Any) -> tuple[list[int], int | None, int] | None:
    """What the replay of a game record ends with (:func:`record_ends`) when that is all that
    disagrees with its match's ``line`` of ``matches.jsonl``: the record is whole and a match
    of that line, and either it or the line's outcome was changed since, which only playing the
    match again can tell. ``None`` when they agree, or when the record disagrees otherwise."""
    if not isinstance(line, dict) or record_disagreement(record, line) is None:
        return None
    try:
        scores, winner, hands = record_ends(record)
    except RecordError:
        return None
    own = dict(line, scores=scores, winner=winner, hands=hands)
    return (scores, winner, hands) if record_disagreement(record, own) is None else None


def _show(value: Any) -> str:
    try:
        text = json.dumps(value)
    except (ValueError, TypeError, RecursionError):
        text = repr(type(value))
    return text if len(text) <= 60 else text[:57] + "..."


def _match_line(path: str, match: str) -> dict | None:
    """The line of a ``matches.jsonl`` whose index or key is ``match`` (lines that are not JSON
    objects, or longer than a match line can be, are passed over); :class:`RecordError` if a
    second line of that match says something else (a tournament writes each match once)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as err:
        raise RecordError(f"cannot read {path!r}: {err.strerror}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise RecordError(f"cannot read {path!r}: it is not a regular file")
    found = None
    with os.fdopen(fd, "rb") as f:
        while raw := f.readline(_MAX_LINE):
            while not raw.endswith(b"\n") and len(raw) == _MAX_LINE:  # too long: pass over it
                raw = f.readline(_MAX_LINE)
                if not raw.endswith(b"\n") and len(raw) < _MAX_LINE:
                    break
            try:
                line = parse_json(raw)
            except DuplicateKeyError as err:  # this match's line? another reader may take
                try:                          # the other value
                    line = json.loads(raw)
                except (ValueError, RecursionError):  # nested too deeply, or a huge number
                    continue
                if isinstance(line, dict) and _matches({"match": line}, match):
                    raise RecordError(f"{path!r}: the line of match {match!r} is damaged "
                                      f"({err})") from None
                continue
            except (ValueError, RecursionError):
                continue
            if isinstance(line, dict) and _matches({"match": line}, match):
                if found is None:
                    found = line
                elif line != found:
                    raise RecordError(f"{path!r} holds two different lines of match "
                                      f"{match!r}; a tournament writes each match once")
    return found


def _tournament_of(folder: str) -> str | None:
    """The tournament directory whose ``matches.jsonl`` a records folder belongs to."""
    top = os.path.dirname(os.path.abspath(folder))
    if os.path.basename(os.path.abspath(folder)) != RECORDS_DIR:
        return None
    return top if os.path.isfile(os.path.join(top, MATCHES_FILE)) else None


def _find_in_dir(folder: str, match: str | None) -> dict:
    """A record from a tournament directory (or its ``records/`` folder) by match index/key,
    checked against its line of ``matches.jsonl``."""
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
    top = _tournament_of(folder)
    if top is not None:
        matches = os.path.join(top, MATCHES_FILE)
        line = _match_line(matches, match)
        if line is None:
            raise RecordError(f"{matches!r} has no match {match!r}")
        index = line.get("index")
        if type(index) is not int or not 0 <= index <= MAX_SCHEDULE_INDEX:
            raise RecordError(f"{matches!r}: the line of match {match!r} has no index")
        name = shard_name(index)
        if name not in shards:
            raise RecordError(f"{folder!r} holds no record of match {match!r} (its shard "
                              f"{name} is missing)")
        return _one(os.path.join(folder, name), match, line)
    if (match.isascii() and match.isdigit() and len(match) < 20
            and int(match) <= MAX_SCHEDULE_INDEX
            and shard_name(int(match)) in shards):  # the shard it must be in first
        shards.remove(shard_name(int(match)))
        shards.insert(0, shard_name(int(match)))
    damaged: list[ShardDamage | ShardCut] = []
    for name in shards:
        found, bad = _pick(os.path.join(folder, name), match)
        damaged += bad
        if found:
            return _one(os.path.join(folder, name), match)
    raise _none_found(folder, match, damaged)


def read_record(path: str | os.PathLike, match: str | int | None = None) -> dict:
    """One record from a file. In a shard, ``match`` picks it by the tournament's match index
    or key (a shard of one record needs none); ``path`` may also be a tournament directory
    run with ``--save-records`` (or its ``records/`` folder). A record read from a
    tournament's ``records/`` is checked against its line of ``matches.jsonl``
    (:func:`record_disagreement`). :class:`RecordError` when there is no such record, the
    choice is ambiguous, or the record disagrees; a damaged gzip member that may have held it
    is named."""
    path = _path_text(path)
    if match is not None and (is_bool(match) or not isinstance(match, (str, int))):
        raise TypeError(f"match must be a match index or key (int or str), not "  # True was
                        f"{short_repr(match)}")                                   # 'True'
    if os.path.isdir(path):
        return _find_in_dir(path, None if match is None else str(match))
    if not is_shard(path):
        data = read_record_bytes(path)  # a path that is not a record file says so first: one
        if match is not None:           # that did not exist was said to "hold one record"
            raise RecordError(f"{path!r} holds one record; --match applies to .jsonl(.gz) shards")
        return game_record(parse_record(data, path), path)
    if match is None:
        records, damaged = [], []
        for kind, item in _entries(path):
            if kind == "damage":
                damaged.append(item)
            elif kind == "line":
                records.append(_parse_line(*item))
        if len(records) == 1 and not damaged:
            return records[0]
        if not records and not damaged:  # was "holds 0 records; choose one with --match"
            raise RecordError(f"{path!r} holds no record")
        extra = f" and {len(damaged)} damaged gzip member(s) ({damaged[0]})" if damaged else ""
        raise RecordError(f"{path!r} holds {len(records)} records{extra}; choose one with "
                          "--match INDEX (or KEY) from matches.jsonl")
    match = str(match)
    top = _tournament_of(os.path.dirname(os.path.abspath(path)))
    line = None if top is None else _match_line(os.path.join(top, MATCHES_FILE), match)
    return _one(path, match, line)

