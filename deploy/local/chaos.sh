#!/usr/bin/env bash
# The chaos run: starts a stack of its own (a three-node RabbitMQ cluster, a Patroni cluster of three PostgreSQL
# members with etcd and HAProxy, two instances of every service and the provider sandbox, on the 26xxx ports, state
# in .local/chaos-stack), runs `loadgen chaos` against it while faults are injected, prints the report, and stops
# everything it started. Exit status 1 when anything accepted was lost (or another check failed: see `loadgen chaos --help`).
set -euo pipefail
here="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
if [ "${1:-}" = "--help" ] || [ "${1:-}" = "-h" ]; then
    sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'
    cat <<USAGE

usage: chaos.sh [LOADGEN-CHAOS-OPTIONS...]   e.g. chaos.sh --duration 600 --rate 40
Defaults: --duration 60 --rate 20 --users 30 --devices 3. Binaries: .build/\$NOTIFY_BUILD_CONFIGURATION (debug),
built here if missing. Reports: .local/chaos/<time>/ (report.md, report.json, timeline.svg, faults.log).
USAGE
    exit 0
fi
root="$(cd -- "$here/../.." && pwd -P)"
# A stack of its own, whatever stack the caller's environment describes (test.sh runs this after its own).
state_dir="${NOTIFY_CHAOS_STATE_DIR:-$root/.local/chaos-stack}"
while read -r variable; do unset "$variable"; done < <(compgen -v | grep -E '^NOTIFY_.*(_PORT|_PORT_MIN|_PORT_MAX|_URL|_DIR|_ALLOW)$' | grep -vx 'NOTIFY_BIN_DIR')
export NOTIFY_STATE_DIR="$state_dir"
export NOTIFY_PORT_BLOCK="${NOTIFY_CHAOS_PORT_BLOCK:-26}"
export NOTIFY_SERVICE_INSTANCES=2 LOG_LEVEL="${LOG_LEVEL:-notice}"
# shellcheck source=lib.sh
source "$here/lib.sh"
NOTIFY_AMQP_URL="$("$here/rabbitmq-cluster.sh" url)"
# Ingest's user (no administrator) on every node, as env.sh makes it for one.
NOTIFY_INGEST_AMQP_URL="${NOTIFY_AMQP_URL//notify:notify@/notify_ingest:notify_ingest@}"
NOTIFY_RABBITMQ_MANAGEMENT_URL="$("$here/rabbitmq-cluster.sh" management-url)"
# Ingest's lag-tolerant reads go to a standby, through HAProxy, as a production stack's would.
export NOTIFY_REPLICA_DATABASE_URL="postgres://notify_reader:notify_reader@127.0.0.1:$((NOTIFY_POSTGRES_PORT + 1))/notify"
export NOTIFY_AMQP_URL NOTIFY_INGEST_AMQP_URL NOTIFY_RABBITMQ_MANAGEMENT_URL

"$here/install-deps.sh"
cd "$NOTIFY_ROOT"
for product in loadgen ingest storage fanout push-dispatch provider-sandbox; do
    [ -x "$NOTIFY_BIN_DIR/$product" ] || { echo "== building"; swift build -c "$NOTIFY_BUILD_CONFIGURATION" >/dev/null; break; }
done

cleanup() {
    "$here/services.sh" stop || true
    "$here/rabbitmq-cluster.sh" stop || true
    "$here/patroni-cluster.sh" stop || true
}
trap cleanup EXIT
echo "== starting a three-node RabbitMQ cluster, a Patroni cluster (three PostgreSQL members, etcd, HAProxy), two instances of every service ($NOTIFY_STATE_DIR)"
"$here/rabbitmq-cluster.sh" start
"$here/patroni-cluster.sh" start
"$here/services.sh" start

out="$root/.local/chaos/$(date -u +%Y%m%dT%H%M%SZ)"
status=0
"$NOTIFY_BIN_DIR/loadgen" chaos --scripts "$here" --output "$out" \
    --ingest-url "http://127.0.0.1:$NOTIFY_INGEST_PORT" --ingest-url "http://127.0.0.1:$((NOTIFY_INGEST_PORT + 100))" \
    --sandbox-url "http://127.0.0.1:$NOTIFY_SANDBOX_CONTROL_PORT" --sandbox-apns-url "https://localhost:$NOTIFY_SANDBOX_APNS_PORT" \
    "$@" || status=$?
# Every service must have come back from the faults.
"$here/services.sh" status >/dev/null || { "$here/services.sh" status || true; echo "chaos.sh: a service did not survive the run" >&2; status=1; }
echo "== chaos run finished with status $status (report: $out)"
exit "$status"
