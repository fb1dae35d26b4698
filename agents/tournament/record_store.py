"""``--save-records``: every match's game record, kept next to ``matches.jsonl``.

Records live in ``DIR/records/records-NNNN.jsonl.gz``: shard ``NNNN`` holds the matches whose
schedule index is in ``[NNNN * 1000, NNNN * 1000 + 999]``. Each line is a game record (the
format of ``docs/rules.md``) with one more field, ``"match": {"index", "key", "seats",
"seed"}``, naming its line in ``matches.jsonl``; each line is its own gzip member, so a shard
is an ordinary gzip file (``zcat`` reads it) that grows by whole records.

Exactness across interruptions: a match's record is appended and flushed *before* its line in
``matches.jsonl``. When a run starts, records cut off by a crash are dropped, and so are records
of matches that ``matches.jsonl`` does not hold (the run was killed between the two writes);
those matches are played again. Matches in ``matches.jsonl`` without a record (a directory
first run without ``--save-records``) are played again for their records, which must agree
with the stored outcome. So after any interruption and a resume, every match in
``matches.jsonl`` has exactly one record and every record one match.

The shards are untrusted input, checked each time a run starts (:meth:`RecordStore.load`): a
damaged gzip member, a record that disagrees with its line of ``matches.jsonl`` (its match
field, its rules) and every copy of a match recorded twice are dropped with a warning, and
those matches are played again for their records. A whole record of the line's match whose
replay ends otherwise than the line says (its scores, winner or hands) is disputed: either was
changed, so the match is played again to tell which (said once the replay has: the record
replaced, or the run stopped). The record is kept until the replay agrees
with the line (then the new record replaces it); a replay that agrees with the record instead
means the line was changed, and the run stops with that said, losing neither.

Read one with ``python -m dominoes_env replay DIR --match INDEX`` (or the shard's path).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from dominoes_env.core import RuleConfig
from dominoes_env.core.atomic_files import atomic_write, check_folder_there, writes_to
from dominoes_env.core.records import read_record_bytes
from dominoes_env.core.validation import DuplicateKeyError, parse_json, short_repr
from dominoes_env.record_io import (
    MATCHES_FILE,
    MAX_SCHEDULE_INDEX,
    RECORDS_DIR,
    encode_record,
    record_disagreement,
    record_dispute,
    scan_shard,
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
        #: what the last :meth:`load` found wrong and dropped, one line each
        self.repairs: list[str] = []
        #: the matches whose record the last :meth:`load` kept but disputes (its replay ends
        #: otherwise than its line says): key -> the scores, winner and hands it ends with
        self.disputed: dict[str, tuple[list[int], int | None, int]] = {}
        #: what to say of each disputed record once its replay agrees with the line and the
        #: record is replaced (said then, not before: a replay that agrees with the record
        #: instead stops the run, and the record stays): key -> the warning
        self.disputes: dict[str, str] = {}

    def load(self, done: Mapping[str, Any] | Iterable[str],
             rules: RuleConfig | None = None) -> set[str]:
        """Keys of the records kept: one per match of ``done`` (``matches.jsonl``'s lines by
        key; keys alone skip the comparison with the lines), every other byte cut from the
        shards (atomically rewritten when anything has to go).

        Every shard is untrusted: a record is kept only when it is the one record of its
        match, in the shard of its index, under ``rules`` (when given) and in agreement with
        its line (:func:`~dominoes_env.record_io.record_disagreement`: the match field,
        and the scores its replay ends with). A damaged gzip member, a record that disagrees
        and every copy of a match recorded twice are dropped, each said in :attr:`repairs`;
        their matches have no record, so the run plays them again for it. A member cut off
        by a crash and the record of a match ``matches.jsonl`` does not hold (the run stopped
        between the two writes) go without a word. :class:`RecordError` for a shard that
        cannot be read at all (too large, not a shard)."""
        lines = dict(done) if isinstance(done, Mapping) else dict.fromkeys(done)
        self.repairs = []
        self.disputed = {}
        self.disputes = {}
        found: set[str] = set()
        if not self.folder.is_dir():
            return found
        for path in sorted(self.folder.glob("records-*.jsonl.gz")):
            where = f"{RECORDS_DIR}/{path.name}"
            data = read_record_bytes(path)
            scan = scan_shard(data, str(path))
            dropped = scan.end < len(data) or bool(scan.damaged)
            self.repairs += [f"{where}: {damage}; dropped" for damage in scan.damaged]
            copies: dict[str, list[tuple[bytes, dict]]] = {}
            for offset, raw in zip(scan.offsets, scan.members, strict=True):
                try:
                    record = parse_json(raw)
                    key = record["match"]["key"]
                    if not isinstance(key, str):
                        raise TypeError
                except DuplicateKeyError as err:
                    self.repairs.append(f"{where}: the record at byte {offset:,} is damaged "
                                        f"({err}); dropped")
                    dropped = True
                    continue
                except (ValueError, KeyError, TypeError, RecursionError):
                    self.repairs.append(f"{where}: the gzip member at byte {offset:,} is not "
                                        "a record of a match; dropped")
                    dropped = True
                    continue
                if key not in lines:  # its match line was never written: no word
                    dropped = True
                    continue
                copies.setdefault(key, []).append((raw, record))
            kept: list[bytes] = []
            for key, recs in copies.items():
                if len(recs) > 1:
                    problem = f"{len(recs)} records of this match"
                elif key in found:  # only without lines: the index is not checked against one
                    problem = "an earlier shard has it"
                else:
                    problem = self._problem(path.name, recs[0][1], lines[key], rules)
                    ends = record_dispute(recs[0][1], lines[key]) if problem else None
                    if ends is not None:  # whole, but ends otherwise than its line: kept
                        self.disputes[key] = (
                            f"{where}: the record of match {key!r} disagreed with "
                            f"{MATCHES_FILE} ({problem}); a replay of the match agrees with "
                            "the line, so the record was changed: replaced by the replay's")
                        self.disputed[key] = ends
                        kept.append(recs[0][0])
                        continue
                if problem:
                    self.repairs.append(f"{where}: the record of match {key!r} dropped "
                                        f"({problem}); the match is played again for it")
                    dropped = True
                    continue
                found.add(key)
                kept.append(recs[0][0])
            if dropped:
                with atomic_write(path, "wb") as f:
                    f.write(b"".join(_recompress(raw) for raw in kept))
        return found

    @staticmethod
    def _problem(shard: str, record: dict, line: Any, rules: RuleConfig | None) -> str | None:
        """What keeps a shard's one record of a match from being kept (``None``: nothing)."""
        index = record["match"].get("index")
        if (type(index) is not int or not 0 <= index <= MAX_SCHEDULE_INDEX
                or shard_name(index) != shard):
            return f"its index {short_repr(index)} does not belong in {shard}"
        if rules is not None:
            try:
                same = RuleConfig.from_dict(record.get("rules")) == rules
            except (ValueError, TypeError):
                same = False
            if not same:
                return "its rules are not this tournament's"
        return None if line is None else record_disagreement(record, line)

    def replace(self, line: dict[str, Any]) -> None:
        """Put the record line of a disputed match (:attr:`disputed`) in its shard in place of
        the record there, in one atomic rewrite of the shard."""
        key = line["match"]["key"]
        del self.disputed[key]
        name = shard_name(line["match"]["index"])
        path = self.folder / name
        handle = self._handles.pop(name, None)
        if handle is not None:  # what this run appended is in the file before it is read
            with writes_to(path):
                handle.close()
        kept = []
        for raw in scan_shard(read_record_bytes(path), str(path)).members:
            try:
                if json.loads(raw)["match"]["key"] == key:
                    continue
            except (ValueError, KeyError, TypeError, RecursionError):
                pass
            kept.append(_recompress(raw))
        with atomic_write(path, "wb") as f:
            f.write(b"".join(kept) + encode_record(line))

    def append(self, line: dict[str, Any]) -> None:
        """Append one record line to its shard and flush it (before ``matches.jsonl``)."""
        name = shard_name(line["match"]["index"])
        handle = self._handles.get(name)
        if handle is None:
            check_folder_there(self.folder)  # its run folder removed: not made again here
            self.folder.mkdir(parents=True, exist_ok=True)
            handle = self._handles[name] = open(self.folder / name, "ab")  # noqa: SIM115
        with writes_to(self.folder / name):
            handle.write(encode_record(line))
            handle.flush()

    def close(self) -> None:
        """Close every shard (each one, even after another's close failed; the first failure
        is raised, naming its shard)."""
        handles, self._handles = self._handles, {}
        failed: OSError | None = None
        for name, handle in handles.items():
            try:
                with writes_to(self.folder / name, check=False):
                    handle.close()
            except OSError as err:
                failed = failed or err
        if failed is not None:
            raise failed


