#!/usr/bin/env bash
# A three-node RabbitMQ cluster on this machine, each node started by rabbitmq.sh with ports and a data
# directory of its own, sharing one Erlang cookie and this stack's epmd. Quorum queues declared while the
# three run are replicated on all three.
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"

NODES=3
CLUSTER_DIR="$NOTIFY_STATE_DIR/rabbitmq-cluster"
COOKIE_FILE="$CLUSTER_DIR/cookie"
here="$(dirname -- "${BASH_SOURCE[0]}")"

# Node N's AMQP port: node 1 has the stack's, node N the stack's + 100 x (N - 1); its other ports follow it
# as the single node's follow NOTIFY_RABBITMQ_PORT (management +1, distribution +2, Prometheus +20, CLI +8..+17).
node_port() { echo $((NOTIFY_RABBITMQ_PORT + 100 * ($1 - 1))); }
node_name() { echo "rmq$(node_port "$1")@localhost"; }

usage() {
    cat <<USAGE
usage: $NOTIFY_SCRIPT_NAME start|stop|status|url|management-url
       $NOTIFY_SCRIPT_NAME start-node|stop-node|kill-node N
       $NOTIFY_SCRIPT_NAME ctl N RABBITMQCTL-ARGS...

A $NODES-node RabbitMQ cluster on 127.0.0.1 without systemd (node N's AMQP port: $(node_port 1), $(node_port 2), $(node_port 3)).
  start           start the nodes one after another (each joins the ones running); no-op for running ones
  stop            stop every node (node $NODES first, node 1 last: start brings node 1 up first)
  status          each node's state; exit 0 if all run, 3 if not
  url             NOTIFY_AMQP_URL for the services: the nodes' URLs separated by commas
  management-url  the management API of node 1 (NOTIFY_RABBITMQ_MANAGEMENT_URL)
  start-node N    start node N (it rejoins the cluster)
  stop-node N     stop node N gracefully
  kill-node N     SIGKILL node N's VM (a crash; start-node N brings it back)
  ctl N ARGS...   rabbitmqctl against node N (e.g. ctl 1 cluster_status, ctl 2 list_queues -p notify name type members)

State: $CLUSTER_DIR/node<N> (logs in node<N>/log); epmd on port $NOTIFY_EPMD_PORT.
USAGE
}

# Runs deploy/local/$2 (rabbitmq.sh or rabbitmqctl.sh) with the rest as arguments for node $1, with that
# node's ports, directory and the cluster's settings.
node_script() {
    local n="$1" script="$2" port
    shift 2
    port="$(node_port "$n")"
    local nodes="" i
    for i in $(seq 1 "$NODES"); do nodes+="$(node_name "$i") "; done
    NOTIFY_RABBITMQ_PORT="$port" NOTIFY_RABBITMQ_MANAGEMENT_PORT=$((port + 1)) NOTIFY_RABBITMQ_DIST_PORT=$((port + 2)) \
        NOTIFY_RABBITMQ_PROMETHEUS_PORT=$((port + 20)) NOTIFY_RABBITMQ_CLI_PORT_MIN=$((port + 8)) NOTIFY_RABBITMQ_CLI_PORT_MAX=$((port + 17)) \
        NOTIFY_RABBITMQ_DIR="$CLUSTER_DIR/node$n" NOTIFY_RABBITMQ_CLUSTER_NODES="$nodes" NOTIFY_RABBITMQ_COOKIE_FILE="$COOKIE_FILE" \
        NOTIFY_AMQP_URL="amqp://notify:notify@127.0.0.1:$port/notify" \
        "$here/$script" "$@"
}

node_pid() {
    local file="$CLUSTER_DIR/node$1/rabbitmq.pid"
    [ -f "$file" ] && tr -dc '0-9' <"$file"
}

check_node() {
    [[ "${1:-}" =~ ^[1-9][0-9]*$ ]] && [ "$1" -le "$NODES" ] || notify_die "expected a node number from 1 to $NODES, got '${1:-}'"
}

do_start() {
    mkdir -p "$CLUSTER_DIR"
    if [ ! -f "$COOKIE_FILE" ]; then
        (umask 077 && head -c 24 /dev/urandom | base64 | tr -dc 'A-Za-z0-9' >"$COOKIE_FILE")
    fi
    local n
    for n in $(seq 1 "$NODES"); do node_script "$n" rabbitmq.sh start; done
}

do_stop() {
    local n
    for n in $(seq "$NODES" -1 1); do node_script "$n" rabbitmq.sh stop; done
}

do_status() {
    local n status=0
    for n in $(seq 1 "$NODES"); do
        printf 'node %s: ' "$n"
        node_script "$n" rabbitmq.sh status || status=3
    done
    return "$status"
}

do_url() {
    local n urls=()
    for n in $(seq 1 "$NODES"); do urls+=("amqp://notify:notify@127.0.0.1:$(node_port "$n")/notify"); done
    (IFS=,; echo "${urls[*]}")
}

do_kill() {
    local pid
    pid="$(node_pid "$1")" || notify_die "node $1 has no pid file"
    [ -n "$pid" ] && notify_pid_alive "$pid" || notify_die "node $1 is not running"
    kill -KILL "$pid"
    while notify_pid_alive "$pid"; do sleep 0.1; done
}

case "${1:-}" in
    -h|--help|help) usage; exit 0 ;;
    start) do_start ;;
    stop) do_stop ;;
    status) do_status ;;
    url) do_url ;;
    management-url) echo "http://notify:notify@127.0.0.1:$((NOTIFY_RABBITMQ_PORT + 1))" ;;
    start-node) check_node "${2:-}"; node_script "$2" rabbitmq.sh start ;;
    stop-node) check_node "${2:-}"; node_script "$2" rabbitmq.sh stop ;;
    ctl) check_node "${2:-}"; n="$2"; shift 2; node_script "$n" rabbitmqctl.sh "$@" ;;
    kill-node) check_node "${2:-}"; do_kill "$2" ;;
    "") usage >&2; exit 2 ;;
    *) notify_warn "unknown command: $1"; usage >&2; exit 2 ;;
esac
