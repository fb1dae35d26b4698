"""Approximate exploitability: train a best response against a frozen agent, report its win rate.

    python -m experiments.best_response --agent greedy --steps 5000000
    python -m experiments.best_response --agent ppo --steps 5000000          # the shipped policy
    python -m experiments.best_response --agent search --steps 300000        # MaskablePPO path

A jittable agent (``greedy``, ``random``, ``ppo`` / ``ppo:PATH`` with a tanh policy, played in
JAX as the same network) is the only opponent of a ``python -m experiments.train_jax`` run from
scratch; any other agent spec is the only opponent of a MaskablePPO run
(``python -m experiments.train_ppo``, ``SingleAgentEnv``). The trainer runs as its own command
in a subprocess, writing into ``--out``; then the best response (its ``policy.npz``) plays
``--matches`` matches against the agent (:func:`agents.evaluation.evaluate`, seats swapped on
each deal). The higher its win rate, the more exploitable the agent (50% against itself would
be a Nash equilibrium's ceiling for a zero-sum game). The last line is a JSON object with the
win rate and its Wilson 95% interval.

The response reads ``--obs-version``; against a ``ppo`` policy it reads the policy's own version
(the JAX game gives every seat the same observation). train_jax serves every registered version
the JAX game builds; the MaskablePPO path serves version 2 only.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from dominoes_env.cli_support import (
    MAX_JAX_UPDATES,
    CommandError,
    OneLineParser,
    Stopped,
    ascii_int,
    check_fits_in_memory,
    check_run_folder,
    end_program,
    print_error,
    quiet_teardown,
    run_command,
    run_of_checkpoint,
    seed_value,
    stop_status,
)
from dominoes_env.core.validation import parse_json

#: the observation versions experiments.train_ppo trains on
PPO_OBS_VERSIONS = (2,)
#: the longest training asked for (about a year of train_jax on one accelerator) and the most
#: evaluation matches (their results are held in memory): beyond them a value is a mistake
MAX_STEPS, MAX_MATCHES = 10**12, 10**7
#: memory one of train_jax's parallel games takes with its rollout, rounded up (an estimate for
#: the memory check before the trainer starts; train_jax checks its own run again)
BYTES_PER_ENV = 65536
#: each trainer's parallel games by default and the steps each game plays per update: a run
#: trains whole updates, so --steps is at least one (``--num-envs`` x these steps)
TRAINER_ENVS = {"train_jax": 512, "train_ppo": 16}
STEPS_PER_GAME = {"train_jax": 32, "train_ppo": 256}
#: train_ppo's minibatch (at most its rollout)
PPO_BATCH = 512


def jittable(spec: str) -> tuple[str, str] | None:
    """``(kind, path)`` for the agents train_jax plays inside jit, else ``None`` (the
    MaskablePPO path). A ``ppo:PATH`` policy is jittable only with the activation the JAX
    networks play (tanh); a relu policy takes the MaskablePPO path, since train_jax would
    refuse it only after the command is printed. (A file that cannot be read stays with
    train_jax, whose check names why.)"""
    if spec in ("greedy", "random"):
        return spec, ""
    if spec == "ppo" or spec.startswith("ppo:"):
        path = spec.partition(":")[2]
        if path:
            from dominoes_env.policy_format import (
                TRAINED_ACTIVATION,
                PolicyFileError,
                read_policy,
            )

            try:
                if read_policy(path).activation != TRAINED_ACTIVATION:
                    return None
            except PolicyFileError:
                pass
        return "ppo", path
    return None


#: the statuses of a program that was stopped and said so (and what it saved) in its own line
STOPPED_STATUSES = (129, 130, 143)
#: how long a trainer's ``--print-settings`` may take (it checks flags and prints a line)
SETTINGS_TIMEOUT_S = 300


def program_env() -> dict[str, str]:
    """The environment a program runs in: this one, with this project first on its path."""
    root = str(Path(__file__).resolve().parent.parent)
    return {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (root, os.environ.get("PYTHONPATH", "")) if p)}


def run_program(module: str, flags: list[str]) -> int:
    """Run ``python -m {module} {flags}`` in a subprocess (this interpreter, this project on
    its path) and return its exit status.

    The program runs in its own session (a process group of its own, apart from the
    terminal), so a signal reaches it once, from here: a Ctrl-C, SIGTERM or SIGHUP that stops
    this command is passed on to it (a Ctrl-C as SIGINT) and it is waited for, as a trainer
    saves and exports what it learned before it exits; its status (130, 143, 129) is
    returned, its own line having said what it kept. The interruption is raised again (for
    :func:`run_command`'s line) when the program had ended already or died without saying
    so."""
    proc = subprocess.Popen([sys.executable, "-m", module, *flags], env=program_env(),
                            start_new_session=True)
    stop = None
    while True:
        try:
            code = proc.wait()
            break
        except KeyboardInterrupt as err:  # a second one is passed on too: the user insists
            stop = err
            if proc.poll() is None:
                proc.send_signal(err.signum if isinstance(err, Stopped) else signal.SIGINT)
    if stop is not None and code not in STOPPED_STATUSES:
        raise stop
    return code


def trainer_flags(args) -> tuple[str, list[str]]:
    """The trainer (``train_jax`` or ``train_ppo``) and its flags but ``--out`` for a best
    response to ``args.agent``; ``ValueError`` for an observation version it cannot serve, or
    ``--steps`` short of one update (:func:`whole_updates`)."""
    from agents.ppo import NumpyPolicy, shipped_policy_path

    how = jittable(args.agent)
    if how is None:
        if args.obs_version is not None and args.obs_version not in PPO_OBS_VERSIONS:
            raise ValueError(f"--obs-version {args.obs_version}: against {args.agent!r} the "
                             f"response is a MaskablePPO run, which serves version "
                             f"{', '.join(map(str, PPO_OBS_VERSIONS))}")
        envs, rollout, common = whole_updates(args, "train_ppo")
        return "train_ppo", [*common, "--n-envs", str(envs), "--vec-env", "dummy",
                             "--n-steps", str(STEPS_PER_GAME["train_ppo"]),
                             "--batch-size", str(min(PPO_BATCH, rollout)),
                             "--opponents", f"{args.agent}=1", "--eval-every", str(args.steps),
                             "--eval-matches", "2"]
    kind, path = how
    flags = []
    mix = {"self": 0, "snapshot": 0, "greedy": 0, "random": 0}
    version = args.obs_version
    if kind == "ppo":
        path = path or str(shipped_policy_path(args.players))
        # the response reads what the frozen policy reads (one observation per game)
        own = NumpyPolicy(path).obs_spec.version
        if version is not None and version != own:
            raise ValueError(f"--obs-version {version}: {path!r} reads observation version "
                             f"{own}, and a response to it reads the same")
        version = own
        flags += ["--opp-policy", path, "--opp-policy-weight", "1"]
    else:
        mix[kind] = 1
    envs, _, common = whole_updates(args, "train_jax")
    flags = [*common, "--eval-every", "0", "--eval-matches", "2", "--num-envs", str(envs),
             "--num-steps", str(STEPS_PER_GAME["train_jax"]), *flags]
    if version is not None:
        flags += ["--obs-version", str(version)]
    return "train_jax", flags + [f for name, w in mix.items() for f in (f"--opp-{name}", str(w))]


def resume_hint(trainer: str, out: str) -> str:
    """The checkpoint ``trainer``'s run in ``out`` continues from, as the trainer names it in
    its own refusal: train_jax's ``checkpoint.npz``; train_ppo's newest checkpoint there, else
    ``checkpoints/last.zip``."""
    if trainer == "train_jax":
        return os.path.join(out, "checkpoint.npz")
    from agents.sb3_run import checkpoints_of

    found = checkpoints_of(Path(out)) if os.path.isdir(out) else []
    return str(found[-1] if found else Path(out) / "checkpoints" / "last.zip")


def whole_updates(args, trainer: str) -> tuple[int, int, list[str]]:
    """``(games, steps of one update, the trainer's common flags)`` for ``trainer``'s games
    (``--num-envs``, else its default): ``--total-steps`` is ``--steps`` rounded up to whole
    updates, as the trainer trains them (its progress bar and count then agree); ``ValueError``
    when ``--steps`` is less than one update (``--steps 16`` trained 4,096 steps against a
    search agent)."""
    envs = TRAINER_ENVS[trainer] if args.num_envs is None else args.num_envs
    rollout = envs * STEPS_PER_GAME[trainer]
    if args.steps < rollout:
        raise ValueError(f"--steps {args.steps:,} is less than one update of {trainer}: "
                         f"{envs:,} games (--num-envs) x {STEPS_PER_GAME[trainer]} steps = "
                         f"{rollout:,}; give --steps {rollout:,} or more, or fewer --num-envs")
    updates = -(-args.steps // rollout)
    if trainer == "train_jax" and updates > MAX_JAX_UPDATES:  # said in train_jax's words,
        # which named its --num-steps, a flag this command does not have
        raise ValueError(f"--steps {args.steps:,} is {updates:,} updates of {trainer} "
                         f"({envs:,} games (--num-envs) x {STEPS_PER_GAME[trainer]} steps); "
                         f"it trains at most {MAX_JAX_UPDATES:,}: give fewer --steps or more "
                         "--num-envs")
    total = updates * rollout
    return envs, rollout, ["--players", str(args.players), "--total-steps", str(total),
                           "--seed", str(args.seed)]


def build_parser() -> OneLineParser:
    p = OneLineParser(prog="python -m experiments.best_response",
                      description=__doc__.split("\n")[0])
    p.add_argument("--agent", required=True, help="the frozen agent's spec (greedy, ppo, "
                   "ppo:PATH, search, ...)")
    p.add_argument("--steps", type=ascii_int, required=True,
                   help="training steps of the best response: whole updates of its trainer "
                        "(--num-envs games x 32 steps with train_jax, x 256 with train_ppo), "
                        "so at least one update and rounded up to whole ones; the report "
                        "gives the steps trained")
    p.add_argument("--players", type=ascii_int, choices=(2, 3, 4), default=2,
                   help="2, 3 or 4 (4: partnerships)")
    p.add_argument("--matches", type=ascii_int, default=1000,
                   help="evaluation matches, as whole deals each played in every seating (2 "
                        "seatings at two sides, 6 at three players): rounded down, at least "
                        "one deal; the report gives the matches played")
    p.add_argument("--num-envs", type=ascii_int, default=None,
                   help="the trainer's parallel games (default: 512 with train_jax, 16 with "
                        "train_ppo)")
    p.add_argument("--obs-version", type=ascii_int, default=None, help="observation version the "
                   "response reads (default: a ppo agent's own, else the default version)")
    p.add_argument("--seed", type=seed_value, default=0, help="seed of the training and evaluation")
    p.add_argument("--out", default=None,
                   help="where the run goes (default: a temporary folder)")
    p.add_argument("--overwrite", action="store_true",
                   help="replace the run that --out holds (its files are removed)")
    p.add_argument("--resume", default=None, metavar="CHECKPOINT",
                   help="continue the trainer's run in --out (default: the checkpoint's run "
                        "folder) from this checkpoint (the one a stopped run names), with the "
                        "same other flags")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run_command(lambda: _main(args))


def _main(args: argparse.Namespace) -> int:
    try:
        from agents import resolve_spec
        from agents.specs import check_spec_path
        from dominoes_env.core import RuleConfig

        rules = RuleConfig(num_players=args.players)
        resolve_spec(args.agent)
        if args.out is not None and not args.out.strip():  # was a temporary folder
            raise ValueError("--out is empty; name the run's folder (or leave --out out for a "
                             "temporary one)")
        if args.steps < 1 or args.matches < 1:
            raise ValueError("--steps and --matches must be >= 1")
        if args.steps > MAX_STEPS or args.matches > MAX_MATCHES:
            raise ValueError(f"--steps must be at most {MAX_STEPS:,} and --matches at most "
                             f"{MAX_MATCHES:,}")
        if args.num_envs is not None:
            if args.num_envs < 1:
                raise ValueError(f"--num-envs must be >= 1, not {args.num_envs}")
            check_fits_in_memory(f"--num-envs {args.num_envs}", args.num_envs, BYTES_PER_ENV)
        if args.obs_version is not None:
            from dominoes_env.jax.selfplay import check_obs_version

            check_obs_version(args.obs_version)
        if args.resume is not None:  # the trainer checks its run, settings and checkpoint
            if args.overwrite:
                raise ValueError("--resume continues the run in --out: give --out, and not "
                                 "--overwrite")
            if args.out is None:  # the run the checkpoint is in: a stopped run without --out
                args.out = run_of_checkpoint(args.resume)  # says to add --resume only
            if not os.path.realpath(args.resume).startswith(
                    os.path.realpath(args.out).rstrip(os.sep) + os.sep):
                raise ValueError(f"--resume {args.resume!r} is not a checkpoint in --out "
                                 f"{args.out!r}")
        # its response is evaluated as ppo:OUT/policy.npz: a folder an agent spec can name
        if args.out is None:  # a temporary one, named by letters, digits and '_', in TMPDIR
            check_spec_path("TMPDIR", tempfile.gettempdir(), folder=True)
        else:
            check_spec_path("--out", args.out, folder=True)
        from agents import check_spec

        check_spec(args.agent, rules)  # its parameters, and whether it plays this table
        trainer, flags = trainer_flags(args)
        if args.resume is None and args.out is not None:  # the trainer's own run: new or
            # empty, or --overwrite; the run there named as that trainer's (a train_ppo run
            # was said to be one train_jax cannot continue)
            check_run_folder(args.out, f"experiments.{trainer}", {}, overwrite=args.overwrite,
                             resume_hint=resume_hint(trainer, args.out), utf8_name=True)
        if args.resume is not None:
            check_resumed_settings(trainer, flags, args)
    except ValueError as err:
        raise CommandError(str(err)) from None
    out = Path(args.out or tempfile.mkdtemp(prefix="best_response_"))
    flags += ["--out", str(out), *(["--overwrite"] if args.overwrite else []),
              *(["--resume", args.resume] if args.resume is not None else [])]
    print(f"best response to {args.agent}: python -m experiments.{trainer} "
          + " ".join(shlex.quote(f) for f in flags), flush=True)
    code = run_program(f"experiments.{trainer}", flags)  # a bad flag: its own one-line error
    if code:
        return code
    from agents.arena import derive_seed
    from agents.evaluation import evaluate

    try:
        res = evaluate(f"ppo:{out / 'policy.npz'}", args.agent, rules, matches=args.matches,
                       seed=derive_seed(args.seed, "best_response"))
    except KeyboardInterrupt as stop:  # Ctrl-C, SIGTERM, SIGHUP: the response is trained
        quiet_teardown()
        status, words = stop_status(stop)
        print_error(f"{words} while evaluating; the best response is saved in "
                    f"{out / 'policy.npz'}")
        return status
    steps = trained_steps(out, args.steps)
    print(f"best response, trained {steps:,} steps, wins {res['win_rate']:.1%} of "
          f"{res['matches']} matches against {args.agent} [{res['ci_low']:.1%}, "
          f"{res['ci_high']:.1%}], margin {res['margin']:+.1f}")
    print(json.dumps({"agent": args.agent, "steps": steps, "trainer": trainer,
                      "policy": str(out / "policy.npz"), **res}))
    return 0


def check_resumed_settings(trainer: str, flags: list[str], args) -> None:
    """``ValueError`` where the run in ``--out`` that ``--resume`` continues is a run of
    ``trainer`` with other settings than ``flags`` (the trainer's, from this command's): the
    trainer refused it with "repeat its arguments to continue it", naming its own flags
    (``--net``, ``--devices``) that this command has not, for a plain train_jax run or a best
    response to another agent. The settings are the trainer's own ``--print-settings`` (a
    subprocess: a program imports no other)."""
    from dominoes_env.cli_support import read_run_marker, settings_difference

    marker = read_run_marker(args.out)
    if not marker or marker.get("program") != f"experiments.{trainer}":
        return  # no run there, or another program's: the trainer says so in its own words
    try:
        done = subprocess.run([sys.executable, "-m", f"experiments.{trainer}", *flags, "--out",
                               args.out, "--resume", args.resume, "--print-settings"],
                              capture_output=True, text=True, env=program_env(),
                              timeout=SETTINGS_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return  # the trainer run itself checks the resume
    if done.returncode:
        return  # the trainer says what is wrong with its flags when it runs
    try:
        settings = json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return
    if marker.get("settings") == settings:
        return
    raise ValueError(
        f"--out {args.out!r} holds a run of experiments.{trainer} with other arguments than "
        f"this best response gives it ({settings_difference(marker.get('settings'), settings)})"
        f"; best_response continues only a best response it trained, given the same --agent, "
        f"--players, --num-envs, --obs-version and --seed again: continue that run with "
        f"python -m experiments.{trainer} and its own arguments, or name a new --out")


def trained_steps(out: Path, asked: int) -> int:
    """The steps the trainer says it trained (its ``policy.json``), else ``asked``."""
    try:
        steps = parse_json((out / "policy.json").read_text())["steps"]
    except (OSError, ValueError, KeyError, TypeError):
        return asked
    return steps if isinstance(steps, int) and not isinstance(steps, bool) else asked


if __name__ == "__main__":
    end_program(main())
