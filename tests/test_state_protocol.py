"""The public state protocol: the encoders and renderers read a state only through the
``PublicState`` / ``FullState`` fields, so any backend that offers them encodes and draws alike.

Each check hands the reader a bare object holding nothing but the protocol's fields (copied from
a real ``HandState``) and asks for exactly what the real state gives."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from dominoes_env.core import FullState, HandState, MatchState, PublicState, RuleConfig, SeatView
from dominoes_env.core.state import FULL_FIELDS, PUBLIC_FIELDS
from dominoes_env.obs.v2 import encode_hand_state, observation_layout, state_vector
from dominoes_env.render.ansi import render_ansi
from dominoes_env.render.layout import place_tiles
from dominoes_env.render.svg import layout_svg
from tests.helpers import ENV_CONFIGS


def bare(state, fields, **extra) -> SimpleNamespace:
    """An object with only ``fields`` of ``state`` (copied as immutable values)."""
    values = {}
    for name in fields:
        v = getattr(state, name)
        values[name] = tuple(v) if isinstance(v, list) else v
    return SimpleNamespace(**values, **extra)


def positions(rules: RuleConfig, seed: int, every: int = 3):
    match = MatchState(rules, seed=seed)
    step = 0
    while not match.is_over and match.hand_number < 2:
        if step % every == 0:
            yield match
        match.play(match.legal_actions()[step * 7 % len(match.legal_actions())])
        step += 1


def test_hand_state_and_view_satisfy_the_protocols():
    m = MatchState(seed=1)
    assert isinstance(m.hand, FullState) and isinstance(m.hand, PublicState)
    view = m.view(0)
    assert isinstance(view, PublicState) and not isinstance(view, FullState)
    for name in PUBLIC_FIELDS:
        assert hasattr(SeatView, name) or name in SeatView.__dataclass_fields__, name
        assert hasattr(m.hand, name), name
    assert m.hand.hand_sizes == view.hand_sizes == (7, 7)


def test_hand_sizes_call_style_is_deprecated_but_works():
    hand = MatchState(seed=2).hand
    with pytest.warns(DeprecationWarning, match="hand_sizes is a property"):
        assert hand.hand_sizes() == [7, 7]


@pytest.mark.parametrize("config", sorted(ENV_CONFIGS))
def test_encoder_reads_only_the_protocol(config):
    rules = RuleConfig(**ENV_CONFIGS[config])
    lay = observation_layout(rules)
    for match in positions(rules, seed=5):
        hand = match.hand
        proxy = bare(hand, PUBLIC_FIELDS + FULL_FIELDS,
                     legal_actions=lambda h=hand: h.legal_actions())
        for seat in range(rules.num_players):
            want = encode_hand_state(lay, hand, seat, match.scores, False)
            got = encode_hand_state(lay, proxy, seat, match.scores, False)
            np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(state_vector(match, hand=proxy), state_vector(match))


@pytest.mark.parametrize("config", ["2p", "4p"])
def test_renderers_read_only_the_protocol(config):
    rules = RuleConfig(**ENV_CONFIGS[config])
    for match in positions(rules, seed=9, every=2):
        proxy = bare(match.hand, PUBLIC_FIELDS)
        assert place_tiles(proxy) == place_tiles(match.hand)
        assert render_ansi(proxy, match.scores) == render_ansi(match.hand, match.scores)
        assert layout_svg(proxy) == layout_svg(match.hand)


def test_lead_orientation_is_read_from_the_public_history():
    # the flipped lead [6|3] shows 6 on the left; a reader sees it from the first tile played
    hand = HandState.from_tiles(RuleConfig(), leader=0, hands=[
        [(6, 3), (0, 0), (1, 1), (2, 2), (4, 4), (5, 5), (0, 2)],
        [(6, 1), (0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (0, 3)]])
    hand.play(((6, 3), None))
    hand.play(((6, 1), "left"))
    proxy = bare(hand, PUBLIC_FIELDS)
    line = [(t.first, t.second) for t in place_tiles(proxy).line]
    assert line == [(1, 6), (6, 3)]
