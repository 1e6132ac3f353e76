# Two commands: `make run` starts the embedded product, `make test` runs the whole suite.
SHELL := /bin/bash
.DEFAULT_GOAL := help
export PATH := $(CURDIR)/.tools/bin:$(PATH)

.PHONY: help tools test-tools build run test test-quick test-fast test-container image test-noisy-neighbour lint lint-layers deps-graph clean bench bench-speech bench-speakers bench-media bench-long soak

help:
	@echo "make run    start API + workers + embedded Temporal (data in ./data)"
	@echo "make test   install what is missing, build, lint and run every test"
	@echo "make test-quick  make test without the fault, timing and scale-out suites (the edit loop)"
	@echo "make test-fast  the unit specs alone (pure functions, no tools or servers; under a minute)"
	@echo "make build  compile TypeScript into dist/"
	@echo "make lint   eslint, and the layers checked by dependency-cruiser (make deps-graph draws them)"
	@echo "make bench  product against bare tools and peers (starts its own stack); bench-media, bench-speakers: some of its rows; bench-speech: transcription against bare faster-whisper"
	@echo "make image  build the container image with podman (localhost/mediasvc:latest; docs/container.md)"
	@echo "make test-container  build the image and run compose.yaml and compose.scale-out.yaml with podman (root; not part of make test)"
	@echo "make soak   60 minutes of mixed load on the embedded default, then memory, fds, DATA_DIR, latency, 5xx and ledger checks"

# What the service runs (make run); test-tools adds what the tests need (scripts/install-tools.sh).
tools:
	@TOOLS_FOR=run bash scripts/install-tools.sh

test-tools:
	@TOOLS_FOR=test bash scripts/install-tools.sh

# Incremental: tsc recompiles what changed since its last build (dist/.tsbuildinfo), then the compiled
# files of deleted sources are removed (scripts/prune-dist.mjs); make clean starts over.
build: tools
	@npx tsc -p tsconfig.json --incremental --tsBuildInfoFile dist/.tsbuildinfo && node scripts/prune-dist.mjs && node dist/bin/bundle-workflows.js

# ESLint keeps a cache of files it found clean (by content); a clean clone has none and lints everything.
lint: build lint-layers
	@npx eslint --cache --cache-strategy content --cache-location .eslintcache .

# The layers (.dependency-cruiser.cjs): no value cycles, no import from a higher layer.
LAYERED_FOLDERS := lib engines db accounts keys credits uploads info jobs batches subscriptions webhooks platforms activities operations workflows workers api bin
lint-layers:
	@npx depcruise --output-type err $(LAYERED_FOLDERS)

# The layer picture in docs/architecture.md (needs Graphviz's dot).
deps-graph:
	@node scripts/deps-graph.mjs docs/layers.svg

run: build
	exec bin/mediasvc serve

# Every test file in its own mocha process, several at a time, the timing-sensitive ones alone after
# them (test/suite-runner.ts); TEST_JOBS sets how many at a time. Each file's time is printed at the end.
test: build test-tools lint
	@node dist/test/suite-runner.js

# The middle tier for the edit loop: make test without the fault, timing and scale-out suites.
test-quick: build test-tools
	@node dist/test/suite-runner.js --quick

# The fast tier: the unit specs (test/unit/*.spec.ts and operations/*/*.spec.ts), pure functions only (make test runs them too).
test-fast: build
	@npx mocha --no-config --require dist/test/setup.js --exit 'dist/test/unit/**/*.spec.js' 'dist/operations/*/*.spec.js'

clean:
	rm -rf dist

# The container image (Dockerfile) with podman; the base image is made from Debian's packages when
# no registry has it (scripts/container/build-image.sh).
image:
	@bash scripts/container/install-podman.sh
	@bash scripts/container/build-image.sh

# The image and both compose files, built and run with podman (docs/container.md); make test does not run it.
# Its own prerequisite, lighter than build: the host needs ffmpeg and node_modules, the images the rest.
test-container:
	@bash scripts/container/install-podman.sh
	@TOOLS_FOR=containers bash scripts/install-tools.sh
	@rm -rf dist && npx tsc -p test/container/tsconfig.json
	@npx mocha --no-config --require dist/test/setup.js --timeout 3600000 --exit 'dist/test/container/embedded.container.js' 'dist/test/container/scale-out.container.js'

# Realtime factors of the transcribe job (end to end) vs bare faster-whisper, per installed model.
bench-speech: build test-tools
	@node dist/test/bench/speech.bench.js

# The product against bare tools and peers, medians over BENCH_ROUNDS (default 3) interleaved
# rounds; BENCH_ROWS (a regular expression) picks row groups, BENCH_SECONDS sets each throughput run.
bench: build test-tools
	@node dist/test/bench/index.js

# Only the noisy-neighbour test of make test (an enterprise burst on a slow source; real serve, about 2 minutes), e.g. to rerun it on a loaded machine.
test-noisy-neighbour: build test-tools
	@npx mocha --no-config --require dist/test/setup.js --timeout 120000 --exit dist/test/noisy-neighbour.e2e.test.js

# Only the speaker-label row of make bench: a 2-minute transcription with and without diarize, and the runner's peak memory.
bench-speakers: build test-tools
	@BENCH_ROWS='^speaker' node dist/test/bench/index.js

# Only the long-media rows of make bench, one round: every file operation on 1, 10 and 60 minute
# sources (BENCH_LONG_MINUTES; speech at BENCH_LONG_SPEECH_MINUTES), and 10 minutes of speech batched against sequential.
bench-long: build test-tools
	@BENCH_ROWS='^(long media|speech long)' BENCH_ROUNDS=$${BENCH_ROUNDS:-1} node dist/test/bench/index.js

# Only the media rows of make bench: jobs end to end vs the bare ffmpeg / yt-dlp commands.
bench-media: build test-tools
	@BENCH_ROWS='^media' node dist/test/bench/index.js

# The embedded default under a bounded, mixed load for SOAK_MINUTES (default 60), then its figures and checks; make test does not run it.
soak: build test-tools
	@node dist/test/soak/soak.js
