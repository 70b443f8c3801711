import ArgumentParser
import Foundation

/// `--state-dir`: where the local stack keeps its pid files and data (deploy/local's layout), for each process's
/// peak memory and CPU.
struct StackStateOption: ParsableArguments {
    @Option(help: "The local stack's state directory: run/<service>.pid, rabbitmq/, postgres/. (default: $NOTIFY_STATE_DIR, else .local)")
    var stateDir = ProcessInfo.processInfo.environment["NOTIFY_STATE_DIR"] ?? ".local"

    /// Each service with a pid file in run/, by name, with its pid (nil when the file is unreadable).
    var services: [(name: String, pid: Int?)] {
        let run = "\(stateDir)/run"
        let files = ((try? FileManager.default.contentsOfDirectory(atPath: run)) ?? []).filter { $0.hasSuffix(".pid") }.sorted()
        return files.map { (String($0.dropLast(4)), Self.pid(inFile: "\(run)/\($0)")) }
    }

    /// The pid on the first line of a pid file (postmaster.pid holds more after it).
    static func pid(inFile path: String) -> Int? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8), let line = text.split(separator: "\n").first else { return nil }
        return Int(line.trimmingCharacters(in: .whitespaces))
    }
}
