#!/usr/bin/env bash
# Runs the whole test suite on this machine: installs what is missing, builds the tests, starts
# RabbitMQ, PostgreSQL (and a hot standby), the four services and the provider sandbox on ports and a
# state directory of their own (so a stack started by up.sh is left alone), validates docker-compose.yml,
# runs `swift test` and schemathesis (fuzz.sh), stops everything, then runs the 90 s chaos run (chaos.sh:
# a three-node RabbitMQ cluster, a Patroni cluster of three PostgreSQL members, two instances of every service,
# 26 faults, the database's among them; nothing accepted may be lost).
set -euo pipefail
here="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
if [ "${1:-}" = "--help" ] || [ "${1:-}" = "-h" ]; then
    sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'
    echo "Extra arguments go to 'swift test' (e.g. --filter NotifyModelsTests)."
    exit 0
fi

root="$(cd -- "$here/../.." && pwd -P)"
export NOTIFY_STATE_DIR="${NOTIFY_TEST_STATE_DIR:-$root/.local/test}"
# The tests' block of ports, 22xxx (deploy/local/env.sh has up.sh's, 21xxx, and says why all are below 32768).
# NOTIFY_TEST_PORT_BLOCK=24 (with NOTIFY_TEST_STATE_DIR elsewhere) runs a second test stack beside this one.
export NOTIFY_PORT_BLOCK="${NOTIFY_TEST_PORT_BLOCK:-22}"
export NOTIFY_TEST_PROMETHEUS_PORT=${NOTIFY_PORT_BLOCK}095
# shellcheck source=lib.sh
source "$here/lib.sh"
# A hot standby of the tests' PostgreSQL, 1.5 s behind (deploy/local/postgres-replica.sh); ReplicaTests read it through an
# ingest of their own on NOTIFY_TEST_REPLICA_INGEST_PORT (and the next port). NOTIFY_REPLICA_DATABASE_URL stays unset:
# the stack's own ingest reads the primary, as the tests that read right after writing need.
export NOTIFY_POSTGRES_REPLICA_PORT=$((NOTIFY_POSTGRES_PORT + 1)) NOTIFY_POSTGRES_REPLICA_DELAY_MS=1500
export NOTIFY_TEST_REPLICA_INGEST_PORT=$((NOTIFY_INGEST_PORT + 7))
export NOTIFY_TEST_REPLICA_DATABASE_URL="postgres://notify_reader:notify_reader@127.0.0.1:$NOTIFY_POSTGRES_REPLICA_PORT/notify"
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
# The alert that follows an iOS shoulder tap waits 3 s instead of 30 (VisualFallbackTests).
export NOTIFY_VISUAL_FALLBACK_SECONDS=3
# Ingest unbinds its live queue 2 s after its last stream closes, so that the tests' streams open on an unbound queue.
export NOTIFY_LIVE_UNBIND_SECONDS=2
# Storage deletes retired broker users within a second of their overlap ending (default 30 s), so rotation is tested quickly.
export NOTIFY_BROKER_MAINTENANCE_SECONDS=1
# A webhook event is dead-lettered after 4 attempts (3.5 s of retries) instead of 8 (over a minute), so that
# WebhookDeadLetterTests see a receiver that keeps failing reach webhooks.deliveries.dead quickly.
export NOTIFY_WEBHOOK_MAX_ATTEMPTS=4
# The AMQP client app teams use from Python, which the AMQP ingest tests run the README's example with.
export NOTIFY_TEST_PYTHON="$NOTIFY_STATE_DIR/venv/bin/python"

started=$(date +%s)
"$here/install-deps.sh"
# pika: the AMQP client app teams use from Python; h2: a third-party HTTP/2 client against the APNs sandbox;
# jsonschema and PyYAML: the check of ingest's answers against its OpenAPI description (validate_responses.py);
# PyJWT and cryptography: an identity provider's keys and ID tokens (identity_tokens.py), and the check of the VAPID
# and FCM assertion JWTs push-dispatch sends (push_checks.py); http_ece: the decryption of its Web Push bodies there.
notify_pip_install pika==1.3.2 h2==4.4.1 jsonschema==4.26.0 pyyaml==6.0.4 pyjwt==2.15.1 cryptography==50.0.2 http_ece==1.2.1
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
    "$here/postgres-replica.sh" stop || true
    "$here/postgres.sh" stop || true
}
trap cleanup EXIT

