#!/usr/bin/env bash
# Starts and stops the project's processes from $NOTIFY_BIN_DIR in the
# background, each logging to $NOTIFY_STATE_DIR/logs/<name>.log with a pid
# file in $NOTIFY_STATE_DIR/run/<name>.pid.
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"

# Start order; stop goes the other way.
SERVICES=(provider-sandbox storage fanout push-dispatch ingest)
# NOTIFY_SERVICE_INSTANCES=2 runs a second instance of each service (not of the sandbox), named <service>-2.
INSTANCES="${NOTIFY_SERVICE_INSTANCES:-1}"
START_TIMEOUT="${NOTIFY_SERVICE_START_TIMEOUT:-60}"
STOP_TIMEOUT="${NOTIFY_SERVICE_STOP_TIMEOUT:-15}"
LOG_DIR="$NOTIFY_STATE_DIR/logs"
RUN_DIR="$NOTIFY_STATE_DIR/run"
SANDBOX_DIR="$NOTIFY_STATE_DIR/sandbox"

usage() {
    cat <<USAGE
usage: $NOTIFY_SCRIPT_NAME start|stop|restart|kill|status [SERVICE...]

Services, in start order: ${SERVICES[*]}
Without SERVICE the command applies to all of them (stop: in reverse order).
SERVICE-N (e.g. storage-2, N from 2 to 9) is instance N of a service: the same queues (competing consumers),
its health or HTTP port 100 x (N - 1) above the first's. NOTIFY_SERVICE_INSTANCES=N makes "all" include
instances 2..N of each service (now: $INSTANCES).
  start    start in the background (no-op if running) and wait up to
           ${START_TIMEOUT}s until GET /health answers; the log tail is printed on failure
  stop     SIGTERM, then SIGKILL after ${STOP_TIMEOUT}s
  restart  stop, then start
  kill     SIGKILL at once (for crash tests)
  status   print each one's state; exit 0 if all are running and healthy, 3 if not

Binaries: $NOTIFY_BIN_DIR (NOTIFY_BUILD_CONFIGURATION=$NOTIFY_BUILD_CONFIGURATION)
Logs:     $LOG_DIR/<name>.log      Pid files: $RUN_DIR/<name>.pid
USAGE
}

# The executable of service instance $1 (storage-2 runs storage).
binary_of() { echo "${1%-[2-9]}"; }

# Instance $1's number: 1, or N for SERVICE-N.
instance_of() {
    if [[ "$1" =~ -([2-9])$ ]]; then echo "${BASH_REMATCH[1]}"; else echo 1; fi
}

health_port() {
    local base
    case "$(binary_of "$1")" in
        provider-sandbox) base="$NOTIFY_SANDBOX_CONTROL_PORT" ;;
        storage) base="$NOTIFY_STORAGE_HEALTH_PORT" ;;
        fanout) base="$NOTIFY_FANOUT_HEALTH_PORT" ;;
        push-dispatch) base="$NOTIFY_DISPATCH_HEALTH_PORT" ;;
        ingest) base="$NOTIFY_INGEST_PORT" ;;
    esac
    echo $((base + 100 * ($(instance_of "$1") - 1)))
}

# The key-encryption keys ingest, storage and push-dispatch seal stored secrets with: NOTIFY_SECRET_KEYS_FILE if set,
# else a file in the state directory, made with one random key the first time (kept with the data it seals).
secret_keys_file() {
    local file="${NOTIFY_SECRET_KEYS_FILE:-$NOTIFY_STATE_DIR/secret-keys}"
    if [ ! -s "$file" ]; then
        (umask 077 && printf 'local-1:%s\n' "$(head -c 32 /dev/urandom | base64)" >"$file")
    fi
    echo "$file"
}

