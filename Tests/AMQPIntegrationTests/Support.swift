import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Logging
import NotifyAMQP
import NotifyTestSupport
import Synchronization
import Testing

// Helpers shared by the AMQP integration tests: where the broker is, how to control it,
// bounded waits, and a recorder for what consumers receive.

/// The broker the tests use, and the scripts that control it.
enum TestBroker {
    /// `NOTIFY_AMQP_URL`, or the isolated local node started by `deploy/local/rabbitmq.sh`.
    static let url = ProcessInfo.processInfo.environment["NOTIFY_AMQP_URL"] ?? "amqp://notify:notify@127.0.0.1:21672/notify"

    /// The repository root, found from this file's path (Tests/AMQPIntegrationTests/Support.swift).
    static let repositoryRoot: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }()

    /// `NOTIFY_RABBITMQ_SCRIPT`, or `deploy/local/rabbitmq.sh` in this repository.
    static let script = ProcessInfo.processInfo.environment["NOTIFY_RABBITMQ_SCRIPT"] ?? repositoryRoot + "/deploy/local/rabbitmq.sh"

    /// `NOTIFY_RABBITMQCTL_SCRIPT`, or `rabbitmqctl.sh` next to the broker script.
    static let ctlScript: String = ProcessInfo.processInfo.environment["NOTIFY_RABBITMQCTL_SCRIPT"]
        ?? URL(fileURLWithPath: script).deletingLastPathComponent().appendingPathComponent("rabbitmqctl.sh").path

    /// The vhost of `url` (for rabbitmqctl's `-p`).
    static var virtualHost: String { (try? AMQPConfiguration(url: url).virtualHost) ?? "notify" }

    static func configuration(url: String = TestBroker.url) throws -> AMQPConfiguration {
        var configuration = try AMQPConfiguration(url: url)
        configuration.connectTimeout = .seconds(2)
        return configuration
    }

    /// Quiet unless `NOTIFY_AMQP_TEST_LOG_LEVEL` asks for more (the layer logs every dead-lettering at error level).
    static let logger: Logger = {
        var logger = Logger(label: "amqp-integration-tests")
        logger.logLevel = ProcessInfo.processInfo.environment["NOTIFY_AMQP_TEST_LOG_LEVEL"].flatMap { Logger.Level(rawValue: $0) } ?? .critical
        return logger
    }()

    /// Starts the local broker once per test process (a no-op when it already runs).
    /// Skipped when the broker script does not exist (e.g. the broker is provided some other way).
    private static let started = Task<Void, any Error> {
        guard FileManager.default.isExecutableFile(atPath: script) else { return }
        let result = try await runProcess(script, ["start"], timeout: .seconds(90))
        guard result.status == 0 else {
            throw TestFailure("\(script) start failed (\(result.status)): \(result.output)")
        }
    }

    static func ensureStarted() async throws {
        try await started.value
    }

    /// Runs `rabbitmqctl.sh ARGS` and returns its output.
    @discardableResult
    static func ctl(_ arguments: [String], timeout: Duration = .seconds(30)) async throws -> String {
        let result = try await runProcess(ctlScript, arguments, timeout: timeout)
        guard result.status == 0 else {
            throw TestFailure("rabbitmqctl \(arguments.joined(separator: " ")) failed (\(result.status)): \(result.output)")
        }
        return result.output
    }

    /// Runs `rabbitmq.sh COMMAND` (start, stop, restart, status).
    static func control(_ command: String, timeout: Duration = .seconds(120)) async throws -> (status: Int32, output: String) {
        try await runProcess(script, [command], timeout: timeout)
    }

    /// Ready plus unacknowledged messages of each queue in the vhost.
    static func messageCounts() async throws -> [String: Int] {
        let output = try await ctl(["-q", "list_queues", "-p", virtualHost, "--no-table-headers", "name", "messages"])
        var counts: [String: Int] = [:]
        for line in output.split(separator: "\n") {
            let fields = line.split(whereSeparator: { $0 == "\t" || $0 == " " })
            if fields.count == 2, let count = Int(fields[1]) { counts[String(fields[0])] = count }
        }
        return counts
    }

    /// Polls `rabbitmqctl list_queues` until `queue` holds `expected` messages (the broker's counters lag a little).
    static func waitForMessageCount(_ queue: String, _ expected: Int, timeout: Duration = .seconds(15)) async throws -> Int? {
        let deadline = ContinuousClock.now + timeout
        var last: Int?
        while true {
            last = try await messageCounts()[queue]
            if last == expected || ContinuousClock.now >= deadline { return last }
            try await Task.sleep(for: .milliseconds(500))
        }
    }

    /// Deletes test queues (and policies, named "policy:NAME"); failures are ignored (the names are unique,
    /// leftovers are harmless).
    static func deleteQueues(_ names: [String]) async {
        for name in names {
            let arguments = name.hasPrefix("policy:")
                ? ["-q", "clear_policy", "-p", virtualHost, String(name.dropFirst("policy:".count))]
                : ["-q", "delete_queue", "-p", virtualHost, name]
            _ = try? await runProcess(ctlScript, arguments, timeout: .seconds(30))
        }
    }

    /// A queue name no other test (or earlier run) uses.
    static func uniqueQueueName(_ purpose: String) -> String {
        "test.amqp.\(purpose).\(UUID().uuidString.prefix(8).lowercased())"
    }
}

