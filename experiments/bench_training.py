"""Training throughput of train_jax against train_ppo (MaskablePPO), matched: same work each.

``train_jax`` does its rollout and update in one jitted function; ``train_ppo`` is MaskablePPO
on ``SingleAgentEnv``. The two runs are matched, so that the ratio compares the trainers and
not their settings:

- the same network (policy and value MLPs ``--net``, tanh), rollout length (``--num-steps``),
  minibatch size (``--minibatch``) and epochs (``--epochs``), two players;
- the same games per rollout (``--jax-envs`` and ``--ppo-envs``, both 256 unless told
  otherwise; a difference is printed and recorded, ``games_matched``);
- the same opponent mix (``OPPONENTS``): a network 60% of the games, greedy 35%, uniform
  random 5%. ``train_jax`` plays its current policy in 35% and a frozen snapshot in 25% (its
  default mix, one network forward pass per opponent move on the device); ``train_ppo`` draws
  from its self-play pool with weight 0.6 (a frozen copy of its policy, played in numpy, one
  forward pass per opponent move: the pool holds the initial policy from the first step).

Each trainer runs as its own command (``python -m experiments.train_jax ...``, then
``python -m experiments.train_ppo ...``, one after the other) for ``--warmup`` + ``--updates``
updates, into a temporary ``--out``, and reports there (``throughput.json``) the wall-clock and
CPU seconds of each update. The first ``--warmup`` updates are not timed; a trainer's figure is
its median over the other updates. ``train_jax`` compiles its update in its first one: that
update's seconds less a timed update's are printed as its compile time (``--compile-cache
fresh``, the default: an empty JAX compilation cache, what a first run pays; ``shared``: the
user's cache, what a run with settings compiled before pays). The CPU seconds are the trainer
process's, every thread; this program also reports each command's whole wall and CPU time
(``resource.getrusage(RUSAGE_CHILDREN)``), start-up and compilation included. MaskablePPO runs
as ``train_ppo`` trains: torch on one thread. The machine's load average is printed at the
start and at the end.

The figures: steps per CPU-second, ``train_jax`` against ``train_ppo`` (the work each does,
whatever else runs on the machine), and per wall-clock second. The last line is a JSON object
with ``train_jax_steps_per_s``, ``train_ppo_steps_per_s`` and ``ratio`` (wall clock),
``train_jax_steps_per_cpu_s``, ``train_ppo_steps_per_cpu_s`` and ``ratio_cpu``,
``train_jax_compile_s``, each trainer's first update's seconds and whole command's wall and CPU
seconds, the settings, and the machine's load averages at the start and at the end
(``load_average_start``, ``load_average_end``: 1, 5 and 15 minutes).

    python -m experiments.bench_training [--updates 5] [--jax-envs 256] [--ppo-envs 256]
        [--jax-matmul bfloat16]

``--jax-matmul bfloat16`` times ``train_jax --matmul bfloat16`` (its networks' products from
bfloat16 inputs, summed in float32), which the matched line then names as a difference.

Measured figures, with the command behind each: the docs' results page.
"""

from __future__ import annotations

import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from dominoes_env.cli_support import (
    MATMUL_DTYPES,
    CommandError,
    OneLineParser,
    ascii_int,
    check_fits_in_memory,
    end_program,
    run_command,
)
from dominoes_env.core.validation import parse_json
from dominoes_env.optional import require
from dominoes_env.throughput import load_average, load_line

TARGET_RATIO = 4.0  #: the target, per CPU-second
#: the opponents of both trainers: kind -> share of the games ("network": a copy of the
#: learner's policy network; train_jax splits it as its default mix does)
OPPONENTS = {"network": 0.6, "greedy": 0.35, "random": 0.05}
JAX_NETWORK_SPLIT = {"self": 0.35, "snapshot": 0.25}  #: train_jax's current policy, a snapshot


