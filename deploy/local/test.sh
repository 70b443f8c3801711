#!/usr/bin/env bash
# Runs the whole test suite on this machine: installs what is missing, builds the tests, starts
# RabbitMQ, PostgreSQL, the four services and the provider sandbox on ports and a state directory
# of their own (so a stack started by up.sh is left alone), validates docker-compose.yml, runs
# `swift test`, and stops everything it started.
set -euo pipefail
here="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
if [ "${1:-}" = "--help" ] || [ "${1:-}" = "-h" ]; then
    sed -n '2,5p' "$0" | sed 's/^# \{0,1\}//'
    echo "Extra arguments go to 'swift test' (e.g. --filter NotifyModelsTests)."
    exit 0
fi

root="$(cd -- "$here/../.." && pwd -P)"
export NOTIFY_STATE_DIR="${NOTIFY_TEST_STATE_DIR:-$root/.local/test}"
# The tests' block of ports, 22xxx (deploy/local/env.sh has up.sh's, 21xxx, and says why all are below 32768).
# NOTIFY_TEST_PORT_BLOCK=24 (with NOTIFY_TEST_STATE_DIR elsewhere) runs a second test stack beside this one.
b="${NOTIFY_TEST_PORT_BLOCK:-22}"
export NOTIFY_RABBITMQ_PORT=${b}672 NOTIFY_RABBITMQ_MANAGEMENT_PORT=${b}673 NOTIFY_RABBITMQ_DIST_PORT=${b}674 NOTIFY_EPMD_PORT=${b}675
export NOTIFY_RABBITMQ_CLI_PORT_MIN=${b}680 NOTIFY_RABBITMQ_CLI_PORT_MAX=${b}689
export NOTIFY_POSTGRES_PORT=${b}432 NOTIFY_INGEST_PORT=${b}080 NOTIFY_STORAGE_HEALTH_PORT=${b}081 NOTIFY_FANOUT_HEALTH_PORT=${b}082
export NOTIFY_DISPATCH_HEALTH_PORT=${b}083 NOTIFY_SANDBOX_CONTROL_PORT=${b}090 NOTIFY_SANDBOX_APNS_PORT=${b}443 NOTIFY_SANDBOX_PROVIDERS_PORT=${b}444
export NOTIFY_TEST_PROMETHEUS_PORT=${b}095
# shellcheck source=lib.sh
source "$here/lib.sh"
export NOTIFY_INGEST_URL="http://127.0.0.1:$NOTIFY_INGEST_PORT"
export NOTIFY_SANDBOX_URL="http://127.0.0.1:$NOTIFY_SANDBOX_CONTROL_PORT"
export NOTIFY_SANDBOX_APNS_URL="https://localhost:$NOTIFY_SANDBOX_APNS_PORT"
export NOTIFY_SANDBOX_PROVIDERS_URL="https://localhost:$NOTIFY_SANDBOX_PROVIDERS_PORT"
export NOTIFY_RABBITMQ_SCRIPT="$here/rabbitmq.sh"
# The suites that need the running stack run only when this is set (plain `swift test` skips them, saying why).
export NOTIFY_TEST_STACK=1
# push-dispatch gathers push outcomes this long before one feedback message (default 200 ms): long enough that
# the grouping test's pushes, made one after another, share messages however slow the machine.
export NOTIFY_FEEDBACK_INTERVAL_MS=1000
# Retired broker users are deleted within a second of their overlap ending (default 30 s), so rotation is tested quickly.
export NOTIFY_BROKER_MAINTENANCE_SECONDS=1
# The AMQP client app teams use from Python, which the AMQP ingest tests run the README's example with.
export NOTIFY_TEST_PYTHON="$NOTIFY_STATE_DIR/venv/bin/python"

started=$(date +%s)
"$here/install-deps.sh"
notify_pip_install pika==1.3.2
# promtool and a Prometheus for the monitoring tests (Debian's package, unpacked: no service is installed).
NOTIFY_PROMETHEUS_BIN="$("$here/prometheus-tools.sh")"
export NOTIFY_PROMETHEUS_BIN
cd "$NOTIFY_ROOT"
echo "== building (debug, with tests)"
# Only errors, warnings and the result are shown; a failed build stops here (binaries an earlier
# build left behind would otherwise be tested).
build_log="$(mktemp)"
if ! swift build --build-tests >"$build_log" 2>&1; then
    cat "$build_log" >&2
    rm -f "$build_log"
    notify_die "the build failed"
fi
grep -E "error|warning: |Build complete" "$build_log" | grep -v "distributed" || true
rm -f "$build_log"

cleanup() {
    "$here/services.sh" stop || true
    "$here/rabbitmq.sh" stop || true
    "$here/postgres.sh" stop || true
}
trap cleanup EXIT

echo "== starting RabbitMQ, PostgreSQL and the stack ($NOTIFY_STATE_DIR)"
"$here/rabbitmq.sh" start
"$here/postgres.sh" start
"$here/services.sh" start

echo "== validating docker-compose.yml"
"$here/check-compose.sh"

# The client tests keep their clients' storage here; it holds nothing a later run needs.
rm -rf -- "$NOTIFY_STATE_DIR/client-tests"

# One target at a time, one test at a time: the AMQP tests restart the broker and the end-to-end tests
# kill services, which must not happen under another test's feet.
status=0
if [ $# -gt 0 ]; then
    swift test --skip-build --no-parallel "$@" || status=$?
else
    for target in NotifyModelsTests NotifyWireTests IngestCoreTests FanoutCoreTests NotifyDatabaseTests StorageCoreTests NotifyAPNsTests PushDispatchTests AMQPIntegrationTests EndToEndTests NotifyClientTests; do
        echo "== swift test: $target"
        swift test --skip-build --no-parallel --filter "$target" || status=$?
    done
    echo "== the client package on its own (Clients/NotifyClient): none of the server's dependencies, its unit tests"
    deps="$(cd Clients/NotifyClient && swift package show-dependencies 2>&1 | tail -n 1)"
    if [ "$deps" != "No external dependencies found" ]; then
        echo "Clients/NotifyClient resolves dependencies: $deps" >&2
        status=1
    fi
    (cd Clients/NotifyClient && swift test 2>&1 | grep -E "error|Test run|✘") || status=1
fi
echo "== test command finished in $(( $(date +%s) - started )) s with status $status"
exit $status
