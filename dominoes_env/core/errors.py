"""Exceptions of the game core. All are ``ValueError`` subclasses with messages that name what
was wrong and what is allowed."""


class IllegalMoveError(ValueError):
    """A move that the rules do not allow in this position; the state is unchanged."""

    def __init__(self, move, reason: str):
        self.move = move
        self.reason = reason
        super().__init__(f"illegal move {move}: {reason}")


class RecordError(ValueError):
    """A game record that is malformed or contradicts the rules."""
