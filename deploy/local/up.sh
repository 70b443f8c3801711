#!/usr/bin/env bash
# Brings up the whole stack on this machine and shows it working:
# installs RabbitMQ, PostgreSQL and librabbitmq-dev if missing, starts them on the project's own
# ports and data directories (no systemd, loopback only), builds, starts ingest, storage, fanout,
# push-dispatch and the provider sandbox, then runs the demo (deploy/local/demo.sh).
# Stop everything with deploy/local/down.sh.
set -euo pipefail
here="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
# shellcheck source=lib.sh
source "$here/lib.sh"

if [ "${1:-}" = "--help" ] || [ "${1:-}" = "-h" ]; then
    sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'
    echo "Configuration: NOTIFY_BUILD_CONFIGURATION=debug|release (now $NOTIFY_BUILD_CONFIGURATION), ports and dirs in deploy/local/env.sh."
    exit 0
fi

"$here/install-deps.sh"
echo "building ($NOTIFY_BUILD_CONFIGURATION; the first build takes several minutes)..."
(cd "$NOTIFY_ROOT" && swift build -c "$NOTIFY_BUILD_CONFIGURATION" 2>&1 | grep -E "error|warning: |Compiling|Build complete" | grep -v "^\[" || true)
[ -x "$NOTIFY_BIN_DIR/ingest" ] || notify_die "the build failed; run 'swift build' in $NOTIFY_ROOT to see why"
"$here/rabbitmq.sh" start
"$here/postgres.sh" start
"$here/services.sh" start
"$here/services.sh" status
"$here/demo.sh"
