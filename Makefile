VENV := .venv
PY := $(VENV)/bin/python
EXTRAS := tournament,train,notebooks,openspiel,ray,rllib,tianshou,bench,jax,docs,dev
STAMP := $(VENV)/.installed

# One recipe at a time, even under `make -j`: `demo` and `test` may both create and fill .venv
# (the suite runs its tests on two cores by itself)
.NOTPARALLEL:

.PHONY: install demo test test-under-load bench lint clean browser docs docs-notebooks mutation

install: $(STAMP)

# Install torch first (pinned to the local CPU wheel), then the project itself.
$(STAMP): pyproject.toml constraints.txt
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --upgrade pip
	$(PY) -m pip install -c constraints.txt torch==2.13.0
	$(PY) -m pip install -c constraints.txt -e ".[$(EXTRAS)]"
	touch $@

# The browser test drives Debian's Chromium through Playwright (never `playwright install`:
# that downloads a browser build of its own). Installed once when missing; we run as root.
CHROMIUM := /usr/bin/chromium
browser: $(CHROMIUM)
$(CHROMIUM):
	command -v chromium >/dev/null || (apt-get update && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium)

# `make demo` installs only what a tournament needs (no torch, JAX, Ray or Jupyter), unless
# `make install` / `make test` already installed everything since the last change of the
# requirements; `make test` adds the rest.
DEMO_STAMP := $(VENV)/.installed-demo
$(DEMO_STAMP): pyproject.toml constraints.txt
	if [ $(STAMP) -nt pyproject.toml ] && [ $(STAMP) -nt constraints.txt ]; then :; else \
		{ test -x $(PY) || python3 -m venv $(VENV); } && \
		$(PY) -m pip install --upgrade pip && \
		$(PY) -m pip install -c constraints.txt -e ".[tournament]"; fi
	touch $@

demo: $(DEMO_STAMP)
	$(PY) -m experiments.demo --overwrite

test: $(STAMP) $(CHROMIUM)
	$(PY) -m ruff check .
	$(VENV)/bin/lint-imports
	$(MKDOCS) build --strict --quiet --site-dir build/site
	$(PY) -m pytest -n 2 -m "not jax"
	$(PY) -m pytest -n 2 -m jax   # apart: no fork after JAX has started (conftest.py)

# `make test` on a busy machine, as a user's laptop often is: LOAD processes that spin on the
# CPU beside the suite (a shell loop each: no stress-ng needed). They are stopped when the suite
# ends, fails or is interrupted, and each stops by itself once this recipe's shell is gone (even
# killed). The suite must pass this way (docs/testing.md).
LOAD ?= 8
test-under-load: $(STAMP) $(CHROMIUM)
	@pids=""; \
	trap 'kill $$pids 2>/dev/null' EXIT; \
	trap 'exit 129' HUP; trap 'exit 130' INT; trap 'exit 141' PIPE; trap 'exit 143' TERM; \
	for i in $$(seq $(LOAD)); do \
		sh -c "while kill -0 $$$$ 2>/dev/null; do :; done" & pids="$$pids $$!"; \
	done; \
	echo "$(LOAD) CPU burners (pids$$pids); load average $$(cut -d' ' -f1-3 /proc/loadavg)"; \
	$(MAKE) test; status=$$?; \
	echo "load average at the end: $$(cut -d' ' -f1-3 /proc/loadavg)"; \
	exit $$status

# The documentation site (into site/). It shows the notebooks as stored in docs/notebooks/,
# without running them: `make docs-notebooks` runs notebooks/ and stores the executed copies.
MKDOCS := NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs
docs: $(STAMP)
	$(MKDOCS) build --strict

docs-notebooks: $(STAMP)
	$(PY) -m experiments.docs_notebooks

bench: $(STAMP)
	$(PY) -m experiments.bench_engine
	$(PY) -m experiments.bench_env
	$(PY) -m experiments.bench_jax
	$(PY) -m experiments.bench_jax_pieces
	$(PY) -m experiments.bench_agents random greedy search ppo --positions 400
	$(PY) -m experiments.bench_training

lint: $(STAMP)
	$(PY) -m ruff check .

# Mutation testing of the game core (not part of `make test`: hours on one shared core).
# mutmut mutates dominoes_env/core/ on a copy under mutants/ and runs the core's fast tests
# against each mutant ([tool.mutmut] in pyproject.toml); then it lists the mutants no test
# killed (`$(PY) -m mutmut show NAME` shows one). Figures: docs/results.md.
mutation: $(STAMP)
	nice -n 15 $(PY) -m mutmut run --max-children 1
	$(PY) -m mutmut results

clean:
	rm -rf build dist site *.egg-info .pytest_cache .ruff_cache .hypothesis mutants
	find . -path ./$(VENV) -prune -o -type d -name __pycache__ -exec rm -rf {} +
