"""``python -m experiments.tournament``: see :mod:`experiments.tournament.cli`."""

import sys

from .cli import main

sys.exit(main())
