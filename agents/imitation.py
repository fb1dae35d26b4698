"""Warm-start a PPO policy by behaviour cloning a teacher agent (e.g. the search agent).

Pure PPO from scratch learns the count rule's consequences slowly on two cores; cloning a
strong teacher first gives PPO a policy worth refining. :func:`collect_demonstrations` plays
matches with the teacher at one side against a mix of opponents and records, for each of the
teacher's decisions, the learner's observation, action mask and the teacher's action;
:func:`pretrain_policy` fits the policy network to them (masked cross-entropy) and fits the
value network to the teacher side's final margin of each hand (torch, the ``train`` extra, is
imported only by :func:`pretrain_policy`).

>>> data = collect_demonstrations("greedy", ["random"], RuleConfig(target_score=30), 2, seed=0)
>>> data["obs"].shape[1], data["obs"].shape[0] == data["actions"].shape[0] > 0
(234, True)
"""

from __future__ import annotations

import multiprocessing as mp
import time
from typing import Any

import numpy as np

from dominoes_env.cli_support import MAX_MATCHES
from dominoes_env.core import RuleConfig
from dominoes_env.core.validation import (
    ParameterTypeError,
    as_bool,
    as_int,
    as_seed,
    short_repr,
)
from dominoes_env.driver import agent_seed, derive_seed, play_match_with
from dominoes_env.obs.actions import action_mask
from dominoes_env.obs.v2 import encode_observation
from dominoes_env.optional import require

from .specs import check_spec, make_agent

__all__ = ["collect_demonstrations", "dataset_demonstrations", "join_demonstrations",
           "play_and_record", "pretrain_policy"]


def play_and_record(job) -> dict[str, np.ndarray]:
    """One match of :func:`collect_demonstrations`, played and recorded (what it maps over its
    matches, in its pool's workers): ``job`` is ``(teacher, opponents, rules, match_seed,
    scale)``, and the result the teacher's decisions in that match, as
    :func:`collect_demonstrations` returns them for all.

    >>> job = ("greedy", ["random"], RuleConfig(target_score=30), 7, 1 / 30)
    >>> sorted(play_and_record(job))
    ['actions', 'masks', 'obs', 'values']
    """
    teacher_spec, opponents, rules, match_seed, scale = job
    n = rules.num_players
    k = match_seed % 2  # the teacher's side alternates
    opponent = opponents[match_seed % len(opponents)]
    seats = [teacher_spec if rules.side_of(s) == k else opponent for s in range(n)]
    recorded = {rules.side_of(s) for s in range(n) if seats[s] == teacher_spec}
    players = [make_agent(spec, seed=agent_seed(match_seed, s)) for s, spec in enumerate(seats)]
    obs, masks, actions, values = [], [], [], []
    pending: list[tuple[int, int]] = []  # (row, side) of the current hand, valued when it ends
    hand_start: list[int] = []

    def close_hand(scores):
        gain = [scores[s] - hand_start[s] for s in range(rules.num_sides)]
        for _, side in pending:
            others = max(g for s, g in enumerate(gain) if s != side)
            values.append((gain[side] - others) * scale)
        pending.clear()

    def on_hand(match) -> None:
        if match.hand_number > 0:
            close_hand(match.hand_scores[-1])
        hand_start[:] = match.hand_scores[-1] if match.hand_number else match.scores

    def on_decision(seat, view, code) -> None:
        if rules.side_of(seat) in recorded and len(view.legal) > 1:
            obs.append(encode_observation(view))
            masks.append(action_mask(view).astype(bool))
            actions.append(code)
            pending.append((len(actions) - 1, rules.side_of(seat)))

    run = play_match_with(players, rules, match_seed, on_hand=on_hand, on_decision=on_decision)
    close_hand(run.match.scores)
    return {"obs": np.array(obs, dtype=np.float32).reshape(len(obs), -1),
            "masks": np.array(masks, dtype=bool).reshape(len(masks), -1),
            "actions": np.array(actions, dtype=np.int64),
            "values": np.array(values, dtype=np.float32)}


