#!/bin/sh
# Patroni's post_bootstrap: run once on the first primary, with a connection string to it as $1. Creates database
# notify and its roles (deploy/postgres/init.sql: NOTIFY_INIT_SQL, mounted at /etc/notify/init.sql in containers).
set -eu
exec psql "$1" -X -q -v ON_ERROR_STOP=1 -f "${NOTIFY_INIT_SQL:-/etc/notify/init.sql}"
