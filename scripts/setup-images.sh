#!/usr/bin/env bash
# Build the local runtime images: the Debian base (without a registry, when the tag is missing),
# then the sandbox and browser-guest images through the Engine API (`humanish runtime setup`).
# From a checkout the guest agent is compiled from source, the same bytes the tests use, so
# the tests find the image already built.
# The sandbox image's Node runtime comes from pinned npm registry tarballs fetched on this host
# with `npm pack` (so npm, its registry and NODE_EXTRA_CA_CERTS apply) and checked against their
# SHA-256 before the build; verified copies are cached in ~/.cache/humanish/artifacts.
# Usage: bash scripts/setup-images.sh   (needs a running dockerd and npm; DOCKER_HOST=unix://… honoured)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
bun="$root/node_modules/.bin/bun"
[ -x "$bun" ] || bun="$(command -v bun || true)"
[ -n "$bun" ] || { echo "bun not found: run npm install in $root" >&2; exit 2; }
command -v npm >/dev/null || { echo "npm not found: the sandbox image's Node tarballs are fetched with npm pack (apt-get install -y npm)" >&2; exit 2; }
bash "$here/base-image.sh"
"$bun" "$root/src/cli/main.ts" runtime setup
# The `desktop` template of the local E2B-compatible test server (runtime/e2b-desktop/Dockerfile:
# Xvfb, XFCE, xdotool, scrot, Chromium from Debian), tagged humanish-e2b-desktop:<recipe revision>.
"$bun" "$root/test/support/e2b-server/desktop-image.ts"
