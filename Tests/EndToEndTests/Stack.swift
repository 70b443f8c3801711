import Foundation
import Logging

/// Where the running stack is: every address comes from the environment (as `deploy/local/env.sh` exports it),
/// with the defaults of the local stack.
enum Stack {
    private static let environment = ProcessInfo.processInfo.environment

    static let ingestURL = environment["NOTIFY_INGEST_URL"] ?? "http://127.0.0.1:21080"
    static let sandboxURL = environment["NOTIFY_SANDBOX_URL"] ?? "http://127.0.0.1:21090"
    static let sandboxAPNsURL = environment["NOTIFY_SANDBOX_APNS_URL"] ?? "https://localhost:21443"
    static let amqpURL = environment["NOTIFY_AMQP_URL"] ?? "amqp://notify:notify@127.0.0.1:21672/notify"
    /// The broker as ingest reaches it: as a user that is no administrator (deploy/rabbitmq/definitions.json).
    static let ingestAMQPURL = environment["NOTIFY_INGEST_AMQP_URL"] ?? "amqp://notify_ingest:notify_ingest@127.0.0.1:21672/notify"
    static let writerDatabaseURL = environment["NOTIFY_WRITER_DATABASE_URL"]
        ?? "postgres://notify_writer:notify_writer@127.0.0.1:21432/notify"
    static let adminToken = environment["NOTIFY_ADMIN_TOKEN"] ?? "local-admin-token"

    /// The repository root: `NOTIFY_ROOT`, or three levels above this file (Tests/EndToEndTests/Stack.swift).
    static let root: String = environment["NOTIFY_ROOT"] ?? {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }()

    static var scriptsDirectory: String { root + "/deploy/local" }
}

/// Random lowercase hex, e.g. for an APNs device token (32 bytes → 64 characters).
func randomHex(bytes count: Int) -> String {
    var generator = SystemRandomNumberGenerator()
    return (0..<count).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
}

/// A short random suffix for ids (user ids, broker users, queue names) no other test or run uses.
func uniqueSuffix() -> String {
    randomHex(bytes: 6)
}

/// The logger handed to clients under test (PostgresNIO, the AMQP layer): quiet unless `LOG_LEVEL` says otherwise.
let testLogger: Logger = {
    var logger = Logger(label: "e2e-tests")
    logger.logLevel = ProcessInfo.processInfo.environment["LOG_LEVEL"].flatMap { Logger.Level(rawValue: $0) } ?? .error
    return logger
}()
