"""Game records (docs/rules.md, "Game records"): the exact record a match writes, the exact
replay summary, and every way a record or a record file is refused, with its message."""

from __future__ import annotations

import copy
import json
import os

import pytest

from dominoes_env.core import HandState, MatchState, RecordError, RuleConfig
from dominoes_env.core import records as records_module
from dominoes_env.core.records import (
    hand_record,
    load_record,
    match_record,
    parse_record,
    read_record_bytes,
    record_rules,
    replay_match,
    replay_record,
    write_record,
)

RULES = {"hand_size": 2, "boneyard_reserve": 24}
# seat 0 leads [5|5] (10), seat 1 passes, seat 0 goes out with [5|0] (10) and takes seat 1's
# 9 pips, rounded to 10
DEAL = [[[5, 5], [5, 0]], [[4, 4], [1, 0]]]
BONEYARD = [[a, b] for a in range(7) for b in range(a, 7)
            if [a, b] not in ([5, 5], [0, 5], [4, 4], [0, 1])]  # fmt: skip
HAND = {"leader": 0, "hands": DEAL, "boneyard": BONEYARD,
        "moves": [[0, [5, 5], None], [0, [0, 5], "left"]]}  # fmt: skip
RECORD = {"rules": RULES, "hands": [HAND]}


def record(**changes):
    rec = copy.deepcopy(RECORD)
    rec["hands"][0].update(copy.deepcopy(changes))
    return rec


def test_a_match_writes_the_documented_record():
    rules = RuleConfig(**RULES)
    match = MatchState(rules, auto_deal=False)
    match.start_hand(0, HandState.from_tiles(rules, DEAL, BONEYARD, 0))
    match.play(((5, 5), None))
    match.play(((5, 0), "left"))  # halves in either order; the record writes [low, high]
    # each seat's tiles in index order, [low, high]; the boneyard in draw order
    written = {**HAND, "hands": [[[0, 5], [5, 5]], [[0, 1], [4, 4]]]}
    assert match.to_record() == match_record(match) == {"rules": rules.to_dict(),
                                                        "hands": [written]}  # fmt: skip
    assert hand_record(match.hand) == written  # the finished hand is not written twice
    assert replay_record(match.to_record()) == replay_record(RECORD)


def test_a_lead_is_written_as_it_lies():
    rules = RuleConfig(**RULES)
    hand = HandState.from_tiles(rules, [[[2, 3], [4, 6]], [[1, 1], [0, 0]]], None, 1)
    assert hand_record(hand)["moves"] == []
    hand.play(((1, 1), None))
    hand2 = HandState.from_tiles(rules, [[[2, 3], [4, 6]], [[1, 1], [0, 0]]], None, 0)
    hand2.play(((6, 4), None))
    assert hand_record(hand2)["moves"] == [[0, [6, 4], None]]
    assert hand_record(hand2)["leader"] == 0 and hand_record(hand)["leader"] == 1
    assert hand_record(hand2)["hands"] == [[[2, 3], [4, 6]], [[0, 0], [1, 1]]]


def test_the_replay_summary_is_exact():
    out = replay_record(RECORD)
    assert out == {
        "hands": [{"move_points": [10, 10], "end": "domino", "award": {"side": 0, "points": 10},
                   "scores": [30, 0]}],
        "scores": [30, 0],
        "winner": None,
    }  # fmt: skip
    match, summaries = replay_match(RECORD)
    assert match.scores == [30, 0] and summaries == out["hands"]
    # a record may stop in the middle of a hand
    out = replay_record(record(moves=[[0, [5, 5], None]]))
    assert out["hands"] == [{"move_points": [10], "end": None, "award": None, "scores": [10, 0]}]


def test_a_blocked_tie_writes_no_award_and_a_won_match_its_winner():
    deal = [[[5, 5], [1, 3]], [[5, 0], [2, 2]]]
    bone = [[a, b] for a in range(7) for b in range(a, 7)
            if [a, b] not in ([5, 5], [1, 3], [0, 5], [2, 2])]  # fmt: skip
    rec = {"rules": {**RULES, "target_score": 20}, "hands": [
        {"leader": 0, "hands": deal, "boneyard": bone,
         "moves": [[0, [5, 5], None], [1, [5, 0], "left"]]}]}  # fmt: skip
    out = replay_record(rec)
    assert out["hands"][0]["end"] == "blocked" and out["hands"][0]["award"] is None
    assert out["scores"] == [10, 10] and out["winner"] is None
    rec["rules"]["target_score"] = 10
    rec["hands"][0]["moves"].pop()
    assert replay_record(rec)["winner"] == 0  # the lead reached 10


