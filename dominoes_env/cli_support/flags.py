"""The command lines of the programs: flags parsed into values, one ``error:`` line for a bad one.

- :class:`OneLineParser`: an ``ArgumentParser`` whose usage errors are one line, status 2;
- the ``argparse`` types of numbers (:func:`ascii_int`, :func:`ascii_float`,
  :func:`positive_seconds`, :func:`seed_value`) and the limits of the flags that share them
  (:data:`MIN_SECONDS`, :data:`MAX_TRAINER_SEED`, :data:`MAX_MATCHES`), the most updates of
  the JAX trainer (:data:`MAX_JAX_UPDATES`) and the dtypes the JAX trainers' products may read
  (:data:`MATMUL_DTYPES`);
- a program's configuration dataclass as its flags: :func:`config_field` declares a field and
  the values it allows, :func:`check_config` holds a dataclass built in Python to them,
  :func:`check_settings` the settings a file saved (a checkpoint's), and :func:`config_parser`
  makes the flags that hold the command line to them;
- :func:`add_position_options`: the flags of the commands that choose benchmark positions;
- :func:`program_name`: the name a program's usage and error lines give it, as it was started.

A failed write of ``--help`` is said the way the runner says a lost output
(:mod:`.runner`)."""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..core.validation import (
    ParameterTypeError,
    as_bool,
    as_float,
    as_int,
    as_seed,
    float_text,
    int_text,
    short_repr,
)
from .runner import output_error_message, print_error, silence_stdout


class OneLineParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose usage errors are one ``error:`` line (status 2), pointing to
    ``--help`` instead of printing the whole usage."""

    def error(self, message: str):
        print_error(f"{self.prog}: {message} (see {self.prog} --help)")
        raise SystemExit(2)

    def _print_message(self, message: str, file=None) -> None:
        """``--help`` and ``--version`` written and flushed, or one line and status 2: argparse
        drops a failed write, so ``--help > /dev/full`` would otherwise end with status 0 and
        no help."""
        if not message:
            return
        stream = file or sys.stderr
        try:
            stream.write(message)
            stream.flush()
            if getattr(stream, "failed", False):  # a QuietStream dropped it: said the same way
                raise stream.error
        except (OSError, ValueError) as err:  # ValueError: a closed stream
            if stream is sys.stdout:
                silence_stdout()
            if isinstance(err, OSError):
                print_error(output_error_message(err))
            else:
                print_error("standard output was closed before the output was written")
            raise SystemExit(2) from None


class DefaultsHelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """``--help`` with each flag's default shown once: not where its help text already says it
    (``"(default: on with 4 players)"`` gets no second ``"(default: None)"``), and not where
    the default is ``None`` (no value: the help says what happens then)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if action.default is None or "(default" in text:
            return action.help
        return super()._get_help_string(action)


def program_name(module: str, script: str | None = None) -> str:
    """The name a program's ``usage:`` and ``error:`` lines give it: its console script
    ``script`` (``pyproject.toml``'s ``[project.scripts]``) when that is how it was started,
    else ``python -m module``, the way the docs start it.

    >>> program_name("experiments.train_ppo", "dominoes-train")   # under pytest
    'python -m experiments.train_ppo'
    """
    started = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    if script and os.path.splitext(started)[0] == script:  # dominoes-train(.exe)
        return script
    return f"python -m {module}"


#: the shortest time :func:`positive_seconds` takes: a timed loop runs at least one round in it
MIN_SECONDS = 0.001


#: the largest --seed of the trainers built on stable-baselines3 and RLlib: both seed numpy's
#: legacy generator, which takes 32 bits (a larger --seed is one ``error:`` line naming the range)
MAX_TRAINER_SEED = 2**32 - 1


#: the most matches an evaluation flag (a trainer's --eval-matches) may ask for: more would not
#: end (10**11 evaluation matches at step 0 of train_jax run with no output until killed); also
#: the most per pairing of ``agents.tournament.TournamentConfig``
MAX_MATCHES = 10**7


#: the most updates a run of the JAX trainer (``python -m experiments.train_jax``) may train:
#: its update counter (and Adam's step) is an int32; held here, where JAX is not imported, so
#: that a program starting that trainer (``experiments.best_response``) refuses more first
MAX_JAX_UPDATES = 2**31 - 1


#: what the JAX trainers' network products may read (``train_jax --matmul``, ``bench_training
#: --jax-matmul``): the names of the dtypes ``dominoes_env.jax.networks.mlp`` computes in
MATMUL_DTYPES = ("float32", "bfloat16")


