"""Pictures of the game: text (:mod:`.ansi`), SVG for Jupyter (:mod:`.svg`, plain Python) and
RGB images (:mod:`.image`, Pillow + numpy), all drawn from the shared geometry of :mod:`.layout`.

Importing this package imports nothing heavy; each module is imported when used.
"""
