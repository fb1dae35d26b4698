"""OpenSpiel's information-set MCTS (``open_spiel.python.algorithms.ismcts``) as an agent.

The agent spec is ``ismcts`` (``ismcts:sims=100,uct_c=2,rollouts=1``). For each decision it
builds the OpenSpiel game of :mod:`dominoes_env.openspiel` for the view's rules as a one-hand
episode scored by ``score_delta`` (the points each side gains to the end of the hand, as
:mod:`agents.search` scores its rollouts), and runs OpenSpiel's ISMCTS bot from the view:
every simulation starts from a fresh guess of the hidden tiles (:class:`~dominoes_env.
core.sampling.DealSampler`, uniform among the deals that fit what the seat has seen), forced
draws are chance nodes, and the tree's nodes are the seat's observations (own tiles, scores and the
hand's public history). Leaves are valued by one random rollout to the end of the hand.

OpenSpiel's C++ ``pyspiel.ISMCTSBot`` cannot sample the hidden tiles of a Python game
(it needs ``ResampleFromInfostate`` in C++), so the Python bot is used; it takes a resampler.

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

from .base import Agent


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
    ``uct_c`` and ``rollouts`` random rollouts per leaf."""

    name = "ismcts"

    def __init__(self, seed: int | None = None, sims: int = 100, uct_c: float = 2.0,
                 rollouts: int = 1):
        super().__init__(seed)
        self.sims = as_int("sims", sims, 1)
        self.uct_c = as_float("uct_c", uct_c, 0)
        self.rollouts = as_int("rollouts", rollouts, 1)
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
        sampler = DealSampler.from_view(view)
        rng = self.rng
        state_from_view = self._openspiel.state_from_view

        def resample(_state, _player):
            return state_from_view(game, view, *sampler.sample(rng))

        random_state = np.random.RandomState(rng.getrandbits(32))
        evaluator = self._mcts.RandomRolloutEvaluator(self.rollouts, random_state)
        bot = self._ismcts.ISMCTSBot(
            game, evaluator, self.uct_c, self.sims, random_state=random_state,
            final_policy_type=self._ismcts.ISMCTSFinalPolicyType.MAX_VISIT_COUNT,
            use_observation_string=True,
        )
        bot.set_resampler(resample)
        return int(bot.step(resample(None, view.seat)))

    def __repr__(self) -> str:
        return f"ISMCTSAgent(sims={self.sims}, uct_c={self.uct_c}, rollouts={self.rollouts})"
