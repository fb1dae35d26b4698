"""The paths a command reads and writes: how a path is shown, and the output policy of a file.

- :func:`shown_path` and :func:`quoted_path`: a path in a result line, and in an error line
  (escaped where it does not print, cut to :data:`QUOTE_LIMIT` characters);
- :func:`check_output_file`: the output policy of a file a command writes (never an input, a
  link, a device or a folder; an existing file only with ``--overwrite``), checked before the
  command starts; :func:`check_out_dir`: a folder that exists or can be made, and written
  into (the run folders' policy, :mod:`.run_folders`, starts from it);
- :func:`paths_in_specs`: the files that agent specs name, which are a command's inputs
  (and so never its outputs)."""

from __future__ import annotations

import os
from collections.abc import Sequence

from ..core.validation import short_repr
from .errors import CommandError, RefusedError

#: the most characters of a path an error line quotes (an 8,000-character --html path stays
#: one short line)
QUOTE_LIMIT = 200


def shown_path(path: str | os.PathLike) -> str:
    r"""``path`` as a program's result line shows it: as it is where every character prints, else
    quoted with Python's escapes, so that a name with control characters
    (``$'esc\x1b[31mRED\nx'``) neither colours the terminal nor splits the line.

    >>> shown_path("runs/a b"), shown_path("esc\x1b[31m\nx")
    ('runs/a b', "'esc\\x1b[31m\\nx'")
    """
    text = os.fsdecode(path)
    return text if text.isprintable() else repr(text)


def quoted_path(path: str | os.PathLike) -> str:
    """``path`` as an error line quotes it: ``repr``, cut to :data:`QUOTE_LIMIT` characters."""
    return short_repr(os.fsdecode(path), QUOTE_LIMIT)


def check_output_file(path: str | os.PathLike, flag: str, *, overwrite: bool = False,
                      inputs: tuple[str | os.PathLike, ...] = ()) -> None:
    """The output policy for a file a command writes, checked before it starts: never one of
    its ``inputs`` (a file, or anything inside an input folder) or a file they resolve to, never
    a symbolic link, a device or a folder, an existing file only with ``overwrite``, and a
    folder that exists. :class:`CommandError` naming ``flag`` and the reason.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     record = os.path.join(d, "r.json")
    ...     _ = open(record, "w").write("{}")
    ...     check_output_file(os.path.join(d, "page.html"), "--html", inputs=(record,))
    ...     check_output_file(record, "--html", overwrite=True, inputs=(record,))
    Traceback (most recent call last):
    ...
    dominoes_env.cli_support.errors.CommandError: --html '...r.json' is an input of this command...
    """
    text = os.fspath(path)
    if not text.strip():
        raise CommandError(f"{flag} is empty; name a file")
    if text == "-":  # not standard output, as in many commands: a file named '-' in the cwd
        raise CommandError(f"{flag} '-': this command writes a file, not standard output; "
                           "name the file (./- for a file named '-')")
    try:
        real = os.path.realpath(text)
        reals = [os.path.realpath(source) for source in inputs]
    except OSError as err:  # a relative path, and the working directory was removed
        raise CommandError(f"{flag} {quoted_path(text)}: {err.strerror or err}"
                           f"{_cwd_gone(text)}") from None
    for source_real in reals:
        if real == source_real or real.startswith(source_real.rstrip(os.sep) + os.sep):
            raise CommandError(f"{flag} {quoted_path(text)} is an input of this command; "
                               "write elsewhere")
    if os.path.islink(text):
        raise CommandError(f"{flag} {quoted_path(text)} is a symbolic link; name the file "
                           "itself")
    if os.path.isdir(text):
        raise CommandError(f"{flag} {quoted_path(text)} is a directory; name a file")
    if os.path.lexists(text):
        if not os.path.isfile(text):
            raise CommandError(f"{flag} {quoted_path(text)} exists and is not a regular file")
        if not overwrite:
            raise CommandError(f"{flag} {quoted_path(text)} exists; pass --overwrite to replace "
                               "it, or name a new file")
    folder = os.path.dirname(os.path.abspath(text))
    if not os.path.isdir(folder):
        why = "is not a directory" if os.path.exists(folder) else "does not exist"
        raise CommandError(f"{flag} {quoted_path(text)}: the folder {quoted_path(folder)} "
                           f"{why}")  # each cut: an 8,000-character path made a line of 8,383
    name = os.path.basename(os.path.abspath(text)).encode("utf-8", "surrogateescape")
    try:  # found now, not after a match played by hand that then cannot be saved
        most = os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError):  # pragma: no cover - a system that does not say
        most = 255
    if len(name) > most:
        raise CommandError(f"{flag} {quoted_path(text)}: its name is {len(name)} bytes; this "
                           f"file system allows {most}")


def _cwd_gone(text: str) -> str:
    """What to add to an error about the relative path ``text`` when the working directory no
    longer exists (removed while a shell stood in it; ``play --save s.json`` there): a hint to
    give an absolute path or cd to a folder that exists, else ``""``."""
    if os.path.isabs(text):
        return ""
    try:
        os.getcwd()
    except OSError:
        return " (the working directory no longer exists: give an absolute path, or cd to a " \
               "folder that exists)"
    return ""


