"""The game core: the rules of Straight Dominoes in plain Python (no numpy, gymnasium or
pettingzoo). Every other layer asks this package what is legal and what scores, and reads game
states through the :class:`PublicState` / :class:`FullState` protocols of :mod:`.state`."""

from .errors import IllegalMoveError, RecordError
from .hand import DRAW, PASS, PLAY, HandState
from .match import MatchState
from .moves import DOWN, END_NAMES, LEFT, RIGHT, UP, Move
from .rules import RuleConfig
from .scoring import blocked_award, count_after, points_for_count, round_to_five
from .state import FullState, PublicState
from .tiles import Tile, TileSet, iter_bits, tile_set
from .view import SeatView

__all__ = [
    "DOWN", "DRAW", "END_NAMES", "LEFT", "PASS", "PLAY", "RIGHT", "UP",
    "FullState", "HandState", "IllegalMoveError", "MatchState", "Move", "PublicState",
    "RecordError", "RuleConfig", "SeatView", "Tile", "TileSet", "blocked_award", "count_after",
    "iter_bits", "points_for_count", "round_to_five", "tile_set",
]  # fmt: skip
