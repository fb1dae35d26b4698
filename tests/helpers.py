"""Test helpers: scripted deals, so a worked example is played move by move through the engine."""

from __future__ import annotations

import random

from dominoes_env.core import HandState, MatchState, RuleConfig

#: the environment configurations every env test covers (the issue's list)
ENV_CONFIGS = {
    "2p": dict(num_players=2),
    "3p": dict(num_players=3),
    "4p": dict(num_players=4),
    "4p-solo": dict(num_players=4, partnerships=False),
    "d9": dict(num_players=2, max_pip=9),
}


def scripted_hand(
    moves, rules: RuleConfig | None = None, leader: int = 0, extra=None, boneyard=None
) -> HandState:
    """A deal in which seat ``(leader + i) % n`` holds the tile of scripted move ``i``.

    ``moves`` are ``(tile, end)`` pairs; ``extra`` maps a seat to further tiles it holds. Every
    hand is filled up to ``hand_size`` with tiles no move uses; ``boneyard`` (tiles, draw order)
    comes first in the boneyard, the unused rest follows in index order.
    """
    rules = rules or RuleConfig()
    ts = rules.tiles
    n = rules.num_players
    hands = [[] for _ in range(n)]
    for i, (tile, _end) in enumerate(moves):
        hands[(leader + i) % n].append(tuple(tile))
    for seat, tiles in (extra or {}).items():
        hands[seat].extend(tuple(t) for t in tiles)
    used = {ts.index(*t) for h in hands for t in h}
    front = [tuple(t) for t in (boneyard or [])]
    used |= {ts.index(*t) for t in front}
    spare = [t for i, t in enumerate(ts.tiles) if i not in used]
    for h in hands:
        while len(h) < rules.hand_size:
            h.append(spare.pop())
    return HandState.from_tiles(rules, hands, front + spare, leader)


def play_script(moves, **kwargs):
    """Play scripted moves, checking each is made by the expected seat; returns (hand, counts,
    points)."""
    hand = scripted_hand(moves, **kwargs)
    counts, points = [], []
    for i, move in enumerate(moves):
        expected = (hand.leader + i) % hand.n
        assert hand.turn == expected, f"move {i} {move}: turn is seat {hand.turn}, not {expected}"
        points.append(hand.play(move))
        counts.append(hand.count)
    return hand, counts, points


def random_positions(rules: RuleConfig, count: int, seed: int, stride: int = 1000):
    """``count`` positions from random matches (random play), as ``(hand, view)`` pairs: a copy
    of the full hand and the view of the seat to play. Match ``g`` is seeded
    ``seed * stride + g``."""
    rng = random.Random(seed)
    out, game = [], 0
    while len(out) < count:
        match = MatchState(rules, seed=seed * stride + game)
        game += 1
        while not match.is_over and len(out) < count:
            out.append((match.hand.copy(), match.view(match.turn)))
            match.play(rng.choice(match.legal_actions()))
    return out


def comparable_info(info: dict) -> dict:
    """An env info with its arrays as tuples, so whole trajectories compare with ``==``."""
    return {k: tuple(v.tolist()) if hasattr(v, "tolist") else v for k, v in info.items()}
