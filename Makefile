# teachgrad: `make lab` opens the notebooks, `make test` runs every test. Both set everything up first.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.teachgrad-installed
BENCH_STAMP := $(VENV)/.teachgrad-bench-installed
LAB_PORT ?= 8888

.PHONY: setup setup-dot setup-browser setup-axe test test-unit test-notebooks test-cpu-paths test-browser test-book lab lab-reset student notebooks book bench opdb clean

setup: $(STAMP) setup-dot

$(STAMP): pyproject.toml constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check torch==2.13.0 -c constraints.txt
	$(PY) -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[test,notebooks,book]'
	touch $(STAMP)

# Graphviz's `dot` draws the graphs; without it teachgrad.viz still gives DOT text.
setup-dot:
	@scripts/system-package.sh dot graphviz "Graphviz, draws computation graphs"

# Chromium for the browser test; when it cannot be installed the browser test is skipped, saying why.
setup-browser:
	@scripts/system-package.sh chromium chromium "headless browser for make test-browser" || true

# axe-core (accessibility checks in the book test) from npm into build/axe (git-ignored); without npm the
# book test skips only those checks, saying why.
AXE_VERSION := 4.14.1
AXE := build/axe/node_modules/axe-core/axe.min.js
setup-axe: $(AXE)

$(AXE):
	@scripts/system-package.sh npm npm "Node's package manager, brings axe-core for make test-book" || true
	@if command -v npm >/dev/null 2>&1; then \
		npm install --prefix build/axe --no-save --no-package-lock --no-audit --no-fund --loglevel=error \
			axe-core@$(AXE_VERSION) || echo "npm could not install axe-core: the book test skips its accessibility checks"; \
	fi

# The tests and notebooks use tiny tensors: one thread each avoids thread contention on small machines.
test test-unit test-notebooks test-cpu-paths notebooks: export OMP_NUM_THREADS = 1

# pytest-xdist spreads the tests over one worker per core (at most 4); a test file stays on one worker, so a
# module's fixture (the book's build, nbgrader's course, JupyterLab's server) is made once. WORKERS=0 runs
# everything in this one process.
WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 1); echo $$(( n < 4 ? n : 4 )))
PARALLEL = $(if $(filter 0,$(WORKERS)),,-n $(WORKERS) --dist loadfile)
PYTEST := $(PY) -m pytest -p no:cacheprovider -q
NBVAL = $(PYTEST) $(PARALLEL) --nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg

test: setup setup-browser setup-axe
	$(PYTEST) $(PARALLEL) tests
	$(NBVAL) notebooks
	$(MAKE) --no-print-directory test-cpu-paths

