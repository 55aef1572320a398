# cronplane — two commands on a fresh machine: `make run` and `make test`.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAMP := $(VENV)/.installed
RUN_STAMP := $(VENV)/.installed-runtime
FRONTEND_STAMP := frontend/node_modules/.installed

.PHONY: help run test test-fast ha-test ha-deps schema-sql lock lint typecheck imports test-backend test-frontend test-e2e test-checks test-side \
        check-frontend test-vitest bench chaos frontend system-deps openapi openapi-check clean

help:
	@echo "make run    install what is needed, migrate, serve API + console + execution plane"
	@echo "make test   lint, type checks, import contracts, every test suite"
	@echo "make lock   regenerate backend/requirements.lock after changing backend dependencies"
	@echo "make schema-sql  regenerate backend/src/cronplane/storage/sql/schema.sql after changing a migration"
	@echo "make test-fast  the edit loop: unit + integration tests, no browser, no process (< 2 min)"
	@echo "make bench  benchmarks, AREA=queue|scheduler|api|history|… for one (figures: bench/RESULTS.md)"
	@echo "make chaos  the full fault-injection suite, and the property tests at full examples"
	@echo "make ha-test  the failover nemesis on deploy/ha (etcd + Patroni + PgBouncer), CRONPLANE_HA_ROUNDS=30"

# uv installs the Python side of a clean clone in 3-10 s, where pip took ~20 s (19 CPU-s) that
# `make test` waited on before starting anything; pip remains the way when uv cannot be had or
# fails (each reads the package index its own way: uv ignores pip.conf, and honours SSL_CERT_FILE).
PY_INSTALL = { $(PIP) install --quiet uv && $(VENV)/bin/uv pip install --quiet --python $(PY) $(1); } \
	|| { echo "uv failed: installing with pip"; $(PIP) install --quiet --upgrade pip \
	     && $(PIP) install --quiet $(1); }

$(STAMP): backend/pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(call PY_INSTALL,-e 'backend[dev]')
	@touch $(STAMP)

# `make run` needs only the runtime dependencies; the dev/test ones come with `make test`.
$(RUN_STAMP): backend/pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(call PY_INSTALL,-e backend)
	@touch $(RUN_STAMP)

$(FRONTEND_STAMP): frontend/package.json frontend/package-lock.json
	cd frontend && npm ci --no-audit --no-fund --loglevel=error
	@touch $(FRONTEND_STAMP)

# The console is built once per change of its sources: test-backend, test-e2e and `make run` all
# ask for it, and only the first of them in a `make test` pays for the build.
FRONTEND_DIST := frontend/dist/index.html
FRONTEND_SOURCES := $(shell find frontend/src frontend/public -type f 2>/dev/null) \
	frontend/index.html frontend/vite.config.ts frontend/tsconfig.json frontend/openapi.json

$(FRONTEND_DIST): $(FRONTEND_STAMP) $(FRONTEND_SOURCES)
	cd frontend && npm run build
	@touch $(FRONTEND_DIST)

frontend: $(FRONTEND_DIST)

# Debian packages the test suites need (Caddy and ShellCheck for the deploy files, Chromium for
# end-to-end, PgBouncer for the pooled-connection tests, the distribution's Postgres server — 15 on
# Debian 12 — for the failover test's primary and standby, built with initdb and pg_basebackup).
system-deps:
	@missing=""; \
	command -v caddy >/dev/null || missing="$$missing caddy"; \
	command -v shellcheck >/dev/null || missing="$$missing shellcheck"; \
	command -v promtool >/dev/null || missing="$$missing prometheus"; \
	command -v chromium >/dev/null || missing="$$missing chromium"; \
	test -x /usr/sbin/pgbouncer || missing="$$missing pgbouncer"; \
	ls /usr/lib/postgresql/*/bin/pg_basebackup >/dev/null 2>&1 || missing="$$missing postgresql"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing:$$missing"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null) \
	      || { echo "make: could not install$$missing with apt-get"; exit 1; }; \
	  else \
	    echo "make: missing$$missing — run: sudo apt-get install -y$$missing"; exit 1; \
	  fi; \
	fi

# The Debian packages of deploy/ha's rehearsal cluster (make ha-test): Postgres, PgBouncer, etcd,
# Patroni, HAProxy.
ha-deps:
	@missing=""; \
	ls /usr/lib/postgresql/*/bin/pg_basebackup >/dev/null 2>&1 || missing="$$missing postgresql"; \
	test -x /usr/sbin/pgbouncer || missing="$$missing pgbouncer"; \
	command -v etcd >/dev/null || missing="$$missing etcd-server"; \
	command -v etcdctl >/dev/null || missing="$$missing etcd-client"; \
	command -v patroni >/dev/null || missing="$$missing patroni"; \
	command -v haproxy >/dev/null || missing="$$missing haproxy"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing:$$missing"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null) \
	      || { echo "make: could not install$$missing with apt-get"; exit 1; }; \
	  else \
	    echo "make: missing$$missing — run: sudo apt-get install -y$$missing"; exit 1; \
	  fi; \
	fi

