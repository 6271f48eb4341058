#!/usr/bin/env bash
# Sourced by the ensure-*.sh scripts: `apt_install <package>` installs one Debian package when running as
# root with apt-get (refreshing stale package lists once), and answers apt-get's status; 1 otherwise.
apt_install() {
  local package="$1"
  if [ "${EUID:-$(id -u)}" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "$package is missing and cannot be installed here (needs root and apt-get)." >&2
    return 1
  fi
  echo "$package not found: installing it with apt-get" >&2
  export DEBIAN_FRONTEND=noninteractive
  # Stale package lists are the usual reason for "Unable to locate package": refresh once and retry.
  if ! apt-get install -y -qq --no-install-recommends "$package" >/dev/null 2>&1; then
    apt-get update -qq >/dev/null 2>&1
    apt-get install -y -qq --no-install-recommends "$package" >/dev/null
  fi
  local status=$?
  [ "$status" -ne 0 ] && echo "apt-get could not install $package (status $status)" >&2
  return "$status"
}
