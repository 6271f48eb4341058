#!/usr/bin/env bash
# Makes sure `kubectl` is available: test/kubernetes.e2e-spec.ts renders deploy/kubernetes with
# `kubectl kustomize` (offline, no cluster needed). Called by the test run's own setup
# (test/support/run-tools.ts) when kubectl is missing and it runs as root with apt-get; or by hand.
#
#   exit 0  kubectl is on PATH (already there, or installed now)
#   exit 1  it is missing and could not be installed (not root, no apt-get, or no repository providing it);
#           install it by hand: https://kubernetes.io/docs/tasks/tools/
set -uo pipefail
source "$(dirname "$0")/lib/apt-install.sh"

command -v kubectl >/dev/null 2>&1 && exit 0
apt_install kubectl || { echo "Install kubectl (https://kubernetes.io/docs/tasks/tools/): the Kubernetes manifest tests run 'kubectl kustomize'." >&2; exit 1; }
