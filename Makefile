# Ember build and test entry points.
#
#   make test    check tools, install the Vulkan loader, Mesa's software
#                Vulkan driver (lavapipe) and glslc when missing (apt-get,
#                as root), download modules, gofmt, go vet, go test -race
#                (every numerical table and gradient check runs on the
#                lavapipe Vulkan device too, and the committed SPIR-V is
#                regenerated and compared), then the tables again with
#                fusion off, then the libtorch
#                build (-tags libtorch, cgo against libtorch-dev, installed
#                with apt-get when missing): go vet of every package and
#                the whole root package's tests (every numerical table,
#                gradient check and device test, with the "libtorch" device
#                among the devices they run on) plus backend/libtorch's
#                unit tests
#   make cross   build the ember command for every platform in CROSS
#   make wasi    run the flex kernels' tests and the numerical and gradient
#                tables under wasip1/wasm (wazero from the module proxy)
#   make build   build the ember command into ./ember
#   make bench   run the benchmarks (no tests)
#   make fmt     rewrite files with gofmt
#
# Variables: GO (go command), GOFMT, TEST_TIMEOUT, BENCH (benchmark regexp),
# BENCHTIME, PKGS (package patterns), LIBTORCH_INCLUDE (where libtorch's
# ATen headers are).

GO           ?= go
GOFMT        ?= $(shell $(GO) env GOROOT 2>/dev/null)/bin/gofmt
PKGS         ?= ./...
TEST_TIMEOUT ?= 20m
BENCH        ?= .
BENCHTIME    ?= 1s
WAZERO       ?= github.com/tetratelabs/wazero/cmd/wazero@v1.12.0
LIBTORCH_INCLUDE ?= /usr/include
CROSS        ?= linux/amd64 linux/arm64 linux/386 linux/riscv64 linux/s390x darwin/arm64 windows/amd64 freebsd/amd64 js/wasm wasip1/wasm
VERSION      ?= $(shell git describe --tags --always --dirty 2>/dev/null)
LDFLAGS      := $(if $(VERSION),-X main.version=$(VERSION))

.PHONY: all test deps vulkan-deps libtorch-deps mod fmt-check fmt vet vet-libtorch test-libtorch build bench cross wasi clean

all: test build

# deps checks the tools the build needs. No system packages are needed
# beyond Go itself; a future one would be installed here.
deps:
	@command -v $(GO) >/dev/null 2>&1 || { \
		echo "error: the Go toolchain ('$(GO)') is not on PATH; install Go 1.26 or newer from https://go.dev/dl/" >&2; \
		exit 1; }

# vulkan-deps checks for the Vulkan loader (libvulkan1), a Vulkan driver
# that runs without a GPU (mesa-vulkan-drivers: lavapipe) and the GLSL
# compiler the shaders' regeneration test runs (glslc), and installs the
# missing ones with apt-get when running as root. Without them the Vulkan
# tests skip, saying why.
vulkan-deps:
	@missing="libvulkan1 mesa-vulkan-drivers"; \
	for f in /usr/lib/*/libvulkan.so.1 /usr/lib/libvulkan.so.1 /usr/local/lib/libvulkan.so.1; do \
		[ -e "$$f" ] && missing="$${missing#libvulkan1}"; \
	done; \
	for f in /usr/share/vulkan/icd.d/lvp_icd.*.json /etc/vulkan/icd.d/lvp_icd.*.json; do \
		[ -e "$$f" ] && missing="$${missing% mesa-vulkan-drivers}"; \
	done; \
	command -v glslc >/dev/null 2>&1 || missing="$$missing glslc"; \
	missing="$$(echo $$missing)"; \
	if [ -n "$$missing" ]; then \
		if command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" -eq 0 ]; then \
			echo "installing $$missing for the Vulkan backend's tests"; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
		else \
			echo "warning: the Vulkan backend's tests need $$missing (apt-get install libvulkan1 mesa-vulkan-drivers glslc); they skip without them" >&2; \
		fi; \
	fi

# libtorch-deps checks for what the libtorch build tag compiles against
# (libtorch-dev's ATen headers and libraries, and a C++ compiler for cgo)
# and installs the missing ones with apt-get when running as root, as
# .ci/run installs make.
libtorch-deps:
	@missing="libtorch-dev"; \
	for lib in /usr/lib/libtorch_cpu.so /usr/lib/*/libtorch_cpu.so /usr/local/lib/libtorch_cpu.so; do \
		[ -e "$$lib" ] && [ -f "$(LIBTORCH_INCLUDE)/ATen/ATen.h" ] && missing=""; \
	done; \
	command -v "$$($(GO) env CXX 2>/dev/null || echo g++)" >/dev/null 2>&1 || missing="$$missing g++"; \
	if [ -n "$$missing" ]; then \
		if command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" -eq 0 ]; then \
			echo "installing $$missing for the libtorch build"; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
		else \
			echo "error: the libtorch build needs: $$missing (libtorch-dev provides the ATen headers under $(LIBTORCH_INCLUDE) and -ltorch -ltorch_cpu -lc10); install it (apt-get install libtorch-dev) or run make as root to have it installed" >&2; \
			exit 1; \
		fi; \
	fi

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
test: vulkan-deps mod fmt-check vet libtorch-deps
	$(GO) test -race -timeout $(TEST_TIMEOUT) $(PKGS)
	EMBER_FUSION=0 $(GO) test -count=1 -timeout $(TEST_TIMEOUT) . ./nn ./optim ./train
	$(MAKE) test-libtorch

# vet-libtorch vets every package as the libtorch build tag builds it.
vet-libtorch: mod libtorch-deps
	$(GO) vet -tags libtorch $(PKGS)

# test-libtorch runs the root package's tests (the "libtorch" device joins
# the devices every table and gradient check runs on) and the libtorch
# backend's own tests in the libtorch build, with cgo.
test-libtorch: vet-libtorch
	CGO_ENABLED=1 $(GO) test -tags libtorch -count=1 -timeout $(TEST_TIMEOUT) . ./backend/libtorch

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
