#!/usr/bin/env bash
# Measures this machine in one run: builds release binaries, starts the stack with them (on the
# benchmark's own ports and state directory), and runs loadgen's modes in turn: the broker's ceiling,
# sustained HTTP publishing to 3 devices per user, latency at a fixed rate, the fan-out worker alone, a
# broadcast, a sweep of single requests over rates, an app publishing above its rate limit, and a quiet app's latency
# beside noisy ones.
# Writes every report under .local/bench/<time>/ and a summary (summary.md) with the ratios
# to the broker's ceiling. Starts from an empty broker and database (as on a fresh machine), waits for the
# machine to go quiet before each mode, and every run is bounded in count and time. Stops what it started.
set -euo pipefail
here="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
if [ "${1:-}" = "--help" ] || [ "${1:-}" = "-h" ]; then
    sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'
    cat <<USAGE
Sizes (environment, defaults in brackets): BENCH_SUSTAINED_COUNT [60000], BENCH_LATENCY_RATE [1000],
BENCH_LATENCY_COUNT [20000], BENCH_FANOUT_EVENTS [300000], BENCH_BROADCAST_DEVICES [1000000],
BENCH_BROKER_MESSAGES [200000], BENCH_MICRO_SECONDS [2].
storage: BENCH_STORAGE_NOTIFICATIONS [200000] publish commands preloaded with storage stopped, then applied by storage
  alone: notifications/s and CPU per notification of storage and PostgreSQL (one cluster's ceiling here).
BENCH_KEEP_STATE=1 keeps the broker's and database's data from the last run instead of starting empty.
BENCH_DATABASE [single] is postgres.sh's one PostgreSQL, or patroni: patroni-cluster.sh's three members behind HAProxy,
  synchronous unless NOTIFY_PATRONI_SYNCHRONOUS=off (to measure what synchronous commit costs, alternately).
BENCH_MODES runs only the modes it names (of: micro wakeup idle broker sustained latency fanout storage broadcast sustained-amqp
  single-amqp latency-amqp sweep overload floor neighbours; sustained-amqp, single-amqp and latency-amqp publish over AMQP as an
  app's broker user; wakeup, about 20 s, is the CPU one thread waking another costs on this machine; idle,
  BENCH_IDLE_SECONDS [30] seconds, is each process's CPU and context switches per second with nothing sent).
sweep (about 20 minutes; sweep/sweep.md, a table, and sweep/sweep.svg, latency and CPU per notification against the
  rate): single-notification requests at each fixed rate of BENCH_SWEEP_RATES [100 300 1000 3000] per second for
  BENCH_SWEEP_SECONDS [20] seconds, for each of BENCH_SWEEP_DEVICES [1 3] devices per user; closed loops of
  BENCH_SWEEP_CONCURRENCY [16 64 256] requests in flight for BENCH_SWEEP_SECONDS, 1 device per user; then the highest
  rate held steadily: BENCH_SWEEP_SEARCH_POINTS [4] fixed-rate points of BENCH_SWEEP_SEARCH_SECONDS [60] seconds,
  BENCH_SWEEP_SEARCH_DEVICES [1] devices per user, bisecting between the highest fixed rate above that kept up and the
  lowest that did not (else the closed loops' best requests/s). Kept up = nothing lost, refused or failed; the last
  push within BENCH_SWEEP_BACKLOG_LIMIT [0.5] seconds of the last 202, and the 202 -> push p50 grown by at most as
  much from the first 10 s of publishing to the last; 95 % of the rate accepted. Each point reports requests/s,
  request and 202 -> push latency, CPU, AMQP messages and PostgreSQL transactions per notification.
overload (about 2 minutes; overload/report.md, timeline.svg): the app's rate limit set to BENCH_OVERLOAD_LIMIT [500]
  notifications/s, offered 3 times that for BENCH_OVERLOAD_SECONDS [30] seconds, then half of it as long; per phase
  offered, accepted, refused (429/503), delivered, lost, latency.
floor (about 1 minute; floor/hops.md): the services restarted with LOG_LEVEL=debug LOG_FORMAT=json, BENCH_FLOOR_COUNT
  [400] single-notification requests at BENCH_FLOOR_RATE [20] per second, 1 device per user; each hop's time per
  notification read from the four services' logs (floor_hops.py), then the services restarted as before.
neighbours (about 15 minutes with a 1,000,000-device broadcast; neighbours/report.md): a quiet app B publishes single
  notifications over HTTP at BENCH_NEIGHBOURS_RATE [100] per second to 20 one-device users for BENCH_NEIGHBOURS_SECONDS
  [30] seconds while app A, case by case: alone: nothing (the baseline); broadcast: broadcasts once to
  BENCH_NEIGHBOURS_BROADCAST_DEVICES [1000000] seeded devices (B publishes until its last push); slow-provider: publishes
  100/s to Web Push subscriptions the sandbox answers after 5 s (B is Web Push too); dead-webhook: registers 20 devices/s,
  each a webhook event for a receiver that never answers in time (here and alone, B registers 5/s for its own);
  amqp-over-limit: publishes over AMQP at 3 times its rate limit of 200/s. Per case B's 202 -> push p50, p99 and max
  against the target max(2 x B's p99 alone, 250 ms), B's webhook latency, and A's and B's accepted, refused, delivered
  and lost; what has not arrived BENCH_NEIGHBOURS_DRAIN_TIMEOUT [120] seconds after publishing is waited for as long
  again once A's load is lifted (late), then counted lost. BENCH_NEIGHBOURS_CASES [alone broadcast slow-provider
  dead-webhook amqp-over-limit] runs only those cases (the report takes in the baseline only when alone is among them).
BENCH_BIN_DIR uses the release binaries there instead of building (to measure two builds alternately:
  BENCH_BIN_DIR=/path/to/other/.build-release/release BENCH_MODES="micro fanout" deploy/local/benchmark.sh).
USAGE
    exit 0
fi
root="$(cd -- "$here/../.." && pwd -P)"
export NOTIFY_STATE_DIR="${NOTIFY_BENCH_STATE_DIR:-$root/.local/bench-stack}"
# The benchmark's block of ports (deploy/local/env.sh has up.sh's, 21xxx, and says why all are below 32768).
export NOTIFY_PORT_BLOCK=23
export NOTIFY_BIN_DIR="${BENCH_BIN_DIR:-$root/.build-release/release}" LOG_LEVEL=warning
# shellcheck source=lib.sh
source "$here/lib.sh"

out="$root/.local/bench/$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$out"
"$here/install-deps.sh"
if [ -z "${BENCH_BIN_DIR:-}" ]; then
    echo "== building release binaries (the first time takes ~15 minutes)"
    (cd "$root" && swift build -c release --scratch-path .build-release 2>&1 | grep -E "error|Compiling Notify|Build complete" || true)
fi
[ -x "$NOTIFY_BIN_DIR/loadgen" ] || notify_die "the release build failed"
if [ "${BENCH_KEEP_STATE:-0}" != 1 ]; then
    # Every run starts as on a fresh machine: tables and queues that earlier runs filled would make each run slower
    # than the last (bigger indexes, longer seeding), and the figures could not be compared.
    if "$here/postgres.sh" status >/dev/null 2>&1 || "$here/patroni-cluster.sh" leader >/dev/null 2>&1 \
        || "$here/rabbitmq.sh" status >/dev/null 2>&1; then
        notify_die "a benchmark stack is running in $NOTIFY_STATE_DIR; stop it first (or set BENCH_KEEP_STATE=1 to use its data)"
    fi
    rm -rf -- "$NOTIFY_STATE_DIR/postgres" "$NOTIFY_STATE_DIR/patroni-cluster" "$NOTIFY_STATE_DIR/rabbitmq" "$NOTIFY_STATE_DIR/sandbox"
fi
case "${BENCH_DATABASE:-single}" in
    single) database="$here/postgres.sh" ;;
    patroni) database="$here/patroni-cluster.sh" ;;
    *) notify_die "BENCH_DATABASE must be single or patroni" ;;
