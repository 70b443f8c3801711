import Foundation

/// The report of a benchmark mode (`broker`, `fanout`): named figures, written as JSON and Markdown.
struct BenchmarkReport: Codable, Sendable {
    struct Figure: Codable, Sendable {
        var name: String
        var value: Double
        var unit: String
    }

    var mode: String
    var date: Date
    var settings: [String: String]
    var figures: [Figure]
    /// Where the CPU went over the measured phase.
    var cpu: ProcessCPU.Usage?

    var markdown: String {
        var lines = ["### loadgen \(mode) (\(ISO8601DateFormatter().string(from: date)))", ""]
        lines.append("Settings: " + settings.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", "))
        lines += ["", "| figure | value |", "|---|---|"]
        for figure in figures {
            lines.append("| \(figure.name) | \(String(format: figure.value >= 100 ? "%.0f" : "%.2f", figure.value)) \(figure.unit) |")
        }
        for (name, value) in cpu?.rows ?? [] {
            lines.append("| \(name) | \(value) |")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Writes report.json and report.md into `directory` and prints the Markdown.
    func write(to directory: String) throws {
        let url = URL(fileURLWithPath: directory, isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        try encoder.encode(self).write(to: url.appending(path: "report.json"))
        try Data(markdown.utf8).write(to: url.appending(path: "report.md"))
        print(markdown)
    }

    static func defaultOutput(_ mode: String) -> String {
        ".local/loadgen/\(mode)-\(Int(Date().timeIntervalSince1970))"
    }
}

/// Counts deliveries across consumer batches and tells when a target count was reached.
actor DeliveryCounter {
    private(set) var count = 0
    private(set) var first: ContinuousClock.Instant?
    private(set) var last: ContinuousClock.Instant?
    private var waiters: [(target: Int, continuation: CheckedContinuation<Void, Never>)] = []

    func add(_ amount: Int) {
        let now = ContinuousClock.now
        if first == nil { first = now }
        last = now
        count += amount
        let ready = waiters.filter { $0.target <= count }
        waiters.removeAll { $0.target <= count }
        for waiter in ready { waiter.continuation.resume() }
    }

    /// Returns once `target` was reached or `timeout` passed; true if reached.
    func wait(for target: Int, timeout: Duration) async -> Bool {
        if count >= target { return true }
        let deadline = Task { [weak self] in
            try? await Task.sleep(for: timeout)
            await self?.releaseAll()
        }
        await withCheckedContinuation { waiters.append((target, $0)) }
        deadline.cancel()
        return count >= target
    }

    private func releaseAll() {
        for waiter in waiters { waiter.continuation.resume() }
        waiters = []
    }
}
