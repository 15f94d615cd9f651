# Ember build and test entry points.
#
#   make test    check tools, download modules, gofmt, go vet, go test -race,
#                then the tables again with fusion off
#   make cross   build the ember command for every platform in CROSS
#   make wasi    run the flex kernels' tests and the numerical and gradient
#                tables under wasip1/wasm (wazero from the module proxy)
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
WAZERO       ?= github.com/tetratelabs/wazero/cmd/wazero@v1.12.0
CROSS        ?= linux/amd64 linux/arm64 linux/386 linux/riscv64 linux/s390x darwin/arm64 windows/amd64 freebsd/amd64 js/wasm wasip1/wasm
VERSION      ?= $(shell git describe --tags --always --dirty 2>/dev/null)
LDFLAGS      := $(if $(VERSION),-X main.version=$(VERSION))

.PHONY: all test deps mod fmt-check fmt vet build bench cross wasi clean

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

# test runs every package under -race with fusion on (the default), then
# the numerical tables, gradient checks and training tests again with
# fusion off (EMBER_FUSION=0), which must give the same results.
test: mod fmt-check vet
	$(GO) test -race -timeout $(TEST_TIMEOUT) $(PKGS)
	EMBER_FUSION=0 $(GO) test -count=1 -timeout $(TEST_TIMEOUT) . ./nn ./optim ./train

build: mod
	$(GO) build -ldflags '$(LDFLAGS)' -o ember ./cmd/ember

# cross builds the command (and so the root package and every backend it
# registers) with CGO_ENABLED=0 for each GOOS/GOARCH in CROSS: the default
# build is cgo-free and Flex runs everywhere Go does.
cross: mod
	@set -e; for t in $(CROSS); do \
		echo "build $$t"; \
		GOOS=$${t%/*} GOARCH=$${t#*/} CGO_ENABLED=0 $(GO) build -o /dev/null ./cmd/ember; \
	done

# wasi runs tests compiled for wasip1/wasm in the wazero runtime (Go's
# go_wasip1_wasm_exec picks it up from PATH), installed into bin/.
wasi: mod
	GOBIN=$(CURDIR)/bin $(GO) install $(WAZERO)
	PATH="$(CURDIR)/bin:$$($(GO) env GOROOT)/lib/wasm:$$PATH" GOWASIRUNTIME=wazero \
		GOOS=wasip1 GOARCH=wasm CGO_ENABLED=0 \
		$(GO) test -timeout $(TEST_TIMEOUT) ./backend/flex
	PATH="$(CURDIR)/bin:$$($(GO) env GOROOT)/lib/wasm:$$PATH" GOWASIRUNTIME=wazero \
		GOOS=wasip1 GOARCH=wasm CGO_ENABLED=0 \
		$(GO) test -timeout $(TEST_TIMEOUT) -run 'TestTable|TestGrad' .

bench: mod
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchtime $(BENCHTIME) -timeout $(TEST_TIMEOUT) $(PKGS)

clean:
	rm -f ember
	rm -rf dist bin out