def ppo_flops_per_step(obs_size: int, hidden: list[int], num_actions: int, epochs: int) -> int:
    """Floating-point operations of the networks' matrix products per learner decision, the
    same in both trainers: the rollout's forward pass of the policy and value networks, then
    ``epochs`` forward and backward passes (gradients of weights and of every layer's input but
    the observation's).

    >>> ppo_flops_per_step(234, [256, 256], 112, 4)
    6316544
    """
    def macs(sizes):  # forward multiply-adds, and those of the first layer
        return sum(a * b for a, b in zip(sizes[:-1], sizes[1:], strict=True)), sizes[0] * sizes[1]

    total = 0
    for sizes in ([obs_size, *hidden, num_actions], [obs_size, *hidden, 1]):
        fwd, first = macs(sizes)
        total += 2 * fwd + epochs * 2 * (3 * fwd - first)  # forward, then weights + inputs
    return total


def matmul_gflops(seconds: float = 1.0, dtype: str = "float32") -> float:
    """GFLOP per CPU-second of a jitted ``[1024, 256] @ [256, 256]`` product with tanh, the
    update's commonest shape, as ``train_jax --matmul dtype`` computes it: what this CPU does
    now with the update's arithmetic."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    from dominoes_env.jax.networks import mlp

    a = jnp.asarray(np.random.default_rng(0).random((1024, 256)), jnp.float32)
    b = jnp.asarray(np.random.default_rng(1).random((256, 256)), jnp.float32) / 256
    layers = [{"w": b, "b": jnp.zeros(256)}] * 2  # tanh(a @ b) @ b
    f = jax.jit(lambda a: mlp(layers, a, jnp.dtype(dtype)))
    f(a).block_until_ready()
    runs, cpu = 0, time.process_time()
    while time.process_time() - cpu < seconds:
        f(a).block_until_ready()
        runs += 1
    return runs * 2 * 2 * 1024 * 256 * 256 / (time.process_time() - cpu) / 1e9


def parse_hidden(net: str) -> list[int]:
    """Hidden layer sizes from ``"256,256"`` (``ValueError`` naming the text otherwise): the
    trainers' own reading (:func:`~dominoes_env.policy_format.hidden_sizes`).

    >>> parse_hidden("64,32")
    [64, 32]
    """
    from dominoes_env.policy_format import hidden_sizes

    return hidden_sizes(net, "--net")


# -- one trainer's run, as its command ------------------------------------------------------
@dataclass
class Run:
    """What one trainer's command reported (``throughput.json``) and cost."""

    name: str
    steps_per_update: int
    update_s: list[float]  # wall seconds of each update, the first ones untimed (warm-up)
    update_cpu_s: list[float]  # the trainer process's CPU seconds of each update
    wall_s: float = 0.0  # the whole command: start-up, compilation, training, export
    cpu_s: float = 0.0

    def rates(self, warmup: int, clock: str = "wall") -> list[float]:
        """Steps per second of each update after the first ``warmup``.

        >>> Run("a", 100, [9.0, 0.5, 0.25], [9.0, 1.0, 1.0]).rates(1)
        [200.0, 400.0]
        """
        seconds = self.update_s if clock == "wall" else self.update_cpu_s
        return [self.steps_per_update / max(s, 1e-9) for s in seconds[warmup:]]

    def median(self, warmup: int, clock: str = "wall") -> float:
        return statistics.median(self.rates(warmup, clock))


def read_throughput(name: str, path: Path, updates: int) -> Run:
    """The ``throughput.json`` a trainer wrote (``CommandError`` unless it holds at least
    ``updates`` updates' positive seconds)."""
    try:
        data = parse_json(path.read_text())
        run = Run(name, int(data["steps_per_update"]), [float(x) for x in data["update_s"]],
                  [float(x) for x in data["update_cpu_s"]])
    except (OSError, ValueError, KeyError, TypeError, OverflowError) as err:
        raise CommandError(f"{name} wrote no readable {path.name} ({err})") from None
    if len(run.update_s) < updates or len(run.update_cpu_s) != len(run.update_s) \
            or min(run.update_s) <= 0 or run.steps_per_update < 1:
        raise CommandError(f"{name}'s {path.name} holds {len(run.update_s)} updates' timings; "
                           f"expected {updates}")
    return run


