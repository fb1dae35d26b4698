"""The policy file format has one reader and one writer (``dominoes_env.policy_format``): what
one program writes every other reads, and a bad file gets the same refusal from every reader."""

from __future__ import annotations

import os

import numpy as np
import pytest

from dominoes_env.core import RuleConfig
from dominoes_env.policy_format import (
    FORMAT,
    MAX_WEIGHT,
    PolicyFileError,
    check_policy,
    read_policy,
    write_policy,
)

META = {"obs_size": 234, "num_actions": 112, "obs_version": 2, "rules": RuleConfig().to_dict()}


def _arrays(hidden=(8,), seed=0):
    rng = np.random.default_rng(seed)
    sizes = [234, *hidden]
    arrays = {}
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:], strict=True)):
        arrays[f"w{i}"], arrays[f"b{i}"] = rng.normal(size=(a, b)), rng.normal(size=b)
    arrays["action_w"], arrays["action_b"] = rng.normal(size=(sizes[-1], 112)), np.zeros(112)
    return arrays


def test_a_round_trip_keeps_every_array_the_activation_and_the_metadata(tmp_path):
    arrays = _arrays(hidden=(8, 4))
    path = tmp_path / "sub" / "p.npz"  # the folder is made
    write_policy(path, arrays, "relu", {**META, "steps": 5})
    policy = read_policy(path)
    keys = [("w0", "b0"), ("w1", "b1"), ("action_w", "action_b")]
    assert len(policy.layers) == len(keys) and policy.activation == "relu"
    for (w, b), (wk, bk) in zip(policy.layers, keys, strict=True):
        np.testing.assert_array_equal(w, arrays[wk])
        np.testing.assert_array_equal(b, arrays[bk])
    assert (policy.obs_size, policy.num_actions, policy.obs_spec.version) == (234, 112, 2)
    assert policy.metadata == {**META, "steps": 5} and policy.path == path
    with np.load(path) as data:
        assert str(data["format"]) == FORMAT and int(data["num_layers"]) == 2
    assert check_policy(path, arrays, "relu", META).obs_size == 234


@pytest.mark.parametrize("change, activation, meta, says", [
    ({"w0": np.zeros((234, 8), np.int64)}, "tanh", META, "w0 must be a 2-D float array"),
    ({"b0": np.full(8, np.inf)}, "tanh", META, "b0 holds NaN or infinite values"),
    # finite in the file, not in what the players compute in: 1e300 is inf in float32 (a
    # tournament played NaN probabilities), a longdouble 1e400 is inf in float64
    ({"action_w": _arrays()["action_w"] * 1e300}, "tanh", META,
     "action_w holds a value of magnitude 3.01e+300; a policy's weights are at most 1e+06"),
    ({"b0": np.full(8, 3e38, np.float32)}, "tanh", META, "b0 holds a value of magnitude 3e+38"),
    ({"w0": np.full((234, 8), 2e6)}, "tanh", META, "w0 holds a value of magnitude 2e+06"),
    ({"b0": np.full(8, np.longdouble("1e400"))}, "tanh", META,
     f"b0 is {np.dtype(np.longdouble)}; a policy's weights are float16, float32 or float64"),
    ({"action_b": np.zeros(112, np.longdouble)}, "tanh", META,
     f"action_b is {np.dtype(np.longdouble)}; a policy's weights are float16"),
    ({"w0": np.zeros((234, 8), complex)}, "tanh", META, "w0 must be a 2-D float array"),
    ({"action_b": None}, "tanh", META, "missing action_b"),
    ({}, "swish", META, "unknown activation 'swish'; allowed: tanh, relu"),
    ({}, None, META, "activation must be a string"),
    ({}, "tanh", {**META, "obs_version": 9}, "observation version 9, which this dominoes_env"),
    ({}, "tanh", {**META, "obs_size": 234.0}, "metadata says obs_size=234.0; the weights"),
    ({}, "tanh", {**META, "rules": None}, "metadata's rules must be a JSON object"),
    ({}, "tanh", {**META, "seen": {1, 2}}, "metadata is not JSON (Object of type set"),
    # the card: "steps": NaN was read, and shown as the policy's training
    ({}, "tanh", {**META, "steps": float("nan")}, "metadata says steps=nan; it must be a whole"),
    ({}, "tanh", {**META, "steps": True}, "metadata says steps=True"),
    ({}, "tanh", {**META, "steps": -5}, "metadata says steps=-5"),
    ({}, "tanh", {**META, "wall_s": float("inf")}, "metadata says wall_s=inf; it must be a"),
    ({}, "tanh", {**META, "command": ["train"]}, "metadata says command=['train']; it must"),
    # an integer too big for a float was an OverflowError, not the reader's error
    ({}, "tanh", {**META, "steps": 10**400}, "metadata says steps=1000"),
    ({}, "tanh", {**META, "steps": 2**53 + 1}, "it must be a whole number of steps in 0..9,"),
    ({}, "tanh", {**META, "wall_s": 10**400}, "metadata says wall_s=1000"),
    ({}, "tanh", {**META, "wall_s": 1e300}, "metadata says wall_s=1e+300; it must be a number"),
    ({}, "tanh", {**META, "seed": 2**64}, "metadata says seed=18446744073709551616; it must"),
    ({}, "tanh", {**META, "devices": 10**400}, "metadata says devices=1000"),
])  # fmt: skip
def test_what_the_reader_would_refuse_is_never_written(tmp_path, change, activation, meta, says):
    arrays = {k: v for k, v in {**_arrays(), **change}.items() if v is not None}
    path = tmp_path / "p.npz"
    with pytest.raises(PolicyFileError) as err:
        write_policy(path, arrays, activation, meta)
    assert str(err.value).startswith(f"policy file {str(path)!r}: ") and says in str(err.value)
    assert os.listdir(tmp_path) == []
    if activation is not None and "not JSON" not in says:
        # check=False writes it as given (a None activation would be a pickle); read back, it
        # is refused in the same words
        write_policy(path, arrays, activation, meta, check=False)
        with pytest.raises(PolicyFileError) as again:
            read_policy(path)
        assert str(again.value) == str(err.value)


