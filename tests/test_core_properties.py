"""Property tests over many random full matches, for every rule configuration family.

Invariants checked after every play: tiles are conserved; the legal moves equal an independent
re-statement of the rules; every play's points equal the count rule recomputed from scratch;
scores are multiples of 5 and never decrease; the match ends exactly when the rules say; a view
holds its own seat's tiles and nothing that depends on the other seats' hidden tiles.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dominoes_env.core import MatchState, RuleConfig, iter_bits, points_for_count, round_to_five
from dominoes_env.core.view import make_view

from .helpers import CONFIGS
from .reference import ENDS, ReferenceLayout

MATCHES = 200  # per configuration and per test run; the seeds differ every configuration


def check_hand_invariants(hand, rules):
    ts = rules.tiles
    seen = hand.played
    total = hand.played.bit_count()
    for h in hand.hands:
        assert not seen & h, "a tile is in two places"
        seen |= h
        total += h.bit_count()
    for t in hand.boneyard[hand.drawn :]:
        assert not seen >> t & 1
        seen |= 1 << t
        total += 1
    assert seen == ts.full_mask and total == ts.num_tiles, "tiles not conserved"
    # public inference is sound: a seat never holds a value it is "known" to lack, except the
    # tile it has just drawn and must play now
    for s, lacks in enumerate(hand.known_lacks):
        held = hand.hands[s]
        if s == hand.turn and hand.history[-1][:2] == ("draw", s):
            held &= ~(1 << hand.boneyard[hand.drawn - 1])
        for v in range(ts.num_values):
            if lacks >> v & 1:
                assert not held & ts.suit_mask[v], f"seat {s} holds a {v} it 'lacks'"


def play_checked_match(rules: RuleConfig, seed: int) -> MatchState:
    rng = random.Random(seed)
    match = MatchState(rules, seed=seed)
    n, target = rules.num_players, rules.target_score
    ref, ref_hand = None, None
    last_scores = list(match.scores)
    while not match.is_over:
        hand = match.hand
        if hand is not ref_hand:
            ref, ref_hand = ReferenceLayout(rules), hand
        seat = hand.turn
        # legal moves against the reference
        legal = hand.legal_actions()
        expected = ref.legal(hand.hands[seat])
        got = {(c >> 2, None if hand.lead < 0 else ENDS[c & 3]) for c in legal}
        assert got == expected
        # the view: own tiles, and identical when the other seats' hidden tiles are shuffled
        view = match.view(seat)
        assert view.hand == hand.hands[seat] and view.legal == tuple(legal)
        if rng.random() < 0.1:
            assert_view_ignores_hidden_tiles(hand, seat, view, match, rng)
        code = legal[rng.randrange(len(legal))]
        tile, end = code >> 2, (None if hand.lead < 0 else ENDS[code & 3])
        hand_before = match.hand_number
        points = match.play(code)
        ref.play(tile, end)
        assert points == points_for_count(ref.count())
        assert hand.count == ref.count()
        check_hand_invariants(hand, rules)
        if hand.is_over:
            check_award(hand, rules)
        # scores
        assert all(s % 5 == 0 for s in match.scores)
        assert all(a >= b for a, b in zip(match.scores, last_scores, strict=True))
        last_scores = list(match.scores)
        # the match ends exactly when the rules say
        top = max(match.scores)
        if rules.win_check == "immediate":
            assert match.is_over == (top >= target)
        else:
            ended_hand = hand.is_over
            assert match.is_over == (ended_hand and top >= target and match.scores.count(top) == 1)
        if not match.is_over and hand.is_over:
            assert match.hand_number == hand_before + 1
            check_next_leader(match, hand, rules)
    assert match.winner == match.scores.index(max(match.scores))
    assert len(match.hand_scores) == len(match.finished_hands)
    assert n == len(match.hand.hands)
    return match


def check_award(hand, rules):
    ts = rules.tiles
    side_pips = [0] * rules.num_sides
    for s, h in enumerate(hand.hands):
        side_pips[rules.side_of(s)] += sum(ts.pips[i] for i in iter_bits(h))
    kind, seat = hand.result
    if kind == "domino":
        side = rules.side_of(seat)
        assert hand.hands[seat] == 0
        assert hand.award == (
            side,
            round_to_five(sum(p for s, p in enumerate(side_pips) if s != side)),
        )
    else:
        assert [e[0] for e in hand.history[-rules.num_players :]] == ["pass"] * rules.num_players
        assert not any(h & hand.open_mask for h in hand.hands) and hand.drawable == 0
        low = min(side_pips)
        if side_pips.count(low) > 1:
            assert hand.award is None
        else:
            side = side_pips.index(low)
            others = [p for s, p in enumerate(side_pips) if s != side]
            pts = (
                sum(others)
                if rules.blocked_award == "opponents_total"
                else sum(p - low for p in others)
            )
            assert hand.award == (side, round_to_five(pts))


def check_next_leader(match, finished, rules):
    if rules.next_leader == "rotate":
        assert match.hand.leader == (finished.leader + 1) % rules.num_players
    elif finished.result[0] == "domino":
        assert match.hand.leader == finished.result[1]


def assert_view_ignores_hidden_tiles(hand, seat, view, match, rng):
    """Swap one hidden tile between two places this seat cannot see: its view must not change."""
    other = [s for s in range(hand.n) if s != seat and hand.hands[s]]
    places = [("hand", s) for s in other]
    if hand.boneyard_left:
        places.append(("boneyard", None))
    if len(places) < 2:
        return
    a, b = rng.sample(places, 2)
    clone = hand.copy()
    bone = list(clone.boneyard)

    def pick(place):
        kind, s = place
        if kind == "hand":
            return rng.choice(list(iter_bits(clone.hands[s])))
        return bone[rng.randrange(clone.drawn, len(bone))]

    ta, tb = pick(a), pick(b)
    for (kind, s), old, new in ((a, ta, tb), (b, tb, ta)):
        if kind == "hand":
            clone.hands[s] = clone.hands[s] & ~(1 << old) | 1 << new
        else:
            bone[bone.index(old)] = new
    clone.boneyard = tuple(bone)
    swapped = make_view(
        clone, seat, tuple(match.scores), match.rules.target_score, match.hand_number, match.winner
    )
    assert swapped == view


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_random_matches_keep_every_invariant(name):
    rules = RuleConfig(**CONFIGS[name])
    base = sum(map(ord, name)) * 100_003
    for i in range(MATCHES):
        play_checked_match(rules, base + i)


@settings(max_examples=60, deadline=None)
@given(
    num_players=st.sampled_from([2, 3, 4]),
    max_pip=st.sampled_from([6, 9]),
    spinner=st.sampled_from(["first_double", "lead_double_only", "none"]),
    cross=st.sampled_from(["after_both_sides", "immediately"]),
    win_check=st.sampled_from(["immediate", "end_of_hand"]),
    next_leader=st.sampled_from(["domino_else_random", "rotate"]),
    blocked=st.sampled_from(["opponents_total", "difference"]),
    hand_size=st.integers(1, 7),
    reserve=st.integers(0, 3),
    target=st.integers(5, 150),
    seed=st.integers(0, 2**32 - 1),
)
def test_any_rule_combination_plays_valid_matches(
    num_players,
    max_pip,
    spinner,
    cross,
    win_check,
    next_leader,
    blocked,
    hand_size,
    reserve,
    target,
    seed,
):
    boneyard = (max_pip + 1) * (max_pip + 2) // 2 - num_players * hand_size
    rules = RuleConfig(
        num_players=num_players,
        max_pip=max_pip,
        spinner=spinner,
        spinner_cross=cross,
        win_check=win_check,
        next_leader=next_leader,
        blocked_award=blocked,
        hand_size=hand_size,
        boneyard_reserve=min(reserve, boneyard),
        target_score=target,
    )
    play_checked_match(rules, seed)


def test_same_seed_same_match():
    def trace(seed):
        m = MatchState(RuleConfig(num_players=3), seed=seed)
        rng = random.Random(seed)
        out = []
        while not m.is_over:
            legal = m.legal_actions()
            out.append(m.play(legal[rng.randrange(len(legal))]))
        return out, m.scores, len(m.finished_hands)

    assert trace(11) == trace(11)
    assert trace(11) != trace(12)
