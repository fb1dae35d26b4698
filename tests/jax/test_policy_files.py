"""Policy files and checkpoints are untrusted input: a round trip keeps every number, and a
damaged, NaN, pickled or mismatched file is refused with a ValueError naming the file."""

from __future__ import annotations

import json
import pickle
import shutil
import zipfile

import numpy as np
import pytest

pytest.importorskip("pgx")

from agents.ppo import NumpyPolicy, random_policy_npz  # noqa: E402
from dominoes_env.core import RuleConfig  # noqa: E402
from dominoes_env.jax import checkpoints  # noqa: E402
from dominoes_env.jax.networks import init_params, mlp  # noqa: E402
from dominoes_env.jax.policy_files import (  # noqa: E402
    export_npz,
    is_policy_file,
    load_actor,
    load_fixed_actor,
)

from ..helpers import with_a_huge_array_header  # noqa: E402

RULES = RuleConfig()


def _actor(obs_size=234, hidden=(8,), seed=0):
    import jax

    params = init_params(jax.random.PRNGKey(seed), obs_size, 112, list(hidden))
    return jax.tree.map(lambda x: np.asarray(x) + 0.1, params["actor"])  # non-zero biases


def _policy(tmp_path, **change):
    """A valid policy file's arrays, some replaced by ``change``, written as an .npz."""
    path = tmp_path / "p.npz"
    export_npz(_actor(), path, {"rules": RULES.to_dict()})
    with np.load(path) as data:
        arrays = {k: data[k] for k in data.files}
    arrays.update(change)
    bad = tmp_path / "bad.npz"
    np.savez(bad, **{k: v for k, v in arrays.items() if v is not None})
    return bad


def test_a_round_trip_keeps_every_weight_and_agents_ppo_plays_it(tmp_path):
    actor = _actor(hidden=(8, 4))
    path = tmp_path / "policy.npz"
    export_npz(actor, path, {"rules": RULES.to_dict(), "steps": 7})
    assert is_policy_file(path)
    layers, version = load_actor(path, RULES)
    assert version == 2 and len(layers) == 3
    for old, new in zip(actor, layers, strict=True):
        np.testing.assert_array_equal(np.float32(old["w"]), new["w"])
        np.testing.assert_array_equal(np.float32(old["b"]), new["b"])
    obs = np.random.default_rng(1).random((3, 234)).astype(np.float32)
    policy = NumpyPolicy(path)  # one format: the one agents.ppo reads
    assert policy.metadata["steps"] == 7
    np.testing.assert_allclose(policy.logits(obs), np.asarray(mlp(layers, obs)), atol=1e-4)
    # and the other way round: what agents.ppo writes loads here
    other = tmp_path / "v3.npz"
    random_policy_npz(other, RULES, hidden=(8,), obs_version=3)
    assert load_actor(other, RULES)[1] == 3
    with pytest.raises(ValueError, match=r"v3\.npz.*reads observation version 3, not version 2"):
        load_fixed_actor(other, RULES, 2)


