#!/usr/bin/env bash
# Installs Debian's Chromium for the web client's browser tests (test/web-*.e2e-spec.ts), which drive it
# through playwright-core; nothing downloads a browser. The test run's own setup (test/support/run-tools.ts)
# calls this only when it found no Chromium or Chrome and runs as root with apt-get; it can also be run by
# hand. Exit 0 when Chromium is there (already, or installed now), else 1.
set -uo pipefail
source "$(dirname "$0")/lib/apt-install.sh"

[ -x "${CHROMIUM_PATH:-/usr/bin/chromium}" ] && exit 0
apt_install chromium || { echo "Install Debian's chromium package, or set CHROMIUM_PATH: the web client's browser tests need it." >&2; exit 1; }
