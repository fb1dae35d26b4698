"""Replay a game record through the JAX game: ``python -m dominoes_env replay FILE --backend jax``.

The output is the core replay's (:func:`dominoes_env.core.records.replay_record`): ``{"hands":
[{"move_points", "end", "award", "scores"}...], "scores", "winner"}``. The record's structure,
rules and deals are read as the core reads them (a deal is checked by ``HandState.from_tiles``);
every move is judged by the JAX game: the seat to play, the legal mask, the points, the forced
draws and passes, the end of each hand, the award, the next leader and the winner. A record that
breaks a rule raises :class:`~dominoes_env.core.RecordError` naming the hand, the move and the
reason.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from dominoes_env.core import END_NAMES, RecordError, RuleConfig, code_of
from dominoes_env.core.records import RECORD_KEYS, leader_contradiction, record_rules
from dominoes_env.core.validation import short_repr

from .env import Env, make
from .game import RESULT_BLOCKED, RESULT_DOMINO, Deal, rows_of

_END = {RESULT_DOMINO: "domino", RESULT_BLOCKED: "blocked"}


@cache
def _compiled(rules: RuleConfig):
    env = make(rules=rules, episode="match")
    return env, jax.jit(env.init_deal), jax.jit(env.step_deal)


def replay_record_jax(record: Any) -> dict[str, Any]:
    """The core replay's output object, computed by the JAX game."""
    rules, entries = record_rules(record)
    try:
        env, init, step = _compiled(rules)
    except ValueError as err:  # rules the core plays but the JAX game cannot (a target > 65536)
        raise RecordError(f"the JAX game cannot replay these rules: {err}") from None
    deals = [_deal(env, entry, i) for i, entry in enumerate(entries)]
    blank = Deal(jnp.arange(env.tables.T, dtype=jnp.int32), jnp.int32(0))
    summaries: list[dict[str, Any]] = []
    state = None
    for i, entry in enumerate(entries):
        deal = deals[i]
        if state is None:
            if isinstance(deal, RecordError):
                raise deal
            state = init(deal)
        else:
            x = state.game_state
            if int(x.winner) >= 0:
                raise RecordError(f"hand {i}: the match was already won by side {int(x.winner)}")
            if summaries[-1]["end"] is None:
                raise RecordError(f"hand {i}: hand {i - 1} is not finished, so no hand may "
                                  "follow it")
            if isinstance(deal, RecordError):
                raise deal
            _check_leader(rules, int(x.leader), entry["leader"], i)
        points = []
        ended = None
        for j, move in enumerate(entry["moves"]):
            where = f"hand {i}, move {j} {json.dumps(move)}"
            if int(state.game_state.winner) >= 0:
                raise RecordError(f"{where}: the match was already won by side "
                                  f"{int(state.game_state.winner)}")
            if ended is not None:
                raise RecordError(f"{where}: the hand is already over ({ended[0]})")
            code, flip = _judge(env, state, move, where)
            nxt = deals[i + 1] if i + 1 < len(deals) else blank
            state = step(state, code, blank if isinstance(nxt, RecordError) else nxt, flip)
            x = state.game_state
            points.append(int(x.last_points))
            if int(x.ended_result):
                award = (int(x.added_side), int(x.added_points))
                ended = (_END[int(x.ended_result)], award if award[0] >= 0 else None)
        award = ended[1] if ended else None
        summaries.append({
            "move_points": points,
            "end": ended[0] if ended else None,
            "award": {"side": award[0], "points": award[1]} if award else None,
            "scores": np.asarray(state.game_state.scores).tolist(),
        })  # fmt: skip
    x = state.game_state if state is not None else None
    scores = np.asarray(x.scores).tolist() if x is not None else [0] * rules.num_sides
    winner = int(x.winner) if x is not None and int(x.winner) >= 0 else None
    return {"hands": summaries, "scores": scores, "winner": winner}


