"""One rule for integer and boolean parameters, used by every layer.

An integer parameter accepts any integer type (Python's ``int``, numpy's ``int64``/``uint8``...,
anything with ``__index__``) and refuses booleans, floats (even ``6.0``) and strings, with an
error naming the parameter. A wrong type raises :class:`ParameterTypeError`, which is both a
``TypeError`` and a ``ValueError``, so callers that catch either see it; a value out of range
raises ``ValueError``. The core imports no numpy: numpy integers pass through ``__index__``.

>>> as_int("max_pip", 9), as_int("seed", None, optional=True)
(9, None)
>>> as_int("max_pip", 6.0)
Traceback (most recent call last):
...
dominoes_env.core.validation.ParameterTypeError: max_pip=6.0 must be an integer, not float
>>> as_int("num_players", 5, 2, 4)
Traceback (most recent call last):
...
ValueError: num_players=5 is out of range; allowed: 2..4
>>> as_bool("partnerships", 1)
Traceback (most recent call last):
...
dominoes_env.core.validation.ParameterTypeError: partnerships=1 must be true or false, not int
"""

from __future__ import annotations

import math
import operator
from typing import Any


class ParameterTypeError(TypeError, ValueError):
    """A parameter of the wrong type (a ``TypeError`` that ``except ValueError`` also sees)."""


def is_bool(value: Any) -> bool:
    # Python's bool, and numpy's bool_ without importing numpy
    return isinstance(value, bool) or type(value).__name__ in ("bool_", "bool")


def is_count(value: Any, low: int = 0) -> bool:
    """Whether ``value`` is a whole number >= ``low`` as JSON reads one: an ``int``, not a
    bool or ``2.0`` (a count read back from a file)."""
    return type(value) is int and value >= low


def is_finite_number(value: Any) -> bool:
    """Whether ``value`` is a finite number as JSON reads one: an ``int`` or a ``float`` that a
    float holds finitely, not a bool, NaN or ``10**400`` (``math.isfinite`` of that is an
    ``OverflowError``, as is every float format of it)."""
    if type(value) not in (int, float):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an int past the largest float
        return False


def is_rate(value: Any) -> bool:
    """Whether ``value`` is a rate read from a file: a finite number in 0..1."""
    return is_finite_number(value) and 0 <= value <= 1


def is_interval(value: Any, bound: Any = is_finite_number) -> bool:
    """Whether ``value`` is an interval read from a file: ``[low, high]``, each end passing
    ``bound`` (a finite number by default) and ``low <= high``.

    >>> is_interval([0.2, 0.4], is_rate), is_interval([0.4, 0.2]), is_interval([0, 10**400])
    (True, False, False)
    """
    return (isinstance(value, list) and len(value) == 2 and all(map(bound, value))
            and value[0] <= value[1])


def as_int(name: str, value: Any, low: int | None = None, high: int | None = None, *,
           optional: bool = False) -> int | None:
    """``value`` as a Python ``int`` after checking its type and range (``low``/``high``
    inclusive; ``None`` = unbounded). ``optional=True`` lets ``None`` through."""
    if value is None and optional:
        return None
    if is_bool(value):
        raise ParameterTypeError(f"{name}={value!r} must be an integer, not a boolean")
    try:
        number = operator.index(value)
    except TypeError:
        raise ParameterTypeError(
            f"{name}={short_repr(value)} must be an integer, not {type(value).__name__}"
        ) from None
    except Exception as err:  # noqa: BLE001 - an __index__ that raises anything else
        raise ParameterTypeError(f"{name}={short_repr(value)} must be an integer (its "
                                 f"__index__ raised {type(err).__name__})") from None
    if (low is not None and number < low) or (high is not None and number > high):
        if high is None:
            allowed = f">= {low}"
        elif low is None:
            allowed = f"<= {high}"
        else:
            allowed = f"{low}..{high}"
        raise ValueError(f"{name}={short_repr(number)} is out of range; allowed: {allowed}")
    return number


