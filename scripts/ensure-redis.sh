#!/usr/bin/env bash
# Installs Debian's redis-server for the test suite, which starts one of its own when the run is given no
# REDIS_URL. The test run's own setup (test/support/test-redis.ts) calls this only when redis-server is
# missing and it runs as root with apt-get; it can also be run by hand. Exit 0 when it is there, else 1.
set -uo pipefail
source "$(dirname "$0")/lib/apt-install.sh"

command -v redis-server >/dev/null 2>&1 && exit 0
apt_install redis-server || { echo "Install Debian's redis-server package, or set REDIS_URL: the test suite needs Redis." >&2; exit 1; }