@pytest.mark.parametrize("change, says", [
    ({"w0": np.full((234, 8), np.nan, np.float32)}, "w0 holds NaN or infinite values"),
    ({"action_b": np.zeros(111, np.float32)}, "the action head has weights (8, 112) and bias"),
    ({"w0": np.zeros((234, 8), np.int64)}, "w0 must be a 2-D float array"),
    ({"b0": None}, "b0 missing"),
    ({"activation": np.array("relu")}, "uses relu"),
    ({"format": np.array("something/9")}, "format 'something/9'"),
    ({"num_layers": np.array(3)}, "num_layers=3 but w1, b1, w2, b2 missing"),
    ({"num_layers": np.array(99)}, "num_layers must be one integer in 0..64"),
    ({"metadata": np.array("{not json")}, "metadata is not JSON"),
    ({"metadata": np.array("[1, 2]")}, "metadata must be a JSON object"),
    ({"metadata": np.array(json.dumps({"obs_version": 9}))},
     "observation version 9, which this dominoes_env cannot encode"),
    ({"metadata": np.array(json.dumps({"obs_version": 2}))}, "metadata lacks obs_size"),
    ({"metadata": np.array(json.dumps({"obs_version": 2, "obs_size": 5}))},
     "metadata says obs_size=5; the weights have 234"),
    ({"metadata": np.array(json.dumps({"obs_version": 3, "obs_size": 234, "num_actions": 112}))},
     "takes 234 inputs and 112 actions; these rules need 346 and 112"),
])  # fmt: skip
def test_a_bad_policy_file_is_refused_naming_the_file_and_the_problem(tmp_path, change, says):
    bad = _policy(tmp_path, **change)
    with pytest.raises(ValueError) as err:
        load_actor(bad, RULES)
    assert str(err.value).startswith(f"policy file {str(bad)!r}: ") and says in str(err.value)


def test_a_pickle_a_damaged_zip_a_folder_or_nothing_is_refused(tmp_path):
    pickled = tmp_path / "pickled.npz"
    with zipfile.ZipFile(pickled, "w") as z:  # an object array: loading it would unpickle
        with z.open("w0.npy", "w") as fh:
            np.lib.format.write_array(fh, np.array([{"x": 1}], dtype=object),
                                      allow_pickle=True)
    raw = tmp_path / "raw.npz"
    raw.write_bytes(pickle.dumps({"w0": [1.0]}))
    damaged = tmp_path / "damaged.npz"
    export_npz(_actor(), damaged, {})
    damaged.write_bytes(damaged.read_bytes()[:300])
    for path, says in ((pickled, "w0 holds Python objects (a pickle, which is never loaded)"),
                       (raw, "not a policy .npz file"), (damaged, "not a policy .npz file"),
                       (tmp_path, "not a regular file"), (tmp_path / "none.npz", "no such file")):
        with pytest.raises(ValueError) as err:
            load_actor(path, RULES)
        assert str(err.value).startswith(f"policy file {str(path)!r}: "), err.value
        assert says in str(err.value), err.value
        assert not is_policy_file(path)


def test_a_plain_array_or_a_zip_numpy_cannot_read_is_no_policy_file(tmp_path):
    """``np.load`` of a ``.npy`` named ``.npz`` gives an array, no context manager (TypeError),
    and a zip of a version its reader does not know raises NotImplementedError: both ended
    ``train_jax --init`` in a traceback."""
    plain = tmp_path / "plain.npz"
    with open(plain, "wb") as fh:
        np.save(fh, np.zeros(3))
    newer = tmp_path / "newer.npz"
    export_npz(_actor(), newer, {})
    data = bytearray(newer.read_bytes())
    central = data.rfind(b"PK\x01\x02")  # the central directory's entry
    data[central + 6] = 175  # "version needed to extract": 17.5
    newer.write_bytes(bytes(data))
    for path in (plain, newer):
        assert not is_policy_file(path)


def test_both_readers_refuse_a_bad_file_in_the_same_words(tmp_path):
    """NumpyPolicy and load_actor restated the format's checks: they refused one file in
    different words, and load_actor let json's RecursionError out and read an array header
    without the size cap (one reader now, dominoes_env.policy_format)."""
    bad = {
        "int": {"w0": np.zeros((234, 8), np.int64)},
        "nested": {"metadata": np.array("[" * 100_000)},
        "nokey": {"action_b": None},
        "rules": {"metadata": np.array(json.dumps({"obs_version": 2, "obs_size": 234,
                                                   "num_actions": 112, "rules": 2}))},
    }
    paths = []
    for name, change in bad.items():
        paths.append(_policy(tmp_path, **change).rename(tmp_path / f"{name}.npz"))
    paths.append(with_a_huge_array_header(_policy(tmp_path).rename(tmp_path / "huge.npz")))
    for path in paths:
        with pytest.raises(ValueError) as numpy_err:
            NumpyPolicy(path)
        with pytest.raises(ValueError) as jax_err:
            load_actor(path, RULES)
        assert str(numpy_err.value) == str(jax_err.value), path.name
        assert str(jax_err.value).startswith(f"policy file {str(path)!r}: "), jax_err.value