def run_trainer(name: str, flags: list[str], out: Path, updates: int,
                extra_env: dict[str, str] | None = None) -> Run:
    """Run ``python -m experiments.{name} {flags} --out {out}`` (its output to ``out.log``;
    ``extra_env`` added to its environment) and read what it reported; ``CommandError`` with
    its last line if it fails."""
    root = str(Path(__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (root, os.environ.get("PYTHONPATH", "")) if p), **(extra_env or {})}
    log = out.with_suffix(".log")
    before, started = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    with open(log, "w") as fh:
        code = subprocess.call([sys.executable, "-m", f"experiments.{name}", *flags,
                                "--out", str(out)], stdout=fh, stderr=subprocess.STDOUT,
                               env=env)
    wall, after = time.perf_counter() - started, resource.getrusage(resource.RUSAGE_CHILDREN)
    if code:
        raise CommandError(f"{name} exited with status {code}: "
                           f"{failure_line(log.read_text(errors='replace'))} (its output: {log})")
    run = read_throughput(name, out / "throughput.json", updates)
    run.wall_s = round(wall, 2)
    run.cpu_s = round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 2)
    return run


def failure_line(output: str) -> str:
    r"""What a failed trainer said of its failure: its ``error:`` line, else the exception line
    of its traceback, else its last line. JAX ends a traceback with two lines of its own ("For
    simplicity, JAX has removed its internal frames..."), which are skipped: they say nothing
    of the failure.

    >>> failure_line("Traceback ...\nTypeError: bad dims\n-----\nFor simplicity, JAX has...")
    'TypeError: bad dims'
    >>> failure_line("[eval] ...\nerror: --net 0 is refused\n"), failure_line("")
    ('--net 0 is refused', 'no output')
    """
    lines = output.strip().splitlines()
    for line in reversed(lines):
        if line.startswith("error: "):
            return line.removeprefix("error: ")
    for line in reversed(lines):
        if re.match(r"[A-Za-z_][\w.]*(Error|Exception|Interrupt|Exit)(: |$)", line):
            return line
    return lines[-1] if lines else "no output"


