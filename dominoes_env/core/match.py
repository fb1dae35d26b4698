"""``MatchState``: hands played one after another until a side reaches ``target_score``.

>>> m = MatchState(RuleConfig(target_score=50), seed=7)
>>> while not m.is_over:
...     _ = m.play(m.legal_actions()[0])
>>> m.winner in (0, 1), max(m.scores) >= 50
(True, True)

Under ``win_check="immediate"`` the match ends the moment a play takes a side to the target.
If that play was the player's last tile, the domino's award is still added (docs/rules.md); if it
left the hand blocked, the block's award is not (the match was already over), so the side that
reached the target wins.

Random choices (the first leader, every shuffle, the leader after a blocked hand) all come from
one ``random.Random(seed)`` owned by the match, in this order per hand: the leader (when drawn
at random), then the shuffle.
"""

from __future__ import annotations

import random
import warnings

from .errors import DominoesDeprecationWarning, IllegalMoveError, NoHandError
from .hand import HandState
from .moves import Move
from .rules import RuleConfig
from .scoring import match_winner, wins_by_play
from .validation import as_bool, as_int, as_seed
from .view import SeatView, make_view


def leader_after(hand: HandState) -> int | None:
    """Who leads the hand after ``hand`` (a finished one) by the rules' ``next_leader``: the next
    seat under ``"rotate"``; else the seat that dominoed, or ``None`` after a block (the leader
    is then drawn at random). :class:`MatchState`, the record replay and the search agents'
    values of a hand's end all ask this.

    >>> from dominoes_env.core import HandState, RuleConfig
    >>> hand = HandState.deal(RuleConfig(next_leader="rotate"), random.Random(0), leader=1)
    >>> leader_after(hand)
    0
    """
    if not isinstance(getattr(hand, "rules", None), RuleConfig):  # None: an AttributeError
        raise TypeError(f"leader_after needs a HandState (its rules, leader and result), not "
                        f"{type(hand).__name__}")
    if hand.rules.next_leader == "rotate":
        return (hand.leader + 1) % hand.rules.num_players
    if hand.result is not None and hand.result[0] == "domino":
        return hand.result[1]
    return None


