"""Multi-agent self-play PPO with RLlib (new API stack): one shared policy plays every seat.

Reads top to bottom: the configuration (one dataclass, every field a flag), the RLlib
algorithm config (the AEC env through RLlib's ``PettingZooEnv``, every agent mapped to one
``MaskedPPOModule`` that masks illegal actions), the training loop, the export.

    python -m experiments.train_rllib --iterations 50 --env-runners 2 --players 2 --out runs/rllib2p
    python -m experiments.train_rllib --address HEAD_IP:6379 --env-runners 16   # a Ray cluster

Every run is seeded and writes into ``--out``: ``progress.csv`` (one row per iteration,
numbered on across ``--resume``: ``--iterations`` is how many this command runs),
TensorBoard logs (``tb/``), ``eval.csv`` (the learning curve, as ``train_jax`` and
``train_ppo`` write it: a row per evaluation of the shared policy against greedy and random,
``--eval-matches`` matches each, with Wilson intervals: :func:`agents.evaluation.evaluation_row`;
one before a new run's first iteration, one every ``--eval-every`` iterations, one at the
end), the RLlib checkpoint (``checkpoint/``, resume with ``--resume``) and ``policy.npz`` +
``policy.json``: the shared policy exported to the numpy format that the agent spec
``ppo:PATH`` plays (no torch, no Ray). Needs the ``rllib`` extra (``pip install -e
".[rllib]"``); ``docs/rllib.md`` covers multi-node clusters.

The wall seconds it records (``wall_s`` in ``eval.csv`` and ``policy.json``, ``seconds`` in
``progress.csv``) are the run's seconds of training, a resumed run's before included, counted
by :class:`~dominoes_env.cli_support.RunClock` (from when the algorithm is built and restored,
just before the first evaluation or iteration): each checkpoint records them with the run's
completed iterations (``checkpoint/train_rllib_run.json``) and ``--resume`` goes on from there.

Exit status: 0, trained and exported; 1, the training diverged: an iteration made losses or
weights that are not finite (NaN or infinite) or weights a policy file cannot hold (above
:data:`dominoes_env.policy_format.MAX_WEIGHT`), or an evaluation's export refused them; one
line says which, nothing of that state is saved or exported, and ``checkpoint/`` holds the
run's last sound iteration (or the checkpoint it resumed, as it was; or nothing, when none
finished); 2, a refused flag or input (one ``error:`` line); 130, 143 or 129, stopped by
Ctrl-C, SIGTERM or SIGHUP (saved and exported as its last completed iteration left it).
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import math
import numbers
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents.ray_cluster import RayStartError, init_ray, split_address
from agents.rllib_checkpoint import CheckpointChanged, verified_copy, write_manifest
from agents.specs import check_spec_path
from dominoes_env.cli_support import (
    MAX_MATCHES,
    MAX_TRAINER_SEED,
    CommandError,
    RunClock,
    TrainingStopped,
    append_eval_row,
    check_config,
    check_run_folder,
    config_field,
    config_parser,
    divergence_line,
    end_program,
    end_stopped_training,
    keep_numeric_rows,
    print_error,
    run_command,
    shown_path,
    signals_held,
    start_run_folder,
    stop_status,
)
from dominoes_env.cli_support import machine_memory as cli_machine_memory
from dominoes_env.core import RuleConfig
from dominoes_env.core.atomic_files import path_kind, write_json
from dominoes_env.core.validation import parse_json
from dominoes_env.policy_format import (
    MAX_WALL_S,
    PolicyFileError,
    hidden_sizes,
)

SHARED_POLICY = "shared"
#: the most env runners (Ray actors) and environments per runner a run asks for
MAX_ENV_RUNNERS = 10_000
MAX_ENVS_PER_RUNNER = 1_000
#: memory of one env step in a training batch (observation, mask, logits, values and
#: advantages, held in the sampled episodes, the batch and the learner's tensors), and of one
#: process (the driver, or an env runner started on this machine), both rounded up
BYTES_PER_STEP = 16 * 1024
BYTES_PER_PROCESS = 512 * 2**20


# -- configuration ---------------------------------------------------------------------------
@dataclass
class RllibConfig:
    """Everything a run depends on (each field is a ``--flag``; its help text and the values it
    allows are in the field's :func:`~dominoes_env.cli_support.config_field`)."""

    iterations: int = config_field(50, "training iterations this command runs (each samples "
                                       "train_batch_size env steps, then learns; a resumed run "
                                       "numbers them on from its checkpoint's)", low=1)
    env_runners: int = config_field(2, "Ray actors sampling episodes (0: sample in the driver "
                                       "process)", low=0, high=MAX_ENV_RUNNERS)
    envs_per_runner: int = config_field(1, "environments per env runner", low=1,
                                        high=MAX_ENVS_PER_RUNNER)
    players: int = config_field(2, "seats at the table: 2, 3 or 4", choices=(2, 3, 4))
    partnerships: bool | None = config_field(None, "4 players in two partnerships (default: on "
                                                   "with 4 players)")
    target_score: int = config_field(250, "match target score", low=1)
    episode: str = config_field("hand", "'hand' (one deal per episode) or 'match' (to the "
                                        "target score)", choices=("hand", "match"))
    net: str = config_field("256,256", "hidden layer sizes of the policy and value networks, "
                                       "e.g. 256,256")
    activation: str = config_field("tanh", "hidden activation: tanh or relu",
                                   choices=("tanh", "relu"))
    lr: float = config_field(3e-4, "learning rate", low=0, high=1, low_open=True)
    train_batch_size: int = config_field(4000, "env steps per iteration (per learner)", low=1)
    minibatch_size: int = config_field(500, "SGD minibatch size (2 or more: the advantages are "
                                            "normalised by their spread in it)", low=2)
    epochs: int = config_field(5, "SGD epochs over each iteration's batch", low=1)
    gamma: float = config_field(1.0, "discount (1.0: points count the same whenever they come "
                                     "in an episode)", low=0, high=1)
    gae_lambda: float = config_field(0.95, "GAE lambda", low=0, high=1)
    entropy_coeff: float = config_field(0.01, "entropy bonus coefficient", low=0, high=1)
    address: str | None = config_field(None, "address of a running Ray cluster (e.g. "
                                             "HEAD_IP:6379, or 'auto'); default: start a local "
                                             "Ray instance")
    num_cpus: int | None = config_field(None, "CPUs of the local Ray instance (default: all; "
                                              "ignored with --address)", low=1)
    seed: int = config_field(0, "seed of the run (RLlib's, hence the env runners' env seeds and "
                                "the networks)", low=0,
                                high=MAX_TRAINER_SEED)
    out: str = config_field("runs/rllib", "output folder: progress.csv, tb/, checkpoint/, "
                                          "policy.npz, policy.json", path=True)
    resume: str | None = config_field(None, "an RLlib checkpoint folder to continue from (e.g. "
                                            "OUT/checkpoint): only one that train_rllib wrote "
                                            "and nobody changed since (RLlib checkpoints are "
                                            "pickles, which run code when loaded; each file's "
                                            "SHA-256 is checked first)", path=True)
    eval_every: int = config_field(10, "training iterations between evaluations of the shared "
                                       "policy against greedy and random (a row of eval.csv "
                                       "each; one more before a new run's first iteration and "
                                       "one at the end; 0: only at the end)", low=0)
    eval_matches: int = config_field(200, "matches per evaluation, against greedy and random "
                                          "each (each deal once per side); 0: no evaluation "
                                          "and no eval.csv", low=0, high=MAX_MATCHES)
    overwrite: bool = config_field(False, "replace the run that --out holds (its files are "
                                          "removed)")

    def __post_init__(self) -> None:
        self.rules()  # validates the rule options
        check_config(self)  # every field's choices and range (config_field)
        if self.minibatch_size > self.train_batch_size:
            raise ValueError(f"minibatch_size={self.minibatch_size} is larger than "
                             f"train_batch_size={self.train_batch_size}")
        self.hidden()
        if self.address is not None:
            split_address(self.address)  # a malformed address is refused before Ray starts

    def rules(self) -> RuleConfig:
        return RuleConfig(num_players=self.players, partnerships=self.partnerships,
                          target_score=self.target_score)

    def hidden(self) -> list[int]:
        return hidden_sizes(self.net)

    def env_config(self) -> dict[str, Any]:
        """The env options (``straight_dominoes_v1.env(**env_config)``). ``illegal_action=
        "raise"``: the module masks illegal actions, so one reaching the env is a bug and stops
        the run instead of ending an episode quietly."""
        return {**self.rules().to_dict(), "episode": self.episode, "illegal_action": "raise"}


def machine_memory() -> int:
    """This machine's physical memory in bytes."""
    return cli_machine_memory()


#: what a run's folder holds (an --out holding only these, without a run marker, is a run's)
OUTPUTS = ("progress.csv", "tb", "eval.csv", "eval.csv.damaged*", "eval_policy.npz",
           "checkpoint", "policy.npz", "policy.json")


def run_folder(cfg: RllibConfig):
    """``--out`` checked by the output policy (:func:`check_run_folder`): a new or empty folder,
    the same run with ``--resume`` of its own checkpoint (same settings, but for
    ``--iterations``, where Ray runs and how often and long it evaluates), or ``--overwrite``;
    and a folder whose policies an agent spec can name (:func:`check_spec_path`: its
    evaluation plays ``ppo:OUT/eval_policy.npz``)."""
    check_spec_path("--out", cfg.out, folder=True)
    settings = {k: v for k, v in dataclasses.asdict(cfg).items()
                if k not in ("out", "resume", "overwrite", "iterations", "address", "num_cpus",
                             "eval_every", "eval_matches")}
    return check_run_folder(cfg.out, "experiments.train_rllib", settings, resume=cfg.resume,
                            overwrite=cfg.overwrite, outputs=OUTPUTS, inputs=(cfg.resume,),
                            utf8_name=True)


def check_run(cfg: RllibConfig) -> None:
    """What the run needs from this machine, checked before Ray starts or anything is written
    (``ValueError`` with the reason): an ``--out`` folder it can make or write into, a
    ``--resume`` folder that holds an RLlib checkpoint, and the memory of its batch, its
    networks and the env runners started here."""
    run_folder(cfg)
    if cfg.resume is not None:
        resume = Path(cfg.resume)
        if not resume.is_dir():
            why = "is not a folder" if resume.exists() else "does not exist"
            raise ValueError(f"--resume {cfg.resume!r} {why}; give an RLlib checkpoint folder "
                             "(OUT/checkpoint)")
        # Ray 2.x marks a checkpoint folder with rllib_checkpoint.json (older Ray wrote
        # metadata.json): looking only for metadata.json refused every checkpoint this
        # program writes, so a stopped run could never be continued as its last line says
        names = ("rllib_checkpoint.json", "metadata.json")
        meta = next((resume / n for n in names if os.path.lexists(resume / n)), resume / names[0])
        try:  # a FIFO would block the read, a link to /dev/zero fill the memory
            if not meta.is_file():
                raise ValueError(f"it is {path_kind(meta)}, not a regular file"
                                 if os.path.lexists(meta) else "missing")
            if meta.stat().st_size > 1 << 20:
                raise ValueError(f"{meta.stat().st_size:,} bytes; RLlib writes a few hundred")
            parse_json(meta.read_text())
        except (OSError, ValueError) as err:
            raise ValueError(f"--resume {cfg.resume!r} is not an RLlib checkpoint folder "
                             f"({meta.name}: {getattr(err, 'strerror', None) or err})") from None
        check_own_checkpoint(cfg.resume)
    from dominoes_env.obs import observation_spec

    rules = cfg.rules()
    sizes = [observation_spec().layout(rules).size, *cfg.hidden(), rules.num_tiles * 4]
    weights = sum(a * b + b for a, b in zip(sizes[:-1], sizes[1:], strict=True))
    processes = 1 + (cfg.env_runners if cfg.address is None else 0)
    # the networks: policy and value, their gradients and Adam's two moments, float32, in every
    # process that holds them
    need = (cfg.train_batch_size * BYTES_PER_STEP + 2 * 4 * 4 * weights * processes
            + processes * BYTES_PER_PROCESS)
    if need > machine_memory():
        raise ValueError(f"this run needs about {need / 2**30:,.0f} GiB of memory (a batch of "
                         f"{cfg.train_batch_size:,} steps, networks of {weights:,} weights, "
                         f"{processes:,} processes here); this machine has "
                         f"{machine_memory() / 2**30:,.0f} GiB")


def check_own_checkpoint(path: str, copy_to: str | None = None) -> None:
    """``ValueError`` unless the checkpoint folder ``path`` is one this program wrote, unchanged
    (:func:`~agents.rllib_checkpoint.verified_copy`, its bytes copied to ``copy_to`` when given):
    restoring it unpickles its files, and a replaced pickle would run its code."""
    try:
        verified_copy(path, copy_to)
    except (CheckpointChanged, OSError) as err:
        why = err if isinstance(err, CheckpointChanged) else err.strerror or err
        raise ValueError(f"--resume {path!r} was not written by train_rllib or was changed "
                         f"since ({why}): RLlib checkpoints are pickles, which run code when "
                         "loaded; resume only a checkpoint of your own run") from None


def build_parser() -> argparse.ArgumentParser:
    return config_parser(
        RllibConfig, "python -m experiments.train_rllib", __doc__.split("\n")[0],
        epilog="Needs the rllib extra: pip install -e '.[rllib]'. Multi-node: docs/rllib.md.")


def parse_config(argv: list[str] | None) -> RllibConfig:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return RllibConfig(**vars(args))
    except (TypeError, ValueError) as err:
        parser.error(str(err))  # one line, exit status 2
        raise  # unreachable


# -- the RLlib algorithm ---------------------------------------------------------------------
def algorithm_config(cfg: RllibConfig):
    """PPO on the new API stack: every agent -> one shared :class:`MaskedPPOModule`."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.tune.registry import register_env

    from agents.rllib import ENV_NAME, MaskedPPOModule, make_env

    register_env(ENV_NAME, make_env)
    module = RLModuleSpec(module_class=MaskedPPOModule, model_config={
        "fcnet_hiddens": cfg.hidden(), "fcnet_activation": cfg.activation,
        "head_fcnet_hiddens": [], "vf_share_layers": False})
    return (
        PPOConfig()
        # RLlib's env pre-check steps unmasked random actions, which illegal_action="raise"
        # refuses; PettingZoo's api_test checks the env in the test suite instead
        .environment(ENV_NAME, env_config=cfg.env_config(), disable_env_checking=True)
        .multi_agent(policies={SHARED_POLICY},
                     policy_mapping_fn=lambda agent_id, episode, **kw: SHARED_POLICY)
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={SHARED_POLICY: module}))
        .env_runners(num_env_runners=cfg.env_runners,
                     num_envs_per_env_runner=cfg.envs_per_runner)
        .learners(num_learners=0)
        .training(lr=cfg.lr, train_batch_size_per_learner=cfg.train_batch_size,
                  minibatch_size=cfg.minibatch_size, num_epochs=cfg.epochs, gamma=cfg.gamma,
                  lambda_=cfg.gae_lambda, entropy_coeff=cfg.entropy_coeff)
        .debugging(seed=cfg.seed)
    )


def _get(result: dict, *keys, default=math.nan):
    for key in keys:
        if not isinstance(result, dict) or key not in result:
            return default
        result = result[key]
    return result


#: progress.csv columns: name -> path in RLlib's result dict
METRICS = {
    "env_steps": ("num_env_steps_sampled_lifetime",),
    "episodes": ("env_runners", "num_episodes_lifetime"),
    "episode_len_mean": ("env_runners", "episode_len_mean"),
    "policy_return_mean": ("env_runners", "module_episode_returns_mean", SHARED_POLICY),
    "policy_loss": ("learners", SHARED_POLICY, "policy_loss"),
    "vf_loss": ("learners", SHARED_POLICY, "vf_loss"),
    "entropy": ("learners", SHARED_POLICY, "entropy"),
    "mean_kl": ("learners", SHARED_POLICY, "mean_kl_loss"),
}


def _metrics(result: dict) -> dict[str, float]:
    row = {}
    for name, path in METRICS.items():
        value = _get(result, *path)
        if name == "env_steps" and isinstance(value, float) and math.isnan(value):
            value = _get(result, "env_runners", "num_env_steps_sampled_lifetime")
        row[name] = float(value) if isinstance(value, (int, float)) else math.nan
    return row


#: the progress.csv columns that are losses of the iteration's update: one that is not finite
#: ends the run as diverged (:func:`check_finite`)
LOSSES = ("policy_loss", "vf_loss", "entropy", "mean_kl")
#: the file each checkpoint folder holds beside RLlib's: ``{"wall_s": ..., "iterations":
#: ...}``, the run's wall seconds (:class:`~dominoes_env.cli_support.RunClock`) and its
#: completed iterations when it was saved, from which a ``--resume`` goes on counting
#: (:func:`recorded_run`)
RUN_FILE = "train_rllib_run.json"
#: the most iterations a run's file may say it holds (more is damage)
MAX_ITERATIONS = 2**53


class Diverged(Exception):
    """The training diverged: an iteration made losses or weights that are not finite (NaN or
    infinite) or weights a policy file cannot hold (above
    :data:`~dominoes_env.policy_format.MAX_WEIGHT`), or an evaluation's export refused the
    weights. Its message is the run's one line, which says what was kept
    (:func:`end_diverged`); ``main`` ends with status 1."""


def check_finite(result: dict, module, it: int) -> None:
    """:class:`Diverged` (without the words on what was kept: :func:`end_diverged` adds them)
    unless iteration ``it``'s losses (:data:`LOSSES` in RLlib's ``result``; one the result
    lacks is not checked) are finite and the weights of the shared policy's ``module``, every
    one of them, pass the policy file's own rule
    (:func:`~dominoes_env.policy_format.weights_problem`: finite, and none above
    :data:`~dominoes_env.policy_format.MAX_WEIGHT`), so that no iteration counts (logged,
    kept, saved) whose policy the export would refuse."""
    import torch

    losses = {name: value for name in LOSSES
              if isinstance(value := _get(result, *METRICS[name], default=None), numbers.Real)}
    with torch.no_grad():  # each one's largest magnitude: NaN or infinite where one is
        largest = {name: float(p.detach().abs().max()) for name, p in module.named_parameters()
                   if p.numel()}
    steps = _metrics(result)["env_steps"]
    which = (f"the iteration reaching {int(steps):,} env steps" if math.isfinite(steps)
             else f"iteration {it}")
    line = divergence_line(which, largest, losses, "--lr")
    if line is not None:
        raise Diverged(line)


def end_diverged(problem: str, algo, kept: dict[str, Any] | None, finished: int, cfg: RllibConfig,
                 out: Path, clock: RunClock, before: int) -> Diverged:
    """The :class:`Diverged` that ends a run whose state diverged (``problem`` says how),
    after keeping the last sound state: ``kept``, the state after iteration ``finished`` of
    this command (checked by :func:`check_finite`), is saved in ``out/checkpoint`` when
    ``finished`` > 0, as the run's iteration ``before + finished`` (``before``: the iterations
    of the run before this command); else the checkpoint there, the one ``--resume`` read or
    none, stays as it was. The diverged state is never saved and no policy is exported."""
    checkpoint = out / "checkpoint"
    if finished and kept is not None:
        algo.set_state(kept)
        save_checkpoint(algo, checkpoint, clock.seconds(), before + finished)
        where = (f"the run as its last sound iteration ({before + finished}) left it is saved "
                 f"in {checkpoint}")
    elif cfg.resume:
        where = f"the last checkpoint {cfg.resume!r} is kept as it was"
    else:
        where = "no checkpoint of the run was saved"
    return Diverged(f"{problem}; {where}")


def export_evaluated(module, cfg: RllibConfig, out: Path, steps: float) -> Path:
    """The shared policy ``module`` as it is now, exported to ``out/eval_policy.npz`` for
    :func:`evaluate` (``steps``: the env steps sampled so far); returns its path. Weights a
    policy file cannot hold are not exported: :class:`PolicyFileError` (:func:`train` exports
    an iteration it evaluates before the iteration counts, so a state the export refuses is
    never logged or kept)."""
    from agents.rllib import export_module

    path = out / "eval_policy.npz"
    export_module(module, path, {"rules": cfg.rules().to_dict(), "source": "rllib",
                                 "algorithm": "PPO", "env_steps": _whole(steps)})
    return path


def _whole(steps: float) -> float:
    """``steps`` as an ``int`` where it is finite (NaN when RLlib did not report them)."""
    return int(steps) if math.isfinite(steps) else steps


def evaluate(policy: Path, cfg: RllibConfig, out: Path, steps: float, seconds: float,
             writer) -> dict[str, float]:
    """The shared policy exported to ``policy`` (:func:`export_evaluated`) evaluated as
    ``train_jax`` and ``train_ppo`` evaluate theirs: ``--eval-matches`` matches against greedy
    and against random each, on the deals of the run's seed
    (:func:`agents.evaluation.evaluation_row`). Its row, ``steps`` (env steps sampled so far,
    every seat's moves: all are the shared policy's) and ``wall_s`` (``seconds``, the run's
    wall seconds: :class:`~dominoes_env.cli_support.RunClock`) first, is appended to
    ``out/eval.csv`` and logged (:func:`log_evaluation`); returns it."""
    from agents.evaluation import EVAL_OPPONENTS, evaluation_row

    steps = _whole(steps)
    row = {"steps": steps, "wall_s": round(seconds, 1),
           **evaluation_row(f"ppo:{policy}", cfg.rules(), matches=cfg.eval_matches,
                            seed=cfg.seed, opponents=EVAL_OPPONENTS)}
    log_evaluation(out, row, writer)
    return row


def log_evaluation(out: Path, row: dict[str, Any], writer) -> None:
    """An evaluation's ``row`` appended to ``out/eval.csv``
    (:func:`~dominoes_env.cli_support.append_eval_row`), logged to TensorBoard (``eval/*`` at
    its ``steps``, when they are known) and as a line. Ctrl-C, SIGTERM and SIGHUP wait until
    all of it is written (:func:`signals_held`): a stop inside it left a row without its
    scalars, or TensorBoard's writer cut inside its own code (which the writer's close at the
    end of the run goes through again)."""
    steps = row["steps"]
    with signals_held():
        append_eval_row(out / "eval.csv", row)
        if isinstance(steps, int):
            for name, value in row.items():
                if name != "steps":
                    writer.add_scalar(f"eval/{name}", value, steps)
        print(f"[eval] steps {steps:,}: vs greedy {row['win_rate_vs_greedy']:.3f} "
              f"[{row['ci_low_vs_greedy']:.3f}, {row['ci_high_vs_greedy']:.3f}], vs random "
              f"{row['win_rate_vs_random']:.3f}", flush=True)


def log_iteration(rows: csv.DictWriter, fh, writer, it: int, last: int, seconds: float,
                  row: dict[str, float]) -> None:
    """Iteration ``it``'s ``row`` (:data:`METRICS`) as a row of ``progress.csv`` (``rows``
    writing to ``fh``, flushed), TensorBoard scalars (``rllib/*``, NaN ones left out) and a
    line; ``it`` counts the run's iterations, a resumed run's before included, and ``last`` is
    the one this command ends at; ``seconds``: the run's wall seconds
    (:class:`~dominoes_env.cli_support.RunClock`). The caller holds the stop signals around it
    (:func:`train`)."""
    rows.writerow({"iteration": it, "seconds": round(seconds, 2), **row})
    fh.flush()
    for name, value in row.items():
        if not math.isnan(value):
            writer.add_scalar(f"rllib/{name}", value, it)
    print(f"[{it}/{last}] {seconds:6.1f} s  env steps {row['env_steps']:,.0f}  episode "
          f"length {row['episode_len_mean']:.1f}  entropy {row['entropy']:.3f}  policy loss "
          f"{row['policy_loss']:.4f}", flush=True)


def save_checkpoint(algo, path: Path, wall_s: float, iterations: int) -> None:
    """``algo``'s checkpoint in the folder ``path``, whole or not at all: written beside it,
    then put in its place, with the run's wall seconds ``wall_s`` and its completed
    ``iterations`` (:data:`RUN_FILE`, which :func:`recorded_run` reads back) and the digests
    of its files inside (:func:`write_manifest`: a resume checks them before RLlib unpickles
    anything). Ctrl-C, SIGTERM and SIGHUP wait until it is done
    (:func:`signals_held`): torch's writer, interrupted, raises its own error in place of the
    interruption, and a stop between the two renames would leave no checkpoint at all."""
    import shutil

    new, old = path.with_name(f".{path.name}-new"), path.with_name(f".{path.name}-old")
    with signals_held():
        for leftover in (new, old):
            shutil.rmtree(leftover, ignore_errors=True)
        algo.save_to_path(os.path.abspath(new))
        write_json(new / RUN_FILE, {"wall_s": round(wall_s, 1), "iterations": iterations})
        write_manifest(new)
        if path.exists():
            path.rename(old)
        new.rename(path)
        shutil.rmtree(old, ignore_errors=True)


def restore(algo, checkpoint: str) -> tuple[float, int]:
    """Restore ``algo`` from a private copy of the checkpoint folder ``checkpoint`` whose bytes
    were checked against its digests while copied (:func:`check_own_checkpoint`): a file
    replaced after :func:`check_run` looked at the folder is never unpickled. Returns the run's
    wall seconds and completed iterations that the checkpoint recorded
    (:func:`recorded_run`); for a checkpoint saved before train_rllib recorded its iterations,
    RLlib's own count of the restored algorithm (:func:`rllib_iterations`)."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="train_rllib-resume-") as copy:
        try:
            check_own_checkpoint(checkpoint, copy)
        except ValueError as err:
            raise CommandError(str(err)) from None
        wall_s, iterations = recorded_run(Path(copy))
        algo.restore_from_path(copy)
    return wall_s, rllib_iterations(algo) if iterations is None else iterations


def recorded_run(folder: Path) -> tuple[float, int | None]:
    """The run's wall seconds and completed iterations that the checkpoint folder ``folder``
    recorded when it was saved (:data:`RUN_FILE`): 0 seconds for a checkpoint saved before
    train_rllib recorded them, and ``None`` iterations for one saved before it recorded those.
    ``ValueError`` for a file that holds no such numbers (seconds: a number in 0..
    :data:`~dominoes_env.policy_format.MAX_WALL_S`; iterations: a whole number in
    0..:data:`MAX_ITERATIONS`)."""
    path = folder / RUN_FILE
    if not path.is_file():
        return 0.0, None
    record = parse_json(path.read_text())
    wall_s = _get(record, "wall_s", default=None)
    if (not isinstance(wall_s, (int, float)) or isinstance(wall_s, bool)
            or not 0 <= wall_s <= MAX_WALL_S):  # NaN fails the comparison
        raise ValueError(f"{RUN_FILE} holds no wall seconds (a number in 0..{MAX_WALL_S:g})")
    iterations = _get(record, "iterations", default=None)
    if iterations is not None and (type(iterations) is not int
                                   or not 0 <= iterations <= MAX_ITERATIONS):
        raise ValueError(f"{RUN_FILE} holds no count of iterations (a whole number in "
                         f"0..{MAX_ITERATIONS:,})")
    return float(wall_s), iterations


def rllib_iterations(algo) -> int:
    """RLlib's own count of ``algo``'s completed training iterations (``Algorithm.iteration``,
    which its checkpoints restore), or 0 for an algorithm without one."""
    count = getattr(algo, "iteration", None)
    return count if type(count) is int and 0 <= count <= MAX_ITERATIONS else 0


def completed_state(algo) -> dict[str, Any]:
    """A copy of ``algo``'s whole state (learner: weights and optimizer; env runners'
    connectors; metrics; iteration count), which later training does not change (RLlib's
    state holds numpy views of the live tensors)."""
    import copy

    return copy.deepcopy(algo.get_state())


def export_policy(module, out: Path, meta: dict[str, Any],
                  stop: KeyboardInterrupt | None) -> Path:
    """The shared policy ``module`` exported to ``out/policy.npz`` with its card
    ``policy.json`` (``meta``); returns its path. Ctrl-C, SIGTERM and SIGHUP wait until both
    are written (:func:`signals_held`). Weights that are not finite are not written:
    :class:`PolicyFileError`, or after a stop (``stop``)
    :class:`~dominoes_env.cli_support.TrainingStopped` naming why."""
    from agents.rllib import export_module

    policy = out / "policy.npz"
    with signals_held():
        try:
            export_module(module, policy, meta)
        except PolicyFileError as err:  # diverged: a stopped run still ends as stopped
            if stop is None:
                raise
            raise TrainingStopped(out, stop, export_error=str(err)) from None
        write_json(out / "policy.json", meta)
    return policy


def resume_algo(algo, checkpoint: str) -> tuple[float, int]:
    """``algo`` restored from ``--resume``'s ``checkpoint`` (:func:`restore`); returns the
    run's wall seconds and completed iterations it recorded. A checkpoint that cannot be
    restored is a :class:`CommandError` naming it."""
    try:
        return restore(algo, checkpoint)
    except CommandError:
        raise
    except Exception as err:  # a damaged checkpoint: UnpicklingError, EOFError, KeyError...
        lines = str(err).strip().splitlines()
        raise CommandError(f"--resume {checkpoint!r} cannot be restored "
                           f"({type(err).__name__}: {lines[-1] if lines else ''})") from None


def train(cfg: RllibConfig) -> Path:
    """Run the training; returns the exported policy's path. With ``--eval-matches``, the
    shared policy is evaluated (:func:`evaluate`: a row of ``eval.csv``) before the first
    iteration of a new run, after every ``--eval-every`` iterations of this run and at its end.

    The iterations are numbered on from the run's before this command (those its ``--resume``
    checkpoint recorded: :func:`restore`), in ``progress.csv``, the TensorBoard ``rllib/*``
    steps, the lines and the count the checkpoint and ``policy.json`` hold; ``--iterations``
    is how many this command runs. The run's wall seconds are its
    :class:`~dominoes_env.cli_support.RunClock`'s, started once the algorithm is built and
    restored, just before the first evaluation or iteration.

    Each iteration is checked before it counts (:func:`check_finite`: its losses finite, its
    weights what a policy file holds; and one to be evaluated is exported first,
    :func:`export_evaluated`): one that is not, or whose export is refused, ends the run with
    :class:`Diverged` (:func:`end_diverged`: the last sound iteration saved, nothing exported;
    its row never logged, so the rows of ``progress.csv`` end where the checkpoint's count
    does and a ``--resume`` numbers on without a duplicate). What an iteration leaves (the
    state kept, its ``progress.csv`` row, TensorBoard scalars and line) is written with the
    stop signals held, so a stop lands before or after all of it.

    A Ctrl-C, SIGTERM or SIGHUP during an iteration (or an evaluation) abandons it: the
    algorithm goes back to its state after the last completed iteration (the state kept after
    each, :func:`completed_state`), which is saved and exported as at the end (not evaluated:
    the stop ends the command without waiting for matches), then
    :class:`~dominoes_env.cli_support.TrainingStopped` is raised.

    The iteration under way is not finished instead: it takes as long as ``--train-batch-size``
    and ``--epochs`` make it (minutes, with no bound), and stopping inside it could save a
    partly applied update (some minibatches' gradient steps, the optimizer's moments ahead of
    the weights, the env runners' weights behind the learner's)."""
    from tensorboardX import SummaryWriter

    init_ray(address=cfg.address, num_cpus=cfg.num_cpus, configure_logging=False,
             log_to_driver=False)  # before anything is written: a cluster may not be there
    out = Path(start_run_folder(run_folder(cfg)))
    note = keep_numeric_rows(out / "eval.csv")  # a resumed log: its rows after no garbage
    if note:
        print(note, file=sys.stderr)
    algo = algorithm_config(cfg).build_algo()
    clock = RunClock()
    before = 0  # the run's iterations before this command (those of its --resume checkpoint)
    kept = None  # the state after the last completed iteration (or the resumed checkpoint's)
    if cfg.resume:
        recorded, before = resume_algo(algo, cfg.resume)
        clock = RunClock(recorded)
        kept = completed_state(algo)
    writer = SummaryWriter(str(out / "tb"))
    progress = out / "progress.csv"
    fresh = not progress.exists() or not cfg.resume
    stop, done, row = None, 0, {"env_steps": math.nan}  # done: this command's iterations
    last = before + cfg.iterations  # the run's iteration this command ends at

    try:
        try:
            with open(progress, "w" if fresh else "a", newline="") as fh:
                rows = csv.DictWriter(fh, fieldnames=["iteration", "seconds", *METRICS])
                if fresh:
                    rows.writeheader()
                clock.start()  # set up and restored: the run's seconds of training go on
                if cfg.eval_matches and cfg.eval_every and not cfg.resume:
                    # the learning curve starts at the initial policy
                    evaluate(export_evaluated(algo.get_module(SHARED_POLICY), cfg, out, 0), cfg,
                             out, 0, clock.seconds(), writer)
                for it in range(before + 1, last + 1):
                    result = algo.train()
                    check_finite(result, algo.get_module(SHARED_POLICY), it)
                    metrics = _metrics(result)
                    # every --eval-every iterations, and the trained policy at the end
                    evaluated = cfg.eval_matches > 0 and (
                        it == last or cfg.eval_every > 0 and (it - before) % cfg.eval_every == 0)
                    if evaluated:  # exported before it counts: a refused state never does
                        policy = export_evaluated(algo.get_module(SHARED_POLICY), cfg, out,
                                                  metrics["env_steps"])
                    with signals_held():  # a stop lands before or after all of it
                        kept = completed_state(algo)
                        done, row = it - before, metrics
                        log_iteration(rows, fh, writer, it, last, clock.seconds(), row)
                    if evaluated:
                        evaluate(policy, cfg, out, row["env_steps"], clock.seconds(), writer)
        except KeyboardInterrupt as err:  # Ctrl-C, SIGTERM, SIGHUP: save and export below
            stop = err
            if kept is None:
                raise TrainingStopped(out, stop, nothing_saved=True) from None
            algo.set_state(kept)  # the iteration under way is abandoned (see the docstring)
        except Diverged as err:
            raise end_diverged(str(err), algo, kept, done, cfg, out, clock, before) from None
        except PolicyFileError as err:  # an evaluation's export refused the state of the
            # iteration after `done` (or the first evaluation's): like a diverged one, it
            # never counted (not logged, not kept); the iteration's before it is saved
            raise end_diverged(f"{err}; it was not written", algo, kept, done, cfg, out, clock,
                               before) from None
        wall_s = clock.seconds()
        save_checkpoint(algo, out / "checkpoint", wall_s, before + done)
        meta = {"rules": cfg.rules().to_dict(), "source": "rllib", "algorithm": "PPO",
                "config": dataclasses.asdict(cfg), "iterations": before + done,
                "env_steps": row["env_steps"], "wall_s": round(wall_s, 1)}
        if stop is not None:
            meta["stopped"] = stop_status(stop)[1]
        policy = export_policy(algo.get_module(SHARED_POLICY), out, meta, stop)
    finally:
        writer.close()
        algo.stop()
    if stop is not None:
        raise TrainingStopped(out, stop)
    print(f"exported the shared policy to {shown_path(policy)} (play it with the agent spec "
          f"ppo:{shown_path(policy)})")
    return policy


def main(argv: list[str] | None = None) -> int:
    cfg = parse_config(argv)
    return run_command(lambda: _main(cfg))


def _main(cfg: RllibConfig) -> int:
    try:
        check_run(cfg)
    except ValueError as err:
        raise CommandError(str(err)) from None
    try:
        import ray.rllib  # noqa: F401
    except ImportError as err:
        raise CommandError(f"RLlib is not installed ({err}); install the rllib extra: "
                           "pip install -e '.[rllib]'") from None
    try:
        train(cfg)
    except RayStartError as err:
        raise CommandError(str(err)) from None
    except Diverged as err:  # a failed run, not bad input: its line says what was kept
        print_error(str(err))
        return 1
    except PolicyFileError as err:  # the final export's weights (each iteration is checked)
        print_error(f"{err}; it was not written; the run is saved in "
                    f"{Path(cfg.out) / 'checkpoint'}")
        return 1
    except ValueError as err:  # what a reader or an evaluation refuses: one line, never a trace
        raise CommandError(str(err)) from None
    except TrainingStopped as stopped:  # saved and exported (or nothing yet): 130, 143, 129
        out, refused = stopped.out, stopped.export_error
        if stopped.nothing_saved:
            kept = "no iteration had finished: nothing was saved"
        else:
            policy = (f"its policy not exported ({refused})" if refused else
                      f"its policy exported to {out / 'policy.npz'}")
            kept = (f"the run is saved in {out / 'checkpoint'} (continue with --resume "
                    f"{out / 'checkpoint'}) and {policy}")
        return end_stopped_training(stopped, kept)
    return 0


if __name__ == "__main__":
    end_program(main())
