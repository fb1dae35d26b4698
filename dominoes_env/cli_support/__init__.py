"""The shared runner of every ``python -m`` program of the project, one module for each part.

- :mod:`.errors`: :class:`CommandError` (one ``error:`` line, status 2) and
  :class:`RefusedError` (a flag refused before the command starts; a ``ValueError`` too);
- :mod:`.flags`: :class:`OneLineParser`, the number flags' types (:func:`ascii_int`,
  :func:`positive_seconds`, :func:`seed_value`...), a configuration dataclass as flags
  (:func:`config_field`, :func:`check_config`, :func:`check_settings`, :func:`config_parser`),
  :func:`add_position_options` and :func:`program_name`;
- :mod:`.runner`: :func:`run_command`, which turns every bad ending of a command into one line
  and an exit status, the quiet standard streams, :func:`print_error`, the stop signals
  (:class:`Stopped`, :func:`signals_held`, :func:`say_finished`), a trainer's stopped run
  (:class:`TrainingStopped`, :func:`end_stopped_training`) and :func:`end_program`;
- :mod:`.jax_start`: the ``XLA_FLAGS`` and ``JAX_*`` settings checked as JAX starts, and
  :func:`jax_in_32_bits`;
- :mod:`.jax_process`: a JAX program's process set up before its first computation
  (:func:`setup_jax`: its CPU devices, patient collectives, a checked compilation cache);
- :mod:`.paths`: paths in result and error lines (:func:`shown_path`, :func:`quoted_path`),
  the output policy of a file (:func:`check_output_file`) and of an output folder
  (:func:`check_out_dir`), and the files agent specs name (:func:`paths_in_specs`);
- :mod:`.memory`: :func:`machine_memory` and :func:`check_fits_in_memory`;
- :mod:`.run_folders`: the output policy of run folders (:func:`check_run_folder`,
  :func:`start_run_folder`), made of :mod:`.run_markers` (:data:`RUN_MARKER`,
  :func:`read_run_marker`, :func:`settings_difference`), :mod:`.program_outputs`
  (:data:`PROGRAM_OUTPUTS`), :mod:`.run_removal` (what ``--overwrite`` removes,
  :func:`clear_run`) and :mod:`.folder_locks` (:func:`run_folder_locks`...), whose names it
  re-exports;
- :mod:`.trainer_resume`: a trainer's ``--resume`` (:func:`run_of_checkpoint`,
  :func:`nothing_to_train`);
- :mod:`.run_clock`: a trainer's run clock (:class:`RunClock`: the run's wall seconds of
  training across ``--resume``, and when the three trainers start it);
- :mod:`.divergence`: a trainer's diverged update, said one way (:func:`divergence_line`);
- :mod:`.eval_log`: a trainer's ``eval.csv``: :func:`append_eval_row` adds a row,
  :func:`keep_numeric_rows` keeps it readable.

Every public name is re-exported here, and programs import them from here
(``from dominoes_env.cli_support import run_command``); those of :mod:`.run_folders` and its
parts are its ``__all__``, read rather than restated, so the two lists cannot drift apart.

The modules import one another without a cycle: :mod:`.errors` imports none of them;
:mod:`.paths`, :mod:`.memory` and :mod:`.jax_start` import :mod:`.errors`; :mod:`.jax_process`
imports :mod:`.jax_start`; :mod:`.program_outputs`, :mod:`.run_markers`,
:mod:`.trainer_resume`, :mod:`.run_clock` and :mod:`.divergence` import none of them
(:mod:`.divergence` imports :mod:`dominoes_env.policy_format`); :mod:`.folder_locks` imports
:mod:`.errors`;
:mod:`.run_removal` imports :mod:`.paths`, :mod:`.program_outputs` and :mod:`.run_markers`;
:mod:`.run_folders` imports :mod:`.paths` and those five (it re-exports their names);
:mod:`.eval_log` imports :mod:`.paths`; :mod:`.runner` imports :mod:`.jax_start` and
:mod:`.run_folders` (it installs the one and releases the locks of the other), and
:mod:`.flags` imports :mod:`.runner` (a failed ``--help`` is said as a lost output is).
Importing it costs what the one module did (argparse, dataclasses, importlib.abc; JAX and the
rest are imported where they are used).
"""

