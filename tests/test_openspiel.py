"""The OpenSpiel game ``python_straight_dominoes``: OpenSpiel's own consistency checks, the
observation tensor against the project's encoding, the chance model, and the ISMCTS agent."""

from __future__ import annotations

import random

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from dominoes_env import openspiel as dos  # noqa: E402
from dominoes_env.core import HandState, MatchState, RuleConfig  # noqa: E402
from dominoes_env.obs import DEFAULT_VERSION, observation_spec  # noqa: E402
from dominoes_env.obs.v2 import encode_observation  # noqa: E402
from dominoes_env.options import win_loss_rewards  # noqa: E402

CONFIGS = [
    {"target_score": 60},
    {"num_players": 3, "target_score": 60, "win_check": "end_of_hand"},
    {"num_players": 4, "target_score": 60, "next_leader": "rotate"},
    {"num_players": 4, "partnerships": "no", "target_score": 40, "reward_mode": "score_delta"},
    {"boneyard_reserve": 6, "spinner": "none", "episode": "hand"},
    {"max_pip": 9, "hand_size": 10, "episode": "hand", "spinner_cross": "immediately",
     "blocked_award": "difference"},
]


def _config_id(params) -> str:
    return ",".join(f"{k}={v}" for k, v in params.items())


def _game(params):
    return dos.load_game(**params)


def test_parameters_default_to_the_rule_config():
    game = pyspiel.load_game(dos.GAME_NAME)
    assert game.rules == RuleConfig()
    assert (game.episode, game.reward_mode) == ("match", "win_loss")
    defaults = {k: v for k, v in dos.PARAMETERS.items()
                if k not in ("episode", "reward_mode", "obs_version")}
    assert dos.PARAMETERS["obs_version"] == game.obs_version == DEFAULT_VERSION
    rule_defaults = RuleConfig().to_dict()
    assert defaults.pop("partnerships") == "auto" and rule_defaults.pop("partnerships") is False
    assert defaults == rule_defaults
    assert pyspiel.load_game(f"{dos.GAME_NAME}(num_players=4)").rules.partnerships is True
    four = pyspiel.load_game(f"{dos.GAME_NAME}(num_players=4,partnerships=no)")
    assert four.rules.partnerships is False and four.rules.num_sides == 4
    assert game.num_distinct_actions() == 112 and game.max_chance_outcomes() == 28
    assert game.observation_tensor_shape() == [234]


@pytest.mark.parametrize("rules", [RuleConfig(num_players=3, max_pip=9, boneyard_reserve=2),
                                   RuleConfig(num_players=4, partnerships=False)])
def test_load_game_round_trips_the_rules(rules):
    assert dos.load_game(rules).rules == rules
    assert dos.game_options(dos.game_parameters(rules, "hand"))[0] == rules


@pytest.mark.parametrize("text, message", [
    ("episode=x", "episode='x' is not allowed"),
    ("reward_mode=points", "reward_mode='points' is not allowed"),
    ("partnerships=maybe", "partnerships='maybe' is not allowed"),
    ("partnerships=true", "Wrong type for parameter partnerships"),
    ("num_players=5", "num_players=5 is out of range"),
    ("foo=1", "Unknown parameter 'foo'"),
])
def test_bad_parameters_are_named(text, message):
    with pytest.raises(Exception, match=message):
        pyspiel.load_game(f"{dos.GAME_NAME}({text})")


@pytest.mark.parametrize("params, error, message", [
    # OpenSpiel said "Unable to cast Python instance", "'numpy.int64' object is not
    # iterable" and a bare SpielError
    ({"target_score": 99999999999}, ValueError, "target_score=99999999999 is out of range"),
    ({"partnerships": True}, TypeError, "partnerships=True must be a str (auto, yes or no)"),
    ({"max_pip": True}, TypeError, "max_pip=True must be an integer, not a boolean"),
    ({"max_pip": 6.0}, TypeError, "max_pip=6.0 must be an integer, not float"),
    ({"episode": 3}, TypeError, "episode=3 must be a str, not int"),
    ({"episode": "x"}, ValueError, "episode='x' is not allowed"),
    ({"obs_version": 9}, ValueError, "obs_version=9 is not available"),
    ({"foo": 1}, ValueError, "unknown parameter(s) 'foo'; allowed: num_players"),
])
def test_load_game_checks_its_parameters_first(params, error, message):
    with pytest.raises(error) as err:
        dos.load_game(**params)
    assert message in str(err.value)


