# The two set-up commands are `make run` and `make test`; both install what is
# missing first (scripts/deps.sh), so they work on a fresh Debian 12 machine.
BUILD      ?= build
ASAN_BUILD ?= build-asan
RELEASE_BUILD ?= build-release
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 60
JOBS       ?= $(shell nproc)

.PHONY: all deps build run test test-unit test-sanitize check-source fuzz bench vectors format clean

all: build

deps:
	@scripts/deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

# The main job: turnd on the embedded defaults (demo model, demo tools, ./data).
# One line per set-up step, their output in $(BUILD)/make-run.log (V=1: shown too),
# the owner's PIN asked at the first start at a terminal, turnd's link last.
run:
	@V=$(V) scripts/make-run.sh $(BUILD) $(JOBS)

# Every test: the source checks, the suite, then the suite again under ASan+UBSan,
# and a Release build (what a packager builds: the optimiser finds other warnings).
test: check-source test-unit test-sanitize test-release

test-unit: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

test-sanitize: deps
	@cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DTURN_SANITIZE=ON >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS)
	@cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --output-on-failure -j $(JOBS)

check-source: deps
	@scripts/check-source.sh
	@scripts/check-includes.sh

# Release builds everything, tests and bench included, warning-free; it runs nothing.
.PHONY: test-release
test-release: deps
	@cmake -S . -B $(RELEASE_BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build $(RELEASE_BUILD) -j $(JOBS)

# By hand, before a release: the four build types with gcc and with clang, each in
# its own folder build-check-COMPILER-TYPE (scripts/check-builds.sh PREFIX for others).
.PHONY: check-builds
check-builds:
	@scripts/deps.sh fuzz
	@JOBS=$(JOBS) scripts/check-builds.sh build-check

# libFuzzer on each target for FUZZ_SECONDS; findings land in fuzz/findings/.
fuzz:
	@scripts/deps.sh fuzz
	@cmake -S . -B $(FUZZ_BUILD) -DCMAKE_C_COMPILER=clang -DTURN_FUZZ=ON \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@cmake --build $(FUZZ_BUILD) -j $(JOBS)
	@scripts/fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

bench: build
	@./$(BUILD)/bench-codec

# turnd under load from bench-load: throughput, first byte, memory per live turn.
.PHONY: bench-load
bench-load: build
	@bench/load.sh $(BUILD)

# Building one model request, by the session's history (the builder's work).
.PHONY: bench-request
bench-request: build
	@./$(BUILD)/bench-request

# A provider's text delta -> turnd's text line, 100 turns at once (fake provider).
.PHONY: bench-provider
bench-provider: build
	@bench/provider_latency.sh $(BUILD)

vectors: build
	@./$(BUILD)/turn-vectors > vectors/vectors.json
	@echo "wrote vectors/vectors.json"

format:
	@clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(RELEASE_BUILD) $(FUZZ_BUILD)
