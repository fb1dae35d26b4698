"""Options shared by the environments (on top of every :class:`RuleConfig` field) and the
reward arithmetic they document.

======================  ===================  ====================================================
option                  default              allowed
======================  ===================  ====================================================
``reward_mode``         ``"score_delta"``    ``"score_delta"``: after every step, each side gets
                                             (its points this step - the mean of the other
                                             sides' points this step) * ``reward_scale``;
                                             zero-sum, and over an episode a side's rewards add
                                             up to (its score - the mean of the other sides'
                                             scores) * ``reward_scale``.
                                             ``"win_loss"``: only at the episode's end, +1 to
                                             the winning side and -1 / (sides - 1) to each
                                             other side (zero-sum); a hand episode is won by
                                             the side that scored the most in it (a tie for
                                             most gives everyone 0).
``episode``             ``"match"``          ``"match"``: play to ``target_score``.
                                             ``"hand"``: the first hand of a new match (its
                                             award included); ends early if the match does.
``reward_scale``        ``None``             a positive number; ``None`` means
                                             ``1 / target_score`` (a whole match then sums to
                                             about +-1). ``1.0`` gives raw points. At most
                                             :func:`max_reward_scale` (every reward, and an
                                             episode's sum, fits in a float32).
``illegal_action``      ``"penalize"``       ``"penalize"``: PettingZoo's usual handling, the
                                             offender gets ``illegal_reward``, the others 0, and
                                             the episode ends. ``"raise"``: the core's
                                             ``IllegalMoveError`` is raised, state unchanged.
``illegal_reward``      ``-1.0``             any number a float32 holds
``obs_version``         ``DEFAULT_VERSION``  a registered observation version
                                             (``dominoes_env.obs.VERSIONS``: ``2``; ``3``
                                             with ``reply_points``; ``4`` also with
                                             ``reply_chance`` and ``follow_up``)
``info_events``         ``False``            ``True`` adds the public event list (and the
                                             illegal move's reason) to every info; see
                                             :mod:`.infos` (off: infos of one fixed structure)
======================  ===================  ====================================================

Every player's reward is its side's reward (partners share it).

>>> rules, opts = split_options({"num_players": 3, "episode": "hand"})
>>> rules.num_players, opts.episode, opts.scale(rules)
(3, 'hand', 0.004)
>>> delta_rewards([10, 0, 5], 0.1)
[0.75, -0.75, 0.0]
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from .core import RuleConfig
from .core.validation import as_bool, as_float, short_repr
from .obs import DEFAULT_VERSION, observation_spec

REWARD_MODES = ("score_delta", "win_loss")
EPISODES = ("match", "hand")
ILLEGAL_ACTIONS = ("penalize", "raise")
#: the largest float32: rewards are float32 in the JAX env and in most learners' buffers
FLOAT32_MAX = float(np.finfo(np.float32).max)


def play_points_bound(rules: RuleConfig) -> int:
    """The most one play can score: the layout count of four open ends, each a double of
    ``max_pip`` (a play scores the count when it is a multiple of 5)."""
    return 8 * rules.max_pip


def score_bound(rules: RuleConfig, episode: str = "match") -> int:
    """A bound on a side's score at the end of an episode: every tile's play scoring the most
    any end sum can (:func:`play_points_bound`), plus the pips of every tile (a hand's award),
    plus ``target_score`` for a match. A reward's size (and a side's rewards summed over an
    episode) is at most this many points times the reward scale."""
    ts = rules.tiles
    hand_points = ts.num_tiles * play_points_bound(rules) + sum(ts.pips)
    return hand_points if episode == "hand" else rules.target_score + hand_points


def max_reward_scale(rules: RuleConfig) -> float:
    """The largest ``reward_scale`` for ``rules``: :func:`score_bound` points times it still a
    finite float32 (``reward_scale=1e308`` made rewards of a game ``inf`` and ``-inf``).

    >>> max_reward_scale(RuleConfig()) * score_bound(RuleConfig()) <= FLOAT32_MAX
    True
    """
    return FLOAT32_MAX / score_bound(rules)


@dataclass(frozen=True)
class EnvOptions:
    """The environment options of the module table (validated)."""

    reward_mode: str = "score_delta"
    episode: str = "match"
    reward_scale: float | None = None
    illegal_action: str = "penalize"
    illegal_reward: float = -1.0
    obs_version: int = DEFAULT_VERSION  # the registry's default (dominoes_env.obs)
    info_events: bool = False

    def __post_init__(self) -> None:
        for name, allowed in (("reward_mode", REWARD_MODES), ("episode", EPISODES),
                              ("illegal_action", ILLEGAL_ACTIONS)):
            value = getattr(self, name)
            if not isinstance(value, str) or value not in allowed:
                raise ValueError(
                    f"{name}={short_repr(value)} is not allowed; allowed: "
                    f"{', '.join(map(repr, allowed))}"
                )
        if self.reward_scale is not None:
            object.__setattr__(self, "reward_scale",
                               as_float("reward_scale", self.reward_scale, 0, low_open=True))
        object.__setattr__(self, "illegal_reward", as_float("illegal_reward", self.illegal_reward,
                                                            -FLOAT32_MAX, FLOAT32_MAX))
        # ValueError naming the registered versions; numpy integers become int
        object.__setattr__(self, "obs_version", observation_spec(self.obs_version).version)
        object.__setattr__(self, "info_events", as_bool("info_events", self.info_events))

    def check_rules(self, rules: RuleConfig) -> None:
        """``ValueError`` where ``reward_scale`` is too large for ``rules``
        (:func:`max_reward_scale`)."""
        if self.reward_scale is not None and self.reward_scale > max_reward_scale(rules):
            raise ValueError(
                f"reward_scale={self.reward_scale!r} is out of range for these rules: a side's "
                f"score (up to {score_bound(rules):,} points) times it must fit in a float32; "
                f"allowed: > 0 and <= {max_reward_scale(rules)!r}")

    def scale(self, rules: RuleConfig) -> float:
        """The score_delta multiplier: ``reward_scale``, or ``1 / target_score``."""
        return 1.0 / rules.target_score if self.reward_scale is None else float(self.reward_scale)

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


ENV_OPTION_NAMES = tuple(f.name for f in fields(EnvOptions))


def split_options(options: dict[str, Any], rules: RuleConfig | None = None,
                  extra: tuple[str, ...] = ()) -> tuple[RuleConfig, EnvOptions]:
    """Split keyword options into the rules and the env options, rejecting unknown names.

    ``rules`` is a base :class:`RuleConfig` the rule options change; ``extra`` names options the
    caller handles itself (they are ignored here).
    """
    if rules is not None and not isinstance(rules, RuleConfig):
        raise TypeError(f"rules must be a RuleConfig, not {type(rules).__name__}")
    rule_names = RuleConfig.field_names()
    unknown = sorted(set(options) - set(rule_names) - set(ENV_OPTION_NAMES) - set(extra))
    if unknown:
        allowed = ", ".join((*rule_names, *ENV_OPTION_NAMES, *extra))
        raise ValueError(f"unknown option(s) {', '.join(unknown)}; allowed: {allowed}")
    rule_opts = {k: v for k, v in options.items() if k in rule_names}
    if rules is None:
        rules = RuleConfig(**rule_opts)
    elif rule_opts:
        rules = rules.replace(**rule_opts)
    env_opts = EnvOptions(**{k: v for k, v in options.items() if k in ENV_OPTION_NAMES})
    env_opts.check_rules(rules)
    return rules, env_opts


def check_reset_options(options: Any) -> None:
    """``reset(options=...)``: ``None`` or a mapping, and none of its keys a rule or env option.

    The rules and env options are fixed when the environment is made, so
    ``reset(options={"num_players": 3})`` is a ``ValueError`` naming the key, never a match
    that quietly keeps the old rules. Other keys are ignored, as Gymnasium and PettingZoo allow
    (PettingZoo's ``api_test`` passes ``{"options": 1}``).
    """
    if options is None:
        return
    if not isinstance(options, Mapping):
        raise TypeError(f"options must be a dict or None, not {type(options).__name__}")
    fixed = sorted(set(options) & ({"rules", "render_mode"} | set(RuleConfig.field_names())
                                   | set(ENV_OPTION_NAMES)))
    if fixed:
        name = fixed[0]
        raise ValueError(f"reset(options=...) cannot change {name!r}: the rules and env options "
                         f"are fixed when the environment is made (make a new one with "
                         f"{name}=...)")


def delta_rewards(deltas, scale: float) -> list[float]:
    """Per side: (its points - the mean of the other sides' points) * ``scale``."""
    k = len(deltas)
    total = sum(deltas)
    return [(d - (total - d) / (k - 1)) * scale for d in deltas]


def win_loss_rewards(winner: int | None, num_sides: int) -> list[float]:
    """Per side: +1 for ``winner``, -1 / (sides - 1) for the others; zeros when ``None``.

    >>> win_loss_rewards(1, 3), win_loss_rewards(None, 2)
    ([-0.5, 1.0, -0.5], [0.0, 0.0])
    """
    if winner is None:
        return [0.0] * num_sides
    lose = -1.0 / (num_sides - 1)
    return [1.0 if s == winner else lose for s in range(num_sides)]


def unique_top(scores) -> int | None:
    """The side with the highest score, or ``None`` if several share it."""
    top = max(scores)
    return scores.index(top) if scores.count(top) == 1 else None


def episode_winner(match, episode: str) -> int | None:
    """The side that won the episode: the match winner, or for a hand episode the side that
    scored the most (every hand episode starts a new match, so that is its score)."""
    if episode == "match":
        return match.winner
    return unique_top(list(match.scores))
