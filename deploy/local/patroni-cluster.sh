#!/usr/bin/env bash
# A PostgreSQL cluster that survives losing its primary: three PostgreSQL members run by Patroni (one primary, two
# standbys, synchronous mode), a three-member etcd holding the leader key, and HAProxy in front that sends the
# services to the current primary (NOTIFY_POSTGRES_PORT, so every URL of env.sh works unchanged) and reads to a
# standby (NOTIFY_POSTGRES_REPLICA_PORT), each checked through Patroni's REST API. Everything on 127.0.0.1, without
# systemd, state under $NOTIFY_STATE_DIR/patroni-cluster.
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"

MEMBERS=3
CLUSTER_DIR="$NOTIFY_STATE_DIR/patroni-cluster"
INIT_SQL="$NOTIFY_ROOT/deploy/postgres/init.sql"
# The members' superuser's password (over TCP; a member's own socket trusts), loopback only.
SUPERUSER_PASSWORD=postgres
: "${NOTIFY_POSTGRES_REPLICA_PORT:=$((NOTIFY_POSTGRES_PORT + 1))}"
HAPROXY_STATS_PORT=$((NOTIFY_POSTGRES_PORT + 2))
# Synchronous mode (deploy/patroni/patroni.yml says why); "off" measures what it costs. Read when the cluster is made.
: "${NOTIFY_PATRONI_SYNCHRONOUS:=on}"
START_TIMEOUT="${NOTIFY_PATRONI_START_TIMEOUT:-90}"

NOTIFY_PG_BIN_DIR="$(notify_pg_bin_dir)"

# Member N's PostgreSQL port (the stack's + 100 x N), its Patroni REST port (+ 8); etcd member N's client and peer ports.
member_port() { echo $((NOTIFY_POSTGRES_PORT + 100 * $1)); }
rest_port() { echo $(($(member_port "$1") + 8)); }
etcd_client_port() { echo $((NOTIFY_PORT_BLOCK * 1000 + 379 + 100 * ($1 - 1))); }
etcd_peer_port() { echo $(($(etcd_client_port "$1") + 1)); }
member_dir() { echo "$CLUSTER_DIR/pg$1"; }
etcd_dir() { echo "$CLUSTER_DIR/etcd$1"; }

