"""What a MaskablePPO run (``python -m experiments.train_ppo``) does between stable-baselines3's
steps: its callbacks.

- :class:`SelfPlayAndEval`: snapshots of the learner into the self-play pool, and evaluations
  against greedy and random (TensorBoard, ``eval.csv`` and a line);
- :class:`Throughput`: the wall and CPU seconds of each update (``throughput.json``);
- :class:`LastCompletedUpdate`: each update checked as it ends
  (:func:`~agents.sb3_divergence.check_weights`), and a copy of the model as the last sound one
  left it, put back after a stop or a divergence;
- :class:`Checkpoints`: the periodic checkpoints (``checkpoints/ppo_<steps>_steps.zip``), the
  newest kept;
- :class:`DeliverStops`: Ctrl-C, SIGTERM and SIGHUP, held while SB3 and torch work, delivered
  between two environment steps.

Each is written as the hooks of SB3's ``BaseCallback`` (``_on_training_start``,
``_on_rollout_start``, ``_on_step``, ``_on_training_end``; ``self.model``, ``self.logger`` and
the counts are ``BaseCallback``'s) and taking its inputs as arguments; :func:`sb3_callback`
builds one as an SB3 callback (:func:`sb3_class`), so importing this module (and the program
that uses it: its ``--help``, a refusal, its config) never imports stable-baselines3 and torch.
"""

from __future__ import annotations

import copy
import functools
import time
import types
from pathlib import Path

from dominoes_env.cli_support import RunClock, append_eval_row
from dominoes_env.core import RuleConfig
from dominoes_env.core.atomic_files import write_json

from .evaluation import evaluation_row
from .sb3_checkpoint import save_model
from .sb3_divergence import check_weights
from .sb3_run import prune_checkpoints, record_pool_snapshot


class SelfPlayAndEval:
    """Every ``snapshot_every`` steps: export a frozen copy into the pool (``out/pool``, of
    which a resumed run loads the ``max_snapshots`` newest). Every ``eval_every`` steps:
    evaluate against greedy and random (``eval_matches`` matches each, on the deals of
    ``seed``, under ``rules``) and log it (TensorBoard, ``out/eval.csv`` with the run's wall
    seconds, ``clock``, and a line)."""

    def __init__(self, out: Path, vec_env, clock: RunClock, rules: RuleConfig, *,
                 snapshot_every: int, max_snapshots: int, eval_every: int, eval_matches: int,
                 seed: int):
        super().__init__()
        self.out, self.vec_env, self.clock, self.rules = out, vec_env, clock, rules
        self.snapshot_every, self.max_snapshots = snapshot_every, max_snapshots
        self.eval_every, self.eval_matches, self.seed = eval_every, eval_matches, seed
        self.next_snapshot = 0
        self.next_eval = 0
        self.last_eval = -1

    def _on_training_start(self) -> None:
        steps = self.model.num_timesteps
        for path in sorted((self.out / "pool").glob("*.npz"))[-self.max_snapshots:]:
            self.vec_env.env_method("add_snapshot", str(path))  # resumed run: same pool
        self.next_snapshot = steps if steps == 0 else steps + self.snapshot_every
        self.next_eval = steps + self.eval_every
        if steps == 0:
            self.evaluate(0)  # the learning curve starts from the initial policy

    def _on_step(self) -> bool:
        steps = self.model.num_timesteps
        if steps >= self.next_snapshot:
            path = self.out / "pool" / f"snapshot_{steps:09d}.npz"
            self.export(path, steps)
            record_pool_snapshot(path)  # a resume trains against this file only
            sizes = self.vec_env.env_method("add_snapshot", str(path))
            self.logger.record("selfplay/pool_size", sizes[0])
            self.next_snapshot += self.snapshot_every
        if steps >= self.next_eval:
            self.evaluate(steps)
            self.next_eval += self.eval_every
        return True

    def _on_training_end(self) -> None:
        # the final policy, unless an evaluation of it (within a rollout) was just made
        if (self.model.num_timesteps - self.last_eval
                >= self.model.n_steps * self.model.n_envs):
            self.evaluate(self.model.num_timesteps)

    def export(self, path: Path, steps: int) -> None:
        """The policy as it is now, exported to ``path`` (the ``ppo:PATH`` format)."""
        from agents.ppo_export import export_policy

        export_policy(self.model, path, {"rules": self.rules.to_dict(), "steps": steps})

    def evaluate(self, steps: int) -> None:
        self.last_eval = steps
        path = self.out / "eval_policy.npz"
        self.export(path, steps)
        row = {"steps": steps, "wall_s": round(self.clock.seconds(), 1),
               **evaluation_row(f"ppo:{path}", self.rules, matches=self.eval_matches,
                                seed=self.seed, on_result=self.record)}
        self.logger.record("selfplay/share_of_episodes", self.self_play_share())
        self.logger.dump(steps)
        append_eval_row(self.out / "eval.csv", row)
        print(f"[eval] steps {steps:,}: vs greedy {row['win_rate_vs_greedy']:.3f} "
              f"(margin {row['margin_vs_greedy']:+.1f}), vs random "
              f"{row['win_rate_vs_random']:.3f}", flush=True)

    def record(self, opponent: str, result: dict[str, float]) -> None:
        """One opponent's evaluation, logged to TensorBoard (unrounded)."""
        for key, value in result.items():
            self.logger.record(f"eval/{key}_vs_{opponent}", value)

    def self_play_share(self) -> float:
        """The share of the episodes so far that the learner played against its snapshots."""
        total: dict[str, int] = {}
        for draws in self.vec_env.env_method("pool_draws"):
            for key, n in draws.items():
                total[key] = total.get(key, 0) + n
        self_share = sum(n for k, n in total.items() if k.startswith("self:"))
        return self_share / max(1, sum(total.values()))


