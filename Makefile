# Ember build and test entry points.
#
#   make test    check tools, download modules, gofmt, go vet, go test -race
#   make build   build the ember command into ./ember
#   make bench   run the benchmarks (no tests)
#   make fmt     rewrite files with gofmt
#
# Variables: GO (go command), GOFMT, TEST_TIMEOUT, BENCH (benchmark regexp),
# BENCHTIME, PKGS (package patterns).

GO           ?= go
GOFMT        ?= $(shell $(GO) env GOROOT 2>/dev/null)/bin/gofmt
PKGS         ?= ./...
TEST_TIMEOUT ?= 20m
BENCH        ?= .
BENCHTIME    ?= 1s
VERSION      ?= $(shell git describe --tags --always --dirty 2>/dev/null)
LDFLAGS      := $(if $(VERSION),-X main.version=$(VERSION))

.PHONY: all test deps mod fmt-check fmt vet build bench clean

all: test build

# deps checks the tools the build needs. No system packages are needed
# beyond Go itself; a future one would be installed here.
deps:
	@command -v $(GO) >/dev/null 2>&1 || { \
		echo "error: the Go toolchain ('$(GO)') is not on PATH; install Go 1.26 or newer from https://go.dev/dl/" >&2; \
		exit 1; }

mod: deps
	$(GO) mod download

fmt-check: deps
	@out="$$($(GOFMT) -l .)"; \
	if [ -n "$$out" ]; then \
		echo "error: these files are not gofmt-formatted (run 'make fmt'):" >&2; \
		echo "$$out" >&2; \
		exit 1; \
	fi

fmt: deps
	$(GOFMT) -w .

vet: mod
	$(GO) vet $(PKGS)

test: mod fmt-check vet
	$(GO) test -race -timeout $(TEST_TIMEOUT) $(PKGS)

build: mod
	$(GO) build -ldflags '$(LDFLAGS)' -o ember ./cmd/ember

bench: mod
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchtime $(BENCHTIME) -timeout $(TEST_TIMEOUT) $(PKGS)

clean:
	rm -f ember
	rm -rf dist bin out
