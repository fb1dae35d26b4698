"""Expert iteration: distil a search agent's decisions back into the reactive policy.

The ``guided`` agent (:mod:`agents.guided`) is a search that uses the PPO policy twice, to weigh
its guesses of the hidden tiles and to play its rollouts, and it beats the policy it uses. One
iteration here

1. plays ``--matches`` matches of the teacher (default ``guided``) against ``--opponents``
   (cycled; an opponent spelled like the teacher is recorded too) and keeps each of the
   teacher's decisions that had a choice: the observation, the legal moves, the move
   (:func:`agents.imitation.collect_demonstrations`), saved to ``demos.npz``
   (:mod:`agents.demos`);
2. fits the policy network, starting from ``--init`` (an exported tanh policy, default the
   shipped observation-version-2 policy, the one ``guided`` reads), to those moves by masked
   cross-entropy with Adam, keeping the parameters with the lowest loss on a held-out tenth
   of the decisions;
3. exports ``policy.npz`` (the format ``ppo:PATH`` plays, with the teacher, the data and the
   held-out accuracy in its JSON) and, with ``--eval-matches N``, plays it against
   ``--eval-against`` (default ``search``; :func:`agents.evaluation.evaluate`).

The demonstrations are encoded in observation version 2 (what
:func:`agents.imitation.collect_demonstrations` records), so the policy reads version 2: an
``--init`` policy or a ``--data`` file of another version is refused before anything is played.

With ``--iterations K`` the next iteration's teacher searches with the policy just fitted
(``guided:policy=PATH``), so search and policy improve each other (Anthony et al., 2017).

    python -m experiments.expert_iteration --out runs/exit --matches 600
    python -m experiments.expert_iteration --out runs/exit2 --data runs/exit/demos.npz

Needs the ``jax`` extra (jax, optax) for the fit.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shlex
import sys
import time
from pathlib import Path

import numpy as np

from agents.demos import DEMO_OBS_VERSION, load_demos, save_demos
from agents.specs import check_spec_path
from dominoes_env.cli_support import (
    MAX_MATCHES,
    CommandError,
    DefaultsHelpFormatter,
    OneLineParser,
    ascii_float,
    ascii_int,
    check_fits_in_memory,
    check_run_folder,
    end_program,
    jax_in_32_bits,
    paths_in_specs,
    print_error,
    quiet_teardown,
    run_command,
    seed_value,
    shown_path,
    start_run_folder,
    stop_status,
)
from dominoes_env.core import RuleConfig
from dominoes_env.core.atomic_files import write_json

#: the observation versions this program can fit: those the demonstrations are encoded in
SERVED_OBS_VERSIONS = (DEMO_OBS_VERSION,)


def fit_actor(actor, data: dict[str, np.ndarray], epochs: int, batch_size: int, lr: float,
              seed: int, holdout: float = 0.1, log=print, best_so_far: dict | None = None):
    """Fit ``actor`` (layers of :mod:`dominoes_env.jax.networks`) to the demonstrations'
    moves by masked cross-entropy; returns the layers with the lowest held-out loss and their
    statistics (held-out loss and accuracy: how often the teacher's move is the policy's most
    probable). ``best_so_far`` (a dict) holds them, with ``"epoch"``, after each epoch that
    improved on the layers fitted from: what an interrupted fit keeps."""
    import jax
    import jax.numpy as jnp
    import optax

    from dominoes_env.jax.networks import masked_logits

    n = len(data["actions"])
    order = np.random.default_rng(seed).permutation(n)
    n_val = max(1, int(n * holdout))
    val, train = order[:n_val], order[n_val:]
    if len(train) < batch_size:
        raise ValueError(f"{len(train)} training decisions ({n} in all, {n_val} held out): "
                         f"fewer than --batch-size {batch_size}")
    obs = jnp.asarray(data["obs"], jnp.float32)
    mask = jnp.asarray(data["masks"], bool)
    act = jnp.asarray(data["actions"], jnp.int32)
    tx = optax.adam(lr)

    def loss(params, idx):
        logits = masked_logits(params, obs[idx], mask[idx])
        nll = -jnp.take_along_axis(jax.nn.log_softmax(logits), act[idx][:, None], 1)[:, 0]
        return nll.mean(), (jnp.argmax(logits, 1) == act[idx]).mean()

    @jax.jit
    def step(params, opt, idx):
        (value, _), grads = jax.value_and_grad(loss, has_aux=True)(params, idx)
        updates, opt = tx.update(grads, opt, params)
        return optax.apply_updates(params, updates), opt, value

    held_out = jax.jit(loss)
    params = jax.tree.map(jnp.asarray, actor)
    opt = tx.init(params)
    rng = np.random.default_rng(seed + 1)
    best_loss, best_acc = (float(x) for x in held_out(params, val))
    best = params
    log(f"[fit] {len(train):,} decisions, {n_val:,} held out; before: held-out loss "
        f"{best_loss:.4f}, accuracy {best_acc:.3f}")
    started = time.time()
    for epoch in range(epochs):
        perm = rng.permutation(train)
        for start in range(0, len(perm) - batch_size + 1, batch_size):
            params, opt, _ = step(params, opt, perm[start:start + batch_size])
        v_loss, v_acc = (float(x) for x in held_out(params, val))
        mark = ""
        if v_loss < best_loss:
            best, best_loss, best_acc, mark = params, v_loss, v_acc, " *"
            if best_so_far is not None:
                best_so_far.update(actor=jax.tree.map(np.asarray, best), epoch=epoch + 1,
                                   stats={"heldout_loss": best_loss, "heldout_accuracy":
                                          best_acc, "decisions": n, "heldout": n_val})
        log(f"[fit] epoch {epoch + 1}/{epochs}: held-out loss {v_loss:.4f}, accuracy "
            f"{v_acc:.3f} ({time.time() - started:.0f} s){mark}")
    return jax.tree.map(np.asarray, best), {"heldout_loss": best_loss, "heldout_accuracy":
                                            best_acc, "decisions": n, "heldout": n_val}


def build_parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="python -m experiments.expert_iteration",
                                description=__doc__.split("\n")[0],
                                formatter_class=DefaultsHelpFormatter)
    p.add_argument("--out", required=True, help="output directory (demos.npz, policy.npz, "
                   "policy.json, one folder per iteration after the first)")
    p.add_argument("--players", type=ascii_int, choices=(2, 3, 4), default=2,
                   help="2, 3 or 4 (4: partnerships)")
    p.add_argument("--teacher", default="guided", help="the agent spec whose moves are learned; "
                   "'guided' searches with the policy being fitted from the second iteration")
    p.add_argument("--opponents", nargs="+", default=["guided", "search"],
                   help="the teacher's opponents, cycled over the matches")
    p.add_argument("--matches", type=ascii_int, default=600, help="matches played per iteration")
    p.add_argument("--data", default="", help="a demos.npz to fit instead of playing (first "
                   "iteration)")
    p.add_argument("--init", default="ppo", help="the policy the fit starts from: 'ppo' (the "
                   "observation-version-2 policy guided reads by default) or a tanh policy "
                   "file reading observation version 2")
    p.add_argument("--iterations", type=ascii_int, default=1, help="play-and-fit rounds")
    p.add_argument("--epochs", type=ascii_int, default=20, help="passes over the decisions")
    p.add_argument("--batch-size", type=ascii_int, default=512, help="decisions per Adam step")
    p.add_argument("--lr", type=ascii_float, default=1e-4, help="Adam learning rate")
    p.add_argument("--eval-against", default="search", help="agent spec the result plays")
    p.add_argument("--eval-matches", type=ascii_int, default=0, help="matches against "
                   "--eval-against after each iteration (0: none)")
    p.add_argument("--workers", type=ascii_int, default=max(1, (os.cpu_count() or 1)),
                   help="processes playing the teacher's matches")
    p.add_argument("--seed", type=seed_value, default=0, help="seed of the matches and the fit")
    p.add_argument("--overwrite", action="store_true",
                   help="replace the run that --out holds (its files are removed)")
    return p


#: the most of each count a run may ask for: beyond them a value is a mistake (a run of that
#: length would not end), checked before anything starts; --matches as every program's
#: (:data:`~dominoes_env.cli_support.MAX_MATCHES`), which a demonstrations file's count is too
MAX_ITERATIONS, MAX_EPOCHS, MAX_EVAL_MATCHES, MAX_LR = 10_000, 100_000, 10**7, 1.0
#: memory estimates for the checks against this machine's: one match's demonstrations (a
#: teacher's decisions, observation and mask each, rounded up)
DEMO_BYTES_PER_MATCH = 65536
#: one decision of a minibatch (its input, activations and gradients), one worker process
BYTES_PER_DECISION, BYTES_PER_WORKER = 16384, 256 * 2**20


def check_args(args) -> None:
    """``ValueError`` (one line, naming the flag) for a count or a rate a run cannot use: below
    1, above its cap, or more than this machine's memory holds; and an ``--out`` folder that
    cannot be made or written into."""
    for name in ("matches", "iterations", "epochs", "batch_size", "workers"):
        if getattr(args, name) < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be >= 1")
    if args.eval_matches < 0:
        raise ValueError(f"--eval-matches must be >= 0, not {args.eval_matches:,}")
    if not 0 < args.lr <= MAX_LR:  # NaN too
        raise ValueError(f"--lr must be a number in (0, {MAX_LR:g}], not {args.lr!r}")
    for flag, value, cap in (("--matches", args.matches, MAX_MATCHES),
                             ("--iterations", args.iterations, MAX_ITERATIONS),
                             ("--epochs", args.epochs, MAX_EPOCHS),
                             ("--eval-matches", args.eval_matches, MAX_EVAL_MATCHES)):
        if value > cap:
            raise ValueError(f"{flag} must be at most {cap:,}, not {value:,}")
    check_fits_in_memory(f"--matches {args.matches}", args.matches, DEMO_BYTES_PER_MATCH)
    check_fits_in_memory(f"--batch-size {args.batch_size}", args.batch_size, BYTES_PER_DECISION)
    check_fits_in_memory(f"--workers {args.workers}", args.workers, BYTES_PER_WORKER)
    return run_folder(args)


#: what a run's folder holds (an --out holding only these, without a run marker, is a run's)
OUTPUTS = ("demos.npz", "policy.npz", "policy.json")


def run_folder(args):
    """``--out`` checked by the output policy (:func:`check_run_folder`): a new or empty folder,
    or ``--overwrite`` (a run is never continued); never one of its input files; a folder
    whose policies an agent spec can name (:func:`agents.specs.check_spec_path`: its
    evaluation plays ``ppo:OUT/policy.npz``, its teacher ``guided:policy=OUT/policy.npz``)."""
    check_spec_path("--out", args.out, folder=True)
    settings = {k: v for k, v in vars(args).items() if k not in ("out", "overwrite")}
    outputs = (*OUTPUTS, "iteration[0-9]*")  # an earlier run's iterations too
    init = args.init if args.init != "ppo" else None
    return check_run_folder(args.out, "experiments.expert_iteration", settings,
                            overwrite=args.overwrite, outputs=outputs, resumable=False,
                            inputs=(args.data or None, init,
                                    *paths_in_specs([args.teacher, *args.opponents,
                                                     args.eval_against])))


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run_command(lambda: _main(args, argv))


def _main(args: argparse.Namespace, argv: list[str] | None) -> int:
    command = "python -m experiments.expert_iteration " + " ".join(
        shlex.quote(a) for a in (sys.argv[1:] if argv is None else argv))
    try:
        rules = RuleConfig(num_players=args.players)
        folder = check_args(args)  # the flags first: a bad one is refused before JAX starts
        from agents import check_spec
        from agents.guided import guided_policy_path
        from agents.imitation import demonstration_pool
        from dominoes_env.policy_format import read_actor

        for spec in (args.teacher, *args.opponents, args.eval_against):
            check_spec(spec, rules)
        # demonstrations are encoded in observation version 2: start from the version 2 policy
        init = str(guided_policy_path(args.players)) if args.init == "ppo" else args.init
        if args.teacher == "guided" and args.init != "ppo":  # its first teacher plays
            check_spec_path("--init", init)  # guided:policy=INIT (teacher_spec)
        actor, version = read_actor(init, rules)  # the JAX networks' policy, read by numpy
        if version not in SERVED_OBS_VERSIONS:
            raise ValueError(f"--init {init!r} reads observation version {version}; expert "
                             f"iteration serves version "
                             f"{', '.join(map(str, SERVED_OBS_VERSIONS))} (the demonstrations' "
                             f"encoding)")
        data, teacher = load_demos(args.data, rules) if args.data else (None, "")
    except (ValueError, TypeError) as err:  # what the readers raise: one line, never a trace
        raise CommandError(str(err)) from None
    with contextlib.ExitStack() as stack:
        # every input is checked, and JAX has not started: the teacher's matches are played in
        # processes forked now (a fork of a process running JAX's threads can deadlock the
        # child), one pool for every iteration
        plays = data is None or args.iterations > 1
        pool = (stack.enter_context(demonstration_pool(args.workers))
                if plays and args.workers > 1 else None)
        return _run(args, rules, folder, command, pool, init, actor, data, teacher)


def _run(args: argparse.Namespace, rules: RuleConfig, folder, command: str, pool, init: str,
         actor, data, teacher: str) -> int:
    """The iterations, once every input is checked: from the policy `init` (its layers
    `actor`), the first fitting `data` (`--data`'s decisions, by `teacher`) when given, the
    matches played in `pool` (a process pool, or None to play them here)."""
    jax_in_32_bits("expert_iteration")
    out = Path(start_run_folder(folder))
    policy_path = init
    # what the iteration under way has done, for an interruption to save (see kept_on_stop)
    now: dict = {}
    try:
        for it in range(args.iterations):
            here = out if it == 0 else out / f"iteration{it + 1}"
            here.mkdir(parents=True, exist_ok=True)
            now = {"here": here, "it": it, "teacher": teacher, "init": init, "finished": [],
                   "fit": {}, "policy": None}
            if data is None:
                teacher = now["teacher"] = teacher_spec(args, policy_path)
                data = play(args, rules, teacher, here, it, now["finished"], pool)
            now["fitting"] = True
            try:
                actor, stats = fit_actor(actor, data, args.epochs, args.batch_size, args.lr,
                                         args.seed + it, best_so_far=now["fit"])
            except ValueError as err:  # too few decisions for a minibatch
                if it == 0 and args.data:  # nothing was played: the decisions are --data's
                    raise CommandError(f"{err}: --data {args.data} holds too few; give a "
                                       "smaller --batch-size or more decisions") from None
                raise CommandError(f"{err}; play more --matches (the decisions played are "
                                   f"saved in {here / 'demos.npz'})") from None
            policy_path = str(here / "policy.npz")
            export(actor, policy_path, rules, args, teacher, init, stats, command)
            now["policy"] = policy_path
            print(f"[iteration {it + 1}] policy: {shown_path(policy_path)} (held-out accuracy "
                  f"{stats['heldout_accuracy']:.3f} on {stats['heldout']:,} decisions)",
                  flush=True)
            if args.eval_matches:
                report(policy_path, rules, args, it)
            init, data = policy_path, None
    except KeyboardInterrupt as stop:  # Ctrl-C, SIGTERM, SIGHUP: save what is under way
        quiet_teardown()
        status, words = stop_status(stop)
        print_error(f"{words}; {kept_on_stop(now, args, rules, command)}")
        return status
    return 0


def kept_on_stop(now: dict, args, rules: RuleConfig, command: str) -> str:
    """Save what the interrupted iteration ``now`` had done, and say what is kept: the
    decisions of the matches it finished (``demos.npz``), or the best fit so far
    (``policy.npz``, its JSON saying at which epoch it stopped), or its finished policy."""
    if not now:
        return "nothing was played or fitted yet"
    here, it = now["here"], now["it"]
    if now["policy"]:
        return f"iteration {it + 1}'s policy is saved in {now['policy']}"
    fit = now["fit"]
    if fit:
        path = str(here / "policy.npz")
        stats = {**fit["stats"], "stopped_at_epoch": fit["epoch"]}
        export(fit["actor"], path, rules, args, now["teacher"], now["init"], stats, command)
        return (f"the best fit so far (epoch {fit['epoch']} of {args.epochs}) is exported to "
                f"{path}")
    if (here / "demos.npz").is_file():
        return f"the decisions played are saved in {here / 'demos.npz'}"
    if now["finished"]:
        from agents.imitation import join_demonstrations

        count = len(now["finished"])
        save_demos(here / "demos.npz", join_demonstrations(now["finished"]),
                   demos_meta(args, rules, now["teacher"], count))
        return (f"the decisions of the {count} finished matches are saved in "
                f"{here / 'demos.npz'} (fit them with --data and another --out)")
    if now.get("fitting"):
        return (f"iteration {it + 1}'s fit had not improved on the policy it starts from: "
                f"nothing of it is saved")
    return f"no match of iteration {it + 1} was finished"


def teacher_spec(args, policy_path: str) -> str:
    """An iteration's teacher: ``guided`` searches with the policy that iteration's fit starts
    from; any other spec plays as given."""
    return f"guided:policy={policy_path}" if args.teacher == "guided" else args.teacher


def play(args, rules: RuleConfig, teacher: str, here: Path, it: int,
         finished: list | None = None, pool=None):
    """The teacher's decisions in an iteration's matches, saved to ``here/demos.npz``;
    ``finished`` receives each match's as it ends (:func:`collect_demonstrations`, in
    ``pool`` when given)."""
    from agents.arena import derive_seed
    from agents.imitation import collect_demonstrations

    started = time.time()
    data = collect_demonstrations(teacher, opponents_of(args, teacher), rules, args.matches,
                                  derive_seed(args.seed, "exit", it), args.workers,
                                  progress=True, finished=finished, pool=pool)
    print(f"[play] {len(data['actions']):,} decisions of {teacher} in {args.matches} matches "
          f"({time.time() - started:.0f} s)", flush=True)
    save_demos(here / "demos.npz", data, demos_meta(args, rules, teacher, args.matches))
    return data


def opponents_of(args, teacher: str) -> list[str]:
    """The teacher's opponents: an opponent spelled like ``--teacher`` is this teacher."""
    return [teacher if o == args.teacher else o for o in args.opponents]


