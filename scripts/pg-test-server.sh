#!/usr/bin/env bash
# A throwaway PostgreSQL server for tests (cuzk-cluster's), loopback only.
#
#   pg-test-server.sh start [--owner-pid PID] [--durable]
#       initdb's a cluster in a new temp dir, starts it on 127.0.0.1 on a
#       free port and prints two lines, DIR=<dir> and URL=<postgres url>
#       (superuser "cuzk", trust auth, database "postgres"). With
#       --owner-pid, a watcher stops the server and deletes the dir once that
#       process has exited (a test binary that never runs destructors).
#       Without --durable, fsync is off: a test server loses nothing it
#       needs on a crash, since it is deleted anyway.
#   pg-test-server.sh restart DIR    fast restart (drops every connection)
#   pg-test-server.sh stop DIR       stops the server and deletes DIR
#
# PostgreSQL refuses to run as root; as root (CI) the server runs as the
# unprivileged system user cuzk-pg, created if missing. Without PostgreSQL
# binaries on the machine, Debian's postgresql package is installed (root
# only), without creating or starting the distribution's own cluster.
set -euo pipefail

script="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"
pg_user=cuzk-pg

die() { echo "pg-test-server: $*" >&2; exit 1; }

find_bindir() {
    local d
    for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
        if [[ -x "$d/initdb" && -x "$d/pg_ctl" && -x "$d/postgres" ]]; then
            echo "$d"; return 0
        fi
    done
    if command -v pg_ctl >/dev/null && command -v initdb >/dev/null; then
        dirname "$(command -v pg_ctl)"; return 0
    fi
    return 1
}

install_postgres() {
    [[ $(id -u) -eq 0 ]] || die "PostgreSQL is not installed and this is not root: install Debian's postgresql package, or set CUZK_TEST_DATABASE_URL"
    command -v apt-get >/dev/null || die "PostgreSQL is not installed and there is no apt-get"
    echo "pg-test-server: installing PostgreSQL (apt-get install postgresql)" >&2
    # Only the binaries: no main cluster created or started by the package.
    mkdir -p /etc/postgresql-common
    if [[ ! -e /etc/postgresql-common/createcluster.conf ]]; then
        echo "create_main_cluster = false" > /etc/postgresql-common/createcluster.conf
    fi
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq --no-install-recommends postgresql >&2
}

# Run a command as the server's user.
as_pg() {
    if [[ $(id -u) -eq 0 ]]; then
        runuser -u "$pg_user" -- "$@"
    else
        "$@"
    fi
}

ensure_user() {
    [[ $(id -u) -eq 0 ]] || return 0
    if ! id "$pg_user" >/dev/null 2>&1; then
        # Two test binaries starting at once may both try; one wins.
        useradd --system --no-create-home --shell /usr/sbin/nologin "$pg_user" 2>/dev/null \
            || id "$pg_user" >/dev/null 2>&1 || die "cannot create user $pg_user"
    fi
}

port_in_use() {
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

cmd_start() {
    local owner="" durable=0
    while [[ $# -gt 0 ]]; do
        case "$1" in
            --owner-pid) owner="$2"; shift 2 ;;
            --durable) durable=1; shift ;;
            *) die "unknown option $1" ;;
        esac
    done
    local bindir
    bindir="$(find_bindir)" || { install_postgres; bindir="$(find_bindir)" || die "no PostgreSQL binaries after installing"; }
    ensure_user
    local dir
    # As root, under /tmp: the server's user must reach the dir, and a
    # TMPDIR under /root would not let it.
    local tmp="${TMPDIR:-/tmp}"
    [[ $(id -u) -eq 0 ]] && tmp=/tmp
    dir="$(mktemp -d "$tmp/cuzk-pg.XXXXXX")"
    chmod 700 "$dir"
    [[ $(id -u) -eq 0 ]] && chown "$pg_user" "$dir"
    echo "$bindir" > "$dir/bindir"
    if ! as_pg "$bindir/initdb" -D "$dir/data" -U cuzk --auth=trust -E UTF8 --no-locale --no-sync \
            > "$dir/initdb.log" 2>&1; then
        cat "$dir/initdb.log" >&2
        rm -rf "$dir"
        die "initdb failed"
    fi
    local opts="-c listen_addresses=127.0.0.1 -c unix_socket_directories=$dir -c max_connections=400"
    if [[ $durable -eq 0 ]]; then
        opts="$opts -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    fi
    local port="" try
    for try in $(seq 1 30); do
        local p=$(( 20000 + RANDOM % 40000 ))
        port_in_use "$p" && continue
        if as_pg "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
                -o "$opts -p $p" start > /dev/null 2>&1; then
            port="$p"; break
        fi
    done
    if [[ -z "$port" ]]; then
        cat "$dir/server.log" >&2 2>/dev/null || true
        rm -rf "$dir"
        die "the server did not start"
    fi
    echo "$port" > "$dir/port"
    if [[ -n "$owner" ]]; then
        # Detached, with no descriptor of ours, so that the caller reading
        # this script's output sees it end.
        setsid bash -c 'while kill -0 "$1" 2>/dev/null; do sleep 1; done; exec bash "$2" stop "$3"' \
            _ "$owner" "$script" "$dir" < /dev/null > /dev/null 2>&1 &
    fi
    echo "DIR=$dir"
    echo "URL=postgres://cuzk@127.0.0.1:$port/postgres"
}

check_dir() {
    [[ -n "${1:-}" && -f "$1/bindir" && -d "$1/data" ]] || die "not a server dir: ${1:-}"
}

cmd_restart() {
    check_dir "${1:-}"
    local bindir; bindir="$(cat "$1/bindir")"
    as_pg "$bindir/pg_ctl" -D "$1/data" -l "$1/server.log" -m fast -w -t 60 restart > /dev/null
}

cmd_stop() {
    [[ -d "${1:-}" ]] || return 0
    if [[ -f "$1/bindir" && -f "$1/data/postmaster.pid" ]]; then
        local bindir; bindir="$(cat "$1/bindir")"
        as_pg "$bindir/pg_ctl" -D "$1/data" -m immediate -w stop > /dev/null 2>&1 || true
    fi
    case "$1" in
        */cuzk-pg.*) rm -rf "$1" ;;
        *) die "refusing to delete $1" ;;
    esac
}

case "${1:-}" in
    start) shift; cmd_start "$@" ;;
    restart) cmd_restart "${2:-}" ;;
    stop) cmd_stop "${2:-}" ;;
    *) die "usage: $0 start [--owner-pid PID] [--durable] | restart DIR | stop DIR" ;;
esac