def test_load_game_takes_numpy_integers():
    game = dos.load_game(num_players=np.int64(3), target_score=np.int32(60))
    assert game.num_players() == 3 and game.rules.target_score == 60
    assert game.get_parameters()["num_players"] == 3


@pytest.mark.parametrize("params", CONFIGS, ids=_config_id)
def test_openspiel_random_simulations_with_serialization(params):
    """OpenSpiel's own checker: random games, every state's strings, tensors, legal actions,
    chance outcomes, clones and (serialize=True) serialization round trips."""
    pyspiel.random_sim_test(_game(params), num_sims=2, serialize=True, verbose=False)


def _play_randomly(game, seed: int):
    """Play a whole game with random chance outcomes and moves. Returns the final state and,
    per decision, every seat's observation tensor. Checks the chance model on the way."""
    rng = random.Random(seed)
    state = game.new_initial_state()
    observed = []
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes(), strict=True)
            assert probs == (1.0 / len(outcomes),) * len(outcomes)  # uniform
            if state.phase == "draw":  # exactly the tiles still in the boneyard
                hand = state.match.hand
                held = hand.played
                for h in hand.hands:
                    held |= h
                boneyard = {t for t in range(game.rules.num_tiles) if not held >> t & 1}
                assert set(outcomes) == boneyard - set(state.draws)
            state.apply_action(rng.choice(outcomes))
        else:
            observed.append([np.array(state.observation_tensor(p))
                             for p in range(game.num_players())])
            state.apply_action(rng.choice(state.legal_actions()))
    return state, observed


@pytest.mark.parametrize("params", CONFIGS, ids=_config_id)
def test_game_equals_the_core_played_with_the_same_deals(params):
    """Replay the OpenSpiel game's deals, draws (in the order drawn) and moves on a plain
    MatchState: at every decision each seat's observation tensor is the encoding of its view,
    and the scores, winner and returns agree."""
    game = _game(params)
    rules = game.rules
    for seed in range(2):
        state, observed = _play_randomly(game, seed)
        ref = MatchState(rules, auto_deal=False)
        log = state.log
        decision = 0
        i = 0
        while i < len(log):
            kind, leader, _ = log[i]
            assert kind == "L"
            j = i + 1
            while j < len(log) and log[j][0] != "L":
                j += 1
            events = log[i + 1 : j]
            deal = [t for k, _, t in events if k == "D"]
            draws = [t for k, _, t in events if k == "W"]
            h = rules.hand_size
            hands = [sum(1 << t for t in deal[s * h : (s + 1) * h])
                     for s in range(rules.num_players)]
            rest = sorted(set(range(rules.num_tiles)) - set(deal) - set(draws))
            ref.start_hand(leader, HandState(rules, hands, draws + rest, leader))
            for k, seat, code in events:
                if k != "P":
                    continue
                assert ref.turn == seat
                for p in range(rules.num_players):
                    np.testing.assert_array_equal(observed[decision][p],
                                                  encode_observation(ref.view(p)))
                decision += 1
                ref.play(code)
            i = j
        assert decision == len(observed)
        assert ref.scores == state.match.scores and ref.winner == state.match.winner
        final = state.returns()
        assert abs(sum(final)) < 1e-9
        if game.reward_mode == "win_loss" and game.episode == "match":
            side = win_loss_rewards(ref.winner, rules.num_sides)
            assert final == [side[rules.side_of(p)] for p in range(rules.num_players)]
        for p in range(rules.num_players):
            np.testing.assert_array_equal(np.array(state.observation_tensor(p)),
                                          encode_observation(ref.view(p)))