def demos_meta(args, rules: RuleConfig, teacher: str, matches: int) -> dict:
    """What ``demos.npz`` records of how its ``matches`` matches were played."""
    return {"teacher": teacher, "opponents": opponents_of(args, teacher), "matches": matches,
            "seed": args.seed, "rules": rules.to_dict()}


def export(actor, path: str, rules: RuleConfig, args, teacher: str, init: str, stats: dict,
           command: str) -> None:
    from dominoes_env.jax.policy_files import export_npz

    meta = {"rules": rules.to_dict(), "obs_version": SERVED_OBS_VERSIONS[0],
            "trainer": "experiments.expert_iteration", "teacher": teacher, "init": init,
            "seed": args.seed, **stats, "command": command}
    export_npz(actor, Path(path), meta)
    write_json(Path(path).with_suffix(".json"), meta)


def report(policy_path: str, rules: RuleConfig, args, it: int) -> None:
    from agents.arena import derive_seed
    from agents.evaluation import evaluate

    res = evaluate(f"ppo:{policy_path}", args.eval_against, rules, matches=args.eval_matches,
                   seed=derive_seed(args.seed, "exit-eval", it))
    print(f"[iteration {it + 1}] wins {res['win_rate']:.1%} of {res['matches']} matches "
          f"against {args.eval_against} [{res['ci_low']:.1%}, {res['ci_high']:.1%}]")
    print(json.dumps({"iteration": it + 1, "policy": policy_path,
                      "against": args.eval_against, **res}), flush=True)


if __name__ == "__main__":
    end_program(main())
