#!/usr/bin/env bash
# Makes sure the `pebble` binary (Let's Encrypt's ACME test server) is on PATH: test/tls/acme.test.ts
# gets certificates from it. Installs Debian's package when it is missing; the tests start their own
# Pebble on free ports. Quiet when there is nothing to do; exits non-zero with one clear line when
# Pebble cannot be had.
set -u

# Test files run two at a time and several may need a package at once: apt holds one lock, so
# installers queue on ours instead of failing on apt's (exit 100). The check below runs again
# after the wait, so the second caller finds the package the first one installed.
exec 9>"${TMPDIR:-/tmp}/slipway-apt.lock"
flock 9

if ! command -v pebble >/dev/null 2>&1; then
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "pebble is not installed and apt-get is not available: install Pebble and re-run" >&2
    exit 1
  fi
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then sudo=(sudo -n); else
      echo "pebble is not installed and installing it needs root: run 'apt-get install -y pebble' as root" >&2
      exit 1
    fi
  fi
  echo "installing pebble (apt-get install pebble)" >&2
  export DEBIAN_FRONTEND=noninteractive
  # policy-rc.d answering 101 keeps any post-install from starting a system service.
  policy=/usr/sbin/policy-rc.d
  made_policy=0
  if [ ! -e "$policy" ] && [ "${#sudo[@]}" -eq 0 ]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && made_policy=1
  fi
  "${sudo[@]}" apt-get update -qq >/dev/null 2>&1
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends pebble >/dev/null 2>&1
  status=$?
  [ "$made_policy" -eq 1 ] && rm -f "$policy"
  if [ "$status" -ne 0 ] || ! command -v pebble >/dev/null 2>&1; then
    echo "could not install pebble with apt-get (exit $status): install Pebble by hand and re-run" >&2
    exit 1
  fi
fi
exit 0