usage() {
    cat <<USAGE
usage: $NOTIFY_SCRIPT_NAME start|recover|stop|status|leader|wait-healthy
       $NOTIFY_SCRIPT_NAME start-member|kill-member|lose-member N
       $NOTIFY_SCRIPT_NAME lose-primary|kill-primary|kill-standby
       $NOTIFY_SCRIPT_NAME start-etcd|kill-etcd N
       $NOTIFY_SCRIPT_NAME start-haproxy|stop-haproxy|restart-haproxy
       $NOTIFY_SCRIPT_NAME patronictl ARGS...

PostgreSQL under Patroni ($MEMBERS members on ports $(member_port 1), $(member_port 2), $(member_port 3); REST $(rest_port 1), $(rest_port 2), $(rest_port 3)),
etcd ($MEMBERS members, clients on $(etcd_client_port 1), $(etcd_client_port 2), $(etcd_client_port 3)) and HAProxy: the primary on
127.0.0.1:$NOTIFY_POSTGRES_PORT, a standby on 127.0.0.1:$NOTIFY_POSTGRES_REPLICA_PORT, statistics on http://127.0.0.1:$HAPROXY_STATS_PORT/.
  start            start etcd, every member and HAProxy (no-op for what runs); wait for a primary and a
                   synchronous standby; create database "notify" and its roles (deploy/postgres/init.sql)
  recover          start what is not running (a lost member is built afresh from the primary, a former
                   primary rejoins as a standby) and wait for a healthy cluster, one caller at a time
  stop             stop HAProxy, the members (standbys first) and etcd
  status           each process's state and Patroni's view (patronictl list); exit 0 if all run, 3 if not
  leader           the member number of the current primary (exit 3 when there is none)
  wait-healthy     wait until there is a primary, a synchronous standby and every running member streams
  start-member N   start member N: it rejoins as a standby (pg_rewind when it was a primary that fell
                   behind), or, with no data directory, is built afresh from the primary
  kill-member N    SIGKILL member N's Patroni and PostgreSQL (a crash; its data is kept)
  lose-member N    as kill-member, then set its data directory aside: the machine is gone (start-member N
                   then builds a new one)
  lose-primary, kill-primary, kill-standby
                   lose-member or kill-member of the current primary, or kill-member of a standby
  start-etcd N, kill-etcd N
                   start or SIGKILL etcd member N
  start-haproxy, stop-haproxy, restart-haproxy
  patronictl ...   patronictl with this cluster's configuration (e.g. patronictl list, switchover)

Each member runs deploy/patroni/patroni.yml (Patroni's timing, synchronous mode, PostgreSQL's settings) with its own
addresses, HAProxy deploy/patroni/haproxy.cfg. NOTIFY_PATRONI_SYNCHRONOUS=off (now $NOTIFY_PATRONI_SYNCHRONOUS) makes a
cluster without synchronous mode, to measure what it costs (read when the cluster is first made).
State: $CLUSTER_DIR (each process's log beside its data). Members run as the "postgres" OS user when this script
runs as root. Superuser: PGPASSWORD=$SUPERUSER_PASSWORD psql -h 127.0.0.1 -p $NOTIFY_POSTGRES_PORT -U postgres
USAGE
}

# ---- etcd -------------------------------------------------------------------

etcd_pid() { [ -f "$(etcd_dir "$1")/etcd.pid" ] && tr -dc '0-9' <"$(etcd_dir "$1")/etcd.pid"; }
etcd_running() { local pid; pid="$(etcd_pid "$1" || true)"; [ -n "$pid" ] && notify_pid_alive "$pid"; }
etcd_endpoints() {
    local n list=""
    for n in $(seq 1 "$MEMBERS"); do list+="${list:+,}127.0.0.1:$(etcd_client_port "$n")"; done
    echo "$list"
}

start_etcd() {
    local n="$1" dir cluster="" i
    etcd_running "$n" && return 0
    dir="$(etcd_dir "$n")"
    mkdir -p "$dir"
    for i in $(seq 1 "$MEMBERS"); do cluster+="${cluster:+,}etcd$i=http://127.0.0.1:$(etcd_peer_port "$i")"; done
    notify_port_listening "$(etcd_client_port "$n")" && notify_die "port $(etcd_client_port "$n") is taken (etcd member $n)"
    local state=new
    [ -d "$dir/data/member" ] && state=existing
    # A heartbeat of 100 ms and an election after 1 s (etcd's defaults), on a machine two cores wide.
    nohup setsid etcd --name "etcd$n" --data-dir "$dir/data" \
        --listen-client-urls "http://127.0.0.1:$(etcd_client_port "$n")" --advertise-client-urls "http://127.0.0.1:$(etcd_client_port "$n")" \
        --listen-peer-urls "http://127.0.0.1:$(etcd_peer_port "$n")" --initial-advertise-peer-urls "http://127.0.0.1:$(etcd_peer_port "$n")" \
        --initial-cluster "$cluster" --initial-cluster-state "$state" --initial-cluster-token "notify-$NOTIFY_PORT_BLOCK" \
        --enable-v2=false --log-level warn --logger zap >"$dir/etcd.log" 2>&1 </dev/null 9>&- &
    echo $! >"$dir/etcd.pid"
}

wait_etcd() {
    local n="$1" deadline=$((SECONDS + 30))
    until notify_port_listening "$(etcd_client_port "$n")"; do
        etcd_running "$n" || { notify_log_tail "$(etcd_dir "$n")/etcd.log" 20; notify_die "etcd member $n exited"; }
        [ "$SECONDS" -lt "$deadline" ] || notify_die "etcd member $n does not listen after 30 s"
        sleep 0.2
    done
}

kill_etcd() {
    local pid
    pid="$(etcd_pid "$1" || true)"
    [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null || true
}

stop_etcd() {
    local pid deadline
    pid="$(etcd_pid "$1" || true)"
    [ -n "$pid" ] && notify_pid_alive "$pid" || return 0
    kill "$pid" 2>/dev/null || true
    deadline=$((SECONDS + 15))
    while notify_pid_alive "$pid" && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.2; done
    notify_pid_alive "$pid" && kill -9 "$pid" 2>/dev/null || true
}

# ---- Patroni members --------------------------------------------------------

member_pid() { [ -f "$(member_dir "$1")/patroni.pid" ] && tr -dc '0-9' <"$(member_dir "$1")/patroni.pid"; }
member_running() { local pid; pid="$(member_pid "$1" || true)"; [ -n "$pid" ] && notify_pid_alive "$pid"; }

# Member N's configuration directory: deploy/patroni/patroni.yml (what every member of every installation shares),
# then what is this member's on this machine.
write_member_config() {
    local n="$1" dir synchronous=true
    dir="$(member_dir "$n")"
    [ "$NOTIFY_PATRONI_SYNCHRONOUS" = off ] && synchronous=false
    mkdir -p "$dir/config"
    cp "$NOTIFY_ROOT/deploy/patroni/patroni.yml" "$dir/config/10-notify.yml"
    cat >"$dir/config/20-local.yml" <<YAML
# Generated by deploy/local/$NOTIFY_SCRIPT_NAME; rewritten on every start.
scope: notify-$NOTIFY_PORT_BLOCK
name: pg$n
restapi:
  listen: 127.0.0.1:$(rest_port "$n")
  connect_address: 127.0.0.1:$(rest_port "$n")
etcd3:
  hosts: $(etcd_endpoints)
bootstrap:
  dcs:
    synchronous_mode: $synchronous
    synchronous_mode_strict: $synchronous
    postgresql:
      parameters:
        shared_buffers: ${NOTIFY_POSTGRES_SHARED_BUFFERS:-512MB}
  post_bootstrap: $NOTIFY_ROOT/deploy/patroni/post-bootstrap.sh
postgresql:
  listen: 127.0.0.1:$(member_port "$n")
  connect_address: 127.0.0.1:$(member_port "$n")
  data_dir: $dir/data
  bin_dir: $NOTIFY_PG_BIN_DIR
  pgpass: $dir/pgpass
  authentication:
    superuser: {username: postgres, password: $SUPERUSER_PASSWORD}
    replication: {username: replicator, password: replicator}
    rewind: {username: postgres, password: $SUPERUSER_PASSWORD}
  parameters:
    unix_socket_directories: '$dir'
YAML
    [ "$(id -u)" -ne 0 ] || chown -R postgres:postgres "$dir/config"
}

start_member() {
    local n="$1" dir
    member_running "$n" && return 0
    dir="$(member_dir "$n")"
    notify_pg_prepare_dir "$dir" "$(member_port "$n")"
    notify_port_listening "$(member_port "$n")" && notify_die "port $(member_port "$n") is taken (member $n)"
    write_member_config "$n"
    rm -f "$dir/patroni.pid"
    # A session of its own, so that kill-member ends Patroni and the PostgreSQL it started at once; Patroni's own pid
    # in patroni.pid.
    # shellcheck disable=SC2016  # $$ is the inner shell's
    notify_pg_as_owner "$dir" env NOTIFY_INIT_SQL="$INIT_SQL" nohup setsid sh -c 'echo $$ >"$1/patroni.pid"; exec patroni "$1/config"' sh "$dir" \
        >>"$dir/patroni.log" 2>&1 </dev/null 9>&- &
    local deadline=$((SECONDS + 10))
    until [ -s "$dir/patroni.pid" ]; do
        [ "$SECONDS" -lt "$deadline" ] || notify_die "member $n did not start (log: $dir/patroni.log)"
        sleep 0.1
    done
}

kill_member() {
    local n="$1" pid
    pid="$(member_pid "$n" || true)"
    [ -n "$pid" ] || return 0
    # The member's session (Patroni leads it): Patroni and the PostgreSQL it started.
    pkill -9 -s "$pid" 2>/dev/null || true
    kill -9 "$pid" 2>/dev/null || true
    # A postmaster that escaped the session (none should) is found by its data directory.
    local postmaster
    postmaster="$(head -n 1 "$(member_dir "$n")/data/postmaster.pid" 2>/dev/null || true)"
    [ -n "$postmaster" ] && kill -9 "$postmaster" 2>/dev/null || true
    local deadline=$((SECONDS + 10))
    while notify_port_listening "$(member_port "$n")" && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.1; done
}

lose_member() {
    local n="$1" dir
    kill_member "$n"
    dir="$(member_dir "$n")"
    # The latest lost directory is kept for a look; older ones go.
    rm -rf "$dir"/data.lost-*
    [ -d "$dir/data" ] && mv "$dir/data" "$dir/data.lost-$(date -u +%Y%m%dT%H%M%S)"
    return 0
}

stop_member() {
    local n="$1" pid deadline
    pid="$(member_pid "$n" || true)"
    [ -n "$pid" ] && notify_pid_alive "$pid" || return 0
    # SIGTERM: Patroni stops PostgreSQL (fast shutdown) and gives up the leader key.
    kill "$pid" 2>/dev/null || true
    deadline=$((SECONDS + 60))
    while notify_pid_alive "$pid" && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.2; done
    notify_pid_alive "$pid" && kill_member "$n"
    return 0
}

# Patroni's REST answer for member N at PATH (e.g. /patroni), empty when it does not answer.
rest() { curl -s -m 2 "http://127.0.0.1:$(rest_port "$1")$2" 2>/dev/null || true; }
# The HTTP status of GET PATH at member N's REST API (200 primary/replica checks), 000 when it does not answer.
rest_status() { curl -s -o /dev/null -m 2 -w '%{http_code}' "http://127.0.0.1:$(rest_port "$1")$2" 2>/dev/null || true; }

leader() {
    local n
    for n in $(seq 1 "$MEMBERS"); do
        [ "$(rest_status "$n" /primary)" = 200 ] && { echo "$n"; return 0; }
    done
    return 3
}

# True when there is a primary, every running member streams from it, and (in synchronous mode) one is its
# synchronous standby.
healthy() {
    local n leader_n streaming=0 running=0 sync=0
    leader_n="$(leader)" || return 1
    for n in $(seq 1 "$MEMBERS"); do
        member_running "$n" || continue
        running=$((running + 1))
        [ "$n" = "$leader_n" ] && continue
        [ "$(rest_status "$n" /replica)" = 200 ] && streaming=$((streaming + 1))
        [ "$(rest_status "$n" /sync)" = 200 ] && sync=$((sync + 1))
    done
    [ "$streaming" -eq $((running - 1)) ] || return 1
    [ "$NOTIFY_PATRONI_SYNCHRONOUS" = off ] || [ "$running" -lt 2 ] || [ "$sync" -ge 1 ]
}

wait_healthy() {
    local deadline=$((SECONDS + START_TIMEOUT))
    until healthy; do
        if [ "$SECONDS" -ge "$deadline" ]; then
            patronictl_run list >&2 || true
            local n
            for n in $(seq 1 "$MEMBERS"); do notify_log_tail "$(member_dir "$n")/patroni.log" 15; done
            notify_die "no healthy cluster after ${START_TIMEOUT}s (a primary, its standbys streaming, one synchronous)"
        fi
        sleep 0.5
    done
}

patronictl_run() {
    patronictl --config-file "$(member_dir 1)/config" "$@"
}

# ---- HAProxy ----------------------------------------------------------------

haproxy_pid() { [ -f "$CLUSTER_DIR/haproxy/haproxy.pid" ] && tr -dc '0-9\n' <"$CLUSTER_DIR/haproxy/haproxy.pid" | head -n 1; }
haproxy_running() { local pid; pid="$(haproxy_pid || true)"; [ -n "$pid" ] && notify_pid_alive "$pid"; }

# deploy/patroni/haproxy.cfg's addresses: this stack's ports.
haproxy_environment() {
    local n
    export NOTIFY_HAPROXY_PRIMARY_BIND="127.0.0.1:$NOTIFY_POSTGRES_PORT" NOTIFY_HAPROXY_STANDBY_BIND="127.0.0.1:$NOTIFY_POSTGRES_REPLICA_PORT" \
        NOTIFY_HAPROXY_STATS_BIND="127.0.0.1:$HAPROXY_STATS_PORT"
    for n in $(seq 1 "$MEMBERS"); do
        export "NOTIFY_PATRONI_${n}_POSTGRES=127.0.0.1:$(member_port "$n")" "NOTIFY_PATRONI_${n}_REST_PORT=$(rest_port "$n")"
    done
}

start_haproxy() {
    haproxy_running && return 0
    local dir="$CLUSTER_DIR/haproxy" config="$NOTIFY_ROOT/deploy/patroni/haproxy.cfg"
    mkdir -p "$dir"
    haproxy_environment
    notify_port_listening "$NOTIFY_POSTGRES_PORT" && notify_die "port $NOTIFY_POSTGRES_PORT is taken (HAProxy's primary frontend)"
    haproxy -c -q -f "$config" || notify_die "HAProxy refuses $config"
    nohup setsid haproxy -W -f "$config" -p "$dir/haproxy.pid" >>"$dir/haproxy.log" 2>&1 </dev/null 9>&- &
    local deadline=$((SECONDS + 15))
    until notify_port_listening "$NOTIFY_POSTGRES_PORT"; do
        [ "$SECONDS" -lt "$deadline" ] || { notify_log_tail "$dir/haproxy.log" 20; notify_die "HAProxy does not listen after 15 s"; }
        sleep 0.1
    done
}

stop_haproxy() {
    local pid deadline
    pid="$(haproxy_pid || true)"
    [ -n "$pid" ] && notify_pid_alive "$pid" || return 0
    kill "$pid" 2>/dev/null || true
    deadline=$((SECONDS + 10))
    while notify_pid_alive "$pid" && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.1; done
    notify_pid_alive "$pid" && kill -9 "$pid" 2>/dev/null || true
    rm -f "$CLUSTER_DIR/haproxy/haproxy.pid"
}

# ---- the cluster ------------------------------------------------------------

provision() {
    [ -f "$INIT_SQL" ] || notify_die "missing $INIT_SQL"
    if ! PGPASSWORD="$SUPERUSER_PASSWORD" "$NOTIFY_PG_BIN_DIR/psql" -X -q -h 127.0.0.1 -p "$NOTIFY_POSTGRES_PORT" -U postgres -d postgres -v ON_ERROR_STOP=1 \
            -f "$INIT_SQL" >"$CLUSTER_DIR/provision.log" 2>&1; then
        cat "$CLUSTER_DIR/provision.log" >&2
        notify_die "could not create database notify and its roles ($INIT_SQL)"
    fi
}

# Starts whatever is not running and waits for a healthy cluster; one at a time (a chaos run's recoveries overlap).
do_recover() {
    command -v patroni >/dev/null && command -v etcd >/dev/null && command -v haproxy >/dev/null ||
        notify_die "patroni, etcd and haproxy are needed; run deploy/local/install-deps.sh"
    mkdir -p "$CLUSTER_DIR"
    [ "$(id -u)" -ne 0 ] || chmod o+x "$NOTIFY_STATE_DIR" "$CLUSTER_DIR"
    # The servers started below are given no copy of the lock's descriptor (9>&-), or they would hold the lock.
    exec 9>"$CLUSTER_DIR/.recover.lock"
    flock 9
    local n
    for n in $(seq 1 "$MEMBERS"); do start_etcd "$n"; done
    for n in $(seq 1 "$MEMBERS"); do wait_etcd "$n"; done
    for n in $(seq 1 "$MEMBERS"); do start_member "$n"; done
    start_haproxy
    wait_healthy
    # HAProxy sends connections to the primary once its check passed.
    local deadline=$((SECONDS + 15))
    until "$NOTIFY_PG_BIN_DIR/pg_isready" -q -h 127.0.0.1 -p "$NOTIFY_POSTGRES_PORT" -U postgres; do
        [ "$SECONDS" -lt "$deadline" ] || notify_die "no primary behind HAProxy (127.0.0.1:$NOTIFY_POSTGRES_PORT) after 15 s"
        sleep 0.2
    done
    exec 9>&-
}

do_start() {
    do_recover
    provision
}

do_stop() {
    stop_haproxy
    local n leader_n
    leader_n="$(leader || true)"
    for n in $(seq 1 "$MEMBERS"); do [ "$n" = "$leader_n" ] || stop_member "$n"; done
    [ -z "$leader_n" ] || stop_member "$leader_n"
    for n in $(seq "$MEMBERS" -1 1); do stop_etcd "$n"; done
}

do_status() {
    local n status=0 state
    for n in $(seq 1 "$MEMBERS"); do
        if etcd_running "$n"; then state="running (pid $(etcd_pid "$n"))"; else state=stopped; status=3; fi
        echo "etcd member $n: $state, 127.0.0.1:$(etcd_client_port "$n")"
    done
    for n in $(seq 1 "$MEMBERS"); do
        if member_running "$n"; then state="running (pid $(member_pid "$n"))"; else state=stopped; status=3; fi
        echo "member $n: $state, PostgreSQL 127.0.0.1:$(member_port "$n"), REST 127.0.0.1:$(rest_port "$n")"
    done
    if haproxy_running; then state="running (pid $(haproxy_pid))"; else state=stopped; status=3; fi
    echo "HAProxy: $state, primary 127.0.0.1:$NOTIFY_POSTGRES_PORT, standby 127.0.0.1:$NOTIFY_POSTGRES_REPLICA_PORT"
    patronictl_run list 2>/dev/null || true
    return "$status"
}

member_argument() {
    [[ "${1:-}" =~ ^[1-9]$ ]] && [ "$1" -le "$MEMBERS" ] || notify_die "expected a member number from 1 to $MEMBERS"
}

case "${1:-}" in
    -h|--help|help) usage; exit 0 ;;
    "") usage >&2; exit 2 ;;
