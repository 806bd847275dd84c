#!/usr/bin/env bash
# Makes sure the services the tests use are up on loopback, starting them when they are not:
#   PostgreSQL at 127.0.0.1:5432, user postgres without a password, database `test` (with pg_trgm)
#   Redis at 127.0.0.1:6379
# Installs them first (Debian: postgresql, redis-server) when they are missing. Exits non-zero,
# loudly, when either cannot be had: the store tests need both and must not pass by skipping.
# Override the PostgreSQL the tests use with CANON_TEST_POSTGRES=postgres://…
set -uo pipefail
export PGOPTIONS="-c client_min_messages=warning"

PGHOST=127.0.0.1
PGPORT=5432
PGUSER=postgres
DATABASE=test

fail() {
  echo "" >&2
  echo "*** scripts/services.sh: $*" >&2
  echo "" >&2
  exit 1
}
say() { echo "services: $*"; }

sudo=""
[ "$(id -u)" = 0 ] || sudo="sudo -n"
as_postgres() { # a psql command as the postgres system user (peer authentication on the socket)
  if [ "$(id -u)" = 0 ]; then su postgres -s /bin/sh -c "psql -tAc \"$1\""; else sudo -n -u postgres psql -tAc "$1"; fi
}

install_packages() {
  command -v apt-get >/dev/null 2>&1 || fail "$* missing and no apt-get to install it: install $* yourself"
  say "installing $*"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get install -y -q "$@" >/dev/null 2>&1 || { $sudo apt-get update -q >/dev/null && $sudo apt-get install -y -q "$@" >/dev/null; } ||
    fail "could not install $* (apt-get failed)"
}

wait_for() { # seconds, command…
  local seconds=$1
  shift
  for _ in $(seq 1 $((seconds * 4))); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.25
  done
  return 1
}

# ---------------------------------------------------------------- PostgreSQL
pg_up() { pg_isready -h "$PGHOST" -p "$PGPORT" -q; }
psql_ok() { psql -h "$PGHOST" -p "$PGPORT" -U "$PGUSER" -d postgres -tAc "select 1" >/dev/null 2>&1; }

command -v pg_isready >/dev/null 2>&1 || install_packages postgresql postgresql-contrib
if pg_up; then
  say "PostgreSQL is up at $PGHOST:$PGPORT"
else
  say "starting PostgreSQL"
  if command -v pg_lsclusters >/dev/null 2>&1 && [ -n "$(pg_lsclusters -h 2>/dev/null)" ]; then
    read -r version cluster _ < <(pg_lsclusters -h | head -n 1)
    $sudo pg_ctlcluster "$version" "$cluster" start 2>&1 || true
  fi
  pg_up || $sudo service postgresql start 2>&1 || true
  wait_for 30 pg_up || fail "PostgreSQL does not answer at $PGHOST:$PGPORT (tried pg_ctlcluster and service postgresql start; see /var/log/postgresql/)"
  say "PostgreSQL is up"
fi

if ! psql_ok; then
  # A fresh Debian cluster asks for a password on TCP; the tests connect as postgres without one.
  hba=$(as_postgres "show hba_file" 2>/dev/null || true)
  [ -n "$hba" ] || fail "cannot connect as $PGUSER to $PGHOST:$PGPORT, and cannot find pg_hba.conf to allow it"
  say "allowing $PGUSER from loopback without a password in $hba (test machines only)"
  $sudo sed -i '1i host all postgres 127.0.0.1/32 trust\nhost all postgres ::1/128 trust' "$hba" || fail "cannot edit $hba"
  as_postgres "select pg_reload_conf()" >/dev/null 2>&1 || true
  wait_for 10 psql_ok || fail "cannot connect as $PGUSER to $PGHOST:$PGPORT"
fi

if [ "$(psql -h "$PGHOST" -p "$PGPORT" -U "$PGUSER" -d postgres -tAc "select 1 from pg_database where datname = '$DATABASE'")" != "1" ]; then
  say "creating database $DATABASE"
  createdb -h "$PGHOST" -p "$PGPORT" -U "$PGUSER" "$DATABASE" || fail "cannot create database $DATABASE"
fi
psql -h "$PGHOST" -p "$PGPORT" -U "$PGUSER" -d "$DATABASE" -qtAc "create extension if not exists pg_trgm schema public" >/dev/null ||
  fail "cannot create extension pg_trgm in database $DATABASE (install postgresql-contrib)"
say "database $DATABASE is ready"

# ---------------------------------------------------------------- Redis
redis_up() { [ "$(redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null)" = "PONG" ]; }

command -v redis-server >/dev/null 2>&1 || install_packages redis-server
if redis_up; then
  say "Redis is up at 127.0.0.1:6379"
else
  say "starting Redis"
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 >/dev/null 2>&1 || $sudo service redis-server start >/dev/null 2>&1 || true
  wait_for 15 redis_up || fail "Redis does not answer at 127.0.0.1:6379 (tried redis-server --daemonize yes and service redis-server start)"
  say "Redis is up"
fi
