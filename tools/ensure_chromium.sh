#!/usr/bin/env bash
# Make sure Debian's Chromium is installed for tools/browser_check.py.
# Idempotent: does nothing when `chromium` is already on PATH.
# We always use the distribution's browser; Playwright is only the driver, so
# `playwright install` (which downloads its own browser build) is never run.
set -euo pipefail

if command -v chromium >/dev/null 2>&1; then
    echo "chromium already installed: $(command -v chromium)"
    exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
    echo "ensure_chromium.sh: chromium is missing and installing it needs root (apt-get)." >&2
    echo "Run as root, or: sudo apt-get install -y --no-install-recommends chromium" >&2
    exit 1
fi

apt-get update
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium
echo "chromium installed: $(command -v chromium)"