echo "== starting RabbitMQ, PostgreSQL and the stack ($NOTIFY_STATE_DIR)"
"$here/rabbitmq.sh" start
"$here/postgres.sh" start
"$here/postgres-replica.sh" start
"$here/services.sh" start

echo "== validating docker-compose.yml"
"$here/check-compose.sh"
echo "== validating deploy/kubernetes (check-kubernetes.sh)"
"$here/check-kubernetes.sh"

# The client tests keep their clients' storage here; it holds nothing a later run needs. The tests write every
# secret they use (API keys, signing keys, provider keys, webhook secrets) to secrets-used, searched for in the logs,
# and every answer of ingest to responses/, validated against its OpenAPI description.
rm -rf -- "$NOTIFY_STATE_DIR/client-tests" "$NOTIFY_STATE_DIR/secrets-used" "$NOTIFY_STATE_DIR/responses"

# One target at a time, one test at a time: the AMQP tests restart the broker and the end-to-end tests
# kill services, which must not happen under another test's feet.
status=0
if [ $# -gt 0 ]; then
    swift test --skip-build --no-parallel "$@" || status=$?
else
    for target in NotifyModelsTests NotifyWireTests NotifyRuntimeTests NotifyAMQPTests NotifyOutboundTests IngestCoreTests FanoutCoreTests NotifyDatabaseTests NotifyStoreTests StorageCoreTests NotifyAPNsTests PushDispatchTests AMQPIntegrationTests EndToEndTests NotifyClientTests; do
        echo "== swift test: $target"
        swift test --skip-build --no-parallel --filter "$target" || status=$?
    done
    echo "== schemathesis against the OpenAPI description (deploy/local/fuzz.sh)"
    "$here/fuzz.sh" || status=1
    echo "== the client package on its own (Clients/NotifyClient): none of the server's dependencies, its unit tests"
    deps="$(cd Clients/NotifyClient && swift package show-dependencies 2>&1 | tail -n 1)"
    if [ "$deps" != "No external dependencies found" ]; then
        echo "Clients/NotifyClient resolves dependencies: $deps" >&2
        status=1
    fi
    (cd Clients/NotifyClient && swift test 2>&1 | grep -E "error|Test run|✘") || status=1
    echo "== no secret in the logs: the services', the broker's, PostgreSQL's and the sandbox's, searched for every secret the tests used"
    logs=("$NOTIFY_STATE_DIR/logs" "$NOTIFY_STATE_DIR/rabbitmq/log" "$NOTIFY_STATE_DIR/postgres/postgres.log" "$NOTIFY_STATE_DIR/postgres-replica")
    if [ ! -s "$NOTIFY_STATE_DIR/secrets-used" ]; then
        echo "the tests recorded no secret in $NOTIFY_STATE_DIR/secrets-used" >&2
        status=1
    elif leaks="$(grep -rlF -f "$NOTIFY_STATE_DIR/secrets-used" --include='*.log' "${logs[@]}" 2>/dev/null)"; then
        echo "a secret the tests used is in: $leaks" >&2
        status=1
    else
        echo "$(sort -u "$NOTIFY_STATE_DIR/secrets-used" | wc -l) secrets, none in $(find "${logs[@]}" -name '*.log' 2>/dev/null | wc -l) log files"
    fi
    # After a filtered run, by hand (NOTIFY_TEST_STATE_DIR's default, .local/test):
    #   .local/test/venv/bin/python Tests/EndToEndTests/Python/validate_responses.py .local/test/responses
    echo "== ingest's answers to the end-to-end tests against the OpenAPI description (validate_responses.py)"
    "$NOTIFY_STATE_DIR/venv/bin/python" Tests/EndToEndTests/Python/validate_responses.py "$NOTIFY_STATE_DIR/responses" || status=1
    # The short chaos run: a stack of its own (a three-node RabbitMQ cluster, a Patroni cluster, two instances of
    # every service) for about 90 s of publishing under 26 faults (the database's primary lost and killed, a standby,
    # an etcd member and HAProxy among them); it fails on anything accepted and lost. This stack stops first.
    cleanup
    trap - EXIT
    echo "== the chaos run (deploy/local/chaos.sh, 90 s)"
    "$here/chaos.sh" --duration 90 || status=1
fi
echo "== test command finished in $(( $(date +%s) - started )) s with status $status"
exit $status