def _deal(env: Env, entry: Any, i: int) -> Deal | RecordError:
    """The deal of hand ``i``, or the error that names what is wrong with it (raised when the
    replay reaches that hand, as the core does)."""
    rules = env.rules
    if not isinstance(entry, dict):
        return RecordError(f"hand {i}: must be an object with {', '.join(RECORD_KEYS)}")
    for key in RECORD_KEYS:
        if key not in entry:
            return RecordError(f"hand {i}: lacks the field {key!r}")
    if not isinstance(entry["moves"], list):
        return RecordError(f"hand {i}: 'moves' must be a list of [seat, tile, end]")
    leader = entry["leader"]
    if type(leader) is not int or not 0 <= leader < rules.num_players:
        return RecordError(f"hand {i}: leader {short_repr(leader)} is not a seat "
                           f"(0..{rules.num_players - 1})")
    for key in ("hands", "boneyard"):  # a tuple is no JSON: the core refuses it too
        if not isinstance(entry[key], list):
            return RecordError(f"hand {i}: '{key}' must be a list of tiles"
                               + (" per seat" if key == "hands" else ""))
    try:
        return env.deal_from_tiles(entry["hands"], entry["boneyard"], leader)
    except (ValueError, TypeError) as err:
        return RecordError(f"hand {i}: bad deal: {err}")


def _check_leader(rules: RuleConfig, expected: int, leader: int, i: int) -> None:
    """The JAX game dealt hand ``i`` with the leader the rules give (the record's own leader
    where the rules draw one at random)."""
    if leader != expected:
        raise RecordError(f"hand {i}: {leader_contradiction(rules, leader, expected)}")


def _judge(env: Env, state, move: Any, where: str) -> tuple[int, bool]:
    """``(action code, flip)`` of a record move if the JAX game's legal mask allows it; else
    :class:`RecordError` with the reason, read from the JAX state."""
    if not isinstance(move, list) or len(move) != 3:
        raise RecordError(f"{where}: a move is [seat, [a, b], end]")
    seat, tile, end = move
    x = state.game_state
    turn = int(x.turn)
    if type(seat) is not int:  # false or 1.0 equals a seat: the core refuses them
        raise RecordError(f"{where}: the seat {short_repr(seat)} must be an integer")
    if seat != turn:
        raise RecordError(f"{where}: it is seat {turn}'s turn, not seat {short_repr(seat)}'s")
    if not isinstance(tile, list) or len(tile) != 2:
        raise RecordError(f"{where}: the tile must be a pair [a, b]")
    ts = env.rules.tiles
    try:
        t = ts.index(*tile)
    except (ValueError, TypeError) as err:
        raise RecordError(f"{where}: {err}") from None
    lead = int(x.lead) < 0
    if lead:
        if end is not None:
            raise RecordError(f"{where}: the lead has no end (end must be None)")
        e, flip = 0, tile[0] > tile[1]
    else:
        if end is None:
            raise RecordError(f"{where}: only the lead has no end; name an end")
        if not (type(end) is str and end in END_NAMES):  # the core's words (records.py)
            raise RecordError(f"{where}: unknown end {short_repr(end)}; allowed: "
                              f"{', '.join(END_NAMES)} (or null for the lead)")
        e, flip = END_NAMES.index(end), False
    code = code_of(t, e)
    if bool(state.legal_action_mask[code]):
        return code, flip
    name = ts.tiles[t]
    hands = np.asarray(env.game.hand_rows(x))
    in_boneyard = int(np.asarray(x.bone_pos)[t]) >= int(x.drawn)
    if not hands[seat, t]:
        where_is = ("is already in the layout" if bool(rows_of(env.tables, x.played)[t])
                    else f"is not in seat {seat}'s hand")  # fmt: skip
        note = (" (it is still in the boneyard: a seat draws only when it cannot play)"
                if in_boneyard else "")  # fmt: skip
        raise RecordError(f"{where}: {name} {where_is}{note}")
    if e >= 2 and not bool(x.cross_open):
        raise RecordError(f"{where}: the {end} end is not open")
    raise RecordError(
        f"{where}: {name} does not fit the {end} end (showing {int(x.ends[e])})"
    )
