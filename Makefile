# Set-up commands for a fresh machine: `make demo`, `make test` (what CI runs)
# and `make bench`. Each creates .venv when missing and installs what it needs
# (pip, and the Debian packages the code uses when they are absent).
#
# One stamp file per set of extras, each newer than pyproject.toml (and the C source
# of the aligner's compiled loops, which an install builds) once that set
# is installed; a larger set also touches the stamps of the sets it contains:
#   .installed-runtime  the package alone                   (make demo)
#   .installed-dev      + the `dev` extra (tests, linters)  (make test)
#   .installed-bench    + the `bench` extra (competitors)   (make bench)
# so `make bench` after `make test` still installs the benchmark competitors,
# and `make test` after `make bench` installs nothing more.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
DEMO_INDEX ?= demo.db
# the aligner's compiled loops: an install builds them, so a change to them installs again
KERNELS := scanner/engine/loops.c

.PHONY: demo test test-deps system-deps clean bench

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# libmagic for python-magic, libarchive (RAR archives), Tesseract (OCR) and antiword (legacy .doc) for the code, a C compiler and the Python
# headers for its compiled loops (scanner/engine/loops.c: optional; the passage step ~1.8x slower without); for the
# tests also tmux (the TUI in a real terminal) and chromium (the HTML report in a real browser).
system-deps:
	@need=""; \
	 ldconfig -p 2>/dev/null | grep -q libmagic.so.1 || need="$$need libmagic1"; \
	 ldconfig -p 2>/dev/null | grep -q libarchive.so.13 || need="$$need $$(apt-cache show libarchive13t64 >/dev/null 2>&1 \
	   && echo libarchive13t64 || echo libarchive13)"; \
	 command -v tesseract >/dev/null 2>&1 || need="$$need tesseract-ocr"; \
	 command -v antiword >/dev/null 2>&1 || need="$$need antiword"; \
	 command -v cc >/dev/null 2>&1 || need="$$need gcc"; \
	 $(PYTHON) -c "import pathlib, sys, sysconfig; sys.exit(not pathlib.Path(sysconfig.get_paths()['include'], 'Python.h').exists())" \
	   || need="$$need python3-dev"; \
	 if [ -n "$$need" ]; then \
	   echo "installing Debian packages:$$need"; \
	   SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	   $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$need >/dev/null; \
	 fi

$(VENV)/.installed-runtime: pyproject.toml $(KERNELS) | $(BIN)/python
	$(BIN)/pip install --quiet -e .
	touch $@

# the tests never import the benchmark competitors (datasketch, rensa, ppdeep, py-tlsh)
$(VENV)/.installed-dev: pyproject.toml $(KERNELS) | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@ $(VENV)/.installed-runtime

$(VENV)/.installed-bench: pyproject.toml $(KERNELS) | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[dev,bench]'
	touch $@ $(VENV)/.installed-dev $(VENV)/.installed-runtime

demo: system-deps $(VENV)/.installed-runtime
	rm -f $(DEMO_INDEX) $(DEMO_INDEX)-wal $(DEMO_INDEX)-shm
	$(BIN)/scanner scan sample_corpus --exclude SOURCES.md --index $(DEMO_INDEX)
	@echo; echo "== where does the essay's text come from? (exit 1 = findings)"
	$(BIN)/scanner check sample_corpus/submissions/essay-on-public-memory.txt --index $(DEMO_INDEX); test $$? -le 1
	@echo; echo "== one pair, every measure"
	$(BIN)/scanner compare --exact sample_corpus/originals/declaration-of-independence.txt sample_corpus/submissions/declaration-print.pdf

test-deps: system-deps
	@need=""; \
	 command -v tmux >/dev/null 2>&1 || need="$$need tmux"; \
	 command -v chromium >/dev/null 2>&1 || need="$$need chromium"; \
	 if [ -n "$$need" ]; then \
	   echo "installing Debian packages for the tests:$$need"; \
	   SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	   $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$need >/dev/null \
	     || echo "warning: could not install$$need; the tests that need them will be skipped"; \
	 fi

# lint, then types (mypy's configuration is in pyproject.toml), then the suite on every core (at most 4),
# a test file's tests in one worker so its module fixtures are built once
test: test-deps $(VENV)/.installed-dev
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/python -m pytest -q -p no:cacheprovider -n auto --maxprocesses 4 --dist loadfile tests

# the other bench scripts (bench/*.py) run the same way; they read the corpora
# from ../shared/corpora (bench/common.py; sources in docs/CORPORA.md)
bench: system-deps $(VENV)/.installed-bench
	$(BIN)/python bench/bench_sketch.py

clean:
	rm -rf $(VENV) $(DEMO_INDEX) $(DEMO_INDEX)-wal $(DEMO_INDEX)-shm scanner/engine/loops*.so