# Stored outputs must not depend on the CPU: nbval again with torch forced onto other kernel paths than
# this CPU's own (ATen's `default` and `avx2`; MKL_CBWR makes MKL's BLAS pick a fixed code path too), so an
# output that prints round-off digits fails here rather than on a learner's or an instructor's machine.
# A path that is this CPU's own was just checked by the plain run above and is not run twice.
CPU_PATHS := default:COMPATIBLE avx2:AVX2
test-cpu-paths: setup
	@native=$$($(PY) -c "import torch; print(torch.backends.cpu.get_cpu_capability().lower())"); \
	for path in $(CPU_PATHS); do \
		aten=$${path%%:*}; mkl=$${path##*:}; \
		if [ "$$aten" = "$$native" ]; then echo "nbval on ATen path $$aten: this CPU's own, checked by the plain run"; continue; fi; \
		echo "nbval with ATEN_CPU_CAPABILITY=$$aten MKL_CBWR=$$mkl"; \
		ATEN_CPU_CAPABILITY=$$aten MKL_CBWR=$$mkl $(NBVAL) notebooks || exit 1; \
	done

# Re-run every notebook under nbval and compare with the stored outputs.
test-notebooks: setup
	$(NBVAL) notebooks
	$(MAKE) --no-print-directory test-cpu-paths
	$(PYTEST) $(PARALLEL) tests -m notebooks

# Re-execute every notebook and store the outputs (after changing teachgrad or a notebook).
notebooks: setup
	$(PY) scripts/execute_notebooks.py

# make bench: teachgrad against torch.autograd, MyGrad and HIPS autograd (the `bench` extras, pinned in
# constraints.txt), then benchmarks/scaling.py (work per input of a node with many inputs, per view of a long
# chain: counted, and timed beside torch). BENCH_ARGS passes options: make bench BENCH_ARGS="--quick --only chain".
$(BENCH_STAMP): $(STAMP) pyproject.toml constraints.txt
	$(PY) -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[bench]'
	touch $(BENCH_STAMP)

BENCH_ARGS ?=
bench: $(BENCH_STAMP)
	$(PY) benchmarks/bench.py $(BENCH_ARGS)
	$(PY) benchmarks/scaling.py $(if $(findstring --quick,$(BENCH_ARGS)),--quick)
	$(PY) benchmarks/compiled.py $(if $(findstring --quick,$(BENCH_ARGS)),--quick)

# make opdb: torch's own test database (op_db: every op torch tests, on its samples and reference inputs) run
# through teachgrad, written to docs/op-coverage.md. tests/test_op_db.py runs the samples on every make test.
opdb: export OMP_NUM_THREADS = 1
opdb: $(STAMP)
	$(PY) scripts/op_coverage.py

test-unit: setup
	$(PYTEST) $(PARALLEL) tests -m "not browser and not notebooks"

# The series as a static site in build/book/ (open build/book/index.html), from the stored outputs:
# nothing is re-run, so run `make notebooks` first after changing teachgrad or a notebook.
book: $(STAMP)
	$(PY) scripts/build_book.py

# The book built, served on 127.0.0.1 and read in headless Chromium (axe-core checks its accessibility);
# skipped, saying why, without Chromium.
test-book: export OMP_NUM_THREADS = 1
test-book: setup setup-browser setup-axe
	$(PY) -m pytest tests/test_book.py -q -p no:cacheprovider -m book

# JupyterLab serves a working copy, work/ (git-ignored): made from notebooks/ on first run, and a notebook
# added to the series later is copied in; a learner's edits are never overwritten (`make lab-reset` starts again).
# Bound to this machine only, with token auth left on (open the URL with the token it prints); its own config
# folder (build/lab-config) turns off the announcements pop-up.
WORK := work
LAB_CONFIG := build/lab-config

lab: $(STAMP)
	@scripts/system-package.sh dot graphviz "Graphviz, draws computation graphs" || \
		echo "Continuing without dot: graphs will show as DOT text until Graphviz is installed."
	$(PY) scripts/lab_setup.py $(WORK) $(LAB_CONFIG)
	JUPYTER_CONFIG_DIR=$(LAB_CONFIG) $(VENV)/bin/jupyter lab --ip=127.0.0.1 --port=$(LAB_PORT) --no-browser \
		$(if $(filter 0,$(shell id -u)),--allow-root) $(WORK)/

# Throw away the working copy (your answers in work/ are lost) and make it again from notebooks/.
lab-reset:
	rm -rf $(WORK)
	$(PY) scripts/lab_setup.py $(WORK) $(LAB_CONFIG)

# The series as an nbgrader course in build/course/ (solutions left out, each check an autograded test worth
# 1 point) and its student edition, what `nbgrader generate_assignment` releases, in build/student/; and the
# Jupyter kernel `teachgrad` (this .venv's Python), installed for the user, which their notebooks select
# (docs/grading.md: run nbgrader with its virtualenv's bin on PATH).
# After adding or changing an exercise, mark it in notebooks/ (metadata only, idempotent):
#   $(PY) scripts/make_student.py --mark
student: $(STAMP)
	$(PY) scripts/make_student.py

clean:
	rm -rf $(VENV) build .pytest_cache .hypothesis

# Smoke test in a real browser: JupyterLab (as `make lab` starts it) in headless Chromium runs every
# notebook; skipped, saying what to install, when Chromium or Playwright is missing.
test-browser: export OMP_NUM_THREADS = 1
test-browser: setup setup-browser
	$(PY) -m pytest tests/browser -q -p no:cacheprovider -m browser