def test_export_refuses_what_it_could_not_read_back(tmp_path):
    actor = _actor()
    with pytest.raises(ValueError, match="w0 holds NaN"):
        export_npz([{"w": actor[0]["w"] * np.nan, "b": actor[0]["b"]}, actor[1]],
                   tmp_path / "nan.npz", {})
    with pytest.raises(ValueError, match="metadata's rules need 346 inputs and 112 actions"):
        export_npz(actor, tmp_path / "v3.npz", {"rules": RULES.to_dict(), "obs_version": 3})
    assert not list(tmp_path.iterdir())  # nothing half written


@pytest.mark.parametrize("actor, metadata, message", [
    ("ab", {}, "^actor must be a list of layers"),  # indexed as layers: a bare TypeError
    ({"w": 1}, {}, "^actor must be a list of layers"),  # "unhashable type: 'slice'"
    ([{"w": np.zeros((234, 112))}], {}, "^actor.0. must be a layer"),  # KeyError 'b'
    ([{"w": np.zeros((234, 112)) * 1j, "b": np.zeros(112)}], {},  # imaginary part dropped
     "action_w holds complex128 values, not real numbers"),
    ([{"w": [["a"] * 112] * 234, "b": np.zeros(112)}], {}, "action_w holds <U1 values"),
    ([{"w": np.zeros((234, 112)), "b": np.zeros(112)}], None, "^metadata must be a dict"),
])
def test_export_names_an_actor_or_metadata_it_cannot_write(tmp_path, actor, metadata, message):
    with pytest.raises(ValueError, match=message):
        export_npz(actor, tmp_path / "p.npz", metadata)
    assert not list(tmp_path.iterdir())


# -- checkpoints ------------------------------------------------------------------------------
SETTINGS = {"players": 2, "partnerships": None, "target_score": 250, "net": "8",
            "critic": "obs", "obs_version": 2, "num_envs": 4, "num_steps": 2, "snapshots": 1}


def _runner():
    import jax
    import jax.numpy as jnp

    params = jax.tree.map(jnp.asarray, init_params(jax.random.PRNGKey(0), 234, 112, [8]))
    return {"params": params, "key": jax.random.PRNGKey(1), "update": jnp.int32(3),
            "games": jnp.zeros(4), "ep_return": jnp.zeros(4)}


def test_a_checkpoint_round_trip_and_its_refusals(tmp_path):
    import jax

    runner = _runner()
    path = tmp_path / "checkpoint.npz"
    checkpoints.save_checkpoint(runner, SETTINGS, 24, 1.5, path)  # 3 updates of 4 x 2 steps
    meta = checkpoints.read_checkpoint(path, SETTINGS)
    assert meta["steps"] == 24 and meta["config"]["net"] == "8"
    fresh = {**runner, "update": jax.numpy.int32(0)}
    assert int(checkpoints.restore(path, fresh)["update"]) == 3
    with pytest.raises(ValueError, match=r"was trained with net='8', this run has net='16'"):
        checkpoints.read_checkpoint(path, {**SETTINGS, "net": "16"})

    with np.load(path) as data:
        arrays = {k: data[k] for k in data.files}
    leaf = next(k for k, v in arrays.items() if v.dtype == np.float32 and v.ndim == 2)
    for name, change, says in (
            ("nan", {leaf: np.full_like(arrays[leaf], np.nan)}, "NaN or infinite"),
            ("dtype", {leaf: arrays[leaf].astype(np.float64)}, "is float64, expected float32"),
            ("fewer", {f"leaf{len(arrays) - 2}": None}, "holds"),
            # one of the middle deleted was a bare KeyError's text: "is damaged ('leaf1')"
            ("gap", {"leaf1": None}, "is damaged: its array leaf1 ("),
            ("meta", {"meta": np.array("{")}, "is not a train_jax checkpoint")):
        bad = tmp_path / f"{name}.npz"
        np.savez(bad, **{k: v for k, v in {**arrays, **change}.items() if v is not None})
        with pytest.raises(ValueError) as err:
            checkpoints.read_checkpoint(bad, SETTINGS)
            checkpoints.restore(bad, fresh)
        assert f"--resume {str(bad)!r}" in str(err.value) and says in str(err.value), err.value