BAD_RECORDS = [
    ([], r"^a record must be a JSON object with 'rules' and 'hands'$"),
    ({"hands": []}, r"^the record lacks the field 'rules'$"),
    ({"rules": {}}, r"^the record lacks the field 'hands'$"),
    ({"rules": {"num_players": 9}, "hands": []}, r"^rules: num_players=9 is out of range"),
    ({"rules": {"num_players": True}, "hands": []}, r"^rules: num_players=True must be an "),
    ({"rules": {}, "hands": {}}, r"^'hands' must be a list of hands$"),
    ({"rules": {}, "hands": []}, r"^'hands' is empty: a match record holds at least one hand$"),
    ({"rules": {}, "hands": [[]]}, r"^hand 0: must be an object with leader, hands, boneyard, "
                                   r"moves$"),
    ({"rules": RULES, "hands": [{"leader": 0, "hands": DEAL, "moves": []}]},
     r"^hand 0: lacks the field 'boneyard'$"),
    (record(moves={}), r"^hand 0: 'moves' must be a list of \[seat, tile, end\]$"),
    (record(leader=True), r"^hand 0: leader True is not a seat \(0\.\.1\)$"),
    (record(leader=-1), r"^hand 0: leader -1 is not a seat \(0\.\.1\)$"),
    (record(leader="0"), r"^hand 0: leader '0' is not a seat"),
    (record(hands="x"), r"^hand 0: 'hands' must be a list of tiles per seat$"),
    (record(boneyard="x"), r"^hand 0: 'boneyard' must be a list of tiles$"),
    (record(hands=[[[5, 5], [5, 0]]]), r"^hand 0: bad deal: the deal needs one hand per seat"),
    (record(moves=[[0, [5, 5]]]), r"^hand 0, move 0 \[0, \[5, 5\]\]: a move is \[seat, \[a, b\], "
                                  r"end\]$"),
    (record(moves=["x"]), r"^hand 0, move 0 \"x\": a move is \[seat, \[a, b\], end\]$"),
    (record(moves=[[True, [5, 5], None]]), r"^hand 0, move 0 \[true, \[5, 5\], null\]: the seat "
                                           r"True must be an integer$"),
    (record(moves=[[1, [4, 4], None]]), r"^hand 0, move 0 \[1, \[4, 4\], null\]: it is seat 0's "
                                        r"turn, not seat 1's$"),
    (record(moves=[[0, [5, 5], None], [1, [4, 4], "left"]]),
     r"it is seat 0's turn, not seat 1's \(seat 1 could not play and had to pass\)$"),
    (record(moves=[[0, [5, 5, 5], None]]), r": the tile must be a pair \[a, b\]$"),
    (record(moves=[[0, "55", None]]), r": the tile must be a pair \[a, b\]$"),
    (record(moves=[[0, [5, 5], None], [0, [0, 5], "left"], [1, [4, 4], None]]),
     r"^hand 0, move 2 \[1, \[4, 4\], null\]: the hand is already over \(domino\)$"),
    (record(moves=[[0, [5, 5], None], [0, [0, 5], 7]]), r": unknown end 7"),
    # a record names its ends, in JSON's words: the integer constants play takes are no end here
    (record(moves=[[0, [5, 5], None], [0, [0, 5], 0]]),
     r"^hand 0, move 1 \[0, \[0, 5\], 0\]: unknown end 0; allowed: left, right, up, down \(or "
     r"null for the lead\)$"),
    (record(moves=[[0, [5, 5], None], [0, [0, 5], "middle"]]),
     r": unknown end 'middle'; allowed: left, right, up, down \(or null for the lead\)$"),
    (record(moves=[[0, [5, 5], None], [0, [0, 4], "left"]]),
     r": \[0\|4\] is not in seat 0's hand \(it is still in the boneyard: a seat draws only "
     r"when it cannot play\)$"),
    (record(moves=[[0, [5, 5], None], [0, [4, 4], "left"]]), r": \[4\|4\] is not in seat 0's "
                                                             r"hand$"),
    (record(moves=[[0, [5, 5], None], [0, [0, 5], "up"]]), r"up end is not open"),
    (record(moves=[[0, [7, 7], None]]), r"^hand 0, move 0 \[0, \[7, 7\], null\]: \[7\|7\] is "
                                        r"not a tile of the double-6 set \(halves must be integers "
                                        r"0\.\.6\)$"),
    (record(leader=5), r"^hand 0: leader 5 is not a seat \(0\.\.1\)$"),
]  # fmt: skip


