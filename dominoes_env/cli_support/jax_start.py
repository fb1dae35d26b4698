"""JAX's start under a command: the user's ``XLA_FLAGS`` and ``JAX_*`` settings refused in one line.

XLA ends the process on a flag it refuses, and JAX raises a traceback of 30 to 40 lines on a
``JAX_*`` value it cannot take; :func:`check_jax_start` (which
:func:`~dominoes_env.cli_support.runner.run_command` installs for the length of a command)
checks both as ``jax`` is first imported and raises :class:`~.errors.CommandError` instead
(:func:`xla_flags_problem`, :func:`jax_setting_problem`). :func:`jax_cannot_start` tells a
backend that ``JAX_PLATFORMS`` names but the machine lacks from a bug of the program, and
:func:`jax_in_32_bits` keeps a training run's numbers the same whatever ``JAX_ENABLE_X64``
says.

Nothing here imports JAX at import time: a program that never uses it pays nothing."""

from __future__ import annotations

import contextlib
import importlib.abc
import os
import sys
from collections.abc import Callable

from ..import_hooks import LoaderAround, spec_found_by_others
from .errors import CommandError

#: run in a child where XLA_FLAGS is set: XLA parses the flags when it first builds its
#: compile options (as a backend starts), and ends the process if it refuses one; a jaxlib
#: without them exits 0 (nothing checked)
_PARSE_XLA_FLAGS = """
try:
    from jaxlib.xla_client import CompileOptions
except Exception:
    raise SystemExit(0)
CompileOptions()
"""


#: a line of XLA's log: severity, date, time, thread, source line, then the message
_XLA_LOG_LINE = r"^([FEW])\d{4} [\d:.]+ +\d+ [\w.]+:\d+\] (.*)$"


_XLA_FLAGS_CHECKED: dict[str, str | None] = {}


def xla_flags_problem(flags: str) -> str | None:
    """What XLA refuses in ``flags`` (an ``XLA_FLAGS`` value), or ``None``.

    XLA reads ``XLA_FLAGS`` when JAX starts its backend and ends the process on a flag it
    does not know, a value it cannot read or a file it cannot open (a value not starting with
    ``--`` names a file of flags): "Unknown flag in XLA_FLAGS" in a C++ log line, status 1 or
    SIGABRT, from train_jax, the JAX benchmarks, ``replay --backend jax``. Which flags XLA
    knows is not written anywhere Python can read, so a child process builds XLA's compile
    options with ``flags`` (about 0.2 s) and its log line says what was refused. A child that
    fails any other way (no jaxlib, a jaxlib without them) is not a refusal."""
    if flags not in _XLA_FLAGS_CHECKED:
        import re
        import subprocess

        env = {**os.environ, "XLA_FLAGS": flags, "TF_CPP_MIN_LOG_LEVEL": "0"}
        try:
            child = subprocess.run([sys.executable, "-c", _PARSE_XLA_FLAGS], env=env,
                                   capture_output=True, text=True, errors="replace",
                                   timeout=120)
        except (OSError, subprocess.TimeoutExpired):
            return None  # not checked: the backend's start says what it says
        logged = [m.groups() for m in re.finditer(_XLA_LOG_LINE, child.stderr, re.MULTILINE)]
        fatal = [text for severity, text in logged if severity == "F"]
        errors = [text for severity, text in logged if severity == "E"]
        refused = child.returncode != 0 and fatal
        _XLA_FLAGS_CHECKED[flags] = (errors or fatal)[0].strip().rstrip(".") if refused else None
    return _XLA_FLAGS_CHECKED[flags]


def jax_setting_problem(err: ValueError) -> str | None:
    """The one line for ``err``, a ``ValueError`` raised while ``jax`` is first imported, where
    a ``JAX_*`` environment variable is set (``None`` where none is: not the user's setting).

    JAX reads its ``JAX_*`` variables as it is imported and raises on a value it cannot take
    (``JAX_ENABLE_X64=banana``: "invalid truth value ..."; ``JAX_DEFAULT_MATMUL_PRECISION=bogus``:
    "Invalid value ... for JAX flag jax_default_matmul_precision"): train_jax, the JAX
    benchmarks and ``replay --backend jax`` end with this line, not a traceback of 30 to 40
    lines. The variable is the one the message names (by its own name or its flag's, the lower-case
    name); where the message names none, every ``JAX_*`` variable set is listed."""
    import re

    settings = {name: value for name, value in os.environ.items() if name.startswith("JAX_")}
    if not settings:
        return None
    message = " ".join(str(err).split())
    named = [name for name in sorted(settings)
             if re.search(rf"\b({re.escape(name)}|{re.escape(name.lower())})\b", message)]
    shown = ", ".join(f"{name}={settings[name]!r}" for name in named or sorted(settings))
    if named:
        return f"JAX refused {shown}: {message} (unset it or correct it)"
    return f"JAX cannot start: {message} (check the JAX settings in the environment: {shown})"


