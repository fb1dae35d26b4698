"""A game record as a list of steps, the event-by-event story the replay viewers show.

:func:`record_steps` replays a record (checking every move, like ``replay``) and returns one
:class:`Step` per event: each hand's deal, every play (with the count it made and its points),
every draw and pass, each hand's end with its award, and the end of the match. Each step
carries the position after it: every seat's tiles, the boneyard, the side scores and the hand
on the table (for the layout picture). Plain Python, like the core.

>>> from dominoes_env.core import MatchState, RuleConfig
>>> m = MatchState(RuleConfig(target_score=30), seed=3)
>>> while not m.is_over:
...     _ = m.play(m.legal_actions()[0])
>>> record = m.to_record()
>>> steps = record_steps(record)
>>> steps[0].kind, steps[-1].kind, list(steps[-1].scores) == m.scores
('deal', 'match', True)
>>> sum(s.kind == "play" for s in steps) == sum(len(h["moves"]) for h in record["hands"])
True
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..core.hand import HandState
from ..core.match import MatchState
from ..core.moves import end_of, tile_of
from ..core.records import replay_steps

END_WORDS = ("left", "right", "up", "down")
KINDS = ("deal", "play", "draw", "pass", "end", "match")


@dataclass(frozen=True)
class Step:
    """One event of a match and the position after it.

    ``kind`` is one of ``deal``, ``play``, ``draw``, ``pass``, ``end`` (a hand ended: ``award``
    is set, or ``None`` when none was added) and ``match`` (the match is decided or the record
    stops). ``hand`` counts hands from 0, ``move`` counts the hand's plays so far. ``tiles[s]``
    lists seat ``s``'s tile indices; ``state`` is the hand as it stood after the event's play
    (shared between the steps that follow it until the next play: read, never change it).
    """

    kind: str
    hand: int
    move: int
    seat: int | None
    text: str
    tiles: tuple[tuple[int, ...], ...]
    boneyard: int  #: tiles left in the boneyard
    scores: tuple[int, ...]
    count: int  #: the layout's count after this step
    points: int  #: points scored by this play (0 for other steps)
    turn: int  #: the seat to play next, -1 when none
    tile: tuple[int, int] | None  #: the tile played (as written in the record)
    award: tuple[int, int] | None  #: (side, points) on an ``end`` step
    state: Any  #: the HandState after the last play (or the deal)
    winner: int | None = None  #: on the ``match`` step, the winning side (None: undecided)


def record_steps(record: Any) -> list[Step]:
    """The steps of a record (a dict in the records format). Raises :class:`RecordError` on a
    record that is malformed or breaks a rule, naming the hand and move (the checks of
    :func:`~dominoes_env.core.records.replay_steps`, which replays it)."""
    steps: list[Step] = []
    match = None
    story = None
    for position in replay_steps(record):
        match = position.match
        if position.move == 0:
            story = _HandStory(match, position.hand, steps)
        story.after_move(steps)
        if position.code is not None:
            story.before_move(position, record["hands"][position.hand]["moves"])
        elif match.hand.is_over:
            story.end(steps)
    last = steps[-1] if steps else None
    rules = match.rules
    if match.winner is not None:
        seats = rules.seats_of(match.winner)
        who = f"side {match.winner}" + (f" (seats {'+'.join(map(str, seats))})"
                                        if len(seats) > 1 else f" (seat {seats[0]})")
        text = f"{who} wins the match, {_score_text(match.scores)}"
    else:
        text = f"the record stops here, {_score_text(match.scores)}"
    steps.append(Step("match", last.hand if last else 0, last.move if last else 0, None, text,
                      last.tiles if last else (), last.boneyard if last else 0,
                      tuple(match.scores), last.count if last else 0, 0, -1, None, None,
                      last.state if last else None, match.winner))
    return steps


def _score_text(scores) -> str:
    return "scores " + " - ".join(map(str, scores))


class _HandStory:
    """The steps of one hand, told position by position as the record is replayed."""

    def __init__(self, match: MatchState, i: int, steps: list[Step]):
        hand: HandState = match.hand
        self.match, self.hand, self.i = match, hand, i
        ts = match.rules.tiles
        self.tiles = [{k for k in range(ts.num_tiles) if m >> k & 1} for m in hand.dealt[0]]
        self.boneyard = list(hand.dealt[1])
        self.drawn = 0
        self.seen = len(hand.history)
        self.pending = None  # (move index, the record's move, its points, scores before it)
        self.snap = hand.copy()
        steps.append(Step("deal", i, 0, hand.leader,
                          f"hand {i + 1} dealt: seat {hand.leader} leads", _freeze(self.tiles),
                          len(self.boneyard), tuple(match.scores), 0, 0, hand.leader, None, None,
                          self.snap))

    def before_move(self, position, moves: list) -> None:
        """Remember the move about to be played from ``position``."""
        self.pending = (position.move, moves[position.move], position.points,
                        list(self.match.scores))

    def after_move(self, steps: list[Step]) -> None:
        """The steps of the move remembered by :meth:`before_move`, now that it is played: its
        play, then the draws and passes it forced."""
        if self.pending is None:
            return
        j, move, points, before = self.pending
        self.pending = None
        match, hand, i, tiles = self.match, self.hand, self.i, self.tiles
        rules = match.rules
        self.snap = snap = hand.copy()
        events = hand.history[self.seen:]
        self.seen = len(hand.history)
        first = len(steps)
        for ev in events:
            kind, seat = ev[0], ev[1]
            left = len(self.boneyard) - self.drawn
            if kind == "play":
                code = ev[2]
                tiles[seat].discard(tile_of(code))
                before[rules.side_of(seat)] += points
                tile = tuple(move[1])
                where = "leads" if j == 0 else f"plays on the {END_WORDS[end_of(code)]} end:"
                text = f"seat {seat} {where} {_tile_str(tile)}, count {snap.count}"
                text += f", scores {points}" if points else ""
                steps.append(Step("play", i, j + 1, seat, text, _freeze(tiles), left,
                                  tuple(before), snap.count, points, -1, tile, None, snap))
            elif kind == "draw":
                n = ev[2]
                for t in self.boneyard[self.drawn:self.drawn + n]:
                    tiles[seat].add(t)
                self.drawn += n
                steps.append(Step("draw", i, j + 1, seat,
                                  f"seat {seat} cannot play and draws {n} "
                                  f"tile{'s' if n > 1 else ''}", _freeze(tiles),
                                  len(self.boneyard) - self.drawn, tuple(before), snap.count, 0,
                                  -1, None, None, snap))
            elif kind == "pass":
                steps.append(Step("pass", i, j + 1, seat, f"seat {seat} cannot play and passes",
                                  _freeze(tiles), left, tuple(before), snap.count, 0, -1, None,
                                  None, snap))
        # who acts after each of these steps: the seat of the next event, then the seat to play
        after = [st.seat for st in steps[first + 1:]] + [-1 if match.is_over else hand.turn]
        steps[first:] = [replace(st, turn=t) for st, t in zip(steps[first:], after, strict=True)]

    def end(self, steps: list[Step]) -> None:
        """The step of the hand's end: how it ended, the award, the pips left."""
        match, hand, i = self.match, self.hand, self.i
        rules = match.rules
        award = match.awards[-1] if match.finished_hands and \
            match.finished_hands[-1] is hand else None
        kind_, seat = hand.result
        how = f"seat {seat} dominoes" if kind_ == "domino" else "the hand is blocked"
        if award:
            side_seats = rules.seats_of(award[0])
            who = f"side {award[0]}" + (f" (seats {'+'.join(map(str, side_seats))})"
                                        if len(side_seats) > 1 else "")
            text = f"hand {i + 1} over: {how}; {who} scores {award[1]}"
        else:
            text = f"hand {i + 1} over: {how}; no award"
        pips = rules.tiles.pips
        left = ", ".join(f"seat {s} {sum(pips[t] for t in held)}"
                         for s, held in enumerate(self.tiles))
        text += f" (pips left: {left})"
        steps.append(Step("end", i, len(hand.moves), seat, text, _freeze(self.tiles),
                          len(self.boneyard) - self.drawn, tuple(match.scores), self.snap.count,
                          0, -1, None, award, self.snap))


def _freeze(tiles: list[set[int]]) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(sorted(t)) for t in tiles)


def _tile_str(tile) -> str:
    return f"[{tile[0]}|{tile[1]}]"
