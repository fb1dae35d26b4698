"""What each program writes into its run folder (:data:`PROGRAM_OUTPUTS`), and which of those
outputs are folders (:data:`OUTPUT_FOLDERS`): held here in the code, never read from a run's
marker, as the list of what ``--overwrite`` may remove of a program's run (:mod:`.run_removal`)
and of what the output policy checks in a folder a run continues (:mod:`.run_folders`)."""

from __future__ import annotations

_TOURNAMENT_OUTPUTS = ("config.json", "matches.jsonl", "summary.json", "winrate_heatmap.png",
                       "ratings.png", "records")


#: what each program writes into its run folder (names or ``fnmatch`` patterns): all that
#: ``--overwrite`` removes of a run of that program, held here in the code and never read from
#: the run's marker, whose ``"outputs"`` anyone can edit to name the user's own files (each
#: program passes the same list to :func:`check_run_folder`; a test holds them equal)
PROGRAM_OUTPUTS: dict[str, tuple[str, ...]] = {
    "experiments.tournament": _TOURNAMENT_OUTPUTS,
    "experiments.demo": _TOURNAMENT_OUTPUTS,
    "experiments.make_dataset": (*_TOURNAMENT_OUTPUTS, "decisions", "dataset.json"),
    "experiments.benchmark": ("benchmark.json", "card.json", "card.png", "matches"),
    "experiments.train_ppo": ("pool", "config.json", "tb", "eval.csv", "eval.csv.damaged*",
                              "eval_policy.npz", "throughput.json", "checkpoints", "bc.json",
                              "policy.npz", "policy.json"),
    "experiments.train_jax": ("config.json", "tb", "eval.csv", "eval.csv.damaged*",
                              "eval_policy.npz", "checkpoint.npz", "throughput.json",
                              "policy.npz", "policy.json"),
    "experiments.train_rllib": ("progress.csv", "tb", "eval.csv", "eval.csv.damaged*",
                                "eval_policy.npz", "checkpoint", "policy.npz", "policy.json"),
    "experiments.expert_iteration": ("demos.npz", "policy.npz", "policy.json",
                                     "iteration[0-9]*"),
}  # fmt: skip

#: which of each program's outputs (:data:`PROGRAM_OUTPUTS`) are folders; the others are files.
#: A resumed run found a folder where it appends a file (``eval.csv``) only after it had trained
#: and saved its checkpoint, and a file where it writes a folder (``tb``) as a raw errno line
OUTPUT_FOLDERS: dict[str, tuple[str, ...]] = {
    "experiments.tournament": ("records",),
    "experiments.demo": ("records",),
    "experiments.make_dataset": ("records", "decisions"),
    "experiments.benchmark": ("matches",),
    "experiments.train_ppo": ("pool", "tb", "checkpoints"),
    "experiments.train_jax": ("tb",),
    "experiments.train_rllib": ("tb", "checkpoint"),
    "experiments.expert_iteration": ("iteration[0-9]*",),
}  # fmt: skip
