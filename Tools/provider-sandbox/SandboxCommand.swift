import ArgumentParser
import Foundation
import Logging

/// The `provider-sandbox` command line: where to listen, where to keep state and records.
struct SandboxCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "provider-sandbox",
        abstract: "A local stand-in for APNs, FCM, Web Push and WNS that speaks their protocols and records every push.",
        discussion: """
            APNs endpoint on --apns-port: TLS 1.2+ with ALPN "h2" only, then HTTP/2,
            like api.push.apple.com.
              POST /3/device/{deviceToken}
                Checks what APNs checks: "authorization: bearer <ES256 JWT>" whose
                kid is a registered key, iss its team and iat at most an hour old
                (and no new token on a connection within 20 minutes); the
                apns-push-type, apns-topic, apns-priority, apns-expiration,
                apns-collapse-id and apns-id headers; the payload (4096 bytes,
                5120 for voip). Errors answer Apple's status and {"reason": ...};
                success answers 200 with apns-id and apns-unique-id. Without
                apns-push-type (optional on iOS, iPadOS, macOS and tvOS) the push
                counts as background when its aps holds content-available and no
                alert, badge or sound, and as alert otherwise.
                Sandbox-specific: a body that is not a JSON object with an "aps"
                dictionary answers 400 {"reason": "BadPayload"}.
              Connections end as APNs ends them, with GOAWAY (NO_ERROR, the last
              stream taken, a JSON "reason") after which the requests taken are
              answered: "IdleTimeout" after --idle-timeout-seconds without a
              request (PING does not count), "Shutdown" when the client
              half-closes (FIN or TLS close_notify) or the sandbox stops.

            FCM, Web Push and WNS on --providers-port: TLS 1.2+, ALPN "h2" or
            "http/1.1". URLs handed out start with --public-url.
              POST /fcm/token             OAuth 2.0 JWT-bearer grant (form
                grant_type, assertion): RS256 signature by a registered service
                account (iss = client_email, kid = private_key_id if given),
                aud = the token URI, scope firebase.messaging (or cloud-platform),
                exp - iat <= 1 h around now. Answers {"access_token",
                "expires_in": 3600, "token_type": "Bearer"} or an OAuth error.
              POST /fcm/v1/projects/{project}/messages:send
                Bearer token of a service account of {project}; body {"message":
                {"token", "android": {"collapse_key", "priority", "ttl"}, "data",
                "notification", ...}, "validate_only"}. Answers {"name":
                "projects/{project}/messages/{id}"} or Google's error shape
                {"error": {"code", "message", "status", "details": [{"@type":
                ".../google.firebase.fcm.v1.FcmError", "errorCode"}]}}.
                Sandbox-specific: only token targets, not topic or condition.
              POST /webpush/{subscriptionId}
                RFC 8030/8291/8292: "Authorization: vapid t=<ES256 JWT>, k=<key>"
                (aud = the --public-url origin, exp within 24 h, sub), TTL
                (required), Urgency, Topic, "Content-Encoding: aes128gcm". The
                body is decrypted with the subscription's keys and its plaintext
                recorded (JSON if it parses, else a string). Answers 201 with
                Location and TTL; 404 unknown, 410 unsubscribed; errors as
                {"code", "errno", "error", "message"} like Mozilla's autopush.
                Sandbox-specific: a body that does not decrypt answers 400.
              POST /wns/token             client-credentials grant (form
                grant_type, client_id, client_secret, scope=notify.windows.com):
                {"access_token", "token_type": "bearer", "expires_in": 86400}.
              POST   /wns/channels/{channelId}   Bearer token; X-WNS-Type
                (wns/toast|tile|badge with text/xml, wns/raw with
                application/octet-stream), X-WNS-Tag, X-WNS-Group, X-WNS-TTL;
                body at most 5000 bytes. Answers 200 "X-WNS-Status: received".
              DELETE /wns/channels/{channelId}   X-WNS-Match
                (type:wns/toast;all | tag=… | group=… | group=…;tag=…).
                Errors: 400, 401 (WWW-Authenticate), 403 (channel of another
                app), 404 unknown, 410 expired, 406 throttled, 413, with
                X-WNS-Error-Description.
              Access tokens live in memory: after a restart clients get 401.
              A connection idle for --idle-timeout-seconds is closed (HTTP/2:
              GOAWAY first); a client's half-close closes it.

            Control API on --control-port: plain HTTP/1.1, JSON, camelCase.
              GET    /health              {"status": "ok"}
              POST   /apns/keys           {"teamId", "topics"}: 201 with a new
                                          keyId and its .p8 private key (PEM)
              PUT    /apns/keys/{keyId}   {"teamId", "topics", "publicKey"}: 204
              GET    /apns/keys           registered keys, public halves only
              POST   /fcm/service-accounts {"projectId"}: 201 with the service
                                          account key file as Google's console
                                          downloads it (private key included)
              POST   /webpush/subscriptions {"applicationServerKey"} (optional):
                                          201 with the PushSubscription JSON
              GET    /webpush/subscriptions/{id}  the browser's half: {"privateKey"
                                          (P-256, raw, base64url), "auth", ...}
              DELETE /webpush/subscriptions/{id}  unsubscribe: pushes get 410
              POST   /wns/apps            201 {"clientId", "clientSecret"}
              POST   /wns/channels        {"clientId"} (optional: only that app
                                          may push): 201 {"channelUri",
                                          "channelId", "clientId"}
              DELETE /wns/channels/{id}   expire the channel: pushes get 410
              GET    /deliveries          accepted pushes and "lastId"; query:
                                          provider, token, after (id), limit.
                                          FCM, WNS and Web Push records name
                                          who authenticated ("authenticatedAs":
                                          the service account's email, the
                                          client id, the VAPID key)
              DELETE /deliveries          forget them (the records file stays)
              GET    /rejections          refused pushes, same query
              DELETE /rejections          forget them
              POST   /faults              {"provider" (apns, fcm, webpush, wns),
                                          "token" (device token, FCM token,
                                          subscription id, channel id), "status",
                                          "reason", "retryAfter",
                                          "delayMilliseconds", "dropConnection",
                                          "times", "timestamp"}: 201. "reason"
                                          is the APNs reason, the FCM errorCode,
                                          the WNS X-WNS-Error-Description or the
                                          Web Push message; a default is used
                                          for the usual statuses.
              GET    /faults              active faults
              DELETE /faults              remove all faults
              DELETE /faults/{faultId}    remove one fault
              POST   /captures            {"path" (on the providers listener,
                                          e.g. /fcm/token), "limit" (default
                                          16, at most 100)}: 201 {"captureId"};
                                          the next requests to that path are
                                          kept as they arrived, in memory only
              GET    /captures/{captureId}  {"requests": [{"method", "path",
                                          "headers": [{"name", "value"}] (all,
                                          authorization too), "body" (base64),
                                          "receivedAt"}], "missed"}
              DELETE /captures/{captureId}  stop and forget
              GET    /apns/connections    {"open", "idleTimeoutSeconds"}
              PUT    /apns/connections    {"idleTimeoutSeconds"} (0.1 to 86400):
                                          the APNs idle time from now on, for
                                          open connections too; answers as GET
              POST   /apns/connections/drop  {"goAway"} (default true): ends
                                          every open APNs connection now, with
                                          GOAWAY ("Shutdown") then close, or
                                          with a TCP reset (no GOAWAY, no
                                          close_notify); open requests get no
                                          answer. Answers {"dropped": n}.

            State directory: ca.pem (the CA clients trust), ca-key.pem,
            server.pem, server-key.pem, keys.json (registered APNs keys),
            fcm-service-accounts.json (public keys only),
            webpush-subscriptions.json (with their private keys), wns-apps.json
            and wns-channels.json, created on first start and reused afterwards.
            Records file: each accepted push as one JSON line, written at least
            every 100 ms and on shutdown.
            SIGTERM or SIGINT shuts the sandbox down gracefully.
            """
    )

    @Option(help: "Address both listeners bind to.")
    var host = "127.0.0.1"

    @Option(help: "Port of the APNs endpoint (TLS + HTTP/2).")
    var apnsPort = 8443

    @Option(help: "Port of the FCM, WNS and Web Push endpoints (TLS, HTTP/1.1 or HTTP/2).")
    var providersPort = 8444

    @Option(
        help: """
            Origin clients reach the --providers-port listener at: the base of the token URI, channel URIs \
            and Web Push endpoints the control API hands out, and the audience tokens must name. \
            (default: https://localhost:<providers-port>)
            """
    )
    var publicURL: String?

    @Option(help: "Port of the plain-HTTP control API.")
    var controlPort = 8090

    @Option(help: "Directory for the certificates, the registered keys and (by default) the records file; created if missing.")
    var stateDir = "./.sandbox-state"

    @Option(help: "JSON-lines file every accepted push is appended to. (default: <state-dir>/deliveries.jsonl)")
    var recordFile: String?

    @Option(
        name: .customLong("tls-name"),
        help: "Additional DNS name or IP address for the server certificate, besides localhost, 127.0.0.1 and ::1 (repeatable)."
    )
    var tlsNames: [String] = []

    @Option(help: "How many accepted pushes, and separately how many refused ones, are kept in memory.")
    var maxRecords = 1_000_000

    @Option(
        help: """
            Seconds a connection may go without a request before the sandbox closes it: APNs with GOAWAY \
            "IdleTimeout" (changeable later through PUT /apns/connections), the other providers' listener likewise.
            """
    )
    var idleTimeoutSeconds = 3600

    @Option(help: "Log level.")
    var logLevel: Logger.Level = .info

    func validate() throws {
        let ports = [("--apns-port", apnsPort), ("--providers-port", providersPort), ("--control-port", controlPort)]
        for (name, port) in ports where !(0...65535).contains(port) {
            throw ValidationError("\(name) must be between 0 and 65535.")
        }
        if let publicURL {
            guard let components = URLComponents(string: publicURL), components.scheme == "https",
                !(components.host ?? "").isEmpty, components.path.isEmpty, components.query == nil,
                components.fragment == nil, components.user == nil
            else {
                throw ValidationError("--public-url must be an origin: https://host or https://host:port.")
            }
        }
        guard idleTimeoutSeconds > 0 else {
            throw ValidationError("--idle-timeout-seconds must be positive.")
        }
        guard maxRecords > 0 else {
            throw ValidationError("--max-records must be positive.")
        }
    }
}

extension SandboxCommand {
    /// The origin of the providers listener as clients address it, without a trailing slash.
    var providersOrigin: String {
        publicURL ?? "https://localhost:\(providersPort)"
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
