"""``python -m experiments.tournament``: see :mod:`experiments.tournament.cli`."""

from dominoes_env.cli_support import end_program

from .cli import main

end_program(main())
