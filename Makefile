# evalsuite: `make demo` runs the main job end to end, `make test` runs every check.
# Both build .venv from pyproject.toml first (idempotent: rebuilt only when pyproject or this
# Makefile changes).

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install demo test lint typecheck unit slow bench clean

install: $(STAMP)

# the last step installs Every Eval Ever's schema, types and validator (ingest/export --format
# eee): the package declares Python >= 3.12 and heavy dependencies its validator does not use,
# so it is installed without them on 3.11 (docs/interchange.md)
$(STAMP): pyproject.toml Makefile
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -qq --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install -qq --disable-pip-version-check -e '.[dev]'
	$(BIN)/python -m pip install -qq --disable-pip-version-check --no-deps \
		--ignore-requires-python every-eval-ever==0.3.0
	@touch $(STAMP)

demo: install
	@$(BIN)/python scripts/demo.py

lint: install
	$(BIN)/ruff check evalsuite tasks tests benchmarks scripts
	$(BIN)/ruff format --check evalsuite tasks tests benchmarks scripts
	$(BIN)/lint-imports

typecheck: install
	$(BIN)/mypy

# tests run on two processes (pytest-xdist): CI has two cores
unit: install
	$(BIN)/pytest -q -n 2 --dist worksteal

# the checks and the tests run side by side: mypy's one process fills the gaps of pytest's
# two (--output-sync keeps each target's output together, printed as it ends)
test: install
	@$(MAKE) --no-print-directory --jobs=3 --output-sync=target lint typecheck unit

slow: install
	$(BIN)/pytest -q -n 2 --dist worksteal --runslow -m slow

bench: install
	@for b in benchmarks/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
