"""Training throughput: ``train_jax`` (rollout + update in one jitted function) next to
``train_ppo`` (MaskablePPO on ``SingleAgentEnv``), same network and PPO settings, same run.

Both train the same network (policy and value MLPs ``--net``, tanh) with the same rollout
length (``--num-steps``), minibatch size (``--minibatch``) and epochs (``--epochs``), on two
players against a self-play mix (train_jax: its default mix; train_ppo: greedy / random / its
own pool). MaskablePPO runs twice, with torch on one thread (as the shipped policies were
trained) and on every core, so that each trainer is measured using this machine its best way.

The trainers take turns: each round times one update (rollout and PPO epochs) of every
contender back to back, so a slow moment of a shared machine slows all of them alike. After
``--warmup`` rounds (start-up and compilation, not timed) come ``--updates`` timed rounds; a
contender's figure is its median over the rounds, a ratio the median of the rounds' ratios.

The headline is steps per wall-clock second, ``train_jax`` against the faster MaskablePPO
setting. Steps per CPU-second (this process's CPU time, all threads) are printed too, against
MaskablePPO on one thread (its most CPU-efficient setting): that ratio says how much of the
gain is doing less work rather than using both cores. The last line is a JSON object with
``train_jax_steps_per_s``, ``train_ppo_steps_per_s`` and ``ratio`` (wall clock), and the
per-CPU-second figures under ``cpu``.

    python -m experiments.bench_training [--updates 5] [--jax-envs 256] [--ppo-envs 32]

Target (issue 12): ratio >= 4.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from dominoes_env.cli_support import OneLineParser, run_command
from dominoes_env.optional import require

TARGET_RATIO = 4.0


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


def matmul_gflops(seconds: float = 1.0) -> float:
    """GFLOP per CPU-second of a jitted float32 ``[1024, 256] @ [256, 256]`` product with tanh,
    the update's commonest shape: what this CPU does now with the update's arithmetic."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    a = jnp.asarray(np.random.default_rng(0).random((1024, 256)), jnp.float32)
    b = jnp.asarray(np.random.default_rng(1).random((256, 256)), jnp.float32) / 256
    f = jax.jit(lambda a, b: jnp.tanh(a @ b) @ b)
    f(a, b).block_until_ready()
    runs, cpu = 0, time.process_time()
    while time.process_time() - cpu < seconds:
        f(a, b).block_until_ready()
        runs += 1
    return runs * 2 * 2 * 1024 * 256 * 256 / (time.process_time() - cpu) / 1e9


# -- the contenders: each ``update()`` runs one rollout and its PPO epochs, returns the steps --
class JaxTrainer:
    name = "train_jax"

    def __init__(self, args):
        import jax

        from .train_jax import Config, enable_compilation_cache, make_train

        self.steps = args.jax_envs * args.num_steps
        config = Config(num_envs=args.jax_envs, num_steps=args.num_steps,
                        num_minibatches=self.steps // args.minibatch, update_epochs=args.epochs,
                        net=args.net, total_steps=self.steps * 1000, progress=False)
        enable_compilation_cache()
        init, self._update, self.devices = make_train(config)
        self._runner = init(jax.random.PRNGKey(0))

    def update(self) -> int:
        import jax

        self._runner, metrics = self._update(self._runner)
        jax.block_until_ready(metrics)
        return self.steps


class MaskablePPOTrainer:
    def __init__(self, args, threads: int):
        import torch
        from sb3_contrib import MaskablePPO

        from .train_ppo import TrainConfig, make_vec_env

        self.name = f"train_ppo ({threads} thread{'s' * (threads > 1)})"
        self.threads, self.steps = threads, args.ppo_envs * args.num_steps
        config = TrainConfig(n_envs=args.ppo_envs, vec_env="dummy", n_steps=args.num_steps,
                             batch_size=args.minibatch, n_epochs=args.epochs, net=args.net,
                             opponents=["greedy=0.5", "random=0.05", "self=0.45"],
                             out=tempfile.mkdtemp())
        self._vec_env = make_vec_env(config)
        hidden = config.hidden()
        self._model = MaskablePPO(
            "MlpPolicy", self._vec_env, n_steps=args.num_steps, batch_size=args.minibatch,
            n_epochs=args.epochs, gamma=1.0, policy_kwargs={
                "net_arch": {"pi": hidden, "vf": hidden}, "activation_fn": torch.nn.Tanh},
            seed=0, device="cpu", verbose=0)

    def update(self) -> int:
        import torch

        torch.set_num_threads(self.threads)
        # one rollout of n_steps per env, then the epochs: exactly one PPO update per call
        self._model.learn(self.steps, reset_num_timesteps=False)
        return self.steps

    def close(self) -> None:
        self._vec_env.close()