# The failover nemesis (not part of `make test`): deploy/ha's cluster, two serve + two worker
# through PgBouncer, switchover / failover / kill -9 of the primary in turns. CRONPLANE_HA_ROUNDS
# (default 30: ten of each); figures in bench/RESULTS.md.
ha-test: ha-deps $(STAMP)
	cd backend && ../$(VENV)/bin/pytest -q -p no:cacheprovider -s -m ha tests/ha

# backend/requirements.lock: the runtime dependencies' closure with hashes, which the image
# installs and CI's pip-audit reads; regenerate it after changing backend/pyproject.toml's
# dependencies (backend/tests/deploy/test_requirements_lock.py fails until then).
lock: $(STAMP)
	$(PIP) install --quiet pip-tools
	cd backend && ../$(VENV)/bin/pip-compile --quiet --generate-hashes --strip-extras \
	    --no-emit-index-url --no-emit-find-links -o requirements.lock pyproject.toml

# `make run DEMO=1`: first seed a real-looking day (cronplane seed-demo --day; once per database).
run: $(RUN_STAMP)
	@if [ -f frontend/package.json ]; then $(MAKE) --no-print-directory frontend; fi
	$(VENV)/bin/cronplane migrate
	@if [ -n "$(DEMO)" ]; then $(VENV)/bin/cronplane seed-demo --day; fi
	$(VENV)/bin/cronplane serve

lint: $(STAMP)
	$(VENV)/bin/ruff check --config backend/pyproject.toml backend migrations bench e2e

typecheck: $(STAMP)
	cd backend && ../$(VENV)/bin/mypy

imports: $(STAMP)
	cd backend && ../$(VENV)/bin/lint-imports --config pyproject.toml

# The packaging test puts the built console into a wheel: build it first (it reuses frontend/dist).
# The backend suite on BACKEND_WORKERS processes (they share the test server; tests/conftest.py
# keeps their databases apart), then the few `serial` tests alone, collected from the files that
# spell `mark.serial` only (collecting all 2,300 tests again for one cost 9-12 CPU-s; conftest.py
# refuses a serial test marked elsewhere). --dist loadgroup: unit and integration tests are
# scheduled one by one; a file that starts processes or servers per module (acceptance/, deploy/,
# security/) stays whole on one worker (tests/conftest.py marks it).
# Bytecode is written even where the environment says not to (PYTHONDONTWRITEBYTECODE): the
# suite starts a few hundred `cronplane` processes, each compiling what it imports without it
# (~0.15 CPU-s of 1.2 for serve's), and pytest keeps its rewritten test modules only there.
# The slowest 40 are printed: bench/RESULTS.md keeps the table.
BACKEND_WORKERS ?= 3
PYTEST_BACKEND := ../$(VENV)/bin/pytest -q -p no:cacheprovider --hypothesis-profile=dev
test-backend: $(STAMP)
	@if [ -f frontend/package.json ]; then $(MAKE) --no-print-directory frontend; fi
	cd backend && unset PYTHONDONTWRITEBYTECODE && $(PYTEST_BACKEND) -m "not chaos and not serial and not ha" \
	    -n $(BACKEND_WORKERS) --dist loadgroup --durations=40; parallel=$$?; \
	  $(PYTEST_BACKEND) -m "serial and not chaos" \
	    $$(grep -rlw --include='test_*.py' 'mark\.serial' tests); serial=$$?; \
	  exit $$(( parallel || serial ))

# The edit loop: what needs neither a browser nor a process of its own (unit + integration),
# workers stealing work from each other (no test there shares a process), the few `slow` ones
# left to make test. Four workers on two cores: the tests wait more than they compute (a third
# of their time is fixtures: cloning and dropping databases, each clone two checkpoints of the
# server): four took 200 s where two took 404 s, one after the other at load 11-14
# (bench/RESULTS.md, 2026-12-06).
FAST_WORKERS ?= 4
test-fast: $(STAMP)
	cd backend && $(PYTEST_BACKEND) -m "not chaos and not serial and not slow" \
	    -n $(FAST_WORKERS) --dist worksteal --durations=15 tests/unit tests/integration

# The console's API types come from the backend's OpenAPI document: fail when either is stale.
openapi-check: $(STAMP)
	@$(VENV)/bin/cronplane openapi --output .openapi-now.json 2>/dev/null
	@if ! cmp -s .openapi-now.json frontend/openapi.json; then \
	  rm -f .openapi-now.json; \
	  echo "frontend/openapi.json is stale: run \`make openapi\` then \`cd frontend && npm run gen:api\`"; exit 1; \
	fi; rm -f .openapi-now.json