@pytest.mark.parametrize("rec, message", BAD_RECORDS)
def test_a_bad_record_names_the_hand_the_move_and_the_reason(rec, message):
    with pytest.raises(RecordError, match=message):
        replay_record(rec)


@pytest.mark.parametrize("rec, message", [bad for bad in BAD_RECORDS if isinstance(bad[0], dict)])
def test_write_record_refuses_a_record_that_does_not_replay(tmp_path, rec, message):
    """The writer checked the record's shape only: a record whose hand 0 had leader 5, or whose
    move 1 was an illegal play, was written, and read back in silence by read_record, while
    replay and the viewer refused it."""
    anchored = message[1:] if message.startswith("^") else ".*" + message
    with pytest.raises(RecordError, match="^record: " + anchored):
        write_record(rec, tmp_path / "r.json")
    assert os.listdir(tmp_path) == []


def test_write_record_names_a_path_with_a_null_character(tmp_path):
    # was a bare "ValueError: embedded null byte", naming neither the path nor the parameter
    with pytest.raises(ValueError, match=r"^path '.*x\\x00\.json' holds a null character; no "
                                         r"path can$"):
        write_record(RECORD, str(tmp_path / "x\0.json"))
    assert os.listdir(tmp_path) == []


def test_hands_after_the_end_and_leaders_that_break_the_rules():
    second = copy.deepcopy(HAND)
    rec = {"rules": RULES, "hands": [HAND, {**second, "leader": 1}]}
    with pytest.raises(RecordError, match=r"^hand 1: leader 1 contradicts the rules: seat 0 "
                                          r"dominoed the previous hand and leads$"):
        replay_record(rec)
    assert replay_record({"rules": RULES, "hands": [HAND, second]})["scores"] == [60, 0]
    won = {"rules": {**RULES, "target_score": 30}, "hands": [HAND, second]}
    with pytest.raises(RecordError, match=r"^hand 1: the match was already won by side 0$"):
        replay_record(won)
    rotate = {"rules": {**RULES, "next_leader": "rotate"}, "hands": [HAND, second]}
    with pytest.raises(RecordError, match=r"^hand 1: leader 0 contradicts the rules: the leader "
                                          r"rotates one seat each hand$"):
        replay_record(rotate)
    unfinished = {"rules": RULES, "hands": [record(moves=[[0, [5, 5], None]])["hands"][0], HAND]}
    with pytest.raises(RecordError, match=r"^hand 1: hand 0 is not finished, so no hand may "
                                          r"follow it$"):
        replay_record(unfinished)
    mid = record(moves=[[0, [5, 5], None], [0, [0, 5], "left"]])
    mid["rules"] = {**RULES, "target_score": 10}
    with pytest.raises(RecordError, match=r"^hand 0, move 1 .*: the match was already won by "
                                          r"side 0$"):
        replay_record(mid)


def test_record_rules():
    rules, hands = record_rules(RECORD)
    assert rules == RuleConfig(**RULES) and hands == [HAND]


def test_write_and_load_a_record_file(tmp_path):
    path = tmp_path / "rec.json"
    write_record(RECORD, path)
    assert path.read_text() == json.dumps(RECORD) + "\n"
    assert load_record(path) == RECORD and load_record(str(path)) == RECORD
    other = {"rules": {**RULES, "target_score": 100}, "hands": [HAND]}
    write_record(other, path)  # overwrite is the default
    assert load_record(path) == other
    with pytest.raises(FileExistsError):
        write_record(RECORD, path, overwrite=False)
    assert load_record(path) == other
    write_record(RECORD, tmp_path / "new.json", overwrite=False)
    assert load_record(tmp_path / "new.json") == RECORD


