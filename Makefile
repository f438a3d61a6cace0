# The two commands: `make train` and `make test`. Everything they need is installed on first use.
VENV   ?= $(CURDIR)/.venv
PY     := $(VENV)/bin/python
BUILD  ?= $(CURDIR)/build
CONFIG ?= configs/cartpole_ppo.yaml
JOBS   ?= $(shell nproc)

# CUDA. `make test` compiles the CUDA side wherever nvcc is installed, GPU or not, so the tests
# catch CUDA breakage; without a GPU it compiles for sm_90 alone (a compile check). `make train`
# compiles it only where a GPU answers (nvidia-smi). Either obeys MYRIAD_CUDA=ON|OFF|AUTO and
# CUDA_ARCHS (e.g. CUDA_ARCHS="80-real 90"). A build folder keeps the CUDA choice it was first
# configured with; `make clean` starts over.
HAVE_GPU   := $(shell nvidia-smi -L >/dev/null 2>&1 && echo 1)
TRAIN_CUDA := $(or $(MYRIAD_CUDA),$(if $(HAVE_GPU),AUTO,OFF))
TEST_CUDA  := $(or $(MYRIAD_CUDA),AUTO)
CUDA_ARCHS ?= $(if $(HAVE_GPU),,90)

.PHONY: all deps deps-train configure build train test bench clean

all: build

# Everything (tests, peers, browser) / only what building `myriad` needs.
deps: $(VENV)/.deps-ok
deps-train: $(VENV)/.deps-train-ok
$(VENV)/.deps-ok: scripts/install-deps.sh
	bash scripts/install-deps.sh
	touch $@ $(VENV)/.deps-train-ok
$(VENV)/.deps-train-ok: scripts/install-deps.sh
	MYRIAD_DEPS=train bash scripts/install-deps.sh
	touch $@

# configure(cuda, tests and Python module): configures $(BUILD) once; a later call may switch
# the tests and the Python module on (MYRIAD_TESTS, MYRIAD_PYTHON), never the CUDA choice.
define configure
	@if [ ! -f $(BUILD)/build.ninja ]; then \
	  cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release \
	    -DCMAKE_PREFIX_PATH="$$($(PY) -c 'import torch; print(torch.utils.cmake_prefix_path)')" \
	    -DPython_EXECUTABLE=$(PY) -DMYRIAD_VENV_PYTHON=$(PY) \
	    -DMYRIAD_TESTS=$(2) -DMYRIAD_PYTHON=$(2) \
	    -DMYRIAD_CUDA=$(1) \
	    $(if $(and $(CUDA_ARCHS),$(filter-out OFF,$(1))),"-DCMAKE_CUDA_ARCHITECTURES=$(CUDA_ARCHS)"); \
	elif [ "$(2)" = ON ] && grep -q '^MYRIAD_TESTS:BOOL=OFF' $(BUILD)/CMakeCache.txt; then \
	  cmake -S . -B $(BUILD) -DMYRIAD_TESTS=ON -DMYRIAD_PYTHON=ON; \
	fi
endef

configure: deps
	$(call configure,$(TEST_CUDA),ON)

build: configure
	cmake --build $(BUILD) -j $(JOBS)

# Training needs the `myriad` command only: no tests, no Python module.
train: deps-train
	$(call configure,$(TRAIN_CUDA),OFF)
	cmake --build $(BUILD) -j $(JOBS) --target myriad
	$(BUILD)/tools/myriad train $(CONFIG)

# OMP_WAIT_POLICY=PASSIVE: ctest runs JOBS tests at once, each stepping envs on all cores; an
# OpenMP thread that spins at a barrier while its partner waits for a core slows both (a
# 3.7 s test took 75 s beside another). Passive waiting sleeps instead: 63-65 s against 79-81 s
# for the OpenMP-heavy tests with pytest_cli, two rounds each (2026-12-05). Results do not
# depend on it.
test: build
	cd $(BUILD) && OMP_WAIT_POLICY=PASSIVE ctest --output-on-failure -j $(JOBS)

bench: build
	bash scripts/bench.sh

clean:
	rm -rf $(BUILD)
