"""Record shards and a tournament's records/ as a hostile user leaves them (issue 33, item 3): a
damaged gzip member in the middle of a shard, a shard that expands a thousandfold, a record
that disagrees with its line of matches.jsonl, a match recorded twice. A damaged member is
named and the records after it are still read; a bomb is one RecordError; a disagreeing or
repeated record is refused by the readers (naming the match and the file) and repaired by a
resumed tournament, which plays those matches again for their records."""

from __future__ import annotations

import gzip
import json
import re
import time
import zlib

import pytest

from agents.tournament import TournamentConfig, run_tournament
from agents.tournament.runner import MATCHES_FILE, TournamentDirError
from dominoes_env import record_io
from dominoes_env.cli import main as dominoes_main
from dominoes_env.core import RecordError, RuleConfig
from dominoes_env.record_io import (
    RECORDS_DIR,
    encode_record,
    iter_records,
    read_record,
    scan_gzip_members,
    scan_shard,
    shard_name,
)
from experiments.tournament import main as tournament_main

from .helpers import random_match
from .test_tournament_records import assert_exact, stored

FAST = RuleConfig(target_score=40)


def error_line(err: str) -> str:
    assert "Traceback" not in err, err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    return lines[0]


def shard_of(tmp_path, n: int = 6):
    """A shard of ``n`` records (match index i, key "k<i>") and the byte offset of each."""
    rec = random_match(FAST, 3).to_record()
    members = [encode_record(dict(rec, match={"index": i, "key": f"k{i}"})) for i in range(n)]
    offsets = [sum(len(m) for m in members[:i]) for i in range(n)]
    path = tmp_path / "s.jsonl.gz"
    path.write_bytes(b"".join(members))
    return path, members, offsets


def damage(member: bytes) -> bytes:
    """The member with bytes in its compressed data changed (its header left whole)."""
    mid = len(member) // 2
    return member[:mid] + bytes(b ^ 0x5A for b in member[mid : mid + 8]) + member[mid + 8 :]