esac
[ -n "$NOTIFY_PG_BIN_DIR" ] || notify_die "PostgreSQL is not installed; run deploy/local/install-deps.sh"
command="$1"
shift
case "$command" in
    start) do_start ;;
    recover) do_recover ;;
    stop) do_stop ;;
    status) do_status ;;
    leader) leader ;;
    wait-healthy) wait_healthy ;;
    start-member) member_argument "${1:-}"; start_member "$1" ;;
    kill-member) member_argument "${1:-}"; kill_member "$1" ;;
    lose-member) member_argument "${1:-}"; lose_member "$1" ;;
    lose-primary) n="$(leader)" || notify_die "no primary to lose"; lose_member "$n"; echo "$n" ;;
    kill-primary) n="$(leader)" || notify_die "no primary to kill"; kill_member "$n"; echo "$n" ;;
    kill-standby)
        primary="$(leader)" || notify_die "no primary"
        for n in $(seq "$MEMBERS" -1 1); do
            if [ "$n" != "$primary" ] && member_running "$n"; then kill_member "$n"; echo "$n"; exit 0; fi
        done
        notify_die "no running standby"
        ;;
    start-etcd) member_argument "${1:-}"; start_etcd "$1"; wait_etcd "$1" ;;
    kill-etcd) member_argument "${1:-}"; kill_etcd "$1" ;;
    start-haproxy) start_haproxy ;;
    stop-haproxy) stop_haproxy ;;
    restart-haproxy) stop_haproxy; start_haproxy ;;
    patronictl) patronictl_run "$@" ;;
    *) notify_warn "unknown command: $command"; usage >&2; exit 2 ;;
esac
