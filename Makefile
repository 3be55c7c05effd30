# The data flow, one arrow per target:
#
#   book/*.md --lib--> chapter_lib/ --outputs--> book/*.ipynb --html--> _build/html
#
# `make book` runs them all (executing only pages whose inputs changed); `make test`
# checks every arrow without rewriting anything: library in sync, .md and .ipynb
# paired, nbval re-executes each stored notebook once, unit and property tests, then
# the HTML build and the tests of the built site.

SHELL := /bin/bash
.DEFAULT_GOAL := help
.DELETE_ON_ERROR:

VENV ?= .venv
PY := $(VENV)/bin/python
# The environment is rebuilt only when what it is built from changes.
ENV_STAMP := $(VENV)/.built-from-$(shell cat requirements.txt pyproject.toml | sha256sum | cut -c1-16)
MERMAID := _build/static/mermaid/mermaid.esm.min.mjs
NODE_STAMP := node_modules/.installed-$(shell cat package.json package-lock.json | sha256sum | cut -c1-16)

.PHONY: help env lib outputs assets html book test test-sources test-notebooks test-site lab requirements clean
.PHONY: diagrams bench validate

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-14s %s\n", $$1, $$2}'

env: $(ENV_STAMP)  ## the Python environment (.venv), from requirements.txt alone
$(ENV_STAMP): requirements.txt pyproject.toml
	@test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	@rm -f $(VENV)/.built-from-* && touch $@

lib: env  ## book/*.md `# @save` cells -> chapter_lib/chapter15.py
	$(PY) -m tools.build_lib

outputs: lib  ## chapter_lib + book/*.md -> book/*.ipynb (re-executes changed pages; FORCE=1 for all)
	$(PY) -m tools.stored_outputs sync $(if $(FORCE),--force)

assets: $(MERMAID)  ## mermaid from the npm registry, served by the book itself
$(NODE_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	@touch $@
$(MERMAID): $(NODE_STAMP)
	rm -rf _build/static/mermaid && mkdir -p _build/static/mermaid/chunks
	cp node_modules/mermaid/dist/mermaid.esm.min.mjs _build/static/mermaid/
	cp -r node_modules/mermaid/dist/chunks/mermaid.esm.min _build/static/mermaid/chunks/

html: env assets  ## book/*.md + stored outputs -> _build/html (warnings are errors)
	$(PY) -m tools.build_book html

diagrams: env assets  ## draw new or changed mermaid diagrams into book/_diagrams (Chromium)
	$(PY) -m tools.draw_diagrams sync

# `make book` does lib + outputs + diagrams + html in one Python process (tools/build_book.py),
# and nothing at all when no input is newer than the last build.
BOOK_INPUTS := _config.yml _toc.yml $(wildcard book/*.md book/*.ipynb book/*.bib book/_static/* \
  book/_templates/* book/_diagrams/* chapter_lib/*.py tools/*.py)
BOOK_STAMP := _build/.book-built
book: $(BOOK_STAMP)  ## everything above, for what changed; open _build/html/index.html
	@echo "Open _build/html/index.html"
$(BOOK_STAMP): $(ENV_STAMP) $(MERMAID) $(BOOK_INPUTS)
	$(PY) -m tools.build_book
	@touch $@

test: test-sources test-notebooks  ## every check, on what is committed
	@$(MAKE) --no-print-directory html
	@$(MAKE) --no-print-directory test-site

test-sources: env assets
	$(PY) -m tools.build_lib --check
	$(PY) -m tools.stored_outputs check
	$(PY) -m tools.draw_diagrams check

test-notebooks: env  ## nbval re-executes each stored notebook once; plus the unit tests
	$(PY) -m pytest -n 2 --dist loadscope --nbval --nbval-current-env -m "not site" book/*.ipynb tests

test-site: env assets  ## tests of the built HTML (browser) and of the launch environment
	bash tools/ensure_chromium.sh
	$(PY) -m pytest -m site tests

validate: env assets  ## the W3C HTML checker (vnu) on every built page (Java; ~20-30 s, so not in `make test`)
	bash tools/ensure_java.sh
	$(PY) -m tools.vnu_check _build/html

LIGHTHOUSE := tools/lighthouse/node_modules/.installed-$(shell cat tools/lighthouse/package.json tools/lighthouse/package-lock.json | sha256sum | cut -c1-16)
$(LIGHTHOUSE): tools/lighthouse/package.json tools/lighthouse/package-lock.json
	cd tools/lighthouse && PUPPETEER_SKIP_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error
	@touch $@

bench: env assets $(LIGHTHOUSE)  ## numbers, not checks: page weight + Lighthouse, rebuild times (_build/bench/)
	bash tools/ensure_chromium.sh
	$(PY) -m tools.bench_pages _build/html --lighthouse
	$(PY) -m tools.bench_rebuild

lab: env  ## JupyterLab on the book, as Binder opens it (book/*.md open as notebooks)
	JUPYTER_CONFIG_PATH=$(CURDIR)/.jupyter$${JUPYTER_CONFIG_PATH:+:$$JUPYTER_CONFIG_PATH} \
	  $(VENV)/bin/jupyter lab --no-browser --ServerApp.root_dir=$(CURDIR) $(if $(filter 0,$(shell id -u)),--allow-root)

requirements:  ## re-pin requirements.txt from requirements.in in a scratch environment
	rm -rf _build/pin-env && python3 -m venv _build/pin-env
	_build/pin-env/bin/pip install --quiet -r requirements.in
	{ head -n 2 requirements.txt; _build/pin-env/bin/pip freeze --exclude-editable; echo "-e ."; } > requirements.txt.new
	mv requirements.txt.new requirements.txt && rm -rf _build/pin-env

clean:  ## remove built files (not the environment)
	rm -rf _build