# -- a damaged member in the middle of a shard --------------------------------------------------
@pytest.mark.parametrize("how", ["flipped", "cut", "garbage", "zeros"])
def test_a_damaged_member_is_named_and_the_records_after_it_are_read(tmp_path, how):
    path, members, offsets = shard_of(tmp_path)
    bad = {"flipped": damage(members[3]), "cut": members[3][: len(members[3]) // 2],
           "garbage": b"not gzip at all", "zeros": bytes(100)}[how]  # fmt: skip
    path.write_bytes(b"".join(members[:3]) + bad + b"".join(members[4:]))
    # match 4 is after the damage: found (it was "holds no record of match '4'")
    assert read_record(path, 4)["match"]["key"] == "k4"
    assert read_record(path, "k5")["match"]["index"] == 5
    with pytest.raises(RecordError) as err:
        read_record(path, 3)
    assert (f"holds no record of match '3'; gzip member 4 (bytes {offsets[3]:,} to "
            f"{offsets[3] + len(bad) - 1:,}) is damaged") in str(err.value)
    assert "which may have held it" in str(err.value)
    with pytest.raises(RecordError, match=r"gzip member 4 \(bytes .*\) is damaged"):
        list(iter_records(path))
    keys = [r["match"]["key"] for r in iter_records(path, skip_damaged=True)]
    assert keys == ["k0", "k1", "k2", "k4", "k5"]
    scan = scan_shard(path.read_bytes())
    assert [d.member for d in scan.damaged] == [4] and scan.end == len(path.read_bytes())
    # the old reading stays what it was: the members before the first damage
    members_before, end = scan_gzip_members(path.read_bytes())
    assert len(members_before) == 3 and end == offsets[3]


def test_a_shard_damaged_in_two_places_names_each(tmp_path):
    path, members, offsets = shard_of(tmp_path)
    path.write_bytes(members[0] + damage(members[1]) + members[2] + damage(members[3])
                     + members[4] + b"trailing garbage")
    scan = scan_shard(path.read_bytes())
    assert [(d.member, d.offset) for d in scan.damaged] == [(2, offsets[1]), (4, offsets[3]),
                                                              (6, offsets[5])]
    assert [json.loads(m)["match"]["index"] for m in scan.members] == [0, 2, 4]
    with pytest.raises(RecordError, match="holds 3 records and 3 damaged gzip member"):
        read_record(path)


def test_a_member_cut_off_at_the_end_is_still_no_damage(tmp_path):
    path, members, _ = shard_of(tmp_path, 2)
    path.write_bytes(members[0] + members[1] + members[1][:30])  # a crash while appending
    assert [r["match"]["index"] for r in iter_records(path)] == [0, 1]
    scan = scan_shard(path.read_bytes())
    assert not scan.damaged and scan.end == len(members[0] + members[1])


def test_a_record_in_the_member_a_shard_ends_inside_is_named_as_cut_short(tmp_path, capsys):
    """A shard whose last member lacks its trailer (its last 10 bytes cut) was said to hold no
    record of that member's match, as if whole; a flipped byte was named."""
    path, members, offsets = shard_of(tmp_path, 3)
    path.write_bytes(b"".join(members)[:-10])
    assert [r["match"]["index"] for r in iter_records(path)] == [0, 1]  # as before: no damage
    assert read_record(path, 1)["match"]["key"] == "k1"
    cut = (f"s.jsonl.gz is cut short: it ends inside gzip member 3 (bytes {offsets[2]:,} to "
           f"{offsets[2] + len(members[2]) - 11:,}), which may have held it")
    with pytest.raises(RecordError) as err:
        read_record(path, 2)
    assert str(err.value) == f"{str(path)!r} holds no record of match '2'; {cut}"
    assert dominoes_main(["replay", str(path), "--match", "k2"]) == 2
    assert error_line(capsys.readouterr().err).endswith(cut)
    # and through a tournament's folder, where the match's line says which shard holds it
    out, _ = tournament(tmp_path)
    shard = out / RECORDS_DIR / shard_name(0)
    last = list(iter_records(shard))[-1]["match"]["key"]
    shard.write_bytes(shard.read_bytes()[:-10])
    assert dominoes_main(["replay", str(out), "--match", last]) == 2
    line = error_line(capsys.readouterr().err)
    assert f"holds no record of match {last!r}; {shard_name(0)} is cut short: it ends inside " \
           "gzip member 4 (bytes " in line and line.endswith(", which may have held it"), line


def test_the_replay_command_names_the_damage_in_one_line(tmp_path, capsys):
    path, members, offsets = shard_of(tmp_path)
    path.write_bytes(b"".join(members[:3]) + damage(members[3]) + b"".join(members[4:]))
    assert dominoes_main(["replay", str(path), "--match", "5"]) == 0
    capsys.readouterr()
    assert dominoes_main(["replay", str(path), "--match", "3"]) == 2
    line = error_line(capsys.readouterr().err)
    assert "holds no record of match '3'" in line and f"bytes {offsets[3]:,} to" in line


# -- decompression bombs ------------------------------------------------------------------------
def bomb_member(size: int) -> bytes:
    """One gzip member of a JSON record padded to ``size`` bytes, compressed a thousandfold."""
    z = zlib.compressobj(9, zlib.DEFLATED, 31)
    parts = [z.compress(b'{"rules": {}, "hands": [], "pad": "')]
    block = b"a" * (1 << 20)
    for _ in range(size >> 20):
        parts.append(z.compress(block))
    parts.append(z.compress(b'"}\n'))
    parts.append(z.flush())
    return b"".join(parts)


def test_a_member_expanding_past_a_record_size_is_refused_not_read(tmp_path):
    path, members, _ = shard_of(tmp_path, 2)
    bomb = bomb_member(80 << 20)  # 80 MiB of JSON in about 80 KB
    assert len(bomb) < 200_000
    path.write_bytes(members[0] + bomb + members[1])
    start = time.process_time()
    with pytest.raises(RecordError, match="it expands to more than 67,108,864 bytes"):
        list(iter_records(path))
    assert [r["match"]["index"] for r in iter_records(path, skip_damaged=True)] == [0, 1]
    assert time.process_time() - start < 10
    path.write_bytes(bomb)  # alone: it was read as a record of 80 MiB
    with pytest.raises(RecordError, match="expands to more than"):
        read_record(path)


def test_a_shard_expanding_past_its_limit_is_one_record_error(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(record_io, "MAX_SHARD_BYTES", 3 << 20)
    path = tmp_path / "s.jsonl.gz"
    path.write_bytes(bomb_member(1 << 20) * 4)  # four records of 1 MiB: 4 MiB in all
    with pytest.raises(RecordError, match=r"expands to more than 3,145,728 bytes when "
                                          r"decompressed \(at gzip member 3, byte "):
        list(iter_records(path, skip_damaged=True))
    assert dominoes_main(["replay", str(path), "--match", "0"]) == 2
    assert "expands to more than" in error_line(capsys.readouterr().err)


@pytest.mark.parametrize("data", [
    record_io.GZIP_MAGIC * (2 << 20),  # headers whose file name never ends
    (record_io.GZIP_MAGIC + b"\x00" * 7) * 20_000,  # headers without a body
])  # fmt: skip
def test_a_shard_of_endless_damage_is_refused_in_a_moment(data):
    start = time.process_time()
    with pytest.raises(RecordError, match="is not a shard of records: past byte"):
        scan_shard(data)
    assert time.process_time() - start < 5


# -- a tournament's records against its matches.jsonl ------------------------------------------
def tournament(tmp_path, matches: int = 4):
    out = tmp_path / "run"
    config = TournamentConfig(["random", "greedy"], FAST, matches=matches)
    run_tournament(config, out, progress=False, save_records=True)
    return out, config


def rewrite_shard(out, change) -> None:
    """Rewrite the first shard's records through ``change(list of records) -> list``."""
    path = out / RECORDS_DIR / shard_name(0)
    records = change(list(iter_records(path)))
    path.write_bytes(b"".join(encode_record(r) for r in records))


TAMPER = {
    "seed": lambda recs: [dict(recs[0], match=dict(recs[0]["match"], seed=7)), *recs[1:]],
    "seats": lambda recs: [dict(recs[0], match=dict(recs[0]["match"],
                                                    seats=recs[0]["match"]["seats"][::-1])),
                           *recs[1:]],
    "key": lambda recs: [dict(recs[0], match=dict(recs[0]["match"], key=recs[1]["match"]["key"])),
                         *recs[1:]],
    "scores": lambda recs: [dict(recs[0], hands=[*recs[0]["hands"][:-1], dict(  # one move less
        recs[0]["hands"][-1], moves=recs[0]["hands"][-1]["moves"][:-1])]), *recs[1:]],
    "twice": lambda recs: [recs[0], *recs],
}


@pytest.mark.parametrize("how", list(TAMPER))
def test_a_record_that_disagrees_with_matches_jsonl_is_refused_by_replay(tmp_path, capsys, how):
    out, _ = tournament(tmp_path)
    matches, _ = stored(out)
    first = min(matches.values(), key=lambda m: m["index"])
    rewrite_shard(out, TAMPER[how])
    which = first["key"] if how != "key" else sorted(matches.values(),
                                                     key=lambda m: m["index"])[1]["key"]
    assert dominoes_main(["replay", str(out), "--match", which]) == 2
    line = error_line(capsys.readouterr().err)
    assert f"match {which!r}" in line and shard_name(0) in line, line
    assert ("records of match" if how in ("twice", "key") else "disagrees with matches.jsonl") \
        in line
    with pytest.raises(RecordError, match=re.escape(f"match {which!r}")):  # its shard alike
        read_record(out / RECORDS_DIR / shard_name(0), which)


def test_a_record_that_does_not_replay_is_not_said_to_disagree(tmp_path, capsys):
    """A tournament's record whose rules no longer load (or whose moves break them) was said
    to disagree with matches.jsonl, though the line is not at fault."""
    out, _ = tournament(tmp_path)
    matches, _ = stored(out)
    first = min(matches.values(), key=lambda m: m["index"])
    rewrite_shard(out, lambda recs: [dict(recs[0], rules=dict(recs[0]["rules"], max_pip=99)),
                                     *recs[1:]])
    assert dominoes_main(["replay", str(out), "--match", first["key"]]) == 2
    line = error_line(capsys.readouterr().err)
    assert f"the record of match {first['key']!r} does not replay (" in line, line
    assert "disagrees" not in line, line


def test_a_record_of_no_hand_is_refused_by_replay_and_its_viewer(tmp_path, capsys):
    """``"hands": []`` was replayed as a match, "scores [0, 0], winner null", and shown as a
    viewer page: a match record holds at least one hand."""
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"rules": {}, "hands": []}))
    for extra in ([], ["--html", str(tmp_path / "h.html")]):
        assert dominoes_main(["replay", str(path), *extra]) == 2
        line = error_line(capsys.readouterr().err)
        assert "'hands' is empty: a match record holds at least one hand" in line, line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]