#: the flags of a tiny train_jax run, and its Config's fields
TINY_RUN = {"total_steps": 64, "num_envs": 2, "num_steps": 8, "num_minibatches": 2,
            "update_epochs": 3, "net": "8", "snapshots": 4, "eval_matches": 2,
            "progress": False}


def _train_jax_checkpoint(path):
    """A checkpoint of a train_jax run of TINY_RUN after two updates (32 steps), as its trainer
    saves it: ``(config, runner, the file's arrays by the runner's paths)``."""
    import jax
    import jax.numpy as jnp

    from experiments.train_jax import Config, make_train

    config = Config(**TINY_RUN, out=str(path.parent / "unused"))
    runner = make_train(config)[0](jax.random.PRNGKey(0))
    two = jnp.int32(2 * 2 * 3)  # two updates of 2 minibatches x 3 epochs: Adam's steps
    runner = {**runner, "update": jnp.int32(2), "snaps_filled": jnp.int32(1),
              "opt": jax.tree.map(lambda x: two if x.dtype == jnp.int32 else x, runner["opt"])}
    checkpoints.save_checkpoint(runner, config, 32, 1.5, path)
    saved = {k: v for k, v in runner.items() if k not in checkpoints.NOT_SAVED}
    leaves = {jax.tree_util.keystr(p): f"leaf{i}" for i, (p, _) in
              enumerate(jax.tree_util.tree_flatten_with_path(saved)[0])}
    return config, runner, leaves


@pytest.mark.parametrize(("steps", "wall", "error", "says"), [
    (24, float("nan"), ValueError, "wall=nan must be a finite number"),
    (24, float("inf"), ValueError, "wall=inf must be a finite number"),
    (24, -1, ValueError, "wall=-1.0 is out of range"),
    (-3, 1.5, ValueError, "steps=-3 is out of range"),
    (10**20, 1.5, ValueError, "steps=100000000000000000000 is out of range"),
    (2.7, 1.5, TypeError, "steps=2.7 must be an integer"),
    (True, 1.5, TypeError, "steps=True must be an integer"),
    ("5", 1.5, TypeError, "steps='5' must be an integer"),
])  # fmt: skip
def test_save_checkpoint_refuses_counts_read_checkpoint_would_refuse(tmp_path, steps, wall,
                                                                     error, says):
    """A NaN, infinite or negative wall, or steps out of range, replaced a good checkpoint by
    one no --resume could read; steps of 2.7, True or "5" were saved as 2, 1 or 5."""
    path = tmp_path / "checkpoint.npz"
    checkpoints.save_checkpoint(_runner(), SETTINGS, 24, 1.5, path)
    good = path.read_bytes()
    with pytest.raises(error, match=f"^{says}"):
        checkpoints.save_checkpoint(_runner(), SETTINGS, steps, wall, path)
    assert path.read_bytes() == good
    assert checkpoints.read_checkpoint(path, SETTINGS)["steps"] == 24