#: the largest seed: a seed is an unsigned 64-bit integer, 0..2**64 - 1, everywhere (every
#: --seed flag and every API that takes one), the range of the seeds the project derives
#: (``derive_seed``) and draws (``fresh_seed``, the AEC env's match seeds). A seed outside it is
#: a ``ValueError`` where it is given, before anything is written; a negative seed would name
#: the same deals as its absolute value (``random.Random(-1)`` is ``random.Random(1)``). (The
#: trainers built on stable-baselines3 and RLlib take 0..2**32 - 1: those seed numpy's legacy
#: generator.)
MAX_SEED = 2**64 - 1


def as_seed(value: Any, name: str = "seed", *, optional: bool = False) -> int | None:
    """``value`` as a seed (:data:`MAX_SEED`): any integer type in 0..2**64 - 1.

    >>> as_seed(7), as_seed(None, optional=True)
    (7, None)
    >>> as_seed(-1)
    Traceback (most recent call last):
    ...
    ValueError: seed=-1 is out of range; allowed: 0..18446744073709551615
    """
    return as_int(name, value, 0, MAX_SEED, optional=optional)


def check_rng(name: str, value: Any) -> Any:
    """``value`` if it is a ``random.Random`` (the generator the core deals and samples with),
    else a :class:`ParameterTypeError` naming it (``None``, or a seed given in its place).

    >>> check_rng("rng", 5)
    Traceback (most recent call last):
    ...
    dominoes_env.core.validation.ParameterTypeError: rng=5 must be a random.Random, not int
    """
    import random

    if not isinstance(value, random.Random):
        raise ParameterTypeError(
            f"{name}={short_repr(value)} must be a random.Random, not {type(value).__name__}")
    return value


def int_text(text: str) -> int:
    """The integer a flag, a spec parameter or a typed move writes: ``int(text)``, for ASCII
    text only. Python's ``int`` also reads the digits of other scripts (``'١'`` is 1, and
    ``'٥'``, a five, looks like a zero), so a value could run as another number than the one
    its reader sees, and JSON readers refuse them; here they are a ``ValueError``. So is
    ``_``, which Python reads as digit grouping (``--matches 1_0`` would run 10 matches).

    >>> int_text(" 42 "), int_text("-7")
    (42, -7)
    >>> int_text("١")
    Traceback (most recent call last):
    ...
    ValueError: invalid literal for int() with base 10: '١' (ASCII digits only)
    >>> int_text("1_0")
    Traceback (most recent call last):
    ...
    ValueError: invalid literal for int() with base 10: '1_0' (digits only, no '_')
    """
    if not isinstance(text, str) or not text.isascii():
        raise ValueError(f"invalid literal for int() with base 10: {text!r} (ASCII digits only)")
    if "_" in text:
        raise ValueError(f"invalid literal for int() with base 10: {text!r} (digits only, "
                         "no '_')")
    return int(text)


def float_text(text: str) -> float:
    """``float(text)`` for ASCII text without ``_`` only (see :func:`int_text`), and not for a
    number too small for a float: ``float("1e-400")`` is ``0.0``, so ``--move-timeout
    1e-400``, a tiny limit, would run as 0, no limit at all; it is a ``ValueError``.

    >>> float_text("2.5e-3"), float_text("-0.0")
    (0.0025, -0.0)
    >>> float_text("1e-400")
    Traceback (most recent call last):
    ...
    ValueError: could not convert string to float: '1e-400' (too small for a float: it would be 0)
    """
    if not isinstance(text, str) or not text.isascii():
        raise ValueError(f"could not convert string to float: {text!r} (ASCII digits only)")
    if "_" in text:
        raise ValueError(f"could not convert string to float: {text!r} (digits only, no '_')")
    value = float(text)
    if value == 0 and any(c in "123456789" for c in text.lower().partition("e")[0]):
        raise ValueError(f"could not convert string to float: {text!r} (too small for a float: "
                         "it would be 0)")
    return value


def as_bool(name: str, value: Any, *, optional: bool = False) -> bool | None:
    """``value`` as a ``bool``: only ``True``/``False`` (numpy's too), never ``0``/``1``."""
    if value is None and optional:
        return None
    if not is_bool(value):
        raise ParameterTypeError(
            f"{name}={short_repr(value)} must be true or false, not {type(value).__name__}")
    return bool(value)