def test_weights_up_to_the_cap_in_each_float_dtype_are_read(tmp_path):
    """The cap refuses what no training makes, not a policy of float16 or float64 weights at
    it: every dtype a player computes in is read, each value as stored."""
    path = tmp_path / "p.npz"
    for dtype in (np.float16, np.float32, np.float64):
        arrays = {key: value.astype(dtype) for key, value in _arrays().items()}
        arrays["action_b"][0] = -MAX_WEIGHT if dtype is np.float64 else -60000
        write_policy(path, arrays, "tanh", META)
        (_, _), (_, head_b) = read_policy(path).layers
        assert head_b.dtype == dtype and head_b[0] == arrays["action_b"][0]


def test_a_card_at_its_bounds_is_read(tmp_path):
    card = {"steps": 2**53, "wall_s": 1e9, "seed": 2**64 - 1, "devices": 0, "trainer": ""}
    write_policy(tmp_path / "p.npz", _arrays(), "tanh", {**META, **card})
    assert read_policy(tmp_path / "p.npz").metadata == {**META, **card}


def test_metadata_nested_too_deeply_to_parse_is_not_json(tmp_path):
    """The JAX reader caught only JSONDecodeError: json's RecursionError escaped it."""
    path = tmp_path / "p.npz"
    write_policy(path, _arrays(), "tanh", META)
    with np.load(path) as data:
        arrays = {k: data[k] for k in data.files}
    np.savez(path, **{**arrays, "metadata": np.array("[" * 100_000)})
    with pytest.raises(PolicyFileError, match="metadata is not JSON"):
        read_policy(path)


def test_a_metadata_value_of_the_wrong_type_is_named_not_misread(tmp_path):
    """The reader said 'metadata is not JSON' for metadata that was not a string at all."""
    path = tmp_path / "p.npz"
    write_policy(path, _arrays(), "tanh", META)
    with np.load(path) as data:
        arrays = {k: data[k] for k in data.files}
    np.savez(path, **{**arrays, "metadata": np.zeros(3)})
    with pytest.raises(PolicyFileError, match="metadata must be a string"):
        read_policy(path)


def test_save_policy_npz_checks_what_it_writes(tmp_path):
    """agents.ppo.save_policy_npz wrote whatever it was given (check=False), NaN included."""
    from agents.ppo import save_policy_npz

    path = tmp_path / "p.npz"
    with pytest.raises(PolicyFileError, match="b0 holds NaN or infinite values"):
        save_policy_npz(path, {**_arrays(), "b0": np.full(8, np.nan)}, "tanh", META)
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("arrays", ["w0", ["w0"], None, {0: np.zeros(3)}])
def test_arrays_that_are_no_mapping_of_layer_names_are_a_type_error(tmp_path, arrays):
    """A string or a list of arrays ended in "AttributeError: 'str' object has no attribute
    'items'" (or 'startswith'); nothing is written."""
    meta = {"obs_size": 3, "num_actions": 2, "obs_version": 2}
    for call in (check_policy, write_policy):
        with pytest.raises(TypeError, match=r"^arrays must be a mapping of the layers' names"):
            call(tmp_path / "p.npz", arrays, "tanh", meta)
    assert not os.listdir(tmp_path)


def test_state_vector_needs_a_match():
    from dominoes_env.obs.v2 import state_vector

    for bad in (None, 3, RuleConfig()):  # None was an AttributeError
        with pytest.raises(TypeError, match=r"^state_vector needs a MatchState"):
            state_vector(bad)


def test_an_npz_that_holds_a_member_twice_is_refused(tmp_path):
    """Two members named b0.npy: numpy read the last (here, other weights than the first's)
    and another zip reader the first; the file is refused instead of played either way."""
    import io
    import warnings
    import zipfile

    from dominoes_env.npz_files import NpzError, read_npz

    path = tmp_path / "p.npz"
    write_policy(path, _arrays(), "tanh", META)
    extra = io.BytesIO()
    np.lib.format.write_array(extra, np.zeros(8))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns of the duplicate name
        with zipfile.ZipFile(path, "a") as archive:
            archive.writestr("b0.npy", extra.getvalue())
    with pytest.raises(PolicyFileError, match=r"it holds 'b0.npy' twice"):
        read_policy(path)
    with pytest.raises(NpzError, match=r"^it holds 'b0.npy' twice$"):
        read_npz(path, max_bytes=1 << 20, names=("metadata",))
