"""``python -m dominoes_env``: the command line.

``replay FILE`` replays a game record and prints one JSON object (see ``shared/RULES.md``);
on a record that is malformed or breaks a rule it prints one line to stderr and exits 2.
"""

from __future__ import annotations

import argparse
import json
import sys

from .core.errors import RecordError
from .core.records import load_record, replay_record


def _replay(args: argparse.Namespace) -> int:
    try:
        result = replay_record(load_record(args.file))
    except RecordError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(json.dumps(result))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m dominoes_env", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rp = sub.add_parser("replay", help="replay a game record and print its scores as JSON")
    rp.add_argument("file", help="the record (JSON)")
    rp.set_defaults(func=_replay)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)