esac
cleanup() { "$here/services.sh" stop || true; "$here/rabbitmq.sh" stop || true; "$database" stop || true; }
trap cleanup EXIT
"$here/rabbitmq.sh" start
"$database" start
"$here/services.sh" start

loadgen="$NOTIFY_BIN_DIR/loadgen"
# Waits (at most 60 s) until the machine's CPU has been under 10 % busy for two seconds in a row, so that a mode does
# not pay for the work the previous one left behind (the broker writing its log to segment files, autovacuum).
settle() {
    local quiet=0 busy _ user nice system idle iowait irq softirq total0 idle0 total1 idle1
    for _ in $(seq 1 60); do
        read -r _ user nice system idle iowait irq softirq _ </proc/stat
        total0=$((user + nice + system + idle + iowait + irq + softirq)) idle0=$((idle + iowait))
        sleep 1
        read -r _ user nice system idle iowait irq softirq _ </proc/stat
        total1=$((user + nice + system + idle + iowait + irq + softirq)) idle1=$((idle + iowait))
        busy=$((100 - 100 * (idle1 - idle0) / (total1 - total0 > 0 ? total1 - total0 : 1)))
        if [ "$busy" -lt 10 ]; then quiet=$((quiet + 1)); else quiet=0; fi
        [ "$quiet" -ge 2 ] && return 0
    done
    echo "(the machine stayed busy for 60 s; measuring anyway)"
}
api="http://127.0.0.1:$NOTIFY_INGEST_PORT" sandbox="http://127.0.0.1:$NOTIFY_SANDBOX_CONTROL_PORT"
apns="https://localhost:$NOTIFY_SANDBOX_APNS_PORT"
common=(--ingest-url "$api" --sandbox-url "$sandbox" --sandbox-apns-url "$apns")
# Whether this run measures mode $1 (every mode unless BENCH_MODES names some).
wants() { [ -z "${BENCH_MODES:-}" ] || [[ " $BENCH_MODES " == *" $1 "* ]]; }

