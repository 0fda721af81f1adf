# Two entry points on a fresh machine: `make demo` and `make test`. Each creates .venv and
# installs what it needs first.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: demo test bench lint examples clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test]" ruff
	touch $(STAMP)

demo: $(STAMP)
	$(PY) examples/demo.py

test: $(STAMP)
	$(PY) -m pytest -q

bench: $(STAMP)
	$(PY) bench/run.py
	$(PY) bench/tiling.py
	$(PY) bench/cnn_baselines.py

lint: $(STAMP)
	$(VENV)/bin/ruff check autotiler host_harness tests examples bench

# Regenerate generated/ from every example model script (build output, not reviewed code).
examples: $(STAMP)
	for m in examples/*/model.py; do \
		d=generated/$$(basename $$(dirname $$m)); mkdir -p $$d; $(PY) $$m -o $$d -q || exit 1; \
	done

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache
