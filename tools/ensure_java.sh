#!/usr/bin/env bash
# Make sure a Java runtime is installed for the W3C HTML checker (npm vnu-jar, tools/vnu_check.py).
# Idempotent: does nothing when `java` is already on PATH. Debian's package, never a download.
set -euo pipefail

if command -v java >/dev/null 2>&1; then
    echo "java already installed: $(command -v java)"
    exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
    echo "ensure_java.sh: java is missing and installing it needs root (apt-get)." >&2
    echo "Run as root, or: sudo apt-get install -y --no-install-recommends default-jre-headless" >&2
    exit 1
fi

apt-get update
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends default-jre-headless
echo "java installed: $(command -v java)"