if wants micro; then
    echo "== micro-benchmarks of the hot functions"
    "$loadgen" micro --seconds "${BENCH_MICRO_SECONDS:-2}" --output "$out/micro" || true
fi
if wants wakeup; then
    echo "== what waking a sleeping thread costs on this machine"
    "$loadgen" wakeup --output "$out/wakeup" || true
fi
settle
if wants idle; then
    echo "== idle: what each process costs per second while nothing is sent"
    "$loadgen" idle --seconds "${BENCH_IDLE_SECONDS:-30}" --output "$out/idle" || true
fi
if wants broker; then
    echo "== broker ceiling"
    "$loadgen" broker --amqp-url "$NOTIFY_AMQP_URL" --messages "${BENCH_BROKER_MESSAGES:-200000}" --output "$out/broker" || true
fi
settle
if wants sustained; then
    echo "== sustained: flat out over HTTP, batches of 100, 1000 users x 3 devices"
    "$loadgen" http "${common[@]}" --users 1000 --devices 3 --count "${BENCH_SUSTAINED_COUNT:-60000}" --batch 100 --concurrency 8 \
        --duration-limit 120 --drain-timeout 300 --output "$out/sustained" || true
fi
settle
if wants latency; then
    echo "== latency at ${BENCH_LATENCY_RATE:-1000}/s"
    "$loadgen" http "${common[@]}" --users 1000 --devices 3 --count "${BENCH_LATENCY_COUNT:-20000}" --rate "${BENCH_LATENCY_RATE:-1000}" \
        --concurrency 64 --duration-limit 120 --drain-timeout 120 --output "$out/latency" || true