def ascii_int(text: str) -> int:
    """The ``argparse`` type of an integer flag: ``int`` for ASCII text only
    (:func:`~dominoes_env.core.validation.int_text`; ``--matches ١``, an Arabic-Indic digit,
    is refused, not read as 1)."""
    return int_text(text)


def ascii_float(text: str) -> float:
    """The ``argparse`` type of a number flag: ``float`` for ASCII text only."""
    return float_text(text)


ascii_int.__name__, ascii_float.__name__ = "int", "float"  # argparse names them in messages


def positive_seconds(text: str) -> float:
    """An ``argparse`` type: a time in seconds, a finite number of at least
    :data:`MIN_SECONDS` (``nan`` or ``inf`` would make a timed loop run forever; a time too short
    for one round, ``1e-300``, timed nothing: the benchmarks divided by zero).

    >>> positive_seconds("0.5")
    0.5
    >>> positive_seconds("inf")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be a finite number of seconds >= 0.001, not 'inf'
    """
    try:
        value = float_text(text)
    except ValueError:
        value = None
    if value is None or not MIN_SECONDS <= value < math.inf:
        raise argparse.ArgumentTypeError(
            f"must be a finite number of seconds >= {MIN_SECONDS:g}, not {text!r}")
    return value


def config_field(default: Any, help: str, *, choices: Sequence[Any] | None = None,
                 low: float | None = None, high: float | None = None, low_open: bool = False,
                 high_open: bool = False, path: bool = False) -> Any:
    """A field of a program's configuration dataclass: its default, its ``--help`` text and the
    values it allows, which :func:`config_parser` (the command line) and :func:`check_config`
    (the dataclass itself) both enforce: a value of the field's declared type (a ``bool`` field
    takes ``True``/``False`` only, a ``str`` field text, a ``list`` field a list of its item
    type), one of ``choices``, or a number within ``low`` .. ``high`` (inclusive, unless
    ``low_open`` / ``high_open``; ``None``: unbounded). A ``str`` field with ``path=True`` (a
    file or folder) takes an ``os.PathLike`` too, stored as its text. A callable default (a
    ``list`` factory) is called for each instance.

    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class Run:
    ...     lr: float = config_field(3e-4, "learning rate", low=0, high=1, low_open=True)
    ...     mode: str = config_field("fast", "how", choices=("fast", "slow"))
    ...     def __post_init__(self):
    ...         check_config(self)
    >>> Run(lr=0.1).lr
    0.1
    >>> Run(lr=0)
    Traceback (most recent call last):
    ...
    ValueError: lr=0.0 is out of range; allowed: > 0 and <= 1
    >>> config_parser(Run, "train", "Train.").parse_args(["--lr", "0"])
    Traceback (most recent call last):
    ...
    SystemExit: 2
    """
    if not isinstance(help, str) or not help.strip():
        raise ValueError(f"a config field needs a help text, got {help!r}")
    metadata: dict[str, Any] = {"help": help}
    if choices is not None:
        metadata["choices"] = tuple(choices)
        if not metadata["choices"]:
            raise ValueError("choices is empty; give the allowed values or None")
    for name, bound in (("low", low), ("high", high)):
        if bound is not None:
            as_float(name, bound)
            metadata[name] = bound
    if low is not None and high is not None and not low <= high:
        raise ValueError(f"low={low!r} is above high={high!r}")
    if low_open:
        metadata["low_open"] = True
    if high_open:
        metadata["high_open"] = True
    if path:
        metadata["path"] = True
    if callable(default) and not isinstance(default, str):
        return dataclasses.field(default_factory=default, metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def _field_kind(f: dataclasses.Field) -> str:
    """``"int"``, ``"float"``, ``"bool"``, ``"list"``, ``"str"``...: what a field holds (its
    annotation, a string under ``from __future__ import annotations``, without ``| None``)."""
    kind = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))
    return kind.split(" | ")[0].split("[")[0].strip()


def _item_kind(f: dataclasses.Field) -> str:
    """What one item of a ``list`` field holds (``"str"`` when the annotation does not say)."""
    kind = f.type if isinstance(f.type, str) else str(f.type)
    return kind.split("[", 1)[1].split("]")[0].strip() if "[" in kind else "str"