# -- the interleaved measurement -------------------------------------------------------------
@dataclass
class Rates:
    """One contender's steps per second in each timed round."""

    name: str
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)

    @property
    def median_wall(self) -> float:
        return statistics.median(self.wall)

    @property
    def median_cpu(self) -> float:
        return statistics.median(self.cpu)


def measure(contenders: Sequence, warmup: int, rounds: int,
            clocks: tuple[Callable[[], float], Callable[[], float]] = (time.perf_counter,
                                                                          time.process_time),
            ) -> list[Rates]:
    """Time ``rounds`` rounds, each one ``update()`` of every contender in turn, after
    ``warmup`` untimed rounds; ``clocks`` are (wall, CPU).

    >>> class Fake:  # an update of 100 steps that takes `cost` seconds on a fake clock
    ...     def __init__(self, name, cost): self.name, self.cost = name, cost
    ...     def update(self): now[0] += self.cost; return 100
    >>> now = [0.0]
    >>> a, b = measure([Fake("a", 0.5), Fake("b", 2.0)], 1, 3, (lambda: now[0],) * 2)
    >>> a.wall, b.cpu
    ([200.0, 200.0, 200.0], [50.0, 50.0, 50.0])
    """
    rates = [Rates(c.name) for c in contenders]
    wall_clock, cpu_clock = clocks
    for r in range(warmup + rounds):
        for c, rate in zip(contenders, rates, strict=True):
            wall, cpu = wall_clock(), cpu_clock()
            steps = c.update()
            wall, cpu = wall_clock() - wall, cpu_clock() - cpu
            if r >= warmup:
                rate.wall.append(steps / wall)
                rate.cpu.append(steps / max(cpu, 1e-9))
    return rates


def round_ratios(num: Rates, den: Rates, clock: str) -> list[float]:
    """``num``'s rate over ``den``'s in each round (``clock``: "wall" or "cpu").

    >>> round_ratios(Rates("a", wall=[8.0, 9.0]), Rates("b", wall=[2.0, 3.0]), "wall")
    [4.0, 3.0]
    """
    return [a / b for a, b in zip(getattr(num, clock), getattr(den, clock), strict=True)]


def summary(jax_rates: Rates, ppo_rates: Sequence[Rates]) -> dict:
    """The figures of the last line: ``train_jax`` against the MaskablePPO setting with the
    higher median wall-clock rate, and per CPU-second against the one with the higher median
    CPU rate.

    >>> j = Rates("train_jax", wall=[10.0, 12.0, 11.0], cpu=[6.0, 6.0, 6.0])
    >>> one = Rates("one", wall=[2.0, 2.0, 2.0], cpu=[2.0, 2.0, 2.0])
    >>> two = Rates("two", wall=[2.5, 3.0, 2.5], cpu=[1.5, 1.5, 1.5])
    >>> s = summary(j, [one, two])
    >>> s["ratio"], s["train_ppo"], s["cpu"]["ratio"], s["cpu"]["train_ppo"]
    (4.0, 'two', 3.0, 'one')
    """
    best_wall = max(ppo_rates, key=lambda r: r.median_wall)
    best_cpu = max(ppo_rates, key=lambda r: r.median_cpu)
    wall = round_ratios(jax_rates, best_wall, "wall")
    cpu = round_ratios(jax_rates, best_cpu, "cpu")
    return {
        "train_jax_steps_per_s": round(jax_rates.median_wall, 1),
        "train_ppo_steps_per_s": round(best_wall.median_wall, 1),
        "ratio": round(statistics.median(wall), 3),
        "ratio_range": [round(min(wall), 3), round(max(wall), 3)],
        "train_ppo": best_wall.name,
        "cpu": {"train_jax_steps_per_s": round(jax_rates.median_cpu, 1),
                "train_ppo_steps_per_s": round(best_cpu.median_cpu, 1),
                "ratio": round(statistics.median(cpu), 3),
                "ratio_range": [round(min(cpu), 3), round(max(cpu), 3)],
                "train_ppo": best_cpu.name},
    }


