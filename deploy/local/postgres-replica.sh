#!/usr/bin/env bash
# A hot standby of the project's PostgreSQL (postgres.sh) for local runs and tests: a copy taken with
# pg_basebackup that streams the primary's WAL through a replication slot and answers read-only queries,
# on a port, data directory and socket directory of its own, listening on 127.0.0.1 only. It may apply
# what it receives with a delay, so that tests can make replication lag.
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"

: "${NOTIFY_POSTGRES_REPLICA_PORT:=$((NOTIFY_POSTGRES_PORT + 1))}"
: "${NOTIFY_POSTGRES_REPLICA_DELAY_MS:=0}"
: "${NOTIFY_REPLICA_DATABASE_URL:=postgres://notify_reader:notify_reader@127.0.0.1:$NOTIFY_POSTGRES_REPLICA_PORT/notify}"
NOTIFY_PG_BIN_DIR="$(notify_pg_bin_dir)"

DIR="$NOTIFY_STATE_DIR/postgres-replica"
PRIMARY_DIR="$NOTIFY_STATE_DIR/postgres"
START_TIMEOUT="${NOTIFY_POSTGRES_START_TIMEOUT:-60}"
# The primary keeps the WAL the standby has not received yet in this slot, as this role streams it.
SLOT=notify_replica
REPLICATION_ROLE=notify_replication

