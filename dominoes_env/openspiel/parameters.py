"""The game's name and parameters: their defaults, their checks, and the rules, episode and
reward mode they stand for."""

from __future__ import annotations

from typing import Any

from ..core import RuleConfig
from ..core.validation import as_int, short_repr
from ..obs import DEFAULT_VERSION, observation_spec
from ..options import EPISODES, REWARD_MODES

GAME_NAME = "python_straight_dominoes"

#: OpenSpiel reads ``true`` / ``false`` as booleans, and a parameter has one type, so the
#: three-way RuleConfig default (None: partnerships with 4 players) is spelled in words
_PARTNERSHIPS = {"auto": None, "yes": True, "no": False}


def _rule_defaults() -> dict[str, Any]:
    defaults = RuleConfig().to_dict()
    defaults["partnerships"] = "auto"
    return defaults


#: every game parameter with its default
PARAMETERS: dict[str, Any] = {**_rule_defaults(), "episode": "match", "reward_mode": "win_loss",
                              "obs_version": DEFAULT_VERSION}


def game_options(params: dict[str, Any]) -> tuple[RuleConfig, str, str]:
    """``(rules, episode, reward_mode)`` of game parameters (missing ones take their default;
    ``obs_version`` is read by :func:`observation_version`).

    >>> rules, episode, mode = game_options({"num_players": 4})
    >>> rules.partnerships, episode, mode
    (True, 'match', 'win_loss')
    """
    unknown = sorted(set(params) - set(PARAMETERS))
    if unknown:
        raise ValueError(
            f"unknown parameter(s) {', '.join(unknown)}; allowed: {', '.join(PARAMETERS)}"
        )
    merged = {**PARAMETERS, **params}
    episode, mode = merged.pop("episode"), merged.pop("reward_mode")
    merged.pop("obs_version")
    if episode not in EPISODES:
        raise ValueError(f"episode={episode!r} is not allowed; allowed: {', '.join(EPISODES)}")
    if mode not in REWARD_MODES:
        raise ValueError(
            f"reward_mode={mode!r} is not allowed; allowed: {', '.join(REWARD_MODES)}"
        )
    p = merged["partnerships"]
    if p not in _PARTNERSHIPS:
        raise ValueError(f"partnerships={p!r} is not allowed; allowed: auto, yes, no")
    merged["partnerships"] = _PARTNERSHIPS[p]
    return RuleConfig.from_dict(merged), episode, mode


def observation_version(params: dict[str, Any]) -> int:
    """The observation tensor's version in game parameters: ``obs_version``, any version
    :mod:`dominoes_env.obs` registers (default its ``DEFAULT_VERSION``); ``ValueError`` naming
    the registered versions otherwise.

    >>> observation_version({}) == DEFAULT_VERSION, observation_version({"obs_version": 4})
    (True, 4)
    >>> observation_version({"obs_version": 9})
    Traceback (most recent call last):
    ...
    ValueError: obs_version=9 is not available; allowed: 2, 3, 4, 5
    """
    return observation_spec(params.get("obs_version", DEFAULT_VERSION)).version


def game_parameters(rules: RuleConfig, episode: str = "match",
                    reward_mode: str = "win_loss", obs_version: int = DEFAULT_VERSION
                    ) -> dict[str, Any]:
    """The game parameters of ``rules`` (for :func:`pyspiel.load_game`).

    >>> game_parameters(RuleConfig(num_players=3))["partnerships"]
    'no'
    """
    params = rules.to_dict()
    params["partnerships"] = "yes" if rules.partnerships else "no"
    params.update(episode=episode, reward_mode=reward_mode, obs_version=obs_version)
    return params


def check_parameters(params: dict[str, Any]) -> dict[str, Any]:
    """Game parameters checked before OpenSpiel sees them: known names (:data:`PARAMETERS`),
    each of its default's type (any integer type, numpy's included, as a Python ``int``; never
    a bool for a number; a ``str`` for the words) and an allowed value (:func:`game_options`,
    :func:`observation_version`). ``TypeError`` / ``ValueError`` naming the parameter: OpenSpiel
    said "Unable to cast Python instance" for a number too large for its C++ ``int``, "'numpy.
    int64' object is not iterable" for a numpy integer, and a bare ``SpielError`` for
    ``partnerships=True``.

    >>> check_parameters({"num_players": 3})
    {'num_players': 3}
    >>> check_parameters({"partnerships": True})
    Traceback (most recent call last):
    ...
    TypeError: partnerships=True must be a str (auto, yes or no), not bool
    """
    unknown = sorted(set(params) - set(PARAMETERS))
    if unknown:
        raise ValueError(f"unknown parameter(s) {', '.join(map(short_repr, unknown))}; "
                         f"allowed: {', '.join(PARAMETERS)}")
    checked: dict[str, Any] = {}
    for name, value in params.items():
        if isinstance(PARAMETERS[name], str):
            if not isinstance(value, str):
                allowed = " (auto, yes or no)" if name == "partnerships" else ""
                raise TypeError(f"{name}={short_repr(value)} must be a str{allowed}, not "
                                f"{type(value).__name__}")
            checked[name] = str(value)
        else:
            checked[name] = as_int(name, value)
    game_options(checked)  # the values: ValueError naming the parameter and what is allowed
    observation_version(checked)
    return checked
