"""Straight Dominoes ("All Fives") for reinforcement-learning research.

- the game core, plain Python: :class:`RuleConfig`, :class:`MatchState`, :class:`HandState`,
  :class:`SeatView`, :class:`Move`, :class:`Tile` (re-exported here from :mod:`.core`);
- ``env()`` / ``raw_env``: the PettingZoo AEC environment (:mod:`.aec`); ``parallel_env``: the
  same through PettingZoo's Parallel API (:mod:`.parallel`); :mod:`.straight_dominoes_v1` holds
  all three under the env's version, as PettingZoo's classic envs do;
- :class:`SingleAgentEnv`: a Gymnasium env for one learning seat (:mod:`.single_agent`);
- the numpy observations (:mod:`.obs`, one module per version) and pictures (:mod:`.render`);
  ``observation_size``, ``observation_layout`` and ``encode_observation`` here take the version
  (``version=``, as the envs' ``obs_version``; left out, the envs' default), and
  ``state_vector`` is the envs' ``state()``;
- ``viewer(record_or_match)``: the replay viewer, inline in Jupyter (:mod:`.render.html`).

The env faces are imported on first use, so ``import dominoes_env`` (and the core) never pulls
in numpy, Gymnasium or PettingZoo.

>>> import dominoes_env
>>> dominoes_env.__version__
'0.1.0'
>>> e = dominoes_env.env(num_players=3)
>>> e.reset(seed=0)
>>> e.agent_selection in e.possible_agents
True
"""

from __future__ import annotations

import sys as _sys  # loaded already: the hook below comes before the package's first import


def _interrupt_is_one_line(kind, value, traceback, previous=_sys.excepthook) -> None:
    """``sys.excepthook`` of a ``python -m`` program: an uncaught ``KeyboardInterrupt`` is
    ``error: interrupted`` instead of a traceback (Python then ends the process by SIGINT,
    status 130, as the shared runner ends an interrupted command); every other exception is
    printed as before. It is installed here, before anything else the package imports (its
    :mod:`.startup` module takes 2 to 10 ms more to load), so a Ctrl-C during the rest of the
    import is one line too."""
    if isinstance(kind, type) and issubclass(kind, KeyboardInterrupt):
        try:
            if _sys.stderr is not None:  # closed by the caller (2>&-): print would use stdout
                print("error: interrupted", file=_sys.stderr, flush=True)
        except (OSError, ValueError):  # pragma: no cover - stderr closed
            pass
        return
    previous(kind, value, traceback)


# python -m dominoes_env / experiments.X (see .startup): a Ctrl-C while the program imports is
# one line. The hook comes before any import, on the quick test (any python -m), and stays only
# where .startup finds one of the project's programs
_excepthook_before = _sys.excepthook
if _sys.argv[:1] == ["-m"]:
    _sys.excepthook = _interrupt_is_one_line

from . import startup as _startup  # noqa: E402 - it imports nothing itself

if _startup.started_by_python_m():  # one of the project's programs (not python -m mylab.x)
    _startup.quiet_interrupt_at_startup()  # a Ctrl-C neither lost nor swallowed meanwhile
    _startup.fill_closed_standard_streams()  # <&-, >&-, 2>&- read and write /dev/null
    _startup.refuse_a_removed_working_directory()  # one line, before torch dies there
elif _sys.excepthook is _interrupt_is_one_line:  # another package's python -m program that
    _sys.excepthook = _excepthook_before  # imports this one: its hook is left as it was
del _excepthook_before

import importlib  # noqa: E402
from typing import Any  # noqa: E402

#: the package's version (pyproject.toml reads it from here); the environments carry versions
#: of their own (``straight_dominoes_v1``, ``-v1``), bumped whenever learning results can change
__version__ = "0.1.0"

from .core import (  # noqa: E402
    DOWN,
    END_NAMES,
    LEFT,
    RIGHT,
    UP,
    DominoesDeprecationWarning,
    HandState,
    IllegalMoveError,
    MatchState,
    Move,
    NoHandError,
    RecordError,
    RuleConfig,
    SeatView,
    Tile,
    tile_set,
)

# name -> module that defines it (imported on first access)
_LAZY = {
    "env": "dominoes_env.aec",
    "raw_env": "dominoes_env.aec",
    "parallel_env": "dominoes_env.parallel",
    "SingleAgentEnv": "dominoes_env.single_agent",
    "RandomPlayer": "dominoes_env.random_player",
    "action_mask": "dominoes_env.obs.actions",
    "encode_action": "dominoes_env.obs.actions",
    "decode_action": "dominoes_env.obs.actions",
    "DEFAULT_VERSION": "dominoes_env.obs",
    "register_envs": "dominoes_env.registration",
    "viewer": "dominoes_env.render.html",
}
#: deprecated names, served for one version with a DeprecationWarning (not in __all__ or dir())
_DEPRECATED = {"OBS_VERSION": "dominoes_env.encoding"}

