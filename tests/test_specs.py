"""Agent specs: the strings command lines and configs use to name agents."""

from __future__ import annotations

import pytest

from agents import RandomAgent, check_spec, make_agent, resolve_spec
from agents.greedy import GreedyAgent
from agents.ppo import PPOAgent, random_policy_npz
from agents.search import DEFAULT_SIMS, SearchAgent
from dominoes_env.core import MatchState, RuleConfig


def test_builtin_names():
    assert type(make_agent("random")) is RandomAgent
    assert type(make_agent("greedy")) is GreedyAgent
    search = make_agent("search")
    assert type(search) is SearchAgent and search.sims == DEFAULT_SIMS and search.time_ms is None
    ppo = make_agent("ppo")
    assert type(ppo) is PPOAgent and ppo.path is None and ppo.policy is None  # loaded lazily


def test_parameters():
    agent = make_agent("search:sims=400", seed=3)
    assert agent.sims == 400
    agent = make_agent("search:time_ms=12.5,epsilon=0.1")
    assert (agent.time_ms, agent.epsilon) == (12.5, 0.1)
    with pytest.raises(ValueError, match="has spaces around it"):  # ' random' was a second row
        make_agent(" search:time_ms=12.5,epsilon=0.1 ")
    cls, params = resolve_spec("search:sims=400,min_per_move=2")
    assert cls is SearchAgent and params == {"sims": 400, "min_per_move": 2}


def test_ppo_path_and_options(tmp_path):
    path = tmp_path / "policy.npz"
    random_policy_npz(path, RuleConfig(), hidden=(8,))
    agent = make_agent(f"ppo:{path}", seed=1)
    assert agent.path == path and agent.policy is not None and agent.deterministic
    agent = make_agent(f"ppo:{path},deterministic=false")
    assert not agent.deterministic
    assert resolve_spec(f"ppo:{path}")[1] == {"path": str(path)}
    assert resolve_spec("ppo:deterministic=true")[1] == {"deterministic": True}
    match = MatchState(seed=0)
    assert agent.act(match.view(match.turn)) in match.legal_actions()


def test_missing_ppo_files_are_clear_errors(tmp_path, monkeypatch):
    with pytest.raises(ValueError, match="missing.npz': no such file"):
        make_agent(f"ppo:{tmp_path / 'missing.npz'}")
    import agents.ppo as ppo_module

    monkeypatch.setattr(ppo_module, "POLICY_DIR", tmp_path)
    agent = make_agent("ppo")
    match = MatchState(RuleConfig(num_players=3), seed=0)
    with pytest.raises(ValueError, match="no shipped PPO policy exists for 3 players"):
        agent.act(match.view(match.turn))


def test_ppo_policy_for_other_rules_is_refused(tmp_path):
    path = tmp_path / "p2.npz"
    random_policy_npz(path, RuleConfig(num_players=2), hidden=(8,))
    agent = make_agent(f"ppo:{path}")
    match = MatchState(RuleConfig(num_players=3), seed=0)
    with pytest.raises(ValueError, match="was trained for 2 players; these rules are 3 players"):
        agent.act(match.view(match.turn))
    match = MatchState(RuleConfig(num_players=2, max_pip=9), seed=0)  # its table, other tiles
    with pytest.raises(ValueError, match="takes 234 inputs"):
        agent.act(match.view(match.turn))


def test_user_agent_class():
    agent = make_agent("agents.greedy:GreedyAgent", seed=2)
    assert type(agent) is GreedyAgent
    agent = make_agent("agents.search:SearchAgent:sims=7")
    assert type(agent) is SearchAgent and agent.sims == 7