# Fills the arrays ENV (VAR=value) and ARGS for service $1.
service_config() {
    ENV=(NOTIFY_AMQP_URL="$NOTIFY_AMQP_URL" LOG_LEVEL="$LOG_LEVEL" LOG_FORMAT="$LOG_FORMAT")
    ARGS=()
    case "$(binary_of "$1")" in
        storage | push-dispatch | ingest) ENV+=(NOTIFY_SECRET_KEYS_FILE="$(secret_keys_file)") ;;
    esac
    case "$(binary_of "$1")" in
        provider-sandbox)
            ARGS=(--host 127.0.0.1 --apns-port "$NOTIFY_SANDBOX_APNS_PORT" --providers-port "$NOTIFY_SANDBOX_PROVIDERS_PORT"
                --control-port "$NOTIFY_SANDBOX_CONTROL_PORT" --state-dir "$SANDBOX_DIR")
            ;;
        storage)
            # The only service given the broker's administrator (it is not exposed to the internet).
            ENV+=(NOTIFY_DATABASE_URL="$NOTIFY_WRITER_DATABASE_URL"
                NOTIFY_HEALTH_PORT="$(health_port "$1")"
                NOTIFY_RABBITMQ_MANAGEMENT_URL="$NOTIFY_RABBITMQ_MANAGEMENT_URL")
            ;;
        fanout)
            ENV+=(NOTIFY_DATABASE_URL="$NOTIFY_READER_DATABASE_URL"
                NOTIFY_HEALTH_PORT="$(health_port "$1")")
            ;;
        push-dispatch)
            ENV+=(NOTIFY_DATABASE_URL="$NOTIFY_READER_DATABASE_URL"
                NOTIFY_HEALTH_PORT="$(health_port "$1")"
                NOTIFY_TRUSTED_CA_FILE="$SANDBOX_DIR/ca.pem")
            # The tests set a longer interval, so that outcomes of pushes made one after another group reliably.
            [ -z "${NOTIFY_FEEDBACK_INTERVAL_MS:-}" ] || ENV+=(NOTIFY_FEEDBACK_INTERVAL_MS="$NOTIFY_FEEDBACK_INTERVAL_MS")
            ;;
        ingest)
            # A broker user that is no administrator (deploy/rabbitmq/definitions.json).
            ENV+=(NOTIFY_AMQP_URL="$NOTIFY_INGEST_AMQP_URL"
                NOTIFY_DATABASE_URL="$NOTIFY_READER_DATABASE_URL"
                NOTIFY_HTTP_PORT="$(health_port "$1")"
                NOTIFY_ADMIN_TOKEN="$NOTIFY_ADMIN_TOKEN")
            ;;
    esac
}

pid_file() { echo "$RUN_DIR/$1.pid"; }
log_file() { echo "$LOG_DIR/$1.log"; }

# Prints the pid of service $1 if it runs, or fails.
service_pid() {
    local name="$1" file pid argv0
    file="$(pid_file "$name")"
    [ -f "$file" ] || return 1
    pid="$(tr -dc '0-9' <"$file")"
    [ -n "$pid" ] && notify_pid_alive "$pid" || return 1
    # Guard against a recycled pid: argv[0] must be our binary.
    argv0="$(tr '\0' '\n' 2>/dev/null <"/proc/$pid/cmdline" | head -n 1)" || return 1
    [ "$(basename -- "$argv0")" = "$(binary_of "$name")" ] || return 1
    echo "$pid"
}

# Fails with one message naming every missing executable among services $@.
check_binaries() {
    local name missing=()
    for name in "$@"; do
        name="$(binary_of "$name")"
        [ -x "$NOTIFY_BIN_DIR/$name" ] || [[ " ${missing[*]} " == *" $name "* ]] || missing+=("$name")
    done
    [ "${#missing[@]}" -eq 0 ] && return 0
    local how="swift build"
    [ "$NOTIFY_BUILD_CONFIGURATION" = debug ] || how="swift build -c $NOTIFY_BUILD_CONFIGURATION"
    [ "${#missing[@]}" -gt 1 ] || how="$how --product ${missing[0]}"
    notify_die "cannot start ${missing[*]}: no such executable in $NOTIFY_BIN_DIR (NOTIFY_BUILD_CONFIGURATION=$NOTIFY_BUILD_CONFIGURATION); build first (in $NOTIFY_ROOT): $how"
}