# The console's static checks (API types current, tsc, ESLint), then its Vitest suite.
check-frontend: openapi-check
	@if [ -f frontend/package.json ]; then \
	  $(MAKE) --no-print-directory $(FRONTEND_STAMP) && cd frontend && npm run gen:api:check \
	    && npm run typecheck && npm run lint; \
	else echo "no frontend yet"; fi

test-vitest:
	@if [ -f frontend/package.json ]; then \
	  $(MAKE) --no-print-directory $(FRONTEND_STAMP) && cd frontend && npx vitest run; \
	else echo "no frontend yet"; fi

test-frontend: check-frontend
	@$(MAKE) --no-print-directory test-vitest

# One server (and Postgres) per xdist worker; the flows mostly wait on the console's polls and the
# scheduler's clock, so three workers overlap those waits on two cores. The OIDC module's own
# stack stays on one worker (xdist_group, --dist loadgroup); every other flow, the seeded day's
# included, is scheduled on its own (each server starts on a copy of a data dir the run migrated
# once, e2e/data_templates.py; a worker that runs a seeded-day flow seeds a server of its own).
# The slowest 15 are printed; bytecode is written, as in test-backend.
E2E_WORKERS ?= 3
test-e2e: $(STAMP)
	@if [ -d e2e ] && ls e2e/test_*.py >/dev/null 2>&1; then \
	  $(MAKE) --no-print-directory frontend && unset PYTHONDONTWRITEBYTECODE && \
	  $(VENV)/bin/pytest -q -p no:cacheprovider -n $(E2E_WORKERS) --dist loadgroup --durations=15 e2e; \
	else echo "no e2e suite yet"; fi

# The static checks of both halves: they time nothing, so they may share the CPU with a suite.
test-checks: lint typecheck imports check-frontend

# The lane beside the backend suite: the static checks, then Vitest. The backend suite keeps
# ~1.35 of two cores busy for ~5 minutes (it mostly waits on Postgres and the clock); the checks
# take ~1 minute of that and Vitest ~40 s (46 CPU-s), which used to run alone after it. Vitest
# timed out beside the suite only on boxes where other suites ran too (load 17-20, 2026-12-06);
# it passed at load 4-6 in 40 s (2026-12-07), and its waits allow for that (vite.config.ts).
# Vitest runs even when a check failed.
test-side:
	@failed=0; $(MAKE) --no-print-directory test-checks || failed=1; \
	  $(MAKE) --no-print-directory test-vitest || failed=1; exit $$failed

# `make test`: the console is built once, first (the backend's packaging test and the e2e suite
# both serve frontend/dist, and two stages must not build it at once); then the backend suite
# beside the static checks and Vitest (test-side); then the e2e suite alone, since its UI waits
# are the ones a busy CPU hurts most and it keeps both cores busy on its own.
# Each stage's output is printed whole when it ends (--output-sync), every stage runs even when an
# earlier one failed, and make test fails when any did.
# The Python install and the console's (npm ci, then its build) are independent: on a clean clone
# they run side by side.
test: system-deps
	@$(MAKE) --no-print-directory -j2 $(STAMP) $(FRONTEND_DIST)
	@failed=""; \
	$(MAKE) --no-print-directory -j2 --output-sync=target --keep-going test-backend test-side \
	  || failed="$$failed test-backend/test-checks/test-vitest"; \
	$(MAKE) --no-print-directory test-e2e || failed="$$failed test-e2e"; \
	if [ -n "$$failed" ]; then echo "make test: failed:$$failed (their output is above)"; exit 1; fi

# `make bench` runs every area (history builds 10M rows: long); `make bench AREA=api` runs one.
AREA ?= all
bench: $(STAMP)
	$(PIP) install --quiet -e 'backend[dev,bench]'
	$(PY) -m bench $(AREA)

# The long fault-injection runs, then every property test at its full count of examples.
chaos: $(STAMP)
	cd backend && ../$(VENV)/bin/pytest -q -m chaos -p no:cacheprovider; chaos=$$?; \
	  ../$(VENV)/bin/pytest -q -p no:cacheprovider --hypothesis-profile=ci-full \
	    tests/unit/domain tests/integration/api/test_api_fuzz.py tests/security/test_fuzz_per_role.py; \
	  full=$$?; exit $$(( chaos || full ))

# The document, and the typed Python client's models generated from it (the console's TypeScript
# types follow with `cd frontend && npm run gen:api`).
openapi: $(STAMP)
	$(VENV)/bin/cronplane openapi --output frontend/openapi.json
	$(PY) scripts/gen_client_models.py

clean:
	rm -rf $(VENV) frontend/node_modules frontend/dist

# The database program as the migrations leave it (every table, function and trigger), for
# reading and review: backend/src/cronplane/storage/sql/schema.sql. Regenerate after changing or
# rebasing a migration; `make test` fails while it is stale (tests/integration/storage/test_schema_sql.py).
schema-sql: $(STAMP)
	$(PY) scripts/gen_schema_sql.py