class _StartJaxLoader(LoaderAround):
    """``jax``'s own loader, whose ``ValueError`` from a bad ``JAX_*`` setting is raised as a
    :class:`CommandError` (:func:`jax_setting_problem`)."""

    def __init__(self, loader, finder) -> None:
        super().__init__(loader)
        self.finder = finder

    def run(self, module) -> None:
        try:
            self.loader.exec_module(module)
        except ValueError as err:
            problem = jax_setting_problem(err)
            if problem is None:
                raise
            raise CommandError(problem) from None
        self.finder.remove()


class _CheckJaxStart(importlib.abc.MetaPathFinder):
    """An import finder that finds nothing itself: the first import of ``jax`` or ``jaxlib``
    first checks ``XLA_FLAGS`` (:func:`xla_flags_problem`) and raises :class:`CommandError` on a
    value XLA refuses, and ``jax`` is loaded by a loader that makes a bad ``JAX_*`` setting a
    :class:`CommandError` (:class:`_StartJaxLoader`). The import is checked again on every try
    until ``jax`` has loaded (an ``except Exception`` that swallowed the error must not let the
    next try reach XLA, or print JAX's traceback). The message names ``XLA_FLAGS`` as the user
    gave it (``given``): train_jax adds flags of its own before it imports JAX."""

    def __init__(self, given: str | None) -> None:
        self.given = given

    def find_spec(self, fullname, path, target=None):
        if fullname not in ("jax", "jaxlib") or fullname in sys.modules:
            return None
        # only a value the user set is checked (a child process, about 0.2 s): where they set
        # none, the flags are the program's own, which the suite checks
        flags = os.environ.get("XLA_FLAGS", "") if self.given else ""
        problem = xla_flags_problem(flags) if flags else None
        if problem is not None:
            raise CommandError(f"XLA refused XLA_FLAGS={self.given!r}: {problem} (unset "
                               "XLA_FLAGS or correct it)")
        if fullname != "jax":
            return None
        spec = spec_found_by_others(self, fullname, path, target)
        if spec is None or spec.loader is None:
            return None
        spec.loader = _StartJaxLoader(spec.loader, self)
        return spec

    def remove(self) -> None:
        with contextlib.suppress(ValueError):  # removed already
            sys.meta_path.remove(self)


def check_jax_start() -> Callable[[], None]:
    """While a command runs, a bad ``XLA_FLAGS`` or ``JAX_*`` setting is one line and status 2
    as JAX starts (see :func:`xla_flags_problem`, :func:`jax_setting_problem`): every JAX
    program imports ``jax`` before its backend starts, so the check waits for that import, and
    costs nothing where JAX is not imported or is imported already. Returns what removes the
    check."""
    if "jax" in sys.modules:
        return lambda: None
    finder = _CheckJaxStart(os.environ.get("XLA_FLAGS"))
    sys.meta_path.insert(0, finder)
    return finder.remove


def jax_cannot_start(err: BaseException) -> str | None:
    """Why JAX could not start the backend the environment asks for, if ``err`` is that
    (``None`` otherwise): ``JAX_PLATFORMS=tpu`` on a machine without one raises "Unable to
    initialize backend 'tpu': ...", and ``JAX_PLATFORMS=cuda`` without CUDA a bare
    ``AssertionError`` (JAX finds no default backend). Both are the user's setting, not a fault
    of the program: train_jax, the JAX benchmarks and ``replay --backend jax`` end with this
    one line, not a traceback."""
    if type(err) is RuntimeError and str(err).startswith("Unable to initialize backend"):
        return str(err)
    platforms = os.environ.get("JAX_PLATFORMS")
    bridge = sys.modules.get("jax._src.xla_bridge")
    if isinstance(err, AssertionError) and platforms and bridge is not None \
            and getattr(bridge, "_default_backend", "unknown") is None:
        return (f"no backend that JAX_PLATFORMS={platforms!r} names is available here (set "
                "JAX_PLATFORMS='' to let JAX choose)")
    return None


def jax_in_32_bits(program: str) -> None:
    """Switch JAX's 64-bit mode off, with a one-line note, where ``JAX_ENABLE_X64`` turned it
    on: for the programs whose results depend on it (a training run's random draws and
    learning rate), so that a seed gives the same run either way. The JAX game itself is
    exact in both modes. Call it before the program's first JAX computation."""
    import jax

    if jax.config.jax_enable_x64:
        jax.config.update("jax_enable_x64", False)
        print(f"note: JAX_ENABLE_X64 is ignored: {program} computes in 32 bits, so that a "
              "seed gives the same run", file=sys.stderr)
