#!/usr/bin/env bash
# Throwaway PostgreSQL cluster for the test suite.
#
#   scripts/pg-cluster.sh start DIR   initdb DIR/data, start a server on a free 127.0.0.1 port
#                                     (unix socket in DIR, log in DIR/log) and print its URL
#                                     postgres://postgres@127.0.0.1:PORT/postgres on stdout (only that line).
#   scripts/pg-cluster.sh stop DIR    stop that server (immediate mode) and remove DIR.
#   scripts/pg-cluster.sh pause DIR   stop that server (fast mode) and keep DIR (a database outage).
#   scripts/pg-cluster.sh resume DIR  start it again on the same port.
#
# Binaries are looked up in $PG_BINDIR, PATH, `pg_config --bindir`, /usr/lib/postgresql/*/bin
# (newest first). Exit code 3 means initdb/pg_ctl were not found; other failures exit 1.
# When run as root, initdb/pg_ctl run as the `postgres` user (initdb refuses root) and DIR is
# chowned to it. PG_PORT_BASE (default 55432) is the first port tried.
set -euo pipefail

die() {
  local code=$1
  shift
  echo "pg-cluster: $*" >&2
  exit "$code"
}

find_bindir() {
  local d candidates=()
  candidates+=("${PG_BINDIR:-}")
  if command -v pg_ctl >/dev/null 2>&1; then candidates+=("$(dirname "$(command -v pg_ctl)")"); fi
  if command -v pg_config >/dev/null 2>&1; then candidates+=("$(pg_config --bindir 2>/dev/null || true)"); fi
  local versioned
  versioned=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r || true)
  if [[ -n $versioned ]]; then mapfile -t -O "${#candidates[@]}" candidates <<<"$versioned"; fi
  candidates+=(/usr/local/pgsql/bin)
  for d in "${candidates[@]}"; do
    if [[ -n $d && -x $d/initdb && -x $d/pg_ctl ]]; then
      echo "$d"
      return 0
    fi
  done
  return 1
}

is_root() { [[ $(id -u) -eq 0 ]]; }

# Run a command as the postgres user when we are root, else as ourselves.
as_pg() {
  if is_root; then
    if command -v runuser >/dev/null 2>&1; then
      runuser -u postgres -- "$@"
    else
      su postgres -s /bin/bash -c "$(printf '%q ' "$@")"
    fi
  else
    "$@"
  fi
}

port_in_use() {
  # A successful TCP connect means something listens there.
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

cmd_start() {
  local dir=$1 bindir port tries=0
  bindir=$(find_bindir) || die 3 "initdb/pg_ctl not found (looked in \$PG_BINDIR, PATH, pg_config --bindir, /usr/lib/postgresql/*/bin)"
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd -P)
  [[ $dir != *"'"* && $dir != *[[:space:]]* ]] || die 1 "cluster directory must not contain quotes or spaces: $dir"
  # Unix socket path ($dir/.s.PGSQL.NNNNN) must fit in sun_path (108 bytes).
  ((${#dir} <= 90)) || die 1 "cluster directory path too long for a unix socket: $dir"
  [[ ! -e $dir/data ]] || die 1 "$dir/data already exists"
  chmod 755 "$dir"
  if is_root; then
    id postgres >/dev/null 2>&1 || die 1 "running as root but there is no 'postgres' user to run initdb/pg_ctl"
    chown postgres: "$dir"
  fi

  # cd into DIR so the postgres user never inherits an unreadable working directory.
  if ! (cd "$dir" && as_pg "$bindir/initdb" -D "$dir/data" --auth=trust -U postgres --no-sync \
    --no-locale -E UTF8) >"$dir/initdb.log" 2>&1; then
    cat "$dir/initdb.log" >&2
    die 1 "initdb failed"
  fi

  port=${PG_PORT_BASE:-55432}
  while :; do
    while port_in_use "$port"; do
      port=$((port + 1))
      ((port < 65500)) || die 1 "no free port found"
    done
    if start_server "$dir" "$bindir" "$port"; then
      echo "$port" >"$dir/port"
      break
    fi
    tries=$((tries + 1))
    # Lost a race for the port with another process: try the next one.
    if ((tries < 20)) && grep -qiE 'already in use|could not bind|could not create any TCP/IP sockets' "$dir/log" 2>/dev/null; then
      port=$((port + 1))
      continue
    fi
    cat "$dir/pg_ctl.log" >&2 || true
    tail -n 30 "$dir/log" >&2 || true
    cmd_stop_server "$dir" || true
    die 1 "pg_ctl start failed"
  done
  echo "postgres://postgres@127.0.0.1:$port/postgres"
}

start_server() {
  local dir=$1 bindir=$2 port=$3
  (cd "$dir" && as_pg "$bindir/pg_ctl" -D "$dir/data" -l "$dir/log" -w -t 60 \
    -o "-p $port -c listen_addresses=127.0.0.1 -k '$dir' -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
    start) >"$dir/pg_ctl.log" 2>&1
}

cmd_pause() {
  local dir=$1 bindir
  bindir=$(find_bindir) || die 3 "pg_ctl not found"
  (cd / && as_pg "$bindir/pg_ctl" -D "$dir/data" -m fast -w -t 60 stop) >/dev/null 2>&1 || die 1 "pg_ctl stop failed"
}

cmd_resume() {
  local dir=$1 bindir
  bindir=$(find_bindir) || die 3 "pg_ctl not found"
  start_server "$dir" "$bindir" "$(cat "$dir/port")" || die 1 "pg_ctl start failed"
}

cmd_stop_server() {
  local dir=$1 bindir pid
  [[ -f $dir/data/postmaster.pid ]] || return 0
  if bindir=$(find_bindir); then
    (cd / && as_pg "$bindir/pg_ctl" -D "$dir/data" -m immediate -w -t 30 stop) >/dev/null 2>&1 && return 0
  fi
  # pg_ctl missing or failed: signal the postmaster recorded in the pid file ourselves.
  pid=$(head -n 1 "$dir/data/postmaster.pid" 2>/dev/null || true)
  if [[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null; then
    kill -QUIT "$pid" 2>/dev/null || true
    for _ in $(seq 50); do
      kill -0 "$pid" 2>/dev/null || return 0
      sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
  fi
}

cmd_stop() {
  local dir=$1
  [[ -d $dir ]] || return 0
  dir=$(cd "$dir" && pwd -P)
  [[ $dir != / && $dir != "${HOME:-/}" ]] || die 1 "refusing to remove $dir"
  cmd_stop_server "$dir"
  rm -rf -- "$dir"
}

usage() { die 2 "usage: $0 start|stop|pause|resume DIR"; }

[[ $# -eq 2 && -n $2 ]] || usage
case $1 in
start) cmd_start "$2" ;;
stop) cmd_stop "$2" ;;
pause) cmd_pause "$2" ;;
resume) cmd_resume "$2" ;;
*) usage ;;
esac
