"""Training throughput: ``train_jax`` (rollout + update in one jitted function) next to
``train_ppo`` (MaskablePPO on ``SingleAgentEnv``), same network and PPO settings, same run.

Both train the same network (policy and value MLPs ``--net``, tanh) with the same rollout
length (``--num-steps``), minibatch size (``--minibatch``) and epochs (``--epochs``), on two
players against a self-play mix (train_jax: its default mix; train_ppo: greedy / random / its
own pool). Each trainer first runs ``--warmup`` updates (start-up and compilation, not timed),
then its steady state is timed over ``--updates`` updates. Time is this process's CPU time
(``time.process_time``, all threads), so other load on a shared machine skews the figures less
than wall-clock time; wall-clock figures are printed too. The last line is a JSON object with
``train_jax_steps_per_s``, ``train_ppo_steps_per_s`` and ``ratio``.

    python -m experiments.bench_training [--updates 3] [--jax-envs 256] [--ppo-envs 32]

Target (issue 12): ratio >= 4.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time

from dominoes_env.cli_support import OneLineParser

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


def bench_jax(args) -> dict[str, float]:
    import jax

    from .train_jax import Config, enable_compilation_cache, make_train

    batch = args.jax_envs * args.num_steps
    config = Config(num_envs=args.jax_envs, num_steps=args.num_steps,
                    num_minibatches=batch // args.minibatch, update_epochs=args.epochs,
                    net=args.net, total_steps=batch * 1000, progress=False)
    enable_compilation_cache()
    init, update = make_train(config)
    runner = init(jax.random.PRNGKey(0))
    for _ in range(args.warmup):
        runner, metrics = update(runner)
        jax.block_until_ready(metrics)
    cpu, wall = time.process_time(), time.perf_counter()
    for _ in range(args.updates):
        runner, metrics = update(runner)
        jax.block_until_ready(metrics)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    steps = batch * args.updates
    return {"steps": steps, "cpu_steps_per_s": steps / cpu, "wall_steps_per_s": steps / wall}


def bench_ppo(args) -> dict[str, float]:
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback

    from .train_ppo import TrainConfig, make_vec_env

    torch.set_num_threads(1)
    config = TrainConfig(n_envs=args.ppo_envs, vec_env="dummy", n_steps=args.num_steps,
                         batch_size=args.minibatch, n_epochs=args.epochs, net=args.net,
                         opponents=["greedy=0.5", "random=0.05", "self=0.45"],
                         out=tempfile.mkdtemp())
    vec_env = make_vec_env(config)
    hidden = config.hidden()
    model = MaskablePPO(
        "MlpPolicy", vec_env, n_steps=args.num_steps, batch_size=args.minibatch,
        n_epochs=args.epochs, gamma=1.0, policy_kwargs={
            "net_arch": {"pi": hidden, "vf": hidden}, "activation_fn": torch.nn.Tanh},
        seed=0, device="cpu", verbose=0)
    marks: list[tuple[int, float, float]] = []

    class Clock(BaseCallback):
        def _on_rollout_start(self) -> None:  # one mark per update (rollout + training)
            marks.append((self.model.num_timesteps, time.process_time(), time.perf_counter()))

        def _on_step(self) -> bool:
            return True

    batch = args.ppo_envs * args.num_steps
    model.learn(batch * (args.warmup + args.updates + 1), callback=Clock())
    vec_env.close()
    (s0, c0, w0), (s1, c1, w1) = marks[args.warmup], marks[args.warmup + args.updates]
    return {"steps": s1 - s0, "cpu_steps_per_s": (s1 - s0) / (c1 - c0),
            "wall_steps_per_s": (s1 - s0) / (w1 - w0)}


def main(argv: list[str] | None = None) -> int:
    p = OneLineParser(prog="python -m experiments.bench_training",
                                description=__doc__.split("\n")[0])
    p.add_argument("--net", default="256,256", help="hidden sizes (policy and value)")
    p.add_argument("--num-steps", type=int, default=32, help="rollout length per environment")
    p.add_argument("--minibatch", type=int, default=1024, help="minibatch size")
    p.add_argument("--epochs", type=int, default=4, help="PPO epochs per update")
    p.add_argument("--jax-envs", type=int, default=256, help="train_jax's parallel games")
    p.add_argument("--ppo-envs", type=int, default=32, help="train_ppo's environments "
                   "(DummyVecEnv: one process, as the shipped policy was trained)")
    p.add_argument("--warmup", type=int, default=1, help="updates before timing")
    p.add_argument("--updates", type=int, default=3, help="timed updates per trainer")
    args = p.parse_args(argv)
    for name in ("num_steps", "minibatch", "epochs", "jax_envs", "ppo_envs", "warmup",
                 "updates"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be >= 1")
    for envs in (args.jax_envs, args.ppo_envs):
        if (envs * args.num_steps) % args.minibatch:
            p.error(f"envs * --num-steps ({envs * args.num_steps}) must be a multiple of "
                    f"--minibatch ({args.minibatch})")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    jax_res = bench_jax(args)
    print(f"train_jax: {jax_res['cpu_steps_per_s']:,.0f} steps per CPU-second "
          f"({jax_res['wall_steps_per_s']:,.0f} per wall second), {args.jax_envs} games",
          flush=True)
    ppo_res = bench_ppo(args)
    print(f"train_ppo: {ppo_res['cpu_steps_per_s']:,.0f} steps per CPU-second "
          f"({ppo_res['wall_steps_per_s']:,.0f} per wall second), {args.ppo_envs} envs",
          flush=True)
    ratio = jax_res["cpu_steps_per_s"] / ppo_res["cpu_steps_per_s"]
    print(f"ratio {ratio:.2f} (target >= {TARGET_RATIO}); load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    from dominoes_env.core import RuleConfig
    from dominoes_env.encoding import observation_size

    rules = RuleConfig()
    flops = ppo_flops_per_step(observation_size(rules), [int(x) for x in args.net.split(",")],
                               rules.num_tiles * 4, args.epochs)
    peak = matmul_gflops()
    gflops = {k: round(r["cpu_steps_per_s"] * flops / 1e9, 1)
              for k, r in (("train_jax", jax_res), ("train_ppo", ppo_res))}
    print(f"network arithmetic: {flops / 1e6:.2f} MFLOP per step; train_jax "
          f"{gflops['train_jax']} GFLOP per CPU-second, train_ppo {gflops['train_ppo']}; a "
          f"plain jitted matmul of the update's shape here: {peak:.1f}")
    print(json.dumps({"train_jax_steps_per_s": round(jax_res["cpu_steps_per_s"], 1),
                      "train_ppo_steps_per_s": round(ppo_res["cpu_steps_per_s"], 1),
                      "ratio": round(ratio, 3),
                      "wall": {"train_jax": round(jax_res["wall_steps_per_s"], 1),
                               "train_ppo": round(ppo_res["wall_steps_per_s"], 1)},
                      "gflop_per_cpu_s": gflops, "matmul_gflop_per_cpu_s": round(peak, 1),
                      "net": args.net, "num_steps": args.num_steps,
                      "minibatch": args.minibatch, "epochs": args.epochs}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
