"""``HandState``: one deal of Straight Dominoes, from the lead to a domino or a block.

The state is integers all the way down: each seat's hand is a bitmask of tile indices, the layout
is four end values with their counts, and legal moves are action codes
(``tile_index * 4 + end_index``, see :mod:`.moves`). Forced draws and passes are not decisions:
after every play the engine moves the turn on, drawing for and passing seats that cannot play,
and writes those draws and passes into the public history.

>>> from dominoes_env.core import RuleConfig, HandState
>>> hand = HandState.from_tiles(RuleConfig(), leader=0, hands=[
...     [(6, 6), (6, 3), (1, 2), (0, 0), (2, 2), (3, 3), (4, 5)],
...     [(5, 5), (0, 1), (1, 1), (2, 3), (3, 4), (0, 6), (1, 6)]])
>>> hand.play(((6, 6), None)), hand.play(((6, 1), "left")), hand.count
(0, 0, 13)
>>> [str(m) for m in hand.legal_moves]
['[1|2]@left', '[3|6]@right']
"""

from __future__ import annotations

import operator
import random
import warnings
from collections.abc import Iterable, Sequence
from typing import Any

from .errors import DominoesDeprecationWarning, IllegalMoveError
from .events import BLOCKED, DOMINO, DRAW, PASS, PLAY, Award, Draw, Outcome, Pass, Play, Result
from .layout import RULE_TABLES, open_ends, place, set_rule_tables
from .moves import END_NAMES, Move, end_of, parse_move, tile_of
from .rules import RuleConfig
from .scoring import blocked_award, count_after, points_for_count, round_to_five
from .tiles import Tile, TileSet, iter_bits
from .validation import as_int, check_rng, short_repr
from .view import SeatView, layout_line, make_view

# public history events (typed records, see .events): Play(seat, code, points) =
# ("play", seat, code, points), Draw(seat, n_tiles) = ("draw", ...), Pass(seat) = ("pass", seat)
_new = tuple.__new__  # builds the records without their Python-level __new__ (the hot path)

# fields copied by copy() and saved by push(); lists are copied, the rest are immutable
_LIST_FIELDS = (
    "hands",
    "ends",
    "contrib",
    "arm",
    "spinner_free",
    "known_lacks",
    "history",
    "moves",
    "move_points",
)
_SCALAR_FIELDS = (
    "drawn",
    "played",
    "lead",
    "lead_pips",
    "spinner",
    "spinner_sides",
    "cross_open",
    "open_mask",
    "turn",
    "count",
    "result",
    "award",
)

# fields copy() shares with the copy (immutable, or never changed after construction)
_SHARED_FIELDS = ("rules", "n", "leader", "dealt", "boneyard", "draw_limit", *RULE_TABLES,
                  "_suit", "_side", *_SCALAR_FIELDS)


