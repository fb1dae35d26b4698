"""Typed events and outcomes: named records that still equal the plain tuples readers know."""

from __future__ import annotations

import json
import pickle
import random

import pytest

from dominoes_env.core import (
    Award,
    Draw,
    HandState,
    MatchState,
    Outcome,
    Pass,
    Play,
    Result,
    RuleConfig,
    end_of,
    tile_of,
)
from dominoes_env.core.events import as_event


def finished_hands(n: int, seed: int):
    rng = random.Random(seed)
    for _ in range(n):
        hand = HandState.deal(RuleConfig(num_players=rng.choice((2, 3, 4))), rng, 0)
        while hand.turn >= 0:
            hand.play(rng.choice(hand.legal_actions()))
        yield hand


def test_history_holds_typed_records_equal_to_the_plain_tuples():
    kinds = set()
    for hand in finished_hands(30, seed=1):
        for ev in hand.history:
            assert type(ev) in (Play, Draw, Pass)
            kinds.add(type(ev))
            assert ev == tuple(ev) and ev[0] == ev.kind and ev[1] == ev.seat
            assert as_event(tuple(ev)) == ev and type(as_event(tuple(ev))) is type(ev)
            if isinstance(ev, Play):
                assert (ev.tile, ev.end) == (tile_of(ev.code), end_of(ev.code))
        plays = [ev for ev in hand.history if isinstance(ev, Play)]
        assert [ev.points for ev in plays] == hand.move_points
        assert sum(ev.n for ev in hand.history if isinstance(ev, Draw)) == hand.drawn
    assert kinds == {Play, Draw, Pass}


def test_outcome_says_how_who_and_the_award():
    for hand in finished_hands(40, seed=2):
        out = hand.outcome
        assert isinstance(out, Outcome) and isinstance(hand.result, Result)
        assert out == (*hand.result, hand.award)
        if out.kind == "domino":
            assert hand.hands[out.seat] == 0
            assert isinstance(out.award, Award) and out.award.side == hand.rules.side_of(out.seat)
        else:
            assert out.kind == "blocked" and out.seat is None
            assert out.award is None or isinstance(out.award, Award)
    assert MatchState(seed=0).hand.outcome is None


def test_records_pickle_and_serialise_like_tuples():
    hand = next(finished_hands(1, seed=3))
    events = list(hand.history)
    assert pickle.loads(pickle.dumps(events)) == events
    assert [type(e) for e in pickle.loads(pickle.dumps(events))] == [type(e) for e in events]
    assert json.loads(json.dumps(events)) == [list(e) for e in events]
    assert pickle.loads(pickle.dumps(hand.outcome)) == hand.outcome


def test_unknown_event_kind_is_refused():
    with pytest.raises(ValueError, match="unknown event kind 'chat'"):
        as_event(("chat", 0))
