#!/usr/bin/env bash
# Prints the directory holding Debian's `prometheus` and `promtool` binaries, unpacked from the package into the
# state directory on first use (apt-get download + dpkg-deb -x: the package's scripts never run, so no Prometheus is
# installed as a system service or started). The tests use them to check deploy/monitoring and to run the dashboard's
# queries against a Prometheus that scrapes the test stack.
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"

DIR="$NOTIFY_STATE_DIR/prometheus-tools"
case "${1:-}" in
    -h|--help)
        cat <<USAGE
usage: $NOTIFY_SCRIPT_NAME

Unpacks Debian 12's prometheus package into $DIR (once) and prints the
directory of its binaries (prometheus, promtool).
USAGE
        exit 0
        ;;
    "") ;;
    *) notify_die "unexpected argument: $1 (see --help)" ;;
esac

bin="$DIR/usr/bin"
if [ ! -x "$bin/promtool" ] || [ ! -x "$bin/prometheus" ]; then
    command -v apt-get >/dev/null || notify_die "apt-get not found: this script is for Debian (12)"
    work="$(mktemp -d "${TMPDIR:-/tmp}/notify-prometheus.XXXXXX")"
    trap 'rm -rf "$work"' EXIT
    if ! (cd "$work" && apt-get download -q prometheus >"$work/log" 2>&1); then
        # The package lists may be missing on a fresh machine.
        notify_as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q >"$work/log" 2>&1 || { cat "$work/log" >&2; notify_die "apt-get update failed"; }
        (cd "$work" && apt-get download -q prometheus >"$work/log" 2>&1) || { cat "$work/log" >&2; notify_die "apt-get download prometheus failed"; }
    fi
    mkdir -p "$DIR"
    dpkg-deb -x "$work"/prometheus_*.deb "$DIR"
    [ -x "$bin/promtool" ] || notify_die "the prometheus package holds no promtool"
fi
echo "$bin"