/// A RabbitMQ node of its own (same script, own ports and state directory) for a test that stops the
/// broker: the other suites of the same `swift test` run (EndToEndTests share the process and run in
/// parallel) and a stack running on the shared node keep theirs.
struct PrivateBroker: Sendable {
    let stateDirectory: String
    let port: Int
    let environment: [String: String]
    var url: String { "amqp://notify:notify@127.0.0.1:\(port)/notify" }

    /// Starts a fresh node on free ports; `body` gets it, and it is stopped and removed afterwards.
    static func with<Result: Sendable>(_ body: (PrivateBroker) async throws -> Result) async throws -> Result {
        let ports = try freePorts(5)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("amqp-private-broker-\(UUID().uuidString.prefix(8))").path
        let broker = PrivateBroker(
            stateDirectory: directory, port: ports[0],
            environment: [
                "NOTIFY_STATE_DIR": directory,
                "NOTIFY_RABBITMQ_PORT": "\(ports[0])", "NOTIFY_RABBITMQ_MANAGEMENT_PORT": "\(ports[1])",
                "NOTIFY_RABBITMQ_DIST_PORT": "\(ports[2])", "NOTIFY_EPMD_PORT": "\(ports[3])", "NOTIFY_RABBITMQ_PROMETHEUS_PORT": "\(ports[4])",
                "NOTIFY_AMQP_URL": "amqp://notify:notify@127.0.0.1:\(ports[0])/notify",
            ])
        let outcome: Swift.Result<Result, any Error>
        do {
            let (status, output) = try await broker.control("start")
            guard status == 0 else { throw TestFailure("starting a private RabbitMQ node failed (\(status)): \(output)") }
            outcome = .success(try await body(broker))
        } catch {
            outcome = .failure(error)
        }
        _ = try? await broker.control("stop")
        try? FileManager.default.removeItem(atPath: directory)
        return try outcome.get()
    }

    /// Runs `rabbitmq.sh COMMAND` for this node.
    func control(_ command: String, timeout: Duration = .seconds(120)) async throws -> (status: Int32, output: String) {
        try await runProcess(TestBroker.script, [command], environment: environment, timeout: timeout)
    }

    /// Random ports of 24000–29999 that nothing holds right now (each bound once and released). Not from `bind` to
    /// port 0: those lie in the kernel's ephemeral range (32768–60999), where an outgoing connection may take one
    /// before the broker binds it. The scripts' stacks use 21xxx (local), 22xxx (tests) and 23xxx (benchmarks).
    private static func freePorts(_ count: Int) throws -> [Int] {
        var ports: [Int] = []
        for _ in 0..<1_000 where ports.count < count {
            let port = Int.random(in: 24_000...29_999)
            if !ports.contains(port), try isFree(port) { ports.append(port) }
        }
        guard ports.count == count else { throw TestFailure("could not find \(count) free ports in 24000-29999") }
        return ports
    }

