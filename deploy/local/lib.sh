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

# ---- PostgreSQL -------------------------------------------------------------
# postgres.sh (the primary) and postgres-replica.sh (its hot standby) each keep a cluster in a directory of
# their own, $dir: the cluster in $dir/data, its Unix socket in $dir, its log in $dir/postgres.log.

# Prints the directory of the PostgreSQL binaries: NOTIFY_PG_BIN, Debian's 15, or else the newest major version
# from Debian; empty when PostgreSQL is not installed. The scripts keep it in NOTIFY_PG_BIN_DIR, which the
# functions below use.
notify_pg_bin_dir() {
    if [ -n "${NOTIFY_PG_BIN:-}" ]; then
        echo "$NOTIFY_PG_BIN"
    elif [ -x /usr/lib/postgresql/15/bin/pg_ctl ]; then
        echo /usr/lib/postgresql/15/bin
    else
        { find /usr/lib/postgresql -mindepth 2 -maxdepth 2 -name bin 2>/dev/null || true; } | sort -V | tail -n 1
    fi
}

# notify_pg_as_owner DIR COMMAND...: runs a command in DIR as the cluster's OS user: "postgres" when we are root
# (initdb and postgres refuse to run as root), ourselves otherwise.
notify_pg_as_owner() {
    local dir="$1"
    shift
    if [ "$(id -u)" -eq 0 ]; then
        (cd "$dir" && runuser -u postgres -- "$@")
    else
        (cd "$dir" && "$@")
    fi
}

# notify_pg_ctl_status DIR: pg_ctl status of the cluster in DIR/data: 0 running, 3 stopped, 4 no cluster there.
notify_pg_ctl_status() {
    local dir="$1" rc=0
    [ -f "$dir/data/PG_VERSION" ] || return 4
    notify_pg_as_owner "$dir" "$NOTIFY_PG_BIN_DIR/pg_ctl" -D "$dir/data" status >/dev/null 2>&1 || rc=$?
    return "$rc"
}

# notify_pg_prepare_dir DIR PORT: makes DIR (mode 700) for a cluster listening on PORT, owned by the postgres OS
# user when we are root, and checks that its socket path fits and that an existing DIR/data belongs to that user.
notify_pg_prepare_dir() {
    local dir="$1" port="$2"
    # Unix socket paths are limited to 107 bytes.
    local socket="$dir/.s.PGSQL.$port"
    [ "${#socket}" -le 107 ] ||
        notify_die "socket path $socket is too long (${#socket} > 107 bytes); set NOTIFY_STATE_DIR to a shorter path"
    mkdir -p "$NOTIFY_STATE_DIR"
    if [ "$(id -u)" -eq 0 ]; then
        id postgres >/dev/null 2>&1 || notify_die "no 'postgres' OS user; run deploy/local/install-deps.sh"
        command -v runuser >/dev/null || notify_die "runuser (util-linux) not found"
        # The state dir may live in a root-owned checkout: the postgres user
        # needs to traverse it, and to own its own subdirectory.
        chmod o+x "$NOTIFY_STATE_DIR"
        mkdir -p "$dir"
        chown postgres:postgres "$dir"
        chmod 700 "$dir"
        if ! runuser -u postgres -- test -w "$dir"; then
            # Name the first directory from the top that it cannot enter.
            local d="" part
            local -a parts
            IFS=/ read -r -a parts <<<"${dir#/}"
            for part in "${parts[@]}"; do
                d="$d/$part"
                runuser -u postgres -- test -x "$d" ||
                    notify_die "the postgres user cannot enter $d; make it traversable (chmod o+x $d) or set NOTIFY_STATE_DIR elsewhere"
            done
            notify_die "the postgres user cannot write to $dir"
        fi
        if [ -d "$dir/data" ] && [ "$(stat -c %U "$dir/data")" != postgres ]; then
            notify_die "$dir/data is owned by $(stat -c %U "$dir/data"), not postgres; remove it to start afresh"
        fi
    else
        mkdir -p "$dir"
        chmod 700 "$dir"
    fi
}

# notify_pg_write_config DIR PORT [SETTING...]: (re)writes DIR/data/notify-local.conf, which the cluster's
# postgresql.conf includes: loopback only on PORT, the socket in DIR, then one line per SETTING.
notify_pg_write_config() {
    local dir="$1" port="$2"
    shift 2
    local conf="$dir/data/notify-local.conf"
    {
        echo "# Generated by deploy/local/$NOTIFY_SCRIPT_NAME; edits are overwritten on start."
        echo "listen_addresses = '127.0.0.1'"
        echo "port = $port"
        echo "unix_socket_directories = '$dir'"
        printf '%s\n' "$@"
    } >"$conf"
    [ "$(id -u)" -ne 0 ] || chown postgres:postgres "$conf"
}

# notify_pg_start DIR PORT PORT_VARIABLE TIMEOUT: starts the cluster in DIR/data unless it runs, waiting up to
# TIMEOUT seconds until it accepts connections; dies with its log when it does not. PORT_VARIABLE names the setting
# of PORT, for the message when another process holds it. Write the configuration first.
notify_pg_start() {
    local dir="$1" port="$2" port_variable="$3" timeout="$4" rc=0
    notify_pg_ctl_status "$dir" || rc=$?
    [ "$rc" -ne 0 ] || return 0
    if notify_port_listening "$port"; then
        notify_die "port 127.0.0.1:$port is in use by another process (not the cluster in $dir/data); free it or set $port_variable"
    fi
    if ! notify_pg_as_owner "$dir" "$NOTIFY_PG_BIN_DIR/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w -t "$timeout" start \
            >/dev/null 2>"$dir/pg_ctl.err"; then
        cat "$dir/pg_ctl.err" >&2
        notify_log_tail "$dir/postgres.log" 30
        notify_die "PostgreSQL did not start (log: $dir/postgres.log)"
    fi
}

# notify_pg_stop DIR [MODE]: stops the cluster in DIR/data if it runs (MODE: fast, the default, or immediate).
notify_pg_stop() {
    local dir="$1" mode="${2:-fast}" rc=0
    notify_pg_ctl_status "$dir" || rc=$?
    [ "$rc" -eq 0 ] || return 0
    if ! notify_pg_as_owner "$dir" "$NOTIFY_PG_BIN_DIR/pg_ctl" -D "$dir/data" -m "$mode" -w -t 60 stop >/dev/null 2>"$dir/pg_ctl.err"; then
        cat "$dir/pg_ctl.err" >&2
        notify_die "PostgreSQL did not stop (log: $dir/postgres.log)"
    fi
}

# notify_pg_print_status NAME DIR PORT: prints whether the cluster in DIR/data runs; 0 if it does, 3 if not.
notify_pg_print_status() {
    local name="$1" dir="$2" port="$3" rc=0 pid
    notify_pg_ctl_status "$dir" || rc=$?
    if [ "$rc" -eq 0 ]; then
        pid="$(head -n 1 "$dir/data/postmaster.pid" 2>/dev/null || true)"
        echo "$name: running (pid ${pid:-?}, 127.0.0.1:$port, socket dir $dir)"
        return 0
    fi
    if [ "$rc" -eq 4 ]; then
        echo "$name: stopped (no cluster in $dir/data yet)"
    else
        echo "$name: stopped"
    fi
    return 3
}