__all__ = [
    "DOWN", "END_NAMES", "LEFT", "RIGHT", "UP",
    "DominoesDeprecationWarning", "HandState", "IllegalMoveError", "MatchState", "Move",
    "NoHandError", "RecordError", "RuleConfig", "SeatView", "Tile", "__version__", "tile_set",
    *_LAZY,
    "encode_observation", "observation_layout", "observation_size", "state_vector",
]  # fmt: skip


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        if name in _DEPRECATED:  # the old module warns on every access
            return getattr(importlib.import_module(_DEPRECATED[name]), name)
        raise AttributeError(f"module 'dominoes_env' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


# -- the observation, in any version the envs take (obs_version) --------------------------------
# The functions of dominoes_env.obs.v2 are version 2's; these follow the version they are given,
# as the envs do, and import numpy only when called.


def _observation_spec(version: int | None) -> Any:
    """The registered spec of ``version`` (``None``: the envs' default), or a ``ValueError``
    naming ``version=`` and the registered versions."""
    from .obs import DEFAULT_VERSION, VERSIONS, observation_spec

    try:
        return observation_spec(DEFAULT_VERSION if version is None else version)
    except ValueError:
        from .core.validation import short_repr

        allowed = ", ".join(map(str, sorted(VERSIONS)))
        raise ValueError(f"version={short_repr(version)} is not an observation version; "
                         f"allowed: {allowed}") from None


def observation_layout(rules: RuleConfig, *, version: int | None = None) -> Any:
    """The (cached) layout of observation ``version`` for ``rules``: its named blocks (each a
    ``slice`` of the vector: ``obs[lay.hand]``), ``size``, the bounds ``low`` / ``high``, and
    ``table()``, what each block holds.

    ``version``: an observation version the envs take as ``obs_version`` (2 to 5:
    :data:`dominoes_env.obs.VERSIONS`); left out, the envs' default
    (:data:`dominoes_env.obs.DEFAULT_VERSION`). Another is a ``ValueError`` naming the
    allowed ones.

    >>> observation_layout(RuleConfig(), version=4).table().splitlines()[-1].split()[:3]
    ['follow_up', '458:570', '112']
    """
    return _observation_spec(version).layout(rules)


def observation_size(rules: RuleConfig, *, version: int | None = None) -> int:
    """Length of observation ``version``'s vector for ``rules``: the env's
    ``observation_space(agent)["observation"].shape[0]`` when it is made with these rules and
    ``obs_version=version``. ``version`` as in :func:`observation_layout` (left out, the envs'
    default).

    >>> [observation_size(RuleConfig(num_players=n)) for n in (2, 3, 4)]
    [234, 244, 252]
    >>> [observation_size(RuleConfig(), version=v) for v in (2, 3, 4)]
    [234, 346, 570]
    """
    return _observation_spec(version).layout(rules).size


def encode_observation(view: SeatView, out: Any = None, *, version: int | None = None) -> Any:
    """Observation ``version`` of a seat's view, as a ``float32`` vector: what the env made
    with ``obs_version=version`` shows that seat. ``out``: an array of shape
    ``(observation_size(rules, version=version),)`` and dtype ``float32`` to fill (every
    element is written); otherwise a new array is returned. ``version`` as in
    :func:`observation_layout` (left out, the envs' default).

    >>> view = MatchState(seed=0).view(0)
    >>> encode_observation(view).shape, encode_observation(view, version=4).shape
    ((234,), (570,))
    """
    return _observation_spec(version).encode(view, out)


def state_vector(match: MatchState, out: Any = None, hand: Any = None, *,
                 version: int | None = None) -> Any:
    """The full global state of a match (every hand, the boneyard, then seat 0's observation),
    for centralised critics: the envs' ``state()``
    (:func:`dominoes_env.obs.v2.state_vector`, where ``out`` and ``hand`` are described).

    The envs' state holds version 2's observation whatever ``obs_version`` they observe, so
    ``version`` has one value: 2 (left out, the same). Version 3, 4 or any other is a
    ``ValueError``: seat 0's observation in such a version is
    ``encode_observation(match.view(0), version=...)``.

    >>> state_vector(MatchState(seed=1)).shape
    (318,)
    """
    import operator

    from .core.validation import is_bool, short_repr

    try:
        known = version is None or (not is_bool(version) and operator.index(version) == 2)
    except TypeError:
        known = False
    if not known:
        raise ValueError(f"version={short_repr(version)}: state_vector holds version 2's "
                         "observation (the envs' state(), whatever their obs_version); "
                         "allowed: 2")
    from .obs.v2 import state_vector as state_vector_v2

    return state_vector_v2(match, out, hand)


# registry ids: registered now in Gymnasium / PettingZoo if already imported, else the moment
# either is imported (an import hook; registering never imports them itself)
from .registration import install_import_hook as _install_import_hook  # noqa: E402

_install_import_hook()