    /// Whether a socket can bind 127.0.0.1:`port` (nothing listens there, on it or on every address).
    private static func isFree(_ port: Int) throws -> Bool {
        #if os(Linux)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw TestFailure("socket() failed") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}

/// Runs a program on a thread of its own (off the cooperative pool) and returns its exit status and output.
///
/// Not `Foundation.Process`: on Linux it notices a child's exit through a socket the child inherits, so a
/// daemon the program starts (`rabbitmq-server -detached`) keeps that socket open and `waitUntilExit` never
/// returns. Here the child gets only stdin (/dev/null) and stdout/stderr (a temporary file).
func runProcess(
    _ executable: String, _ arguments: [String], environment: [String: String] = [:], timeout: Duration
) async throws -> (status: Int32, output: String) {
    try await withTimeout(timeout, "\(executable) \(arguments.joined(separator: " "))") {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<(status: Int32, output: String), any Error>) in
            let thread = Thread {
                let outputPath = FileManager.default.temporaryDirectory.appendingPathComponent("amqp-test-\(UUID().uuidString).log").path
                defer { unlink(outputPath) }
                do {
                    let status = try spawnAndWait(executable, arguments, environment: environment, outputPath: outputPath)
                    let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
                    continuation.resume(returning: (status, output))
                } catch {
                    continuation.resume(throwing: error)
                }
            }
            thread.start()
        }
    }
}

#if os(Linux)
private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32

/// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34+), which Swift does not import.
private let addCloseFrom: AddCloseFrom? = {
    guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "posix_spawn_file_actions_addclosefrom_np") else { return nil }
    return unsafeBitCast(symbol, to: AddCloseFrom.self)
}()

/// Spawns the program with default signal handling, waits for it, and returns its exit status (128 + n if killed by signal n).
private func spawnAndWait(_ executable: String, _ arguments: [String], environment: [String: String], outputPath: String) throws -> Int32 {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    posix_spawn_file_actions_adddup2(&actions, 1, 2)
    if let addCloseFrom {
        _ = addCloseFrom(&actions, 3)
    }

    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var noSignals = sigset_t()
    sigemptyset(&noSignals)
    var allSignals = sigset_t()
    sigfillset(&allSignals)
    posix_spawnattr_setsigmask(&attributes, &noSignals)
    posix_spawnattr_setsigdefault(&attributes, &allSignals)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

    let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
    defer { for argument in argv { free(argument) } }
    let variables = ProcessInfo.processInfo.environment.merging(environment) { _, override in override }
    let envp: [UnsafeMutablePointer<CChar>?] = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { for variable in envp { free(variable) } }
    var pid: pid_t = 0
    let spawned = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
    guard spawned == 0 else {
        throw TestFailure("cannot run \(executable): \(String(cString: strerror(spawned)))")
    }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 {
        guard errno == EINTR else { throw TestFailure("waitpid failed: \(String(cString: strerror(errno)))") }
    }
    let signal = status & 0x7f
    return signal == 0 ? (status >> 8) & 0xff : 128 + signal
}
#else
private func spawnAndWait(_ executable: String, _ arguments: [String], environment: [String: String], outputPath: String) throws -> Int32 {
    _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
    let output = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
    defer { try? output.close() }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.standardOutput = output
    process.standardError = output
    process.standardInput = FileHandle.nullDevice
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, override in override }
    try process.run()
    process.waitUntilExit()
    return process.terminationStatus
}
#endif

struct TimeoutError: Error, CustomStringConvertible {
    var what: String
    var after: Duration
    var description: String { "timed out after \(after): \(what)" }
}

/// Resumes a continuation at most once.
private final class ResumeOnce<T: Sendable>: Sendable {
    private let continuation: Mutex<CheckedContinuation<T, any Error>?>
    init(_ continuation: CheckedContinuation<T, any Error>) { self.continuation = Mutex(continuation) }

    @discardableResult
    func resume(_ result: Result<T, any Error>) -> Bool {
        let continuation = self.continuation.withLock { state -> CheckedContinuation<T, any Error>? in
            defer { state = nil }
            return state
        }
        continuation?.resume(with: result)
        return continuation != nil
    }
}