@pytest.mark.parametrize("where, value, says", [
    ("['update']", -1, "(update) is -1; a count is never negative"),
    ("['update']", 2**31 - 1, "(update) is 2,147,483,647; its 32 steps in rollouts of 16 are "
                              "2 updates"),
    ("['opt'][1][0].count", -1, "(opt/1/0/count) is -1; a count is never negative"),
    ("['opt'][1][0].count", 2**31 - 1, "(opt/1/0/count) is 2,147,483,647; its 2 updates of 6 "
                                       "minibatch steps are 12"),
    ("['snaps_filled']", 1000, "(snaps_filled) is 1,000; it counts the snapshots kept, 1..4"),
    ("['snaps_next']", -7, "(snaps_next) is -7; a count is never negative"),
    ("['snaps_next']", 4, "(snaps_next) is 4; it indexes the snapshots kept, 0..3"),
    ("['opt'][1][0].mu['actor'][0]['w']", 3e38,
     "(opt/1/0/mu/actor/0/w) holds a value of magnitude 3e+38; training makes none above 1e+06"),
    ("['params']['actor'][0]['w']", -2e6,
     "(params/actor/0/w) holds a value of magnitude 2e+06; training makes none above 1e+06"),
])
def test_a_checkpoint_with_counters_or_weights_no_run_makes_is_refused(tmp_path, where, value,
                                                                      says):
    """A train_jax checkpoint whose update counters were -1 or 2**31-1, whose snapshot indices
    were out of range (JAX clamps them) or whose weights were finite but 3e38 loaded in silence;
    -1 and 3e38 turned the first update to NaN, which was then saved over the checkpoint. Each
    is now refused, naming the file and the array."""
    path = tmp_path / "checkpoint.npz"
    config, runner, leaves = _train_jax_checkpoint(path)
    assert int(checkpoints.restore(path, runner)["update"]) == 2  # as saved: restored
    with np.load(path) as data:
        arrays = {k: data[k] for k in data.files}
    leaf = leaves[where]
    arrays[leaf] = np.full_like(arrays[leaf], value)
    np.savez(tmp_path / "bad.npz", **arrays)
    with pytest.raises(ValueError) as err:
        checkpoints.restore(tmp_path / "bad.npz", runner)
    assert str(err.value) == f"--resume {str(tmp_path / 'bad.npz')!r}: {leaf} {says}" + (
        " (the file was changed, or its run diverged)" if "magnitude" in says else "")


@pytest.mark.parametrize("field, value", [("update_epochs", -1), ("num_minibatches", 0),
                                          ("num_steps", None), ("num_envs", "8")])
def test_restore_refuses_a_config_whose_counts_its_counter_checks_need(tmp_path, field, value):
    """`restore` alone (without `read_checkpoint`'s check of the settings) skipped the check of
    the optimizer's or the update's step count in silence where the checkpoint's config said
    update_epochs=-1: an optimizer step count of 2**31-1 was restored."""
    import jax

    path = tmp_path / "checkpoint.npz"
    _, runner, leaves = _train_jax_checkpoint(path)
    with np.load(path) as data:
        arrays = {k: data[k] for k in data.files}
    meta = json.loads(str(arrays["meta"]))
    meta["config"][field] = value
    count = leaves["['opt'][1][0].count"]
    np.savez(path, **{**arrays, "meta": np.array(json.dumps(meta)),
                      count: np.int32(2**31 - 1)})
    with pytest.raises(ValueError) as err:
        checkpoints.restore(path, runner)
    assert str(err.value) == (f"--resume {str(path)!r} is damaged: in its config, "
                              f"{field}={value!r} is not a whole number >= 1")
    # a config that predates the counts is still restored (their checks left out)
    del meta["config"][field]
    np.savez(path, **{**arrays, "meta": np.array(json.dumps(meta))})
    assert int(jax.device_get(checkpoints.restore(path, runner)["update"])) == 2


