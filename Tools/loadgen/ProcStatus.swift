import Foundation

/// The numeric fields of a `/proc/<pid>/status` or `/proc/<pid>/task/<tid>/status` file (`VmHWM:   123456 kB` → 123456).
enum ProcStatus {
    /// The fields of `names` found in the file at `path`; nil when it cannot be read.
    static func values(atPath path: String, named names: Set<String>) -> [String: Int]? {
        guard let status = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        var values: [String: Int] = [:]
        for line in status.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":"), names.contains(String(line[..<colon])) else { continue }
            if let value = line[line.index(after: colon)...].split(whereSeparator: \.isWhitespace).first.flatMap({ Int($0) }) {
                values[String(line[..<colon])] = value
            }
        }
        return values
    }
}
