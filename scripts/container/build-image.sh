#!/usr/bin/env bash
# Builds an image with podman: the service's (Dockerfile) unless DOCKERFILE names another; tags it
# IMAGE (default localhost/mediasvc:latest). The base image comes first (base-image.sh). The CA
# bundle (BUILD_CA_FILE, default the system's) goes in as a build secret, never into a layer.
set -euo pipefail
cd "$(dirname "$0")/../.."
export CONTAINERS_CONF="${CONTAINERS_CONF:-$PWD/scripts/container/containers.conf}"
bash scripts/container/base-image.sh
ca="${BUILD_CA_FILE:-/etc/ssl/certs/ca-certificates.crt}"
secret=()
[ -s "$ca" ] && secret=(--secret "id=ca,src=$ca")
exec podman build --format docker --pull=never --network=host --jobs "${BUILD_JOBS:-3}" "${secret[@]}" \
  -t "${IMAGE:-localhost/mediasvc:latest}" -f "${DOCKERFILE:-Dockerfile}" "$@" .
