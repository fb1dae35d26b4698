"""The ``infos`` the env faces return: one fixed structure generic libraries can batch.

``INFO_VERSION = 1`` (env ``-v1``). Every step, for every agent, the info has the same keys with
the same types and shapes, whatever happened (Tianshou's ``Collector`` and Gymnasium's vector
envs stack infos across environments, which lists of events of varying length break):

==================  =========================  ==================================================
key                 type                       meaning
==================  =========================  ==================================================
``hand_number``     ``int``                    the hand the step was played in (0 = first)
``scores``          ``int64`` array ``(S,)``   side scores after the step (read-only)
``hand_end``        ``int``                    0: the hand goes on; 1 (``HAND_DOMINO``): the
                                               step ended it by a domino; 2 (``HAND_BLOCKED``):
                                               the step blocked it
``domino_seat``     ``int``                    the seat that went out, else -1
``award_side``      ``int``                    the side credited with the hand's award, else -1
``award_points``    ``int``                    the award credited (0 when none)
``illegal_action``  ``int``                    the offending action code when the step was an
                                               illegal move under ``illegal_action="penalize"``,
                                               else -1
==================  =========================  ==================================================

The single-agent env adds ``seat`` (``int``, the learner's seat to act) and ``hands_ended``
(``int``, hands that ended since the learner's previous decision; the ``hand_end`` ...
``award_points`` fields describe the last of them).

With the env option ``info_events=True`` the info also carries the public event list
(``"events"``: ``("play", seat, code, points)``, ``("draw", seat, n)``, ``("pass", seat)``),
``"illegal_reason"`` (a string, ``""`` unless the step was illegal) and, in the single-agent env,
``"hand_results"`` (``(hand_number, result, award)`` per hand ended). Those vary in length, so
leave the option off for libraries that batch infos.

>>> hand_end_fields(("domino", 2), (0, 15))
(1, 2, 0, 15)
>>> hand_end_fields(("blocked", None), None)
(2, -1, -1, 0)
"""

from __future__ import annotations

INFO_VERSION = 1

HAND_GOES_ON, HAND_DOMINO, HAND_BLOCKED = 0, 1, 2
_END_CODES = {"domino": HAND_DOMINO, "blocked": HAND_BLOCKED}

#: the keys every info has, in order (the single-agent env adds ``SINGLE_AGENT_KEYS``)
INFO_KEYS = ("hand_number", "scores", "hand_end", "domino_seat", "award_side", "award_points",
             "illegal_action")
SINGLE_AGENT_KEYS = ("seat", "hands_ended")
EVENT_KEYS = ("events", "illegal_reason")

NO_HAND_END = (HAND_GOES_ON, -1, -1, 0)


def hand_end_fields(result: tuple | None, award: tuple | None) -> tuple[int, int, int, int]:
    """``(hand_end, domino_seat, award_side, award_points)`` for a hand's ``result`` (the core's
    ``("domino", seat)`` / ``("blocked", None)`` / ``None``) and its credited ``award``
    (``(side, points)`` or ``None``)."""
    if result is None:
        return NO_HAND_END
    kind, seat = result
    side, points = award if award is not None else (-1, 0)
    return _END_CODES[kind], -1 if seat is None else seat, side, points


def scores_array(scores):
    """The side scores as a fresh read-only ``int64`` array (shared by every agent's info)."""
    import numpy as np

    arr = np.array(scores, dtype=np.int64)
    arr.flags.writeable = False
    return arr
