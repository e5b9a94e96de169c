# Switchyard developer tasks. `make` (or `make help`) lists them.
# Every variable below can be overridden from the environment or the command line.

SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help
MAKEFLAGS += --no-print-directory

# Services the tests talk to (docs/reference/code-style.md, §10 Testing); .ci/services.sh provides them on loopback.
TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable
TEST_REDIS_URL ?= redis://127.0.0.1:6379/0
export TEST_DATABASE_URL TEST_REDIS_URL

# Pinned tools. oapi-codegen is pinned by the `tool` line in go.mod; sqlc,
# Redocly and Spectral run at a fixed version without entering go.mod or a package.json.
SQLC ?= go run github.com/sqlc-dev/sqlc/cmd/sqlc@v1.31.1
REDOCLY ?= npx --yes @redocly/cli@2.77.0
SPECTRAL ?= npx --yes @stoplight/spectral-cli@6.16.3

# Fuzz targets as package:FuzzName, e.g. ./sdkgo/eval:FuzzEvaluate; each runs FUZZTIME.
FUZZ_TARGETS ?= ./sdkgo/eval:FuzzEvaluate ./sdkgo/internal/sse:FuzzReader ./server/auth:FuzzOpen ./server/core:FuzzApplyMergePatch ./sdkgo/eval/check:FuzzRule ./server/httpapi:FuzzCountItems
# A count, not a duration: go1.26's fuzz coordinator can report its own
# -fuzztime deadline as a failure ("context deadline exceeded", no crasher;
# golang/go#75804, fixed in go1.27). A count has no deadline to race.
FUZZTIME ?= 300000x

.PHONY: help generate check-generated vet-sql build build-server build-web services run test test-short \
	test-go test-web test-e2e fuzz lint lint-api sizes tidy-check migration ci

help: ## Show this list of targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-16s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

generate: web/node_modules/.package-lock.json ## Regenerate gen/ (oapi-codegen), db/ (sqlc) and the dashboard's API types
	go tool oapi-codegen -config oapi-codegen.yaml api/openapi.yaml
	mkdir -p gen/apiclient
	go tool oapi-codegen -generate types,client -package apiclient -o gen/apiclient/client.gen.go api/openapi.yaml
	$(SQLC) generate
	cd web && npm run --silent generate

check-generated: generate ## Fail if generated code or go.mod/go.sum are stale
	@git diff --exit-code -- gen db web/src/api || { echo "generated code is stale: run 'make generate' and commit" >&2; exit 1; }
	@untracked="$$(git status --porcelain -- gen db web/src/api)"; \
	if [[ -n "$$untracked" ]]; then echo "$$untracked"; echo "uncommitted files in gen/ or db/: commit or delete them" >&2; exit 1; fi
	go mod tidy -diff
	cd server/ofrep/providertest && go mod tidy -diff

vet-sql: ## Run sqlc vet (rules from sqlc.yaml) against the test database
	$(SQLC) vet

build: build-server build-web ## Build the server (bin/switchyard) and the dashboard (public/)

# Static (no cgo) with the time-zone database and fallback root certificates
# built in (server/app/builtin.go): the same file runs on a host and as the
# whole of the container image (deploy/Containerfile).
build-server: ## Build the server binary to bin/switchyard (static)
	CGO_ENABLED=0 go build -trimpath -o bin/switchyard .

# npm ci reinstalls web/node_modules whenever package-lock.json changes.
web/node_modules/.package-lock.json: web/package-lock.json
	cd web && npm ci --no-audit --no-fund --loglevel=error
	touch $@

build-web: web/node_modules/.package-lock.json ## Type-check and build the dashboard into public/
	cd web && npm run --silent build

services: ## Start local PostgreSQL and Redis (installs them if missing)
	bash .ci/services.sh

run: services build-web ## Run the server and dashboard locally on :3000 (COOKIE_SECURE=false unless set)
	COOKIE_SECURE="$${COOKIE_SECURE:-false}" go run .

test: services ## Run every test: Go (race detector), dashboard components, dashboard end to end, OpenFeature JS providers, MCP Inspector, the Terraform provider under OpenTofu
	$(MAKE) test-go
	$(MAKE) test-web
	$(MAKE) test-e2e
	$(MAKE) test-openfeature-js
	$(MAKE) test-mcp
	$(MAKE) test-terraform

test-go: ## Go tests with the race detector against local services (and the official OFREP provider's module)
	go test -race -count=1 -timeout 25m ./...
	cd server/ofrep/providertest && go vet ./... && go test -race -count=1 ./...

test-web: web/node_modules/.package-lock.json ## Dashboard component tests (Vitest)
	cd web && npx vitest run

