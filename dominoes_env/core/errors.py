"""Exceptions of the game core, with messages that name what was wrong and what is allowed (all
``ValueError`` subclasses), and the warning category of the project's deprecations."""


class IllegalMoveError(ValueError):
    """A move that the rules do not allow in this position; the state is unchanged."""

    def __init__(self, move, reason: str):
        self.move = move
        self.reason = reason
        try:
            shown = str(move)
        except (ValueError, RecursionError):  # e.g. a 5,000-digit integer inside it
            from .validation import short_repr

            shown = short_repr(move)
        super().__init__(f"illegal move {shown}: {reason}")


class RecordError(ValueError):
    """A game record that is malformed or contradicts the rules."""


class NoHandError(RuntimeError, ValueError):
    """A call on a :class:`~dominoes_env.core.MatchState` that needs a hand before one is dealt
    (``MatchState(auto_deal=False)`` deals nothing until ``start_hand``): a ``RuntimeError``,
    as a method called in the wrong order, that ``except ValueError`` also sees."""


class DominoesDeprecationWarning(DeprecationWarning):
    """A deprecated name or use of this project (a moved or renamed name, an old env id or
    policy file name), which keeps working for one version: every deprecation of the project
    warns with this category, so ``warnings.filterwarnings("error",
    category=DominoesDeprecationWarning)`` makes them errors without touching other libraries'
    (the README's examples run that way). It is a ``DeprecationWarning``."""
