"""``PPOAgent``: a policy trained with stable-baselines3 / sb3-contrib, run in numpy.

The training code exports the policy network of a ``MaskablePPO`` ``MlpPolicy`` to an ``.npz``
file with :func:`agents.ppo_export.export_policy`; this module needs only numpy to play it, so
tournaments and notebooks never import torch.

The ``.npz`` format (``"straight-dominoes-ppo/1"``: the layers' weights, their activation
and JSON metadata with the observation version and the training rules) is
:mod:`dominoes_env.policy_format`'s, which reads and checks it; a policy's ``rules`` are
also its table (:mod:`agents.tables`), the only one it plays.

Action probabilities are ``softmax(logits)`` over the legal actions (illegal logits are set to
``-inf``, as ``MaskableCategorical`` does with ``-1e8``). The agent samples from them with its
seeded generator (``deterministic=False``), or takes the most probable legal action (the default,
as stable-baselines3's ``evaluate_policy`` does). How strong the shipped policies are is measured
by the tournament commands quoted in docs/results.md.

The spec ``ppo`` plays the shipped policy of the game's table (:func:`shipped_policy_path`; one
file per table of :data:`agents.tables.TABLES`, each with a JSON card beside it: the rules, the
observation version, the steps, the wall time and the command that trained it). A policy is
refused at a table other than the one it was trained for, with a message naming both.

>>> import numpy as np, tempfile, os
>>> from dominoes_env.core import MatchState
>>> match = MatchState(seed=2)
>>> path = os.path.join(tempfile.mkdtemp(), "tiny.npz")
>>> random_policy_npz(path, match.rules, hidden=(16,), seed=0)
>>> agent = PPOAgent(path, seed=0)
>>> agent.act(match.view(match.turn)) in match.legal_actions()
True
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from dominoes_env.core import DominoesDeprecationWarning, RuleConfig, SeatView
from dominoes_env.core.validation import (
    ParameterTypeError,
    as_bool,
    as_int,
    as_path,
    as_seed,
    short_repr,
)
from dominoes_env.policy_format import (
    ACTIVATIONS,
    MAX_LAYERS,
    PolicyFileError,
    read_policy,
    write_policy,
)
from dominoes_env.policy_format import FORMAT as FORMAT  # the format's name, here too

from .base import Agent
from .tables import TABLES, as_table, default_tiles, describe_table, table_of, table_rules

#: the shipped policies: ``ppo_{table}.npz`` in this folder (:data:`POLICY_FILES`)
POLICY_DIR = Path(__file__).resolve().parent / "policies"

#: the shipped policy file of each table (:data:`agents.tables.TABLES`), in :data:`POLICY_DIR`
POLICY_FILES = {table: f"ppo_{table}.npz" for table in TABLES}


class NumpyPolicy:
    """The exported policy network: observation(s) -> masked action probabilities.

    Computations are in float64 (the torch network runs in float32; they agree to ~1e-6).
    Loading checks the whole file (:func:`dominoes_env.policy_format.read_policy`) and that its
    metadata's rules name a table, and raises :class:`PolicyFileError` on the first problem.
    """

    def __init__(self, path: str | os.PathLike):
        self.path = Path(as_path("path", path))  # bytes were pathlib's TypeError
        policy = read_policy(self.path)
        self.activation = policy.activation
        self._act = ACTIVATIONS[self.activation]
        *hidden, (head_w, head_b) = [(w.astype(np.float64), b.astype(np.float64))
                                     for w, b in policy.layers]
        self.layers = hidden
        self.action_w, self.action_b = head_w, head_b
        self.metadata = policy.metadata
        self.obs_size, self.num_actions = policy.obs_size, policy.num_actions
        #: the table it was trained for (:mod:`agents.tables`); ``None`` where the metadata
        #: records no rules (then only the observation and action sizes are checked)
        self.table = _table_of_metadata(self.path, self.metadata)
        #: the registered observation spec of the version it reads (its ``obs_version``)
        self.obs_spec = policy.obs_spec
        self._high = _widest_bounds(self.obs_spec, self.metadata, self.obs_size)

    def logits(self, obs: np.ndarray) -> np.ndarray:
        """Unmasked action logits for one observation ``(D,)`` or a batch ``(B, D)`` of finite
        numbers: ``TypeError`` for what is not numbers, ``ValueError`` for another shape,
        NaN / infinite entries, or, where the policy's metadata names its rules, a value
        outside what the encoder of its table writes at any hand size (``1e38``)."""
        return self._forward(self._observations(obs))

    def _observations(self, obs: Any) -> np.ndarray:
        """``obs`` as float64 ``(D,)`` or ``(B, D)``, checked (see :meth:`logits`)."""
        want = f"({self.obs_size},) or (B, {self.obs_size})"
        try:
            raw = np.asarray(obs)
        except (TypeError, ValueError):  # ragged lists and the like
            raw = np.asarray(None)
        if raw.dtype.kind not in "biuf":  # None, text, objects: np.asarray(None, float) is NaN
            raise TypeError(f"obs must be an array of numbers of shape {want}, not "
                            f"{short_repr(obs)}")
        x = raw.astype(np.float64)
        if x.ndim not in (1, 2) or x.shape[-1] != self.obs_size:
            raise ValueError(f"obs has shape {x.shape}; the policy at {str(self.path)!r} takes "
                             f"{want}")
        if not np.isfinite(x).all():
            raise ValueError("obs holds NaN or infinite values")
        if self._high is not None:
            outside = np.argwhere((x < 0) | (x > self._high))
            if outside.size:
                at = tuple(int(i) for i in outside[0])
                raise ValueError(f"obs[{', '.join(map(str, at))}] = {x[at]:g} is outside "
                                 f"0..{self._high[at[-1]]:.4g}, the values observation "
                                 f"version {self.obs_spec.version} takes there at the table "
                                 f"of the policy at {str(self.path)!r}")
        return x

    def _forward(self, x: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore", invalid="ignore"):
            for w, b in self.layers:
                x = self._act(x @ w + b)
            logits = x @ self.action_w + self.action_b
        return check_logits(self.path, logits)

    def probabilities(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Action probabilities with illegal actions (``mask == 0``) at exactly 0; ``mask`` is
        boolean or 0/1 (:func:`_as_mask`)."""
        logits = self.logits(obs)
        mask = _as_mask(mask)
        if mask.shape != logits.shape:
            raise ValueError(f"mask shape {mask.shape} does not match the logits {logits.shape}")
        if not mask.any(axis=-1).all():
            raise ValueError("every action mask needs at least one legal action")
        z = np.where(mask, logits, -np.inf)
        z = z - z.max(axis=-1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=-1, keepdims=True)


