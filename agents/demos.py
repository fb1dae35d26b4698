"""The demonstrations file (``demos.npz``): a teacher's decisions saved for a later fit.

:func:`~agents.imitation.collect_demonstrations` records a teacher's decisions (observations
of version :data:`DEMO_OBS_VERSION`, legal-move masks, the moves, the hand margins);
:func:`save_demos` writes them, with what produced them, and :func:`load_demos` reads them
back, checking the file as untrusted input (what ``python -m experiments.expert_iteration
--data`` fits).

>>> import tempfile
>>> from pathlib import Path
>>> from agents.imitation import collect_demonstrations
>>> rules = RuleConfig(target_score=30)
>>> data = collect_demonstrations("greedy", ["random"], rules, 2, seed=0)
>>> meta = {"teacher": "greedy", "opponents": ["random"], "matches": 2, "seed": 0,
...         "rules": rules.to_dict()}
>>> with tempfile.TemporaryDirectory() as folder:
...     save_demos(Path(folder) / "demos.npz", data, meta)
...     back, teacher = load_demos(str(Path(folder) / "demos.npz"), rules)
>>> teacher, all((back[k] == data[k]).all() for k in DEMO_KEYS)
('greedy', True)
>>> demos_meta_problem({**meta, "seed": -1}) is not None, demos_meta_problem(meta)
(True, None)
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from dominoes_env.cli_support import MAX_MATCHES, machine_memory
from dominoes_env.core import RuleConfig
from dominoes_env.core.atomic_files import atomic_write
from dominoes_env.core.validation import as_seed, parse_json, short_repr
from dominoes_env.obs.v2 import VERSION as _V2
from dominoes_env.options import score_bound

__all__ = ["DEMO_KEYS", "DEMO_OBS_VERSION", "demos_meta_problem", "load_demos", "save_demos"]

#: the arrays of a demonstrations file, besides its ``meta`` (a JSON string)
DEMO_KEYS = ("obs", "masks", "actions", "values")
#: the observation version the demonstrations are encoded in (what
#: :func:`~agents.imitation.collect_demonstrations` records), so the version a policy fitted
#: to them reads
DEMO_OBS_VERSION = _V2


def save_demos(path: Path, data: dict[str, np.ndarray], meta: dict) -> None:
    """Write the demonstrations ``data`` (the arrays of :data:`DEMO_KEYS`, as
    :func:`~agents.imitation.collect_demonstrations` returns them) and ``meta``, what produced
    them (``teacher``, ``opponents``, ``matches``, ``seed``, ``rules``: see
    :func:`demos_meta_problem`), to the ``.npz`` file ``path``, atomically."""
    with atomic_write(path, "wb") as fh:
        np.savez_compressed(fh, **{k: data[k] for k in DEMO_KEYS},
                            meta=np.array(json.dumps(meta)))


def load_demos(path: str, rules: RuleConfig) -> tuple[dict[str, np.ndarray], str]:
    """Demonstrations saved by :func:`save_demos` and the spec of their teacher;
    ``ValueError`` if the file is not one (arrays of observation version
    :data:`DEMO_OBS_VERSION` and of one length, observations within the bounds of its blocks,
    legal moves, finite numbers) or was played under other rules than ``rules``. The file is
    untrusted input: it is read by the shared capped reader
    (:func:`dominoes_env.npz_files.read_npz`; a FIFO never blocks), and its messages name it
    as ``--data PATH`` (the flag of ``experiments.expert_iteration`` that reads it)."""
    from dominoes_env.npz_files import NpzError, read_npz
    from dominoes_env.obs import observation_spec

    from .datasets import mask_problem

    try:  # the shared reader: a FIFO never blocks, a declared or expanded size is capped
        arrays = read_npz(path, max_bytes=machine_memory() // 2, names=(*DEMO_KEYS, "meta"))
    except NpzError as err:
        raise ValueError(f"--data {path!r} is not a demonstrations file ({err})") from None
    missing = [k for k in (*DEMO_KEYS, "meta") if k not in arrays]
    if missing:
        raise ValueError(f"--data {path!r} is not a demonstrations file (it lacks "
                         f"{', '.join(map(repr, missing))})")
    try:
        data = {k: arrays[k] for k in DEMO_KEYS}
        meta = parse_json(str(arrays["meta"]))  # a key given twice is refused
    except (OSError, ValueError, KeyError, TypeError, AttributeError, EOFError,
            json.JSONDecodeError, zipfile.BadZipFile) as err:  # BadZipFile: a truncated file
        raise ValueError(f"--data {path!r} is not a demonstrations file ({err})") from None
    problem = demos_meta_problem(meta)
    if problem:
        raise ValueError(f"--data {path!r} is not a demonstrations file (its meta: {problem})")
    teacher = meta["teacher"]
    if RuleConfig.from_dict(meta["rules"]) != rules:
        raise ValueError(f"--data {path!r} was played under other rules than --players asks")
    obs, masks, actions, values = (data[k] for k in DEMO_KEYS)
    flat = [f"{k} has {np.ndim(a)}" for k, a, rank in zip(DEMO_KEYS, (obs, masks, actions, values),
                                                          (2, 2, 1, 1), strict=True)
            if np.ndim(a) != rank]
    if flat:  # len() of a 0-d actions array was a TypeError traceback
        raise ValueError(f"--data {path!r}: arrays of the wrong number of dimensions "
                         f"({', '.join(flat)}); obs and masks have 2, actions and values 1")
    n, width = len(actions), observation_spec(DEMO_OBS_VERSION).layout(rules).size
    if obs.shape != (n, width) or masks.shape != (n, rules.num_tiles * 4) \
            or actions.shape != (n,) or values.shape != (n,):
        raise ValueError(f"--data {path!r}: arrays of shapes {obs.shape}, {masks.shape}, "
                         f"{actions.shape}, {values.shape}; observation version "
                         f"{DEMO_OBS_VERSION} under these rules needs ({n}, {width}), "
                         f"({n}, {rules.num_tiles * 4}), ({n},), ({n},)")
    if obs.dtype.kind != "f" or values.dtype.kind != "f" or masks.dtype != bool \
            or actions.dtype.kind not in "iu":
        raise ValueError(f"--data {path!r}: wrong array types (float observations and values, "
                         f"bool masks, integer actions)")
    if not (np.isfinite(obs).all() and np.isfinite(values).all()):
        raise ValueError(f"--data {path!r} holds NaN or infinite values")
    outside = observation_spec(DEMO_OBS_VERSION).layout(rules).value_outside(obs)
    if outside:  # 1e30 was fitted as it stood: no position encodes it
        raise ValueError(f"--data {path!r}: {outside}")
    if not n:
        raise ValueError(f"--data {path!r} holds no decision")
    problem = mask_problem(obs, masks, rules)  # as a dataset's: every action legal was fitted
    if problem:
        raise ValueError(f"--data {path!r}: {problem}")
    if (actions < 0).any() or (actions >= masks.shape[1]).any() \
            or not masks[np.arange(n), actions].all():
        raise ValueError(f"--data {path!r} holds a move that is not legal in its position")
    bound = score_bound(rules, "hand") / rules.target_score  # values: hand margins, scaled
    bad = np.flatnonzero(np.abs(values) > bound * (1 + 1e-6))
    if bad.size:  # 1e6 was fitted as the critic's target: no hand ends so
        raise ValueError(f"--data {path!r}: row {bad[0]}: value {values[bad[0]]:g} is outside "
                         f"{-bound:g}..{bound:g} (a side's hand margin, the most a side scores "
                         f"in a hand under these rules, over the target score)")
    return data, teacher


def demos_meta_problem(meta: Any) -> str | None:
    """What in a demonstrations file's metadata (the ``meta`` :func:`save_demos` writes) cannot
    be taken (``None``: nothing), checked as ``agents.datasets`` checks a dataset's ``dataset.json``
    (its agent specs by :func:`agents.datasets.specs_problem`): a JSON list, and a meta
    without rules (no default ones are assumed), with ``"matches": -5`` or ``10**30``,
    ``"seed": NaN`` or ``"teacher": "no::such spec"`` are each a problem said in words,
    before anything is fitted."""
    from .datasets import specs_problem

    if not isinstance(meta, dict):
        return f"a JSON {type(meta).__name__}, not an object of its fields"
    missing = [key for key in ("teacher", "opponents", "matches", "seed", "rules")
               if key not in meta]
    if missing:
        return f"it lacks {', '.join(map(repr, missing))}"
    if not isinstance(meta["teacher"], str) or not meta["teacher"].strip():
        return f"teacher must be an agent spec, not {short_repr(meta['teacher'])}"
    opponents = meta["opponents"]
    if not isinstance(opponents, list) or not opponents or not all(
            isinstance(o, str) and o.strip() for o in opponents):
        return f"opponents must be a list of agent specs, not {short_repr(opponents)}"
    problem = specs_problem([meta["teacher"], *opponents])
    if problem:
        return problem
    if type(meta["matches"]) is not int or not 1 <= meta["matches"] <= MAX_MATCHES:
        return (f"matches must be a count of matches in 1..{MAX_MATCHES:,} (what --matches "
                f"plays), not {short_repr(meta['matches'])}")
    try:
        as_seed(meta["seed"])
        RuleConfig.from_dict(meta["rules"])
    except (ValueError, TypeError) as err:
        return " ".join(str(err).split())
    lacking = [name for name in RuleConfig.field_names() if name not in meta["rules"]]
    if lacking:  # a default would be assumed for a rule the matches may not have been played by
        return f"rules lack {', '.join(lacking)} (written whole; no default is assumed)"
    return None
