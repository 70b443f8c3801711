# shellcheck shell=bash
# Helpers for the scripts in deploy/local/. Not meant to be run directly.

# shellcheck source=env.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/env.sh"

# shellcheck disable=SC2034  # the variables here are used by the sourcing scripts
NOTIFY_SCRIPT_NAME="$(basename -- "$0")"

notify_die() {
    printf '%s: error: %s\n' "$NOTIFY_SCRIPT_NAME" "$*" >&2
    exit 1
}

notify_warn() {
    printf '%s: %s\n' "$NOTIFY_SCRIPT_NAME" "$*" >&2
}

# Runs a command as root: directly when root, otherwise through sudo.
notify_as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo "$@"
    else
        notify_die "need root for: $* (and sudo is not installed)"
    fi
}

# True when a TCP socket listens on port $1, on any address (127.0.0.1, 0.0.0.0, ::): so when a server
# of ours could not bind 127.0.0.1:$1, or, for one we started, once it accepts connections. It never
# connects: a connect to a port in the ephemeral range with nothing listening there can connect the
# socket to itself (the probe then finds the port "taken", and the connection's TIME-WAIT holds it).
notify_port_listening() {
    local port="$1" out
    if out="$(ss -Hltn "sport = :$port" 2>/dev/null)"; then
        [ -n "$out" ]
        return
    fi
    # No ss (iproute2): the listening (state 0A) sockets in /proc/net/tcp and tcp6, local port in hex.
    local files=() file
    for file in /proc/net/tcp /proc/net/tcp6; do
        [ -r "$file" ] && files+=("$file")
    done
    [ "${#files[@]}" -gt 0 ] || notify_die "cannot tell whether port $port is in use: no ss (install iproute2) and no /proc/net/tcp"
    awk -v port="$(printf '%04X' "$port")" \
        '$4 == "0A" && substr($2, length($2) - 3) == port { found = 1; exit } END { exit !found }' "${files[@]}"
}

# True when process $1 exists and is not a zombie (this machine's init reaps
# orphans late, so an exited daemon can linger as a zombie for a while).
notify_pid_alive() {
    local pid="$1" stat
    kill -0 "$pid" 2>/dev/null || return 1
    stat="$(cat 2>/dev/null -- "/proc/$pid/stat")" || return 1
    stat="${stat##*) }"
    [ "${stat%% *}" != Z ]
}

# Prints the last lines of a log file to stderr, framed.
notify_log_tail() {
    local file="$1" lines="${2:-40}"
    if [ -f "$file" ]; then
        printf -- '----- last %s lines of %s -----\n' "$lines" "$file" >&2
        tail -n "$lines" -- "$file" >&2
        printf -- '-----\n' >&2
    else
        printf '(no log file at %s)\n' "$file" >&2
    fi
}

# ---- RabbitMQ -------------------------------------------------------------

# The node's state directory (rabbitmq-cluster.sh gives each of its nodes another).
: "${NOTIFY_RABBITMQ_DIR:=$NOTIFY_STATE_DIR/rabbitmq}"
# shellcheck disable=SC2034
NOTIFY_RABBITMQ_BIN="/usr/lib/rabbitmq/bin"
NOTIFY_RABBITMQ_NODENAME="rmq${NOTIFY_RABBITMQ_PORT}@localhost"

# Exports the environment under which the isolated node and its CLI tools run.
# The binaries in /usr/lib/rabbitmq/bin are used on purpose: the wrappers in
# /usr/sbin switch to the rabbitmq user and read another Erlang cookie.
# The CLI tools' own distribution port comes from RABBITMQ_CTL_DIST_PORT_MIN..MAX
# (read by /usr/lib/rabbitmq/bin/rabbitmq-env; 35672-35682 when unset).
notify_rabbitmq_env() {
    local dir="$NOTIFY_RABBITMQ_DIR"
    export HOME="$dir"
    export RABBITMQ_NODENAME="$NOTIFY_RABBITMQ_NODENAME"
    export RABBITMQ_NODE_IP_ADDRESS=127.0.0.1
    export RABBITMQ_NODE_PORT="$NOTIFY_RABBITMQ_PORT"
    export RABBITMQ_DIST_PORT="$NOTIFY_RABBITMQ_DIST_PORT"
    export RABBITMQ_CTL_DIST_PORT_MIN="$NOTIFY_RABBITMQ_CLI_PORT_MIN"
    export RABBITMQ_CTL_DIST_PORT_MAX="$NOTIFY_RABBITMQ_CLI_PORT_MAX"
    export ERL_EPMD_ADDRESS=127.0.0.1
    export ERL_EPMD_PORT="$NOTIFY_EPMD_PORT"
    export RABBITMQ_MNESIA_BASE="$dir/mnesia"
    export RABBITMQ_LOG_BASE="$dir/log"
    export RABBITMQ_CONFIG_FILE="$dir/rabbitmq.conf"
    export RABBITMQ_ADVANCED_CONFIG_FILE="$dir/advanced.config"
    export RABBITMQ_CONF_ENV_FILE="$dir/rabbitmq-env.conf"
    export RABBITMQ_ENABLED_PLUGINS_FILE="$dir/enabled_plugins"
    export RABBITMQ_PID_FILE="$dir/rabbitmq.pid"
    # Loopback only. (Scheduler busy-waiting needs no flag: RabbitMQ 3.10 already starts its schedulers with
    # +sbwt none, +sbwtdcpu none and +sbwtdio none, which leaves idle CPU to PostgreSQL and the services.)
    export RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1}"
    export RABBITMQ_CTL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1}"
    export ERL_CRASH_DUMP="$dir/log/erl_crash.dump"
    unset RABBITMQ_USE_LONGNAME RABBITMQ_NODENAME_SUFFIX 2>/dev/null || true
}

# notify_pip_install PACKAGE==VERSION...: installs PyPI packages into the project's venv ($NOTIFY_STATE_DIR/venv,
# created on first use) unless they are there; its interpreter is $NOTIFY_STATE_DIR/venv/bin/python.
notify_pip_install() {
    local venv="$NOTIFY_STATE_DIR/venv" log missing=() package
    for package in "$@"; do
        [ -x "$venv/bin/pip" ] && "$venv/bin/pip" show -q "${package%%==*}" >/dev/null 2>&1 || missing+=("$package")
    done
    [ "${#missing[@]}" -gt 0 ] || return 0
    command -v python3 >/dev/null || notify_die "python3 not found; run deploy/local/install-deps.sh"
    log="$(mktemp "${TMPDIR:-/tmp}/notify-pip.XXXXXX")"
    if [ ! -x "$venv/bin/pip" ]; then
        rm -rf "$venv"
        mkdir -p "$NOTIFY_STATE_DIR"
        python3 -m venv "$venv" >"$log" 2>&1 || {
            cat "$log" >&2
            rm -f "$log"
            notify_die "could not create a Python venv in $venv (on Debian: apt-get install python3-venv, or run deploy/local/install-deps.sh)"
        }
    fi
    "$venv/bin/pip" install -q --disable-pip-version-check "${missing[@]}" >"$log" 2>&1 || {
        cat "$log" >&2
        rm -f "$log"
        notify_die "pip install ${missing[*]} failed"
    }
    rm -f "$log"
}
