"""Agent specs: short strings that name an agent, for command lines and configs.

=========================  ===========================================================
spec                       agent
=========================  ===========================================================
``random``                 uniform over legal moves
``greedy``                 the move that scores the most now
``search``                 determinized Monte Carlo search at its default budget
``search:sims=400``        parameters as ``key=value`` pairs, comma-separated
``guided``                 search on deals weighed by the shipped PPO policy
                           (``guided:sims=600,race=1.5,infer=1,pool=3,plies=0,``
                           ``value=margin,policy=PATH``; ``policy=ppo``: the policy
                           ``ppo`` plays at the table)
``best``                   the strongest shipped agent for the table (2 players, 3, 4 in
                           partnerships, 4 without: :data:`agents.best.BEST_BY_TABLE`)
``ppo``                    the shipped PPO policy for the game's table
                           (:func:`agents.ppo.shipped_policy_path`)
``ppo:PATH``               a PPO policy exported to ``PATH`` (``.npz``), at the table it
                           was trained for
``ismcts``                 OpenSpiel's information-set MCTS (``ismcts:sims=100``; needs
                           the ``openspiel`` extra)
``module.path:ClassName``  a user agent class (constructed with ``seed=`` and the params);
                           a top-level module works too (``mymodule:MyAgent``)
``module.path:Class:k=v``  a user agent class with parameters
=========================  ===========================================================

>>> make_agent("random", seed=1).name
'random'
>>> make_agent("nonsense")
Traceback (most recent call last):
...
ValueError: unknown agent spec 'nonsense'; known names: best, greedy, guided, ismcts, ppo, ...)
"""

from __future__ import annotations

import functools
import importlib
import os
from collections import Counter
from typing import Any

from dominoes_env.cli_support import POLICY_NAMES as SPEC_POLICY_NAMES
from dominoes_env.core.validation import float_text, int_text, short_repr

from .base import Agent

#: built-in agents: spec name -> "module:Class" (imported on first use)
BUILTIN = {
    "random": "agents.base:RandomAgent",
    "greedy": "agents.greedy:GreedyAgent",
    "search": "agents.search:SearchAgent",
    "guided": "agents.guided:GuidedSearchAgent",
    "best": "agents.best:BestAgent",
    "ppo": "agents.ppo:PPOAgent",
    "ismcts": "agents.ismcts:ISMCTSAgent",
}


def _parse_value(text: str) -> Any:
    for cast in (int_text, float_text):  # ASCII digits only: 'sims=١٠' is text, not 10
        try:
            return cast(text)
        except ValueError:
            pass
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    return text


def parse_params(text: str, spec: str) -> dict[str, Any]:
    """The ``key=value`` pairs of ``text`` (a spec's part after its name), separated by single
    commas: an empty pair (``search:sims=5,,``, ``search:,``) is a ``ValueError``, as
    ``random:`` is, never dropped as if it were not there."""
    params: dict[str, Any] = {}
    for item in text.split(",") if text else ():
        if not item:
            raise _empty_parameter(spec)
        key, sep, value = item.partition("=")
        if not sep or not key.isidentifier():
            raise ValueError(
                f"bad parameter {item!r} in agent spec {spec!r}; write key=value pairs")
        if value != value.strip():  # 'sims= 5' ran as 5 where 'sims=5 ' was refused
            raise ValueError(f"agent spec {spec!r}: the value of {key!r} has spaces around "
                             f"it; write {key}={value.strip()}")
        if key in params:  # search:sims=4,sims=400 played 400 without a word
            raise ValueError(f"agent spec {spec!r} gives {key!r} twice; give it once")
        params[key] = _parse_value(value)
    return params


def _empty_parameter(spec: str) -> ValueError:
    return ValueError(f"agent spec {spec!r} has an empty parameter (a ',' with nothing before "
                      "or after it); write key=value pairs separated by single commas")


#: the most characters an error line quotes of what a user's spec names (its object, or the
#: text of an error its module or class raised), so ``sys:modules`` is not 34 KB on one line
QUOTE_LIMIT = 200


def _quote(value: Any) -> str:
    """``value`` as an error line names it: its type and a repr cut to :data:`QUOTE_LIMIT`."""
    return f"{short_repr(value, QUOTE_LIMIT)} ({type(value).__name__})"


