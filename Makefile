SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := .venv.stamp

# dartpy needs libGL/libX11; the tests validate SDF with libsdformat's `ign sdf -k`.
# The replay tests drive headless Chromium (test/viewer). The host cameras render
# with OpenGL through EGL on Mesa (libegl1, libgl1-mesa-dri; llvmpipe without a GPU).
SYSDEPS := libgl1 libx11-6 ignition-tools libsdformat12-12 libsdformat-dev sdformat-sdf ruby chromium libegl1 libgl1-mesa-dri

.PHONY: venv sysdeps demo test bench clean worlds docs-figures shim

venv: $(STAMP)

$(STAMP): pyproject.toml | sysdeps
	@if ! $(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' 2>/dev/null; then \
		echo "error: eels_gz needs Python >= 3.10, but '$(PYTHON)' is $$($(PYTHON) --version 2>&1 || echo 'not found')." >&2; \
		echo "       install a newer python3 or run: make venv PYTHON=/path/to/python3.10+" >&2; \
		exit 1; \
	fi
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade pip
	$(BIN)/python -m pip install -e '.[test]'
	$(BIN)/python -m eels_gz.warm
	@touch $@

sysdeps:
	@missing=""; \
	for p in $(SYSDEPS); do \
		dpkg -s "$$p" >/dev/null 2>&1 || missing="$$missing $$p"; \
	done; \
	if [ -z "$$missing" ]; then \
		echo "system packages present: $(SYSDEPS)"; \
	elif [ "$$(id -u)" = "0" ]; then \
		echo "installing missing system packages:$$missing"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	else \
		echo "error: missing system packages:$$missing" >&2; \
		echo "       install them with:" >&2; \
		echo "         sudo apt-get update && sudo apt-get install -y --no-install-recommends$$missing" >&2; \
		exit 1; \
	fi

demo: venv
	$(BIN)/eels-gz compare --robot eels_1_0_front_only --world ice_plane --scenario surface_traverse --duration 45 --out results/demo --overwrite
	@echo
	@echo "demo outputs:"
	@echo "  results/demo/compare.json"
	@echo "  results/demo/compare.png"
	@echo "  results/demo/{stock,screw}/{summary.json,log.mcap,trajectory.png}"
	@echo
	@echo "3D replay (open it in a browser): results/demo/replay.html"

# put eels-gz on PATH for every shell: a link BINDIR/eels-gz -> .venv/bin/eels-gz
BINDIR ?= $(HOME)/.local/bin
shim: venv
	@mkdir -p "$(BINDIR)"
	ln -sf "$(abspath $(BIN))/eels-gz" "$(BINDIR)/eels-gz"
	@echo "eels-gz -> $(BINDIR)/eels-gz"
	@case ":$$PATH:" in *":$(BINDIR):"*) ;; *) echo "note: $(BINDIR) is not on your PATH; add it, e.g.: export PATH=\"$(BINDIR):\$$PATH\"";; esac

# regenerate the shipped terrain models/ and worlds/ from their recipes in eels_gz/registry.py
worlds: venv
	$(BIN)/eels-gz world shipped

test: venv
	$(BIN)/python -m pytest test -q

bench: venv
	$(BIN)/python bench/speed.py --out results/bench_speed.json
	$(BIN)/python bench/rtf.py --out results/bench_rtf.json
	$(BIN)/python bench/screw_contact_step.py --out results/bench_screw_contact.json
	$(BIN)/python bench/snake_scenarios.py --out results/bench_snake_scenarios.json
	$(BIN)/python bench/camera.py --out results/bench_camera.json
	$(BIN)/python bench/terrain_dem.py --out results/bench_terrain_dem.json
	$(BIN)/python bench/terrain_scans.py --out results/bench_terrain_scans.json
	$(BIN)/python bench/sweep.py --out results/bench_sweep.json
	$(BIN)/python bench/mcap_writer.py --out results/bench_mcap_writer.json

# rerun the commands whose figures docs/ quotes; writes docs/figures.json and rewrites the quotes
# (test/faults/test_docs_figures.py checks them); about 17 min on 2 cores, the rover campaign the
# longest; one page or figure: make docs-figures FIGURES="--page docs/contact.md" (or "--only NAME")
docs-figures: venv
	$(BIN)/python tools/docs_figures.py $(FIGURES)

clean:
	rm -rf $(VENV) results $(STAMP)
