import Foundation
#if canImport(Glibc)
import Glibc
#endif
import NotifyTestSupport
import Testing

/// Runs the project's scripts in deploy/local/ (services.sh, rabbitmqctl.sh).
enum Scripts {
    /// Runs `deploy/local/<script> ARGS...` and returns its exit status and combined output;
    /// kills it if it runs longer than `timeout`.
    ///
    /// The script runs under `bash -c` that first closes every inherited descriptor above stderr: Foundation's
    /// `Process` on Linux notices the exit through a socket the child inherits, so a service that
    /// `services.sh start` leaves running would otherwise hold it and `Process` would never report the exit.
    static func run(_ script: String, _ arguments: [String], timeout: Duration = .seconds(180)) async throws -> (status: Int32, output: String) {
        try await runProgram("\(Stack.scriptsDirectory)/\(script)", arguments, timeout: timeout)
    }

    /// Runs `program ARGS...` with `environment` added to the test's own, in the same way as `run`.
    static func runProgram(
        _ program: String, _ arguments: [String], environment: [String: String] = [:], timeout: Duration = .seconds(180)
    ) async throws -> (status: Int32, output: String) {
        let script = URL(fileURLWithPath: program).lastPathComponent
        let outputURL = FileManager.default.temporaryDirectory.appendingPathComponent("e2e-\(UUID().uuidString).log")
        guard FileManager.default.createFile(atPath: outputURL.path, contents: nil) else {
            throw TestFailure("cannot create \(outputURL.path)")
        }
        defer { try? FileManager.default.removeItem(at: outputURL) }
        let output = try FileHandle(forWritingTo: outputURL)
        defer { try? output.close() }

        let started = ContinuousClock.now
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [
            "-c", #"for fd in /proc/$$/fd/*; do n=${fd##*/}; [ "$n" -gt 2 ] && eval "exec $n>&-"; done; exec "$0" "$@""#,
            program,
        ] + arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = output
        process.standardError = output
        let (exits, reportExit) = AsyncStream.makeStream(of: Int32.self)
        process.terminationHandler = { process in
            reportExit.yield(process.terminationStatus)
            reportExit.finish()
        }
        do {
            try process.run()
        } catch {
            throw TestFailure("cannot run \(script): \(error)")
        }
        let pid = process.processIdentifier
        let timer = Task {
            try await Task.sleep(for: timeout)
            kill(pid, SIGKILL)
        }
        var status: Int32 = -1
        for await code in exits { status = code }
        timer.cancel()
        if ContinuousClock.now - started >= timeout {
            throw TestFailure("\(script) \(arguments.joined(separator: " ")) did not finish within \(timeout)")
        }
        let text = (try? String(contentsOf: outputURL, encoding: .utf8)) ?? ""
        return (status, text)
    }
}

/// Kills, starts and restarts the stack's services through `deploy/local/services.sh`.
enum Services {
    /// The services behind the provider sandbox, in start order.
    static let pipeline = ["storage", "fanout", "push-dispatch", "ingest"]

    /// `services.sh COMMAND NAMES...`; throws with the script's output if it fails.
    static func control(_ command: String, _ names: [String]) async throws {
        let result = try await Scripts.run("services.sh", [command] + names)
        guard result.status == 0 else {
            throw TestFailure("services.sh \(command) \(names.joined(separator: " ")) failed (\(result.status)):\n\(result.output)")
        }
    }

    /// Runs `body`, then starts whatever is not running (every service, also when `body` failed).
    static func restoringAll(_ body: () async throws -> Void) async throws {
        let outcome: Result<Void, any Error>
        do {
            try await body()
            outcome = .success(())
        } catch {
            outcome = .failure(error)
        }
        do {
            try await control("start", [])
        } catch {
            Issue.record("could not bring the stack back up: \(error)")
        }
        try outcome.get()
    }
}
