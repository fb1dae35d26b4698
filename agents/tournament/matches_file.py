"""Reading a run's ``matches.jsonl`` back: its complete lines, one at a time
(:func:`match_lines`), each checked against the schedule and the rules before it counts
(:func:`load_records`). The file is untrusted input: a line that no match of this tournament
can have written is a :class:`~.results_dir.TournamentDirError` naming it."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from dominoes_env.core import SCORE_UNIT, RuleConfig, match_winner
from dominoes_env.core.validation import (
    DuplicateKeyError,
    is_finite_number,
    parse_json,
    short_repr,
    utf8_text,
)
from dominoes_env.options import score_bound

from .results_dir import TournamentDirError
from .schedule import MatchJob, Schedule

#: the longest line of matches.jsonl read back (one is some 300 bytes to a few KB with its
#: decision times); a matches.jsonl is at most this many bytes per scheduled match
MAX_LINE_BYTES = 1 << 20
#: the fields of every line a run writes (``first_leader`` and ``decision_times`` came later)
LINE_FIELDS = ("index", "key", "table", "deal", "seats", "seed", "scores", "winner", "hands",
               "plays", "seat_points", "duration_s", "winner_agent")


def _line_problem(rec: Any, jobs: dict[str, MatchJob], rules: RuleConfig,
                  max_hands: int) -> str | None:
    """What is wrong with one line of ``matches.jsonl`` (``None``: a match of this schedule,
    ended as the rules let a match end). A line is untrusted: one whose scores no match can
    reach (``[-5, 10**25]``), or whose winner the scores contradict, is a problem here, so no
    table or card counts it, even where no game record is kept to replay it."""
    if not isinstance(rec, dict):
        return "not a JSON object"
    missing = [k for k in ("index", "key", "seats", "scores", "winner", "hands") if k not in rec]
    if missing:
        return f"missing {', '.join(missing)}"
    job = jobs.get(rec["key"]) if isinstance(rec["key"], str) else None
    if job is None:
        return f"match {short_repr(rec['key'])} is not in this tournament's schedule"
    if type(rec["index"]) is not int or rec["index"] != job.index:  # the key is right
        return (f"its index {short_repr(rec['index'])} is not {job.index}, the schedule's "
                f"index of match {short_repr(rec['key'])}")
    if rec["seats"] != list(job.seats):
        return "its seats differ from the schedule's"
    if "seed" not in rec:
        return "missing seed"
    if type(rec["seed"]) is not int or rec["seed"] != job.seed:
        # a line of another run (another --seed) keeps its own deals: it was reported as
        # this run's match in silence
        return (f"its match seed {short_repr(rec['seed'])} is not this tournament's "
                f"{job.seed} for that match: it is a match of another run (another --seed?)")
    missing = [k for k in LINE_FIELDS if k not in rec]
    if missing:
        return f"missing {', '.join(missing)}"
    if rec["table"] != list(job.table) or type(rec["deal"]) is not int or rec["deal"] != job.deal:
        return "its table or deal differs from the schedule's"
    return (_outcome_problem(rec, rules, max_hands) or _tally_problem(rec, rules)
            or _winner_agent_problem(rec, job, rules))


def _outcome_problem(rec: dict, rules: RuleConfig, max_hands: int) -> str | None:
    """What in a line's ``scores``, ``winner`` and ``hands`` no match can end with: a match
    ends when the rules give it a winner (:func:`match_winner`, which a win by play agrees
    with), or undecided after exactly ``max_hands`` hands; scores are multiples of 5 that no
    hand raises by more than :func:`score_bound` points."""
    scores, winner, hands, sides = rec["scores"], rec["winner"], rec["hands"], rules.num_sides
    if not isinstance(scores, list) or len(scores) != sides or any(type(x) is not int
                                                                     for x in scores):
        return f"scores must be {sides} integers"
    if winner is not None and (type(winner) is not int or not 0 <= winner < sides):
        return f"winner must be a side (0..{sides - 1}) or null"
    if type(hands) is not int or not 1 <= hands <= max_hands:
        return f"hands must be an integer in 1..{max_hands} (max_hands), not {short_repr(hands)}"
    most = hands * score_bound(rules, "hand")
    if any(not 0 <= x <= most or x % SCORE_UNIT for x in scores):
        return (f"scores must be multiples of {SCORE_UNIT} in 0..{most:,} (what {hands} hands "
                f"can score at most), not {short_repr(scores)}")
    target, check = rules.target_score, rules.win_check
    if winner is None and hands != max_hands:
        return (f"an undecided match (winner null) is stopped after max_hands={max_hands} "
                f"hands, not {hands}")
    if winner != match_winner(scores, target, check) or (check == "immediate" and any(
            x >= target for side, x in enumerate(scores) if side != winner)):
        return (f"scores {short_repr(scores)} do not end a match to {target} "
                f"(win_check {check!r}) with winner {short_repr(winner)}")
    return None


def _tally_problem(rec: dict, rules: RuleConfig) -> str | None:
    """What in a line's ``plays``, ``seat_points``, ``first_leader`` and ``duration_s``
    disagrees with its (checked) outcome: every hand plays 1 to all tiles, a seat's plays
    score multiples of 5, and a side's score is its seats' points plus its hand awards."""
    hands, n = rec["hands"], rules.num_players
    plays, points = rec["plays"], rec["seat_points"]
    if type(plays) is not int or not hands <= plays <= hands * rules.num_tiles:
        return (f"plays must be an integer in {hands}..{hands * rules.num_tiles} (1 to "
                f"{rules.num_tiles} per hand), not {short_repr(plays)}")
    if not isinstance(points, list) or len(points) != n or any(
            type(x) is not int or x < 0 or x % SCORE_UNIT for x in points):
        return f"seat_points must be {n} multiples of {SCORE_UNIT}, each >= 0"
    for side, score in enumerate(rec["scores"]):
        if sum(points[seat] for seat in rules.seats_of(side)) > score:
            return (f"side {side}'s seats scored {short_repr(points)} in plays, more than "
                    f"its score {score}")
    leader = rec.get("first_leader", 0)  # a line written before it was kept has none
    if type(leader) is not int or not 0 <= leader < n:
        return f"first_leader must be a seat (0..{n - 1})"
    seconds = rec["duration_s"]
    if not is_finite_number(seconds) or seconds < 0:  # 10**400: math.isfinite overflowed
        return f"duration_s must be a finite number >= 0, not {short_repr(seconds)}"
    return None


def _winner_agent_problem(rec: dict, job: MatchJob, rules: RuleConfig) -> str | None:
    """Whether ``winner_agent`` names the agent at the winning side's first seat (null for
    an undecided match), as :func:`.jobs.job_record` writes it."""
    winner = rec["winner"]
    wanted = None if winner is None else job.seats[rules.seats_of(winner)[0]]
    if type(rec["winner_agent"]) is not type(wanted) or rec["winner_agent"] != wanted:
        return (f"winner_agent {short_repr(rec['winner_agent'])} is not {short_repr(wanted)}, "
                f"the agent of winner {short_repr(winner)}")
    return None


def match_lines(path: Path, matches: int, *, end: int | None = None
                ) -> Iterator[tuple[int, bytes, int]]:
    """The complete lines of the ``matches.jsonl`` at ``path`` of a run of ``matches``
    scheduled matches, each with its number and the offset just after it, read one at a time
    (as far as offset ``end``, if given); a half-written last line is left out. A file larger
    than :data:`MAX_LINE_BYTES` per scheduled match, or a line longer than that, is a
    :class:`TournamentDirError`, so memory stays bounded (a 40 GB file is never read
    whole)."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        most = MAX_LINE_BYTES * max(matches, 1)
        if size > most:
            raise TournamentDirError(
                f"{path} is {size:,} bytes; a tournament of {matches:,} matches writes at most "
                f"{most:,} (MAX_LINE_BYTES a match): it is no matches file of this run; remove "
                "it, or use another output folder")
        number = offset = 0
        while end is None or offset < end:
            line = f.readline(MAX_LINE_BYTES + 1)
            if len(line) > MAX_LINE_BYTES:
                raise TournamentDirError(
                    f"{path}:{number + 1} is longer than {MAX_LINE_BYTES:,} bytes, no match "
                    "record; the file is damaged: remove that line, or use another output "
                    "folder")
            if not line.endswith(b"\n"):  # the end, or a line still being written
                return
            number, offset = number + 1, offset + len(line)
            yield number, line, offset


