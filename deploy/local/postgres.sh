#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for local runs and tests: its own data
# directory, socket directory and port, listening on 127.0.0.1 only, trust
# authentication (loopback only).
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"

DIR="$NOTIFY_STATE_DIR/postgres"
DATA="$DIR/data"
LOG="$DIR/postgres.log"
INIT_SQL="$NOTIFY_ROOT/deploy/postgres/init.sql"
START_TIMEOUT="${NOTIFY_POSTGRES_START_TIMEOUT:-60}"

NOTIFY_PG_BIN_DIR="$(notify_pg_bin_dir)"

usage() {
    cat <<USAGE
usage: $NOTIFY_SCRIPT_NAME start|stop|kill|restart|status

Runs a PostgreSQL cluster on 127.0.0.1:$NOTIFY_POSTGRES_PORT without systemd.
  start    initialise the cluster if needed, start it (no-op if running),
           then make sure database "notify" and roles notify_writer and
           notify_reader exist (deploy/postgres/init.sql)
  stop     stop the cluster (fast shutdown)
  kill     stop it immediately (no shutdown checkpoint: the next start recovers from the WAL, as after a crash)
  restart  stop, then start (data is kept)
  status   print whether it runs; exit 0 if it does, 3 if not

State: $DIR (log: $LOG). The cluster runs as the
"postgres" OS user when this script runs as root.
Superuser: psql -h $DIR -p $NOTIFY_POSTGRES_PORT -U postgres
Writer:    $NOTIFY_WRITER_DATABASE_URL
Reader:    $NOTIFY_READER_DATABASE_URL
USAGE
}

prepare_dir() {
    [ -x "$NOTIFY_PG_BIN_DIR/initdb" ] && [ -x "$NOTIFY_PG_BIN_DIR/pg_ctl" ] ||
        notify_die "PostgreSQL binaries not found (looked in '${NOTIFY_PG_BIN_DIR:-/usr/lib/postgresql/*/bin}'); run deploy/local/install-deps.sh"
    notify_pg_prepare_dir "$DIR" "$NOTIFY_POSTGRES_PORT"
}

init_cluster() {
    [ -f "$DATA/PG_VERSION" ] && return 0
    if ! notify_pg_as_owner "$DIR" "$NOTIFY_PG_BIN_DIR/initdb" -D "$DATA" -U postgres -A trust -E UTF8 --no-locale \
            >"$DIR/initdb.log" 2>&1; then
        notify_log_tail "$DIR/initdb.log" 30
        notify_die "initdb failed"
    fi
    echo "include_if_exists = 'notify-local.conf'" >>"$DATA/postgresql.conf"
}

# Rewritten on every start so that port overrides take effect.
write_config() {
    notify_pg_write_config "$DIR" "$NOTIFY_POSTGRES_PORT" \
        "max_connections = 200" \
        "# Write-heavy settings: every notification is a few multi-row inserts into tables with random (UUID) keys." \
        "# Room for the indexes' working set, and checkpoints far enough apart that a page is not logged in full" \
        "# again every few seconds (with the defaults, the WAL size forced a checkpoint every few seconds under load)." \
        "shared_buffers = ${NOTIFY_POSTGRES_SHARED_BUFFERS:-512MB}" \
        "max_wal_size = 8GB" \
        "checkpoint_timeout = 15min" \
        "wal_compression = on" \
        "# A hot standby may follow (postgres-replica.sh): it streams the WAL over a replication connection from" \
        "# 127.0.0.1 (initdb's pg_hba.conf trusts those) and keeps its place in a slot, which may hold back at most" \
        "# this much WAL while the standby is stopped (then it is built afresh)." \
        "wal_level = replica" \
        "max_wal_senders = 10" \
        "max_replication_slots = 10" \
        "max_slot_wal_keep_size = 4GB"
}

psql_super() {
    "$NOTIFY_PG_BIN_DIR/psql" -X -q -h "$DIR" -p "$NOTIFY_POSTGRES_PORT" -U postgres "$@"
}

provision() {
    [ -f "$INIT_SQL" ] || notify_die "missing $INIT_SQL"
    if ! psql_super -d postgres -v ON_ERROR_STOP=1 -f "$INIT_SQL" >"$DIR/provision.log" 2>&1; then
        cat "$DIR/provision.log" >&2
        notify_die "could not create database notify and its roles ($INIT_SQL)"
    fi
}

do_start() {
    prepare_dir
    init_cluster
    notify_pg_ctl_status "$DIR" || write_config
    notify_pg_start "$DIR" "$NOTIFY_POSTGRES_PORT" NOTIFY_POSTGRES_PORT "$START_TIMEOUT"
    provision
}

case "${1:-}" in
    -h|--help|help) usage; exit 0 ;;
    start|stop|kill|restart|status) ;;
    "") usage >&2; exit 2 ;;
    *) notify_warn "unknown command: $1"; usage >&2; exit 2 ;;
esac
[ $# -eq 1 ] || { usage >&2; exit 2; }
[ -n "$NOTIFY_PG_BIN_DIR" ] || notify_die "PostgreSQL is not installed; run deploy/local/install-deps.sh"

case "$1" in
    start) do_start ;;
    stop) notify_pg_stop "$DIR" ;;
    kill) notify_pg_stop "$DIR" immediate ;;
    restart) notify_pg_stop "$DIR"; do_start ;;
    status) notify_pg_print_status postgres "$DIR" "$NOTIFY_POSTGRES_PORT" ;;
esac