def _ignore_sigint() -> None:
    """Pool workers leave Ctrl-C to the parent (which stops the pool): no traceback per worker.
    SIGTERM and SIGHUP get their default action back: the pool's ``terminate`` stops its
    workers with SIGTERM, and a worker forked with the parent's Python handler for it (a
    command's runner installs one) would only run that handler, so ``terminate`` would wait
    forever in ``join`` (a test sat there for ten minutes)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for name in ("SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)


def demonstration_pool(workers: int):
    """A pool of ``workers`` processes (Ctrl-C ignored in them: their parent stops them) for
    :func:`collect_demonstrations`' ``pool``, forked from this process: a program that starts
    JAX makes it before JAX starts (forking a process that runs JAX's threads can deadlock the
    child, and JAX warns of it on every fork) and plays every round of matches in it."""
    return mp.get_context("fork").Pool(workers, _ignore_sigint)


def collect_demonstrations(teacher: str, opponents: list[str], rules: RuleConfig, matches: int,
                           seed: int = 0, workers: int = 1, progress: bool = False,
                           finished: list | None = None, pool=None) -> dict[str, np.ndarray]:
    """The teacher's decisions (with more than one legal move) in ``matches`` matches against
    ``opponents`` (cycled; an opponent spelled like the teacher is the teacher too, and its
    decisions are recorded as well); ``values`` is the deciding side's margin in that hand
    over the best other side, scaled like the env's ``score_delta`` reward
    (1 / target_score). ``finished`` (a list) receives each match's decisions as it ends, in
    match order: what a caller keeps when the collection is interrupted
    (:func:`join_demonstrations` makes them one set). The matches are played in ``pool``
    (:func:`demonstration_pool`) when given, else in a pool of ``workers`` processes made for
    this call when ``workers > 1``; the data is the same either way."""
    matches, workers, seed = _check_collection(teacher, opponents, rules, matches, workers, seed)
    progress = as_bool("progress", progress)
    if finished is not None and not isinstance(finished, list):
        raise ParameterTypeError(f"finished={short_repr(finished)} must be a list (or None)")
    scale = 1.0 / rules.target_score
    jobs = ((teacher, opponents, rules, derive_seed(seed, "bc", i), scale) for i in range(matches))
    parts = []
    if pool is not None:  # in job order: the same data every run
        parts = _with_progress(pool.imap(play_and_record, jobs), matches, progress, finished)
    elif workers > 1:
        with demonstration_pool(workers) as own:
            parts = _with_progress(own.imap(play_and_record, jobs), matches, progress, finished)
    else:
        parts = _with_progress(map(play_and_record, jobs), matches, progress, finished)
    return join_demonstrations(parts)


def _check_collection(teacher: Any, opponents: Any, rules: Any, matches: Any, workers: Any,
                      seed: Any) -> tuple[int, int, int]:
    """:func:`collect_demonstrations`' arguments checked before a match is played, as
    :func:`agents.evaluation.evaluate` checks its own: ``(matches, workers, seed)``.
    ``rules`` must be a ``RuleConfig``, ``matches`` in ``1..MAX_MATCHES``, ``seed`` a seed
    (0..2**64 - 1), ``teacher`` one agent spec and ``opponents`` a non-empty list of them
    (``"random"`` alone is no list); a ``ValueError`` / ``TypeError`` names what is wrong
    otherwise. ``workers`` past the CPUs this process may use is capped there (the data is the
    same)."""
    from .tournament.runner import max_workers

    if not isinstance(rules, RuleConfig):
        raise ParameterTypeError(f"rules must be a RuleConfig, got {short_repr(rules)}")
    matches = as_int("matches", matches, 1, MAX_MATCHES)
    workers = min(as_int("workers", workers, 1), max_workers(), matches)
    seed = as_seed(seed)
    if not isinstance(teacher, str):
        raise ParameterTypeError(f"teacher must be an agent spec string such as 'search', got "
                                 f"{short_repr(teacher)}")
    if not isinstance(opponents, (list, tuple)) or not all(isinstance(o, str) for o in opponents):
        raise ParameterTypeError(f"opponents must be a list of agent spec strings such as "
                                 f"['random', 'greedy'], got {short_repr(opponents)}")
    if not opponents:
        raise ValueError("opponents is empty; give at least one agent spec")
    for name, spec in [("teacher", teacher), *(("opponents", o) for o in dict.fromkeys(opponents))]:
        try:
            check_spec(spec, rules)
        except ValueError as err:
            raise ValueError(f"{name}: {err}") from None
    return matches, workers, seed


def join_demonstrations(parts: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """The decisions of several matches (:func:`collect_demonstrations`' ``finished``) as one
    set of arrays; ``ValueError`` when there is none."""
    if not parts:
        raise ValueError("no match was finished: there are no decisions to join")
    return {key: np.concatenate([p[key] for p in parts]) for key in parts[0]}


def dataset_demonstrations(path, agent: str | None = None,
                           rules: RuleConfig | None = None) -> dict[str, np.ndarray]:
    """The demonstrations of a dataset directory (:mod:`agents.datasets`), in
    the form :func:`pretrain_policy` fits: the decisions with more than one legal move (of
    ``agent`` only, when given), ``values`` the acting side's hand margin scaled by
    1 / target_score. With ``rules``, a dataset played under other rules (another observation
    or action size, another target) is refused with a ``ValueError``."""
    from .datasets import dataset_info, load_decisions

    data = load_decisions(path, agent=agent, unforced=True)
    # read as load_decisions read it (a UTF-16 dataset.json was refused by a second, plain read)
    stored = RuleConfig.from_dict(dataset_info(path)["rules"])
    if rules is not None and stored != rules:
        diffs = [f"{k}: {v!r} there, {rules.to_dict().get(k)!r} here"
                 for k, v in stored.to_dict().items() if rules.to_dict().get(k) != v]
        raise ValueError(f"{path} was played under other rules ({'; '.join(diffs)})")
    if not len(data["action"]):
        raise ValueError(f"{path} holds no decision with a choice"
                         + (f" by {agent!r}" if agent else ""))
    return {"obs": data["obs"], "masks": data["mask"], "actions": data["action"],
            "values": data["hand_margin"].astype(np.float32) / stored.target_score}


def _with_progress(it, total: int, show: bool, finished: list | None = None) -> list:
    if show:
        it = require("tqdm", "train", "the progress bar").tqdm(
            it, total=total, desc="demonstrations", unit="match")
    parts = [] if finished is None else finished
    for part in it:
        parts.append(part)
    return list(parts)


def pretrain_policy(model, data: dict[str, np.ndarray], epochs: int = 10, batch_size: int = 512,
                    learning_rate: float = 1e-3, seed: int = 0, log=print) -> dict[str, float]:
    """Fit ``model.policy`` (a MaskablePPO policy) to the demonstrations: masked cross-entropy
    for the actor, mean squared error to ``values`` for the critic. Returns the final training
    accuracy (the teacher's action is the policy's most probable one) and losses."""
    torch = require("torch", "train", "behaviour cloning")

    policy = model.policy
    device = policy.device
    generator = np.random.default_rng(seed)
    obs = torch.as_tensor(data["obs"], device=device)
    masks = data["masks"]
    actions = torch.as_tensor(data["actions"], device=device)
    values = torch.as_tensor(data["values"], device=device)
    optimizer = torch.optim.Adam(policy.parameters(), lr=learning_rate)
    n = len(actions)
    stats: dict[str, float] = {}
    started = time.time()
    for epoch in range(epochs):
        order = generator.permutation(n)
        total_pi = total_v = correct = 0.0
        for start in range(0, n, batch_size):
            idx = order[start:start + batch_size]
            idx_t = torch.as_tensor(idx, device=device)
            value, log_prob, _ = policy.evaluate_actions(obs[idx_t], actions[idx_t],
                                                         action_masks=masks[idx])
            pi_loss = -log_prob.mean()
            v_loss = torch.nn.functional.mse_loss(value.flatten(), values[idx_t])
            loss = pi_loss + 0.5 * v_loss
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            with torch.no_grad():
                dist = policy.get_distribution(obs[idx_t], action_masks=masks[idx])
                best = dist.distribution.probs.argmax(dim=1)
                correct += (best == actions[idx_t]).sum().item()
            total_pi += pi_loss.item() * len(idx)
            total_v += v_loss.item() * len(idx)
        stats = {"accuracy": correct / n, "policy_loss": total_pi / n, "value_loss": total_v / n}
        log(f"[bc] epoch {epoch + 1}/{epochs}: accuracy {stats['accuracy']:.3f}, policy loss "
            f"{stats['policy_loss']:.3f}, value loss {stats['value_loss']:.4f} "
            f"({time.time() - started:.0f} s)")
    return stats
