"""Helpers shared by test modules: scripted deals (a worked example played move by move through
the engine), the rule and env configurations the property tests cover, random matches and game
records (good and broken), and the tournament command line run as a subprocess.

A test module imports what it shares from here, never from another test module.
"""

from __future__ import annotations

import argparse
import copy
import importlib
import os
import random
import subprocess
import sys
import time
from pathlib import Path

from dominoes_env.core import HandState, MatchState, RuleConfig

#: the repository root (where ``python -m experiments.tournament`` runs)
ROOT = Path(__file__).resolve().parents[1]

#: how long a test waits for a child process (a ``python -m`` run, a line it prints, a file it
#: writes) before calling it hung. A guard against hangs, never a speed test: a machine at a
#: load of 8 stretches a child's start-up (numpy, torch, JAX imports) five-fold and more, and
#: a passing test never waits this long (``make test-under-load``)
CHILD_TIMEOUT_S = 300

#: the rule configuration families every property test covers (core, observations, JAX twin)
CONFIGS = {
    "2p": dict(num_players=2),
    "3p": dict(num_players=3),
    "4p-partners": dict(num_players=4),
    "4p-solo": dict(num_players=4, partnerships=False),
    "lead-double-only": dict(spinner="lead_double_only"),
    "no-spinner": dict(num_players=3, spinner="none"),
    "cross-immediately": dict(spinner_cross="immediately"),
    "end-of-hand": dict(num_players=3, win_check="end_of_hand"),
    "end-of-hand-4p": dict(num_players=4, win_check="end_of_hand", blocked_award="difference"),
    "double-nine": dict(max_pip=9, num_players=4, partnerships=False),
    "double-nine-2p": dict(max_pip=9, hand_size=9, spinner_cross="immediately"),
    "reserve-rotate": dict(boneyard_reserve=4, next_leader="rotate", hand_size=5),
    "double-twelve": dict(max_pip=12, num_players=4, hand_size=15),
}

#: the environment configurations every env test covers (the issue's list)
ENV_CONFIGS = {
    "2p": dict(num_players=2),
    "3p": dict(num_players=3),
    "4p": dict(num_players=4),
    "4p-solo": dict(num_players=4, partnerships=False),
    "d9": dict(num_players=2, max_pip=9),
}


def scripted_hand(
    moves, rules: RuleConfig | None = None, leader: int = 0, extra=None, boneyard=None
) -> HandState:
    """A deal in which seat ``(leader + i) % n`` holds the tile of scripted move ``i``.

    ``moves`` are ``(tile, end)`` pairs; ``extra`` maps a seat to further tiles it holds. Every
    hand is filled up to ``hand_size`` with tiles no move uses; ``boneyard`` (tiles, draw order)
    comes first in the boneyard, the unused rest follows in index order.
    """
    rules = rules or RuleConfig()
    ts = rules.tiles
    n = rules.num_players
    hands = [[] for _ in range(n)]
    for i, (tile, _end) in enumerate(moves):
        hands[(leader + i) % n].append(tuple(tile))
    for seat, tiles in (extra or {}).items():
        hands[seat].extend(tuple(t) for t in tiles)
    used = {ts.index(*t) for h in hands for t in h}
    front = [tuple(t) for t in (boneyard or [])]
    used |= {ts.index(*t) for t in front}
    spare = [t for i, t in enumerate(ts.tiles) if i not in used]
    for h in hands:
        while len(h) < rules.hand_size:
            h.append(spare.pop())
    return HandState.from_tiles(rules, hands, front + spare, leader)


def play_script(moves, **kwargs):
    """Play scripted moves, checking each is made by the expected seat; returns (hand, counts,
    points)."""
    hand = scripted_hand(moves, **kwargs)
    counts, points = [], []
    for i, move in enumerate(moves):
        expected = (hand.leader + i) % hand.n
        assert hand.turn == expected, f"move {i} {move}: turn is seat {hand.turn}, not {expected}"
        points.append(hand.play(move))
        counts.append(hand.count)
    return hand, counts, points