def _name(cls: Any) -> str:
    """How an error line names the callable a spec names: its ``__name__`` if it has a short
    one (a class), else :func:`_quote`."""
    name = getattr(cls, "__name__", None)
    if isinstance(name, str) and len(name) <= QUOTE_LIMIT:
        return repr(name)
    return _quote(cls)


def _first_line(err: BaseException) -> str:
    """The first line of ``err``'s text, cut to :data:`QUOTE_LIMIT` characters."""
    try:
        lines = str(err).strip().splitlines()
    except Exception:  # an exception whose __str__ fails
        lines = []
    line = lines[0].strip() if lines else ""
    return line if len(line) <= QUOTE_LIMIT else line[: QUOTE_LIMIT - 3] + "..."


def _load_class(target: str, spec: str) -> type:
    module_name, _, class_name = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        raise ValueError(f"agent spec {spec!r}: cannot import module {module_name!r} "
                         f"({_first_line(err)})") from None
    except Exception as err:  # the module's own code failed: a SyntaxError, a raise at import
        raise ValueError(f"agent spec {spec!r}: importing module {module_name!r} failed with "
                         f"{type(err).__name__}: {_first_line(err)}") from None
    try:
        return getattr(module, class_name)
    except AttributeError:
        raise ValueError(
            f"agent spec {spec!r}: module {module_name!r} has no {class_name!r}") from None


