"""``python -m dominoes_env``: the command line.

``replay FILE`` replays a game record and prints one JSON object (see ``docs/rules.md``);
on a record that is malformed or breaks a rule it prints one line to stderr and exits 2.
``FILE`` is a ``.json`` record or a ``.jsonl(.gz)`` shard of a tournament's ``records/``
(``--match INDEX`` picks one record). ``--steps`` tells the match move by move with the text
picture, ``--html OUT.html`` writes the viewer page (:mod:`dominoes_env.render.html`),
``--extract OUT.json`` writes the chosen record on its own; ``--seat S`` shows only what seat
``S`` could see (in ``--steps`` and ``--html``; the JSON output and ``--extract`` hold every
seat's tiles, so ``--seat`` without either is refused). ``--backend jax`` computes the JSON
with the JAX game (:mod:`dominoes_env.jax`) instead of the core.

``play --opponents SPEC [SPEC ...]`` plays a match against agents in the terminal (see
:mod:`dominoes_env.play`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from .cli_support import (
    CommandError,
    OneLineParser,
    ascii_int,
    check_output_file,
    end_program,
    print_error,
    program_name,
    run_command,
    seed_value,
    shown_path,
)
from .core.errors import RecordError
from .core.records import check_record_name, replay_record, write_record
from .core.rules import RuleConfig
from .rule_args import add_rule_arguments


def _replay(args: argparse.Namespace) -> int:
    from .record_io import read_record

    outputs = [(flag, path) for flag, path in (("--html", args.html), ("--extract", args.extract))
               if path is not None]
    for flag, path in outputs:  # the output policy, before anything is read or written
        check_output_file(path, flag, overwrite=args.overwrite, inputs=(args.file,))
    if args.extract:
        try:
            check_record_name(args.extract, "--extract")
        except ValueError as err:
            raise CommandError(str(err)) from None
    if len(outputs) == 2 and os.path.realpath(args.html) == os.path.realpath(args.extract):
        raise CommandError("--html and --extract name the same file; give each its own")
    try:
        record = read_record(args.file, args.match)
        try:
            result = replay_record(record) if args.backend == "core" else _replay_jax(record)
        except RecordError as err:  # what is wrong inside the record: name the record too
            where = repr(args.file) + ("" if args.match is None else f" match {args.match!r}")
            raise RecordError(f"{where}: {err}") from None
        n = RuleConfig.from_dict(record["rules"]).num_players
        if args.seat is not None and not 0 <= args.seat < n:
            raise RecordError(f"--seat {args.seat} is not a seat of this record (0..{n - 1})")
        if args.seat is not None and not (args.steps or args.html):  # the JSON was everyone's
            raise RecordError("--seat shows a seat's view with --steps or --html; the JSON "
                              "output and --extract hold every seat's tiles")
        if args.html:
            from .render.html import replay_html, write_html

            page = replay_html(record, seat=args.seat)
            _write(args.html, lambda path: write_html(page, path))
        if args.extract:
            _write(args.extract, lambda path: write_record(record, path))
    except RecordError as err:
        print_error(str(err))
        return 2
    if args.steps:
        from .render.steps import record_steps

        try:
            for line in steps_text(record_steps(record), args.seat):
                print(line)
        except BrokenPipeError:  # e.g. piped into `head`: stop quietly
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - the interpreter flushes it
            return 0
    else:
        print(json.dumps(result))
    for what, path in (("viewer", args.html), ("record", args.extract)):
        if path:
            print(f"{what}: {shown_path(path)}", file=sys.stderr)
    return 0


def _replay_jax(record) -> dict:
    """The replay output computed by the JAX game (:mod:`dominoes_env.jax.replay`)."""
    try:
        from .jax.replay import replay_record_jax
    except ImportError as err:
        raise CommandError(f"--backend jax needs the jax extra (pip install "
                           f"'straight-dominoes[jax]'): {err}") from None
    return replay_record_jax(record)


def _write(path: str, write) -> None:
    try:
        write(path)
    except OSError as err:
        raise RecordError(f"cannot write {path!r}: {err.strerror or err}") from None


def steps_text(steps, seat: int | None = None):
    """The lines ``replay --steps`` prints: each event, with the text picture after each deal
    and play and every seat's tiles (only ``seat``'s, and the others' counts, from a seat's
    view, until the hand ends)."""
    from .render.ansi import render_ansi

    for st in steps:
        head = f"-- hand {st.hand + 1} · play {st.move} · {st.text}"
        yield head
        if st.kind in ("deal", "play"):
            yield render_ansi(st.state, list(st.scores), hand_number=st.hand)
        if st.kind in ("deal", "play", "draw", "end"):
            reveal = seat is None or st.kind == "end"
            for s, tiles in enumerate(st.tiles):
                names = " ".join(str(st.state.rules.tiles.tiles[t]) for t in tiles)
                shown = names or "(none)" if reveal or s == seat else f"{len(tiles)} tiles"
                yield f"   seat {s}: {shown}"
        if st.kind in ("end", "match"):
            yield "   scores: " + " · ".join(f"side {k} {v}" for k, v in enumerate(st.scores))
        yield ""


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog=program_name("dominoes_env", "dominoes"),
                           description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rp = sub.add_parser("replay", help="replay a game record and print its scores as JSON")
    rp.add_argument("file", help="the record: a .json file, or a .jsonl(.gz) shard or a "
                    "tournament directory run with --save-records, with --match")
    rp.add_argument("--match", metavar="ID", default=None,
                    help="in a shard of a tournament's records/, the match's index or key "
                         "(as in matches.jsonl)")
    rp.add_argument("--steps", action="store_true",
                    help="tell the match move by move with the text picture (instead of JSON)")
    rp.add_argument("--html", metavar="OUT.html",
                    help="write the replay viewer: one self-contained page to open in a browser")
    rp.add_argument("--seat", type=ascii_int, default=None, metavar="S",
                    help="show the match as seat S saw it (others' tiles hidden until each "
                         "hand ends), with --steps or --html")
    rp.add_argument("--extract", metavar="OUT.json",
                    help="write the chosen record as a .json (or a one-record .jsonl.gz shard, "
                         "by the name)")
    rp.add_argument("--overwrite", action="store_true",
                    help="let --html and --extract replace existing files (never the input)")
    rp.add_argument("--backend", choices=("core", "jax"), default="core",
                    help="replay through the core (default) or the compiled JAX game (the jax "
                         "extra; same JSON output)")
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
    parser.add_argument("--seed", type=seed_value, default=None,
                        help="seed of the deals and the agents (default: a fresh random match)")
    parser.add_argument("--save", metavar="FILE",
                        help="write the game record (JSON, for replay) here when the match ends "
                             "in any way: finished, q, end of input, Ctrl-C, an agent failing; "
                             "the path is checked before the match starts")
    parser.add_argument("--overwrite", action="store_true",
                        help="let --save replace an existing FILE (without it an existing file "
                             "is refused before the match)")
    add_rule_arguments(parser)


def _play(args: argparse.Namespace) -> int:
    from .play import run_play

    if args.save is not None and not args.save.strip():  # run_play would play without saving
        raise CommandError("--save is empty; name a file")
    return run_play(args)


def play_main(argv: list[str] | None = None) -> int:
    """Console script ``dominoes-play``: the ``play`` subcommand."""
    parser = OneLineParser(prog=program_name("dominoes_env play", "dominoes-play"),
                           description="Play Straight Dominoes against agents in the terminal "
                                       "(you are seat 0).")
    add_play_arguments(parser)
    args = parser.parse_args(argv)
    return run_command(lambda: _play(args), quiet_stdout=False)  # a game no one sees: ended


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run_command(lambda: args.func(args), quiet_stdout=args.func is not _play)


if __name__ == "__main__":  # python -m dominoes_env.cli: as python -m dominoes_env (it did nothing)
    end_program(main())