@pytest.mark.parametrize("version", [3, 4])
def test_observation_tensor_takes_any_registered_version(version):
    """``obs_version`` picks the tensor's observation version: at every decision each seat's
    tensor is that version's encoding of its view."""
    game = dos.load_game(RuleConfig(target_score=40), obs_version=version)
    spec = observation_spec(version)
    assert game.obs_version == version
    assert game.observation_tensor_shape() == [spec.layout(game.rules).size]
    rng = random.Random(version)
    state = game.new_initial_state()
    decisions = 0
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(rng.choice([t for t, _ in state.chance_outcomes()]))
            continue
        for p in range(game.num_players()):
            np.testing.assert_array_equal(np.array(state.observation_tensor(p), np.float32),
                                          spec.encode(state.view(p)))
        decisions += 1
        state.apply_action(rng.choice(state.legal_actions()))
    assert decisions > 10


def test_an_unregistered_observation_version_is_refused():
    with pytest.raises(Exception, match="obs_version=9 is not available; allowed: 2, 3, 4, 5"):
        pyspiel.load_game(f"{dos.GAME_NAME}(obs_version=9)")
    with pytest.raises(ValueError, match="obs_version=1 is not available"):
        dos.load_game(obs_version=1)


def _deal(state, hands, leader=0):
    """Drive the first chance nodes: the leader, then ``hands`` (tiles as (a, b)) in order."""
    ts = state.rules.tiles
    state.apply_action(leader)
    for hand in hands:
        for a, b in hand:
            state.apply_action(ts.index(a, b))


SEAT0 = [(6, 6), (6, 3), (1, 2), (0, 0), (2, 2), (3, 3), (4, 5)]
SEAT1_NO_SIX = [(5, 5), (0, 1), (1, 1), (2, 3), (3, 4), (0, 5), (1, 5)]


def test_forced_draws_are_chance_outcomes_decided_one_tile_at_a_time():
    game = dos.load_game(target_score=100)
    state = game.new_initial_state()
    assert state.chance_outcomes() == [(0, 0.5), (1, 0.5)]  # who leads
    _deal(state, [SEAT0, SEAT1_NO_SIX])
    ts = game.rules.tiles
    assert state.current_player() == 0
    state.apply_action(ts.index(6, 6) * 4)  # seat 1 holds no 6: it must draw
    assert state.is_chance_node()
    outcomes = [t for t, _ in state.chance_outcomes()]
    assert len(outcomes) == 14 and ts.index(0, 6) in outcomes
    assert state.action_to_string(pyspiel.PlayerId.CHANCE, ts.index(2, 4)) == "Draw:[2|4]->1"
    state.apply_action(ts.index(2, 4))  # not a 6: seat 1 draws again
    assert state.is_chance_node() and len(state.chance_outcomes()) == 13
    state.apply_action(ts.index(0, 6))  # a 6: seat 1 plays
    assert state.current_player() == 1
    view = state.view(1)
    assert view.history[1:] == (("draw", 1, 2),) and view.boneyard_left == 12
    assert set(view.hand_tiles) >= {ts.tiles[ts.index(2, 4)], ts.tiles[ts.index(0, 6)]}
    assert state.legal_actions() == [ts.index(0, 6) * 4 + e for e in (0, 1)]
    # seat 1 saw its draws; seat 0 saw only that seat 1 drew
    assert state.information_state_string(1).endswith(
        f"P0:{ts.index(6, 6) * 4} W{ts.index(2, 4)} W{ts.index(0, 6)}")
    assert state.information_state_string(0).endswith(f"P0:{ts.index(6, 6) * 4} w1 w1")
    # serialization round trip in the middle of the draws
    mid = game.new_initial_state()
    for action in state.history()[:-1]:
        mid.apply_action(action)
    assert mid.is_chance_node()
    text = pyspiel.serialize_game_and_state(game, mid)
    game2, back = pyspiel.deserialize_game_and_state(text)
    assert str(back) == str(mid) and back.history() == mid.history()
    assert back.chance_outcomes() == mid.chance_outcomes()


