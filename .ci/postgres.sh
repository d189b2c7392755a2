#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for retrysafe's tests, in a directory of
# its own, listening only on a Unix socket inside that directory.
#
#   .ci/postgres.sh start DIR   create the cluster in DIR (if new) and start it;
#                               prints the URL to export as RETRYSAFE_TEST_POSTGRES
#   .ci/postgres.sh stop DIR    stop it (fast shutdown)
#   .ci/postgres.sh crash DIR   stop it the way a power cut would (-m immediate)
#   .ci/postgres.sh url DIR     print the URL again
#
# Installs Debian's postgresql package when no server binaries are found.
# PostgreSQL refuses to run as root: as root, the cluster belongs to the
# unprivileged user `nobody` and every server command runs as that user.
set -euo pipefail

usage() { sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[ $# -eq 2 ] || usage
cmd=$1
dir=$2

find_bin() {
  local d
  if command -v pg_config >/dev/null 2>&1; then
    d=$(pg_config --bindir 2>/dev/null || true)
    if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then echo "$d"; return; fi
  fi
  # Debian keeps server binaries off PATH, one directory per major version.
  d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
  if [ -n "$d" ] && [ -x "$d/initdb" ]; then echo "$d"; return; fi
}

bin=$(find_bin)
if [ -z "$bin" ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "postgres.sh: no PostgreSQL server binaries found; install Debian's postgresql package" >&2
    exit 1
  fi
  echo "== installing postgresql (Debian package) for the PostgreSQL tests" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq postgresql >/dev/null
  bin=$(find_bin)
  [ -n "$bin" ] || { echo "postgres.sh: postgresql installed but no initdb found" >&2; exit 1; }
fi

# as runs a server command as the cluster's owner.
as() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u nobody -- "$@"
  else
    "$@"
  fi
}

url() { echo "postgres://postgres@/postgres?host=$dir&sslmode=disable"; }

case $cmd in
start)
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  if [ "$(id -u)" = 0 ]; then chown nobody "$dir"; fi
  chmod 700 "$dir"
  if [ ! -f "$dir/data/PG_VERSION" ]; then
    as "$bin/initdb" -D "$dir/data" -U postgres --auth=trust --no-sync -E UTF8 --locale=C >"$dir/initdb.log" 2>&1 \
      || { cat "$dir/initdb.log" >&2; exit 1; }
  fi
  # Unix socket in DIR only (no TCP); enough connections for the test
  # packages that run in parallel, each with its own pool.
  as "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-c listen_addresses='' -c unix_socket_directories='$dir' -c max_connections=400 -c shared_buffers=64MB" \
    start >/dev/null || { cat "$dir/server.log" >&2; exit 1; }
  url
  ;;
stop)
  as "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
  ;;
crash)
  as "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null
  ;;
url)
  url
  ;;
*)
  usage
  ;;
esac
