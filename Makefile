# The two commands: `make train` and `make test`. Everything they need is installed on first use.
VENV   ?= $(CURDIR)/.venv
PY     := $(VENV)/bin/python
BUILD  ?= $(CURDIR)/build
CONFIG ?= configs/cartpole_ppo.yaml
JOBS   ?= $(shell nproc)

.PHONY: all deps configure build train test bench clean

all: build

deps: $(VENV)/.deps-ok
$(VENV)/.deps-ok: scripts/install-deps.sh
	bash scripts/install-deps.sh
	touch $@

configure: deps
	@if [ ! -f $(BUILD)/build.ninja ]; then \
	  cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release \
	    -DCMAKE_PREFIX_PATH="$$($(PY) -c 'import torch; print(torch.utils.cmake_prefix_path)')" \
	    -DPython_EXECUTABLE=$(PY) -DMYRIAD_VENV_PYTHON=$(PY) -DMYRIAD_PYTHON=ON; \
	fi

build: configure
	cmake --build $(BUILD) -j $(JOBS)

train: build
	$(BUILD)/tools/myriad train $(CONFIG)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

bench: build
	bash scripts/bench.sh

clean:
	rm -rf $(BUILD)