class HandState:
    """One hand (deal) of the game. Build with :meth:`deal` or :meth:`from_tiles`.

    Public attributes (read them, never assign them):

    - ``hands[s]``: seat ``s``'s tiles as a bitmask; ``played``: bitmask of the layout's tiles
    - ``boneyard``: undealt tile indices in draw order; ``drawn``: how many were drawn
    - ``ends[e]``: pip value showing at end ``e`` (left, right, up, down; ``-1`` before the lead),
      ``contrib[e]``: what that end adds to the count, ``arm[e]``: tiles on that end's arm
    - ``spinner``: tile index of the spinner or ``-1``; ``cross_open``: whether up/down take tiles
    - ``turn``: seat to play, ``-1`` once the hand is over; ``count``: the layout's current count
    - ``result``: ``None``, ``Result("domino", seat)`` or ``Result("blocked", None)``;
      ``award``: ``Award(side, points)`` or ``None``; ``outcome``: both in one
      :class:`~dominoes_env.core.events.Outcome` (all named tuples, equal to the plain tuples)
    - ``history``: the public history, :class:`~dominoes_env.core.events.Play` /
      ``Draw`` / ``Pass`` records, equal to ``("play", seat, code, points)``, ``("draw", seat,
      n)``, ``("pass", seat)``; ``moves``: ``(seat, code, flipped)`` per play, for records
    - ``known_lacks[s]``: bitmask of pip values seat ``s`` is known not to hold (public inference
      from its draws and passes; a tile it has just drawn and must now play is the one exception)
    - ``tile_pips``, ``tile_double``, ``tile_low``, ``spinner_mode``, ``cross_now``: the rule
      tables :func:`~dominoes_env.core.layout.place` reads (see
      :func:`~dominoes_env.core.layout.set_rule_tables`)
    """

    __slots__ = (
        "rules", "n", "leader", "dealt", "boneyard", "draw_limit",
        *RULE_TABLES, "_suit", "_side",
        "_root",
        *_LIST_FIELDS, *_SCALAR_FIELDS,
    )  # fmt: skip

    # -- construction ----------------------------------------------------------------------
    def __init__(
        self, rules: RuleConfig, hands: Sequence[int], boneyard: Sequence[int], leader: int
    ):
        """Low-level constructor from a deal given as bitmask hands and the boneyard's tile
        indices in draw order; prefer :meth:`deal` / :meth:`from_tiles`. The deal is checked
        (:func:`_checked_deal`): ``hands`` must be one bitmask per seat of ``hand_size``
        tiles of the set each, ``boneyard`` tile indices of the set, and together they must
        hold every tile of the set exactly once; a ``ValueError`` / ``TypeError`` names what is
        wrong otherwise (a negative or overlapping hand, a hand too many, a tile index past
        the set)."""
        self._setup(rules, *_checked_deal(rules, hands, boneyard), leader)

    @classmethod
    def _unchecked(cls, rules: RuleConfig, hands: Sequence[int], boneyard: Sequence[int],
                   leader: int) -> HandState:
        """A hand from a deal its caller made or checked (:meth:`deal`, :meth:`from_tiles`,
        :meth:`from_view`, :meth:`pop`), built without checking it again."""
        new = cls.__new__(cls)
        new._setup(rules, hands, boneyard, leader)
        return new

    def _setup(self, rules: RuleConfig, hands: Sequence[int], boneyard: Sequence[int],
               leader: int) -> None:
        ts = rules.tiles
        n = rules.num_players
        leader = as_int("leader", leader, 0, n - 1)
        self.rules = rules
        self.n = n
        self.leader = leader
        self.hands = list(hands)
        self.boneyard = tuple(boneyard)
        self.dealt = (tuple(self.hands), self.boneyard)
        self.draw_limit = len(self.boneyard) - rules.boneyard_reserve
        set_rule_tables(self, rules)  # tile_pips, tile_double, tile_low, spinner_mode, cross_now
        self._suit = ts.suit_mask
        self._side = tuple(rules.side_of(s) for s in range(n))
        self._root = None  # None: built from a deal; else the from_view arguments
        self.ends = [-1, -1, -1, -1]
        self.contrib = [0, 0, 0, 0]
        self.arm = [0, 0, 0, 0]
        self.spinner_free = [False, False]
        self.known_lacks = [0] * n
        self.history = []
        self.moves = []
        self.move_points = []
        self.drawn = 0
        self.played = 0
        self.lead = -1
        self.lead_pips = 0
        self.spinner = -1
        self.spinner_sides = 0
        self.cross_open = False
        self.open_mask = 0
        self.turn = leader
        self.count = 0
        self.result = None
        self.award = None

    @classmethod
    def deal(cls, rules: RuleConfig, rng: random.Random, leader: int) -> HandState:
        """Shuffle the set with ``rng`` and deal ``hand_size`` tiles to each seat in turn order
        (seat 0 takes the first ``hand_size`` shuffled tiles); the rest is the boneyard."""
        _check_rules(rules)
        check_rng("rng", rng)
        order = list(range(rules.num_tiles))
        rng.shuffle(order)
        h = rules.hand_size
        hands = []
        for s in range(rules.num_players):
            mask = 0
            for t in order[s * h : (s + 1) * h]:
                mask |= 1 << t
            hands.append(mask)
        return cls._unchecked(rules, hands, order[rules.num_players * h :], leader)

    @classmethod
    def from_tiles(
        cls,
        rules: RuleConfig,
        hands: Sequence[Iterable[Sequence[int]]],
        boneyard: Iterable[Sequence[int]] | None = None,
        leader: int = 0,
    ) -> HandState:
        """Build a deal from tiles given as ``(a, b)`` pairs, checking it is a complete, valid deal.

        ``boneyard=None`` puts every undealt tile in the boneyard in index order.
        """
        ts = _check_rules(rules).tiles
        if not isinstance(hands, (list, tuple)) or len(hands) != rules.num_players:
            raise ValueError(f"the deal needs one hand per seat: {rules.num_players} hands")
        masks, seen = [], 0
        for s, tiles in enumerate(hands):
            idx = [_tile_index(ts, t, f"seat {s}'s hand") for t in tiles]
            if len(idx) != rules.hand_size:
                raise ValueError(
                    f"seat {s} was dealt {len(idx)} tiles; hand_size is {rules.hand_size}"
                )
            mask = 0
            for i in idx:
                if (seen | mask) >> i & 1:
                    raise ValueError(f"tile {ts.tiles[i]} is dealt twice")
                mask |= 1 << i
            seen |= mask
            masks.append(mask)
        if boneyard is None:
            bone = [i for i in range(ts.num_tiles) if not seen >> i & 1]
            seen = ts.full_mask
        else:
            if isinstance(boneyard, (str, bytes)) or not hasattr(boneyard, "__iter__"):
                raise TypeError(f"boneyard must be a list of tiles, not "  # 'int' object is
                                f"{short_repr(boneyard)}")              # not iterable
            bone = [_tile_index(ts, t, "the boneyard") for t in boneyard]
            for i in bone:
                if seen >> i & 1:
                    raise ValueError(f"tile {ts.tiles[i]} is dealt twice")
                seen |= 1 << i
        if seen != ts.full_mask:
            missing = ", ".join(str(t) for t in ts.mask_tiles(ts.full_mask & ~seen))
            raise ValueError(
                f"the deal must hold every tile of the set exactly once; missing: {missing}"
            )
        return cls._unchecked(rules, masks, bone, leader)

    @classmethod
    def from_view(cls, view: SeatView, hands: Sequence[int], boneyard: Sequence[int]) -> HandState:
        """A full hand rebuilt from a seat's view and a guess of what it cannot see.

        ``hands`` gives every seat's tiles as bitmasks (the viewer's own must match the view);
        ``boneyard`` the tiles left in the boneyard, in the order they would be drawn. Used by
        search agents to simulate from a sampled deal (determinization). The guess must fit
        the view (:func:`_guess_problem`): each seat holds as many tiles as the view says, and
        the hands, the boneyard and the layout hold every tile once; a guess that does not
        (a hand holding a tile of the layout, a hand short of its tiles, a boneyard tile
        repeated) is a ``ValueError`` naming what does not fit.
        """
        if not isinstance(view, SeatView):  # None was an AttributeError
            raise TypeError(f"view={short_repr(view)} must be a SeatView, not "
                            f"{type(view).__name__}")
        rules = view.rules
        if (not isinstance(hands, (list, tuple)) or len(hands) != rules.num_players
                or hands[view.seat] != view.hand):
            raise ValueError(
                "hands must give every seat, with the viewer's own tiles as in the view"
            )
        if not isinstance(boneyard, (list, tuple)):
            raise TypeError(f"boneyard must be a list of tile indices, not {short_repr(boneyard)}")
        if len(boneyard) != view.boneyard_left:
            raise ValueError(
                f"the boneyard must hold {view.boneyard_left} tiles, got {len(boneyard)}"
            )
        if not _fits_view(view, hands, boneyard):
            raise ValueError("the guess does not fit the view: "
                             f"{_guess_problem(view, hands, boneyard)}")
        drawn = rules.boneyard_size - view.boneyard_left
        new = cls._unchecked(rules, hands, [-1] * drawn + list(boneyard), view.leader)
        new._root = (view, tuple(hands), tuple(boneyard))
        new.drawn = drawn
        new.played = view.played
        new.lead, new.lead_pips, new.count = view.lead, view.lead_pips, view.count
        new.ends, new.contrib, new.arm = list(view.ends), list(view.contrib), list(view.arm)
        new.spinner, new.spinner_sides = view.spinner, view.spinner_sides
        new.spinner_free, new.cross_open = list(view.spinner_free), view.cross_open
        new.known_lacks = list(view.known_lacks)
        new.history = list(view.history)
        new.turn = view.turn
        new.result, new.award = view.result, view.award
        suit, ends = new._suit, new.ends
        if new.lead >= 0:
            new.open_mask = 0
            for e in new.open_ends():
                new.open_mask |= suit[ends[e]]
        return new

    def view(self, seat: int) -> SeatView:
        """``seat``'s view of this hand alone (match scores zero; see ``MatchState.view``)."""
        return make_view(self, seat, (0,) * self.rules.num_sides, self.rules.target_score, 0, None)

    def copy(self) -> HandState:
        """An independent copy, with the same :attr:`move_stack`."""
        new = object.__new__(HandState)
        for name in _SHARED_FIELDS:
            setattr(new, name, getattr(self, name))
        for name in _LIST_FIELDS:
            setattr(new, name, list(getattr(self, name)))
        new._root = self._root
        return new

    # -- queries ---------------------------------------------------------------------------
    @property
    def is_over(self) -> bool:
        """Whether the hand has ended (a domino or a block: :attr:`outcome` says which); no
        move is legal then."""
        return self.turn < 0

    @property
    def outcome(self) -> Outcome | None:
        """How the finished hand ended (:class:`~dominoes_env.core.events.Outcome`: kind, the
        seat that went out, the award), or ``None`` while it runs."""
        if self.result is None:
            return None
        return Outcome(self.result[0], self.result[1], self.award)

    @property
    def tiles(self) -> TileSet:
        """The tile set of the hand's rules (``rules.tiles``: tile ``i`` is ``tiles.tiles[i]``,
        the tile of an action code's :func:`~dominoes_env.core.moves.tile_of`).

        >>> HandState.deal(RuleConfig(), random.Random(0), leader=0).tiles.num_tiles
        28
        """
        return self.rules.tiles

    @property
    def boneyard_left(self) -> int:
        """Tiles still in the boneyard (drawable or reserved)."""
        return len(self.boneyard) - self.drawn

    @property
    def drawable(self) -> int:
        """Tiles that may still be drawn (the boneyard less the reserve)."""
        return self.draw_limit - self.drawn

    @property
    def hand_sizes(self) -> tuple[int, ...]:
        """Tiles in each seat's hand, seat 0 first (a :class:`PublicState` field).

        Calling it, ``hand.hand_sizes()``, still works (it was a method) and is deprecated."""
        return _HandSizes(h.bit_count() for h in self.hands)

    @property
    def boneyard_tiles(self) -> tuple[int, ...]:
        """Tile indices still in the boneyard, in draw order (a :class:`FullState` field)."""
        return self.boneyard[self.drawn :]

    def hand_tiles(self, seat: int) -> list[Tile]:
        """Seat ``seat``'s tiles, in index order."""
        # -1 named the last seat's tiles and n raised IndexError
        return self.rules.tiles.mask_tiles(self.hands[as_int("seat", seat, 0, self.n - 1)])

    def open_ends(self) -> list[int]:
        """Indices of the ends that take tiles now (:func:`~dominoes_env.core.layout.open_ends`)."""
        return list(open_ends(self))

    def legal_actions(self) -> list[int]:
        """Legal action codes for the seat to play (empty once the hand is over)."""
        if self.turn < 0:
            return []
        h = self.hands[self.turn]
        out = []
        if self.lead < 0:
            while h:
                low = h & -h
                out.append((low.bit_length() - 1) << 2)
                h ^= low
            return out
        suit, ends = self._suit, self.ends
        for e in range(4 if self.cross_open else 2):
            m = h & suit[ends[e]]
            while m:
                low = m & -m
                out.append(((low.bit_length() - 1) << 2) | e)
                m ^= low
        return out

    def is_legal(self, move: Move | int | tuple) -> bool:
        """Whether a move is legal now: an action code (the fast check), or a move in any other
        form :meth:`play` takes (a :class:`Move`, a ``(tile, end)`` pair). ``False`` for
        whatever :meth:`play` would refuse with :class:`IllegalMoveError` (it says why), and
        once the hand is over; what is no move at all is a ``TypeError``, as for :meth:`play`.

        >>> hand = HandState.from_tiles(RuleConfig(), leader=0, hands=[
        ...     [(6, 6), (6, 3), (1, 2), (0, 0), (2, 2), (3, 3), (4, 5)],
        ...     [(5, 5), (0, 1), (1, 1), (2, 3), (3, 4), (0, 6), (1, 6)]])
        >>> hand.is_legal(hand.legal_moves[0]), hand.is_legal(((5, 5), None))
        (True, False)
        """
        if move.__class__ is not int:  # a Move, a pair, numpy's integers: read as play does
            try:
                move = parse_move(move, self.rules.tiles, self.lead < 0)[0]
            except IllegalMoveError:
                return False
        code = move
        if self.turn < 0 or not 0 <= code < len(self.tile_pips) * 4:
            return False
        t = code >> 2  # tile_of / end_of inlined in the hot paths below
        if not self.hands[self.turn] >> t & 1:
            return False
        e = code & 3
        if self.lead < 0:
            return e == 0
        if e >= 2 and not self.cross_open:
            return False
        return bool(self._suit[self.ends[e]] >> t & 1)

    @property
    def legal_moves(self) -> list[Move]:
        """Legal moves as :class:`Move` values."""
        return [self.move_of(c) for c in self.legal_actions()]

    def move_of(self, code: int) -> Move:
        """The :class:`Move` of an action code in this position (the lead has ``end=None``)."""
        _check_code(self, code)
        tile = self.rules.tiles.tiles[tile_of(code)]
        return Move(tile, None if self.lead < 0 else END_NAMES[end_of(code)])

    def count_after(self, code: int) -> int:
        """The layout count after playing a legal action code, without playing it."""
        # agents call it per move (points_after comes here): one comparison, and the rest
        # checked only once the table lookup fails. A negative code read the tables from their
        # end ([6|6] for -1), a huge one raised IndexError
        try:
            if code < 0 or code.__class__ is bool:  # True read code 1
                _check_code(self, code)
            return count_after(
                code,
                self.lead,
                self.lead_pips,
                self.ends,
                self.contrib,
                self.arm,
                self.tile_pips,
                self.tile_double,
            )
        except (IndexError, TypeError):
            _check_code(self, code)
            raise

    def points_after(self, code: int) -> int:
        """Points a legal action code would score now (the hand award not included)."""
        return points_for_count(self.count_after(code))

    # -- playing ---------------------------------------------------------------------------
    def play(self, move: Move | int | tuple) -> int:
        """Play a move for the seat whose turn it is and return the points it scores.

        ``move`` is a :class:`Move`, an action code, or a ``(tile, end)`` pair with the tile as
        ``(a, b)`` and the end a name or one of ``LEFT`` .. ``DOWN``. Raises
        :class:`IllegalMoveError` (state unchanged) if the rules forbid it. The move goes on
        :attr:`move_stack`, so :meth:`pop` takes it back: ``play`` is :meth:`push` by its game
        name.
        """
        code, flip = self.check_move(move)
        return self.apply_unchecked(code, flip)

    def push(self, move: Move | int | tuple) -> int:
        """Play a move, checked, and return its points: the same as :meth:`play` (the
        python-chess name). Every move played is on :attr:`move_stack`; :meth:`pop` takes the
        last one back."""
        return self.play(move)

    @property
    def move_stack(self) -> list[Move]:
        """The moves played on this state since it was built, oldest first (what :meth:`pop`
        takes back, newest first). A state rebuilt from a view starts with an empty stack."""
        tiles = self.rules.tiles.tiles
        first_leads = self._root is None or self._root[0].lead < 0
        out = []
        for i, (_seat, code, flip) in enumerate(self.moves):
            t = tiles[tile_of(code)]
            if i == 0 and first_leads:
                out.append(Move(Tile(t.high, t.low) if flip else t, None))
            else:
                out.append(Move(t, END_NAMES[end_of(code)]))
        return out

    def pop(self) -> Move:
        """Take back the last move played on this state (with the draws and passes that
        followed it) and return it; ``IndexError`` when :attr:`move_stack` is empty.

        Every move counts, however it was played (:meth:`play`, :meth:`push`,
        :meth:`apply_unchecked`): the position is rebuilt from the state's start by replaying
        the moves before it, so playing costs nothing extra and popping costs a replay.
        """
        if not self.moves:
            raise IndexError("pop from a hand with no moves played on it")
        last = self.move_stack[-1]
        root = self._root
        if root is None:
            fresh = HandState._unchecked(self.rules, self.dealt[0], self.boneyard, self.leader)
        else:
            fresh = HandState.from_view(*root)
        for _seat, code, flip in self.moves[:-1]:
            fresh.apply_unchecked(code, flip)
        for name in _SCALAR_FIELDS:
            setattr(self, name, getattr(fresh, name))
        for name in _LIST_FIELDS:
            setattr(self, name, getattr(fresh, name))
        return last

    def check_move(self, move: Move | int | tuple) -> tuple[int, bool]:
        """``(action code, flipped)`` of a move in any form :meth:`play` accepts, after checking
        that the rules allow it now; nothing is played. ``flipped``: a lead written high half
        first (``apply_unchecked(code, flipped)`` then plays it as written). Raises
        :class:`IllegalMoveError` or ``TypeError`` as :meth:`play` does.

        >>> from dominoes_env.core import RuleConfig
        >>> hand = HandState.from_tiles(RuleConfig(), leader=0, hands=[
        ...     [(6, 6), (6, 3), (1, 2), (0, 0), (2, 2), (3, 3), (4, 5)],
        ...     [(5, 5), (0, 1), (1, 1), (2, 3), (3, 4), (0, 6), (1, 6)]])
        >>> hand.check_move(((5, 4), None)) == (hand.rules.tiles.index(4, 5) * 4, True)
        True
        """
        if self.turn < 0:
            raise IllegalMoveError(move, "the hand is over")
        code, flip = parse_move(move, self.rules.tiles, self.lead < 0)
        self._check_legal(code, move)
        return code, flip

    def _check_legal(self, code: int, move) -> None:
        t, e = tile_of(code), end_of(code)
        seat = self.turn
        tile = self.rules.tiles.tiles[t]
        if not self.hands[seat] >> t & 1:
            where = (
                "is already in the layout"
                if self.played >> t & 1
                else f"is not in seat {seat}'s hand"
            )
            raise IllegalMoveError(move, f"{tile} {where}")
        if self.lead < 0:
            return
        name = END_NAMES[e]
        if e >= 2 and not self.cross_open:
            if self.spinner < 0:
                why = "there is no spinner in this hand"
            else:
                why = "the spinner's up and down open only once both its long sides have a tile"
            raise IllegalMoveError(move, f"the {name} end is not open: {why}")
        v = self.ends[e]
        if not (self._suit[v] >> t & 1):
            raise IllegalMoveError(move, f"{tile} does not fit the {name} end (showing {v})")

    def apply(self, code: int, flip: bool = False) -> int:
        """Deprecated name of :meth:`apply_unchecked`."""
        warnings.warn(
            "HandState.apply is renamed apply_unchecked (it does not check the move)",
            DominoesDeprecationWarning,
            stacklevel=2,
        )
        return self.apply_unchecked(code, flip)

    def apply_unchecked(self, code: int, flip: bool = False) -> int:
        """Play an action code taken from :meth:`legal_actions` WITHOUT checking it is legal
        (the fast path for search, the environments and benchmarks; :meth:`play` checks) and
        run the forced draws and passes after it. Returns the points scored. ``flip`` leads a
        non-double high half left. Only refuses a move once the hand is over
        (:class:`IllegalMoveError`); an illegal code otherwise corrupts the state."""
        seat = self.turn
        if seat < 0:
            raise IllegalMoveError(code, "the hand is over")
        count = place(self, code, flip)  # the layout rules, written once (core.layout)
        t = code >> 2
        bit = 1 << t
        self.hands[seat] ^= bit
        self.played |= bit
        points = points_for_count(count)
        self.history.append(_new(Play, (PLAY, seat, code, points)))
        self.moves.append((seat, code, flip))
        self.move_points.append(points)
        if not self.hands[seat]:
            self._end_domino(seat)
        else:
            self._advance(seat)
        return points

    def _advance(self, seat: int) -> None:
        """Move the turn on from ``seat``, performing forced draws and passes."""
        suit, ends, hands = self._suit, self.ends, self.hands
        if self.cross_open:
            open_mask = suit[ends[0]] | suit[ends[1]] | suit[ends[2]] | suit[ends[3]]
        else:
            open_mask = suit[ends[0]] | suit[ends[1]]
        self.open_mask = open_mask
        n = self.n
        s = seat
        passes = 0
        while True:
            s += 1
            if s == n:
                s = 0
            h = hands[s]
            if h & open_mask:
                self.turn = s
                return
            drew = 0
            drawn, limit, bone = self.drawn, self.draw_limit, self.boneyard
            while drawn < limit:
                bit = 1 << bone[drawn]
                drawn += 1
                drew += 1
                h |= bit
                if bit & open_mask:
                    break
            self.drawn = drawn
            hands[s] = h
            values = 1 << ends[0] | 1 << ends[1]
            if self.cross_open:
                values |= 1 << ends[2] | 1 << ends[3]
            if drew:
                self.history.append(_new(Draw, (DRAW, s, drew)))
            if h & open_mask:
                # the last drawn tile is playable; the others drawn with it lack these values too
                self.known_lacks[s] = values if drew > 1 else self.known_lacks[s] | values
                self.turn = s
                return
            self.known_lacks[s] = values if drew else self.known_lacks[s] | values
            self.history.append(_new(Pass, (PASS, s)))
            passes += 1
            if passes == n:
                self._end_blocked()
                return

    def _end_domino(self, seat: int) -> None:
        side = self._side[seat]
        pips = self.tile_pips
        left = 0
        for s in range(self.n):
            if self._side[s] != side:
                for t in iter_bits(self.hands[s]):
                    left += pips[t]
        self.turn = -1
        self.result = Result(DOMINO, seat)
        self.award = Award(side, round_to_five(left))

    def _end_blocked(self) -> None:
        side_pips = [0] * self.rules.num_sides
        for s in range(self.n):
            side_pips[self._side[s]] += self.rules.tiles.mask_pips(self.hands[s])
        self.turn = -1
        self.result = Result(BLOCKED, None)
        self.award = blocked_award(side_pips, self.rules.blocked_award)

    def side_pips(self) -> list[int]:
        """Pips left in each side's hands."""
        out = [0] * self.rules.num_sides
        for s in range(self.n):
            out[self._side[s]] += self.rules.tiles.mask_pips(self.hands[s])
        return out

    # -- display ---------------------------------------------------------------------------
    def layout_str(self) -> str:
        """The layout in one line: the open ends' values, the count and the spinner (the first
        line of ``str(hand)``).

        >>> hand = HandState.from_tiles(RuleConfig(), leader=0, hands=[
        ...     [(6, 6), (6, 3), (1, 2), (0, 0), (2, 2), (3, 3), (4, 5)],
        ...     [(5, 5), (0, 1), (1, 1), (2, 3), (3, 4), (0, 6), (1, 6)]])
        >>> hand.layout_str()
        '(empty layout)'
        >>> hand.play(((6, 6), None)), hand.layout_str()
        (0, 'ends left=6 right=6, count 12, spinner [6|6]')
        """
        return layout_line(self)

    def __str__(self) -> str:
        ts = self.rules.tiles
        lines = [f"Hand (leader seat {self.leader}): {self.layout_str()}"]
        for s in range(self.n):
            mark = "*" if s == self.turn else " "
            tiles = " ".join(str(t) for t in ts.mask_tiles(self.hands[s]))
            lines.append(f"{mark} seat {s}: {tiles}")
        lines.append(f"  boneyard: {self.boneyard_left} tiles")
        if self.result is not None:
            lines.append(f"  over: {self.result[0]}, award {self.award}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<HandState turn={self.turn} {self.layout_str()}>"

    def _repr_svg_(self) -> str:
        """The layout as a picture in Jupyter (drawn by ``dominoes_env.render.svg``)."""
        from dominoes_env.render.svg import layout_svg

        return layout_svg(self)


class _HandSizes(tuple):
    """A tuple of hand sizes that can still be called like the old ``hand_sizes()`` method."""

    __slots__ = ()

    def __call__(self) -> list[int]:
        warnings.warn(
            "HandState.hand_sizes is a property now (a PublicState field); "
            "call-style hand_sizes() is deprecated",
            DominoesDeprecationWarning,
            stacklevel=2,
        )
        return list(self)


def _fits_view(view: SeatView, hands: Sequence[int], boneyard: Sequence[int]) -> bool:
    """Whether the hands, the boneyard and the view's layout hold every tile once, each hand
    as many as the view says (the fast test of :meth:`HandState.from_view`, a determinization's
    every rollout; :func:`_guess_problem` says what is wrong)."""
    seen = view.played
    limit = view.rules.num_tiles
    try:
        for mask in hands:
            if mask.__class__ is bool or seen & mask or mask < 0:
                return False
            seen |= mask
        for t in boneyard:  # in range before the shift: 1 << 10**11 took all the memory
            if t.__class__ is not int:  # numpy's integers (past 64 bits they overflowed);
                if t.__class__ is bool:  # no bool, no float (index refuses 1.5)
                    return False
                t = operator.index(t)
            if not 0 <= t < limit:
                return False
            bit = 1 << t
            if seen & bit:
                return False
            seen |= bit
    except (TypeError, ValueError, OverflowError):  # no integers; numpy's past 64 bits
        return False
    return (seen == view.rules.tiles.full_mask
            and tuple(mask.bit_count() for mask in hands) == view.hand_sizes)


def _guess_problem(view: SeatView, hands: Sequence[int], boneyard: Sequence[int]) -> str:
    """What keeps a guess that :func:`_fits_view` refused from fitting ``view``."""
    ts = view.rules.tiles
    seen = view.played
    for s, mask in enumerate(hands):
        if s == view.seat:
            continue
        mask = as_int(f"hands[{s}]", mask, 0, ts.full_mask)
        if mask.bit_count() != view.hand_sizes[s]:
            return f"seat {s} holds {mask.bit_count()} tiles; the view says {view.hand_sizes[s]}"
        if seen & mask:
            return f"seat {s} holds {ts.tiles[(seen & mask).bit_length() - 1]}, seen elsewhere"
        seen |= mask
    seen |= view.hand
    for tile in boneyard:
        t = as_int("a boneyard tile", tile, 0, ts.num_tiles - 1)
        if seen >> t & 1:
            return f"the boneyard holds {ts.tiles[t]}, seen elsewhere"
        seen |= 1 << t
    missing = ", ".join(str(t) for t in ts.mask_tiles(ts.full_mask & ~seen))
    return f"no hand nor the boneyard holds {missing}"


def _checked_deal(rules: RuleConfig, hands: Any, boneyard: Any) -> tuple[list[int], list[int]]:
    """The hands and boneyard of :class:`HandState`'s constructor, checked as a deal of
    ``rules``: one bitmask of ``hand_size`` tiles of the set per seat, boneyard tile indices
    of the set, every tile of the set exactly once (as :meth:`HandState.from_tiles` checks a
    deal given as tiles)."""
    ts = _check_rules(rules).tiles
    n = rules.num_players
    if not isinstance(hands, (list, tuple)) or len(hands) != n:
        raise ValueError(f"hands must be {n} bitmasks, one per seat; got {short_repr(hands)}")
    if not isinstance(boneyard, (list, tuple)):
        raise TypeError(f"boneyard must be a list of tile indices, not {short_repr(boneyard)}")
    masks, seen = [], 0
    for s, hand in enumerate(hands):
        mask = as_int(f"hands[{s}]", hand, 0, ts.full_mask)
        if mask.bit_count() != rules.hand_size:
            raise ValueError(f"seat {s} was dealt {mask.bit_count()} tiles; hand_size is "
                             f"{rules.hand_size}")
        if seen & mask:
            raise ValueError(f"tile {ts.tiles[(seen & mask).bit_length() - 1]} is dealt twice")
        seen |= mask
        masks.append(mask)
    bone = []
    for tile in boneyard:
        t = as_int("a boneyard tile", tile, 0, ts.num_tiles - 1)
        if seen >> t & 1:
            raise ValueError(f"tile {ts.tiles[t]} is dealt twice")
        seen |= 1 << t
        bone.append(t)
    if seen != ts.full_mask:
        missing = ", ".join(str(t) for t in ts.mask_tiles(ts.full_mask & ~seen))
        raise ValueError(f"the deal must hold every tile of the set exactly once; missing: "
                         f"{missing}")
    return masks, bone


def _check_rules(rules) -> RuleConfig:
    if not isinstance(rules, RuleConfig):
        raise TypeError(f"rules={short_repr(rules)} must be a RuleConfig, not "
                        f"{type(rules).__name__}")
    return rules


def _check_code(hand: HandState, code) -> None:
    """``ValueError`` (``TypeError`` for a non-integer) unless ``code`` is an action code of the
    hand's tile set: ``0..num_tiles * 4 - 1``."""
    as_int("code", code, 0, len(hand.tile_pips) * 4 - 1)


def _tile_index(ts, tile, where: str) -> int:
    if not isinstance(tile, (list, tuple)) or len(tile) != 2:
        raise ValueError(
            f"{short_repr(tile)} in {where} is not a tile; a tile is a pair [a, b]")
    try:
        a, b = (as_int("a tile's half", half) for half in tile)
    except TypeError:
        raise ValueError(f"{short_repr(tile)} in {where} is not a tile; halves must be integers"
                         ) from None
    return ts.index(a, b)
