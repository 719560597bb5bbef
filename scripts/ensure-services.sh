#!/usr/bin/env bash
# Starts this machine's PostgreSQL and Redis when they are installed but stopped (the scale-out test
# set needs them at 127.0.0.1:5432 and :6379). Prints what it did; exits non-zero if one stays down.
set -u
pg_up() { pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; }
redis_up() { redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null | grep -q PONG; }

if ! pg_up && command -v pg_ctlcluster >/dev/null 2>&1; then
  for version in $(ls /etc/postgresql 2>/dev/null); do
    echo "starting PostgreSQL $version" >&2
    pg_ctlcluster --skip-systemctl-redirect "$version" main start >&2 || true
  done
  for _ in $(seq 1 30); do pg_up && break; sleep 0.5; done
fi
if ! redis_up && command -v redis-server >/dev/null 2>&1; then
  echo "starting Redis" >&2
  mkdir -p /var/lib/redis /var/log/redis 2>/dev/null || true
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log >&2 || true
  for _ in $(seq 1 30); do redis_up && break; sleep 0.2; done
fi

ok=0
pg_up || { echo "PostgreSQL is not reachable at 127.0.0.1:5432 (see README: Backends)" >&2; ok=1; }
redis_up || { echo "Redis is not reachable at 127.0.0.1:6379 (see README: Backends)" >&2; ok=1; }
exit $ok
