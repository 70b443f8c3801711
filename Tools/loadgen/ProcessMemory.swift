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

    static func read(_ stack: StackStateOption) -> [Peak] {
        stack.services.map { name, pid in Peak(service: name, pid: pid, peakKiB: pid.flatMap(vmHWM)) }
    }

    /// `VmHWM:   123456 kB` from /proc/<pid>/status.
    static func vmHWM(pid: Int) -> Int? {
        ProcStatus.values(atPath: "/proc/\(pid)/status", named: ["VmHWM"])?["VmHWM"]
    }
}
