#!/usr/bin/env bash
# Makes sure podman has debian:bookworm-slim, the base of every image here. Where no registry is
# reachable it is made from Debian's own packages (debootstrap --variant=minbase, as root; about
# 35 s), with the apt sources of the published image. Quick when the image is there.
set -euo pipefail
cd "$(dirname "$0")/../.."
export CONTAINERS_CONF="${CONTAINERS_CONF:-$PWD/scripts/container/containers.conf}"
BASE=docker.io/library/debian:bookworm-slim
# builds started together wait for the one that makes it
exec 9>"${TMPDIR:-/tmp}/mediasvc-base-image.lock"
flock 9
if ! podman image exists "$BASE"; then
  echo "base-image: no $BASE here: making it from Debian's packages (debootstrap)" >&2
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
