"""Game records: write a played hand or match as JSON, read one back, replay it exactly.

The format is the one in ``docs/rules.md`` ("Game records")::

    {"rules": {...RuleConfig fields...},
     "hands": [{"leader": 0, "hands": [[[6, 6], ...], ...], "boneyard": [[0, 2], ...],
                "moves": [[0, [6, 6], null], [1, [6, 1], "left"], ...]}]}

Draws and passes are not written: they follow from the deal. A lead's tile is written as it
lies (left half first); other plays as ``[low, high]``. Replaying checks every move against
the rules and raises :class:`RecordError` naming the hand, the move and the reason.

>>> m = MatchState(RuleConfig(target_score=30), seed=1)
>>> while not m.is_over:
...     _ = m.play(m.legal_actions()[0])
>>> replay_record(m.to_record())["scores"] == m.scores
True
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from typing import Any, NamedTuple

from .atomic_files import atomic_write, check_output_path
from .errors import IllegalMoveError, RecordError
from .hand import HandState
from .match import MatchState
from .moves import END_NAMES, end_of, tile_of
from .rules import RuleConfig
from .validation import (
    DuplicateKeyError,
    NestedTooDeeplyError,
    dump_json,
    parse_json,
    short_repr,
)

RECORD_KEYS = ("leader", "hands", "boneyard", "moves")


# -- writing -------------------------------------------------------------------------------
def hand_record(hand: HandState) -> dict[str, Any]:
    """One hand as a record entry: its deal and the plays so far."""
    ts = hand.rules.tiles
    dealt_hands, boneyard = hand.dealt
    moves = []
    for i, (seat, code, flip) in enumerate(hand.moves):
        t = ts.tiles[tile_of(code)]
        if i == 0:
            moves.append([seat, [t.high, t.low] if flip else [t.low, t.high], None])
        else:
            moves.append([seat, [t.low, t.high], END_NAMES[end_of(code)]])
    return {
        "leader": hand.leader,
        "hands": [[list(t) for t in ts.mask_tiles(mask)] for mask in dealt_hands],
        "boneyard": [list(ts.tiles[i]) for i in boneyard],
        "moves": moves,
    }


def match_record(match: MatchState) -> dict[str, Any]:
    """The whole match so far (finished hands, then the current one if it is not among them)."""
    hands = list(match.finished_hands)
    if match.hand is not None and (not hands or hands[-1] is not match.hand):
        hands.append(match.hand)
    return {"rules": match.rules.to_dict(), "hands": [hand_record(h) for h in hands]}


#: the name a gzip file of records ends with (a tournament's shard), in any case
GZIP_RECORDS_SUFFIX = ".jsonl.gz"


def is_gzip_records_name(path: str | os.PathLike) -> bool:
    """Whether ``path``'s name ends with :data:`GZIP_RECORDS_SUFFIX`, in any case: a file
    system may keep ``X.JSONL.GZ`` as it was written, and such a name is written as a gzip
    shard too, never as plain JSON."""
    return os.fspath(path).lower().endswith(GZIP_RECORDS_SUFFIX)


def check_record_name(path: str | os.PathLike, what: str = "path") -> None:
    """``ValueError`` naming ``what`` when ``path``'s name says a format a record is not written
    in: a ``.gz`` other than a ``.jsonl.gz`` shard (the readers read any other name as JSON
    text, so ``r.json.gz`` would be plain JSON under a gzip name)."""
    name = os.fspath(path)
    if name.lower().endswith(".gz") and not is_gzip_records_name(name):
        raise ValueError(f"{what} {short_repr(name)}: a record is written as .json or .jsonl "
                         f"text, or gzipped as a {GZIP_RECORDS_SUFFIX} shard; not another .gz")


def record_shape_problem(value: Any) -> str | None:
    """What keeps ``value`` from having the shape of a game record (``None``: nothing): an
    object with a ``rules`` object and a ``hands`` list (what is inside is checked as the
    record replays: :func:`record_rules`). The readers and :func:`write_record` share it."""
    if not isinstance(value, dict):
        return "a record must be a JSON object with 'rules' and 'hands'"
    missing = [field for field in ("rules", "hands") if field not in value]
    return (f"the record lacks the field {missing[0]!r}" if missing
            else "'rules' must be a JSON object" if not isinstance(value["rules"], dict)
            else "'hands' must be a list of hands" if not isinstance(value["hands"], list)
            else None)


def record_text(record: Any, separators: tuple[str, str] | None = None) -> str:
    """The JSON text of ``record`` (``json.dumps`` with ``separators``), checked as every
    record writer checks it: a game record's shape (:func:`record_shape_problem`) and JSON
    that reads back as the record (:func:`~dominoes_env.core.validation.dump_json`: no NaN,
    which JSON has no word for, and text keys only, since ``{1: 2, "1": 3}`` would be an
    object holding a key twice, which no reader takes); :class:`RecordError` naming the
    problem."""
    problem = record_shape_problem(record)
    if problem is not None:
        raise RecordError(problem)
    try:
        return dump_json(record, separators)
    except (TypeError, ValueError, RecursionError) as err:
        raise RecordError(f"not JSON ({err})") from None


def write_record(record: dict[str, Any], path: str | os.PathLike, *,
                 overwrite: bool = True) -> None:
    """Write a record atomically (a temporary file renamed into place: never half a file), in
    the format its name says: JSON text, or a one-record gzip shard for a ``.jsonl.gz`` name
    (as a tournament's shards hold records; other ``.gz`` names are a ``ValueError``).

    ``record`` has a game record's shape (:func:`record_shape_problem`), is JSON (no NaN) and
    replays, as the JSON written, by the rules (:func:`replay_steps`, the check of ``replay``
    and the viewer): :class:`RecordError` naming the problem otherwise (``{}``, a record whose
    hand 0 has leader 5 or an illegal play), so nothing is written that no replay takes.
    ``path`` follows :func:`~dominoes_env.core.atomic_files.check_output_path`: a symbolic
    link, a folder, a device or a FIFO is a ``ValueError`` (never replaced by the file), and
    ``overwrite=False`` never replaces an existing file: ``FileExistsError`` instead."""
    check_output_path(path, overwrite=overwrite)
    check_record_name(path)
    if not isinstance(record, dict):
        raise TypeError(f"record must be a game record (a dict with 'rules' and 'hands'), "
                        f"not {type(record).__name__}")
    try:
        text = record_text(record)
    except RecordError as err:
        raise RecordError(f"record: {err}") from None
    try:
        for _ in replay_steps(json.loads(text)):  # what a reader will read back
            pass
    except RecordError as err:
        raise RecordError(f"record: {err}") from None
    data = (text + "\n").encode()
    if is_gzip_records_name(path):
        import gzip

        data = gzip.compress(data, compresslevel=6, mtime=0)
    with atomic_write(path, "wb", overwrite=overwrite) as f:
        f.write(data)


# -- reading and replaying -----------------------------------------------------------------
#: the largest record file :func:`load_record` reads (a match to 250 is a few kilobytes)
MAX_RECORD_BYTES = 64 * 1024 * 1024


def load_record(path: str | os.PathLike) -> dict[str, Any]:
    """Read a record file; :class:`RecordError` if it cannot be read or is not JSON.

    Only a regular file of at most :data:`MAX_RECORD_BYTES` in UTF-8 is read (a FIFO, a device
    such as ``/dev/zero`` or a directory is refused without blocking); integers of more than
    4,300 digits and nesting deeper than Python's recursion limit are refused as not a record.
    """
    name = os.fspath(path)
    return parse_record(read_record_bytes(name), name)


def read_record_bytes(path: str | os.PathLike) -> bytes:
    """The bytes of a record file, read as :func:`load_record` reads them (regular files of at
    most :data:`MAX_RECORD_BYTES` only, never blocking on a FIFO or a device)."""
    name = os.fspath(path)
    try:
        # O_NONBLOCK: opening a FIFO with no writer must not wait; fstat then refuses it
        fd = os.open(name, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as err:
        raise RecordError(f"cannot read {name!r}: {err.strerror}") from None
    except (ValueError, TypeError) as err:  # an embedded NUL byte, a path of the wrong type
        raise RecordError(f"cannot read {short_repr(name)}: {err}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = "a directory" if stat.S_ISDIR(info.st_mode) else "not a regular file"
            raise RecordError(f"cannot read {name!r}: it is {kind}")
        if info.st_size > MAX_RECORD_BYTES:
            raise RecordError(f"{name!r} is {info.st_size:,} bytes; a record is at most "
                              f"{MAX_RECORD_BYTES:,}")
        chunks, size = [], 0
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            size += len(chunk)
            if size > MAX_RECORD_BYTES:  # it grew while being read
                raise RecordError(f"{name!r} is larger than {MAX_RECORD_BYTES:,} bytes")
            chunks.append(chunk)
    except OSError as err:
        raise RecordError(f"cannot read {name!r}: {err.strerror}") from None
    finally:
        os.close(fd)
    return b"".join(chunks)


def parse_record(data: bytes | str, name: str = "the record") -> Any:
    """Parse a record's JSON text (UTF-8 bytes, a byte-order mark allowed, or ``str``);
    :class:`RecordError` on anything that is not JSON."""
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8-sig")
        except UnicodeDecodeError as err:
            raise RecordError(f"{name!r} is not UTF-8 text (byte {err.start}); "
                              "a record is JSON in UTF-8") from None
    try:
        return parse_json(data)
    except json.JSONDecodeError as err:
        raise RecordError(f"{name!r} is not valid JSON: {err}") from None
    except DuplicateKeyError as err:
        raise RecordError(f"{name!r} is not a record: {err}") from None
    except NestedTooDeeplyError:
        raise RecordError(f"{name!r} is nested too deeply to be a record") from None
    except ValueError as err:  # an integer beyond Python's digit limit for str <-> int
        if "digits" in str(err):
            raise RecordError(f"{name!r} holds an integer too long to be a record "
                              "(more than 4,300 digits)") from None
        raise RecordError(f"{name!r} is not a record: {err}") from None


def _show(value: Any, limit: int = 80) -> str:
    """A short JSON rendering of part of a record for messages (never fails)."""
    try:
        text = json.dumps(value)
    except (ValueError, TypeError, RecursionError):
        return short_repr(value, limit)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def record_rules(record: Any) -> tuple[RuleConfig, list]:
    """The rules and the list of hands of a record (a dict in the records format), checked:
    every reader of records (the core replay, the JAX replay, the viewer, the decision
    datasets) and :func:`write_record` start here. A record holds at least one hand."""
    if not isinstance(record, dict):
        raise RecordError("a record must be a JSON object with 'rules' and 'hands'")
    for key in ("rules", "hands"):
        if key not in record:
            raise RecordError(f"the record lacks the field {key!r}")
    try:
        rules = RuleConfig.from_dict(record["rules"])
    except (ValueError, TypeError) as err:
        raise RecordError(f"rules: {err}") from None
    if not isinstance(record["hands"], list):
        raise RecordError("'hands' must be a list of hands")
    if not record["hands"]:  # was replayed and shown as a match "scores [0, 0], winner null"
        raise RecordError("'hands' is empty: a match record holds at least one hand")
    return rules, record["hands"]


class RecordStep(NamedTuple):
    """One position of a record being replayed (see :func:`replay_steps`).

    ``match`` is the replay's :class:`MatchState`, standing at this position while the step is
    handled; it moves on when the next step is asked for (copy what must outlive the step).
    """

    match: MatchState  #: the match at this position (live: read it before the next step)
    hand: int  #: index of the hand in the record
    move: int  #: moves of this hand played before this position
    seat: int  #: the seat to play (``-1`` once the hand or the match is over)
    code: int | None  #: the action code of the record's next move, ``None`` at a hand's end
    points: int  #: the points that move scores (the hand award not included; 0 at the end)


def replay_steps(record: Any) -> Iterator[RecordStep]:
    """Replay a record position by position, checking every move against the rules.

    Each hand yields one step per position: the first just dealt, one before each of its moves
    (``code`` and ``points`` give that move, played when the next step is asked for), and a
    last one where the record leaves the hand (``code`` is ``None``; ``match.hand.is_over``
    tells whether it was finished). Raises :class:`RecordError` naming the hand, the move and
    the reason at the first thing the rules forbid; a bad move is found before the position it
    is played from is yielded. The replay (:func:`replay_match`), the replay viewers' steps and
    the decision datasets all read records through it.

    >>> m = MatchState(RuleConfig(target_score=30), seed=1)
    >>> while not m.is_over:
    ...     _ = m.play(m.legal_actions()[0])
    >>> record = m.to_record()
    >>> steps = list(replay_steps(record))
    >>> first, last = steps[0], steps[-1]
    >>> (first.hand, first.move, first.seat == record["hands"][0]["leader"]), last.code is None
    ((0, 0, True), True)
    >>> sum(s.code is not None for s in steps) == sum(len(h["moves"]) for h in record["hands"])
    True
    >>> last.match.scores == m.scores and last.match.winner == m.winner
    True
    """
    rules, entries = record_rules(record)
    match = MatchState(rules, auto_deal=False)
    for i, entry in enumerate(entries):
        if match.is_over:
            raise RecordError(f"hand {i}: the match was already won by side {match.winner}")
        if i > 0 and not match.hand.is_over:
            raise RecordError(f"hand {i}: hand {i - 1} is not finished, so no hand may follow it")
        _start_hand(match, entry, i)
        hand = match.hand
        for j, move in enumerate(entry["moves"]):
            code, flip = _check_move(match, move, i, j)
            yield RecordStep(match, i, j, hand.turn, code, hand.points_after(code))
            match.apply_unchecked(code, flip)
        yield RecordStep(match, i, len(entry["moves"]), match.turn, None, 0)


def replay_match(record: Any) -> tuple[MatchState, list[dict[str, Any]]]:
    """Replay a record; returns the match as it stands and a summary per hand (see
    :func:`replay_record`). Raises :class:`RecordError` on anything the rules forbid."""
    match = None
    summaries = []
    points: list[int] = []
    for step in replay_steps(record):
        match = step.match
        if step.code is not None:
            points.append(step.points)
            continue
        hand = match.hand
        award = match.awards[-1] if hand.is_over else None
        summaries.append(
            {
                "move_points": points,
                "end": hand.result[0] if hand.result else None,
                "award": {"side": award[0], "points": award[1]} if award else None,
                "scores": list(match.scores),
            }
        )
        points = []
    return match, summaries


def replay_record(record: Any) -> dict[str, Any]:
    """Replay a record and return the ``python -m dominoes_env replay`` output object:
    ``{"hands": [{"move_points", "end", "award", "scores"}...], "scores", "winner"}``."""
    match, summaries = replay_match(record)
    return {"hands": summaries, "scores": list(match.scores), "winner": match.winner}


def _start_hand(match: MatchState, entry: Any, i: int) -> None:
    if not isinstance(entry, dict):
        raise RecordError(f"hand {i}: must be an object with {', '.join(RECORD_KEYS)}")
    for key in RECORD_KEYS:
        if key not in entry:
            raise RecordError(f"hand {i}: lacks the field {key!r}")
    if not isinstance(entry["moves"], list):
        raise RecordError(f"hand {i}: 'moves' must be a list of [seat, tile, end]")
    rules = match.rules
    leader = entry["leader"]
    if type(leader) is not int or not 0 <= leader < rules.num_players:
        raise RecordError(f"hand {i}: leader {short_repr(leader)} is not a seat "
                          f"(0..{rules.num_players - 1})")
    for key in ("hands", "boneyard"):
        if not isinstance(entry[key], list):
            raise RecordError(f"hand {i}: '{key}' must be a list of tiles"
                              + (" per seat" if key == "hands" else ""))
    if i > 0:
        expected = match.next_leader()
        if expected is not None and leader != expected:
            raise RecordError(f"hand {i}: {leader_contradiction(rules, leader, expected)}")
    try:
        hand = HandState.from_tiles(rules, entry["hands"], entry["boneyard"], leader)
    except (ValueError, TypeError) as err:
        raise RecordError(f"hand {i}: bad deal: {err}") from None
    match.start_hand(leader, hand)


def leader_contradiction(rules: RuleConfig, leader: int, expected: int) -> str:
    """Why a record's ``leader`` of a hand contradicts the rules, which name ``expected``
    (:func:`~dominoes_env.core.match.leader_after` the hand before).

    >>> leader_contradiction(RuleConfig(next_leader="rotate"), 0, 1)
    'leader 0 contradicts the rules: the leader rotates one seat each hand'
    """
    why = (
        "the leader rotates one seat each hand"
        if rules.next_leader == "rotate"
        else f"seat {expected} dominoed the previous hand and leads"
    )
    return f"leader {leader} contradicts the rules: {why}"


def _check_move(match: MatchState, move: Any, i: int, j: int) -> tuple[int, bool]:
    """``(code, flipped)`` of move ``j`` of hand ``i`` if the rules allow it now, else
    :class:`RecordError` naming the hand, the move and the reason."""
    where = f"hand {i}, move {j} {_show(move)}"
    if not isinstance(move, list) or len(move) != 3:
        raise RecordError(f"{where}: a move is [seat, [a, b], end]")
    seat, tile, end = move
    if match.is_over:
        raise RecordError(f"{where}: the match was already won by side {match.winner}")
    hand = match.hand
    if hand.is_over:
        raise RecordError(f"{where}: the hand is already over ({hand.result[0]})")
    if type(seat) is not int:
        raise RecordError(f"{where}: the seat {short_repr(seat)} must be an integer")
    if seat != hand.turn:
        raise RecordError(
            f"{where}: it is seat {hand.turn}'s turn, not seat {short_repr(seat)}'s"
            + _forced_note(hand, seat)
        )
    if not isinstance(tile, list) or len(tile) != 2:
        raise RecordError(f"{where}: the tile must be a pair [a, b]")
    if end is not None and hand.lead >= 0 and not (type(end) is str and end in END_NAMES):
        # a record names its ends (the integer constants play takes are no end here), and
        # says so in JSON's words
        raise RecordError(f"{where}: unknown end {short_repr(end)}; allowed: "
                          f"{', '.join(END_NAMES)} (or null for the lead)")
    try:
        return hand.check_move((tuple(tile), end))
    except IllegalMoveError as err:
        raise RecordError(f"{where}: {err.reason}{_boneyard_note(hand, tile)}") from None
    except TypeError as err:
        raise RecordError(f"{where}: {err}") from None


def _forced_note(hand: HandState, seat: Any) -> str:
    last = hand.history[-1] if hand.history else None
    if isinstance(seat, int) and last is not None and last[0] == "pass" and last[1] == seat:
        return f" (seat {seat} could not play and had to pass)"
    return ""


def _boneyard_note(hand: HandState, tile: list) -> str:
    try:
        t = hand.rules.tiles.index(*tile)
    except (ValueError, TypeError):
        return ""
    if t in hand.boneyard_tiles:
        return " (it is still in the boneyard: a seat draws only when it cannot play)"
    return ""