fi
settle
# preloaded SERVICE LOADGEN-ARGS...: runs loadgen with --ready-file, which preloads a queue while SERVICE is stopped and
# creates that file when done; starts SERVICE then, and waits for loadgen to measure it.
preloaded() {
    local service="$1" ready="$out/$1-preloaded" bench
    shift
    "$loadgen" "$@" --ready-file "$ready" &
    bench=$!
    for _ in $(seq 1200); do
        if [ -f "$ready" ] || ! kill -0 "$bench" 2>/dev/null; then break; fi
        sleep 0.5
    done
    "$here/services.sh" start "$service"
    wait "$bench" || true
    rm -f "$ready"
}
if wants fanout; then
    echo "== fan-out worker alone (push-dispatch stopped; change events preloaded, then fanout started)"
    "$here/services.sh" stop push-dispatch fanout
    preloaded fanout fanout --amqp-url "$NOTIFY_AMQP_URL" --database-url "$NOTIFY_WRITER_DATABASE_URL" --users 10000 --devices 3 \
        --events "${BENCH_FANOUT_EVENTS:-300000}" --preload --timeout 300 --output "$out/fanout"
    "$here/services.sh" start push-dispatch
fi
settle
if wants storage; then
    echo "== storage and PostgreSQL alone (fanout and storage stopped; publish commands preloaded, then storage started)"
    "$here/services.sh" stop fanout storage
    preloaded storage storage --amqp-url "$NOTIFY_AMQP_URL" --database-url "$NOTIFY_WRITER_DATABASE_URL" \
        --notifications "${BENCH_STORAGE_NOTIFICATIONS:-200000}" --output "$out/storage"
    "$here/services.sh" start fanout
fi
settle
if wants broadcast; then
    echo "== broadcast"
    "$loadgen" broadcast "${common[@]}" --database-url "$NOTIFY_WRITER_DATABASE_URL" --devices "${BENCH_BROADCAST_DEVICES:-1000000}" \
        --timeout 600 --output "$out/broadcast" || true
fi
settle
# Over AMQP loadgen publishes as the app's own least-privilege broker user, and reads every verdict from a reply queue.
if wants sustained-amqp; then
    echo "== sustained over AMQP (notify.ingest), batches of 100"
    "$loadgen" http "${common[@]}" --transport amqp --amqp-url "$NOTIFY_AMQP_URL" --users 1000 --devices 3 --count "${BENCH_SUSTAINED_COUNT:-60000}" \
        --batch 100 --concurrency 8 --duration-limit 120 --drain-timeout 300 --output "$out/sustained-amqp" || true
fi
settle
if wants single-amqp; then
    echo "== over AMQP, one notification per message, flat out with 64 unconfirmed"
    "$loadgen" http "${common[@]}" --transport amqp --amqp-url "$NOTIFY_AMQP_URL" --users 1000 --devices 3 --count "${BENCH_LATENCY_COUNT:-20000}" \
        --batch 1 --concurrency 64 --duration-limit 120 --drain-timeout 300 --output "$out/single-amqp" || true
fi
settle
if wants latency-amqp; then
    echo "== over AMQP, one notification per message at ${BENCH_LATENCY_RATE:-1000}/s"
    "$loadgen" http "${common[@]}" --transport amqp --amqp-url "$NOTIFY_AMQP_URL" --users 1000 --devices 3 --count "${BENCH_LATENCY_COUNT:-20000}" \
        --rate "${BENCH_LATENCY_RATE:-1000}" --batch 1 --concurrency 64 --duration-limit 120 --drain-timeout 120 --output "$out/latency-amqp" || true
fi

