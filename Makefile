# The two set-up commands are `make run` and `make test`; both install what is
# missing first (scripts/deps.sh), so they work on a fresh Debian 12 machine.
BUILD      ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 60
JOBS       ?= $(shell nproc)

.PHONY: all deps build run demo test test-unit test-sanitize check-source fuzz bench vectors format clean

all: build

deps:
	@scripts/deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

# The main job: turnd on the embedded defaults (demo model, demo tools, ./data).
run: build
	@echo "turnd: demo model and demo tools, data in ./data. Only paired devices get in."
	@echo "In another terminal, pair the turn client with the code of the link below:"
	@echo "  build/turn pair http://127.0.0.1:8080 CODE      then: build/turn hello"
	@echo "or pair one for curl:"
	@echo "  TOKEN=\$$(build/turnd pair --data ./data --name curl)"
	@echo "  curl -N -H \"Authorization: Bearer \$$TOKEN\" -d '{\"text\": \"hello\"}' http://127.0.0.1:8080/api/turns"
	@echo "Approving the demo's lamp needs the owner's PIN: build/turnd set-pin --data ./data"
	@./$(BUILD)/turnd --listen 127.0.0.1:8080 --data ./data

# The codec on the spec's example turn: parse, check, encode back byte for byte.
demo: build
	@./$(BUILD)/turn-demo

# Every test: the source checks, the suite, then the suite again under ASan+UBSan.
test: check-source test-unit test-sanitize

test-unit: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

test-sanitize: deps
	@cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DTURN_SANITIZE=ON >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS)
	@cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --output-on-failure -j $(JOBS)

check-source: deps
	@scripts/check-source.sh

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
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)