def test_replay_refuses_a_match_with_two_different_lines_in_matches_jsonl(tmp_path, capsys):
    """replay read the first line of a match and passed over a second, different one."""
    out, _ = tournament(tmp_path)
    matches, _ = stored(out)
    first = min(matches.values(), key=lambda m: m["index"])
    path = out / MATCHES_FILE
    other = dict(first, hands=first["hands"] + 1)
    path.write_text(path.read_text() + json.dumps(other) + "\n")
    assert dominoes_main(["replay", str(out), "--match", first["key"]]) == 2
    line = error_line(capsys.readouterr().err)
    assert f"two different lines of match {first['key']!r}" in line, line


@pytest.mark.parametrize("how", [*TAMPER, "damaged", "rules", "wrong shard"])
def test_a_resumed_tournament_repairs_its_records(tmp_path, capsys, how):
    out, config = tournament(tmp_path)
    before = (out / MATCHES_FILE).read_text()
    path = out / RECORDS_DIR / shard_name(0)
    if how == "damaged":
        members = scan_shard(path.read_bytes()).members
        blobs = [gzip.compress(m, mtime=0) for m in members]
        path.write_bytes(blobs[0] + damage(blobs[1]) + b"".join(blobs[2:]))
    elif how == "rules":
        rewrite_shard(out, lambda recs: [dict(recs[0], rules=dict(recs[0]["rules"],
                                                                  target_score=41)), *recs[1:]])
    elif how == "wrong shard":
        rewrite_shard(out, lambda recs: recs[1:])
        moved = list(iter_records(out / RECORDS_DIR / shard_name(0)))
        (out / RECORDS_DIR / shard_name(1000)).write_bytes(encode_record(moved[0]))
    else:
        rewrite_shard(out, TAMPER[how])
    capsys.readouterr()
    again = run_tournament(config, out, progress=False, save_records=True)
    assert again.played == 0 and (out / MATCHES_FILE).read_text() == before
    err = capsys.readouterr().err
    said = "replaced by the replay's" if how == "scores" else "dropped"  # disputed: replayed
    assert "warning: records/records-" in err and said in err, err
    assert assert_exact(out) == 4  # one record per match again, each agreeing with its line
    capsys.readouterr()
    run_tournament(config, out, progress=False, save_records=True)
    assert "warning" not in capsys.readouterr().err  # repaired: nothing more to say


