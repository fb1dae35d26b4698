"""Putting a tile on the layout (:func:`place`), written once: the lead (which may be the
spinner), a play on an end, the spinner's sides and the opening of its cross, and the count.

:meth:`HandState.apply_unchecked <dominoes_env.core.HandState.apply_unchecked>` calls it for
every play; the observation encoder calls it on a :class:`Layout`, a copy of a state's layout
fields alone, to look one move ahead without a full state.

>>> from dominoes_env.core import HandState, RuleConfig
>>> hand = HandState.from_tiles(RuleConfig(), leader=0, hands=[
...     [(6, 6), (6, 3), (1, 2), (0, 0), (2, 2), (3, 3), (4, 5)],
...     [(5, 5), (0, 1), (1, 1), (2, 3), (3, 4), (0, 6), (1, 6)]])
>>> _ = hand.play(((6, 6), None))
>>> after = Layout.of(hand.view(1))
>>> place(after, hand.rules.tiles.index(1, 6) * 4 + 0)   # [6|1] on the left: 12 + 1
13
>>> after.ends, after.spinner_free, hand.ends   # the copy moved, the hand did not
([1, 6, 6, 6], [False, True], [6, 6, 6, 6])
"""

from __future__ import annotations

from .rules import RuleConfig
from .scoring import count_after

SPINNER_FIRST, SPINNER_LEAD, SPINNER_NONE = 0, 1, 2
#: ``RuleConfig.spinner`` -> the code :func:`place` reads
SPINNER_MODES = {
    "first_double": SPINNER_FIRST,
    "lead_double_only": SPINNER_LEAD,
    "none": SPINNER_NONE,
}

#: the layout fields of a :class:`~dominoes_env.core.PublicState` that :func:`place` changes
LAYOUT_FIELDS = ("lead", "lead_pips", "ends", "contrib", "arm", "spinner", "spinner_free",
                 "spinner_sides", "cross_open", "count")


#: the ends that take a tile once the lead is down: left and right, then up and down too once
#: the spinner's cross is open (end codes, as :func:`~dominoes_env.core.end_of` reads them)
LONG_ENDS, ALL_ENDS = (0, 1), (0, 1, 2, 3)


def open_ends(src) -> tuple[int, ...]:
    """The ends of ``src`` (a hand, a seat's view or a :class:`Layout`: anything with ``lead``
    and ``cross_open``) that take a tile now: none before the lead, then :data:`LONG_ENDS`, and
    :data:`ALL_ENDS` once the cross is open.

    >>> from dominoes_env.core import MatchState
    >>> open_ends(MatchState(seed=1).view(0))  # nothing led yet
    ()
    """
    if src.lead < 0:
        return ()
    return ALL_ENDS if src.cross_open else LONG_ENDS


#: the rule tables :func:`set_rule_tables` gives a :class:`Layout` or a
#: :class:`~dominoes_env.core.HandState` and :func:`place` reads (public, read-only attributes)
RULE_TABLES = ("tile_pips", "tile_double", "tile_low", "spinner_mode", "cross_now")


class Layout:
    """The layout fields of one state (its ``lead``, ends, arms, spinner and count) plus the
    rule tables :func:`place` reads; a scratch copy to play a tile on. Build with :meth:`of`."""

    __slots__ = (*LAYOUT_FIELDS, *RULE_TABLES)

    @classmethod
    def of(cls, src, rules: RuleConfig | None = None) -> Layout:
        """A copy of the layout of ``src`` (any :class:`~dominoes_env.core.PublicState`;
        ``rules`` defaults to ``src.rules``)."""
        new = object.__new__(cls)
        set_rule_tables(new, src.rules if rules is None else rules)
        new.lead, new.lead_pips, new.count = src.lead, src.lead_pips, src.count
        new.ends, new.contrib, new.arm = list(src.ends), list(src.contrib), list(src.arm)
        new.spinner, new.spinner_sides = src.spinner, src.spinner_sides
        new.spinner_free, new.cross_open = list(src.spinner_free), src.cross_open
        return new

    def copy(self) -> Layout:
        new = object.__new__(Layout)
        new.tile_pips, new.tile_double = self.tile_pips, self.tile_double
        new.tile_low = self.tile_low
        new.spinner_mode, new.cross_now = self.spinner_mode, self.cross_now
        new.lead, new.lead_pips, new.count = self.lead, self.lead_pips, self.count
        new.ends, new.contrib, new.arm = list(self.ends), list(self.contrib), list(self.arm)
        new.spinner, new.spinner_sides = self.spinner, self.spinner_sides
        new.spinner_free, new.cross_open = list(self.spinner_free), self.cross_open
        return new


def set_rule_tables(obj, rules: RuleConfig) -> None:
    """Give ``obj`` the rule tables :func:`place` reads (:data:`RULE_TABLES`): ``tile_pips``,
    ``tile_double``, ``tile_low`` (the :class:`~dominoes_env.core.TileSet`'s ``pips``,
    ``is_double`` and ``low``), ``spinner_mode`` (:data:`SPINNER_MODES` of ``rules.spinner``)
    and ``cross_now`` (whether the spinner's cross opens at once)."""
    ts = rules.tiles
    obj.tile_pips, obj.tile_double, obj.tile_low = ts.pips, ts.is_double, ts.low
    obj.spinner_mode = SPINNER_MODES[rules.spinner]
    obj.cross_now = rules.spinner_cross == "immediately"


def place(x, code: int, flip: bool = False) -> int:
    """Put the tile of action ``code`` (assumed legal) on the layout of ``x`` (a
    :class:`Layout` or a :class:`~dominoes_env.core.HandState`; its layout fields change in
    place) and return the new count. The lead shows its low half left (``flip``: high half
    left); a double lead is the spinner unless ``spinner="none"``. A later play covers end
    ``code & 3``; under ``spinner="first_double"`` the first double on left / right becomes the
    spinner; the spinner's up and down open once both its long sides are covered (or at once
    under ``spinner_cross="immediately"``)."""
    count = count_after(code, x.lead, x.lead_pips, x.ends, x.contrib, x.arm, x.tile_pips,
                        x.tile_double)
    t = code >> 2
    dbl = x.tile_double[t]
    ends, contrib = x.ends, x.contrib
    if x.lead < 0:
        a = x.tile_pips[t]
        x.lead = t
        x.lead_pips = a
        lo = x.tile_low[t]
        hi = a - lo
        if flip:
            lo, hi = hi, lo
        ends[0], ends[1] = lo, hi
        if dbl:
            contrib[0] = contrib[1] = a
            if x.spinner_mode != SPINNER_NONE:
                x.spinner = t
                x.spinner_free[0] = x.spinner_free[1] = True
                ends[2] = ends[3] = lo
                x.cross_open = x.cross_now
        else:
            contrib[0], contrib[1] = lo, hi
    else:
        e = code & 3
        v = ends[e]
        other = x.tile_pips[t] - v
        ends[e] = other
        contrib[e] = other + other if dbl else other
        x.arm[e] += 1
        if e < 2:
            if x.spinner_free[e]:
                x.spinner_free[e] = False
                x.spinner_sides += 1
                if x.spinner_sides == 2:
                    x.cross_open = True
            elif dbl and x.spinner < 0 and x.spinner_mode == SPINNER_FIRST:
                x.spinner = t
                x.spinner_sides = 1
                x.spinner_free[e] = True
                ends[2] = ends[3] = v
                x.cross_open = x.cross_now
    x.count = count
    return count