def load_records(path: Path, schedule: Schedule, rules: RuleConfig,
                 max_hands: int, *, repair: bool = True, end: int | None = None) -> list[dict]:
    """The finished matches in ``path`` (a tournament's of ``rules`` and ``max_hands``), after
    cutting off a half-written last line (``repair=False``: only ignored, the file left as it
    is, for a reader beside a run that may be writing that line now), read line by line
    (:func:`match_lines`; only as far as offset ``end``, if given) as strict UTF-8 text."""
    if not path.exists():
        return []
    jobs = {job.key: job for job in schedule.jobs}
    records: dict[str, dict] = {}
    first: dict[str, int] = {}  # the line each match was read from
    complete = 0  # the bytes of the complete lines
    for number, line, offset in match_lines(path, len(schedule.jobs), end=end):
        complete = offset
        if not line.strip():
            continue
        problem = None
        try:
            rec = parse_json(utf8_text(line, bom=number == 1))  # a mark only starts the file
        except DuplicateKeyError as err:  # another reader may take the other value
            raise TournamentDirError(f"{path}:{number} is not a match record of this tournament "
                                     f"({err}); the file is damaged: remove that line, or use "
                                     "another output folder") from None
        except (ValueError, RecursionError) as err:  # bytes: json.loads took UTF-16 and -32
            rec, problem = None, str(err) if str(err).startswith("it is not UTF-8") else None
        problem = problem or _line_problem(rec, jobs, rules, max_hands)
        if problem:
            raise TournamentDirError(
                f"{path}:{number} is not a match record of this tournament ({problem}); the "
                "file is damaged: remove that line, or use another output folder") from None
        seen = records.setdefault(rec["key"], rec)
        if seen is rec:
            first[rec["key"]] = number
        elif seen != rec:  # a run writes a match once: a second, other line was put there
            raise TournamentDirError(
                f"{path}:{number} is a second record of match {short_repr(rec['key'])}, unlike "
                f"the first (line {first[rec['key']]}); the file is damaged: remove the wrong "
                "line, or use another output folder")
    if repair and end is None and os.path.getsize(path) > complete:
        with open(path, "r+b") as f:  # killed in the middle of a write: drop the unfinished line
            f.truncate(complete)
    return sorted(records.values(), key=lambda r: r["index"])
