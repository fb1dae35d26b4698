"""The behaviour cloning that starts a MaskablePPO run (``python -m experiments.train_ppo
--bc-teacher SPEC`` or ``--bc-dataset DIR``): the fresh policy fitted to a teacher's decisions
before PPO trains it.

The decisions come from matches the teacher plays (:func:`clone_teacher`, which collects them:
:func:`agents.imitation.collect_demonstrations`) or from a dataset (checked by
:func:`check_bc_dataset` and read by :func:`bc_dataset_demonstrations`, before the run's folder
is made, then cloned by :func:`clone_dataset`). Either way they are fitted by
:func:`agents.imitation.pretrain_policy` and the weights it leaves checked
(:func:`pretrain_checked`): a cloning that breaks the policy file's rule is
:class:`~agents.sb3_divergence.Diverged`, and nothing of it is saved. The statistics of a
cloning that passed go to the run's ``bc.json``, and a line says how it went.
torch is imported only when the policy is fitted.
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

from dominoes_env.core import RuleConfig
from dominoes_env.core.atomic_files import write_json

from .sb3_divergence import check_weights, divergence
from .sb3_run import RunDirError


def check_bc_dataset(dataset: str, agent: str | None, rules: RuleConfig) -> None:
    """``ValueError`` unless the dataset ``dataset`` (its ``dataset.json``) was played under
    ``rules`` and holds the decisions of ``agent`` (when one is named): a wrong dataset is
    refused from its description alone, before a run's folder is made."""
    from agents.datasets import dataset_info

    info = dataset_info(dataset)
    if RuleConfig.from_dict(info["rules"]) != rules:
        raise ValueError(f"bc_dataset {dataset} was played under other rules than this run's: "
                         f"{info['rules']}")
    if agent and agent not in info["agents"]:
        raise ValueError(f"bc_agent {agent!r} is not in {dataset}; it has: "
                         f"{', '.join(info['agents'])}")


def bc_dataset_demonstrations(dataset: str, agent: str | None, rules: RuleConfig) -> dict:
    """The decisions of the dataset ``dataset`` (``agent``'s, or every agent's for ``None`` or
    ``""``) that a run under ``rules`` clones, in the form
    :func:`agents.imitation.pretrain_policy` fits, read before the run's folder is made: a
    damaged dataset (a decisions file's bad field) is a :class:`~agents.sb3_run.RunDirError`
    naming the file, and nothing is written. An incomplete dataset is read, with one
    ``warning:`` line on stderr saying so."""
    from agents.datasets import IncompleteDatasetWarning
    from agents.imitation import dataset_demonstrations

    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", IncompleteDatasetWarning)
            data = dataset_demonstrations(dataset, agent or None, rules)
    except ValueError as err:
        raise RunDirError(f"--bc-dataset: {err}") from None
    for seen in caught:  # an incomplete dataset: one line, not Python's two
        if issubclass(seen.category, IncompleteDatasetWarning):
            print(f"warning: --bc-dataset: {seen.message}", file=sys.stderr)
        else:
            warnings.showwarning(seen.message, seen.category, seen.filename, seen.lineno)
    return data


def clone_dataset(model, out: Path, data: dict, dataset: str, agent: str | None, *,
                  epochs: int, seed: int) -> None:
    """Behaviour-clone ``data``, the decisions of ``dataset`` (:func:`bc_dataset_demonstrations`;
    ``agent``'s, or every agent's), into ``model``'s fresh policy for ``epochs`` epochs
    (:func:`pretrain_checked`); the statistics go to ``out/bc.json``, written only once the
    cloned weights pass the policy file's rule."""
    started = time.time()
    stats = pretrain_checked(model, data, epochs=epochs, seed=seed)
    _record(out, dataset, {"dataset": dataset, "agent": agent or "all"}, data, started, stats)


def clone_teacher(model, out: Path, teacher: str, opponents: list[str], rules: RuleConfig, *,
                  matches: int, epochs: int, seed: int, workers: int) -> None:
    """Behaviour-clone the agent spec ``teacher`` into ``model``'s fresh policy: its decisions
    in ``matches`` matches under ``rules`` against ``opponents`` (agent specs; ``teacher``
    names the teacher itself), played by ``workers`` processes on the deals of ``seed``
    (:func:`agents.imitation.collect_demonstrations`), fitted for ``epochs`` epochs
    (:func:`pretrain_checked`); the statistics go to ``out/bc.json``, written only once the
    cloned weights pass the policy file's rule."""
    from agents.imitation import collect_demonstrations

    started = time.time()
    opponents = [teacher if o == "teacher" else o for o in opponents]
    data = collect_demonstrations(teacher, opponents, rules, matches, seed=seed,
                                  workers=workers, progress=True)
    collected = time.time() - started
    stats = pretrain_checked(model, data, epochs=epochs, seed=seed)
    _record(out, teacher, {"teacher": teacher, "opponents": opponents, "matches": matches},
            data, started, stats, collect_s=round(collected, 1))


def _record(out: Path, source: str, where: dict, data: dict, started: float,
            stats: dict[str, float], **times: float) -> None:
    """A cloning that passed: its statistics in ``out/bc.json`` (``where`` the decisions came
    from, their count, ``times`` and the total seconds since ``started``) and one line."""
    info = {**where, "decisions": int(len(data["actions"])), **times,
            "total_s": round(time.time() - started, 1), **stats}
    write_json(out / "bc.json", info)
    print(f"[bc] cloned {info['decisions']:,} decisions of {source} in "
          f"{info['total_s']:.0f} s: accuracy {stats['accuracy']:.3f}", flush=True)


def pretrain_checked(model, data: dict, *, epochs: int, seed: int) -> dict[str, float]:
    """The statistics of :func:`agents.imitation.pretrain_policy` cloning ``data`` into
    ``model``'s policy (``epochs`` epochs, shuffled by ``seed``), its weights then checked
    (:func:`~agents.sb3_divergence.check_weights`): :class:`~agents.sb3_divergence.Diverged`
    when they break the policy file's rule, as it ends or when an error stops it in its middle
    (torch refuses the NaN one of its steps made as the next starts: then that error is the
    divergence; with sound weights it goes on as it was)."""
    from agents.imitation import pretrain_policy

    try:
        stats = pretrain_policy(model, data, epochs=epochs, seed=seed)
    except Exception:
        diverged = divergence(model.policy, None)
        if diverged is None:
            raise
        raise diverged from None
    check_weights(model.policy, None)
    return stats
