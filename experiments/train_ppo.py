"""Train a MaskablePPO agent with an opponent mix and a self-play pool; export it for ``ppo``.

Reads top to bottom: the configuration (one dataclass, every field a command-line flag), the
environments (:class:`agents.pool_env.PoolEnv`: a ``SingleAgentEnv`` whose opponents are
drawn per episode from fixed agents and frozen snapshots of the learner), the callbacks
(:mod:`agents.sb3_callbacks`: snapshots, evaluation, checkpoints), the run: the model built
(or loaded from ``--resume``: :mod:`agents.sb3_run` checks it) and warm-started
(:mod:`agents.sb3_pretrain`), the learning loop, the export.

    python -m experiments.train_ppo --total-steps 2000000 --n-envs 8 --seed 1 --out runs/ppo2p

Every run is seeded and writes into ``--out``: TensorBoard logs (``tb/``: SB3 losses plus
``eval/win_rate_vs_greedy``, ``eval/margin_vs_greedy`` and the same against random),
``eval.csv`` (the learning curve), checkpoints (``checkpoints/``: the newest
``--keep-checkpoints`` and ``last.zip``; resume with ``--resume``),
the self-play pool (``pool/*.npz``) and, at the end (or when Ctrl-C, SIGTERM or SIGHUP
stops it), ``policy.npz`` + ``policy.json``: the numpy export that ``ppo:PATH`` loads
(``--ship`` then copies it to the table's shipped policy, ``agents/policies/ppo_{table}.npz``
of :data:`agents.ppo.POLICY_FILES`, only if it beats the shipped one against greedy over the
same :data:`~agents.shipping.SHIP_MATCHES` matches: :func:`agents.shipping.ship_if_stronger`).

The wall seconds it records (``wall_s`` in ``eval.csv`` and ``policy.json``) are the run's
seconds of training, a resumed run's before included, counted by
:class:`~dominoes_env.cli_support.RunClock` (from when the environments are made and the model
built or loaded, just before the behaviour cloning, the first evaluation or the first
rollout): each checkpoint records them (the ``wall_s`` entry of its data:
:data:`agents.sb3_checkpoint.WALL_ENTRY`) and ``--resume`` counts on from there (from 0 for a
checkpoint saved before they were recorded). A ``--resume`` whose checkpoint is at
``--total-steps`` or past it trains nothing and writes nothing of the run again but its
policy, exported as the checkpoint holds it (its wall seconds unchanged; no ``eval.csv`` row,
no checkpoint saved), as train_jax's does; its last line says so.

Each update is checked before anything counts it (the kept copy, a snapshot, an evaluation,
a checkpoint, the export): the weights of its policy and value networks must pass the policy
file's own rule (:func:`~dominoes_env.policy_format.weights_problem`: finite, and none above
:data:`dominoes_env.policy_format.MAX_WEIGHT`: :mod:`agents.sb3_divergence`), as train_jax and
train_rllib check theirs; so are the behaviour cloning's and a ``--resume`` checkpoint's. They
are checked as an update (or the behaviour cloning) ends, and also when an error stops it in
its middle (torch refuses the NaN a minibatch's step made as the next one starts): with
weights the rule refuses, that error is the divergence; with sound ones it is the error it
was.

Exit status: 0, trained and exported (and, with ``--ship``, shipped or kept out, as a line
says); 1, the training diverged: an update (or the behaviour cloning) made weights that are
not finite (NaN or infinite) or that a policy file cannot hold; one line says which and at
what step, nothing of it is saved or exported, and ``checkpoints/last.zip`` holds the run as it
was before that update (after the behaviour cloning, nothing is saved: no checkpoint, and no
``bc.json``, which is written only for a cloning that passed); 2, a refused flag or
input, a damaged ``--resume`` checkpoint among them (its weights too: one ``error:`` line);
130, 143 or 129, stopped by Ctrl-C, SIGTERM or SIGHUP (saved and exported as its last
completed update left it; later signals are ignored while it saves and exports).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents.evaluation import evaluate as evaluate_agent
from agents.pool_env import opponent_mix, pool_vec_env
from agents.sb3_callbacks import (
    Checkpoints,
    DeliverStops,
    LastCompletedUpdate,
    SelfPlayAndEval,
    Throughput,
    sb3_callback,
)
from agents.sb3_checkpoint import custom_objects, recorded_wall, save_model
from agents.sb3_divergence import Diverged, divergence
from agents.sb3_pretrain import (
    bc_dataset_demonstrations,
    check_bc_dataset,
    clone_dataset,
    clone_teacher,
)
from agents.sb3_run import (
    RunDirError,
    check_checkpoint,
    check_device,
    check_memory,
    check_pool,
    checkpoint_data,
    checkpoints_of,
    rewind_note,
    settings_note,
)
from agents.shipping import SHIP_MATCHES, ship_run, shipping_target
from agents.specs import check_spec_path
from dominoes_env.cli_support import (
    MAX_MATCHES,
    MAX_TRAINER_SEED,
    CommandError,
    RefusedError,
    RunClock,
    TrainingStopped,
    check_config,
    check_run_folder,
    config_field,
    config_parser,
    end_program,
    end_stopped_training,
    keep_numeric_rows,
    nothing_to_train,
    paths_in_specs,
    print_error,
    program_name,
    quiet_teardown,
    run_command,
    run_of_checkpoint,
    shown_path,
    signals_held,
    start_run_folder,
    stop_status,
)
from dominoes_env.core import DominoesDeprecationWarning, RuleConfig
from dominoes_env.core.atomic_files import write_json
from dominoes_env.obs import DEFAULT_VERSION as OBS_VERSION
from dominoes_env.optional import require
from dominoes_env.policy_format import PolicyFileError, hidden_sizes

# -- configuration -------------------------------------------------------------------------
DEVICE_PATTERN = re.compile(r"^(cpu|auto|mps|cuda(:\d+)?)$")


@dataclass
class TrainConfig:
    """Everything a training run depends on (each field is a ``--flag``; its help text and the
    values it allows are in the field's :func:`~dominoes_env.cli_support.config_field`)."""

    players: int = config_field(2, "seats at the table: 2, 3 or 4", choices=(2, 3, 4))
    partnerships: bool | None = config_field(None, "4 players in two partnerships (default: on "
                                                   "with 4)")
    target_score: int = config_field(250, "match target; evaluation plays whole matches to it",
                                     low=1)
    episode: str = config_field("hand", "what one episode is: hand (one deal) or match",
                                choices=("hand", "match"))
    total_steps: int = config_field(1_000_000, "learner decisions to train for, rounded up to "
                                               "whole updates of n_steps * n_envs (a resumed run "
                                               "counts on from its checkpoint)", low=1)
    n_envs: int = config_field(8, "parallel environments", low=1)
    vec_env: str = config_field("subproc", "subproc (one process per env when n-envs > 1) or "
                                           "dummy (all in this process)",
                                choices=("subproc", "dummy"))
    net: str = config_field("256,256", "hidden layer sizes of the policy and value networks, "
                                       "comma-separated")
    activation: str = config_field("tanh", "activation of the hidden layers",
                                   choices=("tanh", "relu"))
    learning_rate: float = config_field(3e-4, "Adam learning rate", low=0, high=1, low_open=True)
    n_steps: int = config_field(256, "rollout length per environment between updates", low=1)
    batch_size: int = config_field(512, "minibatch size of an update, at most n_steps * n_envs "
                                        "(2 or more rows in every minibatch: the advantages are "
                                        "normalised by their spread in it)", low=2)
    n_epochs: int = config_field(5, "passes over each rollout per update", low=1)
    gamma: float = config_field(1.0, "discount factor; 1: points count the same whenever they "
                                     "come within an episode", low=0, high=1, low_open=True)
    gae_lambda: float = config_field(0.95, "GAE lambda", low=0, high=1)
    ent_coef: float = config_field(0.01, "entropy bonus coefficient", low=0, high=1)
    clip_range: float = config_field(0.2, "PPO clip range", low=0, high=1, low_open=True)
    opponents: list[str] = config_field(
        lambda: ["greedy=0.5", "random=0.05", "search:sims=16=0.03", "self=0.42"],
        "opponent mix as SPEC=WEIGHT pairs; self is the share of the self-play pool")
    bc_teacher: str = config_field("", "agent spec to behaviour-clone before PPO (e.g. "
                                       "search:sims=100); empty: none")
    bc_matches: int = config_field(300, "matches of demonstrations (the teacher against "
                                        "bc-opponents)", low=1)
    bc_opponents: list[str] = config_field(
        lambda: ["greedy", "greedy", "teacher"],
        "the teacher's opponents while collecting demonstrations (teacher: the teacher itself)")
    bc_epochs: int = config_field(15, "epochs of behaviour cloning", low=1)
    bc_dataset: str = config_field("", "clone the decisions of a dataset DIR (python -m "
                                       "experiments.make_dataset) instead of playing bc-teacher",
                                   path=True)
    bc_agent: str = config_field("", "the agent of bc-dataset whose decisions are cloned (empty: "
                                     "every agent's)")
    workers: int = config_field(2, "processes collecting demonstrations", low=1)
    snapshot_every: int = config_field(100_000, "steps between self-play snapshots", low=1)
    max_snapshots: int = config_field(10, "snapshots the self-play pool keeps (the newest)", low=1)
    eval_every: int = config_field(100_000, "steps between evaluations against greedy and random",
                                   low=1)
    eval_matches: int = config_field(100, "matches per opponent per evaluation (each deal once "
                                          "per side)", low=1, high=MAX_MATCHES)
    checkpoint_every: int = config_field(250_000, "steps between checkpoints (checkpoints/*.zip)",
                                         low=1)
    keep_checkpoints: int = config_field(3, "periodic checkpoints kept (the newest; older "
                                            "ppo_<steps>_steps.zip are removed)", low=1)
    seed: int = config_field(0, "seed of everything: environments, opponents, network, "
                                "evaluation", low=0,
                                high=MAX_TRAINER_SEED)
    out: str | None = config_field(None, "run directory (logs, checkpoints, pool, the exported "
                                         "policy; default: runs/ppo, with --resume the "
                                         "checkpoint's own run folder)", path=True)
    resume: str | None = config_field(None, "a checkpoint .zip of this run to continue from (its "
                                            "architecture must match --net and --activation; it "
                                            "trains on with this command's other settings, "
                                            "where a line names those it was trained with)",
                                 path=True)
    ship: bool = config_field(False, "copy the exported policy to the table's file in "
                                     "agents/policies/ (ppo_3p.npz, ppo_4p_partnerships.npz, "
                                     "...) if it beats the shipped one against greedy over the "
                                     f"same {SHIP_MATCHES} matches (the table's default rules "
                                     "only)")
    device: str = config_field("cpu", "torch device: cpu, cuda, cuda:N, mps or auto")
    overwrite: bool = config_field(False, "replace the run that --out holds (its files are "
                                          "removed)")
    print_settings: bool = config_field(False, "check the flags as a run does, print the "
                                               "settings a run's marker holds (which a --resume "
                                               "must repeat) as one JSON line and exit: nothing "
                                               "is written, --out is not checked")

    def __post_init__(self) -> None:
        self.rules()  # validate the rule options early
        check_config(self)  # every field's choices and range (config_field)
        # '' is refused, not read as the folder '.'
        if self.resume is not None and not self.resume.strip():
            raise ValueError("--resume is empty; name a checkpoint .zip (or leave --resume out)")
        if self.out is None:  # --resume continues its run where it is, as best_response does
            self.out = run_of_checkpoint(self.resume) if self.resume else "runs/ppo"
        if not isinstance(self.device, str) or not DEVICE_PATTERN.match(self.device):
            raise ValueError(f"device={self.device!r}; allowed: cpu, cuda, cuda:N, mps, auto")
        self.hidden()
        self.opponent_mix()
        # --ship under rules other than the table's default rules is refused here, before any
        # training: the shipped policy is the one of the default rules (agents.shipping)
        if self.ship:
            try:
                shipping_target(self.rules())
            except ValueError as err:
                raise ValueError(f"--ship: {err}") from None
        rollout = self.n_steps * self.n_envs
        if self.batch_size > rollout or rollout % self.batch_size == 1:
            # a one-row minibatch has no spread: its advantages are NaN; a minibatch larger
            # than the rollout would be the whole rollout, whatever was asked
            raise ValueError(f"batch_size={self.batch_size} must be at most the rollout "
                             f"(n_steps * n_envs = {rollout}) and leave no minibatch of one "
                             "row")
        if self.bc_dataset and self.bc_teacher:
            raise ValueError("give bc_teacher (play demonstrations) or bc_dataset (read them), "
                             "not both")
        if self.bc_agent and not self.bc_dataset:
            raise ValueError("bc_agent picks an agent of bc_dataset; give bc_dataset too")
        if self.bc_dataset:  # refuse a wrong dataset now, before the run directory is made
            check_bc_dataset(self.bc_dataset, self.bc_agent, self.rules())
        if not self.out.strip():
            raise ValueError("out is empty; name the run directory")
        from agents import check_spec

        # bc_opponents are checked even without bc_teacher: a typo is refused, not ignored
        for spec in [self.bc_teacher, *self.bc_opponents] if self.bc_teacher else self.bc_opponents:
            if spec != "teacher":
                check_spec(spec, self.rules())
        # the opponents built and checked against the table too (ppo:PATH of a missing or
        # foreign policy included): checked before config.json, pool/ or run.json is written
        for spec, _ in self.opponent_mix()[0]:
            check_spec(spec, self.rules())

    def rules(self) -> RuleConfig:
        return RuleConfig(num_players=self.players, partnerships=self.partnerships,
                          target_score=self.target_score)

    def hidden(self) -> list[int]:
        return hidden_sizes(self.net)

    def opponent_mix(self) -> tuple[list[tuple[str, float]], float]:
        """``([(spec, weight), ...], self_weight)`` from ``opponents``
        (:func:`agents.pool_env.opponent_mix`)."""
        return opponent_mix(self.opponents)


def parser_for(cls: type) -> argparse.ArgumentParser:
    """The command's parser: one ``--flag`` per field of ``cls`` (:func:`config_parser`)."""
    return config_parser(cls, program_name("experiments.train_ppo", "dominoes-train"),
                         __doc__.split("\n")[0])


def check_machine(config: TrainConfig) -> None:
    """``ValueError`` unless the run fits in this machine's memory
    (:func:`~agents.sb3_run.check_memory`) and torch can use its ``--device``
    (:func:`~agents.sb3_run.check_device`), checked before anything is written or started."""
    check_memory(config.rules(), config.hidden(), n_envs=config.n_envs, vec_env=config.vec_env,
                 workers=config.workers, n_steps=config.n_steps, batch_size=config.batch_size)
    check_device(config.device)


# -- environments --------------------------------------------------------------------------
def make_vec_env(config: TrainConfig):
    """The run's ``n_envs`` environments (:func:`agents.pool_env.pool_vec_env`): each a
    :class:`~agents.pool_env.PoolEnv` of the opponent mix, its own process with ``subproc``."""
    fixed, self_weight = config.opponent_mix()
    return pool_vec_env(fixed, config.n_envs, subproc=config.vec_env == "subproc",
                        self_weight=self_weight, max_snapshots=config.max_snapshots,
                        seed=config.seed, rules=config.rules(), episode=config.episode)


# -- callbacks -----------------------------------------------------------------------------
def make_callbacks(config: TrainConfig, out: Path, vec_env, clock: RunClock, held):
    """The run's callbacks (:mod:`agents.sb3_callbacks`), in the order stable-baselines3 calls
    them, and the one of them that keeps the last completed update (restored after a stop)."""
    kept = sb3_callback(LastCompletedUpdate)
    return [sb3_callback(Throughput, config.n_steps * config.n_envs, out / "throughput.json"),
            kept,
            sb3_callback(SelfPlayAndEval, out, vec_env, clock, config.rules(),
                         snapshot_every=config.snapshot_every,
                         max_snapshots=config.max_snapshots, eval_every=config.eval_every,
                         eval_matches=config.eval_matches, seed=config.seed),
            sb3_callback(Checkpoints, out / "checkpoints", clock,
                         every=config.checkpoint_every, n_envs=config.n_envs,
                         keep=config.keep_checkpoints),
            sb3_callback(DeliverStops, held)], kept


# -- the run -------------------------------------------------------------------------------
def resumed_settings(config: TrainConfig) -> dict[str, Any]:
    """The training settings a resumed run goes on with: this command's flags, which win over
    the values its checkpoint holds (stable-baselines3 kept the checkpoint's, whatever the
    command line said; a run resumed in its own folder has the same, which the run folder
    checks). The number of environments is the command's too: the model is given its envs."""
    return {"learning_rate": config.learning_rate, "n_steps": config.n_steps,
            "batch_size": config.batch_size, "n_epochs": config.n_epochs,
            "gamma": config.gamma, "gae_lambda": config.gae_lambda,
            "ent_coef": config.ent_coef, "clip_range": config.clip_range, "seed": config.seed}


def steps_to_train(config: TrainConfig, done: int) -> int:
    """The steps from ``done`` to ``config.total_steps``, rounded up to whole updates: what
    stable-baselines3 trains when asked for them, so the progress bar and the last line count
    the steps actually trained.

    >>> steps_to_train(TrainConfig(total_steps=6400, n_steps=16, n_envs=1, batch_size=16), 6225)
    176
    >>> steps_to_train(TrainConfig(total_steps=40, n_steps=16, n_envs=1, batch_size=16), 48)
    0
    """
    rollout = config.n_steps * config.n_envs
    return -(-max(0, config.total_steps - done) // rollout) * rollout


#: what a run's folder holds (an --out holding only these, without a run marker, is a run's)
OUTPUTS = ("pool", "config.json", "tb", "eval.csv", "eval.csv.damaged*", "eval_policy.npz",
           "throughput.json", "checkpoints", "bc.json", "policy.npz", "policy.json")


def run_settings(config: TrainConfig) -> dict[str, Any]:
    """The settings a run's marker holds, which a ``--resume`` must repeat: all but the
    paths, ``--total-steps``, those a resume may change (it may keep more or fewer
    checkpoints) and ``--print-settings``."""
    return {k: v for k, v in dataclasses.asdict(config).items()
            if k not in ("out", "resume", "overwrite", "total_steps", "device", "ship",
                         "keep_checkpoints", "print_settings")}


def check_run_dir(config: TrainConfig, out: Path):
    """Refuse, before anything is written, what the output policy refuses
    (:func:`check_run_folder`: a file, a link, an input, a folder holding another run unless
    ``--resume`` of its own checkpoint with the same settings, but for ``--total-steps``, or
    ``--overwrite``) or no agent spec could name a policy in (:func:`check_spec_path`: its
    evaluation plays ``ppo:OUT/eval_policy.npz``), and a ``--resume`` checkpoint that is
    missing, damaged or made for another table or architecture. Returns the checked folder."""
    if config.resume is not None:
        check_checkpoint(Path(config.resume), config.rules(), config.net, config.activation)
    found = checkpoints_of(out) if os.path.isdir(out) else []
    try:
        check_spec_path("--out", config.out, folder=True)
        folder = check_run_folder(out, "experiments.train_ppo", run_settings(config),
                                  resume=config.resume, utf8_name=True,
                                  overwrite=config.overwrite, outputs=OUTPUTS,
                                  resume_hint=str(found[-1] if found
                                                  else out / "checkpoints" / "last.zip"),
                                  inputs=(config.resume, config.bc_dataset, *paths_in_specs(
                                      [*(o.rpartition("=")[0] for o in config.opponents),
                                       config.bc_teacher or "", *config.bc_opponents])))
    except RefusedError as err:
        raise RunDirError(str(err)) from None
    if config.resume is not None and folder.resumes:
        check_pool(out)
    return folder


def print_note(note: str | None) -> None:
    """``note`` (a line about the run's files or the resumed checkpoint) on stderr, if any."""
    if note:
        print(note, file=sys.stderr)


def start_run(config: TrainConfig, out: Path, folder, idle: bool = False) -> None:
    """The checked run folder made this run's (:func:`start_run_folder`), with its pool
    folder and ``config.json`` (not written again by an ``idle`` resume: one with nothing to
    train, :func:`idle_note`); a resumed ``eval.csv`` is kept to its rows of numbers."""
    start_run_folder(folder)
    print_note(keep_numeric_rows(out / "eval.csv"))  # a resumed log: its rows after no garbage
    (out / "pool").mkdir(parents=True, exist_ok=True)
    if not idle:
        write_json(out / "config.json", dataclasses.asdict(config))


def idle_note(config: TrainConfig) -> str | None:
    """The note of a ``--resume`` whose checkpoint is at ``--total-steps`` or past it
    (:func:`~dominoes_env.cli_support.nothing_to_train`; ``None`` for one below it, or a new
    run): such a run is idle, as train_jax's is. Nothing is trained and nothing of the run is
    written again but its policy (``policy.npz`` + ``policy.json``, as the checkpoint holds
    it, with the wall seconds it recorded): no ``eval.csv`` row, no checkpoint, no
    ``config.json``."""
    if config.resume is None:
        return None
    steps = checkpoint_data(Path(config.resume))["num_timesteps"]
    return nothing_to_train(config.resume, steps, config.total_steps)


def new_model(config: TrainConfig, out: Path, vec_env):
    """A fresh MaskablePPO of ``config``'s network and settings (:func:`train` then
    behaviour-clones ``bc_teacher`` or ``bc_dataset`` into it if one is given:
    :func:`warm_start`)."""
    import torch
    from sb3_contrib import MaskablePPO

    act = torch.nn.Tanh if config.activation == "tanh" else torch.nn.ReLU
    hidden = config.hidden()
    model = MaskablePPO(
        "MlpPolicy", vec_env, learning_rate=config.learning_rate, n_steps=config.n_steps,
        batch_size=config.batch_size, n_epochs=config.n_epochs, gamma=config.gamma,
        gae_lambda=config.gae_lambda, ent_coef=config.ent_coef, clip_range=config.clip_range,
        policy_kwargs={"net_arch": {"pi": hidden, "vf": hidden}, "activation_fn": act},
        tensorboard_log=str(out / "tb"), seed=config.seed, device=config.device, verbose=0)
    return model


def warm_start(model, config: TrainConfig, out: Path, demonstrations: dict | None) -> None:
    """Behaviour-clone ``bc_teacher``, or the decisions of ``bc_dataset`` (``demonstrations``,
    read before the run's folder was made), into the fresh ``model``
    (:mod:`agents.sb3_pretrain`); ``bc.json`` is written only for a cloning whose weights pass
    the policy file's rule (:class:`~agents.sb3_divergence.Diverged` otherwise)."""
    if config.bc_dataset:
        clone_dataset(model, out, demonstrations, config.bc_dataset, config.bc_agent,
                      epochs=config.bc_epochs, seed=config.seed)
    else:
        clone_teacher(model, out, config.bc_teacher, config.bc_opponents, config.rules(),
                      matches=config.bc_matches, epochs=config.bc_epochs, seed=config.seed,
                      workers=config.workers)


def resumed_model(config: TrainConfig, out: Path, vec_env):
    """The ``--resume`` checkpoint's MaskablePPO, going on with this command's settings
    (:func:`resumed_settings`), and the run's wall seconds it recorded (:func:`recorded_wall`);
    a line says where its settings, or its step count, call for one
    (:func:`~agents.sb3_run.settings_note`, :func:`~agents.sb3_run.rewind_note`)."""
    from sb3_contrib import MaskablePPO

    # nothing unpickled from the file (agents.sb3_checkpoint): its pickled entries rebuilt
    data = checkpoint_data(Path(config.resume))
    custom = custom_objects(data, vec_env, config.hidden(), config.activation)
    ours = resumed_settings(config)
    model = MaskablePPO.load(config.resume, env=vec_env, device=config.device,
                             tensorboard_log=str(out / "tb"), custom_objects=custom,
                             verbose=0, **ours)
    print_note(settings_note(config.resume, {**ours, "n_envs": config.n_envs}, data))
    print_note(rewind_note(config.resume, out, model.num_timesteps))
    return model, recorded_wall(data)


def learn(model, config: TrainConfig, out: Path, vec_env, clock: RunClock, held):
    """Train ``model`` up to ``config.total_steps`` (:func:`steps_to_train`) with the run's
    callbacks, delivering the stops that ``held`` holds (Ctrl-C, SIGTERM and SIGHUP:
    :func:`signals_held`) between two environment steps, then save ``checkpoints/last.zip``
    with the run's wall seconds (``clock``) and close the environments. Returns the
    ``KeyboardInterrupt`` (Ctrl-C, SIGTERM or SIGHUP) that stopped it, the model put back as
    its last completed update left it, or ``None``. An update that diverged
    (:class:`Diverged`, raised as it ends: :class:`LastCompletedUpdate`; or any error out of
    training that leaves weights the policy file's rule refuses, as torch's refusal of a NaN
    one of its minibatch steps made: :func:`divergence`) is never saved: ``last.zip`` holds
    the run as it was before it, and :class:`Diverged` goes on, saying so. An error with
    sound weights goes on as it was, the run saved; ``last.zip`` never holds weights the rule
    refuses. An idle run (``clock.idle``: a resume with nothing to train) only closes the
    environments: nothing is trained, evaluated or saved."""
    if clock.idle:
        vec_env.close()
        try:
            held.deliver()  # a stop while it was loaded: it ends stopped
        except KeyboardInterrupt as err:
            return err
        return None
    remaining = steps_to_train(config, model.num_timesteps)
    stop = None
    callbacks, last_update = make_callbacks(config, out, vec_env, clock, held)
    try:
        model.learn(remaining, callback=callbacks, progress_bar=True,
                    reset_num_timesteps=config.resume is None, tb_log_name="ppo")
        held.deliver()  # a stop during the last update: the run still ends stopped
    except KeyboardInterrupt as err:  # Ctrl-C, SIGTERM, SIGHUP: save and export
        stop = err
        last_update.restore()  # not a half-applied update
    except Exception as err:  # the last sound update is saved (below), and nothing exported
        # Diverged as an update ends; or, in its middle, torch refusing the NaN that one of
        # its minibatch steps made (the next step's distribution checks its logits)
        diverged = err if isinstance(err, Diverged) else divergence(model.policy,
                                                                    model.num_timesteps)
        if diverged is None:  # an error of another kind, the weights sound: as it was
            raise
        last_update.restore()
        raise Diverged(f"{diverged}; the run as it was before that update is saved in "
                       f"{out / 'checkpoints' / 'last.zip'}") from None
    finally:
        if divergence(model.policy, None) is not None:  # left mid-update some other way
            last_update.restore()
        if divergence(model.policy, None) is None:  # never weights a policy file refuses
            save_model(model, out / "checkpoints" / "last.zip", clock.seconds())
        vec_env.close()
    return stop


def export_run(model, config: TrainConfig, out: Path, wall: float, command: str | None,
               stop: KeyboardInterrupt | None) -> None:
    """``policy.npz`` + ``policy.json`` of the trained ``model`` (``"stopped"`` in it after
    ``stop``, and then :class:`TrainingStopped` is raised); a policy whose weights are not
    finite is not written (:class:`PolicyFileError`)."""
    from agents.ppo_export import export_policy

    meta = {"rules": config.rules().to_dict(), "obs_version": OBS_VERSION,
            "steps": model.num_timesteps, "wall_s": round(wall, 1), "seed": config.seed,
            "config": dataclasses.asdict(config), "command": command or ""}
    if stop is not None:
        meta["stopped"] = stop_status(stop)[1]
    try:
        export_policy(model, out / "policy.npz", meta)
    except PolicyFileError as err:  # diverged: a stopped run still ends as stopped
        if stop is None:
            raise
        raise TrainingStopped(out, stop, export_error=str(err)) from None
    write_json(out / "policy.json", meta)
    if stop is not None:  # saved and exported; the command still ends stopped (not shipped)
        raise TrainingStopped(out, stop)


def ship_policy(out: Path, config: TrainConfig) -> bool:
    """``--ship``: the run's exported policy copied to the table's shipped policy only if it
    beats the shipped one against greedy over the same
    :data:`~agents.shipping.SHIP_MATCHES` matches on the deals of the run's seed
    (:func:`agents.shipping.ship_if_stronger`, which prints both win rates); returns whether
    it shipped. A refusal is a :class:`~dominoes_env.cli_support.RefusedError` (an ``error:``
    line, status 2)."""
    return ship_run(out, config.rules(), matches=SHIP_MATCHES, seed=config.seed)


def trained_line(config: TrainConfig, steps: int, wall: float, out: Path,
                 idle: bool = False) -> str:
    """The run's last line: the steps it trained (past ``--total-steps``: why), its time and
    its policy; for an ``idle`` run (a resume with nothing to train), that it trained none."""
    if idle:
        return (f"nothing trained: the run stays at {steps:,} steps; policy: "
                f"{shown_path(out / 'policy.npz')}")
    past = (f" (--total-steps {config.total_steps:,} rounded up to whole updates of "
            f"{config.n_steps * config.n_envs:,})" if steps > config.total_steps else "")
    return (f"trained {steps:,} steps{past} in {wall:.0f} s; policy: "
            f"{shown_path(out / 'policy.npz')}")


def train(config: TrainConfig, command: str | None = None) -> Path:
    """Train, export ``policy.npz`` + ``policy.json`` into ``config.out``; returns its path.
    A Ctrl-C, SIGTERM or SIGHUP while it learns saves ``checkpoints/last.zip`` and exports the
    policy as at the end (``policy.json`` says ``"stopped"``), then :class:`TrainingStopped`
    is raised."""
    torch = require("torch", "train", "training")
    require("sb3_contrib", "train", "training")
    # before anything is written or started (a TrainConfig built in Python too: n_envs=10**7
    # wrote config.json, pool/ and run.json, then forked its environments)
    check_machine(config)
    out = Path(config.out)
    folder = check_run_dir(config, out)  # every refusal comes before anything is written
    demonstrations = None  # a fresh run's --bc-dataset, read before its folder is made
    if config.bc_dataset and not config.resume:
        demonstrations = bc_dataset_demonstrations(config.bc_dataset, config.bc_agent,
                                                   config.rules())
    idle_line = idle_note(config)  # a --resume with nothing to train: its note
    start_run(config, out, folder, idle_line is not None)
    torch.manual_seed(config.seed)
    torch.set_num_threads(1)
    vec_env = make_vec_env(config)
    if config.resume:
        model, recorded = resumed_model(config, out, vec_env)
        clock = RunClock(recorded)  # the run's wall seconds, on from the checkpoint's
        print_note(idle_line)
    else:
        model, clock = new_model(config, out, vec_env), RunClock()
    if idle_line is not None:
        clock.mark_idle()  # its seconds stay as the checkpoint recorded them
    else:
        clock.start()  # set up and loaded: the run's seconds of training go on
    if config.resume is None and (config.bc_teacher or config.bc_dataset):
        try:  # the first work of training, checked before any checkpoint (or bc.json) is saved
            warm_start(model, config, out, demonstrations)
        except Diverged:  # nothing of it is saved
            vec_env.close()
            raise
    # Ctrl-C, SIGTERM and SIGHUP are held while SB3 and torch work and delivered between two
    # environment steps (HeldSignals: raised inside a library's code they can leave it
    # broken); once a stop is delivered, later ones are dropped while the run is saved and
    # exported (a second Ctrl-C or a SIGTERM cut the export short, and the command ended with
    # its words and status, the policy not exported)
    with signals_held() as held:
        stop = learn(model, config, out, vec_env, clock, held)
        wall = clock.seconds()
        export_run(model, config, out, wall, command, stop)  # after a stop: TrainingStopped
    print(trained_line(config, model.num_timesteps, wall, out, clock.idle))
    if config.ship:
        ship_policy(out, config)
    return out / "policy.npz"


def main(argv: list[str] | None = None) -> int:
    args = parser_for(TrainConfig).parse_args(argv)
    return run_command(lambda: _main(args, argv))


def _main(args: argparse.Namespace, argv: list[str] | None) -> int:
    try:
        config = TrainConfig(**vars(args))
        check_machine(config)  # before anything starts: a huge --n-envs spawned processes
    except ValueError as err:
        raise CommandError(str(err)) from None
    if config.print_settings:  # nothing written, --out not checked (best_response compares)
        print(json.dumps(run_settings(config), sort_keys=True, default=str))
        return 0
    command = "python -m experiments.train_ppo " + " ".join(
        shlex.quote(a) for a in (sys.argv[1:] if argv is None else argv))
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    try:
        train(config, command)
    except (FileExistsError, RunDirError) as err:
        raise CommandError(str(err)) from None
    except Diverged as err:  # a failed run, not bad input: its line says what was kept
        quiet_teardown()  # the progress bar it left open says nothing more
        print_error(str(err))
        return 1
    except PolicyFileError as err:  # an export refused the weights (each update is checked)
        last = Path(config.out) / "checkpoints" / "last.zip"
        print_error(f"{err}; it was not written; the run is saved in {last}")
        return 1
    except ValueError as err:  # what a reader or an evaluation refuses: one line, never a trace
        raise CommandError(str(err)) from None
    except TrainingStopped as stopped:  # saved and exported: 130, 143, 129
        out, refused = stopped.out, stopped.export_error
        last = out / "checkpoints" / "last.zip"
        policy = (f"its policy not exported ({refused})" if refused else
                  f"its policy exported to {out / 'policy.npz'}")
        return end_stopped_training(stopped, f"the run is saved in {last} and {policy}: add "
                                             f"--resume {last} to the same command to go on")
    except KeyboardInterrupt as stop:  # before (or after) learning: 130, 143, 129
        last = Path(config.out) / "checkpoints" / "last.zip"
        note = (f"; the run is saved in {last}: add --resume {last} to the same command to go on"
                if last.is_file() else "")
        quiet_teardown()
        status, words = stop_status(stop)
        print_error(f"{words}{note}")
        return status
    return 0


# -- deprecated --------------------------------------------------------------------------
def evaluate(policy_path: str, rules: RuleConfig, opponent: str, matches: int,
             seed: int) -> dict[str, float]:
    """Deprecated: :func:`agents.evaluation.evaluate` (``evaluate(f"ppo:{policy_path}",
    opponent, rules, matches=matches, seed=seed)``) is the one evaluator of every trainer; this
    alias goes in the next version."""
    import warnings

    warnings.warn("experiments.train_ppo.evaluate is deprecated; use "
                  "agents.evaluation.evaluate(f'ppo:{path}', opponent, rules, matches=..., "
                  "seed=...)", DominoesDeprecationWarning, stacklevel=2)
    return evaluate_agent(f"ppo:{policy_path}", opponent, rules, matches=matches, seed=seed)


if __name__ == "__main__":
    end_program(main())
