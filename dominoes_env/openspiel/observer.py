"""What a seat observes: the observer OpenSpiel asks for observation tensors and strings, the
observation string and the (perfect recall) information state string."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..core import RuleConfig
from ..core.validation import as_int
from ..obs import DEFAULT_VERSION, observation_spec
from .spiel import pyspiel

if TYPE_CHECKING:
    from .state import StraightDominoesState


class StraightDominoesObserver:
    """Observations (the env's encoding of observation version ``obs_version``) and information
    states (perfect recall)."""

    def __init__(self, rules: RuleConfig, iig_obs_type=None, obs_version: int = DEFAULT_VERSION):
        if iig_obs_type is None:
            iig_obs_type = pyspiel.IIGObservationType(perfect_recall=False)
        if iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER or (
            not iig_obs_type.public_info
        ):
            raise ValueError(
                "python_straight_dominoes observes one seat's private and public information "
                "only (private_info=SINGLE_PLAYER, public_info=True)"
            )
        self.rules = rules
        self.perfect_recall = iig_obs_type.perfect_recall
        self.spec = observation_spec(obs_version)
        size = 0 if self.perfect_recall else self.spec.layout(rules).size
        self.tensor = np.zeros(size, np.float32)
        self.dict = {"observation": self.tensor}

    def set_from(self, state: StraightDominoesState, player: int) -> None:
        if self.perfect_recall:
            return
        hand = state.match.hand
        if hand is None:
            self.tensor.fill(0.0)
        else:
            self.spec.encode(state.match.view(player), out=self.tensor)

    def string_from(self, state: StraightDominoesState, player: int) -> str:
        if self.perfect_recall:  # checked there, as observation_string's view checks it
            return information_state_string(state, player)
        return observation_string(state, player)


def observation_string(state: StraightDominoesState, player: int) -> str:
    """The seat's own tiles, scores, leader and this hand's public history."""
    match = state.match
    if match.hand is None:
        return f"p{player} dealing"
    v = match.view(player)
    tiles = " ".join(str(t) for t in v.hand_tiles)
    history = " ".join(",".join(map(str, ev)) for ev in v.history)
    return (f"p{player} hand {v.hand_number} scores {list(v.scores)} leader {v.leader} "
            f"turn {v.turn} | {tiles} | {history}")


def information_state_string(state: StraightDominoesState, player: int) -> str:
    """Everything ``player`` has seen, in order: its own deal and draws, every leader and
    every move (the other seats' tiles show only as who received one)."""
    # any player was taken ('p9 ...'), where the observation string refused it
    player = as_int("player", player, 0, state.get_game().num_players() - 1)
    out = [f"p{player}"]
    for kind, seat, value in state.log:
        if kind == "P":
            out.append(f"P{seat}:{value}")
        elif kind in ("D", "W"):
            out.append(f"{kind}{value}" if seat == player else f"{kind.lower()}{seat}")
        elif kind == "L":
            out.append(f"L{seat}")
        else:  # a state built from a view: what this seat saw there
            out.append("R:" + state.root_strings[player])
    return " ".join(out)