def change_first_line(out, change) -> dict:
    """Rewrite the first line of ``out``'s matches.jsonl through ``change(line) -> line``;
    returns the line as it was."""
    path = out / MATCHES_FILE
    lines = path.read_text().splitlines()
    first = json.loads(lines[0])
    lines[0] = json.dumps(change(dict(first)))
    path.write_text("\n".join(lines) + "\n")
    return first


@pytest.mark.parametrize("change", [  # lines a match could end with (others are refused
    lambda line: dict(line, hands=line["hands"] + 1),  # before the records are looked at)
    lambda line: dict(line, scores=[x + 5 * (side == line["winner"])
                                    for side, x in enumerate(line["scores"])]),
])  # fmt: skip
def test_a_resumed_tournament_names_a_changed_line_and_keeps_the_record(tmp_path, capsys,
                                                                        change):
    """A line of matches.jsonl whose scores or hands were changed: the run dropped the
    match's intact game record (the shard rewritten without it), played the match again, and
    then blamed an agent ("not reproducible from its seed"). The run now says that the line
    disagrees with both the record and the replay, naming the file and the match, and the
    record stays in its shard."""
    out, config = tournament(tmp_path)
    first = change_first_line(out, change)
    shard = out / RECORDS_DIR / shard_name(0)
    before = (shard.read_bytes(), (out / MATCHES_FILE).read_text())
    capsys.readouterr()
    with pytest.raises(TournamentDirError) as caught:
        run_tournament(config, out, progress=False, save_records=True)
    # the error alone: a warning before it announced a replay that would drop the record
    assert capsys.readouterr().err == ""
    message = str(caught.value)
    assert f"{out / MATCHES_FILE} says match {first['key']!r}" in message, message
    assert "its game record and a replay" in message and "was changed" in message, message
    assert "not reproducible" not in message, message
    assert (shard.read_bytes(), (out / MATCHES_FILE).read_text()) == before
    change_first_line(out, lambda line: first)  # the line put back: the run is whole
    again = run_tournament(config, out, progress=False, save_records=True)
    assert again.played == 0 and assert_exact(out) == 4


