# Developer entry points. `make` alone lists them.

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
# Extra flags for go test, e.g. make test TESTFLAGS='-run TestStore -v'.
TESTFLAGS ?=
# Packages for go test, e.g. make test PKGS=./directory/...
PKGS ?= ./...
# Extra arguments for lmosdir serve, e.g. make run ARGS='--listen :9090'.
ARGS ?=

.DEFAULT_GOAL := help
.PHONY: help build run test bench lint clean

help: ## List the targets
	@awk 'BEGIN { FS = ":.*## " } /^[a-z][a-z_-]*:.*## / { printf "  %-6s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)

build: ## Build bin/lmosdir, stamped with the git version
	go build -ldflags "-X main.version=$(VERSION)" -o bin/lmosdir ./cmd/lmosdir

# With no LMOSDIR_DATABASE_URL the server keeps its data in the embedded store,
# ./data/lmosdir.db (LMOSDIR_DATA_DIR or --data-dir move it).
run: build ## Serve on http://localhost:8080 with the embedded store in ./data (ARGS)
	./bin/lmosdir serve --log-format text $(ARGS)

# Tests built with //go:build !race (the 10,000-TD search corpus, which the race detector
# would slow to minutes) run in the second, race-free pass.
test: ## Run the tests with -race, then the race-free ones, against a throwaway PostgreSQL (TESTFLAGS, PKGS)
	scripts/with-postgres.sh sh -c 'go test -race -count=1 $(TESTFLAGS) $(PKGS) && go test -count=1 $(TESTFLAGS) -run GeneratedCorpus ./httpapi/'

bench: ## Benchmark both stores and write bench/results/latest.md (N, DURATION)
	scripts/bench.sh

lint: ## Check gofmt, go vet and golangci-lint
	@unformatted="$$(gofmt -l .)"; \
	if [ -n "$$unformatted" ]; then echo "gofmt -l lists files to format:"; echo "$$unformatted"; exit 1; fi
	go vet ./...
	go tool golangci-lint run --allow-parallel-runners ./...

clean: ## Remove build and coverage output
	rm -rf bin/ coverage.out coverage.html *.coverprofile