def jax_flags(args) -> list[str]:
    """``train_jax``'s flags: the benchmark's settings and :data:`OPPONENTS`, its network share
    split as :data:`JAX_NETWORK_SPLIT`.

    >>> flags = jax_flags(build_parser().parse_args([]))
    >>> [flags[flags.index(f) + 1] for f in ("--num-envs", "--opp-self", "--opp-snapshot",
    ...                                      "--opp-greedy", "--opp-random")]
    ['256', '0.35', '0.25', '0.35', '0.05']
    """
    steps = args.jax_envs * args.num_steps
    mix = {"self": JAX_NETWORK_SPLIT["self"], "snapshot": JAX_NETWORK_SPLIT["snapshot"],
           "greedy": OPPONENTS["greedy"], "random": OPPONENTS["random"]}
    return ["--num-envs", str(args.jax_envs), "--num-steps", str(args.num_steps),
            "--num-minibatches", str(steps // args.minibatch), "--update-epochs",
            str(args.epochs), "--net", args.net, "--total-steps",
            str(steps * (args.warmup + args.updates)), "--eval-every", "0", "--eval-matches",
            "1", "--checkpoint-every", str(10 ** 12), "--time-limit", "0", "--no-progress",
            "--matmul", args.jax_matmul,
            *[x for kind, share in mix.items() for x in (f"--opp-{kind}", f"{share:g}")]]


def ppo_flags(args) -> list[str]:
    """``train_ppo``'s flags: the benchmark's settings and :data:`OPPONENTS`, the network's
    share its self-play pool's (which holds the initial policy from the first step on: one
    snapshot, at step 0).

    >>> flags = ppo_flags(build_parser().parse_args([]))
    >>> flags[flags.index("--n-envs") + 1], flags[flags.index("--opponents") + 1:][:3]
    ('256', ['self=0.6', 'greedy=0.35', 'random=0.05'])
    """
    steps = args.ppo_envs * args.num_steps
    mix = [f"{'self' if kind == 'network' else kind}={share:g}"
           for kind, share in OPPONENTS.items()]
    return ["--n-envs", str(args.ppo_envs), "--vec-env", "dummy", "--n-steps",
            str(args.num_steps), "--batch-size", str(args.minibatch), "--n-epochs",
            str(args.epochs), "--net", args.net, "--opponents", *mix,
            "--total-steps", str(steps * (args.warmup + args.updates)),
            "--eval-every", str(10 ** 12), "--eval-matches", "1", "--snapshot-every",
            str(10 ** 12), "--checkpoint-every", str(10 ** 12)]


def compile_seconds(run: Run, warmup: int) -> float:
    """Wall seconds the first update took beyond a timed one (the median): ``train_jax``'s
    compilation.

    >>> compile_seconds(Run("train_jax", 100, [41.0, 1.0, 2.0, 1.5], [50.0, 1.0, 1.0, 1.0]), 1)
    39.5
    """
    return round(max(run.update_s[0] - statistics.median(run.update_s[warmup:]), 0.0), 2)


def summary(jax_run: Run, ppo_run: Run, warmup: int) -> dict:
    """The figures of the last line.

    >>> j = Run("train_jax", 100, [60.0, 0.01, 0.02], [60.0, 0.02, 0.02], 80.0, 90.0)
    >>> p = Run("train_ppo", 10, [1.0, 0.004, 0.004], [1.0, 0.004, 0.004], 10.0, 10.0)
    >>> s = summary(j, p, 1)
    >>> s["ratio"], s["ratio_cpu"], s["train_jax_first_update_s"], s["train_jax_compile_s"]
    (3.0, 2.0, 60.0, 59.98)
    """
    figures = {}
    for key, run in (("train_jax", jax_run), ("train_ppo", ppo_run)):
        figures.update({f"{key}_steps_per_s": round(run.median(warmup), 1),
                        f"{key}_steps_per_cpu_s": round(run.median(warmup, "cpu"), 1),
                        f"{key}_first_update_s": run.update_s[0],
                        f"{key}_wall_s": run.wall_s, f"{key}_cpu_s": run.cpu_s})
    figures["train_jax_compile_s"] = compile_seconds(jax_run, warmup)
    figures["ratio"] = round(jax_run.median(warmup) / ppo_run.median(warmup), 3)
    figures["ratio_cpu"] = round(jax_run.median(warmup, "cpu") / ppo_run.median(warmup, "cpu"),
                                 3)
    return figures


def matching(args) -> str:
    """The line that says what the two runs share, and where they differ.

    >>> print(matching(build_parser().parse_args(["--ppo-envs", "32"])))
    matched: net 256,256, 32 steps per game and update, minibatch 1024, 4 epochs, 2 players; \
opponents network 60%, greedy 35%, random 5%; NOT matched: games per rollout train_jax 256, \
train_ppo 32
    >>> matching(build_parser().parse_args(["--jax-matmul", "bfloat16"])).split("; ")[-1]
    "NOT matched: train_jax's products read bfloat16 inputs (sums in float32), train_ppo's float32"
    """
    mix = ", ".join(f"{kind} {share:.0%}" for kind, share in OPPONENTS.items())
    games = (f"games per rollout {args.jax_envs} each" if args.jax_envs == args.ppo_envs else
             f"NOT matched: games per rollout train_jax {args.jax_envs}, train_ppo "
             f"{args.ppo_envs}")
    products = ("" if args.jax_matmul == "float32" else
                f"; NOT matched: train_jax's products read {args.jax_matmul} inputs (sums in "
                "float32), train_ppo's float32")
    return (f"matched: net {args.net}, {args.num_steps} steps per game and update, minibatch "
            f"{args.minibatch}, {args.epochs} epochs, 2 players; opponents {mix}; {games}"
            f"{products}")


def build_parser() -> OneLineParser:
    p = OneLineParser(prog="python -m experiments.bench_training",
                      description=__doc__.split("\n")[0])
    p.add_argument("--net", default="256,256", help="hidden sizes (policy and value)")
    p.add_argument("--num-steps", type=ascii_int, default=32, help="rollout length per environment")
    p.add_argument("--minibatch", type=ascii_int, default=1024, help="minibatch size")
    p.add_argument("--epochs", type=ascii_int, default=4, help="PPO epochs per update")
    p.add_argument("--jax-envs", type=ascii_int, default=256, help="train_jax's parallel games")
    p.add_argument("--ppo-envs", type=ascii_int, default=256, help="train_ppo's environments "
                   "(DummyVecEnv: one process); a number other than --jax-envs is printed as "
                   "a difference")
    p.add_argument("--jax-matmul", choices=MATMUL_DTYPES, default="float32",
                   help="what train_jax's network products read (its --matmul): float32, as "
                        "train_ppo's, or bfloat16 (said on the matched line as a difference)")
    p.add_argument("--compile-cache", choices=("fresh", "shared"), default="fresh",
                   help="train_jax's JAX compilation cache: fresh (an empty one: the compile "
                        "time a first run pays) or shared (the user's)")
    p.add_argument("--warmup", type=ascii_int, default=1,
                   help="untimed updates first (start-up and compilation)")
    p.add_argument("--updates", type=ascii_int, default=5, help="timed updates of each trainer")
    p.add_argument("--no-matmul", action="store_true",
                   help="skip the network-arithmetic line (a second of plain matrix products)")
    return p


#: the most updates (--warmup, --updates) and PPO epochs a benchmark may ask for: beyond them
#: it would not end
MAX_UPDATES, MAX_EPOCHS = 10_000, 1_000
#: memory estimates for the check against this machine's: one rollout decision (observation,
#: mask and scalars, float32, rounded up), one train_ppo environment (a Python game), and an
#: observation's width (an upper bound of the registered versions')
BYTES_PER_STEP, BYTES_PER_PPO_ENV, OBS_WIDTH = 8192, 2**20, 1024


def check_sizes(args, hidden: list[int]) -> None:
    """``ValueError`` (one line, naming the flags) for more updates or epochs than a benchmark
    can end, or trainers whose rollouts, environments and networks (parameters, gradients and
    Adam's moments, policy and value) do not fit in this machine's memory."""
    for flag, value, cap in (("--warmup", args.warmup, MAX_UPDATES),
                             ("--updates", args.updates, MAX_UPDATES),
                             ("--epochs", args.epochs, MAX_EPOCHS)):
        if value > cap:
            raise ValueError(f"{flag} must be at most {cap:,}, not {value:,}")
    sizes = [OBS_WIDTH, *hidden]
    weights = 2 * sum(a * b + b for a, b in zip(sizes, [*sizes[1:], 1], strict=True))
    need = ((args.jax_envs + args.ppo_envs) * args.num_steps * BYTES_PER_STEP
            + args.ppo_envs * BYTES_PER_PPO_ENV + 4 * 4 * weights)
    check_fits_in_memory("this benchmark", need, 1,
                         f"--jax-envs {args.jax_envs:,} and --ppo-envs {args.ppo_envs:,} x "
                         f"--num-steps {args.num_steps:,}, --net {args.net}")


def main(argv: list[str] | None = None) -> int:
    p = build_parser()
    args = p.parse_args(argv)
    for name in ("num_steps", "minibatch", "epochs", "jax_envs", "ppo_envs", "warmup",
                 "updates"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be >= 1")
    if args.minibatch < 2:  # train_ppo needs two rows a minibatch: its refusal came after the
        # JAX trainer had been timed
        p.error("--minibatch must be >= 2 (train_ppo normalises advantages within a minibatch)")
    for envs in (args.jax_envs, args.ppo_envs):
        if (envs * args.num_steps) % args.minibatch:
            p.error(f"envs * --num-steps ({envs * args.num_steps}) must be a multiple of "
                    f"--minibatch ({args.minibatch})")
    try:
        hidden = parse_hidden(args.net)
        check_sizes(args, hidden)
    except ValueError as err:
        p.error(str(err))
    return run_command(lambda: _run(args, hidden), errors=(ImportError,))


def _run(args, hidden: list[int]) -> int:
    for module, extra in (("optax", "jax"), ("sb3_contrib", "train")):
        require(module, extra, "the training benchmark")  # one line, before any start-up
    load_start = load_average()
    print(load_line("start", load_start), flush=True)
    print(matching(args), flush=True)
    total = args.warmup + args.updates
    with tempfile.TemporaryDirectory(prefix="bench_training_") as tmp:
        cache = ({"JAX_COMPILATION_CACHE_DIR": str(Path(tmp) / "jax_cache")}
                 if args.compile_cache == "fresh" else {})
        jax_run = run_trainer("train_jax", jax_flags(args), Path(tmp) / "jax", total, cache)
        ppo_run = run_trainer("train_ppo", ppo_flags(args), Path(tmp) / "ppo", total)
    result = summary(jax_run, ppo_run, args.warmup)
    for r in (jax_run, ppo_run):
        compiled = (f" (compiling: {result['train_jax_compile_s']:.1f} s, "
                    f"{args.compile_cache} cache)" if r is jax_run else "")
        print(f"{r.name}: {r.median(args.warmup, 'cpu'):,.0f} steps per CPU-second, "
              f"{r.median(args.warmup):,.0f} per wall-second (medians of {args.updates} "
              f"updates of {r.steps_per_update:,} steps); first update {r.update_s[0]:.1f} s"
              f"{compiled}; the whole command {r.wall_s:.1f} s, {r.cpu_s:.1f} CPU-s",
              flush=True)
    print(f"ratio {result['ratio_cpu']:.2f} per CPU-second (target >= {TARGET_RATIO:g}: "
          f"{'met' if result['ratio_cpu'] >= TARGET_RATIO else 'NOT met'}), "
          f"{result['ratio']:.2f} per wall-second")
    result.update(net=args.net, num_steps=args.num_steps, minibatch=args.minibatch,
                  epochs=args.epochs, jax_envs=args.jax_envs, ppo_envs=args.ppo_envs,
                  games_matched=args.jax_envs == args.ppo_envs, opponents=OPPONENTS,
                  compile_cache=args.compile_cache, jax_matmul=args.jax_matmul)
    if not args.no_matmul:
        from dominoes_env.core import RuleConfig
        from dominoes_env.obs import observation_spec

        rules = RuleConfig()
        flops = ppo_flops_per_step(observation_spec().layout(rules).size, hidden,
                                   rules.num_tiles * 4, args.epochs)
        peak = matmul_gflops(dtype=args.jax_matmul)
        gflops = {r.name: round(r.median(args.warmup, "cpu") * flops / 1e9, 1)
                  for r in (jax_run, ppo_run)}
        print(f"network arithmetic: {flops / 1e6:.2f} MFLOP per step; GFLOP per CPU-second "
              + ", ".join(f"{k} {v}" for k, v in gflops.items())
              + f"; a plain jitted matmul of the update's shape here ({args.jax_matmul}): "
              f"{peak:.1f}")
        result.update(gflop_per_cpu_s=gflops, matmul_gflop_per_cpu_s=round(peak, 1))
    load_end = load_average()
    print(load_line("end", load_end))
    result.update(load_average_start=load_start, load_average_end=load_end)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    end_program(main())  # at once after a signal: XLA's threads may still run
