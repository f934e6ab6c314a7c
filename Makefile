# Developer entry points. `make` alone lists them.

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
# Extra flags for go test, e.g. make test TESTFLAGS='-run TestStore -v'.
TESTFLAGS ?=
# Packages for go test, e.g. make test PKGS=./directory/...
PKGS ?= ./...
# Extra arguments for lmosdir serve, e.g. make run ARGS='--listen :9090'.
ARGS ?=

.DEFAULT_GOAL := help
.PHONY: help build run test lint clean

help: ## List the targets
	@awk 'BEGIN { FS = ":.*## " } /^[a-z][a-z_-]*:.*## / { printf "  %-6s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)

build: ## Build bin/lmosdir, stamped with the git version
	go build -ldflags "-X main.version=$(VERSION)" -o bin/lmosdir ./cmd/lmosdir

# Without LMOSDIR_DATABASE_URL the server gets a PostgreSQL cluster that lives
# as long as it does. LMOSDIR_TEST_DATABASE_URL is dropped first so that run
# never writes into a server kept for tests.
run: build ## Serve on LMOSDIR_DATABASE_URL, else on a throwaway local PostgreSQL
ifdef LMOSDIR_DATABASE_URL
	./bin/lmosdir serve $(ARGS)
else
	env -u LMOSDIR_TEST_DATABASE_URL scripts/with-postgres.sh \
		sh -c 'LMOSDIR_DATABASE_URL="$$LMOSDIR_TEST_DATABASE_URL" exec ./bin/lmosdir serve "$$@"' lmosdir $(ARGS)
endif

test: ## Run the tests with -race against a throwaway PostgreSQL (TESTFLAGS, PKGS)
	scripts/with-postgres.sh go test -race -count=1 $(TESTFLAGS) $(PKGS)

lint: ## Check gofmt, go vet and golangci-lint
	@unformatted="$$(gofmt -l .)"; \
	if [ -n "$$unformatted" ]; then echo "gofmt -l lists files to format:"; echo "$$unformatted"; exit 1; fi
	go vet ./...
	go tool golangci-lint run --allow-parallel-runners ./...

clean: ## Remove build and coverage output
	rm -rf bin/ coverage.out coverage.html *.coverprofile
