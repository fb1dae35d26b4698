"""OpenSpiel's information-set MCTS (``open_spiel.python.algorithms.ismcts``) as an agent.

The agent spec is ``ismcts`` (``ismcts:sims=100,uct_c=2,rollouts=1``). For each decision it
builds the OpenSpiel game of :mod:`dominoes_env.openspiel` for the view's rules as a one-hand
episode scored by ``score_delta`` (the points each side gains to the end of the hand, as
:mod:`agents.search` scores its rollouts), and runs OpenSpiel's own
``open_spiel.python.algorithms.ismcts.ISMCTSBot``, unchanged, from a state built from the view:
every simulation starts from the state's ``resample_from_infostate`` (a fresh guess of the
hidden tiles, uniform among the deals that fit what the seat has seen), forced draws are chance
nodes, and the tree's nodes are the seat's observations (own tiles, scores and the hand's
public history). Leaves are valued by one random rollout to the end of the hand. The bot's
resampler is that same method, given the agent's seeded generator instead of OpenSpiel's
randomly seeded ``UniformProbabilitySampler``, so a seeded agent plays the same moves again.

OpenSpiel's C++ ``pyspiel.ISMCTSBot`` cannot play a Python game: ``ismcts:bot=cpp`` is refused
with the reason (:data:`CPP_BOT_REFUSED`) instead of crashing the interpreter.

Needs the ``openspiel`` extra.

>>> from dominoes_env.core import MatchState
>>> match = MatchState(seed=4)
>>> agent = ISMCTSAgent(seed=0, sims=20)
>>> agent.act(match.view(match.turn)) in match.legal_actions()
True
"""

from __future__ import annotations

import numpy as np

from dominoes_env.core import RuleConfig, SeatView
from dominoes_env.core.sampling import DealSampler
from dominoes_env.core.validation import as_float, as_int

from .base import MAX_SIMS, Agent

#: why ``bot=cpp`` is refused (OpenSpiel 2.0's bindings; see docs/openspiel.md)
CPP_BOT_REFUSED = (
    "OpenSpiel's C++ pyspiel.ISMCTSBot cannot play a Python game such as "
    "python_straight_dominoes: its step() lets go of Python's interpreter lock and then calls "
    "the game's Python methods (information_state_string first), which crashes the interpreter "
    "with a segmentation fault; use bot=python, OpenSpiel's own Python ISMCTSBot (the default)"
)

#: the fewest simulations a decision runs: OpenSpiel's first one only expands the root
MIN_SIMS = 2


def _openspiel():
    try:
        from open_spiel.python.algorithms import ismcts, mcts

        from dominoes_env import openspiel
    except ImportError:
        raise ImportError(
            "the ismcts agent needs OpenSpiel: pip install 'straight-dominoes[openspiel]'"
        ) from None
    return openspiel, ismcts, mcts


class ISMCTSAgent(Agent):
    """OpenSpiel's ISMCTS with ``sims`` simulations per decision, exploration constant
    ``uct_c`` and ``rollouts`` random rollouts per leaf. ``bot`` is ``"python"``
    (``open_spiel.python.algorithms.ismcts.ISMCTSBot``); ``"cpp"`` is refused with
    :data:`CPP_BOT_REFUSED`.

    ``sims`` is at least 2 (:data:`MIN_SIMS`): OpenSpiel's first simulation only expands the
    root, which then has no visits to choose a move by. ``sims * rollouts`` is at most
    :data:`~agents.base.MAX_SIMS`, the rollouts a searching agent may run per decision, so a
    decision always ends. Values outside either bound are a ``ValueError`` naming them."""

    name = "ismcts"

    def __init__(self, seed: int | None = None, sims: int = 100, uct_c: float = 2.0,
                 rollouts: int = 1, bot: str = "python"):
        super().__init__(seed)
        if bot == "cpp":
            raise ValueError(f"bot=cpp is refused: {CPP_BOT_REFUSED}")
        if bot != "python":
            raise ValueError(f"bot={bot!r} is not allowed; allowed: python (cpp is refused)")
        self.sims = as_int("sims", sims, MIN_SIMS, MAX_SIMS)
        self.uct_c = as_float("uct_c", uct_c, 0)
        self.rollouts = as_int("rollouts", rollouts, 1)
        if self.sims * self.rollouts > MAX_SIMS:
            raise ValueError(f"sims={self.sims} with rollouts={self.rollouts} runs "
                             f"{self.sims * self.rollouts:,} rollouts a decision; at most "
                             f"{MAX_SIMS:,} (a decision would, in effect, never end)")
        self._openspiel, self._ismcts, self._mcts = _openspiel()
        self._games: dict[RuleConfig, object] = {}

    def _game(self, rules: RuleConfig):
        game = self._games.get(rules)
        if game is None:
            game = self._games[rules] = self._openspiel.load_game(
                rules, episode="hand", reward_mode="score_delta")
        return game

    def act(self, view: SeatView) -> int:
        legal = view.legal
        if not legal:
            raise ValueError(f"seat {view.seat} has no legal move: it is not its turn")
        if len(legal) == 1:
            return legal[0]
        game = self._game(view.rules)
        rng = self.rng
        root = self._openspiel.state_from_view(game, view,
                                               *DealSampler.from_view(view).sample(rng))

        def resample(state, player):
            return state.resample_from_infostate(player, rng.random)

        random_state = np.random.RandomState(rng.getrandbits(32))
        evaluator = self._mcts.RandomRolloutEvaluator(self.rollouts, random_state)
        bot = self._ismcts.ISMCTSBot(
            game, evaluator, self.uct_c, self.sims, random_state=random_state,
            final_policy_type=self._ismcts.ISMCTSFinalPolicyType.MAX_VISIT_COUNT,
            use_observation_string=True,
        )
        bot.set_resampler(resample)
        return int(bot.step(root))

    def __repr__(self) -> str:
        return f"ISMCTSAgent(sims={self.sims}, uct_c={self.uct_c}, rollouts={self.rollouts})"
