#!/usr/bin/env bash
# Runs rabbitmqctl against the isolated local node started by rabbitmq.sh,
# e.g.  deploy/local/rabbitmqctl.sh list_queues -p notify name messages
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"

case "${1:-}" in
    -h|--help|"")
        cat <<USAGE
usage: $NOTIFY_SCRIPT_NAME ARGS...

Runs $NOTIFY_RABBITMQ_BIN/rabbitmqctl ARGS... against the local node
$NOTIFY_RABBITMQ_NODENAME (state in $NOTIFY_RABBITMQ_DIR).
(Apps' broker users are created by ingest: POST /v1/apps with "brokerAccess": true.)
Examples:
  $NOTIFY_SCRIPT_NAME list_queues -p notify name messages
  $NOTIFY_SCRIPT_NAME list_permissions -p notify
  $NOTIFY_SCRIPT_NAME list_policies -p notify
USAGE
        [ -n "${1:-}" ] && exit 0 || exit 2
        ;;
esac

[ -x "$NOTIFY_RABBITMQ_BIN/rabbitmqctl" ] ||
    notify_die "$NOTIFY_RABBITMQ_BIN/rabbitmqctl not found; run deploy/local/install-deps.sh"
[ -d "$NOTIFY_RABBITMQ_DIR" ] ||
    notify_die "no local RabbitMQ in $NOTIFY_RABBITMQ_DIR; run deploy/local/rabbitmq.sh start"
notify_rabbitmq_env
cd "$NOTIFY_RABBITMQ_DIR"
exec "$NOTIFY_RABBITMQ_BIN/rabbitmqctl" "$@"