def as_float(name: str, value: Any, low: float | None = None, high: float | None = None, *,
             low_open: bool = False, high_open: bool = False) -> float:
    """``value`` as a finite ``float`` (integers accepted, booleans and NaN/inf refused) within
    ``low``/``high`` (inclusive unless ``low_open``/``high_open``). A complex number is
    refused, numpy's too: ``float(np.complex128(0.5+2j))`` is 0.5, its imaginary part dropped
    with only a warning.

    >>> as_float("x", complex(0.5, 2))
    Traceback (most recent call last):
    ...
    dominoes_env.core.validation.ParameterTypeError: x=(0.5+2j) must be a real number, not complex
    """
    if is_bool(value) or isinstance(value, (str, bytes, bytearray)):  # float() reads their text
        raise ParameterTypeError(f"{name}={short_repr(value)} must be a number")
    if _is_complex(value):
        raise ParameterTypeError(f"{name}={short_repr(value)} must be a real number, not "
                                 f"{type(value).__name__}")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ParameterTypeError(f"{name}={short_repr(value)} must be a number") from None
    except OverflowError:  # an integer past the largest float, ~1.8e308
        raise ValueError(f"{name}={short_repr(value)} must be a finite number (this one is "
                         "too large for a float)") from None
    except Exception as err:  # noqa: BLE001 - a __float__ that raises anything else
        raise ParameterTypeError(f"{name}={short_repr(value)} must be a number (its "
                                 f"__float__ raised {type(err).__name__})") from None
    if not math.isfinite(number):
        raise ValueError(f"{name}={number!r} must be a finite number")
    below = low is not None and (number <= low if low_open else number < low)
    above = high is not None and (number >= high if high_open else number > high)
    if below or above:
        lo = "" if low is None else f"{'>' if low_open else '>='} {low}"
        hi = "" if high is None else f"{'<' if high_open else '<='} {high}"
        raise ValueError(f"{name}={number!r} is out of range; allowed: "
                         f"{' and '.join(filter(None, (lo, hi)))}")
    return number


def _is_complex(value: Any) -> bool:
    """A complex number: Python's, numpy's scalars (registered as ``numbers.Complex``) and an
    array of a complex dtype (without importing numpy)."""
    import numbers

    if isinstance(value, numbers.Complex) and not isinstance(value, numbers.Real):
        return True
    return getattr(getattr(value, "dtype", None), "kind", None) == "c"


def as_path(name: str, value: Any) -> str:
    """``value`` as a path's text: a non-empty ``str`` or ``os.PathLike`` (``pathlib.Path``).
    An empty one is refused: ``Path("")`` is the current directory, where a function writing
    ``out=""`` would put its files among whatever is there.

    >>> as_path("out", "")
    Traceback (most recent call last):
    ...
    ValueError: out='' is empty; name a folder or file
    """
    import os

    if not isinstance(value, (str, os.PathLike)):
        raise ParameterTypeError(f"{name}={short_repr(value)} must be a path (str or "
                                 f"os.PathLike), not {type(value).__name__}")
    text = os.fspath(value)
    if not isinstance(text, str):
        raise ParameterTypeError(f"{name}={short_repr(value)} must be a text path, not bytes")
    if not text.strip():
        raise ValueError(f"{name}={text!r} is empty; name a folder or file")
    if "\0" in text:  # the system refuses it with "embedded null byte", naming nothing
        raise ValueError(f"{name}={short_repr(text)} holds a null character; no path can")
    return text


class DuplicateKeyError(ValueError):
    """A JSON object of an untrusted file holds a key twice (:func:`parse_json`)."""


class NestedTooDeeplyError(ValueError):
    """JSON of an untrusted file nests arrays or objects beyond Python's recursion limit
    (:func:`parse_json`; a ``ValueError``, where ``json.loads`` raises ``RecursionError``)."""


