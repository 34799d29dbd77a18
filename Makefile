# Two commands: `make run` and `make test`. Both install whatever is missing first.
# Python environments, each from hash-pinned locks in requirements/ (`make lock` rewrites them;
# scripts/install-venv.sh installs them, see docs/operations.md, "Installing"):
#   .venv        the service: runtime.txt + ner-model.txt and the project (.venv/bin/pressroom)
#   .venv-test   the same pins plus the test and lint tools (test.txt), and the project again
#   .venv-tools  pip-audit, openapi-python-client (tools.txt) and uv: `make lock`, `make audit`, and
#                the e2e test that generates a client from the API's OpenAPI document
# .venv-test is a whole second copy, not a layer over .venv: the tests run the CLI and
# moto_server from beside their own interpreter. uv's download cache makes the copy cheap.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
TEST_VENV := .venv-test
TOOLS_VENV := .venv-tools
APT_PACKAGES := tesseract-ocr tesseract-ocr-eng tesseract-ocr-osd fonts-dejavu-core poppler-utils curl
# a second and third OCR language for the per-job language tests (the service needs only eng);
# clamav-daemon: the scanner tests start their own clamd (tests/clamd.py), never the packaged one
TEST_APT_PACKAGES := chromium systemd qpdf tesseract-ocr-deu tesseract-ocr-fra clamav-daemon
STAMP := $(VENV)/.installed-stamp
TEST_STAMP := $(TEST_VENV)/.installed-stamp
TOOLS_STAMP := $(TOOLS_VENV)/.installed-stamp
INSTALL := PYTHON=$(PYTHON) scripts/install-venv.sh
RUNTIME_LOCKS := requirements/runtime.txt requirements/ner-model.txt
TEST_LOCKS := requirements/test.txt requirements/ner-model.txt
AUDIT := $(TOOLS_VENV)/bin/pip-audit --strict --disable-pip --require-hashes

.PHONY: run test deps test-deps tools-deps system-deps test-system-deps readers postgres \
	runtime-check lint unit bench samples lock audit clean

system-deps:
	@scripts/ensure-system-deps.sh $(APT_PACKAGES)

$(STAMP): pyproject.toml requirements/build.txt $(RUNTIME_LOCKS) scripts/install-venv.sh
	$(INSTALL) $(VENV) $(RUNTIME_LOCKS)
	@touch $@

$(TEST_STAMP): pyproject.toml requirements/build.txt $(TEST_LOCKS) scripts/install-venv.sh
	$(INSTALL) $(TEST_VENV) $(TEST_LOCKS)
	@touch $@

$(TOOLS_STAMP): requirements/build.txt requirements/tools.txt scripts/install-venv.sh
	$(INSTALL) --no-project $(TOOLS_VENV) requirements/tools.txt
	@touch $@

deps: system-deps $(STAMP)

test-deps: system-deps $(TEST_STAMP)

tools-deps: $(TOOLS_STAMP)

postgres:
	@scripts/ensure-postgres.sh

test-system-deps:
	@scripts/ensure-system-deps.sh $(TEST_APT_PACKAGES)
	@scripts/ensure-promtool.sh

readers:
	@scripts/ensure-readers.sh

run: deps
	@scripts/run.sh

lint: test-deps
	$(TEST_VENV)/bin/ruff check pressroom corpora tests bench scripts
	$(TEST_VENV)/bin/ruff format --check pressroom corpora tests bench scripts
	$(TEST_VENV)/bin/mypy

unit: test-deps
	$(TEST_VENV)/bin/pytest tests/unit -q

# The suite runs in .venv-test; this shows the service's own .venv holds no test tool and still
# imports every module of the package.
runtime-check: deps
	@! $(VENV)/bin/python -c 'import pytest' 2>/dev/null || (echo "$(VENV) holds pytest" >&2; exit 1)
	$(VENV)/bin/python -c 'import importlib, pkgutil, pressroom as p; \
	  [importlib.import_module(m.name) for m in pkgutil.walk_packages(p.__path__, "pressroom.")]'

test: deps test-deps tools-deps test-system-deps readers postgres runtime-check lint
	$(TEST_VENV)/bin/pytest

# The bench reads its outputs back with rapidfuzz, a test tool: it runs from .venv-test.
bench: test-deps
	@test -x .venv-bench/bin/ocrmypdf || (python3 -m venv .venv-bench && .venv-bench/bin/pip install -q ocrmypdf)
	$(TEST_VENV)/bin/pressroom bench --pages 18 --rounds 3 --rss-pages 10 300

samples: deps
	$(VENV)/bin/python scripts/make_samples.py samples

# Needs the package index. Review the diff of requirements/*.txt, then run make test.
lock: $(TOOLS_STAMP)
	UV=$(TOOLS_VENV)/bin/uv scripts/lock.sh

# Needs the advisory databases (PyPI's JSON API or OSV); not part of make test. Fails on a
# known advisory and, with --strict, on any package it could not look up.
audit: $(TOOLS_STAMP)
	$(AUDIT) -r requirements/build.txt -r requirements/runtime.txt -r requirements/ner-model.txt
	$(AUDIT) -r requirements/test.txt

clean:
	rm -rf $(VENV) $(TEST_VENV) $(TOOLS_VENV) out .pytest_cache .mypy_cache .ruff_cache