test-e2e: build ## Dashboard end-to-end tests: real server and database, headless Chromium (playwright-core), a real OpenID Provider
	go build -o bin/testop ./server/internal/testop/cmd/testop
	cd web && node --test --test-reporter=spec e2e/

# npm ci reinstalls each folder's node_modules whenever its package-lock.json changes.
test/openfeature-js/node_modules/.package-lock.json: test/openfeature-js/package-lock.json
	cd test/openfeature-js && npm ci --no-audit --no-fund --loglevel=error
	touch $@

docs/examples/web/node_modules/.package-lock.json: docs/examples/web/package-lock.json
	cd docs/examples/web && npm ci --no-audit --no-fund --loglevel=error
	touch $@

.PHONY: test-openfeature-js

test-openfeature-js: build-server test/openfeature-js/node_modules/.package-lock.json docs/examples/web/node_modules/.package-lock.json ## The official OpenFeature JS providers (Node; the browser example in headless Chromium) against a real server
	cd test/openfeature-js && npm test

test/mcp-inspector/node_modules/.package-lock.json: test/mcp-inspector/package-lock.json
	cd test/mcp-inspector && npm ci --no-audit --no-fund --loglevel=error
	touch $@

.PHONY: test-mcp

test-mcp: build-server test/mcp-inspector/node_modules/.package-lock.json ## switchyard mcp driven by the official MCP Inspector's CLI mode against a real server
	cd test/mcp-inspector && npm test

# OpenTofu, built from source through the Go module proxy (its go.mod has a
# replace, so go install cannot) and kept under bin/tools.
TOFU_VERSION := v1.12.6
TOFU := bin/tools/tofu-$(TOFU_VERSION)

$(TOFU):
	bash .ci/build-tofu.sh $(TOFU_VERSION) $@

.PHONY: test-terraform

test-terraform: $(TOFU) ## The Terraform provider's acceptance tests: OpenTofu (built from source) against a real server
	cd terraform && go vet ./... && TF_ACC=1 TF_ACC_TERRAFORM_PATH="$(CURDIR)/$(TOFU)" TF_ACC_PROVIDER_NAMESPACE=hashicorp \
		TF_CLI_CONFIG_FILE=/dev/null go test -race -count=1 -timeout 20m ./...

test-short: ## Run the tests that need no services (go test -short)
	go test -short ./...

fuzz: ## Run each FUZZ_TARGETS entry (pkg:FuzzName) for FUZZTIME executions
	@if [[ -z "$(strip $(FUZZ_TARGETS))" ]]; then echo "no fuzz targets configured (set FUZZ_TARGETS)"; fi
	@for target in $(FUZZ_TARGETS); do \
		pkg="$${target%%:*}"; name="$${target##*:}"; \
		echo "fuzz $$name in $$pkg, $(FUZZTIME)"; \
		go test -run='^$$' -fuzz="^$$name\$$" -fuzztime=$(FUZZTIME) "$$pkg"; \
	done

lint: ## gofmt (must list nothing), go vet, and golangci-lint when installed
	@files="$$(git ls-files --cached --others --exclude-standard -- '*.go')"; \
	if [[ -n "$$files" ]]; then \
		unformatted="$$(gofmt -l $$files)"; \
		if [[ -n "$$unformatted" ]]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi; \
	fi
	go vet ./...
	@if command -v golangci-lint >/dev/null 2>&1; then golangci-lint run ./...; else echo "golangci-lint not installed; skipped"; fi

lint-api: ## Lint api/openapi.yaml with Redocly and Spectral (api/.spectral.yaml; any warning fails)
	$(REDOCLY) lint api/openapi.yaml
	$(SPECTRAL) lint --ruleset api/.spectral.yaml --fail-severity warn api/openapi.yaml

sizes: ## Lines per package and methods per type (hand-written, non-test Go); fails past 3,000 lines or 45 methods (httpapi excepted)
	bash .ci/sizes.sh

tidy-check: ## Fail if go.mod/go.sum are not tidy
	go mod tidy -diff
	cd server/ofrep/providertest && go mod tidy -diff

