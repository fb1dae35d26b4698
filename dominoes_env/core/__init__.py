"""The game core: the rules of Straight Dominoes in plain Python (no numpy, gymnasium or
pettingzoo). Every other layer asks this package what is legal and what scores, and reads game
states through the :class:`PublicState` / :class:`FullState` protocols of :mod:`.state`."""

from .errors import DominoesDeprecationWarning, IllegalMoveError, NoHandError, RecordError
from .events import DRAW, PASS, PLAY, Award, Draw, Outcome, Pass, Play, Result
from .greedy import POINT_SCALE, greedy_best, tie_rank
from .hand import HandState
from .match import MatchState, leader_after
from .moves import DOWN, END_NAMES, LEFT, RIGHT, UP, Move, code_of, end_of, tile_of
from .rules import RuleConfig
from .sampling import DealSampler, determinize
from .scoring import (
    SCORE_UNIT,
    blocked_award,
    count_after,
    match_winner,
    points_for_count,
    round_to_five,
    wins_by_play,
)
from .state import FullState, PublicState
from .tiles import Tile, TileSet, iter_bits, tile_set
from .view import SeatView

__all__ = [
    "DOWN", "DRAW", "END_NAMES", "LEFT", "PASS", "PLAY", "POINT_SCALE", "RIGHT", "SCORE_UNIT",
    "UP",
    "Award", "DealSampler", "DominoesDeprecationWarning", "Draw", "FullState", "HandState",
    "IllegalMoveError", "MatchState", "Move", "NoHandError", "Outcome", "Pass", "Play",
    "PublicState", "RecordError", "Result", "RuleConfig", "SeatView", "Tile", "TileSet",
    "blocked_award", "code_of", "count_after", "determinize", "end_of", "greedy_best",
    "iter_bits", "leader_after", "match_winner", "points_for_count", "round_to_five", "tie_rank",
    "tile_of", "tile_set", "wins_by_play",
]  # fmt: skip
