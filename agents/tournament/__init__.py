"""The tournament engine: who plays whom (:mod:`.schedule`), playing and storing the matches,
and the statistics over them (:mod:`.stats`). The program that drives it from the command line
is ``python -m experiments.tournament``.
"""