def check_logits(path: str | os.PathLike, logits: np.ndarray) -> np.ndarray:
    """``logits`` if they are all finite, else a :class:`PolicyFileError` naming the policy
    file ``path``: weights that each pass the format's bound (``MAX_WEIGHT``) can still compound,
    layer after layer, past what a float holds, so NaN probabilities are never played as a
    legal move."""
    if not np.isfinite(logits).all():
        raise PolicyFileError(path, "its network gives NaN or infinite logits (its weights "
                                    "compound past what a float holds); it cannot be played")
    return logits


def _as_mask(mask: Any) -> np.ndarray:
    """``mask`` as a boolean array: booleans, or numbers that are each 0 or 1; ``ValueError``
    for other numbers (a NaN mask is refused, never read as all legal), ``TypeError`` for what
    is not numbers."""
    raw = np.asarray(mask)
    if raw.dtype.kind == "b":
        return raw
    if raw.dtype.kind not in "iuf":
        raise TypeError(f"mask must be booleans or 0/1 numbers, not {short_repr(mask)}")
    bad = raw[(raw != 0) & (raw != 1)]
    if bad.size:
        raise ValueError(f"mask must be booleans or 0/1 numbers; it holds {bad.flat[0].item()!r}")
    return raw.astype(bool)


#: the slack over an observation's bounds (encoders round in float32 or float64)
BOUND_SLACK = 1e-5