from __future__ import annotations

from . import run_folders
from .divergence import divergence_line
from .errors import (
    CommandError,
    RefusedError,
)
from .eval_log import (
    append_eval_row,
    keep_numeric_rows,
)
from .flags import (
    MATMUL_DTYPES,
    MAX_JAX_UPDATES,
    MAX_MATCHES,
    MAX_TRAINER_SEED,
    MIN_SECONDS,
    DefaultsHelpFormatter,
    OneLineParser,
    add_position_options,
    ascii_float,
    ascii_int,
    check_config,
    check_settings,
    config_field,
    config_parser,
    positive_seconds,
    program_name,
    seed_value,
)
from .jax_process import (
    cache_entry_damaged,
    cache_folder_problem,
    checked_cache,
    patient_collectives,
    remove_damaged_cache_entries,
    setup_jax,
)
from .jax_start import (
    check_jax_start,
    jax_cannot_start,
    jax_in_32_bits,
    jax_setting_problem,
    xla_flags_problem,
)
from .memory import (
    check_fits_in_memory,
    machine_memory,
)
from .paths import (
    POLICY_FILE_PARAMETERS,
    POLICY_NAMES,
    QUOTE_LIMIT,
    check_out_dir,
    check_output_file,
    paths_in_specs,
    quoted_path,
    shown_path,
)
from .run_clock import RunClock
from .run_folders import *  # noqa: F403  (run_folders.__all__: its names and its parts')
from .runner import (
    HeldSignals,
    QuietStream,
    Stopped,
    TrainingStopped,
    end_program,
    end_stopped_training,
    is_stdout_error,
    lost_output_message,
    output_error_message,
    print_error,
    quiet_teardown,
    run_command,
    say_finished,
    signals_held,
    silence_stdout,
    stop_note,
    stop_on_signals,
    stop_status,
)

__all__ = [
    "CommandError",
    "RefusedError",
    "OneLineParser",
    "DefaultsHelpFormatter",
    "MIN_SECONDS",
    "MAX_TRAINER_SEED",
    "MAX_MATCHES",
    "MAX_JAX_UPDATES",
    "MATMUL_DTYPES",
    "ascii_int",
    "ascii_float",
    "positive_seconds",
    "program_name",
    "config_field",
    "check_config",
    "check_settings",
    "config_parser",
    "seed_value",
    "add_position_options",
    "silence_stdout",
    "QuietStream",
    "lost_output_message",
    "print_error",
    "output_error_message",
    "quiet_teardown",
    "Stopped",
    "stop_status",
    "stop_note",
    "TrainingStopped",
    "end_stopped_training",
    "stop_on_signals",
    "say_finished",
    "HeldSignals",
    "signals_held",
    "run_command",
    "end_program",
    "is_stdout_error",
    "xla_flags_problem",
    "jax_setting_problem",
    "check_jax_start",
    "jax_cannot_start",
    "jax_in_32_bits",
    "setup_jax",
    "patient_collectives",
    "checked_cache",
    "cache_folder_problem",
    "remove_damaged_cache_entries",
    "cache_entry_damaged",
    "QUOTE_LIMIT",
    "shown_path",
    "quoted_path",
    "check_output_file",
    "check_out_dir",
    "POLICY_FILE_PARAMETERS",
    "POLICY_NAMES",
    "paths_in_specs",
    "machine_memory",
    "check_fits_in_memory",
    "append_eval_row",
    "keep_numeric_rows",
    "RunClock",
    "divergence_line",
    *run_folders.__all__,
]
