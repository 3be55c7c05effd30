#!/usr/bin/env bash
# Make sure a program from Debian's packages is installed: ensure_debian_package.sh COMMAND PACKAGE
#   chromium chromium              (runnable_book/checks/site_check.py and every browser test)
#   java     default-jre-headless  (the W3C HTML checker, npm vnu-jar: runnable_book/checks/vnu_check.py)
#   pdftotext poppler-utils        (tests/test_pdf.py reads the printed PDF's text, boxes and images)
# Idempotent: does nothing when COMMAND is already on PATH. Always the distribution's
# package, never a tool's own download (Playwright is only the driver: `playwright
# install` is never run).
set -euo pipefail

command_name=${1:?usage: ensure_debian_package.sh COMMAND PACKAGE}
package=${2:?usage: ensure_debian_package.sh COMMAND PACKAGE}

if command -v "$command_name" >/dev/null 2>&1; then
    echo "$command_name already installed: $(command -v "$command_name")"
    exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
    echo "ensure_debian_package.sh: $command_name is missing and installing it needs root (apt-get)." >&2
    echo "Run as root, or: sudo apt-get install -y --no-install-recommends $package" >&2
    exit 1
fi

# Another apt may hold apt's locks (unattended-upgrades, a second checkout's build installing the
# same package): wait for them, up to ten minutes, rather than fail. `install` waits by itself
# (DPkg::Lock::Timeout); `update` does not honour it, so it is tried again while its lock is taken.
lock_wait=600
deadline=$((SECONDS + lock_wait))
until output=$(apt-get -o DPkg::Lock::Timeout=$lock_wait update 2>&1); do
    if ! grep -q "Could not get lock" <<<"$output" || [ "$SECONDS" -ge "$deadline" ]; then
        echo "$output" >&2
        exit 1
    fi
    sleep 2
done
echo "$output"
DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=$lock_wait install -y --no-install-recommends "$package"
echo "$command_name installed: $(command -v "$command_name")"
