# The two set-up commands of README.md: `make run` and `make test` (and `make bench`).
# Each creates .venv and installs what is missing, system packages included, on first use.
VENV := .venv
PYTHON := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test bench clean

$(STAMP): pyproject.toml scripts/bootstrap.sh
	scripts/bootstrap.sh
	touch $@

run: $(STAMP)
	scripts/run-viewer.sh $(ARGS)

test: $(STAMP)
	$(VENV)/bin/ruff check terrainview tests bench
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports --no-cache
	$(PYTHON) -m pytest -q $(PYTEST_ARGS)

bench: $(STAMP)
	$(PYTHON) -m bench

clean:
	rm -rf $(VENV) dist build bench/build
