# Two entry points a fresh machine needs (see README): `make run` and `make test`.
# Both build .venv first; the stamp re-installs only when pyproject.toml changes.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml Makefile | sha256sum | cut -c1-16)
EXTRAS := embedded,sweep,notebooks,dev
# A portable llama.cpp: by default llama-cpp-python compiles for the build machine's CPU
# (GGML_NATIVE), so two x86-64 machines run different SIMD kernels and SmolLM2's greedy
# decode diverges. We fix the instruction set to the x86-64 baseline every machine here has
# (AVX2, FMA, F16C, BMI2; no AVX-512) and build the wheel into a wheelhouse keyed by version
# and flags, so pip's own cache can never hand back a native build. See docs/reproducibility.md.
LLAMA_VERSION := 0.3.36
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_SSE42=ON -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DGGML_AVX_VNNI=OFF -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_BF16=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF -DGGML_OPENMP=ON
WHEELHOUSE := $(HOME)/.cache/place/wheels/llama-$(LLAMA_VERSION)-$(shell echo '$(LLAMA_CMAKE_ARGS)' | sha256sum | cut -c1-12)

.PHONY: setup run test lint clean-venv slurm

setup: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# torch first, pinned: the CPU wheel; any other spec pulls a multi-GB CUDA build.
	$(BIN)/python -m pip install --quiet torch==2.13.0
	ls $(WHEELHOUSE)/llama_cpp_python-$(LLAMA_VERSION)-*.whl >/dev/null 2>&1 || \
	  CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" FORCE_CMAKE=1 $(BIN)/python -m pip wheel --quiet \
	    --no-deps --no-cache-dir --no-binary llama-cpp-python -w $(WHEELHOUSE) \
	    llama-cpp-python==$(LLAMA_VERSION)
	$(BIN)/python -m pip install --quiet --force-reinstall --no-deps \
	  $(WHEELHOUSE)/llama_cpp_python-$(LLAMA_VERSION)-*.whl
	$(BIN)/python -m pip install --quiet -e ".[$(EXTRAS)]"
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

run: setup
	$(BIN)/place run $(ARGS)

# SLURM's daemons and munge for the one-node cluster of the SLURM tests, and Chromium with its
# driver for the viewer's browser test: installed when the machine is root with apt (CI is),
# else the scripts say what is missing (docs/sweeps.md, docs/viewer.md).
slurm:
	bash tests/slurm/install.sh
	bash tests/slurm/install-chromium.sh

# ruff, then the type checker (settings in pyproject.toml [tool.mypy]), then the whole suite.
test: setup slurm
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/python -m pytest $(PYTEST_ARGS)

lint: setup
	$(BIN)/ruff check .
	$(BIN)/mypy

clean-venv:
	rm -rf $(VENV)