def test_information_state_hides_the_other_seats_tiles():
    game = dos.load_game(num_players=3)
    state, _ = _play_randomly(game, 5)
    for p in range(3):
        tokens = state.information_state_string(p).split()
        assert tokens[0] == f"p{p}"
        own = [t for t in tokens if t[0] in "DW"]
        hidden = [t for t in tokens if t[0] in "dw"]
        assert own and hidden and all(t[1:] != str(p) for t in hidden)


def test_clone_is_independent():
    game = dos.load_game(num_players=4)
    state = game.new_initial_state()
    rng = random.Random(0)
    while state.is_chance_node() or len(state.history()) < 40:
        actions = ([a for a, _ in state.chance_outcomes()] if state.is_chance_node()
                   else state.legal_actions())
        state.apply_action(rng.choice(actions))
    before = [state.observation_tensor(p) for p in range(4)], str(state)
    clone = state.clone()
    while not clone.is_terminal():
        actions = ([a for a, _ in clone.chance_outcomes()] if clone.is_chance_node()
                   else clone.legal_actions())
        clone.apply_action(rng.choice(actions))
    assert ([state.observation_tensor(p) for p in range(4)], str(state)) == before


def test_state_from_view_matches_the_view():
    match = MatchState(RuleConfig(num_players=3, target_score=100), seed=11)
    for _ in range(5):
        match.play(match.legal_actions()[0])
    view = match.view(match.turn)
    game = dos.load_game(match.rules, episode="hand", reward_mode="score_delta")
    from dominoes_env.core.sampling import DealSampler

    sampler = DealSampler.from_view(view)
    strings = set()
    for seed in range(3):
        state = dos.state_from_view(game, view, *sampler.sample(random.Random(seed)))
        assert state.current_player() == view.seat
        assert sorted(state.legal_actions()) == sorted(view.legal)
        np.testing.assert_array_equal(np.array(state.observation_tensor(view.seat)),
                                      encode_observation(view))
        strings.add(state.observation_string(view.seat))
    assert len(strings) == 1  # the same observation whatever the hidden tiles are


def test_a_state_built_from_a_view_is_not_rebuilt_as_another_state():
    """Its text was turned back into the game's initial chance node with no error (and after
    one move the round trip failed with a misleading message)."""
    match = MatchState(seed=3)
    held = match.hand.played
    for hand in match.hand.hands:
        held |= hand
    rest = [t for t in range(28) if not held >> t & 1]
    game = dos.load_game()
    state = dos.state_from_view(game, match.hand.view(match.hand.turn), match.hand.hands, rest)
    for s in (state, state.child(state.legal_actions()[0]), state.clone()):
        assert "\nroot=state_from_view\n" in s.serialize()
        with pytest.raises(ValueError, match="a state built by state_from_view cannot be "
                                             "rebuilt from its history"):
            game.deserialize_state(s.serialize())
    # OpenSpiel's own round trip (its pickle) still restores it; a game's state still has none
    _, back = pyspiel.deserialize_game_and_state(pyspiel.serialize_game_and_state(game, state))
    assert str(back) == str(state) and back.legal_actions() == state.legal_actions()
    fresh, _ = _play_randomly(game, 4)
    assert "root=" not in fresh.serialize()
    assert str(game.deserialize_state(fresh.serialize())) == str(fresh)


def test_ismcts_agent_plays_legal_reproducible_matches():
    from agents.arena import play_match

    first = play_match(["ismcts:sims=8", "random"], {"target_score": 40}, seed=1)
    assert first == play_match(["ismcts:sims=8", "random"], {"target_score": 40}, seed=1)
    assert first.winner in (0, 1) and max(first.scores) >= 40
    four = play_match(["ismcts:sims=4", "random", "ismcts:sims=4", "random"],
                      {"num_players": 4, "target_score": 30}, seed=2)
    assert four.winner in (0, 1)