def build_parser() -> OneLineParser:
    p = OneLineParser(prog="python -m experiments.bench_training",
                      description=__doc__.split("\n")[0])
    p.add_argument("--net", default="256,256", help="hidden sizes (policy and value)")
    p.add_argument("--num-steps", type=int, default=32, help="rollout length per environment")
    p.add_argument("--minibatch", type=int, default=1024, help="minibatch size")
    p.add_argument("--epochs", type=int, default=4, help="PPO epochs per update")
    p.add_argument("--jax-envs", type=int, default=256, help="train_jax's parallel games")
    p.add_argument("--ppo-envs", type=int, default=32, help="train_ppo's environments "
                   "(DummyVecEnv: one process, as the shipped policy was trained)")
    p.add_argument("--ppo-threads", type=int, nargs="+", default=None,
                   help="torch thread counts to run MaskablePPO with (default: 1 and every "
                        "core)")
    p.add_argument("--warmup", type=int, default=1, help="untimed rounds first")
    p.add_argument("--updates", type=int, default=5, help="timed rounds (one update of each "
                                                          "contender per round)")
    p.add_argument("--no-matmul", action="store_true",
                   help="skip the network-arithmetic line (a second of plain matrix products)")
    return p


def main(argv: list[str] | None = None) -> int:
    p = build_parser()
    args = p.parse_args(argv)
    for name in ("num_steps", "minibatch", "epochs", "jax_envs", "ppo_envs", "warmup",
                 "updates"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be >= 1")
    threads = sorted(set(args.ppo_threads or (1, os.cpu_count() or 1)))
    if min(threads) < 1:
        p.error("--ppo-threads must be >= 1")
    for envs in (args.jax_envs, args.ppo_envs):
        if (envs * args.num_steps) % args.minibatch:
            p.error(f"envs * --num-steps ({envs * args.num_steps}) must be a multiple of "
                    f"--minibatch ({args.minibatch})")
    from .train_jax import Config  # numpy only: JAX starts in _run

    try:
        hidden = Config(net=args.net).hidden()  # train_jax's own reading of --net
    except ValueError as err:
        p.error(str(err))
    return run_command(lambda: _run(args, threads, hidden), errors=(ImportError,))


def _run(args, threads: list[int], hidden: list[int]) -> int:
    for module, extra in (("optax", "jax"), ("sb3_contrib", "train")):
        require(module, extra, "the training benchmark")  # one line, before any start-up
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    from .train_jax import one_device_per_core

    one_device_per_core()
    jax_trainer = JaxTrainer(args)
    ppo_trainers = [MaskablePPOTrainer(args, t) for t in threads]
    rates = measure([jax_trainer, *ppo_trainers], args.warmup, args.updates)
    for t in ppo_trainers:
        t.close()
    for r in rates:
        print(f"{r.name}: {r.median_wall:,.0f} steps per wall-second, {r.median_cpu:,.0f} per "
              f"CPU-second (medians of {args.updates} rounds)", flush=True)
    result = summary(rates[0], rates[1:])
    lo, hi = result["ratio_range"]
    print(f"ratio {result['ratio']:.2f} per wall-second against {result['train_ppo']} (rounds "
          f"{lo:.2f}-{hi:.2f}; target >= {TARGET_RATIO}); per CPU-second "
          f"{result['cpu']['ratio']:.2f} against {result['cpu']['train_ppo']}; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    result.update(net=args.net, num_steps=args.num_steps, minibatch=args.minibatch,
                  epochs=args.epochs, jax_envs=args.jax_envs, ppo_envs=args.ppo_envs)
    if not args.no_matmul:
        from dominoes_env.core import RuleConfig
        from dominoes_env.encoding import observation_size

        rules = RuleConfig()
        flops = ppo_flops_per_step(observation_size(rules), hidden, rules.num_tiles * 4,
                                   args.epochs)
        peak = matmul_gflops()
        gflops = {r.name: round(r.median_cpu * flops / 1e9, 1) for r in rates}
        print(f"network arithmetic: {flops / 1e6:.2f} MFLOP per step; GFLOP per CPU-second "
              + ", ".join(f"{k} {v}" for k, v in gflops.items())
              + f"; a plain jitted matmul of the update's shape here: {peak:.1f}")
        result.update(gflop_per_cpu_s=gflops, matmul_gflop_per_cpu_s=round(peak, 1))
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
