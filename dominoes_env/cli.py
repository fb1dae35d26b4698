"""``python -m dominoes_env``: the command line.

``replay FILE`` replays a game record and prints one JSON object (see ``shared/RULES.md``);
on a record that is malformed or breaks a rule it prints one line to stderr and exits 2.

``play --opponents SPEC [SPEC ...]`` plays a match against agents in the terminal (see
:mod:`dominoes_env.play`).
"""

from __future__ import annotations

import argparse
import json

from .cli_support import print_error, run_command
from .core.errors import RecordError
from .core.records import load_record, replay_record
from .rule_args import add_rule_arguments


def _replay(args: argparse.Namespace) -> int:
    try:
        result = replay_record(load_record(args.file))
    except RecordError as err:
        print_error(str(err))
        return 2
    print(json.dumps(result))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m dominoes_env",
                                     description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rp = sub.add_parser("replay", help="replay a game record and print its scores as JSON")
    rp.add_argument("file", help="the record (JSON)")
    rp.set_defaults(func=_replay)
    pp = sub.add_parser("play", help="play a match against agents in the terminal (you are seat 0)")
    add_play_arguments(pp)
    pp.set_defaults(func=_play)
    return parser


def add_play_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--opponents", nargs="+", required=True, metavar="SPEC",
                        help="agent specs for seats 1, 2, ...; their number sets the player count")
    parser.add_argument("--partnerships", action=argparse.BooleanOptionalAction, default=None,
                        help="with 4 players, you and the agent opposite are partners (default on)")
    parser.add_argument("--seed", type=int, default=None, help="seed of the deals and the agents")
    parser.add_argument("--save", metavar="FILE", help="write the game record here at the end")
    add_rule_arguments(parser)


def _play(args: argparse.Namespace) -> int:
    from .play import run_play

    return run_play(args)


def play_main(argv: list[str] | None = None) -> int:
    """Console script ``dominoes-play``: the ``play`` subcommand."""
    parser = argparse.ArgumentParser(prog="dominoes-play", description="Play Straight Dominoes "
                                     "against agents in the terminal (you are seat 0).")
    add_play_arguments(parser)
    args = parser.parse_args(argv)
    return run_command(lambda: _play(args))


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run_command(lambda: args.func(args))