def test_a_changed_record_is_replaced_beside_a_match_played_anew(tmp_path, capsys):
    """The replay of a disputed record that agrees with its line replaces the record in its
    shard, also after this run appended another match's record to that shard."""
    out, config = tournament(tmp_path)
    rewrite_shard(out, lambda recs: [*recs[:-1], dict(recs[-1], hands=recs[-1]["hands"][:-1])])
    path = out / MATCHES_FILE
    path.write_text("".join(path.read_text().splitlines(keepends=True)[1:]))  # match 0 anew
    again = run_tournament(config, out, progress=False, save_records=True)
    err = capsys.readouterr().err
    assert again.played == 1 and err.count("\n") == 1, err
    assert "disagreed with matches.jsonl" in err and "replaced by the replay's" in err, err
    assert assert_exact(out) == 4


def test_a_tournament_resumed_on_a_bomb_shard_is_one_line(tmp_path, capsys, monkeypatch):
    out, config = tournament(tmp_path)
    monkeypatch.setattr(record_io, "MAX_SHARD_BYTES", 2 << 20)
    with open(out / RECORDS_DIR / shard_name(0), "ab") as f:
        f.write(bomb_member(1 << 20) * 3)
    capsys.readouterr()
    assert tournament_main(["--agents", "random", "greedy", "--matches", "4", "--target-score",
                            "40", "--out", str(out), "--quiet", "--no-plots",
                            "--save-records"]) == 2
    line = error_line(capsys.readouterr().err)
    assert "expands to more than 2,097,152 bytes" in line and "remove that shard" in line


# -- a key given twice ----------------------------------------------------------------------------
def _twice(text: str, key: str, value) -> str:
    """JSON object text with ``key`` given a second time, at its end."""
    return text.rstrip()[:-1] + f", {json.dumps(key)}: {json.dumps(value)}}}"


@pytest.mark.parametrize("reader", ["record", "shard", "dataset", "policy"])
def test_a_data_file_holding_a_key_twice_is_refused_naming_the_key(tmp_path, reader):
    """``json.loads`` keeps a repeated key's last value without a word: a record holding
    ``"rules"`` twice was replayed by the second (another JSON reader may take the first), a
    policy's metadata holding ``obs_version`` twice, a dataset.json holding ``seed`` twice..."""
    import numpy as np

    from agents.datasets import build_dataset, dataset_info
    from agents.ppo import random_policy_npz
    from dominoes_env.core.records import load_record
    from dominoes_env.policy_format import PolicyFileError, read_policy

    record = random_match(FAST, 3).to_record()
    if reader == "record":
        path = tmp_path / "r.json"
        path.write_text(_twice(json.dumps(record), "rules", {"max_pip": 6, "target_score": 40}))
        with pytest.raises(RecordError, match="the key 'rules' appears twice"):
            load_record(path)
    elif reader == "shard":
        path = tmp_path / "s.jsonl.gz"
        text = _twice(json.dumps(dict(record, match={"index": 0, "key": "k0"})), "hands", [])
        path.write_bytes(gzip.compress(text.encode() + b"\n"))
        with pytest.raises(RecordError, match="the key 'hands' appears twice"):
            read_record(path)
    elif reader == "dataset":
        config = TournamentConfig(["random", "greedy"], RuleConfig(target_score=20), matches=2,
                                  seed=0)
        build_dataset(config, tmp_path / "ds", progress=False)
        info = tmp_path / "ds" / "dataset.json"
        info.write_text(_twice(info.read_text(), "seed", 7))
        with pytest.raises(ValueError, match="the key 'seed' appears twice"):
            dataset_info(tmp_path / "ds")
    else:
        path = tmp_path / "p.npz"
        random_policy_npz(path, RuleConfig(), hidden=(8,))
        arrays = dict(np.load(path))
        arrays["metadata"] = np.array(_twice(str(arrays["metadata"]), "obs_version", 2))
        np.savez(path, **arrays)
        with pytest.raises(PolicyFileError, match="the key 'obs_version' appears twice"):
            read_policy(path)