def utf8_text(data: bytes, *, bom: bool = True) -> str:
    r"""``data`` decoded as UTF-8 (with ``bom``, a byte order mark at its start allowed), else a
    ``ValueError`` naming the first byte that is not: what a reader of a JSON file written as
    UTF-8 decodes before :func:`parse_json` (``json.loads`` of bytes guesses the encoding, and
    would take UTF-16 and UTF-32 files).

    >>> utf8_text(b"\xef\xbb\xbf{}"), utf8_text(b"{}", bom=False)
    ('{}', '{}')
    >>> utf8_text(b"{\xff}")
    Traceback (most recent call last):
    ...
    ValueError: it is not UTF-8 text: byte 0xff at offset 1
    """
    try:
        return data.decode("utf-8-sig" if bom else "utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(f"it is not UTF-8 text: byte {data[err.start]:#04x} at offset "
                         f"{err.start}") from None


def parse_json(text: str | bytes) -> Any:
    """JSON text read from an untrusted file (a record, a policy's or a checkpoint's metadata,
    a dataset's ``dataset.json``): ``json.loads`` but for an object that holds a key twice,
    a :class:`DuplicateKeyError` (a ``ValueError``) naming the key (``json.loads`` keeps the
    last value without a word, where another JSON reader may take the first). Arrays or objects
    nested deeper than Python's recursion limit are a :class:`NestedTooDeeplyError` (a
    ``ValueError``) too, not ``json.loads``'s ``RecursionError``, so a reader that catches
    ``ValueError`` catches every refusal.

    >>> parse_json('{"a": 1, "b": {"a": 2}}')
    {'a': 1, 'b': {'a': 2}}
    >>> parse_json('{"rules": {}, "hands": [], "rules": {"max_pip": 12}}')
    Traceback (most recent call last):
    ...
    dominoes_env.core.validation.DuplicateKeyError: the key 'rules' appears twice in one object
    >>> parse_json("[" * 100_000 + "]" * 100_000)
    Traceback (most recent call last):
    ...
    dominoes_env.core.validation.NestedTooDeeplyError: JSON nested too deeply (arrays or ...
    """
    import json

    def unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for key, value in pairs:
            if key in found:
                raise DuplicateKeyError(f"the key {short_repr(key)} appears twice in one object")
            found[key] = value
        return found

    try:
        return json.loads(text, object_pairs_hook=unique)
    except RecursionError:
        raise NestedTooDeeplyError("JSON nested too deeply (arrays or objects inside one "
                                   "another beyond Python's recursion limit)") from None


def dump_json(value: Any, separators: tuple[str, str] | None = None) -> str:
    """The JSON text of ``value`` that :func:`parse_json` reads back as ``value``: ``json.dumps``
    without NaN or infinities (``allow_nan=False``) and with text keys only, else a
    ``ValueError`` (``TypeError`` for what JSON cannot hold). ``json.dumps`` wrote the key
    ``1`` as ``"1"``, so ``{1: "a", "1": "b"}`` became an object holding a key twice, which
    every reader of the project's files then refused (and ``{1: "a"}`` read back as
    ``{"1": "a"}``).

    >>> dump_json({"a": [1, {"b": None}]})
    '{"a": [1, {"b": null}]}'
    >>> dump_json({"match": {1: "a", "1": "b"}})
    Traceback (most recent call last):
    ...
    dominoes_env.core.validation.ParameterTypeError: the key 1 (int) is not text; JSON writes ...
    """
    import json

    text = json.dumps(value, separators=separators, allow_nan=False)
    stack = [value]
    while stack:  # after dumps: what it wrote is finite, so the walk ends
        item = stack.pop()
        if isinstance(item, dict):
            for key, inner in item.items():
                if not isinstance(key, str):
                    raise ParameterTypeError(
                        f"the key {short_repr(key)} ({type(key).__name__}) is not text; JSON "
                        "writes every key as text, so it would not read back as written")
                stack.append(inner)
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return text


def short_repr(value: Any, limit: int = 60) -> str:
    """``repr(value)`` cut to ``limit`` characters (a 5,000-digit integer stays readable)."""
    try:
        text = repr(value)
    except ValueError:  # an int too large for str(): Python's digit limit
        if isinstance(value, int):
            return f"<integer of about {value.bit_length() * 30103 // 100000} digits>"
        return f"<{type(value).__name__} holding a huge integer>"
    except RecursionError:  # a structure nested too deeply to print
        return f"<deeply nested {type(value).__name__}>"
    except Exception:  # noqa: BLE001 - a __repr__ that raises: the message must still be made
        return f"<{type(value).__name__} whose repr() fails>"
    return text if len(text) <= limit else text[: limit - 3] + "..."