def _widest_bounds(obs_spec, metadata: dict, obs_size: int) -> np.ndarray | None:
    """The highest value each observation entry takes at the table of the policy's rules
    (``metadata["rules"]``), whatever the hand size (the bounds of a one-tile hand, the
    widest), with :data:`BOUND_SLACK`; ``None`` where the metadata names no rules or rules
    whose observation is not ``obs_size`` values (then only finiteness is checked)."""
    rules = metadata.get("rules")
    try:
        layout = obs_spec.layout(RuleConfig(
            num_players=rules.get("num_players", 2), partnerships=rules.get("partnerships"),
            max_pip=rules.get("max_pip", 6), hand_size=1))
    except (AttributeError, TypeError, ValueError):
        return None
    if layout.size != obs_size:
        return None
    return layout.high.astype(np.float64) * (1 + BOUND_SLACK) + BOUND_SLACK


def _table_of_metadata(path: Path, metadata: dict) -> str | None:
    """The table of a policy's training rules (missing fields take their defaults, as
    ``RuleConfig.from_dict``), ``None`` without rules; :class:`PolicyFileError` for rules no
    table has."""
    rules = metadata.get("rules")
    if rules is None:
        return None
    try:
        return table_of(RuleConfig(num_players=rules.get("num_players", 2),
                                   partnerships=rules.get("partnerships")))
    except (ValueError, TypeError) as err:
        raise PolicyFileError(path, f"metadata's rules name no table ({err})") from None


def shipped_tables() -> list[str]:
    """The tables (:data:`agents.tables.TABLES`) that have a shipped policy."""
    return [t for t in TABLES if shipped_policy_path(t).is_file()]


def shipped_policy_path(table: str | int | RuleConfig) -> Path:
    """Where the shipped policy for a table lives (it may not exist yet): ``table`` is a
    :class:`RuleConfig`, a table name of :data:`agents.tables.TABLES`, or a player count (its
    default rules: 4 is partnerships). A shipped policy plays its table's tiles (the default
    rules' double-six): rules with other tiles are a ``ValueError`` naming both, as no shipped
    policy reads their observations (``RuleConfig(max_pip=9)`` with ``ppo_2p.npz`` is refused).

    >>> shipped_policy_path(RuleConfig(num_players=4, partnerships=False)).name
    'ppo_4p_free_for_all.npz'
    """
    return check_shipped_tiles(table, POLICY_DIR / POLICY_FILES[as_table(table)])


def check_shipped_tiles(table: str | int | RuleConfig, path: Path) -> Path:
    """``path``, the shipped policy for ``table``, unless ``table`` is a :class:`RuleConfig`
    with other tiles than its table's default rules, which no shipped policy reads: then a
    ``ValueError`` naming both."""
    if isinstance(table, RuleConfig) and not default_tiles(table):
        name = as_table(table)
        shipped = table_rules(name)
        raise ValueError(
            f"no shipped policy plays double-{table.max_pip} tiles (max_pip="
            f"{table.max_pip}): {path.name} is for {describe_table(name)} with "
            f"double-{shipped.max_pip} tiles (max_pip={shipped.max_pip}), whose "
            "observations and actions are another size; give a policy file trained for "
            "these rules (ppo:PATH, guided:policy=PATH)")
    return path


def missing_policy_message(table: str) -> str:
    """Why ``ppo`` cannot play ``table``: no shipped policy file (what is shipped, how to make
    one)."""
    shipped = ", ".join(describe_table(t) for t in shipped_tables()) or "none"
    path = shipped_policy_path(table)
    rules = table_rules(table)
    flags = f"--players {rules.num_players}" + (" --no-partnerships"
                                                if table == "4p_free_for_all" else "")
    return (f"no shipped PPO policy exists for {describe_table(table)} ({path.name} is not in "
            f"{path.parent}; shipped: {shipped}); train one with python -m "
            f"experiments.train_jax {flags} --out DIR (--ship copies it there), or pass "
            "ppo:PATH")