def check_out_dir(out: str | os.PathLike, flag: str = "--out", *,
                  utf8_name: bool = False) -> None:
    """:class:`RefusedError` unless ``out`` names a folder that exists or can be made: not
    empty, not a file, not inside a file, inside a folder this process can write into (tried
    with a file made and removed), and with ``utf8_name`` a name that is UTF-8 text (see
    :func:`check_utf8_name`). Nothing is left written.

    >>> check_out_dir("", "--out")
    Traceback (most recent call last):
    ...
    dominoes_env.cli_support.errors.RefusedError: --out is empty; name the run's folder
    """
    import tempfile
    from pathlib import Path

    text = os.fspath(out)
    if not text.strip():
        raise RefusedError(f"{flag} is empty; name the run's folder")
    if utf8_name:
        check_utf8_name(text, flag)
    try:  # a name too long, a loop of links: one line naming the reason
        path = Path(text).absolute()
        if path.exists() and not path.is_dir():
            raise RefusedError(f"{flag} {text!r} is a file, not a folder")
        ancestor = path
        while not ancestor.exists():
            ancestor = ancestor.parent
        if not ancestor.is_dir():
            raise RefusedError(f"{flag} {text!r}: {str(ancestor)!r} is a file, not a folder")
        if path.exists():
            os.listdir(path)  # a folder that cannot be read cannot be checked for another run
    except OSError as err:
        raise RefusedError(f"{flag} {short_repr(text)}: {err.strerror or err}"
                           f"{_cwd_gone(text)}") from None
    try:
        fd, probe = tempfile.mkstemp(prefix=".probe-", dir=ancestor)
        os.close(fd)
        os.unlink(probe)
    except OSError as err:
        raise RefusedError(f"{flag} {text!r}: cannot write into {str(ancestor)!r} "
                           f"({err.strerror or err})") from None


def check_utf8_name(text: str, flag: str = "--out") -> None:
    r""":class:`RefusedError` unless the path ``text`` is UTF-8 text: a name with bytes that
    are not (``--out $'run\xff'``, which Python holds as ``'run\udcff'``) is refused for the
    folders of the trainers, whose TensorBoard writers take only such names. Call it before
    the run's folder is made: the refusal names the path and nothing is written.

    >>> check_utf8_name("runs/é")
    >>> check_utf8_name("runs/\udcff")
    Traceback (most recent call last):
    ...
    dominoes_env.cli_support.errors.RefusedError: --out 'runs/\udcff' is not UTF-8 text ...
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise RefusedError(f"{flag} {quoted_path(text)} is not UTF-8 text (it holds bytes that "
                           "no UTF-8 character is), and TensorBoard writes its logs under such "
                           "names only; name the folder in UTF-8") from None


#: the agent specs' parameters that name a policy file, by the spec's name: ``ppo:PATH`` (the
#: first parameter, or ``path=``) and ``guided:policy=PATH`` (see :mod:`agents.specs`)
POLICY_FILE_PARAMETERS = {"ppo": ("", "path"), "guided": ("policy",)}
#: the values of those parameters that name a policy by its role, not a file, by the spec's
#: name: ``guided:policy=ppo`` (the table's shipped ``ppo`` policy; a file of that name is
#: ``policy=./ppo``)
POLICY_NAMES = {"guided": ("ppo",)}


def paths_in_specs(specs: Sequence[str]) -> list[str]:
    """The files and folders that agent specs name (``ppo:runs/a/policy.npz``,
    ``guided:policy=p.npz``): the inputs a command that plays them reads. A folder where a
    policy file goes (``ppo:.``) is a :class:`RefusedError` saying so, before an output is
    compared with it (so the refusal names the spec, not ``--out``).

    >>> paths_in_specs(["greedy", f"ppo:{os.devnull}"])
    ['/dev/null']
    """
    import re

    found = []
    for spec in specs:
        named = _policy_files(str(spec), names=True)
        for value in _policy_files(str(spec)):
            if os.path.isdir(value):
                raise RefusedError(f"agent spec {spec!r}: {value!r} is a folder, not a policy "
                                   "file (an .npz file is)")
        for token in re.split(r"[:,=]", str(spec))[1:]:
            if (token.strip() and token not in named and os.path.exists(token)
                    and token not in found):
                found.append(token)
    return found


def _policy_files(spec: str, names: bool = False) -> list[str]:
    """The values of ``spec``'s parameters that name a policy file
    (:data:`POLICY_FILE_PARAMETERS`), or with ``names`` those that name a policy by its role
    (:data:`POLICY_NAMES`: no file is read)."""
    head, _, rest = spec.strip().partition(":")
    keys, roles = POLICY_FILE_PARAMETERS.get(head, ()), POLICY_NAMES.get(head, ())
    values = []
    for i, item in enumerate(rest.split(",")):
        key, sep, value = item.partition("=")
        if not sep:  # a bare first parameter: ppo:PATH
            key, value = ("", item) if i == 0 else (None, "")
        if key in keys and value.strip() and (value in roles) == names:
            values.append(value)
    return values