def _recompress(raw: bytes) -> bytes:
    import gzip

    return gzip.compress(raw, compresslevel=6, mtime=0)


def clear_records(out: str | os.PathLike) -> None:
    """Remove the record shards a tournament wrote into the folder ``out`` (and their folder
    when that leaves it empty). ``out`` must be a tournament's run folder, as
    :func:`~agents.tournament.runner.clear_results` checks it (a ``ValueError`` naming it
    otherwise, so a dataset's records are never cleared); a ``records`` that is a symbolic
    link is removed as a link, its target left alone (the shards it leads to, outside
    ``out``, stay)."""
    from dominoes_env.cli_support import RefusedError, clear_run

    from .runner import TOURNAMENT_PROGRAMS, TournamentDirError, tournament_proof

    try:  # checks the folder (only=(): removes nothing)
        clear_run(out, TOURNAMENT_PROGRAMS, proof=tournament_proof, only=())
    except RefusedError as err:
        raise TournamentDirError(str(err)) from None
    folder = Path(out) / RECORDS_DIR
    if folder.is_symlink():
        folder.unlink()
        return
    if not folder.is_dir():
        return
    for path in folder.glob("records-*.jsonl.gz*"):
        if path.is_symlink() or path.is_file():
            path.unlink()
    try:
        folder.rmdir()
    except OSError:
        pass