#: shipped policy files renamed for what they are; the old path works for one version, with a
#: ``DeprecationWarning``
RENAMED_POLICIES = {"ppo_4p.npz": "ppo_4p_partnerships.npz"}


def renamed_policy_path(path: str | os.PathLike) -> Path:
    """``path``, or, for the old name of a renamed shipped policy that is no longer there, its
    new path (with a ``DeprecationWarning``)."""
    path = Path(path)
    new = RENAMED_POLICIES.get(path.name)
    if new is None or path.exists() or not (path.parent / new).is_file():
        return path
    import warnings

    warnings.warn(f"the policy file {path.name} is now {new}; use {path.parent / new}",
                  DominoesDeprecationWarning, stacklevel=3)
    return path.parent / new


class PPOAgent(Agent):
    """Plays an exported PPO policy (``path``), or the shipped one for the game's table
    (``path=None``; loaded on the first decision, and again when the table changes).
    ``deterministic=True`` (the default) plays the most probable legal action; ``False`` samples
    with the seeded generator. A policy plays only the table it was trained for.
    """

    name = "ppo"

    def __init__(self, path: str | os.PathLike | None = None, seed: int | None = None,
                 deterministic: bool = True):
        super().__init__(seed)
        self.deterministic = as_bool("deterministic", deterministic)
        # an empty path ('ppo:,') is refused: Path('') is the working directory, named as the file
        self.path = None if path is None else renamed_policy_path(as_path("path", path))
        self.policy: NumpyPolicy | None = None if path is None else NumpyPolicy(self.path)
        self._checked: RuleConfig | None = None

    def __repr__(self) -> str:
        where = "shipped" if self.path is None else repr(str(self.path))
        return f"PPOAgent({where}, deterministic={self.deterministic})"

    def check_rules(self, rules: RuleConfig) -> None:
        """Load the policy (the shipped one for the table unless a path was given) and check
        that it fits ``rules``: trained for their table, with their observation and action
        sizes; ``ValueError`` naming the file otherwise. Commands call this before a match
        starts, so a policy that cannot serve the table fails at once."""
        table = table_of(rules)
        if self.path is None and (self.policy is None or self.policy.table != table):
            path = shipped_policy_path(table)
            if not path.is_file():
                raise ValueError(missing_policy_message(table))
            self.policy, self._checked = NumpyPolicy(path), None
        if self._checked != rules:
            if self.policy.table is not None and self.policy.table != table:
                raise ValueError(
                    f"the policy at {str(self.policy.path)!r} was trained for "
                    f"{describe_table(self.policy.table)}; these rules are "
                    f"{describe_table(table)}")
            size = self.policy.obs_spec.layout(rules).size
            actions = rules.num_tiles * 4
            if (size, actions) != (self.policy.obs_size, self.policy.num_actions):
                raise ValueError(
                    f"the policy at {str(self.policy.path)!r} takes {self.policy.obs_size} inputs "
                    f"and {self.policy.num_actions} actions; these rules need {size} and {actions} "
                    f"(it was trained for rules {self.policy.metadata.get('rules')})"
                )
            self._checked = rules

    def _policy_for(self, view: SeatView) -> NumpyPolicy:
        if self._checked != view.rules:
            self.check_rules(view.rules)
        return self.policy

    def probabilities(self, view: SeatView) -> np.ndarray:
        """The policy's action probabilities for ``view`` (zero on illegal actions)."""
        from dominoes_env.obs.actions import action_mask

        if not view.legal:
            raise ValueError(f"seat {view.seat} has no legal move: it is not its turn")
        policy = self._policy_for(view)
        return policy.probabilities(policy.obs_spec.encode(view), action_mask(view))

    def act(self, view: SeatView) -> int:
        probs = self.probabilities(view)
        legal = view.legal
        if self.deterministic:
            return max(legal, key=lambda c: (probs[c], -c))
        r = self.rng.random()
        acc = 0.0
        for code in legal:
            acc += probs[code]
            if r < acc:
                return code
        return legal[-1]  # rounding: the probabilities sum to 1 within float error


