#!/usr/bin/env bash
# Makes sure Debian's Chromium is installed: the web client's browser tests (test/web-journey.e2e-spec.ts)
# drive it through playwright-core at /usr/bin/chromium (CHROMIUM_PATH overrides); nothing downloads a
# browser. Called by .ci/run. Exit 0 when it is there (already, or installed now), else 1.
set -uo pipefail
source "$(dirname "$0")/lib/apt-install.sh"

[ -x "${CHROMIUM_PATH:-/usr/bin/chromium}" ] && exit 0
apt_install chromium || { echo "Install Debian's chromium package, or set CHROMIUM_PATH: the web client's browser tests need it." >&2; exit 1; }
