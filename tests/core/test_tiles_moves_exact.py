"""Tiles, their documented indices and bitmask tables (dominoes_env.core.tiles), action codes
and moves (dominoes_env.core.moves), the typed history events (dominoes_env.core.events) and
the permissions of a written file (dominoes_env.core.atomic_files)."""

from __future__ import annotations

import os
import pickle

import pytest

from dominoes_env.core import (
    DOWN,
    END_NAMES,
    LEFT,
    RIGHT,
    UP,
    Draw,
    Move,
    Pass,
    Play,
    Tile,
    TileSet,
    code_of,
    end_of,
    iter_bits,
    tile_of,
    tile_set,
)
from dominoes_env.core.atomic_files import atomic_write
from dominoes_env.core.events import as_event
from dominoes_env.core.moves import end_index
from dominoes_env.core.tiles import popcount


@pytest.mark.parametrize("max_pip, num_tiles", [(6, 28), (9, 55), (12, 91)])
def test_every_tile_has_its_documented_index_and_tables(max_pip, num_tiles):
    ts = tile_set(max_pip)
    assert ts.max_pip == max_pip and ts.num_values == max_pip + 1 and ts.num_tiles == num_tiles
    assert repr(ts) == f"TileSet(max_pip={max_pip}, num_tiles={num_tiles})"
    m = max_pip
    for a in range(m + 1):
        for b in range(a, m + 1):
            i = a * (m + 1) - a * (a - 1) // 2 + (b - a)  # the formula of the module docstring
            assert ts.index(a, b) == ts.index(b, a) == i
            assert ts.tiles[i] == Tile(a, b)
            assert (ts.pips[i], ts.low[i], ts.high[i], ts.is_double[i]) == (a + b, a, b, a == b)
    assert ts.full_mask == (1 << num_tiles) - 1
    assert ts.double_mask == sum(1 << ts.index(d, d) for d in range(m + 1))
    for v in range(m + 1):
        assert ts.mask_tiles(ts.suit_mask[v]) == [t for t in ts.tiles if v in t]
        assert popcount(ts.suit_mask[v]) == m + 1
    assert ts.mask_pips(ts.full_mask) == m * (m + 1) * (m + 2) // 2
    assert tile_set(max_pip) is ts


@pytest.mark.parametrize("max_pip", [6, 9, 12])
def test_a_fresh_tile_set_builds_the_same_tables(max_pip):
    # tile_set() caches one TileSet per size; a TileSet built anew must hold the same tables
    ts, m = TileSet(max_pip), max_pip
    tiles = [Tile(a, b) for a in range(m + 1) for b in range(a, m + 1)]
    assert list(ts.tiles) == tiles and ts.num_tiles == len(tiles) and ts.num_values == m + 1
    assert list(ts.pips) == [t.low + t.high for t in tiles]
    assert list(ts.low) == [t.low for t in tiles] and list(ts.high) == [t.high for t in tiles]
    assert list(ts.is_double) == [t.low == t.high for t in tiles]
    assert len(ts.suit_mask) == m + 1
    for v in range(m + 1):
        assert ts.suit_mask[v] == sum(1 << i for i, t in enumerate(tiles) if v in t)
    assert ts.full_mask == (1 << len(tiles)) - 1
    assert ts.double_mask == sum(1 << i for i, t in enumerate(tiles) if t.low == t.high)
    assert [ts.index(t.high, t.low) for t in tiles] == list(range(len(tiles)))


class Index:
    """An integer of another library (as numpy's): it has ``__index__``."""

    def __init__(self, value):
        self.value = value

    def __index__(self):
        return self.value


def test_index_takes_any_integer_type_for_either_half():
    ts = tile_set(6)
    assert ts.index(Index(2), 5) == ts.index(2, Index(5)) == ts.index(Index(5), Index(2)) == 16
    with pytest.raises(ValueError, match=r"^\[8\|2\] is not a tile"):
        ts.index(Index(8), 2)


def test_tile_values():
    assert Tile(2, 5).pips == 7 and not Tile(2, 5).is_double and Tile(4, 4).is_double
    assert str(Tile(2, 5)) == "[2|5]"


def test_masks_and_bits():
    ts = tile_set(6)
    mask = 1 << ts.index(6, 6) | 1 << ts.index(0, 1) | 1 << ts.index(2, 3)
    assert ts.mask_tiles(mask) == [Tile(0, 1), Tile(2, 3), Tile(6, 6)]
    assert ts.mask_pips(mask) == 1 + 5 + 12
    assert ts.mask_tiles(0) == [] and ts.mask_pips(0) == 0
    assert list(iter_bits(0b1010_0110)) == [1, 2, 5, 7]
    assert list(iter_bits(0)) == [] and list(iter_bits(1 << 90)) == [90]
    assert popcount(0b1011) == 3