settle
if wants floor; then
    echo "== floor: one notification at a time through an idle stack, each hop's time from the services' logs"
    "$here/services.sh" stop
    mkdir -p "$out/floor"
    # The logs of this mode alone: the hops are read from them.
    mv "$NOTIFY_STATE_DIR/logs" "$out/floor/logs-before" 2>/dev/null || true
    LOG_LEVEL=debug LOG_FORMAT=json "$here/services.sh" start
    settle
    "$loadgen" http "${common[@]}" --users 100 --devices 1 --rate "${BENCH_FLOOR_RATE:-20}" --count "${BENCH_FLOOR_COUNT:-400}" \
        --batch 1 --concurrency 4 --output "$out/floor" || true
    "$here/services.sh" stop
    python3 "$here/floor_hops.py" "$NOTIFY_STATE_DIR/logs" "$out/floor" | tee "$out/floor/hops.md" || true
    "$here/services.sh" start
fi

if wants sweep; then
    echo "== sweep: single requests at fixed rates, closed loops, and the highest rate held steadily"
    sweep_seconds="${BENCH_SWEEP_SECONDS:-20}" search_seconds="${BENCH_SWEEP_SEARCH_SECONDS:-60}"
    search_devices="${BENCH_SWEEP_SEARCH_DEVICES:-1}" backlog_limit="${BENCH_SWEEP_BACKLOG_LIMIT:-0.5}"
    points=()
    # One point: a directory name under sweep/, then loadgen http's options.
    sweep_point() {
        local name="$1"
        shift
        settle
        echo "-- $name"
        "$loadgen" http "${common[@]}" --users 1000 --backlog-limit "$backlog_limit" --output "$out/sweep/$name" "$@" || true
        points+=("$out/sweep/$name")
    }
    # Whether the point in directory $1 kept up, and the requests/s it reached (0 for a point without a report).
    kept_up() { [ "$(jq -r '.backlog.keptUp' "$1/report.json" 2>/dev/null)" = true ]; }
    reached() { jq '.requestsPerSecond | floor' "$1/report.json" 2>/dev/null || echo 0; }
    for devices in ${BENCH_SWEEP_DEVICES:-1 3}; do
        for rate in ${BENCH_SWEEP_RATES:-100 300 1000 3000}; do
            sweep_point "rate-$rate-d$devices" --devices "$devices" --rate "$rate" --count $((rate * sweep_seconds)) --concurrency 256 \
                --duration-limit $((sweep_seconds + 30)) --drain-timeout 120
        done
    done
    closed_best=0
    for concurrency in ${BENCH_SWEEP_CONCURRENCY:-16 64 256}; do
        sweep_point "closed-c$concurrency-d1" --devices 1 --count 1000000 --concurrency "$concurrency" \
            --duration-limit "$sweep_seconds" --drain-timeout 300
        best=$(reached "$out/sweep/closed-c$concurrency-d1")
        [ "$best" -gt "$closed_best" ] && closed_best="$best"
    done
    # Bisects between the highest fixed rate that kept up (good) and the lowest that did not (bad), starting from the
    # short points above (bad: the closed loops' best requests/s when every fixed rate kept up); the first search
    # point is the good rate itself, held for the longer time, and if that fails the search goes on below it.
    good=0 bad=0
    for rate in ${BENCH_SWEEP_RATES:-100 300 1000 3000}; do
        if kept_up "$out/sweep/rate-$rate-d$search_devices"; then
            [ "$rate" -gt "$good" ] && good="$rate"
        elif [ "$bad" -eq 0 ] || [ "$rate" -lt "$bad" ]; then
            bad="$rate"
        fi
    done
    [ "$bad" -eq 0 ] && bad="$closed_best"
    [ "$bad" -le "$good" ] && bad=$((good * 2))
    [ "$good" -eq 0 ] && good=$((bad / 2))
    rate="$good"
    for _ in $(seq 1 "${BENCH_SWEEP_SEARCH_POINTS:-4}"); do
        [ "$rate" -ge 1 ] || break
        name="steady-$rate-d$search_devices"
        sweep_point "$name" --devices "$search_devices" --rate "$rate" --count $((rate * search_seconds)) --concurrency 256 \
            --duration-limit $((search_seconds + 30)) --drain-timeout 300
        if kept_up "$out/sweep/$name"; then
            good="$rate"
        else
            bad="$rate"
            # The rate the short points held did not hold for longer: look below it.
            [ "$rate" -le "$good" ] && good=$((rate / 2))
        fi
        # The next rate halfway, rounded to 50/s; stop once the two are that close.
        rate=$(( (good + bad) / 2 / 50 * 50 ))
        if [ "$rate" -le "$good" ] || [ "$rate" -ge "$bad" ]; then break; fi
    done
    "$loadgen" sweep-report --output "$out/sweep" --steady-seconds "$search_seconds" "${points[@]}" || true