def test_record_files_that_are_refused(tmp_path, monkeypatch):
    with pytest.raises(RecordError, match=r"^cannot read '.*missing\.json': No such file"):
        load_record(tmp_path / "missing.json")
    with pytest.raises(RecordError, match=r"^cannot read '.*': it is a directory$"):
        load_record(tmp_path)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(RecordError, match=r"^cannot read '.*fifo': it is not a regular file$"):
        load_record(fifo)
    with pytest.raises(RecordError, match=r"^cannot read 'a\\x00b': "):
        load_record("a\x00b")
    path = tmp_path / "big.json"
    path.write_text(json.dumps(RECORD))
    size = path.stat().st_size
    monkeypatch.setattr(records_module, "MAX_RECORD_BYTES", size)
    assert read_record_bytes(path) == path.read_bytes()  # exactly the limit: read
    monkeypatch.setattr(records_module, "MAX_RECORD_BYTES", size - 1)
    with pytest.raises(RecordError, match=rf"^'.*big\.json' is {size:,} bytes; a record is at "
                                          rf"most {size - 1:,}$"):
        load_record(path)


def test_record_text_that_is_refused():
    assert parse_record(b'\xef\xbb\xbf{"a": 1}') == {"a": 1}  # a byte-order mark is allowed
    assert parse_record('{"a": [1]}') == {"a": [1]}
    with pytest.raises(RecordError, match=r"^'f' is not UTF-8 text \(byte 1\); a record is JSON "
                                          r"in UTF-8$"):
        parse_record(b"{\xff}", "f")
    with pytest.raises(RecordError, match=r"^'the record' is not valid JSON: "):
        parse_record("{nope")
    with pytest.raises(RecordError, match=r"^'f' is nested too deeply to be a record$"):
        parse_record("[" * 100_000 + "]" * 100_000, "f")
    with pytest.raises(RecordError, match=r"^'f' holds an integer too long to be a record \(more "
                                          r"than 4,300 digits\)$"):
        parse_record("1" * 5000, "f")


def test_a_long_move_is_shown_cut_to_80_characters():
    move = [0, [5, 5], "y" * 100]
    shown = json.dumps(move)[:77] + "..."
    with pytest.raises(RecordError) as err:
        replay_record(record(moves=[move]))
    assert str(err.value) == f"hand 0, move 0 {shown}: the lead has no end (end must be None)"
    move = [0, [5, 5], "y" * 65]  # 80 characters as JSON: shown whole
    assert len(json.dumps(move)) == 80
    with pytest.raises(RecordError) as err:
        replay_record(record(moves=[move]))
    assert str(err.value).startswith(f"hand 0, move 0 {json.dumps(move)}: the lead")


def test_a_file_that_grows_while_it_is_read_is_refused(tmp_path, monkeypatch):
    # as /proc files do, the file's size reads 0 when it is opened; what counts is what is read
    real_fstat = os.fstat

    def fstat_says_empty(fd):
        st = real_fstat(fd)
        return os.stat_result((st.st_mode, st.st_ino, st.st_dev, st.st_nlink, st.st_uid,
                               st.st_gid, 0, st.st_atime, st.st_mtime, st.st_ctime))

    monkeypatch.setattr(os, "fstat", fstat_says_empty)
    path = tmp_path / "grows.json"
    path.write_bytes(b" " * (2 << 20))  # two chunks of 1 MiB
    monkeypatch.setattr(records_module, "MAX_RECORD_BYTES", 2 << 20)
    assert read_record_bytes(path) == b" " * (2 << 20)  # exactly the limit
    path.write_bytes(b" " * (3 << 20))
    monkeypatch.setattr(records_module, "MAX_RECORD_BYTES", (5 << 20) // 2)
    with pytest.raises(RecordError, match=r"^'.*grows\.json' is larger than 2,621,440 bytes$"):
        read_record_bytes(path)