def test_top_level_module_agent(tmp_path, monkeypatch):
    (tmp_path / "my_dominoes_agent.py").write_text(
        "from agents import Agent\n"
        "class MyAgent(Agent):\n"
        "    name = 'mine'\n"
        "    def __init__(self, seed=None, bias=0):\n"
        "        super().__init__(seed)\n"
        "        self.bias = bias\n"
        "    def act(self, view):\n"
        "        return min(view.legal)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    agent = make_agent("my_dominoes_agent:MyAgent", seed=1)
    assert type(agent).__name__ == "MyAgent" and agent.bias == 0
    assert make_agent("my_dominoes_agent:MyAgent:bias=3").bias == 3
    match = MatchState(seed=0)
    assert agent.act(match.view(match.turn)) == min(match.legal_actions())


def test_unknown_spec_lists_the_known_names():
    with pytest.raises(ValueError) as err:
        make_agent("alphazero")
    message = str(err.value)
    assert "unknown agent spec 'alphazero'" in message
    assert "known names: best, greedy, guided, ismcts, ppo, random, search" in message
    assert "module.path:ClassName" in message


@pytest.mark.parametrize("spec, fragment", [
    ("", "non-empty string"),
    ("search:sims", "bad parameter 'sims'"),
    ("search:sims=0", "sims=0 is out of range; allowed: 1[.][.]1000000"),
    ("search:depth=3", "bad parameters"),
    ("no_such_module.x:Agent", "cannot import module 'no_such_module.x'"),
    ("agents.greedy:NoSuchAgent", "has no 'NoSuchAgent'"),
    ("no_such_top_level_module:Agent", "cannot import module 'no_such_top_level_module'"),
    ("agents.greedy:Greedy Agent", "is not a class name"),
    ("ismcts:sims=0", "sims=0 is out of range; allowed: 2[.][.]1000000"),
    ("ppo:", "ends in ':' with nothing after it"),  # quietly meant the shipped policy
    # a user class with a trailing ':' was accepted where 'random:' is refused
    ("agents.greedy:GreedyAgent:", "^agent spec 'agents.greedy:GreedyAgent:' ends in ':' with "
                                   "nothing after it; write 'agents.greedy:GreedyAgent' alone, "
                                   "or agents.greedy:GreedyAgent:key=value$"),
    # said "write 'agents.greedy' alone", an unknown agent spec
    ("agents.greedy:", "nothing after it; write agents.greedy:ClassName [(]a user agent class"),
    ("search: ", "has spaces around it; write 'search:'"),
    ("collections:OrderedDict", "which is not an agent: it has no act"),  # built, then passed
    ("math:pi", "which is not a class"),
    # an empty policy path was the working directory: "policy file '.': not a regular file"
    ("ppo:,", "path='' is empty"),
    ("guided:policy=", "policy='' is empty"),
    # an empty parameter was dropped: these ran as search:sims=5 and search
    ("search:sims=5,,", "^agent spec 'search:sims=5,,' has an empty parameter"),
    ("search:,", "has an empty parameter"),
    ("search:,sims=5", "has an empty parameter"),
    ("ppo:agents/policies/ppo_2p.npz,", "has an empty parameter"),
    # 'sims= 5' ran as sims=5 where 'sims=5 ' (the spec's own end) was refused
    ("search:sims= 5", "^agent spec 'search:sims= 5': the value of 'sims' has spaces around "
                       "it; write sims=5$"),
    ("search:sims=5 ,epsilon=0", "the value of 'sims' has spaces around it"),
])
def test_bad_specs(spec, fragment):
    with pytest.raises(ValueError, match=fragment):
        make_agent(spec)


@pytest.mark.parametrize("spec", ["ppo:", "collections:OrderedDict", "math:pi"])
def test_check_spec_refuses_what_is_not_an_agent_before_anything_is_played(spec):
    with pytest.raises(ValueError, match=f"agent spec {spec!r}"):
        check_spec(spec, RuleConfig())


@pytest.mark.parametrize("spec, message", [
    ("search:sims=100000000000000000000", "sims=100000000000000000000 is out of range; "
                                          "allowed: 1..1000000"),
    ("guided:sims=1000001", "sims=1000001 is out of range; allowed: 1..1000000"),
    ("search:time_ms=1e12", "time_ms=1000000000000.0 is out of range; allowed: > 0 and <= "
                            "600000.0"),
    ("guided:time_ms=600001", "time_ms=600001.0 is out of range"),
])
def test_a_search_budget_that_would_never_end_is_refused(spec, message):
    """``search:sims=10**20`` was accepted, and a decision then never ended (``play`` has no
    move time limit): the budget is capped at a million rollouts or ten minutes."""
    with pytest.raises(ValueError, match=message.replace(".", "[.]")):
        make_agent(spec)
    assert make_agent("search:sims=1000000").sims == 1_000_000


@pytest.mark.parametrize("source, error", [
    ("def f(:\n", "SyntaxError: invalid syntax"),
    ("raise RuntimeError('import boom\\nsecond line')\n", "RuntimeError: import boom"),
])
def test_a_module_that_fails_on_import_is_one_line_naming_the_spec(tmp_path, monkeypatch,
                                                                   source, error):
    # only an ImportError was caught: a user's module with a SyntaxError, or one that raised
    # at import, went through as a 47-line traceback of the program
    name = f"broken_agent_module_{len(source)}"
    (tmp_path / f"{name}.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ValueError) as err:
        make_agent(f"{name}:A")
    message = str(err.value)
    assert message.startswith(f"agent spec '{name}:A': importing module '{name}' failed with "
                              f"{error}") and "\n" not in message, message


@pytest.mark.parametrize("spec", ["sys:modules", "os:environ"])
def test_what_a_spec_names_is_quoted_short(spec):
    # sys:modules printed the repr of every module loaded: a 34,509-byte error line
    with pytest.raises(ValueError, match="which is not a") as err:
        make_agent(spec)
    assert len(str(err.value)) < 400


def test_a_user_agent_whose_constructor_fails_is_quoted_short(tmp_path, monkeypatch):
    (tmp_path / "long_failing_agent.py").write_text(
        "class A:\n"
        "    def __init__(self, seed=None):\n"
        "        raise RuntimeError('x' * 100000 + '\\n' + 'y' * 100000)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ValueError, match="building it failed with RuntimeError: xxx") as err:
        make_agent("long_failing_agent:A")
    assert len(str(err.value)) < 400 and "y" not in str(err.value)


def test_an_object_given_as_an_agent_is_quoted_short():
    from agents.arena import play_match

    with pytest.raises(TypeError, match="agent at seat 0 .* has no act") as err:
        play_match([list(range(100000)), "random"])
    assert len(str(err.value)) < 200


@pytest.mark.parametrize("spec, fragment", [
    ("greedy:seed=3", "seed is not a spec parameter (the command's --seed, or "
                      "make_agent(spec, seed=...), seeds the agent); greedy takes no parameters"),
    ("agents.base:RandomAgent:seed=5", "seed is not a spec parameter"),
    ("greedy:x=1", "greedy has no parameter 'x'; greedy takes no parameters"),
    ("search:depth=3", "search has no parameter 'depth'; search takes sims, time_ms, "),
    ("ppo:p.npz,seed=2", "seed is not a spec parameter (the command's --seed, or "
                         "make_agent(spec, seed=...), seeds the agent); ppo takes path, "
                         "deterministic"),
])  # fmt: skip
def test_a_parameter_the_agent_does_not_take_names_the_agent_and_its_parameters(spec,
                                                                                fragment):
    """``greedy:seed=3`` said Python's "GreedyAgent() got multiple values for keyword argument
    'seed'", and ``search:depth=3`` "SearchAgent.__init__() got an unexpected keyword
    argument 'depth'", naming neither make_agent's seed nor what the agent takes."""
    with pytest.raises(ValueError) as err:
        make_agent(spec)
    assert str(err.value) == f"agent spec {spec!r}: bad parameters: {fragment}" \
        or fragment in str(err.value) and "got " not in str(err.value), str(err.value)


def test_policy_files_with_the_same_bytes_are_one_agent(tmp_path):
    """``--agents ppo ppo:copy_2p.npz`` (a byte copy of the shipped policy) played one policy
    against itself as two agents; a policy file is compared by its bytes."""
    import shutil

    from agents.ppo import shipped_policy_path
    from agents.specs import repeated

    rules = RuleConfig()
    shutil.copy(shipped_policy_path(rules), tmp_path / "copy.npz")
    copy = f"ppo:{tmp_path / 'copy.npz'}"
    assert repeated(["ppo", copy], rules) == sorted(["ppo", copy])
    random_policy_npz(tmp_path / "a.npz", rules, hidden=(8,), seed=1, obs_version=2)
    shutil.copy(tmp_path / "a.npz", tmp_path / "b.npz")
    specs = [f"ppo:{tmp_path / 'a.npz'}", f"ppo:{tmp_path / 'b.npz'}"]
    assert repeated(specs) == specs
    guided = [f"guided:sims=2,policy={tmp_path / 'a.npz'}",
              f"guided:policy={tmp_path / 'b.npz'},sims=2"]
    assert repeated(guided) == sorted(guided)
    random_policy_npz(tmp_path / "b.npz", rules, hidden=(8,), seed=2, obs_version=2)  # others
    assert repeated(specs) == [] and repeated(["ppo", f"ppo:{tmp_path / 'b.npz'}"], rules) == []


@pytest.mark.timeout(15)
def test_repeated_counts_each_spec_once():
    """``repeated`` counted each spec's key among all the others (``keys.count``): 20,000
    specs took 22 s. It still finds a spec given twice, spelt either way, among them."""
    from agents.specs import repeated

    specs = ["random", "greedy"] + [f"search:sims={i}" for i in range(1, 19_999)]
    assert repeated(specs) == []
    assert repeated([*specs, "search:sims=05", "greedy"]) == ["greedy", "search:sims=05",
                                                              "search:sims=5"]


def test_every_builtin_agent_class_is_a_name_of_the_package_imported_on_first_use():
    """``agents``' docstring said "PPOAgent is imported on first use", but ``agents.PPOAgent``
    was an AttributeError, and it listed four of the seven built-in specs. Every built-in
    spec's class is now a name of the package (the heavier ones imported when first read),
    and the docstring names every spec."""
    import subprocess
    import sys
    from pathlib import Path

    import agents
    from agents.specs import BUILTIN

    for spec, target in BUILTIN.items():
        module, _, name = target.partition(":")
        assert getattr(agents, name) is getattr(__import__(module, fromlist=[name]), name)
        assert name in agents.__all__ and name in dir(agents)
        assert f"``{spec}``" in agents.__doc__, spec
    with pytest.raises(AttributeError, match="no attribute 'NoSuchAgent'"):
        agents.NoSuchAgent  # noqa: B018
    # importing the package stays cheap: the lazy classes' modules come when read
    code = ("import sys, agents\n"
            "heavy = {'torch', 'jax', 'pyspiel', 'agents.ppo', 'agents.guided', 'agents.ismcts'}\n"
            "print(sorted(heavy & set(sys.modules)))\n"
            "agents.PPOAgent\n"
            "print('agents.ppo' in sys.modules, 'torch' in sys.modules)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parents[1], timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["[]", "True False"], proc.stdout


@pytest.mark.parametrize("path, named", [
    ("runs/a b/policy.npz", True), ("runs/x:y/policy.npz", True), ("run /policy.npz", True),
    ("/tmp/x/c,d/run/eval_policy.npz", False), ("runs/lr=3e-4/policy.npz", False),
    ("p.npz,", False), (" run/policy.npz", False), ("12", False), ("true", False),
    ("ppo", False), ("", False), (b"p.npz", False), (None, False),
])  # fmt: skip
def test_spec_safe_path_says_whether_a_spec_names_the_file_itself(path, named):
    """A run folder with ',' or '=' in its path broke the trainers' evaluation of
    ``ppo:OUT/eval_policy.npz`` after the run had started; :func:`spec_safe_path` tells
    beforehand whether ``ppo:PATH`` and ``guided:policy=PATH`` parse back to the path."""
    from agents.specs import parse_spec, spec_safe_path

    assert spec_safe_path(path) is named
    if named:
        assert parse_spec(f"ppo:{path}")[1] == {"path": path}
        assert parse_spec(f"guided:policy={path}")[1] == {"policy": path}


def test_check_spec_path_refuses_a_folder_or_file_no_spec_can_name(tmp_path):
    from agents.specs import check_spec_path
    from dominoes_env.cli_support import RefusedError

    check_spec_path("--out", tmp_path / "a b", folder=True)
    check_spec_path("--out", "run ", folder=True)  # run /policy.npz: named as it is
    with pytest.raises(RefusedError, match=r"^--out '/tmp/x/c,d/run': a policy in it could not "
                       r"be named in an agent spec \(',' and '=' separate a spec's parameters\); "
                       r"choose a folder without them$"):
        check_spec_path("--out", "/tmp/x/c,d/run", folder=True)
    with pytest.raises(ValueError, match=r"^--out ' run': .*spaces around a path"):
        check_spec_path("--out", " run", folder=True)
    with pytest.raises(ValueError, match=r"^--init 'a=b.npz': it could not be named"):
        check_spec_path("--init", "a=b.npz")
    with pytest.raises(ValueError, match=r"^--init '12': .* a number.*\(\./NAME\)$"):
        check_spec_path("--init", "12")
    assert list(tmp_path.iterdir()) == []  # nothing made
