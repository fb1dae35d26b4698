"""Pictures of the game: text (:mod:`.ansi`), SVG for Jupyter (:mod:`.svg`, plain Python) and
RGB images (:mod:`.image`, Pillow + numpy), all drawn from the shared geometry of :mod:`.layout`.

Importing this package imports nothing heavy; each module is imported when used.
"""


def render_frame(render_mode: str, hand, match):
    """What an environment's ``render()`` returns for ``render_mode``: the ``"rgb_array"``
    image, the ``"ansi"`` text, or ``None`` after printing the text (``"human"``). ``hand`` is
    the hand on show (the finished one at an episode's end), ``match`` gives the scores."""
    # the number of the hand on show: the finished one of a hand episode was titled "hand 2",
    # the match having dealt the next one already
    scene = dict(scores=match.scores, hand_number=match.hand_number_of(hand),
                 winner=match.winner)
    if render_mode == "rgb_array":
        from .image import render_rgb

        return render_rgb(hand, **scene)
    from .ansi import render_ansi

    text = render_ansi(hand, **scene)
    if render_mode == "human":
        print(text)
        return None
    return text