def random_policy_npz(path: str | os.PathLike, rules: RuleConfig, hidden=(64, 64),
                      activation: str = "tanh", seed: int = 0, obs_version: int | None = None,
                      *, overwrite: bool = True) -> None:
    """Write a randomly initialised policy in the export format (for tests and examples),
    reading observation version ``obs_version`` (default: the registry's ``DEFAULT_VERSION``).
    ``hidden``: the hidden layers' widths (integers >= 1, at most ``MAX_LAYERS``, their
    weights within this machine's memory); ``seed`` a seed (0..2**64 - 1). ``path`` is
    written as :func:`~dominoes_env.policy_format.write_policy` writes (no symbolic link,
    folder, device or FIFO; an existing file replaced unless ``overwrite=False``), checked
    before the weights are drawn."""
    from dominoes_env.cli_support import check_fits_in_memory
    from dominoes_env.core.atomic_files import check_output_path
    from dominoes_env.obs import DEFAULT_VERSION, observation_spec

    overwrite = as_bool("overwrite", overwrite)
    check_output_path(path, overwrite=overwrite)
    if activation not in ACTIVATIONS:
        raise ValueError(f"unknown activation {activation!r}; allowed: {', '.join(ACTIVATIONS)}")
    spec = observation_spec(DEFAULT_VERSION if obs_version is None else obs_version)
    seed = as_seed(seed)
    sizes = [spec.layout(rules).size, *_hidden_widths(hidden), rules.num_tiles * 4]
    check_fits_in_memory(f"hidden={short_repr(hidden)}",
                         sum(a * b for a, b in zip(sizes[:-1], sizes[1:], strict=False)), 4,
                         "float32 weights")
    sizes.pop()
    rng = np.random.default_rng(seed)
    arrays = {}
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:], strict=True)):
        arrays[f"w{i}"] = rng.normal(0, 1 / math.sqrt(a), (a, b)).astype(np.float32)
        arrays[f"b{i}"] = rng.normal(0, 0.1, b).astype(np.float32)
    arrays["action_w"] = rng.normal(0, 1 / math.sqrt(sizes[-1]),
                                    (sizes[-1], rules.num_tiles * 4)).astype(np.float32)
    arrays["action_b"] = np.zeros(rules.num_tiles * 4, np.float32)
    metadata = {"obs_size": sizes[0], "num_actions": rules.num_tiles * 4,
                "obs_version": spec.version, "rules": rules.to_dict(), "source": "random"}
    write_policy(path, arrays, activation, metadata, overwrite=overwrite)


def _hidden_widths(hidden) -> list[int]:
    """``hidden`` as a list of layer widths, or ``ValueError`` / ``TypeError`` naming it:
    widths must be integers >= 1 in a list (``0`` and a bare ``8`` are refused)."""
    if isinstance(hidden, (str, bytes)) or not hasattr(hidden, "__iter__"):
        raise ParameterTypeError(f"hidden={short_repr(hidden)} must be a list of layer "
                                 "widths, like (64, 64)")
    widths = [as_int("hidden", width, 1) for width in hidden]
    if len(widths) > MAX_LAYERS:
        raise ValueError(f"hidden gives {len(widths)} layers; a policy file holds at most "
                         f"{MAX_LAYERS}")
    return widths


def save_policy_npz(path: str | os.PathLike, arrays: dict, activation: str, metadata: dict,
                    *, overwrite: bool = True) -> None:
    """Write policy arrays in the export format: :func:`dominoes_env.policy_format.write_policy`
    (atomically, and :class:`PolicyFileError` before anything is written for what
    :func:`read_policy` would refuse: NaN or infinite weights, shapes that do not chain, ...;
    no symbolic link, folder, device or FIFO replaced, nor a file with ``overwrite=False``)."""
    write_policy(path, arrays, activation, metadata, overwrite=overwrite)
