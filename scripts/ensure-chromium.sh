#!/usr/bin/env bash
# Makes sure /usr/bin/chromium exists (the browser tests in test/browser drive it with playwright-core,
# which never downloads a browser of its own). Installs Debian's package when it is missing. Quiet
# when there is nothing to do; exits non-zero with one clear line when Chromium cannot be had.
set -u

# Test files run two at a time and several may need a package at once: apt holds one lock, so
# installers queue on ours instead of failing on apt's (exit 100). The check below runs again
# after the wait, so the second caller finds the package the first one installed.
exec 9>"${TMPDIR:-/tmp}/slipway-apt.lock"
flock 9

chromium=/usr/bin/chromium

if [ ! -x "$chromium" ]; then
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "$chromium is not installed and apt-get is not available: install Chromium at $chromium and re-run" >&2
    exit 1
  fi
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then sudo=(sudo -n); else
      echo "$chromium is not installed and installing it needs root: run 'apt-get install -y chromium' as root" >&2
      exit 1
    fi
  fi
  echo "installing chromium (apt-get install chromium)" >&2
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq >/dev/null 2>&1
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends chromium >/dev/null 2>&1
  status=$?
  if [ "$status" -ne 0 ] || [ ! -x "$chromium" ]; then
    echo "could not install chromium with apt-get (exit $status): install Debian's chromium package by hand and re-run" >&2
    exit 1
  fi
fi
exit 0