def random_positions(rules: RuleConfig, count: int, seed: int, stride: int = 1000):
    """``count`` positions from random matches (random play), as ``(hand, view)`` pairs: a copy
    of the full hand and the view of the seat to play. Match ``g`` is seeded
    ``seed * stride + g``."""
    rng = random.Random(seed)
    out, game = [], 0
    while len(out) < count:
        match = MatchState(rules, seed=seed * stride + game)
        game += 1
        while not match.is_over and len(out) < count:
            out.append((match.hand.copy(), match.view(match.turn)))
            match.play(rng.choice(match.legal_actions()))
    return out


def comparable_info(info: dict) -> dict:
    """An env info with its arrays as tuples, so whole trajectories compare with ``==``."""
    return {k: tuple(v.tolist()) if hasattr(v, "tolist") else v for k, v in info.items()}


def random_match(rules: RuleConfig, seed: int) -> MatchState:
    """A whole match played with uniformly random legal moves (``random.Random(seed)``) on the
    deal of ``MatchState(rules, seed=seed)``."""
    rng = random.Random(seed)
    m = MatchState(rules, seed=seed)
    while not m.is_over:
        legal = m.legal_actions()
        m.play(legal[rng.randrange(len(legal))])
    return m


# -- game records --------------------------------------------------------------------------------

#: a small valid record (two players, one hand not finished): [6|6] led, then [6|1] on the left
RULES_EXAMPLE = {
    "rules": {"num_players": 2},
    "hands": [{
        "leader": 0,
        "hands": [[[6, 6], [6, 3], [1, 2], [0, 0], [2, 2], [3, 3], [4, 5]],
                  [[5, 5], [0, 1], [1, 1], [2, 3], [3, 4], [0, 6], [1, 6]]],
        "boneyard": [[0, 2], [0, 3], [0, 4], [0, 5], [1, 3], [1, 4], [1, 5], [2, 4], [2, 5],
                     [2, 6], [3, 5], [4, 4], [4, 6], [5, 6]],
        "moves": [[0, [6, 6], None], [1, [6, 1], "left"]],
    }],
}  # fmt: skip


def bad_record(mutate) -> dict:
    """A deep copy of ``RULES_EXAMPLE`` changed in place by ``mutate(record)``."""
    rec = copy.deepcopy(RULES_EXAMPLE)
    mutate(rec)
    return rec


#: ``(mutate, message)``: each ``bad_record(mutate)`` is refused with ``message`` in the reason
BAD_RECORDS = [
    (lambda r: r.pop("hands"), "lacks the field 'hands'"),
    (lambda r: r.pop("rules"), "lacks the field 'rules'"),
    (lambda r: r["hands"].clear(), "'hands' is empty: a match record holds at least one hand"),
    (lambda r: r["rules"].update(num_players=5), "num_players=5"),
    (lambda r: r["rules"].update(colour="red"), "unknown rule option"),
    (lambda r: r["hands"][0].pop("moves"), "hand 0: lacks the field 'moves'"),
    (lambda r: r["hands"][0].update(leader=2), "leader 2 is not a seat"),
    (lambda r: r["hands"][0]["hands"][0].append([5, 6]), "seat 0 was dealt 8 tiles"),
    (lambda r: r["hands"][0]["boneyard"].pop(), "missing: [5|6]"),
    (lambda r: r["hands"][0]["boneyard"].__setitem__(0, [6, 6]), "dealt twice"),
    (lambda r: r["hands"][0]["boneyard"].__setitem__(0, [6, 7]), "not a tile"),
    (
        lambda r: r["hands"][0]["moves"].__setitem__(1, [0, [6, 3], "left"]),
        "move 1 [0, [6, 3], \"left\"]: it is seat 1's turn, not seat 0's",
    ),
    (
        lambda r: r["hands"][0]["moves"].__setitem__(1, [1, [6, 3], "left"]),
        "[3|6] is not in seat 1's hand",
    ),
    (
        lambda r: r["hands"][0]["moves"].__setitem__(1, [1, [1, 1], "left"]),
        "[1|1] does not fit the left end (showing 6)",
    ),
    (lambda r: r["hands"][0]["moves"].__setitem__(1, [1, [6, 1], "up"]), "up end is not open"),
    (
        lambda r: r["hands"][0]["moves"].__setitem__(1, [1, [6, 1], "sideways"]),
        "unknown end 'sideways'",
    ),
    (
        lambda r: r["hands"][0]["moves"].__setitem__(1, [1, [6, 1], None]),
        "only the lead has no end",
    ),
    (lambda r: r["hands"][0]["moves"].__setitem__(0, [0, [6, 6], "left"]), "the lead has no end"),
    (lambda r: r["hands"][0]["moves"].__setitem__(1, [1, [6, 1]]), "a move is [seat, [a, b], end]"),
    (lambda r: r["hands"][0]["moves"].__setitem__(1, [1, [2, 6], "left"]), "still in the boneyard"),
    (lambda r: r["hands"].append(copy.deepcopy(r["hands"][0])), "hand 0 is not finished"),
    # a seat equal to the right one but no integer (JSON's false, 1.0), and a tuple for a list:
    # the JAX replay took them where the core refused them
    (lambda r: r["hands"][0]["moves"][0].__setitem__(0, False),
     "move 0 [false, [6, 6], null]: the seat False must be an integer"),
    (lambda r: r["hands"][0]["moves"][1].__setitem__(0, 1.0), "the seat 1.0 must be an integer"),
    (lambda r: r["hands"][0].update(hands=tuple(r["hands"][0]["hands"])),
     "hand 0: 'hands' must be a list of tiles per seat"),
    (lambda r: r["hands"][0].update(boneyard=tuple(r["hands"][0]["boneyard"])),
     "hand 0: 'boneyard' must be a list of tiles"),
]


