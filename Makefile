# The data flow, one arrow per target:
#
#   book/*.md --lib--> chapter_lib/ --outputs--> book/*.ipynb --html--> _build/html
#                           `--assets--> the wheel, Python's snapshot --'    `--pdf--> _build/pdf
#
# Make sets up what comes from the package managers (.venv, node_modules; the tool then copies and
# bundles what the pages serve of them: runnable_book/pipeline/npm_assets.py);
# every artefact made from the book's own files is a step of the build graph
# (runnable_book/pipeline/artefact_graph.py, pydoit), remade when the *content* of one of its inputs
# changed, in the graph's order: an incremental build equals a clean one.
# `make book` runs them all (executing only pages whose inputs changed); `make test`
# checks every arrow without rewriting anything: library in sync, .md and .ipynb
# paired, nbval re-executes each stored notebook once, unit and property tests, then
# the HTML build and the tests of the built site.

SHELL := /bin/bash
.DEFAULT_GOAL := help
.DELETE_ON_ERROR:

VENV ?= .venv
PY := $(VENV)/bin/python
# The Python .venv is made from: PYTHON= names one; otherwise the one .venv was made from, else
# `python3`, else the newest `python3.N` on PATH; whichever it is, a supported version (pyproject.toml's
# classifiers, one list: runnable_book/interpreters/find_python.sh prints "<executable> <version>", or
# says in one line which versions work). Empty when there is none: `make env` then says so.
SUPPORTED_PYTHONS := $(shell sed -n 's/^ *"Programming Language :: Python :: \(3\.[0-9]*\)",*$$/\1/p' pyproject.toml)
# (bench-first-build's PYTHON= names the interpreter of the clone it builds, not this .venv's.)
FIND_PYTHON = REQUESTED='$(if $(filter bench-first-build,$(MAKECMDGOALS)),,$(PYTHON))' sh runnable_book/interpreters/find_python.sh $(VENV) $(SUPPORTED_PYTHONS)
BOOK_PYTHON := $(shell $(FIND_PYTHON) 2>/dev/null)
# The environment is rebuilt only when what it is built from changes: the pins, the project, the
# interpreter (made anew from scratch when PYTHON= names another: $(VENV)/.interpreter says which).
ENV_STAMP := $(VENV)/.built-from-$(shell { cat requirements.txt pyproject.toml; echo '$(BOOK_PYTHON)'; } | sha256sum | cut -c1-16)
NODE_STAMP := node_modules/.installed-$(shell cat package.json package-lock.json | sha256sum | cut -c1-16)
# The book as one PDF (`make pdf`), named for it (runnable_book/pipeline/printed_pdfs.py: chapter15.pdf).
PDF := _build/pdf/*.pdf
# The HTML site (`make html`, `make book`), which publishes a copy of the PDF when it exists.
SITE := _build/html
# (Its singlehtml build has a build folder of its own, _build/print, so its Sphinx cache is
# never the HTML build's: neither build can invalidate the other's.)
# "Run in your browser": Pyodide's files (and matplotlib's wheels, from a PyPI package pinned
# there) and the bundles of the editor and of a cell's HTML, Markdown and LaTeX, made from
# node_modules by the tool, each only when what it is made from changed (npm_assets.py, in
# runnable_book/pipeline/), and served from _static (runnable_book/sphinx_ext/runner/__init__.py).
# chapter_lib's wheel, Python's memory once started with chapter_lib imported (restored by the
# page instead of initialising the interpreter) and the first figure's compiled imports with
# matplotlib's font cache are made from the book's files by the graph (artefact_graph.py).

.PHONY: pythons-lock test-pythons test-loaded test-new-book
.PHONY: help env lib outputs outputs-merge assets html book check check-sources check-tests test sources-and-notebooks test-sources test-notebooks pdf-and-html test-site test-tests test-units test-programs lab requirements clean
.PHONY: bench-first-build bench-chapters bench-library bench bench-tests bench-check bench-modules bench-browsers bench-run bench-pages bench-outputs pdf bench-pdf bench-reprints diagrams validate graph-status
.PHONY: release bench-launch tool-wheel served-from-packages

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-14s %s\n", $$1, $$2}'

env: $(ENV_STAMP)  ## the Python environment (.venv), from requirements.txt alone, made by python3 or PYTHON= (a supported version: pyproject.toml)
$(ENV_STAMP): requirements.txt pyproject.toml
	@test -n "$(BOOK_PYTHON)" || { $(FIND_PYTHON) >/dev/null; exit 1; }
	@if [ "$$(cat $(VENV)/.interpreter 2>/dev/null)" != "$(BOOK_PYTHON)" ]; then \
	  echo "making $(VENV) with Python $(lastword $(BOOK_PYTHON)) ($(firstword $(BOOK_PYTHON)))"; \
	  rm -rf $(VENV) && $(firstword $(BOOK_PYTHON)) -m venv $(VENV) && echo "$(BOOK_PYTHON)" > $(VENV)/.interpreter; fi
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	@rm -f $(VENV)/.built-from-* && touch $@

GRAPH := $(PY) -m runnable_book.pipeline.artefact_graph

lib: env  ## book/*.md `# @save` cells -> chapter_lib/chapterNN.py, one module per chapter (a page's title numbers it)
	$(GRAPH) lib

outputs: env $(NPM_ASSETS)  ## chapter_lib + book/*.md -> book/*.ipynb (re-executes pages whose code or used library changed; FORCE=1 for all; SHARD=k/N: this machine's share, into _build/output-shards); ends with a change report
	$(if $(SHARD),$(GRAPH) lib diagrams && $(PY) -m runnable_book.pipeline.execute_shards run "$(SHARD)",$(GRAPH) lib diagrams outputs)
outputs-merge: env  ## join the SHARD=k/N runs' notebooks (_build/output-shards, or SHARDS=<folder>) into book/: the same stored notebooks as one `make outputs`
	$(PY) -m runnable_book.pipeline.execute_shards merge $${SHARDS:+--shards "$$SHARDS"}

# (mermaid is not among them: the diagrams are drawn at build time, `make diagrams`.)
# The npm packages come from package.json (npm ci); what the pages serve of them is the tool's
# to make (served-from-packages, below). The diagrams' font is a subset of Debian's DejaVu Sans, made by the graph from the glyphs
# the pages use (runnable_book/pipeline/diagram_font.py); Make installs the Debian font.
DEJAVU := /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf
# From the package managers (Make); the wheel, Python's snapshot, the first figure's bytes and
# the diagrams' font are made from the book's files by the build graph (`$(GRAPH) assets`).
NPM_ASSETS := served-from-packages $(DEJAVU)
$(DEJAVU):
	apt-get install -y --no-install-recommends fonts-dejavu-core
assets: $(NPM_ASSETS)  ## Pyodide, CodeMirror (npm), chapter_lib's wheel, Python's snapshot, the first figure's bytecode, the diagrams' font: served by the book itself
	$(GRAPH) lib assets
$(NODE_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	@touch $@
served-from-packages: env $(NODE_STAMP)
	@$(PY) -m runnable_book.pipeline.npm_assets
# The wheel (a pure-Python wheel built from a copy of the package, so no build/ folder lands
# in the repository), Python's snapshot and the first figure's bytes: steps of the graph.

html: env $(NPM_ASSETS)  ## book/*.md + stored outputs -> _build/html (warnings are errors); a PDF made earlier is brought up to date first
	$(GRAPH) lib assets diagrams outputs $(if $(wildcard $(PDF)),pdf) html

pdf: env $(NPM_ASSETS)  ## the whole chapter as one PDF (_build/pdf), printed by Chromium from the singlehtml build; a built site then serves it
	$(GRAPH) lib assets diagrams outputs pdf $(if $(wildcard $(SITE)/index.html),html)

bench-pdf: env $(NPM_ASSETS)  ## time `make pdf`'s two steps (RUNS=3), report pages and bytes (runnable_book/bench/pdf_build.py)
	bash runnable_book/browser/ensure_debian_package.sh chromium chromium
	$(PY) -m runnable_book.bench.pdf_build $(if $(RUNS),--runs $(RUNS))
bench-reprints: env $(NPM_ASSETS)  ## print the built book again PRINTS=12 times: how many prints differ from the PDF, and where (runnable_book/bench/pdf_reprints.py; after `make pdf`)
	bash runnable_book/browser/ensure_debian_package.sh chromium chromium
	$(PY) -m runnable_book.bench.pdf_reprints $(if $(PRINTS),--prints $(PRINTS))

diagrams: env $(NPM_ASSETS)  ## draw new or changed mermaid diagrams into book/_diagrams (Chromium)
	$(GRAPH) diagrams

# `make book` runs every step of the graph in one Python process (runnable_book/pipeline/artefact_graph.py),
# each only when the content of one of its inputs changed; the PDF too once `make pdf` made one.
book: env $(NPM_ASSETS)  ## lib, outputs, assets, diagrams, html (pdf once made), for what changed; open _build/html/index.html
	$(GRAPH) book
	@echo "Open _build/html/index.html"

graph-status: env  ## is every artefact up to date with its inputs (by content)? names those that are not
	$(GRAPH) status

.PHONY: accept
accept: env  ## record the book's text and printed outputs as the fidelity tests' reference (tests/book_as_accepted/)
	$(PY) -m runnable_book.pipeline.accept

# `make check`: the quick loop while you work, after `make book` (`make bench-check` times it
# beside `make test`). Two lanes at once: the sources (the JavaScript linted, type-checked and
# unit-tested, each tool's cache in _build/check/ so that unchanged files are not read again;
# the generated files what the book makes; the book what its author accepted), and one pytest
# session: the tests that need no built site, browser, whole-book build, namespace, kernel or
# Sphinx build (the markers, tests/markers.py; CHECK_SELECTION names every need there is) with,
# under nbval, the pages not checked as they are now (runnable_book/checks/changed_pages.py records
# each that passes).
# `make test` runs every check; this runs what a minute allows.
CHECK_SELECTION := not site and not browser and not whole_book and not netns and not kernel and not sphinx
# The test paths check-tests gives pytest: all of tests/, unless narrowed (tests/test_recipes.py
# narrows them to the modules whose answer depends on the book's state, in its scratch copy).
CHECK_TESTS ?= tests
# The loop keeps Python's compiled modules and pytest's rewritten tests (in __pycache__, ignored
# by git) from one run to the next: with PYTHONDONTWRITEBYTECODE set, every run compiled them
# all again, a third of its time.
check check-sources check-tests: export PYTHONDONTWRITEBYTECODE =
TS_PROJECTS := tsconfig.json tsconfig.page.json tsconfig.worker.json tsconfig.node.json
check: env $(NPM_ASSETS)  ## the quick loop while you work, after `make book`: sources, library in sync, the tests that need no whole-book build, changed pages under nbval
	@$(PY) -m runnable_book.pipeline.pages  # the book reads (_toc.yml, every page), or nothing else runs
	@$(MAKE) --no-print-directory -j2 --output-sync=target check-sources check-tests
	@echo "make check passed: what a minute allows (make test runs every check, as CI does)"
check-sources:
	@mkdir -p _build/check
	node_modules/.bin/eslint --cache --cache-strategy content --cache-location _build/check/eslint-cache $(JS_SOURCES)
	@for project in $(TS_PROJECTS); do echo "tsc -p $$project"; \
	  node_modules/.bin/tsc -p $$project --incremental --tsBuildInfoFile _build/check/$$project.tsbuildinfo || exit 1; done
	node --test --test-reporter=dot tests/js/*.test.mjs
	$(PY) -m runnable_book.pipeline.extract_library --check --skip-recorded  # (in sync by construction while nothing it is made of changed)
	$(PY) -m runnable_book.pipeline.execute_pages check --skip-synced  # (the pages the build left as they are: paired by construction)
	$(PY) -m runnable_book.pipeline.draw_diagrams check
	$(PY) -m runnable_book.pipeline.accept --check
check-tests:
	@pages="$$($(PY) -m runnable_book.checks.changed_pages)" || exit 1; \
	echo "pages under nbval (changed since the last check): $${pages:-none}" | tr '\n' ' '; echo; \
	$(PY) -m pytest -n 2 --dist loadscope -q -p runnable_book.checks.changed_pages -m "$(CHECK_SELECTION)" \
	  $${pages:+--nbval --nbval-current-env} $(CHECK_TESTS) $$pages

# `make test`'s stages, in order; `make bench-tests` times each of them. The PDF is printed
# first, then the HTML is built once, linking and publishing it, for the site tests: one
# stage, the graph's `pdf` and `html` steps in its own order. The pytest tests then run in one
# session, unit and site together (test-tests), so that no core waits for a stage to end.
# test-sources and test-notebooks only read the book (nbval writes only _build/test-run/), so
# they run side by side, one core each (each one's output kept whole: --output-sync); the PDF
# and HTML stage can rewrite what they read (its graph's `outputs` step), so it comes after.
# pythons-lock first: pip's dry run of the lock on each supported Python found here (minutes of
# waiting on the index, little CPU); a fresh environment and the book on each is test-pythons,
# which CI's workflow pythons.yml runs per version: on every interpreter here it would add about
# five minutes each to make test.
TEST_STAGES := pythons-lock sources-and-notebooks pdf-and-html test-tests
pythons-lock: env  ## the lock installs on every supported Python found here: pip's dry run in a fresh venv of each (runnable_book/interpreters/lock_check.py)
	$(PY) -m runnable_book.interpreters.lock_check $(PYTHONS)
test-pythons: env  ## a fresh clone's `make book` and `make check` on every supported Python found here, or those in PYTHONS= (runnable_book/interpreters/matrix.py; CI: pythons.yml)
	$(PY) -m runnable_book.interpreters.matrix $(PYTHONS)
test-new-book: env  ## a new book's README commands, `make book` and `make test`, in a fresh folder with a fresh venv (PYTHON=) and npm ci: the tool from its wheel (runnable_book/new_book/fresh_check.py)
	$(PY) -m runnable_book.new_book.fresh_check $(if $(PYTHON),--python $(PYTHON))
test-loaded: env  ## a fresh clone's `bash .ci/run` RUNS=3 times beside HOGS=4 busy processes: does the suite pass on a busy machine? (runnable_book/checks/loaded_suite.py; an hour a run)
	$(PY) -m runnable_book.checks.loaded_suite --hogs $(or $(HOGS),4) --runs $(or $(RUNS),3)
sources-and-notebooks:
	$(MAKE) --no-print-directory -j2 --output-sync=target test-sources test-notebooks
pdf-and-html: env $(NPM_ASSETS)
	bash runnable_book/browser/ensure_debian_package.sh chromium chromium
	$(GRAPH) lib assets diagrams outputs pdf html
# A failed stage says its name last, so that a red `make test` (and `make release`, which reads
# this line) says where to look among thousands of lines.
test: env  ## every check, on what is committed
	@$(PY) -m runnable_book.pipeline.pages  # the book reads (_toc.yml, every page), or no stage runs
	@for stage in $(TEST_STAGES); do $(MAKE) --no-print-directory $$stage || { \
	  echo "make test: the stage $$stage failed (its output is above; \`make $$stage\` runs it alone)" >&2; exit 1; }; done

# The book's own JavaScript: linted (eslint.config.mjs); all of it type-checked by tsc from its
# JSDoc types, in four projects, since one program cannot have the DOM's, a worker's and
# Node's globals at once: the runner's page modules (tsconfig.json; the page <->
# worker messages: runnable_book/sphinx_ext/runner/messages.mjs), the page's other scripts (the inline
# loader, offline_page.mjs, the tools' page scripts: tsconfig.page.json), the two workers, the service
# worker and the page's Python (tsconfig.worker.json; the offline manifest and messages:
# runnable_book/sphinx_ext/offline_types.d.ts), and the scripts Node runs at `make assets`
# (tsconfig.node.json), all four strict; the runner's pure
# logic (kept work's merge, output bounding, exercise progress) unit-tested with Node's own
# test runner (tests/js/, against a stub browser: tests/js/browser_stub.mjs).
JS_SOURCES := runnable_book/sphinx_ext/runner/ runnable_book/sphinx_ext/offline_sw.js runnable_book/sphinx_ext/offline_page.mjs runnable_book/pipeline/ runnable_book/browser/ runnable_book/checks/ runnable_book/bench/*.mjs tests/js/ eslint.config.mjs
test-sources: env $(NPM_ASSETS)
	node_modules/.bin/eslint $(JS_SOURCES)
	node_modules/.bin/tsc -p tsconfig.json
	node_modules/.bin/tsc -p tsconfig.page.json
	node_modules/.bin/tsc -p tsconfig.worker.json
	node_modules/.bin/tsc -p tsconfig.node.json
	node --test --test-reporter=spec tests/js/*.test.mjs
	$(PY) -m runnable_book.pipeline.extract_library --check
	$(PY) -m runnable_book.pipeline.execute_pages check
	$(PY) -m runnable_book.pipeline.draw_diagrams check
	$(PY) -m runnable_book.pipeline.accept --check

# nbval executes each page once, with `make outputs`' kernel settings, and keeps what it
# printed in _build/test-run/executed/ (conftest.py, runnable_book/checks/nbval_run.py), where the
# byte-stability test (tests/test_execute_pages.py) reads it instead of executing every page again.
test-notebooks: env  ## nbval re-executes each stored notebook once and compares every output
	rm -rf _build/test-run/executed
	$(PY) -m pytest -n 2 --dist loadscope --nbval --nbval-current-env book/*.ipynb

# The browsers and readers the tests use, from Debian's packages (never a tool's own download).
test-programs:
	bash runnable_book/browser/ensure_debian_package.sh chromium chromium
	@# the tests' browser: Chromium's headless shell (runnable_book/browser/chromium.py, tests/conftest.py)
	bash runnable_book/browser/ensure_debian_package.sh chromium-headless-shell chromium-headless-shell
	@# pdftotext and pdfimages read the PDF as a viewer does (tests/test_pdf.py)
	bash runnable_book/browser/ensure_debian_package.sh pdftotext poppler-utils

# Every test of tests/, in one session on three workers (pytest-xdist, by module: a module's
# browser, JupyterLab, printer or grader run is set up once; each test gets a fresh browser
# context). Three on two cores: a worker waiting on a browser, a server or a kernel leaves its
# core to another (`make bench-tests` measures the stage, and `make bench-tests XDIST="-n 2 …"`
# two workers: slower). Modules marked `long` start first,
# the rest in file order (--no-loadscope-reorder: xdist would otherwise start the modules with
# most tests first and a one-test minute last). The site tests need the built site
# (pdf-and-html, or `make html`).
XDIST := -n 3 --dist loadscope --no-loadscope-reorder
test-tests: env $(NPM_ASSETS) test-programs  ## every test of tests/ (unit and site) in one parallel session
	$(PY) -m pytest $(XDIST) tests
test-units: env  ## the tests that need no built site (part of test-tests): whole-book builds and the grader among them, minutes; `make check` is the quick loop
	$(PY) -m pytest $(XDIST) -m "not site" tests
test-site: env $(NPM_ASSETS) test-programs  ## the tests of the built site (part of test-tests): browser, PDF, JupyterLab, fresh environments
	$(PY) -m pytest $(XDIST) -m site tests

bench-run: html  ## Run in your browser: first-click bytes, time to first output cold and cached, cells matched per page; offline; a first visit's bytes per answer; Python on a slow network beside bare Pyodide (runnable_book/bench/offline_visits.py, first_visit.py, slow_network.py)
	bash runnable_book/browser/ensure_debian_package.sh chromium chromium
	$(PY) -m runnable_book.bench.run_in_browser $(if $(REPEAT),--repeat $(REPEAT))
	$(PY) -m runnable_book.bench.run_in_browser --timing-only --busy 1 $(if $(REPEAT),--repeat $(REPEAT))
	$(PY) -m runnable_book.bench.offline_visits
	$(PY) -m runnable_book.bench.first_visit
	$(PY) -m runnable_book.bench.slow_network --figure-page book/15_04_quality_and_cost.html
validate: env $(NPM_ASSETS)  ## the W3C HTML checker (vnu) on every built page (Java; ~20-30 s, so not in `make test`)
	bash runnable_book/browser/ensure_debian_package.sh java default-jre-headless
	$(PY) -m runnable_book.checks.vnu_check _build/html

LIGHTHOUSE := runnable_book/bench/lighthouse/node_modules/.installed-$(shell cat runnable_book/bench/lighthouse/package.json runnable_book/bench/lighthouse/package-lock.json | sha256sum | cut -c1-16)
$(LIGHTHOUSE): runnable_book/bench/lighthouse/package.json runnable_book/bench/lighthouse/package-lock.json
	cd runnable_book/bench/lighthouse && PUPPETEER_SKIP_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error
	@touch $@

bench: bench-run bench-pages bench-pdf bench-reprints bench-outputs bench-grade bench-tests bench-check bench-modules bench-browsers bench-launch bench-first-build bench-chapters bench-library  ## numbers, not checks (_build/bench/): Run in your browser, page weight + Lighthouse, rebuild times, the PDF printed again, re-execution, grading, make test, make check, its modules, the tests' browser, the launch environment, a fresh clone's first build, a book of many chapters, the library's imports
bench-chapters: env $(NPM_ASSETS)  ## this book beside itself grown to CHAPTERS=20 chapters (renamed copies; benchmark data): a clean build, a prose edit, a saved-function edit, make check's part that reads the book, a reader's first visit and click to first output in each site, and every PDF printed: seconds, bytes and ratios (runnable_book/bench/many_chapters.py); then the floor under a prose edit, Jupyter Book alone on both books' stored notebooks (runnable_book/bench/sphinx_floor.py)
	$(PY) -m runnable_book.bench.many_chapters $(if $(CHAPTERS),--chapters $(CHAPTERS)) $(if $(STEPS),--steps $(STEPS))
	$(PY) -m runnable_book.bench.sphinx_floor
bench-library: assets  ## what chapter_lib's chapters cost a page's Python: each chapter's import in ms, and what each would add to the snapshot (runnable_book/bench/in_node/library_imports.mjs)
	node runnable_book/bench/in_node/library_imports.mjs _build/static/pyodide/ _build/static/runner/chapter_lib.whl
bench-check: env $(NPM_ASSETS)  ## `make check` as after `make book` (every page under nbval) and again, quiet and beside one busy process: seconds, its CPU, beside executing every page once and `make test` (runnable_book/bench/check_loop.py; after bench-tests)
	$(PY) -m runnable_book.bench.check_loop
bench-launch: env  ## Binder's launch environment (binder/requirements.txt) beside the development one (requirements.txt), each in a fresh venv: pins, install seconds, megabytes (runnable_book/bench/launch_environment.py)
	$(PY) -m runnable_book.bench.launch_environment
bench-first-build: env  ## a fresh clone's first `make book` (TEST=1: and `make test`; PYTHON=: its environment from that interpreter), environment and npm assets included: wall and CPU seconds (runnable_book/bench/first_build.py)
	$(PY) -m runnable_book.bench.first_build $(if $(TEST),--test) $(if $(PYTHON),--python $(PYTHON))
bench-browsers: env html test-programs  ## a browser test's unit of work (context, page, Python, a cell) in chromium and its headless shell: seconds and CPU (runnable_book/bench/browser_builds.py)
	$(PY) -m runnable_book.bench.browser_builds $(if $(REPEAT),--repeat $(REPEAT))
bench-tests: env assets  ## wall time of each stage of `make test` beside executing every page once, and its CPU by kind of process (runnable_book/bench/suite_stages.py, cpu_by_process.py)
	$(PY) -m runnable_book.bench.suite_stages $(TEST_STAGES)
bench-modules: env $(NPM_ASSETS) test-programs  ## each test module alone: its CPU-seconds and share of test-tests', and (all modules) the least time test-tests could take on these cores, as a multiple of executing every page once (runnable_book/bench/suite_modules.py; after `make book` and `make pdf`)
	$(PY) -m runnable_book.bench.suite_modules $(MODULES)
bench-outputs: env $(NPM_ASSETS)  ## a `# @save` edit one later page uses, and FORCE=1: pages executed and seconds, with and without the reproducibility check; the build graph's own cost (REPEAT=3)
	$(PY) -m runnable_book.bench.reexecution $(if $(REPEAT),--repeat $(REPEAT))
bench-pages: env $(NPM_ASSETS) $(LIGHTHOUSE)  ## page weight + Lighthouse, rebuild times
	bash runnable_book/browser/ensure_debian_package.sh chromium chromium
	$(PY) -m runnable_book.bench.page_weight _build/html --lighthouse
	$(PY) -m runnable_book.bench.rebuild

lab: env  ## JupyterLab on the book, as Binder opens it (book/*.md open as notebooks)
	JUPYTER_CONFIG_PATH=$(CURDIR)/.jupyter$${JUPYTER_CONFIG_PATH:+:$$JUPYTER_CONFIG_PATH} \
	  $(VENV)/bin/jupyter lab --no-browser --ServerApp.root_dir=$(CURDIR) $(if $(filter 0,$(shell id -u)),--allow-root)

# One lock for every supported Python (pyproject.toml's classifiers), written by uv's universal
# resolver (`uv pip compile --universal`, uv pinned below, from PyPI into a scratch venv): exact
# pins, and where a release needs a newer Python than the oldest supported, a second pin of that
# package with an environment marker (pip installs the one whose marker holds). A package added to
# requirements.in is pinned without moving the others: today's pins are uv's preferences (minus
# the editable chapter_lib), unless UPGRADE=1 re-pins everything afresh. Then the launch
# environment (binder/: what Binder installs beyond its own JupyterLab and kernel) is pinned from
# binder/requirements.in for Binder's Python (binder/runtime.txt) with the new pins as
# constraints: the same versions, so a notebook launched there prints and draws what the book stores.
LAUNCH_PINS := binder/requirements.txt
UV := uv==0.13.9
UV_COMPILE := _build/pin-env/bin/uv pip compile --quiet --no-header --no-annotate
requirements:  ## pin requirements.txt from requirements.in for every supported Python (uv's universal lock), then binder/requirements.txt (Binder's launch environment) at its versions (UPGRADE=1: every pin afresh)
	@test -n "$(BOOK_PYTHON)" || { $(FIND_PYTHON) >/dev/null; exit 1; }
	rm -rf _build/pin-env && $(firstword $(BOOK_PYTHON)) -m venv _build/pin-env
	_build/pin-env/bin/pip install --quiet --disable-pip-version-check $(UV)
	grep -v '^-e ' requirements.txt | grep -v '^#' > _build/pin-lock.txt
	$(UV_COMPILE) --universal --python-version $(firstword $(SUPPORTED_PYTHONS)) $(if $(UPGRADE),--upgrade) \
	  -o _build/pin-lock.txt requirements.in
	{ head -n 2 requirements.txt; cat _build/pin-lock.txt; echo "-e ."; } > requirements.txt.new
	mv requirements.txt.new requirements.txt
	$(UV_COMPILE) --python-version $(subst python-,,$(shell cat binder/runtime.txt)) --python-platform linux \
	  -c _build/pin-lock.txt -o _build/pin-launch.txt binder/requirements.in
	{ head -n 3 $(LAUNCH_PINS); cat _build/pin-launch.txt; } > $(LAUNCH_PINS).new
	mv $(LAUNCH_PINS).new $(LAUNCH_PINS) && rm -rf _build/pin-env _build/pin-lock.txt _build/pin-launch.txt

# A new edition (runnable_book/release; docs/publishing.md): refuses a dirty tree, a red `make test`
# (which it runs first), a version not above the current one; then one commit and its tag.
tool-wheel: env  ## the tool's own wheel, runnable-book, into _build/tool-wheel (runnable_book/release/tool_wheel.py; what another book installs: runnable_book/README.md)
	$(PY) -m runnable_book.release.tool_wheel _build/tool-wheel

release: env  ## a new edition, VERSION=x.y.z: refuses a dirty tree or a red `make test`; bumps chapter_lib's version, dates CHANGELOG.md's Unreleased section, commits, tags v<VERSION> (publishing: the workflow)
	@test -n "$(VERSION)" || { echo "usage: make release VERSION=x.y.z" >&2; exit 2; }
	$(PY) -m runnable_book.release $(VERSION)

clean:  ## remove built files (not the environment)
	rm -rf _build

# Grading a class's notebooks offline, in a sandbox that fails closed (runnable_book/grade; README.md "For
# instructors", docs/grading.md). The sandbox runs the Pyodide and snapshot `make assets` serves.
# The instructor's values reach the grader through the environment (Make exports command-line
# variables), so a name with spaces, quotes or accents arrives as typed.
.PHONY: grade grade-merge bench-grade
GRADE_OPTIONS = $${ONLY:+--only "$$ONLY"} $${DUE:+--due "$$DUE"} $${HIDDEN:+--hidden "$$HIDDEN"} \
  $${MANUAL:+--manual "$$MANUAL"} $${ASSIGNMENT:+--assignment "$$ASSIGNMENT"} $(foreach f,$(FORMAT),--format $(f)) \
  $${SUBMITTED:+--submitted "$$SUBMITTED"} $${EXTENSIONS:+--extensions "$$EXTENSIONS"} $${TIMES:+--times "$$TIMES"} \
  $${ROSTER:+--roster "$$ROSTER"}
# OUT= (default _build/grades) is where the grades go and where ONLY= and grade-merge find them;
# JOBS= how many students at a time (default: the CPUs this process may use and the memory it has).
grade: env assets  ## grade SUBMISSIONS=<folder or zip> -> _build/grades/ (report, gradebook, feedback); PAGE= (a book of several exercise pages), ONLY=, DUE=, HIDDEN=, MANUAL=, FORMAT=canvas|moodle, ROSTER=, SUBMITTED=, EXTENSIONS=, TIMES=zip|files, SHARD=k/N, OUT=, JOBS= (docs/grading.md)
	@test -n "$$SUBMISSIONS" || { echo "usage: make grade SUBMISSIONS=<folder or zip of .ipynb files> [PAGE=book/<page>.md] [ONLY=name] [DUE=2026-12-01T23:59] [HIDDEN=file.py] [MANUAL=manual.csv] [FORMAT=canvas|moodle] [ROSTER=lms.csv] [SUBMITTED=times.csv] [EXTENSIONS=due.csv] [TIMES=zip|files] [SHARD=k/N] [OUT=folder] [JOBS=n]" >&2; exit 2; }
	$(PY) -m runnable_book.grade "$$SUBMISSIONS" $${SHARD:+--shard "$$SHARD"} $${OUT:+--out "$$OUT"} $${JOBS:+--jobs "$$JOBS"} $(GRADE_OPTIONS)
grade-merge: env  ## join the SHARD=k/N gradings in _build/grades (or OUT=, SHARDS=<folder>) into one report, gradebook and feedback, keeping the newest grading of each student; without shards, write them again from results.json (MANUAL=, FORMAT=)
	$(PY) -m runnable_book.grade.shards $${OUT:+--out "$$OUT"} $${SHARDS:+--shards "$$SHARDS"} $${MANUAL:+--manual "$$MANUAL"} \
	  $${ASSIGNMENT:+--assignment "$$ASSIGNMENT"} $(foreach f,$(FORMAT),--format $(f))
bench-grade: env assets  ## a generated class of 40 graded: seconds and CPU-seconds per submission, in shards, and beside busy processes with its grades compared (_build/bench/grade.json)
	$(PY) -m runnable_book.bench.grade_class $(if $(SIZE),--size $(SIZE))
