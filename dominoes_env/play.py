"""``python -m dominoes_env play``: play a match against agents in the terminal.

The human sits at seat 0; the agents (given as agent specs) take seats 1, 2, ... in order, so
their number sets the player count. With four players in partnerships the human's partner is
the agent opposite (seat 2). Each turn shows the layout, the scores and hand sizes, the human's
tiles and the legal moves numbered from 1 with the points each would score. Type a number, or
``q`` to quit; end of input quits too. Standard input may be piped, so a match can be scripted.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import tempfile
from typing import TextIO

from .cli_support import (
    CommandError,
    Stopped,
    check_output_file,
    is_stdout_error,
    output_error_message,
    paths_in_specs,
    print_error,
    silence_stdout,
)
from .core import END_NAMES, MatchState, RuleConfig, end_of, tile_of
from .core.records import (
    GZIP_RECORDS_SUFFIX,
    check_record_name,
    is_gzip_records_name,
    write_record,
)
from .core.validation import int_text, short_repr
from .driver import agent_seed, as_seed, fresh_seed, play_match_with, raised_words
from .render.ansi import render_ansi
from .startup import stop_signal_came

HUMAN = 0

#: the most characters of one typed line that are read: the rest of a longer line is read in
#: pieces of this size and dropped, so a 300 MB line costs no more memory than a short one
LINE_LIMIT = 8192


class QuitGame(Exception):
    """The human typed ``q`` or the input ended."""


class AgentFault(Exception):
    """An agent raised, or answered something that is not one of its legal moves."""


class UnreadableInput(Exception):
    """Standard input cannot be decoded at all (``PYTHONIOENCODING=utf-16`` and typed text with
    no byte-order mark: ``errors="replace"`` does not cover the stream's missing start). The
    match ends as on ``q``, with one line that says why, and status 2."""


def _agent_call(name: str, seat: int, what: str, call, *args):
    """Call an agent's method; any failure of the agent becomes :class:`AgentFault`."""
    try:
        return call(*args)
    except KeyboardInterrupt as err:
        if stop_signal_came():
            raise
        raise AgentFault(f"agent {name!r} at seat {seat} {raised_words(err, what)}") from None
    except (Exception, SystemExit) as err:
        raise AgentFault(f"agent {name!r} at seat {seat} {raised_words(err, what)}") from None


class TerminalGame:
    """A match with a human at seat 0 and agents (Agent protocol objects) at the other seats."""

    def __init__(self, agents: list, rules: RuleConfig, seed: int | None = None,
                 names: list[str] | None = None, stdin: TextIO | None = None,
                 stdout: TextIO | None = None):
        # checked here, not on the first turn (an AttributeError or IndexError mid-match)
        if not isinstance(rules, RuleConfig):
            raise TypeError(f"rules must be a RuleConfig, not {short_repr(rules)}")
        if isinstance(agents, str | bytes | dict | set) or not hasattr(agents, "__len__"):
            raise TypeError(f"agents must be a list of agent objects (seats 1, 2, ...), not "
                            f"{type(agents).__name__}")
        if len(agents) != rules.num_players - 1:
            raise ValueError(f"{rules.num_players} players need {rules.num_players - 1} agents, "
                             f"got {len(agents)}")
        agents = list(agents)
        for seat, agent in enumerate(agents, start=1):
            if not callable(getattr(agent, "act", None)):
                raise TypeError(f"agent at seat {seat} ({short_repr(agent)}) has no act(view) "
                                "method")
        if names is not None:
            if isinstance(names, str | bytes | dict | set) or not hasattr(names, "__len__"):
                raise TypeError(f"names must be a list of the agents' names, not "
                                f"{type(names).__name__}")
            names = list(names)
            if len(names) != len(agents):
                raise ValueError(f"names must name the {len(agents)} agent(s) at seats 1.."
                                 f"{len(agents)}, got {len(names)} name(s)")
            for seat, name in enumerate(names, start=1):
                if not isinstance(name, str):
                    raise TypeError(f"the name of seat {seat} must be a str, not "
                                    f"{short_repr(name)}")
        self.rules = rules
        #: the match seed (drawn at random when none is given): the same seed deals the same
        #: hands and seeds the agents the same way (:mod:`dominoes_env.driver`)
        self.seed = fresh_seed() if seed is None else as_seed(seed)
        #: the match being played (set when its first hand begins)
        self.match: MatchState | None = None
        self._hand = None
        self._seen = 0
        self.agents = [None, *agents]
        self.names = ["you", *(names or [f"seat {s}" for s in range(1, rules.num_players)])]
        self.stdin = stdin or sys.stdin
        self.stdout = stdout or sys.stdout
        #: a line said once the match exists, before its first hand
        self.intro = ""

    # -- output ----------------------------------------------------------------------------
    def say(self, text: str = "") -> None:
        print(text, file=self.stdout, flush=True)

    def who(self, seat: int) -> str:
        name = self.names[seat]
        if seat == HUMAN:
            return "You"
        role = " (partner)" if self.rules.partnerships and seat % 2 == HUMAN % 2 else ""
        return f"Seat {seat} [{name}]{role}"

    def describe(self, event: tuple, hand, is_lead: bool, drawn_before: int = 0) -> str:
        kind, seat = event[0], event[1]
        me = seat == HUMAN
        if kind == "play":
            tile = hand.rules.tiles.tiles[tile_of(event[2])]
            where = "leads" if is_lead else f"plays on {END_NAMES[end_of(event[2])]}:"
            if me:
                where = "lead" if is_lead else f"play on {END_NAMES[end_of(event[2])]}:"
            scored = f", {'score' if me else 'scores'} {event[3]}" if event[3] else ""
            return f"{self.who(seat)} {where} {tile}{scored}."
        if kind == "draw":
            n = event[2]
            text = f"{self.who(seat)} {'draw' if me else 'draws'} {n} tile{'s' * (n != 1)}"
            if me:  # your own draws are yours to see
                tiles = hand.rules.tiles.tiles
                text += ": " + " ".join(str(tiles[t]) for t in
                                        hand.boneyard[drawn_before:drawn_before + n])
            return text + "."
        return f"{self.who(seat)} {'pass' if me else 'passes'}."

    def show_events(self, hand, start: int) -> int:
        """Print the hand's public history from index ``start`` (history[0] is the lead)."""
        drawn = sum(e[2] for e in hand.history[:start] if e[0] == "draw")
        for i in range(start, len(hand.history)):
            event = hand.history[i]
            self.say(self.describe(event, hand, is_lead=i == 0, drawn_before=drawn))
            if event[0] == "draw":
                drawn += event[2]
        return len(hand.history)

    def side_name(self, side: int) -> str:
        if side == self.rules.side_of(HUMAN):
            return "Your side" if self.rules.partnerships else "You"
        return f"Side {side}"

    def scores_line(self) -> str:
        return " · ".join(f"{self.side_name(side)} {score}"
                          for side, score in enumerate(self.match.scores))

    def show_hand_end(self, hand) -> None:
        kind, seat = hand.result
        if kind == "domino":
            self.say(f"{self.who(seat)} {'go' if seat == HUMAN else 'goes'} out: domino!")
        else:
            self.say(f"The hand is blocked; pips left by side: {hand.side_pips()}.")
        if hand.award is None:
            self.say("Nobody scores the hand award (a tie for the fewest pips).")
        else:
            self.say(f"{self.side_name(hand.award[0])} + {hand.award[1]} (hand award).")
        self.say(f"Scores: {self.scores_line()}")

    # -- input -----------------------------------------------------------------------------
    def ask(self, count: int) -> int:
        """Read a move number 1..count; re-ask on bad input; QuitGame on ``q`` or end of input."""
        while True:
            self.stdout.write(f"Your move (1-{count}, q to quit): ")
            self.stdout.flush()
            line = self._read_line()
            if not line:
                self.say()
                raise QuitGame
            if len(line) >= LINE_LIMIT and not line.endswith("\n"):  # the rest is dropped
                while True:
                    rest = self._read_line()
                    if not rest or rest.endswith("\n"):
                        break
                self.say(f"Line too long (over {LINE_LIMIT} characters): type a move number "
                         f"from 1 to {count}, or q to quit.")
                continue
            text = line.strip()
            if text.lower() in ("q", "quit", "exit"):
                raise QuitGame
            if not text:
                self.say(f"Empty line: type a move number from 1 to {count}, or q to quit.")
                continue
            try:
                number = int_text(text)
            except ValueError:
                digits = text[1:] if text[0] in "+-" else text
                if text.isascii() and digits.isdigit():
                    # more digits than Python's int() reads: a number, far out of range
                    self.say(f"There is no move {text[:20]}... ({len(digits)} digits): choose "
                             f"from 1 to {count}.")
                else:
                    self.say(f"{short_repr(text)} is not a number: type a move number from 1 "
                             f"to {count}, or q to quit.")
                continue
            if not 1 <= number <= count:
                self.say(f"There is no move {short_repr(number)}: choose from 1 to {count}.")
                continue
            return number

    def _read_line(self) -> str:
        """One line of standard input, at most :data:`LINE_LIMIT` characters of it."""
        try:
            return self.stdin.readline(LINE_LIMIT)
        except UnicodeError as err:  # not bad bytes (read as U+FFFD): no text at all
            encoding = getattr(self.stdin, "encoding", None) or "its encoding"
            raise UnreadableInput(f"standard input cannot be read as {encoding}: "
                                  f"{err}") from None

    def human_turn(self, view) -> int:
        """Show the table and the numbered legal moves; return the chosen action code."""
        match = self.match
        hand = match.hand
        self.say()
        self.say(render_ansi(hand, match.scores, hand_number=match.hand_number))
        tiles = " ".join(str(t) for t in hand.hand_tiles(HUMAN))
        self.say(f"Your tiles: {tiles}")
        legal = hand.legal_actions()
        for i, code in enumerate(legal, start=1):
            points = hand.points_after(code)
            extra = f"  (+{points})" if points else ""
            self.say(f"  {i:>2}. {hand.move_of(code)}{extra}")
        return legal[self.ask(len(legal)) - 1]

    # -- the match (played by dominoes_env.driver, the loop every match runner shares) -----
    def _call(self, seat: int, method: str, fn, *args):
        if seat == HUMAN:
            return fn(*args)
        return _agent_call(self.names[seat], seat, method, fn, *args)

    def _fault(self, seat: int, message: str) -> AgentFault:
        return AgentFault(f"agent {self.names[seat]!r} at seat {seat} {message}")

    def _on_hand(self, match) -> None:
        self.match = match  # set before any output, so a record can be saved on every way out
        self._hand, self._seen = match.hand, 0
        if self.intro:
            intro, self.intro = self.intro, ""
            self.say(intro)
        self.say(f"\n=== Hand {match.hand_number + 1}: {self.who(match.hand.leader)} "
                 f"{'lead' if match.hand.leader == HUMAN else 'leads'}. ===")

    def _on_play(self, seat: int, code: int, points: int) -> None:
        hand, match = self._hand, self.match
        self._seen = self.show_events(hand, self._seen)
        if hand.is_over:
            self.show_hand_end(hand)
        if match.is_over:
            won = match.winner == self.rules.side_of(HUMAN)
            self.say(f"\nMatch over: {'you win' if won else f'side {match.winner} wins'}"
                     f" ({self.scores_line()}).")

    def record(self) -> dict:
        """The match's game record so far (``docs/rules.md``), with the ``"match"`` field a
        tournament's records carry: the ``seats`` (names, ``"you"`` at seat 0) and the match
        ``seed`` (``--seed`` with it deals the same hands and seeds the agents alike).
        Readers of records ignore the field; ``replay --html`` shows the seats' names."""
        if self.match is None:
            raise ValueError("the match has not begun: there is no record yet")
        return {**self.match.to_record(), "match": {"seats": list(self.names),
                                                    "seed": self.seed}}

    def run(self) -> bool:
        """Play until the match ends (True) or the human quits (False)."""
        human = _Human(self.human_turn)
        try:
            play_match_with([human, *self.agents[1:]], self.rules, self.seed, call=self._call,
                            fault=self._fault, on_hand=self._on_hand, on_play=self._on_play)
        except QuitGame:
            self.say("You quit the match.")
            return False
        return True


class _Human:
    """The human's seat as an agent: ``act`` asks at the terminal."""

    def __init__(self, ask):
        self.act = ask


def check_save_path(path: str, overwrite: bool, inputs: tuple = ()) -> None:
    """Refuse a ``--save`` path that cannot take the record, before the match starts (the
    output policy of :func:`~dominoes_env.cli_support.check_output_file`: no folder, link or
    device, none of the ``inputs`` (the opponents' policy files), an existing file only with
    ``overwrite``), or whose folder cannot be written. ``CommandError`` with the reason."""
    check_output_file(path, "--save", overwrite=overwrite, inputs=inputs)
    try:
        check_record_name(path, "--save")
    except ValueError as err:
        raise CommandError(str(err)) from None
    folder = os.path.dirname(os.path.abspath(path))
    try:  # the record is written into this folder (a temporary file, then a rename)
        fd, probe = tempfile.mkstemp(prefix=".record-", suffix=".probe", dir=folder)
        os.close(fd)
        os.unlink(probe)
    except OSError as err:
        raise CommandError(f"--save {path!r}: cannot write into {folder!r} "
                           f"({err.strerror})") from None


def save_record(record: dict, path: str, overwrite: bool) -> str:
    """Write the record atomically; without ``overwrite`` a file that appeared at ``path``
    during the match is kept and the record goes to ``path`` with ``-1``, ``-2``... added.
    Returns the path written."""
    stem, ext = os.path.splitext(path)
    if is_gzip_records_name(path):  # r-1.jsonl.gz, not r.jsonl-1.gz
        cut = len(path) - len(GZIP_RECORDS_SUFFIX)
        stem, ext = path[:cut], path[cut:]
    target = path
    for k in range(1, 1000):
        try:
            write_record(record, target, overwrite=overwrite)
            return target
        except FileExistsError:
            target = f"{stem}-{k}{ext}"
    raise CommandError(f"cannot find a free name next to {path!r}")  # pragma: no cover


def rescue_record(record: dict) -> str | None:
    """The record written to a new file in the temporary folder, when ``--save`` could not
    take it at the end (its folder removed or made read-only during the match, which could
    have lasted an hour): the path, or ``None`` if that fails too (a full disk). The play
    command's error line names that file, so a finished match is not lost."""
    path = None
    try:
        fd, path = tempfile.mkstemp(prefix="dominoes-record-", suffix=".json")
        os.close(fd)
        write_record(record, path)
        return path
    except OSError:
        if path is not None:
            with contextlib.suppress(OSError):
                os.unlink(path)
        return None


def run_play(args) -> int:
    """The ``play`` subcommand (arguments parsed by :mod:`dominoes_env.cli`).

    The ``--save`` path is checked before the match; the record (of the whole match, or as far
    as it went) is written on every way the match can end: a finish, ``q`` or end of input,
    Ctrl-C, an agent that fails, standard output closed. Exit status: 0 when the match ended
    or the human quit, 130 on Ctrl-C, 2 on an agent's fault, a closed or full output, or a
    record that could not be written.
    """
    from agents import check_spec, make_agent  # the one place that reaches up to agents

    from .rule_args import rule_options

    players = len(args.opponents) + 1
    try:
        rules = RuleConfig(num_players=players, partnerships=args.partnerships,
                           **rule_options(args))
        for spec in args.opponents:  # every spec can serve this table, before anything else
            check_spec(spec, rules)
        seed = fresh_seed() if args.seed is None else args.seed
        agents = [make_agent(spec, seed=agent_seed(seed, seat))
                  for seat, spec in enumerate(args.opponents, start=1)]
    except ValueError as err:
        raise CommandError(str(err)) from None
    save = args.save
    overwrite = getattr(args, "overwrite", False)
    if save:  # never over an opponent's policy (ppo:p.npz --save p.npz --overwrite replaced it)
        import agents as agents_package  # its policies/: the shipped policies 'ppo' plays

        shipped = os.path.join(os.path.dirname(agents_package.__file__), "policies")
        inputs = (*paths_in_specs(args.opponents), shipped,
                  *(str(a.path) for a in agents if getattr(a, "path", None) is not None))
        check_save_path(save, overwrite, inputs)
    status, problem, game = 0, None, None
    if hasattr(sys.stdin, "reconfigure"):  # bytes that are not UTF-8 read as U+FFFD: re-asked
        sys.stdin.reconfigure(errors="replace")
    try:
        game = TerminalGame(agents, rules, seed=seed, names=list(args.opponents))
        game.intro = (f"Straight Dominoes to {rules.target_score}: you (seat 0) against "
                      f"{', '.join(args.opponents)}" + (" (partners: you and seat 2)"
                                                       if rules.partnerships else "")
                      + f". Match seed {seed} (--seed {seed} deals this match again).")
        game.run()
    except Stopped as err:  # SIGTERM, or SIGHUP from a closed terminal: saved like Ctrl-C
        status, problem = 128 + err.signum, f"stopped by {signal.Signals(err.signum).name}"
    except KeyboardInterrupt:
        status, problem = 130, "interrupted"
    except (AgentFault, UnreadableInput) as err:
        status, problem = 2, str(err)
    except OSError as err:  # standard output closed or full
        if not is_stdout_error(err):
            raise
        silence_stdout()
        status, problem = 2, output_error_message(err)
    note = ""
    if save and game is not None and game.match is not None:
        try:
            written = save_record(game.record(), save, overwrite)
            note = f"record saved to {written}"
        except (OSError, ValueError) as err:  # ValueError: a link or a device put there since
            status = 2
            reason = getattr(err, "strerror", None) or err
            note = f"the record could not be written to {save!r} ({reason})"
            rescued = rescue_record(game.record())
            if rescued is not None:
                note += f"; it is saved in {rescued} instead"
    if problem is None:
        if note.startswith("record saved"):
            try:
                game.say(note[0].upper() + note[1:] + ".")
            except OSError:
                silence_stdout()
        elif note:
            problem = note
            note = ""
    if problem is not None:
        print_error(problem + (f"; {note}" if note else ""))
    return status


if __name__ == "__main__":  # python -m dominoes_env.play runs the play command
    from .cli import play_main
    from .cli_support import end_program

    end_program(play_main())