def check_spec_text(spec: Any) -> str:
    """``spec`` if it is a non-empty string without spaces around it (``' random'`` would be a
    second agent beside ``random``), else a ``ValueError`` saying so: what any list of agents
    checks first, before the names mean anything."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"an agent spec is a non-empty string, got {short_repr(spec)}")
    if spec != spec.strip():
        raise ValueError(f"agent spec {spec!r} has spaces around it; write {spec.strip()!r}")
    return spec


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """What a spec names, without importing anything: the agent class's ``"module:Class"``
    and its constructor parameters, parsed. ``ValueError`` for a spec that names no agent,
    or has spaces around it (``' random'``: :func:`check_spec_text`)."""
    check_spec_text(spec)
    head, colon, rest = spec.partition(":")
    if colon and not rest.strip():
        if head in BUILTIN:
            raise ValueError(f"agent spec {spec!r} ends in ':' with nothing after it; write "
                             f"{head!r} alone, or {head}:key=value (ppo:PATH for a policy file)")
        raise ValueError(f"agent spec {spec!r} ends in ':' with nothing after it; write "
                         f"{head}:ClassName (a user agent class in module {head!r})")
    if head in BUILTIN:
        if head == "ppo" and rest and "=" not in rest.split(",")[0]:
            path, comma, more = rest.partition(",")
            if comma and path and not more:  # ppo:PATH, (ppo:, is an empty path: its own words)
                raise _empty_parameter(spec)
            params = parse_params(more, spec)
            if "path" in params:
                raise ValueError(f"agent spec {spec!r} gives 'path' twice; give it once")
            return BUILTIN[head], {"path": path, **params}
        return BUILTIN[head], parse_params(rest, spec)
    if rest and all(part.isidentifier() for part in head.split(".")):
        class_name, colon, params = rest.partition(":")
        if colon and not params.strip():  # as 'random:' is refused, not read as 'random'
            raise ValueError(f"agent spec {spec!r} ends in ':' with nothing after it; write "
                             f"{spec[:-1]!r} alone, or {spec}key=value")
        if not class_name.isidentifier():
            raise ValueError(
                f"agent spec {spec!r}: {class_name!r} is not a class name; "
                "write module.path:ClassName")
        return f"{head}:{class_name}", parse_params(params, spec)
    known = ", ".join(sorted(BUILTIN))
    raise ValueError(
        f"unknown agent spec {spec!r}; known names: {known} (or module.path:ClassName)")


def spec_safe_path(path: str | os.PathLike) -> bool:
    """Whether an agent spec can name the policy file ``path``: ``ppo:PATH`` and
    ``guided:policy=PATH`` parse back to ``path`` itself (:func:`parse_spec`). A path with
    ``,`` (which separates a spec's parameters), with ``=`` (which gives one) or with spaces
    at its start cannot be named, nor one that a spec reads as something else (``12``, a
    number; ``ppo``, the shipped policy's name), nor one that is no text.

    >>> spec_safe_path("runs/a b/policy.npz"), spec_safe_path("runs/lr=3e-4/policy.npz")
    (True, False)
    >>> spec_safe_path("runs/a,b/policy.npz")
    False
    """
    try:
        text = os.fspath(path)
    except TypeError:
        return False
    if not isinstance(text, str) or not text or text in POLICY_NAMES[BUILTIN["guided"]]:
        return False  # guided:policy=ppo is the shipped policy, not the file ./ppo
    try:
        return (parse_spec(f"ppo:{text}") == (BUILTIN["ppo"], {"path": text})
                and parse_spec(f"guided:policy={text}") == (BUILTIN["guided"], {"policy": text}))
    except ValueError:
        return False


#: the file name :func:`check_spec_path` tries inside a folder (the trainers' export)
_POLICY_IN_FOLDER = "policy.npz"


def check_spec_path(flag: str, path: str | os.PathLike, *, folder: bool = False) -> None:
    """:class:`~dominoes_env.cli_support.RefusedError` (a ``ValueError``: one ``error:`` line
    naming ``flag``, status 2) unless an agent spec can name the policy file ``path``
    (:func:`spec_safe_path`), or with ``folder`` a policy file in the folder ``path``: what a
    program checks before it starts when it plays a policy of its own by spec (a trainer's
    evaluation plays ``ppo:OUT/eval_policy.npz``), so that a run folder such as
    ``runs/lr=3e-4`` is refused at once, not after the run started.

    >>> check_spec_path("--out", "runs/a b", folder=True)
    >>> check_spec_path("--out", "runs/a,b", folder=True)
    Traceback (most recent call last):
    ...
    dominoes_env.cli_support.errors.RefusedError: --out 'runs/a,b': a policy in it could not ...
    """
    from dominoes_env.cli_support import RefusedError, quoted_path

    text = os.fsdecode(path)
    if spec_safe_path(os.path.join(text, _POLICY_IN_FOLDER) if folder else text):
        return
    kind = "folder" if folder else "path"
    if not text:
        raise RefusedError(f"{flag} is empty; name a {'folder' if folder else 'file'}")
    if "," in text or "=" in text:
        why = f"',' and '=' separate a spec's parameters); choose a {kind} without them"
    elif text != text.strip():
        why = f"a spec does not keep spaces around a path); choose a {kind} without them"
    else:  # '12', 'true', 'ppo': guided:policy=12 is the number 12, policy=ppo the shipped
        why = ("a spec reads it as a number, true or false, or a policy's name); name it "
               "another way (./NAME)")
    it = "a policy in it" if folder else "it"
    raise RefusedError(f"{flag} {quoted_path(text)}: {it} could not be named in an agent "
                       f"spec ({why}")


def resolve_spec(spec: str) -> tuple[type, dict[str, Any]]:
    """The agent class and constructor parameters a spec names (without building it)."""
    target, params = parse_spec(spec)
    return _load_class(target, spec), params


def same_agent_key(spec: str, rules: Any = None) -> Any:
    """What tells specs apart as agents, their canonical form: the class named and its
    parameters parsed to their values (a number by its value: ``epsilon=0`` and
    ``epsilon=0.0`` are one; a policy file by its bytes, :func:`_file_identity`), a built-in
    agent's parameters left out where they give its default (``search:sims=5,epsilon=0`` is
    ``search:sims=5``), and, with ``rules`` (a :class:`~dominoes_env.core.RuleConfig`),
    ``ppo:PATH`` naming the table's shipped policy read as ``ppo``; the text itself for a spec
    that does not parse (its error comes where it is built).

    >>> same_agent_key("search:sims=05") == same_agent_key("search:sims=5")
    True
    >>> same_agent_key("search:sims=5,epsilon=0.0") == same_agent_key("search:sims=5")
    True
    """
    try:
        target, params = parse_spec(spec)
    except ValueError:
        return spec
    for key in POLICY_PARAMETERS.get(target, ()):
        if (isinstance(params.get(key), str) and params[key]
                and params[key] not in POLICY_NAMES.get(target, ())):
            params[key] = _file_identity(params[key])
    if (rules is not None and target == BUILTIN["ppo"] and params.get("path") is not None
            and params["path"] == _shipped(rules)):
        params["path"] = None  # the shipped policy for this table, which plain ppo plays
    if target in BUILTIN.values():  # our own classes: imported without a user module's effects
        defaults = _defaults(target)
        params = {key: value for key, value in params.items()
                  if key not in defaults or _value_key(value) != _value_key(defaults[key])}
    return target, tuple(sorted((key, _value_key(value)) for key, value in params.items()))


#: the parameters of built-in agents that name a policy file (compared by their bytes)
POLICY_PARAMETERS = {BUILTIN["ppo"]: ("path",), BUILTIN["guided"]: ("policy",)}
#: the values of those parameters that name a policy by its role, not a file
#: (``guided:policy=ppo``: the table's shipped ``ppo`` policy; the command-line checks' own)
POLICY_NAMES = {BUILTIN[head]: names for head, names in SPEC_POLICY_NAMES.items()}


def _file_identity(path: str) -> str:
    """What tells policy files apart: a regular file's bytes (their sha256: a byte copy of a
    policy is the same player, and ``ppo ppo:copy.npz`` played it against itself as two
    agents), else the real path (its error comes where the agent is built)."""
    import os

    real = os.path.realpath(path)
    try:
        stat = os.stat(real)
    except OSError:
        return real
    if not os.path.isfile(real):
        return real
    return _sha256(real, stat.st_ino, stat.st_size, stat.st_mtime_ns)


@functools.lru_cache(maxsize=64)
def _sha256(path: str, inode: int, size: int, mtime_ns: int) -> str:
    """``"sha256:..."`` of the file at ``path``, read once for each version of it."""
    from dominoes_env.core.atomic_files import file_sha256

    try:
        return f"sha256:{file_sha256(path)}"
    except OSError:
        return path


def _value_key(value: Any) -> tuple[str, Any]:
    """A parameter's value as specs compare it: a number (not a bool) by its value, so ``0``
    and ``0.0`` are one; anything else by its type and value."""
    if isinstance(value, int) and not isinstance(value, bool):
        return "number", value  # float() of a 400-digit integer raised OverflowError
    if isinstance(value, float):
        return "number", int(value) if value.is_integer() else value
    return type(value).__name__, value


def _defaults(target: str) -> dict[str, Any]:
    """The constructor defaults of the built-in agent class ``target`` (none where it cannot
    be imported: an extra that is not installed)."""
    import inspect

    try:
        cls = _load_class(target, target)
        signature = inspect.signature(cls)
    except (ValueError, TypeError):
        return {}
    return {name: p.default for name, p in signature.parameters.items()
            if p.default is not inspect.Parameter.empty}


def _shipped(rules: Any) -> str | None:
    """The identity (:func:`_file_identity`) of the shipped PPO policy for ``rules``' table
    (``None``: it has none)."""
    try:
        from .ppo import shipped_policy_path

        return _file_identity(os.fspath(shipped_policy_path(rules)))
    except (ValueError, TypeError, ImportError):
        return None


def _parameters(cls: Any) -> list[str] | None:
    """The keyword parameters a spec may give ``cls``'s constructor (``seed`` is make_agent's),
    or ``None`` where they cannot be told (it takes ``**kwargs``, or has no signature)."""
    import inspect

    try:
        signature = inspect.signature(cls)
    except (TypeError, ValueError):
        return None
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in signature.parameters.values()):
        return None
    return [name for name, p in signature.parameters.items()
            if p.kind in kinds and name != "seed"]


def _check_params(spec: str, cls: Any, params: dict[str, Any]) -> None:
    """``ValueError`` naming the agent and its parameters for a parameter its constructor
    does not take, and for ``seed`` (``greedy:seed=3`` said Python's "got multiple values
    for keyword argument 'seed'")."""
    allowed = _parameters(cls)
    head = spec.partition(":")[0]
    name = head if head in BUILTIN else _name(cls)
    listed = "" if allowed is None else (
        f"; {name} takes " + (", ".join(allowed) if allowed else "no parameters"))
    if "seed" in params:
        raise ValueError(f"agent spec {spec!r}: bad parameters: seed is not a spec parameter "
                         "(the command's --seed, or make_agent(spec, seed=...), seeds the "
                         f"agent){listed}")
    if allowed is None:
        return
    unknown = [key for key in params if key not in allowed]
    if unknown:
        raise ValueError(f"agent spec {spec!r}: bad parameters: {name} has no parameter "
                         f"{unknown[0]!r}{listed}")


def make_agent(spec: str, seed: int | None = None) -> Agent:
    """Build the agent a spec names, seeded with ``seed``; a parameter its class does not
    take is a ``ValueError`` naming the agent and listing its parameters."""
    cls, params = resolve_spec(spec)
    if not callable(cls):
        raise ValueError(f"agent spec {spec!r} names {_quote(cls)}, which is not a class")
    _check_params(spec, cls, params)
    try:
        agent = cls(seed=seed, **params)
    except ValueError as err:  # the agent's own check of its parameters (or its file)
        raise ValueError(f"agent spec {spec!r}: {err}") from None
    except TypeError as err:
        raise ValueError(f"agent spec {spec!r}: bad parameters ({err})") from None
    except ImportError as err:  # an agent whose optional extra is not installed
        raise ValueError(f"agent spec {spec!r}: {err}") from None
    except Exception as err:  # a user agent whose constructor fails
        raise ValueError(f"agent spec {spec!r}: building it failed with "
                         f"{type(err).__name__}: {_first_line(err)}") from None
    if not callable(getattr(agent, "act", None)):  # collections:OrderedDict builds, and is no agent
        raise ValueError(f"agent spec {spec!r} names {_name(cls)}, which is not an agent: it has "
                         "no act(view) method (see agents.base.Agent)")
    return agent


def check_spec(spec: str, rules: Any) -> Agent:
    """Build the agent ``spec`` names and check that it can play under ``rules`` (a
    :class:`~dominoes_env.core.RuleConfig`): an agent with a ``check_rules(rules)`` method (the
    PPO agent: is there a policy for this table?) is asked. ``ValueError`` naming the spec if it
    cannot; commands call this for every spec before anything is written or played."""
    from dominoes_env.core import RuleConfig

    if not isinstance(rules, RuleConfig):  # None skipped the check of a policy's table
        raise TypeError(f"rules must be a RuleConfig, got {short_repr(rules)}")
    agent = make_agent(spec, seed=0)
    check = getattr(agent, "check_rules", None)
    if callable(check):
        try:
            check(rules)
        except ValueError as err:
            raise ValueError(f"agent spec {spec!r} cannot play these rules: {err}") from None
        except Exception as err:
            raise ValueError(f"agent spec {spec!r}: check_rules failed with "
                             f"{type(err).__name__}: {_first_line(err)}") from None
    return agent


def repeated(items, rules: Any = None) -> list[str]:
    """The entries of ``items`` given more than once, sorted: a table of agents, a panel or a
    benchmark row may not hold one agent twice (two rows of one agent, told apart by nothing).
    Specs are compared as agents (:func:`same_agent_key`, with ``rules`` where the table is
    known): ``search:sims=5`` and ``search:sims=05`` played one agent against itself.

    >>> repeated(["search", "greedy", "search"])
    ['search']
    >>> repeated(["search:sims=5", "search:sims=05"])
    ['search:sims=05', 'search:sims=5']

    A repeated spec that its agent refuses is that agent's ``ValueError`` (``sims=5.0`` is
    the number of ``sims=5``, and no count of simulations): "given twice" sent the user to
    drop a spec that could not play anyway.

    >>> repeated(["search:sims=5", "search:sims=5.0"])
    Traceback (most recent call last):
    ...
    ValueError: agent spec 'search:sims=5.0': sims=5.0 must be an integer, not float
    """
    items = list(items)
    keys = [_counted(same_agent_key(x, rules) if isinstance(x, str) else x) for x in items]
    # counted once each (keys.count(key) per item took 22 s for 20,000 agents)
    agents, spellings = Counter(keys), Counter(map(_counted, items))
    key_of = dict(zip(map(_counted, items), keys, strict=True))
    twice = sorted({x for x, key in zip(items, keys, strict=True) if agents[key] > 1})
    for spec in twice:  # spelt two ways: its own error first (the same text twice is only that)
        if isinstance(spec, str) and spellings[spec] < agents[key_of[spec]]:
            make_agent(spec, seed=0)
    return twice


def _counted(item: Any) -> Any:
    """``item`` as a key to count it by: itself, or for an unhashable one (a list given as a
    spec) its ``repr`` (equal lists, one key)."""
    try:
        hash(item)
    except TypeError:
        return ("unhashable", repr(item))
    return item
