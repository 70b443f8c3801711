# shellcheck shell=bash
# Settings shared by the scripts in deploy/local/ (and by tests).
#
#   source deploy/local/env.sh
#
# Every variable may be overridden from the environment before sourcing.
# Everything listens on 127.0.0.1 only.

if [ -z "${NOTIFY_ROOT:-}" ]; then
    NOTIFY_ROOT="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd -P)"
fi
: "${NOTIFY_STATE_DIR:=$NOTIFY_ROOT/.local}"

# Ports. Each stack has a block of its own below 32768, NOTIFY_PORT_BLOCK: this one (up.sh) 21xxx, test.sh 22xxx,
# benchmark.sh 23xxx, chaos.sh 26xxx, the last three digits echoing the usual ports (x672 AMQP, x432 PostgreSQL,
# x080 HTTP, x443 APNs; rabbitmq-cluster.sh's nodes 2 and 3 at x772 and x872, services.sh's second instances
# 100 above the first). Keep them out of the kernel's ephemeral range (/proc/sys/net/ipv4/ip_local_port_range,
# 32768-60999 on Linux), where any outgoing connection may hold one of them when a server needs it, and clear of
# a system RabbitMQ's and PostgreSQL's (5672, 15672, 25672, 4369, 5432).
: "${NOTIFY_PORT_BLOCK:=21}"
: "${NOTIFY_RABBITMQ_PORT:=${NOTIFY_PORT_BLOCK}672}"
: "${NOTIFY_RABBITMQ_MANAGEMENT_PORT:=${NOTIFY_PORT_BLOCK}673}"
: "${NOTIFY_RABBITMQ_DIST_PORT:=${NOTIFY_PORT_BLOCK}674}"
: "${NOTIFY_EPMD_PORT:=${NOTIFY_PORT_BLOCK}675}"
# RabbitMQ's Prometheus endpoint (rabbitmq_prometheus; /metrics/per-object has each queue's depth).
: "${NOTIFY_RABBITMQ_PROMETHEUS_PORT:=$((NOTIFY_RABBITMQ_PORT + 20))}"
# rabbitmqctl's own Erlang node listens on the first free port of this range while it runs (RabbitMQ's
# default, 35672-35682, is ephemeral and the same for every stack); it follows NOTIFY_RABBITMQ_PORT.
: "${NOTIFY_RABBITMQ_CLI_PORT_MIN:=$((NOTIFY_RABBITMQ_PORT + 8))}"
: "${NOTIFY_RABBITMQ_CLI_PORT_MAX:=$((NOTIFY_RABBITMQ_CLI_PORT_MIN + 9))}"
: "${NOTIFY_POSTGRES_PORT:=${NOTIFY_PORT_BLOCK}432}"
: "${NOTIFY_INGEST_PORT:=${NOTIFY_PORT_BLOCK}080}"
: "${NOTIFY_STORAGE_HEALTH_PORT:=${NOTIFY_PORT_BLOCK}081}"
: "${NOTIFY_FANOUT_HEALTH_PORT:=${NOTIFY_PORT_BLOCK}082}"
: "${NOTIFY_DISPATCH_HEALTH_PORT:=${NOTIFY_PORT_BLOCK}083}"
: "${NOTIFY_SANDBOX_CONTROL_PORT:=${NOTIFY_PORT_BLOCK}090}"
: "${NOTIFY_SANDBOX_APNS_PORT:=${NOTIFY_PORT_BLOCK}443}"
: "${NOTIFY_SANDBOX_PROVIDERS_PORT:=${NOTIFY_PORT_BLOCK}444}"

# Connection settings read by the services.
: "${NOTIFY_AMQP_URL:=amqp://notify:notify@127.0.0.1:$NOTIFY_RABBITMQ_PORT/notify}"
# Ingest, which faces the internet, connects as a user that is no administrator (deploy/rabbitmq/definitions.json):
# NOTIFY_AMQP_URL with that user's credentials.
: "${NOTIFY_INGEST_AMQP_URL:=${NOTIFY_AMQP_URL//notify:notify@/notify_ingest:notify_ingest@}}"
# Storage creates and deletes apps' broker users and bounds notify.ingest.dead through the management API, as the
# administrator; services.sh gives it to storage only (notifyctl dlq and the tests use it too).
: "${NOTIFY_RABBITMQ_MANAGEMENT_URL:=http://notify:notify@127.0.0.1:$NOTIFY_RABBITMQ_MANAGEMENT_PORT}"
: "${NOTIFY_WRITER_DATABASE_URL:=postgres://notify_writer:notify_writer@127.0.0.1:$NOTIFY_POSTGRES_PORT/notify}"
: "${NOTIFY_READER_DATABASE_URL:=postgres://notify_reader:notify_reader@127.0.0.1:$NOTIFY_POSTGRES_PORT/notify}"
: "${NOTIFY_ADMIN_TOKEN:=local-admin-token}"
# The outbound address policy refuses loopback and private addresses for every URL called on an app's behalf; the
# stack admits only its own provider sandbox: its control port (webhook receivers, poll feeds, identity provider
# keys) and its APNs and providers ports (FCM, WNS, Web Push), by host and port. Nothing else on this machine.
: "${NOTIFY_OUTBOUND_ALLOW:=127.0.0.1:$NOTIFY_SANDBOX_CONTROL_PORT,localhost:$NOTIFY_SANDBOX_APNS_PORT,localhost:$NOTIFY_SANDBOX_PROVIDERS_PORT}"
: "${LOG_LEVEL:=info}"
# text, or json: a JSON object per line (notificationId on every line about one notification).
: "${LOG_FORMAT:=text}"

# Where the service binaries are.
: "${NOTIFY_BUILD_CONFIGURATION:=debug}"
: "${NOTIFY_BIN_DIR:=$NOTIFY_ROOT/.build/$NOTIFY_BUILD_CONFIGURATION}"

export NOTIFY_ROOT NOTIFY_STATE_DIR NOTIFY_PORT_BLOCK \
    NOTIFY_RABBITMQ_PORT NOTIFY_RABBITMQ_MANAGEMENT_PORT NOTIFY_RABBITMQ_DIST_PORT NOTIFY_EPMD_PORT NOTIFY_RABBITMQ_PROMETHEUS_PORT \
    NOTIFY_RABBITMQ_CLI_PORT_MIN NOTIFY_RABBITMQ_CLI_PORT_MAX \
    NOTIFY_POSTGRES_PORT NOTIFY_INGEST_PORT NOTIFY_STORAGE_HEALTH_PORT NOTIFY_FANOUT_HEALTH_PORT \
    NOTIFY_DISPATCH_HEALTH_PORT NOTIFY_SANDBOX_CONTROL_PORT NOTIFY_SANDBOX_APNS_PORT NOTIFY_SANDBOX_PROVIDERS_PORT \
    NOTIFY_AMQP_URL NOTIFY_INGEST_AMQP_URL NOTIFY_RABBITMQ_MANAGEMENT_URL NOTIFY_WRITER_DATABASE_URL NOTIFY_READER_DATABASE_URL NOTIFY_ADMIN_TOKEN NOTIFY_OUTBOUND_ALLOW LOG_LEVEL LOG_FORMAT \
    NOTIFY_BUILD_CONFIGURATION NOTIFY_BIN_DIR
