#!/usr/bin/env bash
# Build the local runtime images: the Debian base (without a registry, when the tag is missing)
# and the humanish sandbox image from runtime/sandbox/ through the Engine API.
# Usage: bash scripts/setup-images.sh   (needs a running dockerd; DOCKER_HOST=unix://… honoured)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
bun="$root/node_modules/.bin/bun"
[ -x "$bun" ] || bun="$(command -v bun || true)"
[ -n "$bun" ] || { echo "bun not found: run npm install in $root" >&2; exit 2; }
bash "$here/base-image.sh"
"$bun" "$here/build-sandbox-image.ts" "$@"
