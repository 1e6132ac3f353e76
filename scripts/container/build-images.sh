#!/usr/bin/env bash
# Builds every image the container tests use, all at once: the service's, the Temporal server's,
# and a stand-in for each registry image compose.scale-out.yaml names that this machine lacks.
# Each build logs to $LOGS/build-<image>.log. $LOGS/build-times.json gets the seconds each took
# ("all": the whole), or "failed": the images whose build failed (exit 1).
# make test-container starts it in the background before its host install, so the compiles
# overlap that install; the tests then wait for it (test/container/images.ts).
set -uo pipefail
cd "$(dirname "$0")/../.."
export CONTAINERS_CONF="${CONTAINERS_CONF:-$PWD/scripts/container/containers.conf}"
logs="${LOGS:-.test-tmp/container}"
mkdir -p "$logs"
rm -f "$logs/build-times.json" "$logs/build-times.tmp"
bash scripts/container/base-image.sh || { echo '{"failed":["docker.io/library/debian:bookworm-slim"]}' > "$logs/build-times.json"; exit 1; }

builds=(localhost/mediasvc:latest=Dockerfile localhost/mediasvc-temporal:1.32.2=container/temporal/Dockerfile)
# stand-ins for what users pull from a registry, built only when missing
for standIn in docker.io/library/postgres:15=test/container/images/postgres/Dockerfile \
               docker.io/chrislusf/seaweedfs:4.53=test/container/images/seaweedfs/Dockerfile; do
  podman image exists "${standIn%%=*}" || builds+=("$standIn")
done

started=$SECONDS
for build in "${builds[@]}"; do
  image=${build%%=*}
  (
    began=$SECONDS
    IMAGE="$image" DOCKERFILE="${build#*=}" bash scripts/container/build-image.sh > "$logs/build-${image//[^a-zA-Z0-9.]/_}.log" 2>&1
    echo "$? $((SECONDS - began)) $image" >> "$logs/build-times.tmp"
  ) &
done
wait

json="{" failed=""
while read -r rc seconds image; do
  json+="\"$image\":$seconds,"
  [ "$rc" = 0 ] || failed+="\"$image\","
done < "$logs/build-times.tmp"
rm -f "$logs/build-times.tmp"
if [ -n "$failed" ]; then
  echo "{\"failed\":[${failed%,}]}" > "$logs/build-times.json"
  echo "build-images: failed: ${failed%,} (logs in $logs)" >&2
  exit 1
fi
echo "${json}\"all\":$((SECONDS - started))}" > "$logs/build-times.json"
cat "$logs/build-times.json"
