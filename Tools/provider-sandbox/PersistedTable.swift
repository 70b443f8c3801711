import Foundation
import Synchronization

/// Rows keyed by id, held in memory and saved as one JSON object to a file in the state directory
/// on every change, so what the control API created survives restarts.
final class PersistedTable<Row: Codable & Sendable>: Sendable {
    private let file: URL
    private let rows: Mutex<[String: Row]>

    /// Loads the rows saved in `file`, if it exists.
    init(file: URL) throws {
        self.file = file
        var rows: [String: Row] = [:]
        if FileManager.default.fileExists(atPath: file.path) {
            rows = try JSONDecoder().decode([String: Row].self, from: Data(contentsOf: file))
        }
        self.rows = Mutex(rows)
    }

    subscript(id: String) -> Row? {
        rows.withLock { $0[id] }
    }

    /// Adds or replaces the row `id` and saves the table.
    func set(_ row: Row, id: String) throws {
        try rows.withLock { rows in
            var updated = rows
            updated[id] = row
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            try encoder.encode(updated).write(to: file, options: .atomic)
            rows = updated
        }
    }
}