fi
settle
if wants overload; then
    echo "== overload: the app limited to ${BENCH_OVERLOAD_LIMIT:-500}/s, offered 3 times that, then half of it"
    "$loadgen" overload "${common[@]}" --limit "${BENCH_OVERLOAD_LIMIT:-500}" --phase-seconds "${BENCH_OVERLOAD_SECONDS:-30}" \
        --users 1000 --devices 3 --output "$out/overload" || true
fi
if wants neighbours; then
    echo "== neighbours: a quiet app's 202 -> push beside a noisy one"
    # One case at a time, the machine settling in between; each run rewrites neighbours/report.md from every case so far.
    for case in ${BENCH_NEIGHBOURS_CASES:-alone broadcast slow-provider dead-webhook amqp-over-limit}; do
        settle
        "$loadgen" neighbours "${common[@]}" --case "$case" --database-url "$NOTIFY_WRITER_DATABASE_URL" --amqp-url "$NOTIFY_AMQP_URL" \
            --rate "${BENCH_NEIGHBOURS_RATE:-100}" --seconds "${BENCH_NEIGHBOURS_SECONDS:-30}" \
            --drain-timeout "${BENCH_NEIGHBOURS_DRAIN_TIMEOUT:-120}" \
            --broadcast-devices "${BENCH_NEIGHBOURS_BROADCAST_DEVICES:-1000000}" --output "$out/neighbours" || true
    done
fi

{
    echo "# Benchmark $(date -u +%Y-%m-%d) on $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB"
    for part in micro wakeup broker sustained sustained-amqp single-amqp latency latency-amqp fanout storage broadcast overload neighbours; do
        [ -f "$out/$part/report.md" ] && { echo; cat "$out/$part/report.md"; }
    done
    [ -f "$out/sweep/sweep.md" ] && { echo; cat "$out/sweep/sweep.md"; }
    if [ -f "$out/broker/report.json" ] && [ -f "$out/sustained/report.json" ]; then
        ceiling=$(jq '.figures[] | select(.name == "publish and consume at once") | .value | round' "$out/broker/report.json")
        accepted=$(jq '.acceptedPerSecond | round' "$out/sustained/report.json")
        delivered=$(jq '.deliveredPerSecond // 0 | round' "$out/sustained/report.json")
        echo
        echo "### Ratios to the broker's ceiling (publish and consume at once: ${ceiling} msg/s)"
        echo
        echo "| figure | value | ratio |"
        echo "|---|---|---|"
        echo "| notifications accepted/s (sustained) | ${accepted} | $(jq -n "$accepted / $ceiling * 1000 | round / 1000") |"
        echo "| pushes delivered/s (sustained) | ${delivered} | $(jq -n "$delivered / $ceiling * 1000 | round / 1000") |"
        if [ -f "$out/fanout/report.json" ]; then
            jobs=$(jq '.figures[0].value | round' "$out/fanout/report.json")
            echo "| push jobs/s out of fanout alone | ${jobs} | $(jq -n "$jobs / $ceiling * 1000 | round / 1000") |"
        fi
    fi
} > "$out/summary.md"
echo "== summary: $out/summary.md"
cat "$out/summary.md"
