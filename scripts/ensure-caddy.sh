#!/usr/bin/env bash
# Makes sure the `caddy` binary is on PATH (test/http/caddy.test.ts runs it in front of the service).
# Installs Debian's package when it is missing; never leaves a system Caddy running, since the test
# starts its own on free ports. Quiet when there is nothing to do; exits non-zero with one clear line
# when Caddy cannot be had.
set -u

# Test files run two at a time and several may need a package at once: apt holds one lock, so
# installers queue on ours instead of failing on apt's (exit 100). The check below runs again
# after the wait, so the second caller finds the package the first one installed.
exec 9>"${TMPDIR:-/tmp}/slipway-apt.lock"
flock 9

if ! command -v caddy >/dev/null 2>&1; then
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "caddy is not installed and apt-get is not available: install Caddy 2 (https://caddyserver.com) and re-run" >&2
    exit 1
  fi
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then sudo=(sudo -n); else
      echo "caddy is not installed and installing it needs root: run 'apt-get install -y caddy' as root" >&2
      exit 1
    fi
  fi
  echo "installing caddy (apt-get install caddy)" >&2
  export DEBIAN_FRONTEND=noninteractive
  # policy-rc.d answering 101 keeps the package's post-install from starting the system service
  # where invoke-rc.d is used (containers without systemd); systemd hosts are handled below.
  policy=/usr/sbin/policy-rc.d
  made_policy=0
  if [ ! -e "$policy" ] && [ "${#sudo[@]}" -eq 0 ]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && made_policy=1
  fi
  "${sudo[@]}" apt-get update -qq >/dev/null 2>&1
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends caddy >/dev/null 2>&1
  status=$?
  [ "$made_policy" -eq 1 ] && rm -f "$policy"
  if [ "$status" -ne 0 ] || ! command -v caddy >/dev/null 2>&1; then
    echo "could not install caddy with apt-get (exit $status): install Caddy 2 by hand and re-run" >&2
    exit 1
  fi
  # A systemd host starts caddy.service on install (ports 80, 443 and admin 2019): stop it.
  if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
    "${sudo[@]}" systemctl disable --now caddy >/dev/null 2>&1 || true
  fi
fi
exit 0