def test_ismcts_budgets_that_never_finish_a_decision_are_refused():
    """One simulation only expands the root (the bot then failed an assertion inside
    OpenSpiel), and a budget of rollouts past MAX_SIMS never ended; both are refused, naming
    the parameter, and the smallest budget plays."""
    from agents import make_agent
    from agents.base import MAX_SIMS

    with pytest.raises(ValueError, match="sims=1 is out of range"):
        make_agent("ismcts:sims=1")
    with pytest.raises(ValueError, match="rollouts=100000000"):
        make_agent("ismcts:sims=2,rollouts=100000000")
    make_agent(f"ismcts:sims={MAX_SIMS}")  # the product alone bounds them
    match = MatchState(seed=4)
    view = match.view(match.turn)
    assert len(view.legal) > 1
    assert make_agent("ismcts:sims=2", seed=0).act(view) in view.legal




def _first_play(game):
    state = game.new_initial_state()
    _deal(state, [SEAT0, SEAT1_NO_SIX])
    return state


@pytest.mark.parametrize("action, reason", [
    (1, r"\[0\|0\] lead - the lead is played with end code 0 \(left\)"),
    (100, r"\[5\|5\] is not in seat 0's hand"),
    (10**9, r"action code out of range 0\.\.111"),
    (-5, r"action code out of range 0\.\.111"),
])
def test_an_illegal_move_is_refused_at_once_naming_the_legal_ones(action, reason):
    """apply_action(1) at the first play (a lead on end 1) was accepted, unchecked: the state
    waited for a draw no rule made, and a later step failed far away."""
    game = dos.load_game(target_score=100)
    state = _first_play(game)
    before, legal = str(state), state.legal_actions()
    with pytest.raises(ValueError, match=rf"illegal move {action}: {reason}; legal actions for "
                                         r"seat 0: \[0, 32, 52, ") as err:
        state.apply_action(action)
    assert err.type.__name__ == "IllegalMoveError"
    assert str(state) == before and state.legal_actions() == legal  # the state is unchanged
    assert len(state.history()) == 15
    state.apply_action(legal[0])  # and still plays on


@pytest.mark.parametrize("action", [2, 10**9, -5])
def test_an_impossible_leader_is_refused_at_once(action):
    """Chance outcomes 2, 10**9 and -5 for the leader of a 2-player game were accepted; the
    error came only at the next chance node ("leader=2 is out of range")."""
    state = dos.load_game().new_initial_state()
    with pytest.raises(ValueError, match=rf"chance outcome {action} is not possible when the "
                                         r"leader is drawn; possible: \[0, 1\]"):
        state.apply_action(action)
    assert state.history() == [] and state.chance_outcomes() == [(0, 0.5), (1, 0.5)]


def test_an_impossible_deal_or_draw_is_refused_at_once():
    game = dos.load_game(target_score=100)
    ts = game.rules.tiles
    state = game.new_initial_state()
    state.apply_action(0)
    state.apply_action(ts.index(6, 6))
    for action in (ts.index(6, 6), 28, -2):  # dealt already, no such tiles
        with pytest.raises(ValueError, match=rf"chance outcome {action} is not possible when "
                                             r"a tile is dealt; possible: \[0, 1, "):
            state.apply_action(action)
    assert len(state.history()) == 2
    state = _first_play(game)
    state.apply_action(ts.index(6, 6) * 4)  # seat 1 holds no 6: it draws
    for action in (ts.index(6, 3), 28):  # in seat 0's hand, no such tile
        with pytest.raises(ValueError, match=rf"chance outcome {action} is not possible when "
                                             r"a tile is drawn; possible: \["):
            state.apply_action(action)
    assert len(state.chance_outcomes()) == 14
    state.apply_action(ts.index(0, 6))
    assert state.current_player() == 1


def test_no_action_is_taken_once_the_game_is_over():
    state, _ = _play_randomly(dos.load_game(target_score=20, episode="hand"), 3)
    with pytest.raises(ValueError, match="the game is over"):
        state.apply_action(0)
    assert state.is_terminal()