migration: ## Create the next migrations/000NN_NAME.sql (make migration NAME=add_widgets)
	@[[ -n "$(NAME)" ]] || { echo "usage: make migration NAME=snake_case_name" >&2; exit 1; }
	@[[ "$(NAME)" =~ ^[a-z0-9_]+$$ ]] || { echo "NAME must match [a-z0-9_]+" >&2; exit 1; }
	@mkdir -p migrations; \
	last="$$(ls migrations | sed -nE 's/^([0-9]+)_.*\.sql$$/\1/p' | sort -n | tail -n 1)"; \
	file="$$(printf 'migrations/%05d_%s.sql' "$$((10#$${last:-0} + 1))" "$(NAME)")"; \
	printf -- '-- +goose Up\n-- Applied by "goose up"; runs at server start-up.\n\n-- +goose Down\n-- Undoes the Up section.\n' >"$$file"; \
	echo "created $$file"

ci: check-generated tidy-check lint lint-api sizes test ## Everything CI checks

.PHONY: bench-eval vectors

bench-eval: ## Benchmark sdkgo/eval against LaunchDarkly's evaluator, side by side (bench/evalpeers)
	@mkdir -p bin
	cd bench/evalpeers && GOFLAGS=-mod=mod go test -run '^$$' -bench . -benchmem -count 10 . | tee ../../bin/bench-eval.txt
	cd bench/evalpeers && go run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da -col /evaluator ../../bin/bench-eval.txt

vectors: ## Regenerate sdkgo/testdata/vectors with the independent MurmurHash3 of sdkgo/testdata/gen (Node)
	cd sdkgo/testdata/gen && npm ci --no-audit --no-fund && node generate.js

.PHONY: bench-ingest

BENCH_INGEST_FLAGS ?=

bench-ingest: ## Measure impression ingest (raw COPY vs HTTP) and the measurement queries (bench/ingest; BENCH_INGEST_FLAGS=-help)
	@mkdir -p bin
	cd bench/ingest && GOFLAGS=-mod=mod go run . -db "$(TEST_DATABASE_URL)" $(BENCH_INGEST_FLAGS) | tee ../../bin/bench-ingest.txt

.PHONY: bench-audit

BENCH_AUDIT_FLAGS ?=

bench-audit: ## Measure what the audit trail adds to a flag write, and its reads and verification over 1,000,000 entries (bench/audit; BENCH_AUDIT_FLAGS=-help)
	@mkdir -p bin
	cd bench/audit && GOFLAGS=-mod=mod go run . -db "$(TEST_DATABASE_URL)" $(BENCH_AUDIT_FLAGS) | tee ../../bin/bench-audit.txt

.PHONY: bench-agree

BENCH_AGREE_FLAGS ?=

bench-agree: ## Measure what agreement between instances adds to a flag write and to the read paths, with 2 and 3 instances (bench/agree; BENCH_AGREE_FLAGS=-help)
	@mkdir -p bin
	cd bench/agree && GOFLAGS=-mod=mod go run . -db "$(TEST_DATABASE_URL)" -redis "$(TEST_REDIS_URL)" $(BENCH_AGREE_FLAGS) | tee ../../bin/bench-agree.txt

.PHONY: bench-results

BENCH_RESULTS_FLAGS ?=

bench-results: ## Measure experiment results at 100,000 and 1,000,000 exposed users: kept counts and recomputed, fresh and reset statistics, under ingest (bench/results; BENCH_RESULTS_FLAGS=-help)
	@mkdir -p bin
	cd bench/results && GOFLAGS=-mod=mod go run . -db "$(TEST_DATABASE_URL)" $(BENCH_RESULTS_FLAGS) | tee ../../bin/bench-results.txt

.PHONY: bench-ascode

BENCH_ASCODE_FLAGS ?=

bench-ascode: ## Measure flags as code on 1,000 flags in 3 environments: validate, diff, apply, a no-op apply (bench/ascode; BENCH_ASCODE_FLAGS=-help)
	@mkdir -p bin
	cd bench/ascode && GOFLAGS=-mod=mod go run . -db "$(TEST_DATABASE_URL)" $(BENCH_ASCODE_FLAGS) | tee ../../bin/bench-ascode.txt

.PHONY: bench-bulkhead

BENCH_BULKHEAD_FLAGS ?=

bench-bulkhead: ## Measure flag writes idle and while 20 measurement reads are held up (bench/bulkhead; BENCH_BULKHEAD_FLAGS=-help)
	@mkdir -p bin
	cd bench/bulkhead && GOFLAGS=-mod=mod go run . -db "$(TEST_DATABASE_URL)" $(BENCH_BULKHEAD_FLAGS) | tee ../../bin/bench-bulkhead.txt

.PHONY: bench-stream

BENCH_STREAM_FLAGS ?=

bench-stream: ## Measure streaming (10,000 SSE clients, 1 and 2 instances) and /flags/snapshot against bare Go baselines (bench/stream; run as root or raise ulimit -n; BENCH_STREAM_FLAGS=-help)
	@mkdir -p bin
	cd bench/stream && { (( $$(ulimit -n) >= 16384 )) || ulimit -n 65536 2>/dev/null || echo "warning: ulimit -n is $$(ulimit -n), below the 16384 that 10,000 clients need: run as root or raise it" >&2; } && \
		go run . -clients 10000 $(BENCH_STREAM_FLAGS) | tee ../../bin/bench-stream.txt

.PHONY: bench-stream-join

bench-stream-join: ## Measure new streams, snapshots and /health while 10,000 streams receive a burst of 20 writes, and the CPU per delivered update (bench/stream -mode join; BENCH_STREAM_FLAGS=-help)
	@mkdir -p bin
	cd bench/stream && { (( $$(ulimit -n) >= 16384 )) || ulimit -n 65536 2>/dev/null || echo "warning: ulimit -n is $$(ulimit -n), below the 16384 that 10,000 clients need: run as root or raise it" >&2; } && \
		go run . -mode join -clients 10000 $(BENCH_STREAM_FLAGS) | tee ../../bin/bench-stream-join.txt

.PHONY: bench-ofrep

bench-ofrep: ## Measure OFREP remote evaluation against a bare 120-byte handler, a 200-flag bulk evaluation, and 10,000 OFREP event streams against 10,000 /stream clients (bench/stream -mode ofrep; BENCH_STREAM_FLAGS=-help)
	@mkdir -p bin
	cd bench/stream && { (( $$(ulimit -n) >= 16384 )) || ulimit -n 65536 2>/dev/null || echo "warning: ulimit -n is $$(ulimit -n), below the 16384 that 10,000 clients need: run as root or raise it" >&2; } && \
		go run . -mode ofrep -clients 10000 -snapshot-rounds 3 -runs 6 $(BENCH_STREAM_FLAGS) | tee ../../bin/bench-ofrep.txt

.PHONY: bench-analytics

BENCH_ANALYTICS_FLAGS ?= -short

bench-analytics: ## Measure analytics at production traffic: SDK rows per evaluation and exactness; raw COPY, the no-fold ceiling, gated HTTP ingest and the fold, each from a fresh copy of the same state, with CPU and WAL per row; reads under load (bench/analytics; default -short, a few minutes; the full sizes, 3 rounds: BENCH_ANALYTICS_FLAGS=-full; -help)
	@mkdir -p bin
	cd bench/analytics && BENCH_ANALYTICS_COMMAND="make bench-analytics BENCH_ANALYTICS_FLAGS='$(BENCH_ANALYTICS_FLAGS)'" \
		GOFLAGS=-mod=mod go run . -db "$(TEST_DATABASE_URL)" $(BENCH_ANALYTICS_FLAGS) | tee ../../bin/bench-analytics.txt

.PHONY: bench-export

BENCH_EXPORT_FLAGS ?=

bench-export: ## Measure the raw export: 5,000,000 impressions streamed over HTTP, plain and gzip, rows/s and the server's peak memory, and its query plans (bench/export; about 10 min; BENCH_EXPORT_FLAGS=-help)
	@mkdir -p bin
	cd bench/export && BENCH_EXPORT_COMMAND="make bench-export BENCH_EXPORT_FLAGS='$(BENCH_EXPORT_FLAGS)'" \
		GOFLAGS=-mod=mod go run . -db "$(TEST_DATABASE_URL)" $(BENCH_EXPORT_FLAGS) | tee ../../bin/bench-export.txt

# ---------------------------------------------------------------- Deployment (deploy/, docs/deployment.md)

.PHONY: image image-smoke deploy-check

IMAGE ?= localhost/switchyard
# The product version: the OpenAPI document's info.version.
IMAGE_VERSION ?= $(shell awk '/^info:/ {i = 1; next} i && /^  version:/ {print $$2; exit}' api/openapi.yaml)
IMAGE_TAG ?= $(IMAGE_VERSION)
# More tags of the same image (deploy/compose.yaml runs localhost/switchyard:latest).
IMAGE_EXTRA_TAGS ?= latest
IMAGE_REVISION ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
IMAGE_SOURCE ?= https://github.com/switchyard/switchyard
image: build ## Build the container image localhost/switchyard:<version> (IMAGE, IMAGE_TAG) from deploy/Containerfile with buildah
	@command -v buildah >/dev/null || { echo "buildah not found: apt-get install buildah (or: docker build -f deploy/Containerfile .)" >&2; exit 1; }
	buildah bud --isolation chroot -f deploy/Containerfile \
		--build-arg VERSION=$(IMAGE_VERSION) --build-arg REVISION=$(IMAGE_REVISION) --build-arg SOURCE=$(IMAGE_SOURCE) \
		-t $(IMAGE):$(IMAGE_TAG) $(foreach t,$(IMAGE_EXTRA_TAGS),-t $(IMAGE):$(t)) .

image-smoke: services ## Build the image, run two containers on local PostgreSQL and Redis, check health, streams, SIGTERM, non-root
	bash .ci/image-smoke.sh

deploy-check: ## Validate deploy/compose.yaml (docker-compose config) and the Helm chart (helm lint, kubectl-validate)
	bash .ci/deploy-check.sh