@pytest.mark.parametrize("a, b", [(7, 0), (0, 7), (-1, 3), (1.0, 2), (True, 1), ("1", 2)])
def test_a_pair_outside_the_set_is_a_value_error_naming_the_set(a, b):
    with pytest.raises(ValueError, match=r"is not a tile of the double-6 set \(halves must be "
                                         r"integers 0\.\.6\)"):
        tile_set(6).index(a, b)


def test_index_message_shows_the_pair():
    with pytest.raises(ValueError, match=r"^\[7\|0\] is not a tile"):
        tile_set(6).index(7, 0)
    with pytest.raises(ValueError, match=r"^\[13\|0\] is not a tile of the double-12 .*0\.\.12"):
        tile_set(12).index(13, 0)


@pytest.mark.parametrize("max_pip", [0, 5, 7, 13, "6"])
def test_unsupported_set_sizes(max_pip):
    with pytest.raises(ValueError, match=r"is not supported; allowed: \(6, 9, 12\)"):
        tile_set(max_pip)


def test_action_codes():
    assert (LEFT, RIGHT, UP, DOWN) == (0, 1, 2, 3)
    assert END_NAMES == ("left", "right", "up", "down")
    for tile in (0, 1, 27, 90):
        for end in range(4):
            code = code_of(tile, end)
            assert code == tile * 4 + end and (tile_of(code), end_of(code)) == (tile, end)
    assert code_of(5) == 20  # the lead: end code left
    assert [end_index(name) for name in END_NAMES] == [0, 1, 2, 3]


class _Index:
    """An integer of another type (what numpy's integers look like to the core)."""

    def __init__(self, value: int):
        self.value = value

    def __index__(self) -> int:
        return self.value


def test_the_integer_end_constants_are_ends():
    """``Move(tile, LEFT)`` with the exported constants was refused by ``play`` ("unknown end
    0"), while ``encode_action`` took them."""
    assert [end_index(end) for end in (LEFT, RIGHT, UP, DOWN)] == [0, 1, 2, 3]
    assert end_index(_Index(3)) == DOWN  # any integer type (numpy's too), as encode_action
    assert str(Move(Tile(1, 6), RIGHT)) == "[1|6]@right" == str(Move(Tile(1, 6), "right"))


@pytest.mark.parametrize("end", ["middle", "Left", None, 4, -1, True, 2.0, [0]])
def test_unknown_end_names_what_is_allowed(end):
    # the Python API says None (JSON's null is the records' word: test_records_exact)
    with pytest.raises(ValueError, match=r"unknown end .*; allowed: left, right, up, down or "
                                         r"0\.\.3 \(None for the lead\)$"):
        end_index(end)


def test_move_strings():
    assert str(Move(Tile(1, 6), "left")) == "[1|6]@left"
    assert str(Move(Tile(6, 6), None)) == "[6|6] lead"
    assert str(Move(Tile(4, 2), None)) == "[4|2] lead"  # halves kept as given


def test_events_are_typed_tuples():
    play = Play(1, 109, 15)
    assert tuple(play) == ("play", 1, 109, 15)
    assert (play.kind, play.seat, play.code, play.points, play.tile, play.end) == (
        "play", 1, 109, 15, 27, 1)  # fmt: skip
    assert tuple(Draw(0, 2)) == ("draw", 0, 2) and Draw(0, 2).n == 2
    assert tuple(Pass(3)) == ("pass", 3) and Pass(3).seat == 3
    assert as_event(("play", 1, 109, 15)) == play and type(as_event(play)) is Play
    assert type(as_event(("draw", 0, 2))) is Draw and as_event(("draw", 0, 2)).n == 2
    assert type(as_event(("pass", 3))) is Pass and as_event(("pass", 3)).seat == 3
    with pytest.raises(ValueError, match="unknown event kind 'bid'; allowed: 'play', 'draw', "
                                         "'pass'"):
        as_event(("bid", 0))


def test_events_pickle_back_to_the_same_typed_records():
    for ev in (Play(1, 109, 15), Draw(0, 2), Pass(3)):
        back = pickle.loads(pickle.dumps(ev))
        assert back == ev and type(back) is type(ev)


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_a_written_file_gets_the_permissions_of_the_umask(tmp_path, umask, mode):
    old = os.umask(umask)
    try:
        with atomic_write(tmp_path / "f.txt") as f:
            f.write("x")
        assert (tmp_path / "f.txt").stat().st_mode & 0o777 == mode
        assert os.umask(umask) == umask  # the umask is left as it was
    finally:
        os.umask(old)
