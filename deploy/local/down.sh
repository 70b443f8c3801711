#!/usr/bin/env bash
# Stops everything deploy/local/up.sh started: the services, RabbitMQ and PostgreSQL (data is kept in .local/).
set -euo pipefail
here="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
if [ "${1:-}" = "--help" ] || [ "${1:-}" = "-h" ]; then
    sed -n '2p' "$0" | sed 's/^# //'
    exit 0
fi
"$here/services.sh" stop
"$here/rabbitmq.sh" stop
"$here/postgres.sh" stop
