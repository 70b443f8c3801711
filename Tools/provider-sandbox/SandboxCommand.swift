import ArgumentParser
import Logging

/// The `provider-sandbox` command line: where to listen, where to keep state and records.
struct SandboxCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "provider-sandbox",
        abstract: "A local stand-in for push providers that speaks their real protocols and records every push.",
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
                success answers 200 with apns-id and apns-unique-id.
                Sandbox-specific: a body that is not a JSON object with an "aps"
                dictionary answers 400 {"reason": "BadPayload"}.

            Control API on --control-port: plain HTTP/1.1, JSON, camelCase.
              GET    /health              {"status": "ok"}
              POST   /apns/keys           {"teamId", "topics"}: 201 with a new
                                          keyId and its .p8 private key (PEM)
              PUT    /apns/keys/{keyId}   {"teamId", "topics", "publicKey"}: 204
              GET    /apns/keys           registered keys, public halves only
              GET    /deliveries          accepted pushes and "lastId"; query:
                                          provider, token, after (id), limit
              DELETE /deliveries          forget them (the records file stays)
              GET    /rejections          refused pushes, same query
              DELETE /rejections          forget them
              POST   /faults              {"provider", "token", "status",
                                          "reason", "retryAfter",
                                          "delayMilliseconds", "dropConnection",
                                          "times", "timestamp"}: 201
              GET    /faults              active faults
              DELETE /faults              remove all faults
              DELETE /faults/{faultId}    remove one fault

            State directory: ca.pem (the CA clients trust), ca-key.pem,
            server.pem, server-key.pem and keys.json (registered APNs keys),
            created on first start and reused afterwards.
            Records file: each accepted push as one JSON line, written at least
            every 100 ms and on shutdown.
            SIGTERM or SIGINT shuts the sandbox down gracefully.
            """
    )

    @Option(help: "Address both listeners bind to.")
    var host = "127.0.0.1"

    @Option(help: "Port of the APNs endpoint (TLS + HTTP/2).")
    var apnsPort = 8443

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

    @Option(help: "Log level.")
    var logLevel: Logger.Level = .info

    func validate() throws {
        for (name, port) in [("--apns-port", apnsPort), ("--control-port", controlPort)] where !(0...65535).contains(port) {
            throw ValidationError("\(name) must be between 0 and 65535.")
        }
        guard maxRecords > 0 else {
            throw ValidationError("--max-records must be positive.")
        }
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
