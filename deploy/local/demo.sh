#!/usr/bin/env bash
# Shows the running stack working: creates a demo app whose APNs credentials point at the provider
# sandbox, registers two devices for one user, publishes a notification, and prints what the sandbox
# received for each device. Needs the stack started by deploy/local/up.sh (or services.sh start).
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"

if [ "${1:-}" = "--help" ] || [ "${1:-}" = "-h" ]; then
    echo "usage: $NOTIFY_SCRIPT_NAME    (runs the demo against the local stack on 127.0.0.1:$NOTIFY_INGEST_PORT)"
    exit 0
fi

api="http://127.0.0.1:$NOTIFY_INGEST_PORT"
sandbox="http://127.0.0.1:$NOTIFY_SANDBOX_CONTROL_PORT"
team="DEMOTEAM01"
topic="com.example.notifydemo"

step() { printf '\n== %s\n' "$*"; }
call() { # method url token [body]
    local out status
    out=$(mktemp)
    status=$(curl -sS -o "$out" -w '%{http_code}' -X "$1" "$2" -H "Authorization: Bearer $3" -H 'Content-Type: application/json' ${4:+--data "$4"})
    if [ "${status:0:1}" != 2 ]; then
        notify_warn "$1 $2 answered $status: $(cat "$out")"
        rm -f "$out"
        exit 1
    fi
    cat "$out"
    rm -f "$out"
}
base64url() { openssl base64 -A | tr '+/' '-_' | tr -d '='; }
user_token() { # userId appId signingKey
    local header payload signature
    header=$(printf '{"alg":"HS256","typ":"JWT"}' | base64url)
    payload=$(printf '{"sub":"%s","aud":"%s","exp":%s}' "$1" "$2" "$(($(date +%s) + 3600))" | base64url)
    signature=$(printf '%s.%s' "$header" "$payload" | openssl dgst -sha256 -hmac "$3" -binary | base64url)
    printf '%s.%s.%s' "$header" "$payload" "$signature"
}

step "Create an app (operator token)"
app=$(call POST "$api/v1/apps" "$NOTIFY_ADMIN_TOKEN" '{"name":"Demo app"}')
app_id=$(jq -r .appId <<<"$app")
api_key=$(jq -r .apiKey <<<"$app")
signing_key=$(jq -r .clientSigningKey <<<"$app")
echo "appId $app_id"

step "Get an APNs .p8 key from the sandbox (as from Apple's developer portal) and store it for the app"
key=$(curl -sS -X POST "$sandbox/apns/keys" -H 'Content-Type: application/json' --data "{\"teamId\":\"$team\",\"topics\":[\"$topic\"]}")
credentials=$(jq -c --arg topic "$topic" --arg endpoint "https://localhost:$NOTIFY_SANDBOX_APNS_PORT" \
    '{teamId, keyId, privateKey, topic: $topic, environment: "sandbox", endpoint: $endpoint}' <<<"$key")
call PUT "$api/v1/apps/$app_id/providers/apns" "$NOTIFY_ADMIN_TOKEN" "$credentials" | jq -c .

step "Register two devices of user alice (user token signed with the app's clientSigningKey)"
token=$(user_token alice "$app_id" "$signing_key")
phone_token=$(openssl rand -hex 32)
tablet_token=$(openssl rand -hex 32)
call POST "$api/v1/me/subscriptions" "$token" "{\"platform\":\"apns\",\"pushToken\":\"$phone_token\",\"displayName\":\"Alice's phone\"}" | jq -c .
call POST "$api/v1/me/subscriptions" "$token" "{\"platform\":\"apns\",\"pushToken\":\"$tablet_token\",\"displayName\":\"Alice's tablet\"}" | jq -c .

step "Publish a notification to alice (API key)"
call POST "$api/v1/apps/$app_id/notifications" "$api_key" \
    '{"userId":"alice","appNotificationId":"welcome","payload":{"visualContent":{"title":"Hello","body":"Your order has shipped"}},"push":{"sound":"default"}}' | jq -c .

step "What the APNs sandbox received"
for device in "phone $phone_token" "tablet $tablet_token"; do
    set -- $device
    deliveries='[]'
    for _ in $(seq 1 100); do
        deliveries=$(curl -sS "$sandbox/deliveries?provider=apns&token=$2" | jq -c '.deliveries')
        [ "$(jq length <<<"$deliveries")" -gt 0 ] && break
        sleep 0.1
    done
    if [ "$(jq length <<<"$deliveries")" -eq 0 ]; then
        notify_die "the $1 received nothing within 10 s; see $NOTIFY_STATE_DIR/logs/"
    fi
    echo "-- alice's $1 ($2):"
    jq '.[] | {headers, payload}' <<<"$deliveries"
done
step "Handled once, dismissed everywhere: two devices of bob through the client library (device-sim)"
sim="$NOTIFY_BIN_DIR/device-sim"
simdir=$(mktemp -d)
device() { "$sim" "$@" --base-url "$api" --app-id "$app_id" --signing-key "$signing_key" --user-id bob; }
device run --name laptop --storage "$simdir/laptop" --duration 12 > "$simdir/laptop.out" 2>&1 &
laptop=$!
device run --name watch --storage "$simdir/watch" --duration 12 > "$simdir/watch.out" 2>&1 &
watch=$!
sleep 3
bob_id=$(call POST "$api/v1/apps/$app_id/notifications" "$api_key" \
    '{"userId":"bob","payload":{"visualContent":{"title":"Meeting moved","body":"Now at 3 pm"}}}' | jq -r .id)
sleep 3
echo "-- the laptop dismisses $bob_id:"
device dismiss "$bob_id" --name laptop --storage "$simdir/laptop"
wait "$laptop" "$watch" || true
echo "-- what the laptop printed:"; cat "$simdir/laptop.out"
echo "-- what the watch printed (it learns of the dismiss without doing anything):"; cat "$simdir/watch.out"
rm -rf "$simdir"
echo
echo "Demo done. Stop everything with: deploy/local/down.sh"
