"""Compare two agents that played the same opponent on the same deals, match by match.

Run two tournaments that differ only in one agent (the same ``--seed``, rules and match count),
then compare them::

    python -m experiments.tournament --agents guided:infer=0 search --players 4 \\
        --no-partnerships --matches 334 --seed 62 --out runs/a
    python -m experiments.tournament --agents guided:infer=0,sims=1800 search --players 4 \\
        --no-partnerships --matches 334 --seed 62 --out runs/b
    python -m experiments.paired runs/a runs/b

It prints each agent's share of the paired matches with its Wilson interval, the matches only
one of them won, and the two-sided sign test of "they are as strong"
(:mod:`agents.tournament.paired`); ``--json`` prints the same as one JSON object. The runs may
still be running or stopped: their finished matches are read, nothing is written.
"""

from __future__ import annotations

import json

from agents.tournament import TournamentDirError
from agents.tournament.paired import compare_runs, format_comparison, read_run
from dominoes_env.cli_support import OneLineParser, end_program, run_command


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog="python -m experiments.paired",
                           description=__doc__.split("\n\n")[0])
    parser.add_argument("run_a", metavar="RUN_A", help="a tournament's folder (its --out)")
    parser.add_argument("run_b", metavar="RUN_B",
                        help="another tournament's folder, on the same deals")
    parser.add_argument("--reference", default=None, metavar="SPEC",
                        help="the agent both runs played against (default: the one agent the "
                             "two runs share)")
    parser.add_argument("--json", action="store_true",
                        help="print the comparison as one JSON object")
    args = parser.parse_args(argv)

    def command() -> int:
        # two agents each, checked before a schedule is built (20,000 agents took 3.8 GB)
        runs = read_run(args.run_a, agents=2), read_run(args.run_b, agents=2)
        result = compare_runs(*runs, args.reference)
        print(json.dumps(result.to_dict()) if args.json else format_comparison(result))
        return 0

    return run_command(command, errors=(TournamentDirError, ValueError, TypeError))


if __name__ == "__main__":
    end_program(main())
