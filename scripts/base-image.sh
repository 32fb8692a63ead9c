#!/usr/bin/env bash
# Create the `debian:bookworm-slim` base image without a registry when the tag is missing:
# debootstrap (minbase) into a temp dir, then `docker import` it under that tag.
# On a machine whose engine already has the tag (pulled from a registry), this does nothing.
set -euo pipefail
TAG="${HUMANISH_BASE_TAG:-debian:bookworm-slim}"
MIRROR="${HUMANISH_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
if docker image inspect "$TAG" >/dev/null 2>&1; then
  echo "base image $TAG present"
  exit 0
fi
command -v debootstrap >/dev/null || { echo "debootstrap missing: apt-get install -y debootstrap" >&2; exit 2; }
root=$(mktemp -d /tmp/humanish-rootfs.XXXXXX)
trap 'rm -rf "$root"' EXIT
echo "debootstrap bookworm (minbase) into $root"
debootstrap --variant=minbase bookworm "$root" "$MIRROR" >/tmp/humanish-debootstrap.log 2>&1 || {
  tail -20 /tmp/humanish-debootstrap.log >&2; exit 1; }
# Slim it like the official image: no apt lists, no docs, no caches.
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/usr/share/doc/* "$root"/usr/share/man/* || true
printf 'Types: deb\nURIs: %s\nSuites: bookworm bookworm-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\nTypes: deb\nURIs: http://deb.debian.org/debian-security\nSuites: bookworm-security\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' "$MIRROR" > "$root/etc/apt/sources.list.d/debian.sources"
: > "$root/etc/apt/sources.list"
tar -C "$root" -c . | docker import -c 'CMD ["bash"]' -c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' - "$TAG"
docker image inspect "$TAG" --format '{{.Id}} {{.Size}}'