class MatchState:
    """A match to ``rules.target_score``. The current deal is ``self.hand``.

    ``play`` scores the move for the mover's side, adds the hand award when a hand ends, checks
    the winner per ``win_check`` and deals the next hand (leader per ``next_leader``).

    ``auto_deal=False`` deals nothing (not even the first hand) until :meth:`start_hand`; before
    it, what needs a hand (``turn``, ``legal_actions``, ``view``, ``play``...) raises
    :class:`~dominoes_env.core.errors.NoHandError`, a ``RuntimeError`` and a ``ValueError``.
    """

    __slots__ = ("rules", "rng", "scores", "hand", "finished_hands", "awards", "winner",
                 "hand_number", "auto_deal", "_hand_scores")  # fmt: skip

    def __init__(
        self,
        rules: RuleConfig | None = None,
        seed: int | None = None,
        *,
        auto_deal: bool = True,
        **options,
    ):
        if rules is None:
            rules = RuleConfig(**options)
        elif not isinstance(rules, RuleConfig):
            raise TypeError(f"rules must be a RuleConfig (or None), not {type(rules).__name__}; "
                            "build one with RuleConfig(**fields) or RuleConfig.from_dict(d)")
        elif options:
            rules = rules.replace(**options)
        auto_deal = as_bool("auto_deal", auto_deal)
        self.rules = rules
        self.rng = random.Random(as_seed(seed, optional=True))
        self.scores = [0] * rules.num_sides
        self.finished_hands: list[HandState] = []
        #: the award each finished hand added to the scores (``None``: none was added)
        self.awards: list[tuple[int, int] | None] = []
        self._hand_scores: list[list[int]] = []
        self.winner: int | None = None
        self.hand_number = 0
        self.hand: HandState | None = None
        #: deal the next hand as soon as one ends (``False`` when replaying a record, which
        #: supplies each deal through :meth:`start_hand`)
        self.auto_deal = auto_deal
        if auto_deal:
            self.start_hand(self.rng.randrange(rules.num_players))

    # -- hands -----------------------------------------------------------------------------
    def start_hand(self, leader: int, hand: HandState | None = None) -> HandState:
        """Begin a new hand led by ``leader``: deal it with the match's generator, or use the
        given pre-dealt ``hand`` (records), a :class:`HandState` of the match's rules led by
        ``leader``. Refused (``ValueError``) once the match is over."""
        if self.winner is not None:
            raise ValueError(f"the match is over (won by side {self.winner}): no hand may start")
        if hand is not None:
            if not isinstance(hand, HandState):
                raise TypeError(f"hand must be a HandState (or None to deal one), not "
                                f"{type(hand).__name__}")
            if hand.rules != self.rules:
                raise ValueError("hand is dealt under other rules than the match's")
            leader = as_int("leader", leader, 0, self.rules.num_players - 1)
            if hand.leader != leader:
                raise ValueError(f"leader={leader} but the given hand is led by seat "
                                 f"{hand.leader}")
        if hand is None:
            hand = HandState.deal(self.rules, self.rng, leader)
        if self.hand is not None:
            self.hand_number += 1
        self.hand = hand
        return hand

    def hand_number_of(self, hand: HandState) -> int:
        """The number of ``hand``: the current hand's, or the one before for the hand the
        match has just finished (a match deals its next hand as soon as one ends).

        >>> m = MatchState(seed=1)
        >>> m.hand_number_of(m.hand)
        0
        """
        return self.hand_number - (hand is not self.hand)

    def next_leader(self) -> int | None:
        """Who leads the next hand by ``next_leader``, or ``None`` if it is drawn at random
        (:func:`leader_after` the current hand)."""
        return leader_after(self._dealt())

    def _dealt(self) -> HandState:
        """The current hand; :class:`NoHandError` if none has been dealt (``auto_deal=False``)."""
        hand = self.hand
        if hand is None:
            raise NoHandError("no hand has been dealt: call start_hand(leader) first "
                              "(the match was made with auto_deal=False)")
        return hand

    # -- queries ---------------------------------------------------------------------------
    @property
    def is_over(self) -> bool:
        """Whether a side has won the match (:attr:`winner`); no move is legal then."""
        return self.winner is not None

    @property
    def turn(self) -> int:
        """The seat to play, or ``-1`` once the match is over."""
        return -1 if self.winner is not None else self._dealt().turn

    def legal_actions(self) -> list[int]:
        """The legal action codes of the seat to play (:meth:`HandState.legal_actions`), or
        ``[]`` once the match is over.

        >>> m = MatchState(seed=1)
        >>> all(m.is_legal(code) for code in m.legal_actions())
        True
        """
        return [] if self.winner is not None else self._dealt().legal_actions()

    @property
    def legal_moves(self) -> list[Move]:
        """The legal moves of the seat to play as :class:`Move` values (the lead's end is
        ``None``), or ``[]`` once the match is over.

        >>> m = MatchState(seed=1)
        >>> [m.move_of(code) for code in m.legal_actions()] == m.legal_moves
        True
        """
        return [] if self.winner is not None else self._dealt().legal_moves

    def is_legal(self, move: Move | int | tuple) -> bool:
        """Whether :meth:`play` would take ``move`` now (any form it takes: a :class:`Move`, an
        action code, a ``(tile, end)`` pair); ``False`` once the match is over, a
        ``TypeError`` for what is no move at all (:meth:`HandState.is_legal`)."""
        # the hand first: a wrong type is a TypeError whether or not the match is over
        return self._dealt().is_legal(move) and self.winner is None

    def move_of(self, code: int) -> Move:
        """The :class:`Move` of an action code in the current hand (:meth:`HandState.move_of`:
        the lead has ``end=None``)."""
        return self._dealt().move_of(code)

    def view(self, seat: int) -> SeatView:
        """What ``seat`` may know: its own tiles and public information only."""
        return make_view(
            self._dealt(),
            seat,
            tuple(self.scores),
            self.rules.target_score,
            self.hand_number,
            self.winner,
        )

    @property
    def hand_scores(self) -> list[list[int]]:
        """Side scores after each finished hand."""
        return [list(s) for s in self._hand_scores]

    # -- playing ---------------------------------------------------------------------------
    def play(self, move: Move | int | tuple) -> int:
        """Play a move for the seat to play; returns the move's points (award not included).

        When the hand ends its award is added; when the match goes on the next hand is dealt
        at once, so ``self.hand`` is then the new deal (the old one is in ``finished_hands``).
        """
        if self.winner is not None:
            raise IllegalMoveError(move, f"the match is over (won by side {self.winner})")
        hand = self._dealt()
        seat = hand.turn
        points = hand.play(move)
        self._settle(seat, points)
        return points

    def apply(self, code: int) -> int:
        """Deprecated name of :meth:`apply_unchecked`."""
        warnings.warn(
            "MatchState.apply is renamed apply_unchecked (it does not check the move)",
            DominoesDeprecationWarning,
            stacklevel=2,
        )
        return self.apply_unchecked(code)

    def apply_unchecked(self, code: int, flip: bool = False) -> int:
        """Like :meth:`play` for an action code known to be legal (``HandState.is_legal`` or
        ``legal_actions``), WITHOUT checking it: the fast path of the environments. ``flip``
        leads a non-double high half left (as :meth:`HandState.apply_unchecked`). Once the
        match is over it raises :class:`IllegalMoveError` like :meth:`play`."""
        if self.winner is not None:
            raise IllegalMoveError(code, f"the match is over (won by side {self.winner})")
        hand = self._dealt()
        seat = hand.turn
        points = hand.apply_unchecked(code, flip)
        self._settle(seat, points)
        return points

    def _settle(self, seat: int, points: int) -> None:
        rules, hand, scores = self.rules, self.hand, self.scores
        side = rules.side_of(seat)
        scores[side] += points
        won_by_play = wins_by_play(scores[side], rules.target_score, rules.win_check)
        if hand.turn >= 0:
            if won_by_play:
                self.winner = side
            return
        # the hand is over. Under "immediate" a play that reaches the target ends the match at
        # once; only a domino's award still counts (the hand ended by that same play)
        award = hand.award
        if won_by_play and hand.result[0] != "domino":
            award = None
        if award is not None:
            scores[award[0]] += award[1]
        self.finished_hands.append(hand)
        self.awards.append(award)
        self._hand_scores.append(list(scores))
        if won_by_play:
            self.winner = side
            return
        winner = match_winner(scores, rules.target_score, rules.win_check)
        if winner is not None:
            self.winner = winner
            return
        if self.auto_deal:
            leader = self.next_leader()
            if leader is None:
                leader = self.rng.randrange(rules.num_players)
            self.start_hand(leader)

    # -- records ---------------------------------------------------------------------------
    def to_record(self) -> dict:
        """The match as a game record (see :mod:`.records`)."""
        from .records import match_record

        return match_record(self)

    def __str__(self) -> str:
        status = (
            f"won by side {self.winner}" if self.winner is not None else f"hand {self.hand_number}"
        )
        return f"Match to {self.rules.target_score}, scores {self.scores}, {status}\n{self.hand}"

    def __repr__(self) -> str:
        return f"<MatchState scores={self.scores} hand={self.hand_number} winner={self.winner}>"

    def _repr_svg_(self) -> str:
        """The current hand and the scores as a picture in Jupyter (``dominoes_env.render.svg``)."""
        from dominoes_env.render.svg import match_svg

        return match_svg(self)