class Throughput:
    """``path`` (the run's ``throughput.json``): this process's wall and CPU seconds per update
    (rollout and epochs) of ``steps_per_update`` steps, for ``experiments.bench_training``."""

    def __init__(self, steps_per_update: int, path: Path):
        super().__init__()
        self.steps_per_update = steps_per_update
        self.path = path
        self.marks: list[tuple[float, float]] = []

    def _on_rollout_start(self) -> None:
        self.marks.append((time.perf_counter(), time.process_time()))

    def _on_step(self) -> bool:
        return True

    def _on_training_end(self) -> None:
        self._on_rollout_start()
        spans = list(zip(self.marks, self.marks[1:], strict=False))
        summary = {"steps_per_update": self.steps_per_update,
                   "update_s": [round(b[0] - a[0], 4) for a, b in spans],
                   "update_cpu_s": [round(b[1] - a[1], 4) for a, b in spans]}
        write_json(self.path, summary, indent=None)


class LastCompletedUpdate:
    """Checks each update as it ends, before anything counts it, and keeps a copy of the
    model as each sound update left it (taken as the next rollout starts): its policy and
    optimizer state and its update count. It must come before the callbacks that count an
    update (:class:`SelfPlayAndEval`, :class:`Checkpoints`), whose hooks then run after its
    own.

    An update whose weights a policy file would refuse
    (:func:`~agents.sb3_divergence.check_weights`) raises
    :class:`~agents.sb3_divergence.Diverged` there, at the next rollout's start or at the end
    of training, so no snapshot, evaluation, checkpoint or export ever holds it; the trainer
    then puts the copy back (:meth:`restore`) and saves it. A stop during an update's epochs
    would otherwise save a half-applied update; :meth:`restore` puts the copy back, so a
    stopped run is saved as its last completed update left it. Its step count stays SB3's, the
    steps collected (as in SB3's own checkpoints, which are saved when a rollout ends, before
    its update)."""

    def __init__(self):
        super().__init__()
        self.kept: dict | None = None

    def _on_rollout_start(self) -> None:
        model = self.model
        if self.kept is not None:  # an update ran since the copy (the first: the start's)
            check_weights(model.policy, model.num_timesteps)
        self.kept = {"policy": copy.deepcopy(model.policy.state_dict()),
                     "optimizer": copy.deepcopy(model.policy.optimizer.state_dict()),
                     "n_updates": model._n_updates}

    def _on_step(self) -> bool:
        return True

    def _on_training_end(self) -> None:
        if self.kept is not None:  # the last update, before its final evaluation
            check_weights(self.model.policy, self.model.num_timesteps)

    def restore(self) -> None:
        """The model as the last completed update left it (if one was kept)."""
        if self.kept is None:
            return
        model = self.model
        model.policy.load_state_dict(self.kept["policy"])
        model.policy.optimizer.load_state_dict(self.kept["optimizer"])
        model._n_updates = self.kept["n_updates"]


class Checkpoints:
    """Every ``every`` steps (rounded to whole steps of the ``n_envs`` environments):
    ``folder/ppo_<steps>_steps.zip``, written by :func:`~agents.sb3_checkpoint.save_model`
    (SB3's ``CheckpointCallback`` wrote it in place, and a Ctrl-C in its middle left half a
    file and a traceback), with the run's wall seconds (``clock``); only the newest ``keep``
    stay (:func:`~agents.sb3_run.prune_checkpoints`)."""

    def __init__(self, folder: Path, clock: RunClock, *, every: int, n_envs: int, keep: int):
        super().__init__()
        self.every = max(1, every // n_envs)
        self.keep = keep
        self.folder = folder
        self.clock = clock

    def _on_step(self) -> bool:
        if self.n_calls % self.every == 0:
            steps = self.num_timesteps
            save_model(self.model, self.folder / f"ppo_{steps}_steps.zip", self.clock.seconds())
            prune_checkpoints(self.folder, steps, self.keep)
        return True


class DeliverStops:
    """At each environment step, the stop signal that ``held`` holds, if one came
    (:class:`~dominoes_env.cli_support.HeldSignals`)."""

    def __init__(self, held):
        super().__init__()
        self.held = held

    def _on_step(self) -> bool:
        self.held.deliver()
        return True


@functools.cache
def sb3_class(hooks: type) -> type:
    """``hooks`` (a callback class above) as a subclass of stable-baselines3's
    ``BaseCallback``, of the same name: SB3 is imported here, when a run builds its
    callbacks."""
    from stable_baselines3.common.callbacks import BaseCallback

    return types.new_class(hooks.__name__, (hooks, BaseCallback),
                           exec_body=lambda ns: ns.update(__doc__=hooks.__doc__,
                                                          __module__=hooks.__module__))


def sb3_callback(hooks: type, *args, **kwargs):
    """A stable-baselines3 callback of class ``hooks`` (:func:`sb3_class`), built with
    ``args`` and ``kwargs``."""
    return sb3_class(hooks)(*args, **kwargs)