/// Runs `operation`, failing with `TimeoutError` once `timeout` passed, even when the operation hangs in a
/// call that ignores cancellation (it is then cancelled and abandoned).
func withTimeout<T: Sendable>(
    _ timeout: Duration, _ what: String, _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
        let once = ResumeOnce(continuation)
        let work = Task {
            do { once.resume(.success(try await operation())) } catch { once.resume(.failure(error)) }
        }
        Task {
            // Polls instead of one long sleep so that the timer ends soon after the work.
            let deadline = ContinuousClock.now + timeout
            while ContinuousClock.now < deadline {
                if !once.isPending { return }
                try? await Task.sleep(for: min(.milliseconds(50), deadline - ContinuousClock.now))
            }
            if once.resume(.failure(TimeoutError(what: what, after: timeout))) { work.cancel() }
        }
    }
}

extension ResumeOnce {
    var isPending: Bool { continuation.withLock { $0 != nil } }
}

/// Polls `condition` until it holds or `timeout` passes; returns whether it held.
func eventually(_ timeout: Duration, poll: Duration = .milliseconds(20), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: poll)
    }
    return condition()
}

/// Publishes `bodies` to the default exchange with routing key `queue`, `batchSize` per confirmed call.
func publish(_ bodies: [String], to queue: String, with publisher: AMQPPublisher, batchSize: Int = 100) async throws {
    var start = 0
    while start < bodies.count {
        let end = min(start + batchSize, bodies.count)
        let messages = bodies[start..<end].map { AMQPOutboundMessage(routingKey: queue, body: Data($0.utf8)) }
        try await withTimeout(.seconds(15), "publishing \(messages.count) messages to \(queue)") {
            try await publisher.publish(messages)
        }
        start = end
    }
}

/// What consumers received, in order.
final class DeliveryLog: Sendable {
    struct Entry: Sendable {
        var body: String
        var redelivered: Bool
        var exchange: String
        var routingKey: String
        var properties: AMQPProperties
    }

    private struct State {
        var entries: [Entry] = []
        var batches: [[String]] = []
    }

    private let state = Mutex(State())

    func record(_ batch: [AMQPDelivery]) {
        let entries = batch.map {
            Entry(body: String(decoding: $0.body, as: UTF8.self), redelivered: $0.redelivered, exchange: $0.exchange, routingKey: $0.routingKey, properties: $0.properties)
        }
        state.withLock {
            $0.entries.append(contentsOf: entries)
            $0.batches.append(entries.map(\.body))
        }
    }

    var entries: [Entry] { state.withLock { $0.entries } }
    var bodies: [String] { state.withLock { $0.entries.map(\.body) } }
    var count: Int { state.withLock { $0.entries.count } }
    var batches: [[String]] { state.withLock { $0.batches } }
    var uniqueBodies: Set<String> { Set(bodies) }
}

/// A consumer of `queue` that records every batch and answers with `decide`.
func makeConsumer(
    queue: String, topology: AMQPTopology, url: String = TestBroker.url, options: AMQPConsumer.Options = .init(),
    deadLetterPublisher: AMQPPublisher? = nil, log: DeliveryLog, decide: @escaping @Sendable (AMQPDelivery) -> AMQPDisposition = { _ in .ack }
) throws -> AMQPConsumer {
    AMQPConsumer(
        configuration: try TestBroker.configuration(url: url), queue: queue, topology: topology, options: options,
        deadLetterPublisher: deadLetterPublisher, logger: TestBroker.logger
    ) { batch in
        log.record(batch)
        return batch.map(decide)
    }
}

/// Consumes `queue` for `duration` and returns what arrived (acking everything).
func drain(_ queue: String, topology: AMQPTopology, url: String = TestBroker.url, for duration: Duration) async throws -> [DeliveryLog.Entry] {
    let log = DeliveryLog()
    let consumer = try makeConsumer(queue: queue, topology: topology, url: url, log: log)
    try await withServices([consumer], logger: TestBroker.logger) {
        _ = await eventually(.seconds(10)) { consumer.isConnected }
        try await Task.sleep(for: duration)
    }
    return log.entries
}

/// Runs `body`, then deletes the queues and policies (also when `body` failed); see `TestBroker.deleteQueues`.
func withQueues(_ names: [String], _ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch {
        await TestBroker.deleteQueues(names)
        throw error
    }
    await TestBroker.deleteQueues(names)
}

/// Duplicates in a list of bodies, with how often each occurred.
func duplicates(_ bodies: [String]) -> [String: Int] {
    Dictionary(bodies.map { ($0, 1) }, uniquingKeysWith: +).filter { $0.value > 1 }
}
