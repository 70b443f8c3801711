import Foundation
import NotifyRuntime

/// What became of one fault: when it was injected and when its recovery command returned (offsets from the start
/// of the run, in seconds), for a database fault how long after the injection the database took writes again, and
/// any command that failed.
struct ChaosFaultRecord: Codable, Sendable {
    let name: String
    let injectedAt: Double
    let recoveredAt: Double
    var databaseWritableAfter: Double?
    let failure: String?
}

/// Runs a schedule's faults at their times: shell commands from the scripts directory (their output appended to a
/// log), provider bursts through the sandbox's control API on a share of the run's devices.
struct ChaosFaultRunner: Sendable {
    let scriptsDirectory: String
    let log: String
    let client: JSONClient
    let sandboxURL: String
    let deviceTokens: [String]
    /// Times the database faults; nil runs them untimed.
    let databaseProbe: DatabaseWritableProbe?

    /// Runs every fault (each in a task of its own, so a slow restart does not delay the next fault) and returns
    /// their records, in schedule order, once all have recovered.
    func run(_ faults: [ChaosFault], from start: ContinuousClock.Instant) async -> [ChaosFaultRecord] {
        await withTaskGroup(of: (Int, ChaosFaultRecord).self) { group in
            for (index, fault) in faults.enumerated() {
                group.addTask {
                    try? await Task.sleep(until: start + .milliseconds(Int(fault.at * 1000)))
                    let injected = ContinuousClock.now
                    let injectedAt = Self.seconds(since: start)
                    var failure: String?
                    switch fault.inject {
                    case .shell(let command): failure = await shell(command, fault: fault.name)
                    case .providerBurst(let kind): failure = await burst(kind)
                    }
                    // Timed while the fault lasts: a failover is over before its recovery command runs.
                    async let writableAfter = fault.probesDatabase
                        ? databaseProbe?.secondsUntilWritable(since: injected, timeout: .seconds(60)) : nil
                    if let recover = fault.recover {
                        try? await Task.sleep(for: .milliseconds(Int(fault.lasting * 1000)))
                        failure = await shell(recover, fault: fault.name) ?? failure
                    }
                    let record = ChaosFaultRecord(
                        name: fault.name, injectedAt: injectedAt, recoveredAt: Self.seconds(since: start), databaseWritableAfter: await writableAfter,
                        failure: failure)
                    return (index, record)
                }
            }
            var records: [(Int, ChaosFaultRecord)] = []
            for await record in group { records.append(record) }
            return records.sorted { $0.0 < $1.0 }.map(\.1)
        }
    }

    static func seconds(since start: ContinuousClock.Instant) -> Double {
        (ContinuousClock.now - start).inSeconds
    }

    /// Runs `command` with bash in the scripts directory, its output appended to the log; nil when it exited 0,
    /// else what went wrong. (posix_spawn and a blocking waitpid on a thread of its own: Foundation's `Process`
    /// left some of the children of concurrent launches unreaped, their termination handlers never called.)
    private func shell(_ command: String, fault: String) async -> String? {
        if let handle = FileHandle(forWritingAtPath: log) {
            handle.seekToEndOfFile()
            handle.write(Data("== \(Date()) [\(fault)] \(command)\n".utf8))
            try? handle.close()
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_APPEND | O_CREAT, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let arguments = ["/bin/bash", "-c", "cd \"$0\" && \(command)", scriptsDirectory]
        var argv = arguments.map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, "/bin/bash", &actions, nil, &argv, environ)
        guard spawned == 0 else { return "\(command) could not start (errno \(spawned))" }
        let child = pid
        let status: Int32 = await withCheckedContinuation { continuation in
            let waiter = Thread {
                var status: Int32 = 0
                while waitpid(child, &status, 0) == -1, errno == EINTR {}
                continuation.resume(returning: status)
            }
            waiter.start()
        }
        let exited = status & 0x7f == 0
        return exited && (status >> 8) & 0xff == 0 ? nil : "\(command) ended with wait status \(status)"
    }

    /// Scripts `kind` for one device in five; nil when the sandbox took every fault.
    private func burst(_ kind: ChaosFault.ProviderBurst) async -> String? {
        let chosen = deviceTokens.shuffled().prefix(max(1, deviceTokens.count / 5))
        for token in chosen {
            let fault: SandboxFault
            switch kind {
            case .serverErrors: fault = SandboxFault(token: token, status: 500, reason: "InternalServerError", times: 2)
            case .throttled: fault = SandboxFault(token: token, status: 429, reason: "TooManyRequests", retryAfter: 1, times: 1)
            case .timeouts: fault = SandboxFault(token: token, delayMilliseconds: 12_000, times: 1)
            case .droppedConnections: fault = SandboxFault(token: token, dropConnection: true, times: 1)
            }
            if let refusal = await fault.add(client: client, sandboxURL: sandboxURL) { return "\(refusal) (\(kind.rawValue))" }
        }
        return nil
    }
}
