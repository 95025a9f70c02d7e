# Skillbox. `make install` and `make test` need Go only, 1.26 or later (go.mod's go line); with
# a C compiler such as Debian's gcc, `make test` adds -race.
# Tests that need another toolchain (Rust, TinyGo, clang for wasm, Node.js) find it through PATH
# and skip, naming it, when it is missing; SKILLBOX_REQUIRE_TOOLCHAINS=1 (CI) makes that a failure.
# `make fixtures` needs wat2wasm (Debian: wabt); `make skills` and `make sdks` need Go only.

GO          ?= go
# -race needs cgo and a C compiler; without one, the tests still run, without the detector.
RACE        ?= $(shell command -v gcc >/dev/null 2>&1 && echo -race)
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
# Guest modules with their own go.mod: tested natively (their logic), built for wasip1.
GUEST_MODS  := sdk/go $(wildcard skills/*/src) examples/wasm/go
FUZZTIME    ?= 10s
# go test's bound on one package's test binary. Its own default, 10 minutes, is met by
# cmd/skillbox and runtime under -race on a busy 2-core machine: they compile Go-built skills
# with an instrumented compiler. The bound is for a hang, not a measure of speed.
TESTTIMEOUT ?= 45m

.PHONY: all build install skills sdks console guests fixtures interpreters test test-guests test-cluster bench-cluster fuzz soak bench lint check clean

all: build

build:
	$(GO) build -o bin/skillbox ./cmd/skillbox

# go install puts the CLI in GOBIN, or in the first GOPATH entry's bin when GOBIN is unset; say
# which, and whether PATH finds it there.
install:
	$(GO) install ./cmd/skillbox
	@dir=$$($(GO) env GOBIN); [ -n "$$dir" ] || dir=$$($(GO) env GOPATH | cut -d: -f1)/bin; \
	echo "installed $$dir/skillbox"; \
	case ":$$PATH:" in *":$$dir:"*) ;; *) echo "$$dir is not on your PATH: add it, e.g. export PATH=\"\$$PATH:$$dir\" in your shell's profile";; esac

# Rebuild every bundled skill and the Go conformance guest from source.
skills:
	bash skills/build.sh

# Regenerate the copy of sdk/ embedded in the skillbox binary (internal/sdkfiles/sdks.zip), which
# `skillbox new` vendors into each skill; a test fails, naming this target, when it is stale.
sdks:
	$(GO) generate ./internal/sdkfiles

# Rebuild the operator console's assets (console/dist: app.js, app.css, index.html) from
# console/src with esbuild, in-process; a test fails, naming this target, when they are stale.
console:
	$(GO) generate ./console

# Rebuild the conformance guest of every language (examples/wasm/<lang>/build.sh); each needs its
# toolchain (see docs/guests.md; CI installs them all).
guests:
	@for b in examples/wasm/*/build.sh; do echo "== $$b"; bash $$b || exit 1; done

# Rebuild the script interpreters committed in internal/ (CPython: internal/cpython/python.wasm and
# stdlib.zip, from interpreters/python; see its build.sh for the Debian packages it needs). CI runs
# `interpreters/python/build.sh --check` and rebuilds only when the recipe's inputs changed.
interpreters:
	bash interpreters/python/build.sh

# Rebuild the WAT fixtures in testdata/wasm.
fixtures:
	bash testdata/wat/build.sh

test: test-guests
	$(GO) test $(RACE) -count=1 -timeout $(TESTTIMEOUT) ./...

# The guests' own unit tests run natively: each SDK's wire format and JSON, the skills' logic.
# The Rust, C and AssemblyScript SDK tests run when their toolchain is on PATH (CI has all); a
# missing one is skipped, or fails with SKILLBOX_REQUIRE_TOOLCHAINS=1 (CI sets it).
skip = echo "== $(1): skipped ($(2))"; [ "$${SKILLBOX_REQUIRE_TOOLCHAINS:-0}" = 0 ] || { echo "SKILLBOX_REQUIRE_TOOLCHAINS is set: $(2) is a failure"; exit 1; }
test-guests:
	@for m in $(GUEST_MODS); do echo "== $$m"; (cd $$m && $(GO) test -count=1 ./...) || exit 1; done
	@echo "== sdk/rust"; bash sdk/rust/test.sh
	@if command -v cc >/dev/null; then echo "== sdk/c"; bash sdk/c/test/test.sh; else $(call skip,sdk/c,no cc on PATH); fi
	@if command -v npm >/dev/null && command -v node >/dev/null; then echo "== sdk/assemblyscript"; cd sdk/assemblyscript && (test -d node_modules || npm ci --no-audit --no-fund -s) && npm test -s; else $(call skip,sdk/assemblyscript,no npm and node on PATH); fi

# Every fuzz target for FUZZTIME each (default 10s); CI runs it too.
fuzz:
	FUZZTIME=$(FUZZTIME) bash scripts/fuzz.sh

# The soak test: a thousand mixed, hostile runs through every face at once (soak/soak_test.go).
soak:
	$(GO) test -tags soak -count=1 -timeout 20m -run TestSoak -v ./soak/

# The cluster's end-to-end test: PostgreSQL and three real `skillbox serve --cluster embedded`
# processes on loopback (kill -9 mid-run, cancel and events across replicas). CI runs it.
test-cluster:
	$(GO) test -tags clustere2e -count=1 -timeout 15m -run 'TestClusterEndToEnd|TestClusterQuotaAcrossReplicas|TestClusterLeaderDeathUnderLoad' -v ./cmd/skillbox/

# The cluster's load: 1, 2 and 3 replicas, an I/O-bound and a CPU-bound skill (docs/cluster.md).
bench-cluster:
	$(GO) test -tags clustere2e -count=1 -timeout 30m -run '^$$' -bench ClusterLoad -benchtime 1x -v ./cmd/skillbox/

bench:
	$(GO) test -run '^$$' -bench . -benchtime 2s ./runtime/ ./cmd/skillbox/

lint:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "$$out"; echo "gofmt: the files above need formatting"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags soak ./soak/
	$(GO) vet -tags clustere2e ./cmd/skillbox/
	$(GO) run $(STATICCHECK) ./...
	$(GO) run $(STATICCHECK) -tags soak ./soak/
	$(GO) run $(STATICCHECK) -tags clustere2e ./cmd/skillbox/
	@for m in $(GUEST_MODS); do (cd $$m && GOOS=wasip1 GOARCH=wasm $(GO) vet ./...) || exit 1; done

# What CI asserts beyond the tests: lint clean, go.mod tidy, nothing generated left uncommitted.
check: lint
	$(GO) mod tidy
	git diff --exit-code -- go.mod go.sum

clean:
	rm -rf bin