# -- the tournament command line -------------------------------------------------------------------

#: an agent spec slow enough that a run can be interrupted part-way
SLOW = "tests.tournament_agents:SlowRandomAgent:delay=0.002"


def cli(*args: str, **kwargs) -> subprocess.Popen:
    """``python -m experiments.tournament ARGS`` started in the repository root (output piped)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "experiments.tournament", *args], cwd=ROOT,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            **kwargs)  # fmt: skip


def wait_for_lines(path: Path, n: int, proc: subprocess.Popen,
                   timeout: float = CHILD_TIMEOUT_S) -> None:
    """Wait until ``path`` holds ``n`` lines, failing if ``proc`` ends first or after
    ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().count("\n") >= n:
            return
        assert proc.poll() is None, "the run ended before it could be interrupted"
        time.sleep(0.02)
    raise AssertionError(f"{path} never reached {n} lines")


def wait_for_path(path: Path, proc: subprocess.Popen, timeout: float = CHILD_TIMEOUT_S) -> None:
    """Wait until ``path`` exists (a file a program writes atomically: then it is whole), failing
    if ``proc`` ends first or after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert proc.poll() is None, "the run ended before it could be interrupted"
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)


def spawn_program(module: str, *args: str, **kwargs) -> subprocess.Popen:
    """``python -m module ARGS`` started in the repository root, its output piped (text), Ctrl-C
    raising ``KeyboardInterrupt`` even if the suite's shell ignores it: a program a test sends
    signals to. (Set in the child's first line, not by a ``preexec_fn``, which is not safe to
    fork from a test process where JAX's threads run.)"""
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONPATH": str(ROOT)}
    start = ("import runpy, signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler)"
             f"; sys.argv[0] = {module!r}; runpy.run_module({module!r}, run_name='__main__', "
             "alter_sys=True)")
    return subprocess.Popen([sys.executable, "-c", start, *args], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            **kwargs)  # fmt: skip


def wait_for_text(stream, marker, proc: subprocess.Popen,
                  timeout: float = CHILD_TIMEOUT_S) -> str:
    """Read a child's pipe ``stream`` until ``marker`` (a string, or a compiled pattern) shows
    up: the sign that it is where a test wants to interrupt it; returns what was read. Fails
    if ``proc`` ends first or after ``timeout`` seconds."""
    import select

    def found(text: str) -> bool:
        return bool(marker.search(text)) if hasattr(marker, "search") else marker in text

    seen = ""
    deadline = time.monotonic() + timeout
    while not found(seen):
        left = deadline - time.monotonic()
        assert left > 0 and proc.poll() is None, (seen[-500:], proc.poll())
        if select.select([stream.fileno()], [], [], min(left, 1.0))[0]:
            chunk = os.read(stream.fileno(), 65536)
            assert chunk, seen[-500:]
            seen += chunk.decode(errors="replace")
    return seen


def error_lines(err: str) -> list[str]:
    """The ``error:`` lines of a program's stderr, which must hold no traceback."""
    assert "Traceback" not in err, err
    return [line for line in err.splitlines() if line.startswith("error:")]


# -- the python -m programs (walked by test_cli_help and test_cli_attacks) ----------------------
def discover_programs() -> list[str]:
    """Every ``python -m`` program: ``experiments/*.py`` defining ``main``, ``experiments/``
    packages with a ``__main__.py``, and ``dominoes_env``: a new program is walked the day it is
    added."""
    import re

    found = []
    for path in sorted((ROOT / "experiments").iterdir()):
        if path.suffix == ".py" and re.search(r"^def main\(", path.read_text(), re.M):
            found.append(f"experiments.{path.stem}")
        elif path.is_dir() and (path / "__main__.py").is_file():
            found.append(f"experiments.{path.name}")
    return [*found, "dominoes_env"]


#: the module whose ``main(argv)`` a program runs where it is not the program's own module
MAIN_MODULE = {"dominoes_env": "dominoes_env.cli"}
#: programs that need an extra beyond the base install: the module that extra brings
PROGRAM_NEEDS = {"experiments.train_ppo": "sb3_contrib", "experiments.train_rllib": "ray",
                 "experiments.bench_jax": "jax", "experiments.bench_training": "jax",
                 "experiments.bench_jax_observe": "jax", "experiments.bench_jax_pieces": "jax",
                 "experiments.best_response": "jax", "experiments.train_jax": "jax",
                 "experiments.expert_iteration": "jax"}


def skip_unless_installed(module: str) -> None:
    """Skip the test unless ``module`` is installed, without importing it
    (``pytest.importorskip`` imports it: JAX started that way in a worker of the session
    without JAX, and every fork there after it risked a deadlock)."""
    import importlib.util

    import pytest

    if importlib.util.find_spec(module) is None:
        pytest.skip(f"needs {module} (its extra is not installed)")


def main_module(program: str) -> str:
    """The module whose ``main(argv)`` runs ``python -m program``."""
    return MAIN_MODULE.get(program, program)


class _Captured(Exception):
    pass


def program_parsers(program: str) -> list[tuple[list[str], argparse.ArgumentParser]]:
    """``[(argv prefix, parser)]``: the program's parser (its ``build_parser()``, else the one
    its ``main`` builds, caught at ``parse_args``), one per subcommand."""
    module = importlib.import_module(main_module(program))
    if hasattr(module, "build_parser"):
        parser = module.build_parser()
    else:
        seen: list[argparse.ArgumentParser] = []
        original = argparse.ArgumentParser.parse_args

        def capture(self, *args, **kwargs):
            seen.append(self)
            raise _Captured

        argparse.ArgumentParser.parse_args = capture
        try:
            module.main([])
        except _Captured:
            pass
        finally:
            argparse.ArgumentParser.parse_args = original
        parser = seen[0]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return [([name], sub) for name, sub in action.choices.items()]
    return [([], parser)]


def match_records(out: Path) -> dict[str, dict]:
    """A tournament folder's stored match records by key, without the fields that differ from
    run to run (duration, decision times: ``agents.arena.TIMING_FIELDS``); a key stored twice
    fails the test."""
    import json

    from agents.arena import TIMING_FIELDS
    from agents.tournament.runner import MATCHES_FILE

    recs: dict[str, dict] = {}
    for line in (out / MATCHES_FILE).read_text().splitlines():
        rec = json.loads(line)
        for key in TIMING_FIELDS:
            rec.pop(key)
        assert rec["key"] not in recs, f"duplicate match {rec['key']}"
        recs[rec["key"]] = rec
    return recs


def jit_reset(self_play, key, n: int):
    """``self_play.reset(key, n)`` (a ``dominoes_env.jax.selfplay.SelfPlay``) compiled as one
    program, as a trainer runs it: called op by op it compiles a few hundred small programs,
    10-20 s of a test."""
    import jax

    return jax.jit(self_play.reset, static_argnums=1)(key, n)


def update_failing_at(make_train, call: int, fail):
    """``make_train`` (train_jax's) whose update calls ``fail()`` at its ``call``-th call, before
    updating (``fail`` raises, or sleeps as an update that never returns)."""

    def wrapped(config):
        init, update, devices = make_train(config)
        calls = []

        def update_or_fail(runner):
            calls.append(1)
            if len(calls) == call:
                fail()
            return update(runner)

        return init, update_or_fail, devices

    return wrapped


def with_a_huge_array_header(path: Path, name: str = "w0") -> Path:
    """The ``.npz`` at ``path`` (a policy: its ``w0``), rewritten so that its array ``name``
    declares a terabyte (``float64 (1000000, 1000000)``) while it holds 64 bytes: a reader must
    refuse it before allocating anything."""
    import io
    import zipfile

    import numpy as np

    with np.load(path) as data:
        arrays = dict(data)
    head = io.BytesIO()
    np.lib.format.write_array_header_1_0(head, {"descr": "<f8", "fortran_order": False,
                                                "shape": (10**6, 10**6)})
    with zipfile.ZipFile(path, "w") as z:
        for key, value in arrays.items():
            if key == name:
                z.writestr(f"{name}.npy", head.getvalue() + bytes(64))
            else:
                with z.open(f"{key}.npy", "w") as f:
                    np.lib.format.write_array(f, value)
    return path


def assert_deal_fits_the_view(view, hands, bone) -> None:
    """A sampled deal (``hands``: a bitmask per seat, ``bone``: the boneyard's tiles) is one the
    seat of ``view`` could be in: its own hand, every seat's hand size, the boneyard's size, no
    tile twice, no tile showing a value a seat is known to lack, exactly the unseen tiles."""
    ts = view.rules.tiles
    assert hands[view.seat] == view.hand
    assert [h.bit_count() for h in hands] == list(view.hand_sizes)
    assert len(bone) == view.boneyard_left
    union = 0
    for s, h in enumerate(hands):
        assert not union & h
        union |= h
        if s != view.seat:
            assert all(not (1 << ts.low[t] | 1 << ts.high[t]) & view.known_lacks[s]
                       for t in range(ts.num_tiles) if h >> t & 1)
    assert union & ~view.hand | sum(1 << t for t in bone) == view.unseen


def fitting_deals(ts, tiles: list[int], sizes: dict[int, int], lacks: dict[int, int]
                  ) -> set[tuple[frozenset, ...]]:
    """Every way to deal ``tiles`` (indices of the tile set ``ts``) to the seats of ``sizes``
    (seat -> hand size, in seat order; the tiles left over are the boneyard) so that no seat
    gets a tile showing a value it is known to lack (``lacks``: seat -> bitmask of values): the
    exact support a deal sampler must draw from, as tuples of each seat's tiles."""
    import itertools

    def fits(seat, group):
        return all(not (1 << ts.low[t] | 1 << ts.high[t]) & lacks.get(seat, 0) for t in group)

    deals: set[tuple[frozenset, ...]] = {()}
    for seat, size in sizes.items():
        deals = {deal + (frozenset(group),) for deal in deals
                 for group in itertools.combinations(
                     [t for t in tiles if not any(t in g for g in deal)], size)
                 if fits(seat, group)}
    return deals


def shipped_policies_in(folder: Path, monkeypatch) -> Path:
    """``folder`` (created) made the shipped policies' folder (:data:`agents.ppo.POLICY_DIR`),
    so a test of shipping never touches the real ones in ``agents/policies/``."""
    import agents.ppo

    folder.mkdir()
    monkeypatch.setattr(agents.ppo, "POLICY_DIR", folder)
    return folder


def fake_shipping_rates(monkeypatch, rates: dict[str, float]) -> list[tuple]:
    """The evaluation against greedy that :mod:`agents.shipping` plays
    (:func:`agents.evaluation.evaluation_row`) made to answer ``rates[folder name]`` for a
    policy in that folder (``"policies"``: the shipped one); each call's ``(agent, matches,
    seed, opponents)`` recorded in the list returned, every call against greedy alone."""
    import agents.evaluation

    calls = []

    def row(agent, rules, *, matches, seed, opponents):
        assert opponents == ("greedy",)
        calls.append((agent, matches, seed, opponents))
        return {"win_rate_vs_greedy": rates[Path(agent.removeprefix("ppo:")).parent.name]}

    monkeypatch.setattr(agents.evaluation, "evaluation_row", row)
    return calls
