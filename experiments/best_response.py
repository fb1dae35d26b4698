"""Approximate exploitability: train a best response against a frozen agent, report its win rate.

    python -m experiments.best_response --agent greedy --steps 5000000
    python -m experiments.best_response --agent ppo --steps 5000000          # the shipped policy
    python -m experiments.best_response --agent search --steps 300000        # MaskablePPO path

A jittable agent (``greedy``, ``random``, ``ppo`` / ``ppo:PATH`` with a tanh policy, ported to
JAX as the same MLP) is the only opponent of a :mod:`experiments.train_jax` run from scratch;
any other agent spec is the only opponent of a MaskablePPO run (:mod:`experiments.train_ppo`,
``SingleAgentEnv``). The best response then plays ``--matches`` matches against the agent
through the tournament arena (seats swapped on each deal); the higher its win rate, the more
exploitable the agent (50% against itself would be a Nash equilibrium's ceiling for a zero-sum
game). The last line is a JSON object with the win rate and its Wilson 95% interval.
"""

from __future__ import annotations

import json
import shlex
import sys
import tempfile
from pathlib import Path

from dominoes_env.cli_support import OneLineParser


def jittable(spec: str) -> tuple[str, str] | None:
    """``(kind, path)`` for the agents train_jax plays inside jit, else ``None``."""
    if spec in ("greedy", "random"):
        return spec, ""
    if spec == "ppo" or spec.startswith("ppo:"):
        return "ppo", spec.partition(":")[2]
    return None


def main(argv: list[str] | None = None) -> int:
    p = OneLineParser(prog="python -m experiments.best_response",
                                description=__doc__.split("\n")[0])
    p.add_argument("--agent", required=True, help="the frozen agent's spec (greedy, ppo, "
                   "ppo:PATH, search, ...)")
    p.add_argument("--steps", type=int, required=True, help="training steps of the best response")
    p.add_argument("--players", type=int, default=2, help="2, 3 or 4 (4: partnerships)")
    p.add_argument("--matches", type=int, default=1000, help="evaluation matches")
    p.add_argument("--num-envs", type=int, default=512, help="train_jax's parallel games")
    p.add_argument("--seed", type=int, default=0, help="seed of the training and evaluation")
    p.add_argument("--out", default="", help="where the run goes (default: a temporary folder)")
    args = p.parse_args(argv)
    try:
        from agents import resolve_spec

        resolve_spec(args.agent)
        if args.steps < 1 or args.matches < 1:
            raise ValueError("--steps and --matches must be >= 1")
        out = Path(args.out or tempfile.mkdtemp(prefix="best_response_"))
        how = jittable(args.agent)
        common = ["--players", str(args.players), "--total-steps", str(args.steps),
                  "--seed", str(args.seed), "--out", str(out)]
        if how is not None:
            from agents.ppo import shipped_policy_path

            from . import train_jax

            kind, path = how
            mix = {"self": 0, "snapshot": 0, "greedy": 0, "random": 0}
            flags = [*common, "--eval-every", "0", "--eval-matches", "2", "--num-envs",
                     str(args.num_envs)]
            if kind == "ppo":
                from agents.ppo import NumpyPolicy

                path = path or str(shipped_policy_path(args.players))
                # the response reads what the frozen policy reads (one observation per game)
                version = NumpyPolicy(path).obs_spec.version
                flags += ["--opp-policy", path, "--opp-policy-weight", "1",
                          "--obs-version", str(version)]
            else:
                mix[kind] = 1
            for name, w in mix.items():
                flags += [f"--opp-{name}", str(w)]
            train_jax.Config(**vars(train_jax.build_parser().parse_args(flags)))  # validate
            trainer = "train_jax"
        else:
            from . import train_ppo

            flags = [*common, "--n-envs", "16", "--vec-env", "dummy",
                     "--opponents", f"{args.agent}=1", "--eval-every", str(args.steps),
                     "--eval-matches", "2"]
            train_ppo.TrainConfig(**vars(train_ppo.parser_for(train_ppo.TrainConfig)
                                         .parse_args(flags)))
            trainer = "train_ppo"
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(f"best response to {args.agent}: python -m experiments.{trainer} "
          + " ".join(shlex.quote(f) for f in flags), flush=True)
    if trainer == "train_jax":
        code = train_jax.main(flags)
    else:
        code = train_ppo.main(flags)
    if code:
        return code
    from agents.arena import derive_seed
    from dominoes_env.core import RuleConfig

    from .train_ppo import evaluate

    res = evaluate(str(out / "policy.npz"), RuleConfig(num_players=args.players), args.agent,
                   args.matches, derive_seed(args.seed, "best_response"))
    print(f"best response wins {res['win_rate']:.1%} of {res['matches']} matches against "
          f"{args.agent} [{res['ci_low']:.1%}, {res['ci_high']:.1%}], margin "
          f"{res['margin']:+.1f}")
    print(json.dumps({"agent": args.agent, "steps": args.steps, "trainer": trainer,
                      "policy": str(out / "policy.npz"), **res}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