# -- a serialized state is untrusted text ------------------------------------------------------
@pytest.mark.parametrize("params", CONFIGS[:4], ids=_config_id)
def test_deserialize_state_rebuilds_every_state_of_a_game_from_its_history(params):
    game = _game(params)
    state, _ = _play_randomly(game, 11)
    replay = game.new_initial_state()
    for action in state.history():
        back = game.deserialize_state(replay.serialize())
        assert str(back) == str(replay) and back.history() == replay.history()
        assert back.move_number() == replay.move_number()
        assert back.legal_actions() == replay.legal_actions()
        replay.apply_action(action)
    assert game.deserialize_state(state.serialize()).returns() == state.returns()


def test_deserialize_state_never_unpickles_the_text(tmp_path):
    """A state's text holds OpenSpiel's pickle of its Python attributes (``__dict__=``), and
    ``game.deserialize_state`` unpickled it: a crafted string ran ``os.system``."""
    import base64
    import os
    import pickle

    witness = tmp_path / "ran"

    class Payload:
        def __reduce__(self):
            return os.system, (f"touch {witness}",)

    game = dos.load_game()
    state, _ = _play_randomly(game, 2)
    history, moves, _ = state.serialize().split("\n", 2)
    crafted = f"{history}\n{moves}\n__dict__={base64.b64encode(pickle.dumps(Payload())).decode()}"
    back = game.deserialize_state(crafted)
    assert not witness.exists() and str(back) == str(state)


@pytest.mark.parametrize("text, says", [
    ("x", "not a serialized state: three lines"),
    ("history=0:5\nmove_number=1\n__dict__=", "history entry 1 (0:5) is a move of player 0, "
                                               "where player -1 is to move"),
    ("history=-1:a\nmove_number=1\n__dict__=", "history entry 1 ('-1:a') is not 'player:action'"),
    ("history=-1:0,-1:0,-1:0\nmove_number=3\n__dict__=",  # a leader, then tile 0 twice
     "history entry 3 (-1:0): chance outcome 0 is not possible when a tile is dealt"),
    ("history=-1:0\nmove_number=9\n__dict__=", "move_number='9', where its history makes 1"),
])  # fmt: skip
def test_deserialize_state_names_what_is_wrong_with_the_text(text, says):
    with pytest.raises(ValueError) as err:
        dos.load_game().deserialize_state(text)
    assert says in str(err.value)
    with pytest.raises(TypeError, match="a serialized state is a str, not bytes"):
        dos.load_game().deserialize_state(text.encode())


def test_questions_a_state_cannot_answer_are_refused_not_made_up():
    """``load_game('x')`` failed inside (AttributeError); ``chance_outcomes()`` at a player's
    turn listed 14 outcomes; ``action_to_string(p, 999)`` named "Action:999"."""
    with pytest.raises(TypeError, match="rules must be a RuleConfig .*not str"):
        dos.load_game("x")
    state, _ = _play_randomly(dos.load_game(target_score=20, episode="hand"), 3)
    with pytest.raises(ValueError, match="at a chance node only; this state is terminal"):
        state.chance_outcomes()
    state = dos.load_game().new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    with pytest.raises(ValueError, match="at a chance node only; this state is player"):
        state.chance_outcomes()
    with pytest.raises(ValueError, match=r"action 999 is not one of this game's actions \(0 to"):
        state.action_to_string(state.current_player(), 999)
    with pytest.raises(ValueError, match="action 28 is not one of this game's chance outcomes"):
        state.action_to_string(pyspiel.PlayerId.CHANCE, 28)


def test_action_to_string_for_the_chance_player_needs_a_chance_node():
    """At a decision node or the end, the chance player's action named "Draw:[0|3]->-1"."""
    state = dos.load_game().new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    for player in (pyspiel.PlayerId.CHANCE, -1):
        with pytest.raises(ValueError, match="chance node only; this state is player 0's turn"):
            state.action_to_string(player, 3)
    state, _ = _play_randomly(dos.load_game(target_score=20, episode="hand"), 3)
    with pytest.raises(ValueError, match="chance node only; this state is terminal"):
        state.action_to_string(pyspiel.PlayerId.CHANCE, 3)
