#!/usr/bin/env bash
# Makes sure `kubectl` is available: test/kubernetes.e2e-spec.ts renders deploy/kubernetes with
# `kubectl kustomize` (offline, no cluster needed). Called by .ci/run.
#
#   exit 0  kubectl is on PATH (already there, or installed now)
#   exit 1  it is missing and could not be installed (not root, or no apt-get); install it by hand:
#           https://kubernetes.io/docs/tasks/tools/
# With root and apt-get, installs the `kubectl` package (from whatever apt sources are configured, e.g.
# the Kubernetes or Google Cloud SDK repository) and exits with apt-get's status.
set -uo pipefail

if command -v kubectl >/dev/null 2>&1; then
  exit 0
fi

if [ "${EUID:-$(id -u)}" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "kubectl not found: installing it with apt-get" >&2
  export DEBIAN_FRONTEND=noninteractive
  # Stale package lists are the usual reason for "Unable to locate package": refresh once and retry.
  if ! apt-get install -y -qq --no-install-recommends kubectl >/dev/null 2>&1; then
    apt-get update -qq >/dev/null 2>&1
    apt-get install -y -qq --no-install-recommends kubectl >/dev/null
  fi
  status=$?
  if [ "$status" -ne 0 ]; then
    echo "apt-get could not install kubectl (status $status): is a repository providing it configured? See https://kubernetes.io/docs/tasks/tools/" >&2
  fi
  exit "$status"
fi

echo "kubectl is not on PATH and cannot be installed here (needs root and apt-get)." >&2
echo "Install it (https://kubernetes.io/docs/tasks/tools/): the Kubernetes manifest tests (test/kubernetes.e2e-spec.ts) run 'kubectl kustomize'." >&2
exit 1
