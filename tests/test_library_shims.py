"""The names of release 0.1.0 that moved (the library out of ``experiments/``, issue 31, and
modules renamed for what they hold) are still importable from their old module paths for one
version: the same object, with a ``DeprecationWarning`` naming the new home. Names that moved
before any release had them have no alias."""

from __future__ import annotations

import importlib

import pytest

from dominoes_env.core import DominoesDeprecationWarning

#: (old module, name, new module)
MOVED = [
    ("experiments.arena", "play_match", "agents.arena"),
    ("experiments.arena", "MatchResult", "agents.arena"),
    ("experiments.arena", "AgentError", "agents.arena"),
    ("experiments.arena", "derive_seed", "agents.arena"),
    ("experiments.arena", "DEFAULT_MAX_HANDS", "agents.arena"),
    ("experiments.arena", "DEFAULT_MOVE_TIMEOUT", "agents.arena"),
    ("experiments.tournament.stats", "wilson_interval", "agents.tournament.stats"),
    ("experiments.tournament.stats", "Z95", "agents.tournament.stats"),
    ("experiments.tournament", "TournamentConfig", "agents.tournament"),
    ("experiments.tournament", "run_tournament", "agents.tournament"),
    ("experiments.tournament", "build_summary", "agents.tournament"),
    ("experiments.tournament.runner", "run_tournament", "agents.tournament.runner"),
    ("experiments.tournament.runner", "MATCHES_FILE", "agents.tournament.runner"),
    ("experiments.tournament.runner", "clear_results", "agents.tournament.runner"),
    ("experiments.tournament.schedule", "make_schedule", "agents.tournament.schedule"),
    ("experiments.tournament.report", "win_matrix", "agents.tournament.report"),
    ("experiments.behavior_cloning", "collect_demonstrations", "agents.imitation"),
    ("experiments.behavior_cloning", "dataset_demonstrations", "agents.imitation"),
    ("experiments.behavior_cloning", "pretrain_policy", "agents.imitation"),
    ("experiments.bench_agents", "positions", "agents.positions"),
    ("experiments.bench_env", "run_aec", "dominoes_env.throughput"),
    # a module renamed for what it holds
    ("dominoes_env.record_files", "read_record", "dominoes_env.record_io"),
    ("dominoes_env.record_files", "append_records", "dominoes_env.record_io"),
    # game logic the OpenSpiel game needs, moved below agents
    ("agents.sampling", "DealSampler", "dominoes_env.core.sampling"),
    ("agents.sampling", "determinize", "dominoes_env.core.sampling"),
]


@pytest.mark.parametrize(("old", "name", "new"), MOVED)
def test_old_path_warns_and_gives_the_new_object(old, name, new):
    module = importlib.import_module(old)
    with pytest.warns(DominoesDeprecationWarning, match=new.replace(".", r"\.")):
        value = getattr(module, name)
    assert value is getattr(importlib.import_module(new), name)


@pytest.mark.parametrize("old", sorted({old for old, _, _ in MOVED}))
def test_old_path_refuses_unknown_names(old):
    module = importlib.import_module(old)
    with pytest.raises(AttributeError, match="no_such_name"):
        module.no_such_name  # noqa: B018


def test_train_ppo_evaluate_is_the_one_evaluator(tmp_path):
    from agents.evaluation import evaluate
    from agents.ppo import random_policy_npz
    from dominoes_env.core import RuleConfig
    from experiments import train_ppo

    rules = RuleConfig(target_score=30)
    path = tmp_path / "policy.npz"
    random_policy_npz(path, rules, hidden=(8,), seed=1)
    with pytest.warns(DominoesDeprecationWarning, match=r"agents\.evaluation\.evaluate"):
        old = train_ppo.evaluate(str(path), rules, "greedy", 4, 2)
    assert old == evaluate(f"ppo:{path}", "greedy", rules, matches=4, seed=2)


#: the old modules that are whole shims (the others are programs that kept a few names)
SHIMS = sorted({old for old, _, _ in MOVED if old.startswith("experiments.")
                and old not in ("experiments.tournament", "experiments.bench_agents",
                                "experiments.bench_env")})


@pytest.mark.parametrize("old", SHIMS)
def test_a_shim_run_as_a_program_says_where_its_names_moved(old):
    """``python -m experiments.arena`` (a shim) ran nothing, printed nothing and exited 0."""
    import subprocess
    import sys

    new = next(n for o, _, n in MOVED if o == old)
    done = subprocess.run([sys.executable, "-m", old, "--help"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2 and done.stdout == "", done
    assert done.stderr == (f"error: python -m {old} runs nothing: it is a deprecated module "
                           f"whose names moved to {new} (import them from there)\n")


def _hand():
    from dominoes_env.core import HandState, RuleConfig

    return HandState.from_tiles(RuleConfig(), leader=0, hands=[
        [(6, 6), (6, 3), (1, 2), (0, 0), (2, 2), (3, 3), (4, 5)],
        [(5, 5), (0, 1), (1, 1), (2, 3), (3, 4), (0, 6), (1, 6)]])  # fmt: skip


def _old_policy_path():
    from agents.ppo import renamed_policy_path, shipped_policy_path

    return renamed_policy_path(shipped_policy_path(4).parent / "ppo_4p.npz")


#: every other kind of deprecation the project has, each called its old way
OLD_USES = {
    "HandState.apply": lambda: _hand().apply(_hand().legal_actions()[0]),
    "MatchState.apply": lambda: __import__("dominoes_env").MatchState(seed=1).apply(
        __import__("dominoes_env").MatchState(seed=1).legal_actions()[0]),
    "hand_sizes()": lambda: _hand().hand_sizes(),
    "a v0 env id": lambda: __import__("gymnasium").make("dominoes/StraightDominoes-v0"),
    "dominoes_env.encoding": lambda: __import__("dominoes_env.encoding").encoding.OBS_VERSION,
    "a renamed shipped policy": _old_policy_path,
}


@pytest.mark.parametrize("use", sorted(OLD_USES))
def test_every_deprecation_is_the_project_s_own_category(use):
    """The README's examples turn the project's deprecations into errors, and caught only those
    whose message named a module: four of six kinds (``HandState.apply``, ``hand_sizes()``, the
    v0 ids, a renamed policy file) passed in silence. Every one warns with
    ``DominoesDeprecationWarning`` (a ``DeprecationWarning``), which the examples catch."""
    import dominoes_env  # noqa: F401  (registers the ids)

    with pytest.warns(DominoesDeprecationWarning):
        OLD_USES[use]()
