# teachgrad: `make lab` opens the notebooks, `make test` runs every test. Both set everything up first.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.teachgrad-installed
LAB_PORT ?= 8888

.PHONY: setup setup-dot setup-browser test test-unit test-notebooks test-browser lab notebooks bench clean

setup: $(STAMP) setup-dot

$(STAMP): pyproject.toml constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check torch==2.13.0 -c constraints.txt
	$(PY) -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[test,notebooks]'
	touch $(STAMP)

# Graphviz's `dot` draws the graphs; without it teachgrad.viz still gives DOT text.
setup-dot:
	@scripts/system-package.sh dot graphviz "Graphviz, draws computation graphs"

# Chromium for the browser test; when it cannot be installed the browser test is skipped, saying why.
setup-browser:
	@scripts/system-package.sh chromium chromium "headless browser for make test-browser" || true

test: setup setup-browser
	$(PY) -m pytest tests -q -p no:cacheprovider

test-unit: setup
	$(PY) -m pytest tests -q -p no:cacheprovider --ignore=tests/test_notebooks_nbval.py -m "not browser"

lab: setup
	$(VENV)/bin/jupyter lab --ip=127.0.0.1 --port=$(LAB_PORT) --no-browser notebooks/

clean:
	rm -rf $(VENV) build .pytest_cache .hypothesis
