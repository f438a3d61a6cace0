# The two commands: `make train` and `make test`. Everything they need is installed on first use.
VENV   ?= $(CURDIR)/.venv
PY     := $(VENV)/bin/python
BUILD  ?= $(CURDIR)/build
CONFIG ?= configs/cartpole_ppo.yaml
JOBS   ?= $(shell nproc)

# CUDA. `make test` compiles the CUDA side wherever nvcc is installed, GPU or not, so the tests
# catch CUDA breakage; without a GPU it compiles for sm_90 alone (a compile check). `make train`
# compiles it only where a GPU answers (nvidia-smi). Either obeys MYRIAD_CUDA=ON|OFF|AUTO and
# CUDA_ARCHS (e.g. CUDA_ARCHS="80-real 90"). A build folder keeps the choice it was first
# configured with; `make clean` starts over.
HAVE_GPU   := $(shell nvidia-smi -L >/dev/null 2>&1 && echo 1)
TRAIN_CUDA := $(or $(MYRIAD_CUDA),$(if $(HAVE_GPU),AUTO,OFF))
TEST_CUDA  := $(or $(MYRIAD_CUDA),AUTO)
CUDA_ARCHS ?= $(if $(HAVE_GPU),,90)

.PHONY: all deps configure build train test bench clean

all: build

deps: $(VENV)/.deps-ok
$(VENV)/.deps-ok: scripts/install-deps.sh
	bash scripts/install-deps.sh
	touch $@

# configure-cuda-%: configures $(BUILD) once, with MYRIAD_CUDA=%.
configure-cuda-%: deps
	@if [ ! -f $(BUILD)/build.ninja ]; then \
	  cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release \
	    -DCMAKE_PREFIX_PATH="$$($(PY) -c 'import torch; print(torch.utils.cmake_prefix_path)')" \
	    -DPython_EXECUTABLE=$(PY) -DMYRIAD_VENV_PYTHON=$(PY) -DMYRIAD_PYTHON=ON \
	    -DMYRIAD_CUDA=$* $(if $(CUDA_ARCHS),"-DCMAKE_CUDA_ARCHITECTURES=$(CUDA_ARCHS)"); \
	fi

configure: configure-cuda-$(TEST_CUDA)

build: configure
	cmake --build $(BUILD) -j $(JOBS)

# Training needs the `myriad` command only: no tests, no Python module.
train: configure-cuda-$(TRAIN_CUDA)
	cmake --build $(BUILD) -j $(JOBS) --target myriad
	$(BUILD)/tools/myriad train $(CONFIG)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

bench: build
	bash scripts/bench.sh

clean:
	rm -rf $(BUILD)
