#!/usr/bin/env bash
# Build the local runtime images: the Debian base (without a registry, when the tag is missing),
# then the sandbox and browser-guest images through the Engine API (`humanish runtime setup`).
# From a checkout the guest agent is compiled from source, the same bytes the tests use, so
# the tests find the image already built.
# Usage: bash scripts/setup-images.sh   (needs a running dockerd; DOCKER_HOST=unix://… honoured)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
bun="$root/node_modules/.bin/bun"
[ -x "$bun" ] || bun="$(command -v bun || true)"
[ -n "$bun" ] || { echo "bun not found: run npm install in $root" >&2; exit 2; }
bash "$here/base-image.sh"
"$bun" "$root/src/cli/main.ts" runtime setup