def _check_value(f: dataclasses.Field, value: Any, kind: str) -> Any:
    """``value`` (of the type ``kind``) checked against the field's type, ``choices`` and range
    (coerced: a numpy integer becomes an ``int``); ``ValueError``/``TypeError`` naming the
    field."""
    meta = f.metadata
    low, high = meta.get("low"), meta.get("high")
    if kind == "int":
        if low is not None:
            low = math.floor(low) + 1 if meta.get("low_open") else math.ceil(low)
        if high is not None:
            high = math.ceil(high) - 1 if meta.get("high_open") else math.floor(high)
        value = as_int(f.name, value, low, high)
    elif kind == "float" or low is not None or high is not None:
        value = as_float(f.name, value, low, high, low_open=meta.get("low_open", False),
                         high_open=meta.get("high_open", False))
    choices = meta.get("choices")
    if choices is not None and value not in choices:
        raise ValueError(f"{f.name}={short_repr(value)} is not allowed; allowed: "
                         f"{', '.join(map(repr, choices))}")
    return value


def _check_field(f: dataclasses.Field, value: Any) -> Any:
    """``value`` checked against the field ``f`` (``None`` where the default is ``None``; a
    list or tuple item by item, stored as a list) and coerced: a number by its range, a
    ``bool`` field's value a real boolean (never ``"no"`` or ``0``), a ``str`` field's text (a
    path field's ``os.PathLike`` as its text)."""
    if value is None and f.default is None:
        return None
    kind = _field_kind(f)
    if kind == "list":
        if not isinstance(value, (list, tuple)):
            raise ParameterTypeError(f"{f.name}={short_repr(value)} must be a list, not "
                                     f"{type(value).__name__}")
        return [_check_field_value(f, item, _item_kind(f)) for item in value]
    return _check_field_value(f, value, kind)


def _check_field_value(f: dataclasses.Field, value: Any, kind: str) -> Any:
    if kind == "bool":
        value = as_bool(f.name, value)
    elif kind == "str":
        if f.metadata.get("path") and isinstance(value, os.PathLike):
            value = os.fspath(value)
        if not isinstance(value, str):
            allowed = "a path (str or os.PathLike)" if f.metadata.get("path") else "a str"
            raise ParameterTypeError(f"{f.name}={short_repr(value)} must be {allowed}, not "
                                     f"{type(value).__name__}")
    return _check_value(f, value, kind)


def check_config(config: Any) -> None:
    """Check every field of a configuration dataclass against its declared type and what its
    :func:`config_field` allows (``choices``, ``low`` .. ``high``; a list field item by item;
    ``None`` where the default is ``None``), and store the coerced values. Call it from
    ``__post_init__``, so a configuration built in Python is held to the same rules as the
    command line (``overwrite="no"`` is refused, not taken as true); the first bad field
    raises ``ValueError`` (``TypeError`` for a wrong type) naming it."""
    for f in dataclasses.fields(config):
        object.__setattr__(config, f.name, _check_field(f, getattr(config, f.name)))


def check_settings(cls: type, settings: Mapping[str, Any]) -> None:
    """Check the ``settings`` a file holds (a run's configuration saved in its checkpoint) by
    the rules of the flags of the configuration dataclass ``cls``: each value of a field's type
    (``None`` only where the default is ``None``), among its ``choices`` and within its range
    (:func:`config_field`). A name that is no field of ``cls`` is left alone, and so is a field
    the settings lack (they may be another version's); the first bad value raises
    ``ValueError`` naming its field (a ``ParameterTypeError`` for a wrong type).

    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class Run:
    ...     steps: int = config_field(10, "steps to train", low=1)
    ...     mode: str = config_field("fast", "how", choices=("fast", "slow"))
    >>> check_settings(Run, {"steps": 5, "mode": "slow", "gone": 1})
    >>> check_settings(Run, {"steps": 0})
    Traceback (most recent call last):
    ...
    ValueError: steps=0 is out of range; allowed: >= 1
    >>> check_settings(Run, {"mode": None})
    Traceback (most recent call last):
    ...
    dominoes_env.core.validation.ParameterTypeError: mode=None must be a str, not NoneType
    """
    for f in dataclasses.fields(cls):
        if f.name in settings:
            _check_field(f, settings[f.name])


def _range_text(meta: Mapping[str, Any]) -> str:
    """``"> 0 and <= 1"``: a field's range in words (empty when it has none)."""
    low, high = meta.get("low"), meta.get("high")
    parts = []
    if low is not None:
        parts.append(f"{'>' if meta.get('low_open') else '>='} {low}")
    if high is not None:
        parts.append(f"{'<' if meta.get('high_open') else '<='} {high}")
    return " and ".join(parts)