@pytest.mark.parametrize("where, value, says", [
    ("['opt'][1][0].mu['actor'][0]['w']", np.zeros((3, 8), np.float32),
     "(opt/1/0/mu/actor/0/w) has shape (3, 8), expected (234, 8)"),
    ("['snaps'][1]['b']", np.zeros((4, 5), np.float32),
     "(snaps/1/b) has shape (4, 5), expected (4, 112)"),
    ("['key']", np.zeros(5, np.uint32), "(key) has shape (5,), expected (2,)"),
    ("['opt'][1][0].count", np.int32(-1), "(opt/1/0/count) is -1; a count is never negative"),
    ("['update']", np.int32(2**31 - 1), "(update) is 2,147,483,647; its 32 steps in rollouts "
                                        "of 16 are 2 updates"),
    ("['snaps_next']", np.int32(4), "(snaps_next) is 4; it indexes the snapshots kept, 0..3"),
])
def test_init_refuses_a_checkpoint_damaged_beyond_its_networks(tmp_path, where, value, says):
    """``--init`` from a checkpoint whose optimizer state, snapshots, key or counters were
    damaged (a wrong shape, a negative count) started from its networks in silence, since a
    warm start takes only them; a damaged file is refused, naming the array, as ``--resume``
    refuses it. A sound one is taken from a run that kept more snapshots, at an earlier
    observation version (its first layers have fewer rows)."""
    import jax

    from experiments.train_jax import Config, make_train

    path = tmp_path / "checkpoint.npz"
    _, _, leaves = _train_jax_checkpoint(path)
    config = Config(**{**TINY_RUN, "snapshots": 1, "obs_version": 3},
                    out=str(tmp_path / "unused"))
    runner = make_train(config)[0](jax.random.PRNGKey(1))
    warm = checkpoints.warm_start(path, runner, config)
    assert warm["params"]["actor"][0]["w"].shape == (346, 8)
    assert warm["snaps"][0]["w"].shape == (1, 346, 8)
    with np.load(path) as data:
        arrays = {k: data[k] for k in data.files}
    leaf = leaves[where]
    np.savez(tmp_path / "bad.npz", **{**arrays, leaf: value})
    with pytest.raises(ValueError) as err:
        checkpoints.warm_start(tmp_path / "bad.npz", runner, config)
    assert str(err.value) == f"--init {str(tmp_path / 'bad.npz')!r}: {leaf} {says}"


def test_init_reads_a_checkpoint_that_kept_more_snapshots_than_the_run(tmp_path, monkeypatch):
    """A warm start allowed a checkpoint no more bytes than the new run's own arrays (and a
    metadata record's): one that kept many more snapshots than the new run (a large network's
    8, into a run of 1) was refused as damaged ("declares ..."). It is allowed the arrays it
    should hold."""
    import jax.numpy as jnp

    monkeypatch.setattr(checkpoints, "MAX_META_BYTES", 4096)  # the slack, at this size
    params = {"actor": [{"w": jnp.ones((8, 8), jnp.float32)}]}
    path = tmp_path / "checkpoint.npz"
    checkpoints.save_checkpoint({"params": params, "snaps": [{"w": jnp.ones((40, 8, 8))}]},
                                {**SETTINGS, "snapshots": 40}, 0, 0.0, path)
    run = {"params": params, "snaps": [{"w": jnp.zeros((1, 8, 8))}]}
    assert [x.shape for x in checkpoints.checkpoint_networks(path, run)] == [(8, 8)]


def test_train_jax_refuses_a_changed_checkpoint_in_one_line_and_writes_nothing(tmp_path, capsys):
    """The command: exit status 2, one line, no run folder (the NaN run was saved)."""
    from experiments.train_jax import main

    from ..helpers import error_lines

    path = tmp_path / "checkpoint.npz"
    _, _, leaves = _train_jax_checkpoint(path)
    with np.load(path) as data:
        arrays = {k: data[k] for k in data.files}
    update = leaves["['update']"]
    arrays[update] = np.int32(-1)
    np.savez(path, **arrays)
    flags = [f"--{k.replace('_', '-')}={v}" for k, v in TINY_RUN.items() if k != "progress"]
    out = tmp_path / "run"
    assert main([*flags, "--no-progress", "--out", str(out), "--resume", str(path)]) == 2
    assert error_lines(capsys.readouterr().err) == [
        f"error: --resume {str(path)!r}: {update} (update) is -1; a count is never negative"]
    assert not out.exists()