# Prints (to stderr) the last 40 lines a service logged since byte $2 of log $1.
log_since() {
    local log="$1" offset="$2"
    printf -- '----- %s (this start, last 40 lines) -----\n' "$log" >&2
    tail -c +"$((offset + 1))" -- "$log" 2>/dev/null | tail -n 40 >&2 || true
    printf -- '-----\n' >&2
}

healthy() {
    curl -sf -o /dev/null --max-time 2 "http://127.0.0.1:$(health_port "$1")/health"
}

start_one() {
    local name="$1" bin log pid port deadline offset=0
    bin="$NOTIFY_BIN_DIR/$(binary_of "$1")"
    log="$(log_file "$name")"
    port="$(health_port "$name")"
    if service_pid "$name" >/dev/null; then
        return 0
    fi
    check_binaries "$name"
    if notify_port_listening "$port"; then
        notify_die "cannot start $name: port 127.0.0.1:$port is already in use by another process"
    fi
    if [ "$name" != provider-sandbox ] && ! notify_port_listening "$NOTIFY_RABBITMQ_PORT"; then
        notify_warn "warning: nothing listens on the RabbitMQ port $NOTIFY_RABBITMQ_PORT (deploy/local/rabbitmq.sh start)"
    fi
    if [ "$name" = push-dispatch ] && [ ! -f "$SANDBOX_DIR/ca.pem" ]; then
        notify_warn "warning: $SANDBOX_DIR/ca.pem does not exist (the provider sandbox writes it)"
    fi
    service_config "$name"
    mkdir -p "$LOG_DIR" "$RUN_DIR" "$SANDBOX_DIR"
    [ ! -f "$log" ] || offset="$(stat -c %s "$log")"
    printf '===== %s starting %s %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$bin" "${ARGS[*]}" >>"$log"
    # The child execs env, which execs setsid, which execs the binary (setsid
    # does not fork: the child does not lead a process group), so $! is the
    # service's pid. Its own session keeps it clear of terminal signals.
    (
        cd "$NOTIFY_STATE_DIR"
        exec env -u NOTIFY_DATABASE_URL -u NOTIFY_HEALTH_PORT -u NOTIFY_HTTP_PORT \
            -u NOTIFY_TRUSTED_CA_FILE -u NOTIFY_RABBITMQ_MANAGEMENT_URL "${ENV[@]}" \
            setsid "$bin" "${ARGS[@]}" </dev/null >>"$log" 2>&1
    ) &
    pid=$!
    echo "$pid" >"$(pid_file "$name")"
    deadline=$((SECONDS + START_TIMEOUT))
    until healthy "$name"; do
        if ! notify_pid_alive "$pid"; then
            local rc=0
            wait "$pid" 2>/dev/null || rc=$?
            rm -f "$(pid_file "$name")"
            log_since "$log" "$offset"
            notify_die "$name exited during startup (exit status $rc); log: $log"
        fi
        if [ "$SECONDS" -ge "$deadline" ]; then
            log_since "$log" "$offset"
            stop_one "$name" >/dev/null 2>&1 || true
            notify_die "$name did not answer http://127.0.0.1:$port/health within ${START_TIMEOUT}s (stopped it again); log: $log"
        fi
        sleep 0.2
    done
}

# Waits until pid $1 is gone, up to $2 seconds; fails on timeout.
wait_gone() {
    local pid="$1" deadline=$((SECONDS + $2))
    while notify_pid_alive "$pid"; do
        [ "$SECONDS" -lt "$deadline" ] || return 1
        sleep 0.1
    done
}