usage() {
    cat <<USAGE
usage: $NOTIFY_SCRIPT_NAME start|stop|restart|status

Runs a hot standby of the PostgreSQL cluster of postgres.sh (127.0.0.1:$NOTIFY_POSTGRES_PORT, which must run)
on 127.0.0.1:$NOTIFY_POSTGRES_REPLICA_PORT without systemd.
  start    copy the primary with pg_basebackup if there is no standby of it yet (a copy of
           another cluster, or one whose slot is gone, is taken again), start it (if it runs:
           apply the delay below at once), and wait until it streams
  stop     stop the standby (fast shutdown); its copy and slot are kept, so start resumes
  restart  stop, then start
  status   print whether it runs, and how far behind it is; exit 0 if it runs, 3 if not

Settings (environment):
  NOTIFY_POSTGRES_REPLICA_PORT      its port (now $NOTIFY_POSTGRES_REPLICA_PORT; default: NOTIFY_POSTGRES_PORT + 1)
  NOTIFY_POSTGRES_REPLICA_DELAY_MS  recovery_min_apply_delay: a commit becomes visible on the
                                    standby this long after it was made (now $NOTIFY_POSTGRES_REPLICA_DELAY_MS; default 0)

State: $DIR (log: $DIR/postgres.log). Slot "$SLOT" and role "$REPLICATION_ROLE" on the primary.
Reader: $NOTIFY_REPLICA_DATABASE_URL
        (ingest's NOTIFY_REPLICA_DATABASE_URL: the changes feed and history are read there)
USAGE
}

psql_primary() {
    "$NOTIFY_PG_BIN_DIR/psql" -X -q -A -t -v ON_ERROR_STOP=1 -h "$PRIMARY_DIR" -p "$NOTIFY_POSTGRES_PORT" -U postgres -d postgres "$@"
}

psql_standby() {
    "$NOTIFY_PG_BIN_DIR/psql" -X -q -A -t -v ON_ERROR_STOP=1 -h "$DIR" -p "$NOTIFY_POSTGRES_REPLICA_PORT" -U postgres -d postgres "$@"
}

# The "Database system identifier" pg_controldata reads in data directory $1 (the cluster's own id, kept by its copies).
system_identifier() {
    notify_pg_as_owner "$DIR" "$NOTIFY_PG_BIN_DIR/pg_controldata" "$1" | sed -n 's/^Database system identifier: *//p'
}

# True when $DIR/data is a standby of the running primary that can resume: a copy of the same cluster, and its slot
# still holds the WAL it needs.
standby_of_primary() {
    [ -f "$DIR/data/PG_VERSION" ] && [ -f "$DIR/data/standby.signal" ] || return 1
    [ "$(system_identifier "$DIR/data")" = "$(psql_primary -c "SELECT system_identifier FROM pg_control_system()")" ] || return 1
    local wal_status
    wal_status="$(psql_primary -c "SELECT wal_status FROM pg_replication_slots WHERE slot_name = '$SLOT'")"
    [ -n "$wal_status" ] && [ "$wal_status" != lost ]
}

# Copies the primary into $DIR/data afresh, through a new slot.
take_copy() {
    echo "$NOTIFY_SCRIPT_NAME: copying the primary (127.0.0.1:$NOTIFY_POSTGRES_PORT) into $DIR/data"
    psql_primary >/dev/null <<SQL
SELECT 'CREATE ROLE $REPLICATION_ROLE' WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$REPLICATION_ROLE') \gexec
ALTER ROLE $REPLICATION_ROLE REPLICATION LOGIN;
SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '$SLOT';
SQL
    rm -rf -- "$DIR/data"
    # A fast checkpoint: a spread one would take up to half of the primary's checkpoint_timeout.
    if ! notify_pg_as_owner "$DIR" "$NOTIFY_PG_BIN_DIR/pg_basebackup" -D "$DIR/data" \
            -d "host=127.0.0.1 port=$NOTIFY_POSTGRES_PORT user=$REPLICATION_ROLE" \
            --create-slot --slot="$SLOT" --wal-method=stream --checkpoint=fast --no-password \
            >"$DIR/basebackup.log" 2>&1; then
        notify_log_tail "$DIR/basebackup.log" 30
        notify_die "pg_basebackup from 127.0.0.1:$NOTIFY_POSTGRES_PORT failed"
    fi
    notify_pg_as_owner "$DIR" touch "$DIR/data/standby.signal"
}

# The copy keeps the primary's postgresql.conf, which includes notify-local.conf: this replaces the primary's.
write_config() {
    [[ "$NOTIFY_POSTGRES_REPLICA_DELAY_MS" =~ ^[0-9]+$ ]] ||
        notify_die "NOTIFY_POSTGRES_REPLICA_DELAY_MS must be a number of milliseconds, got '$NOTIFY_POSTGRES_REPLICA_DELAY_MS'"
    notify_pg_write_config "$DIR" "$NOTIFY_POSTGRES_REPLICA_PORT" \
        "# A hot standby needs at least the primary's max_connections and max_wal_senders." \
        "max_connections = 200" \
        "max_wal_senders = 10" \
        "hot_standby = on" \
        "primary_conninfo = 'host=127.0.0.1 port=$NOTIFY_POSTGRES_PORT user=$REPLICATION_ROLE application_name=$SLOT'" \
        "primary_slot_name = '$SLOT'" \
        "recovery_min_apply_delay = '${NOTIFY_POSTGRES_REPLICA_DELAY_MS}ms'" \
        "# The primary's vacuum keeps rows the standby's queries still read, so that replay does not cancel them." \
        "hot_standby_feedback = on"
}

# Waits until the standby's WAL receiver streams from the primary.
wait_streaming() {
    local deadline=$((SECONDS + START_TIMEOUT)) state
    while true; do
        state="$(psql_standby -c "SELECT status FROM pg_stat_wal_receiver" 2>/dev/null || true)"
        [ "$state" != streaming ] || return 0
        if [ "$SECONDS" -ge "$deadline" ]; then
            notify_log_tail "$DIR/postgres.log" 30
            notify_die "the standby does not stream from 127.0.0.1:$NOTIFY_POSTGRES_PORT after ${START_TIMEOUT}s (WAL receiver: ${state:-none})"
        fi
        sleep 0.2
    done
}

do_start() {
    for tool in pg_ctl pg_basebackup pg_controldata psql; do
        [ -x "$NOTIFY_PG_BIN_DIR/$tool" ] ||
            notify_die "$tool not found (looked in '${NOTIFY_PG_BIN_DIR:-/usr/lib/postgresql/*/bin}'); run deploy/local/install-deps.sh"
    done
    notify_pg_ctl_status "$PRIMARY_DIR" || notify_die "the primary does not run; start it first: deploy/local/postgres.sh start"
    notify_pg_prepare_dir "$DIR" "$NOTIFY_POSTGRES_REPLICA_PORT"
    if notify_pg_ctl_status "$DIR"; then
        # recovery_min_apply_delay is reloadable.
        write_config
        notify_pg_as_owner "$DIR" "$NOTIFY_PG_BIN_DIR/pg_ctl" -D "$DIR/data" reload >/dev/null
    else
        standby_of_primary || take_copy
        write_config
        notify_pg_start "$DIR" "$NOTIFY_POSTGRES_REPLICA_PORT" NOTIFY_POSTGRES_REPLICA_PORT "$START_TIMEOUT"
    fi
    wait_streaming
}

do_status() {
    notify_pg_print_status postgres-replica "$DIR" "$NOTIFY_POSTGRES_REPLICA_PORT" || return
    psql_standby -F ', ' -c "
        SELECT 'WAL receiver: ' || coalesce((SELECT status FROM pg_stat_wal_receiver), 'none'),
               'apply delay: ' || current_setting('recovery_min_apply_delay'),
               'last replayed commit: ' || coalesce(pg_last_xact_replay_timestamp()::text, 'none yet')"
}

case "${1:-}" in
    -h|--help|help) usage; exit 0 ;;
    start|stop|restart|status) ;;
    "") usage >&2; exit 2 ;;
    *) notify_warn "unknown command: $1"; usage >&2; exit 2 ;;
esac
[ $# -eq 1 ] || { usage >&2; exit 2; }
[ -n "$NOTIFY_PG_BIN_DIR" ] || notify_die "PostgreSQL is not installed; run deploy/local/install-deps.sh"

case "$1" in
    start) do_start ;;
    stop) notify_pg_stop "$DIR" ;;
    restart) notify_pg_stop "$DIR"; do_start ;;
    status) do_status ;;
esac
