#!/usr/bin/env bash
# Fuzzes ingest's HTTP API against its OpenAPI description with schemathesis (PyPI), as an operator, an app server
# and a device would call it (an app and a user token of its own): every operation, the description's examples,
# generated and malformed inputs, and stateful sequences. Fails on a server error or an answer the description does
# not allow (status, content type, body schema). Needs the stack running (up.sh, or test.sh, which runs this).
set -euo pipefail
here="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
if [ "${1:-}" = "--help" ] || [ "${1:-}" = "-h" ]; then
    sed -n '2,5p' "$0" | sed 's/^# \{0,1\}//'
    cat <<USAGE

usage: fuzz.sh [EXTRA-SCHEMATHESIS-RUN-OPTIONS...]
FUZZ_MAX_EXAMPLES (default 15; the long run: 300) examples per operation and phase. Ingest: \$NOTIFY_INGEST_PORT.
Reports (JUnit XML) in \$NOTIFY_STATE_DIR/fuzz/.
USAGE
    exit 0
fi
# shellcheck source=lib.sh
source "$here/lib.sh"
SCHEMATHESIS_VERSION=4.32.5
notify_pip_install "schemathesis==$SCHEMATHESIS_VERSION"
ingest="http://127.0.0.1:$NOTIFY_INGEST_PORT"
dir="$NOTIFY_STATE_DIR/fuzz"
mkdir -p "$dir"

app="$(curl -sf -X POST -H "Authorization: Bearer $NOTIFY_ADMIN_TOKEN" -H 'Content-Type: application/json' \
    -d '{"name":"schemathesis"}' "$ingest/v1/apps")" || notify_die "could not create an app at $ingest (is the stack running?)"
field() { python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])" <<<"$app"; }
app_id="$(field appId)" api_key="$(field apiKey)" signing_key="$(field clientSigningKey)"
# test.sh searches the run's logs for the secrets its tests used.
printf '%s\n%s\n' "$api_key" "$signing_key" >>"$NOTIFY_STATE_DIR/secrets-used"
user_token="$("$NOTIFY_BIN_DIR/notifyctl" user-token --app "$app_id" --signing-key "$signing_key" --user schemathesis-user)"
# Each security scheme of the description gets its credential; every path's appId is this app, and so is the app a
# device names (X-Notify-App-Id), so that device calls are fuzzed past their authentication.
cat >"$dir/schemathesis.toml" <<CONFIG
[auth.openapi.operatorToken]
bearer = "$NOTIFY_ADMIN_TOKEN"
[auth.openapi.apiKey]
bearer = "$api_key"
[auth.openapi.userToken]
bearer = "$user_token"
[parameters]
"path.appId" = "$app_id"
"header.X-Notify-App-Id" = "$app_id"
CONFIG

cd "$dir"
run() {
    "$NOTIFY_STATE_DIR/venv/bin/schemathesis" run "$ingest/openapi.yaml" --url "$ingest" \
        --checks not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance \
        --max-examples "${FUZZ_MAX_EXAMPLES:-15}" --generation-deterministic --request-timeout 10 \
        --report junit --report-dir "$dir" "$@"
}
# What takes the credentials away comes last, on its own: run among the rest, deleting the app or rotating its keys
# with no overlap left every later operation only 401s (and 404s), so it was never fuzzed past its authentication.
last=(rotateApiKey rotateClientSigningKey deleteApp)
run "${last[@]/#/--exclude-operation-id=}" "$@"
run "${last[@]/#/--include-operation-id=}" "$@"
