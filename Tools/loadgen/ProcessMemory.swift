import Foundation

/// Peak resident memory (VmHWM) of the local stack's services, from their pid files.
enum ProcessMemory {
    struct Peak: Codable, Sendable {
        let service: String
        let pid: Int?
        /// nil when the pid file or /proc/<pid>/status was not readable.
        let peakKiB: Int?

        var display: String {
            guard let peakKiB else { return "n/a" }
            return String(format: "%.1f MiB", Double(peakKiB) / 1024)
        }
    }

    static func read(pidDirectory: String) -> [Peak] {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: pidDirectory)) ?? [])
            .filter { $0.hasSuffix(".pid") }
            .sorted()
        return names.map { name in
            let service = String(name.dropLast(4))
            guard let text = try? String(contentsOfFile: "\(pidDirectory)/\(name)", encoding: .utf8),
                let pid = Int(text.trimmingCharacters(in: .whitespacesAndNewlines))
            else { return Peak(service: service, pid: nil, peakKiB: nil) }
            return Peak(service: service, pid: pid, peakKiB: vmHWM(pid: pid))
        }
    }

    /// `VmHWM:   123456 kB` from /proc/<pid>/status.
    static func vmHWM(pid: Int) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            let fields = line.split(whereSeparator: \.isWhitespace)
            if fields.count >= 2, let value = Int(fields[1]) { return value }
        }
        return nil
    }
}