def _reason(err: ValueError) -> str:
    """`` (why)``: the reason :func:`~dominoes_env.core.validation.float_text` or
    ``int_text`` gives in parentheses for refusing a number's text (``1e-400``: too small for a
    float), for a flag's message to keep; empty where it gives none."""
    text = str(err)
    return f" ({text.rsplit(' (', 1)[1]}" if text.endswith(")") and " (" in text else ""


def _flag_type(f: dataclasses.Field, kind: str) -> Callable[[str], Any]:
    """The ``argparse`` type of a field's flag: the text as the field's type, refused (one
    ``error:`` line, exit status 2) when it is not a finite number or out of the field's range."""
    cast = {"int": int_text, "float": float_text}.get(kind, str)
    bounded = kind in ("int", "float") and ("low" in f.metadata or "high" in f.metadata)

    def parse(text: str) -> Any:
        try:
            value = cast(text)
        except ValueError as err:
            raise argparse.ArgumentTypeError(
                f"invalid {kind} value: {text!r}{_reason(err)}") from None
        if kind == "float" or bounded:
            try:
                value = _check_value(f, value, kind)
            except ValueError as err:
                raise argparse.ArgumentTypeError(str(err)) from None
        return value

    parse.__name__ = kind  # argparse names the type in its messages
    return parse


def config_parser(cls: type, prog: str, description: str, epilog: str | None = None,
                  helps: Mapping[str, str] | None = None) -> OneLineParser:
    """A parser with one ``--flag`` per field of the dataclass ``cls`` (a training run's
    configuration), its default shown: the help text is ``helps[name]`` or the field's
    ``metadata["help"]``; ``bool`` fields get ``--flag / --no-flag``, ``list`` fields take one
    or more values; a value outside the field's ``choices`` or its ``low`` .. ``high`` range
    (:func:`config_field`), or a number that is not finite, is one ``error:`` line naming the
    flag, exit status 2.

    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class Run:
    ...     steps: int = config_field(10, "steps to train", low=1)
    ...     fast: bool = config_field(False, "go fast")
    >>> vars(config_parser(Run, "train", "Train.").parse_args(["--steps", "5", "--fast"]))
    {'steps': 5, 'fast': True}
    """
    parser = OneLineParser(prog=prog, description=description, epilog=epilog,
                           formatter_class=DefaultsHelpFormatter)
    for f in dataclasses.fields(cls):
        flag = "--" + f.name.replace("_", "-")
        default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
        text = (helps or {}).get(f.name) or f.metadata.get("help") or f.name.replace("_", " ")
        kind = _field_kind(f)
        allowed = _range_text(f.metadata)
        if allowed:
            text += f" ({allowed})"
        if kind == "bool":
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=default,
                                help=text)
        elif kind == "list":
            parser.add_argument(flag, nargs="+", default=default, help=text,
                                type=_flag_type(f, _item_kind(f)),
                                choices=f.metadata.get("choices"))
        else:
            parser.add_argument(flag, type=_flag_type(f, kind), default=default, help=text,
                                choices=f.metadata.get("choices"))
    return parser


def seed_value(text: str) -> int:
    """The ``argparse`` type of every ``--seed``: an integer 0..2**64 - 1
    (:data:`~dominoes_env.core.validation.MAX_SEED`), the one rule for seeds in every program;
    out of range (negative, or past 2**64 - 1), one ``error:`` line naming the range."""
    try:
        value = int_text(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
    try:
        return as_seed(value)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


seed_value.__name__ = "int"  # argparse names the type in its messages


def add_position_options(parser: argparse.ArgumentParser, positions: int, seed: int,
                         seed_help: str) -> None:
    """The flags that choose benchmark positions (``--players``, ``--partnerships``,
    ``--positions``, ``--seed``), shared by the commands that decide positions
    (``python -m experiments.bench_agents``, ``python -m experiments.decision_quality``);
    :func:`agents.positions.table_positions` reads them."""
    parser.add_argument("--players", type=ascii_int, choices=(2, 3, 4), default=2,
                        help="seats at the table of the positions (2)")
    parser.add_argument("--partnerships", action=argparse.BooleanOptionalAction, default=None,
                        help="4 players in two partnerships (default: on with 4 players; "
                             "--no-partnerships: 4 players without)")
    parser.add_argument("--positions", type=ascii_int, default=positions,
                        help=f"positions, drawn from greedy-vs-greedy matches ({positions})")
    parser.add_argument("--seed", type=seed_value, default=seed, help=f"{seed_help} ({seed})")