@pytest.mark.parametrize("field, value, says", [
    ("matmul", "float16", "matmul='float16' is not allowed; allowed: 'float32', 'bfloat16'"),
    ("matmul", None, "matmul=None must be a str, not NoneType"),
    ("target_score", -5, "target_score=-5 is out of range; allowed: 1..65536"),
    ("target_score", "x", "target_score='x' must be an integer, not str"),
    ("num_minibatches", 0, "num_minibatches=0 is out of range; allowed: 1.."),
    ("update_epochs", -1, "update_epochs=-1 is out of range; allowed: 1.."),
])
def test_train_jax_refuses_a_checkpoint_whose_settings_no_run_has(tmp_path, capsys, field,
                                                                  value, says):
    """``--resume`` of a checkpoint whose saved config said matmul='float16' or null,
    target_score=-5 or 'x', num_minibatches=0 or update_epochs=-1 trained on (the last turned
    off the check of the optimizer's step count); its settings are held to the rules of the
    flags that gave them, and a bad one is refused in one line naming the file and the
    setting, before anything is written."""
    from experiments.train_jax import main

    from ..helpers import error_lines

    path = tmp_path / "checkpoint.npz"
    _train_jax_checkpoint(path)
    with np.load(path) as data:
        arrays = {k: data[k] for k in data.files}
    meta = json.loads(str(arrays["meta"]))
    meta["config"][field] = value
    np.savez(path, **{**arrays, "meta": np.array(json.dumps(meta))})
    flags = [f"--{k.replace('_', '-')}={v}" for k, v in TINY_RUN.items() if k != "progress"]
    out = tmp_path / "run"
    assert main([*flags, "--no-progress", "--out", str(out), "--resume", str(path)]) == 2
    lines = error_lines(capsys.readouterr().err)
    assert len(lines) == 1 and lines[0].startswith(
        f"error: --resume {str(path)!r} is damaged: in its config, {says}"), lines
    assert not out.exists()


def test_a_checkpoint_array_declaring_a_terabyte_is_refused_before_it_is_read(tmp_path):
    """Checkpoints were read with np.load, which allocates what an array's header declares: a
    leaf or a metadata record declaring a terabyte was a MemoryError, not the one-line error."""
    import jax

    runner = _runner()
    path = tmp_path / "checkpoint.npz"
    checkpoints.save_checkpoint(runner, SETTINGS, 64, 1.5, path)
    fresh = {**runner, "update": jax.numpy.int32(0)}
    leaf = with_a_huge_array_header(shutil.copy(path, tmp_path / "leaf.npz"), "leaf0")
    with pytest.raises(ValueError, match=r"is damaged \(leaf0 declares float64 \(1000000, "):
        checkpoints.restore(leaf, fresh)
    meta = with_a_huge_array_header(shutil.copy(path, tmp_path / "meta.npz"), "meta")
    with pytest.raises(ValueError, match=r"is not a train_jax checkpoint \(meta declares "):
        checkpoints.read_checkpoint(meta, SETTINGS)


def test_a_file_that_is_not_a_checkpoint_is_named_in_our_words(tmp_path):
    """A pickled or non-numpy file gave numpy's advice to load it unsafely with allow_pickle=
    inside the one-line error."""
    text, pickled = tmp_path / "text.npz", tmp_path / "pickled.npz"
    text.write_text("hello")
    np.savez(pickled, meta=np.array([object()], dtype=object))
    for path, reason in ((text, "not an .npz archive"),
                         (pickled, "it holds pickled (object) data, which is never loaded")):
        with pytest.raises(ValueError) as err:
            checkpoints.read_checkpoint(path, SETTINGS)
        assert str(err.value) == f"--resume {str(path)!r} is not a train_jax checkpoint ({reason})"