@pytest.mark.parametrize("where", ["matches.jsonl", "config.json", "shard", "replay"])
def test_a_tournament_file_holding_a_key_twice_is_refused_naming_the_key(tmp_path, capsys,
                                                                         where):
    """A line of matches.jsonl holding ``"index"`` twice was read by its last value on resume
    and by replay, a config.json holding a key twice alike, and a shard's record holding one
    twice was kept by a resumed run, though the records' reader refuses it."""
    out, config = tournament(tmp_path)
    matches = out / MATCHES_FILE
    lines = matches.read_text().splitlines()
    first = json.loads(lines[0])
    if where in ("matches.jsonl", "replay"):
        lines[0] = _twice(lines[0], "index", first["index"])
        matches.write_text("\n".join(lines) + "\n")
    elif where == "config.json":
        (out / "config.json").write_text(_twice((out / "config.json").read_text(), "seed",
                                                config.seed))
    else:
        rewrite_shard(out, lambda recs: recs)  # one member a record
        shard = out / RECORDS_DIR / shard_name(0)
        members = scan_shard(shard.read_bytes()).members
        twice = _twice(members[0].decode(), "hands", json.loads(members[0])["hands"])
        shard.write_bytes(b"".join(gzip.compress(m, mtime=0) for m in
                                   [twice.encode() + b"\n", *members[1:]]))
    if where == "replay":
        assert dominoes_main(["replay", str(out), "--match", first["key"]]) == 2
        assert "the key 'index' appears twice" in error_line(capsys.readouterr().err)
    elif where == "shard":
        again = run_tournament(config, out, progress=False, save_records=True)
        err = capsys.readouterr().err
        assert again.played == 0 and "(the key 'hands' appears twice in one object); " \
            "dropped" in err, err
        assert assert_exact(out) == 4
    else:
        with pytest.raises(TournamentDirError, match="appears twice"):
            run_tournament(config, out, progress=False, save_records=True)


@pytest.mark.parametrize("path, error", [("", ValueError), (b"ds", TypeError),
                                         (None, TypeError)])
def test_a_dataset_path_that_is_no_path_names_the_parameter(tmp_path, monkeypatch, path, error):
    """``load_decisions("")`` read the working directory as the dataset ("'.' is not a
    dataset directory"); bytes and None were TypeErrors from inside pathlib naming nothing."""
    from agents.datasets import dataset_info, load_decisions

    monkeypatch.chdir(tmp_path)
    for reader in (dataset_info, load_decisions):
        with pytest.raises(error, match=r"^path="):
            reader(path)


@pytest.mark.parametrize("damage", ["complete is 'yes'", "an array no field names"])
def test_a_dataset_with_a_field_of_another_kind_is_refused(tmp_path, damage):
    """dataset.json saying ``"complete": "yes"``, or a decisions file holding an array that is
    no field of the format, were read without a word."""
    import numpy as np

    from agents.datasets import build_dataset, load_decisions

    config = TournamentConfig(["random", "greedy"], RuleConfig(target_score=20), matches=2,
                              seed=0)
    build_dataset(config, tmp_path / "ds", progress=False)
    if damage.startswith("complete"):
        info = tmp_path / "ds" / "dataset.json"
        info.write_text(json.dumps({**json.loads(info.read_text()), "complete": "yes"}))
        fragment = "complete must be true or false, not 'yes'"
    else:
        shard = next((tmp_path / "ds" / "decisions").glob("*.npz"))
        np.savez(shard, **dict(np.load(shard)), evil=np.zeros(3))
        fragment = "holds 'evil', which is not a field of this format"
    with pytest.raises(ValueError, match=re.escape(fragment)):
        load_decisions(tmp_path / "ds")