stop_one() {
    local name="$1" pid
    if pid="$(service_pid "$name")"; then
        kill -TERM "$pid" 2>/dev/null || true
        if ! wait_gone "$pid" "$STOP_TIMEOUT"; then
            notify_warn "$name (pid $pid) still running ${STOP_TIMEOUT}s after SIGTERM; sending SIGKILL"
            kill -KILL "$pid" 2>/dev/null || true
            wait_gone "$pid" 10 || notify_die "$name (pid $pid) survived SIGKILL"
        fi
    fi
    rm -f "$(pid_file "$name")"
}

kill_one() {
    local name="$1" pid
    if pid="$(service_pid "$name")"; then
        kill -KILL "$pid" 2>/dev/null || true
        wait_gone "$pid" 10 || notify_die "$name (pid $pid) survived SIGKILL"
    fi
    rm -f "$(pid_file "$name")"
}

# Prints one line; fails unless running and healthy.
status_one() {
    local name="$1" pid port
    port="$(health_port "$name")"
    if pid="$(service_pid "$name")"; then
        if healthy "$name"; then
            echo "$name: running (pid $pid, healthy at http://127.0.0.1:$port/health)"
            return 0
        fi
        echo "$name: running (pid $pid) but not healthy at http://127.0.0.1:$port/health"
        return 3
    fi
    if [ -f "$(pid_file "$name")" ]; then
        echo "$name: stopped (stale pid file $(pid_file "$name"))"
    else
        echo "$name: stopped"
    fi
    return 3
}

command="${1:-}"
case "$command" in
    -h|--help|help) usage; exit 0 ;;
    start|stop|restart|kill|status) shift ;;
    "") usage >&2; exit 2 ;;
    *) notify_warn "unknown command: $command"; usage >&2; exit 2 ;;
esac

names=("$@")
for name in "${names[@]}"; do
    case " ${SERVICES[*]} " in
        *" $(binary_of "$name") "*) [ "$name" != provider-sandbox-"$(instance_of "$name")" ] || notify_die "the provider sandbox runs once" ;;
        *) notify_die "unknown service: $name (known: ${SERVICES[*]}, and SERVICE-N for instance N)" ;;
    esac
done
[[ "$INSTANCES" =~ ^[1-9]$ ]] || notify_die "NOTIFY_SERVICE_INSTANCES must be a number from 1 to 9, not '$INSTANCES'"
if [ "${#names[@]}" -eq 0 ]; then
    for name in "${SERVICES[@]}"; do
        names+=("$name")
        if [ "$name" != provider-sandbox ]; then
            for ((i = 2; i <= INSTANCES; i++)); do names+=("$name-$i"); done
        fi
    done
    reversed=()
    for ((i = ${#names[@]} - 1; i >= 0; i--)); do reversed+=("${names[i]}"); done
else
    reversed=()
    for ((i = ${#names[@]} - 1; i >= 0; i--)); do reversed+=("${names[i]}"); done
fi

case "$command" in
    start)
        # All missing binaries in one message, before anything is started.
        not_running=()
        for n in "${names[@]}"; do service_pid "$n" >/dev/null || not_running+=("$n"); done
        [ "${#not_running[@]}" -eq 0 ] || check_binaries "${not_running[@]}"
        for n in "${names[@]}"; do start_one "$n"; done
        ;;
    stop) for n in "${reversed[@]}"; do stop_one "$n"; done ;;
    kill) for n in "${reversed[@]}"; do kill_one "$n"; done ;;
    restart)
        check_binaries "${names[@]}"
        for n in "${reversed[@]}"; do stop_one "$n"; done
        for n in "${names[@]}"; do start_one "$n"; done
        ;;
    status)
        rc=0
        for n in "${names[@]}"; do status_one "$n" || rc=3; done
        exit "$rc"
        ;;
esac
