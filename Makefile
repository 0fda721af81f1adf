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

# The suite runs in parallel, one pytest-xdist worker per core (CI has 2).
test: $(STAMP)
	$(PY) -m pytest -q -n auto

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

# RV32 builds (issue 11 item 4): every example's generated code, the basic kernels and Gap.h
# compiled for rv32imc as strict C99, warning-free; .text per example (bench/results/rv32.json).
# Installs Debian's cross compiler and picolibc when missing (as root; otherwise says how).
.PHONY: rv32
RV32_PKGS := gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf
rv32: $(STAMP)
	@cc=$${AUTOTILER_RV32_CC:-riscv64-unknown-elf-gcc}; \
	if ! command -v $$cc >/dev/null 2>&1 || ! echo '#include <stdio.h>' | \
	    $$cc -march=rv32imc -mabi=ilp32 --specs=picolibc.specs -E -x c - >/dev/null 2>&1; then \
		if [ "$$(id -u)" = 0 ]; then \
			apt-get update -qq && apt-get install -y -qq $(RV32_PKGS) || exit 1; \
		else \
			echo "rv32: $$cc or picolibc is missing; install them with: sudo apt-get install $(RV32_PKGS)"; exit 2; \
		fi; \
	fi
	$(PY) bench/rv32.py

# Calibration on GVSoC (issue 11 item 3): the micro-benchmarks (bench/results/gvsoc_micro.json),
# then every example kernel and MNIST layer at several budgets on the model as first calibrated
# (one DMA queue, Cost= as written: calibration_before.json), the compute fit and its out-of-sample
# check (calibration_fit.json, --holdout), and on the current pulp_open model
# (calibration.json); then the SQ8 TFLM kernels (issue 25 item 3): their layers' fit and its
# out-of-sample check (calibration_sq8.json), the four imported networks node by node
# (calibration_networks.json/.md) and the tiler's candidates of three layers (calibration_ranking.json).
# Needs GVSoC: ../shared/tools/gvsoc/setup.sh builds it (about 10 minutes).
.PHONY: calibrate
GVSOC_ENV ?= $(HOME)/.cache/gvsoc/env.sh
calibrate: $(STAMP)
	@if [ ! -f "$(GVSOC_ENV)" ]; then \
		echo "calibrate: GVSoC is not installed ($(GVSOC_ENV) missing): run ../shared/tools/gvsoc/setup.sh"; exit 2; \
	fi
	bash -c 'source "$(GVSOC_ENV)" >/dev/null && \
		$(CURDIR)/$(PY) bench/gvsoc_micro.py && \
		$(CURDIR)/$(PY) bench/calibrate.py --before --json bench/results/calibration_before.json && \
		$(CURDIR)/$(PY) bench/calibrate.py --fit-compute --json bench/results/calibration_fit.json && \
		$(CURDIR)/$(PY) bench/calibrate.py --holdout bench/results/calibration_fit.json && \
		$(CURDIR)/$(PY) bench/calibrate.py --compare bench/results/calibration_before.json --json bench/results/calibration.json && \
		$(CURDIR)/$(PY) bench/calibrate.py --fit-sq8 && \
		$(CURDIR)/$(PY) bench/calibrate.py --networks --ranking'
