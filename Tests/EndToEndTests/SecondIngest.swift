import Foundation
import NotifyTestSupport

/// An ingest a test runs beside the stack's, on its own port, with settings of its own (`environment`, over the
/// stack's); stopped when the test's body returns. Like the stack's (deploy/local/services.sh), it connects to the broker
/// as ingest's own user (`NOTIFY_INGEST_AMQP_URL`), and the broker administrator's management URL is not in its
/// environment.
struct SecondIngest {
    let baseURL: String
    /// The running ingest's process id.
    let processIdentifier: Int32

    static func running(port: Int, environment settings: [String: String], _ body: (SecondIngest) async throws -> Void) async throws {
        let environment = ProcessInfo.processInfo.environment
        let logURL = FileManager.default.temporaryDirectory.appendingPathComponent("second-ingest-\(UUID().uuidString).log")
        guard FileManager.default.createFile(atPath: logURL.path, contents: nil) else { throw TestFailure("cannot create \(logURL.path)") }
        defer { try? FileManager.default.removeItem(at: logURL) }
        let log = try FileHandle(forWritingTo: logURL)
        defer { try? log.close() }

        let process = Process()
        process.executableURL = URL(fileURLWithPath: (environment["NOTIFY_BIN_DIR"] ?? Stack.root + "/.build/debug") + "/ingest")
        process.environment = environment.filter { $0.key != "NOTIFY_RABBITMQ_MANAGEMENT_URL" }.merging([
            "NOTIFY_AMQP_URL": Stack.ingestAMQPURL,
            "NOTIFY_DATABASE_URL": environment["NOTIFY_READER_DATABASE_URL"] ?? "postgres://notify_reader:notify_reader@127.0.0.1:22432/notify",
            "NOTIFY_HTTP_PORT": String(port),
            "NOTIFY_ADMIN_TOKEN": Stack.adminToken,
            // The stack's key-encryption keys (deploy/local/services.sh keeps them in the state directory).
            "NOTIFY_SECRET_KEYS_FILE": environment["NOTIFY_SECRET_KEYS_FILE"]
                ?? (environment["NOTIFY_STATE_DIR"] ?? Stack.root + "/.local/test") + "/secret-keys",
        ].merging(settings) { $1 }) { $1 }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = log
        process.standardError = log
        try process.run()
        defer {
            process.terminate()
            process.waitUntilExit()
        }
        let ingest = SecondIngest(baseURL: "http://127.0.0.1:\(port)", processIdentifier: process.processIdentifier)
        let deadline = ContinuousClock.now + .seconds(60)
        while (try? await StackClient.send(.GET, ingest.baseURL + "/health", deadline: .zero))?.status != 200 {
            guard process.isRunning, ContinuousClock.now < deadline else {
                let output = (try? String(contentsOf: logURL, encoding: .utf8)) ?? ""
                throw TestFailure("the second ingest (port \(port)) did not become healthy; its output:\n\(output.suffix(4000))")
            }
            try await Task.sleep(for: .milliseconds(200))
        }
        try await body(ingest)
    }
}
