#!/usr/bin/env bash
# Builds an image with podman: the service's (Dockerfile) unless DOCKERFILE names another; tags it
# IMAGE (default localhost/mediasvc:latest). Where no registry is reachable, the base image
# debian:bookworm-slim is made first from Debian's own packages (debootstrap, as root). The CA
# bundle (BUILD_CA_FILE, default the system's) goes in as a build secret, never into a layer.
set -euo pipefail
cd "$(dirname "$0")/../.."
export CONTAINERS_CONF="${CONTAINERS_CONF:-$PWD/scripts/container/containers.conf}"
BASE=docker.io/library/debian:bookworm-slim
if ! podman image exists "$BASE"; then
  echo "build-image: no $BASE here: making it from Debian's packages (debootstrap)" >&2
  rootfs="$(mktemp -d)"
  trap 'rm -rf "$rootfs"' EXIT
  mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
  debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >/dev/null
  # the suites the published image has: updates and security fixes too
  rm -f "$rootfs/etc/apt/sources.list"
  cat > "$rootfs/etc/apt/sources.list.d/debian.sources" <<SOURCES
Types: deb
URIs: $mirror
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: ${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  tar -C "$rootfs" -c . | podman import --change 'CMD ["bash"]' - "$BASE" >/dev/null
fi
ca="${BUILD_CA_FILE:-/etc/ssl/certs/ca-certificates.crt}"
secret=()
[ -s "$ca" ] && secret=(--secret "id=ca,src=$ca")
exec podman build --format docker --pull=never --network=host "${secret[@]}" \
  -t "${IMAGE:-localhost/mediasvc:latest}" -f "${DOCKERFILE:-Dockerfile}" "$@" .
