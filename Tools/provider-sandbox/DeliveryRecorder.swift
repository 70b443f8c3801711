import Foundation
import ServiceLifecycle
import Synchronization

/// One recorded push, accepted or refused, rendered once as its JSON object (UTF-8).
struct PushRecord: Sendable {
    let id: Int
    let provider: String
    let deviceToken: String
    let json: [UInt8]
}

/// Which records a reader wants: those after a cursor, optionally for one provider or device token.
struct RecordQuery: Sendable {
    var provider: String?
    var deviceToken: String?
    var after = 0
    var limit: Int?
}

/// Records answering a query, and the id to pass as `after` to continue from.
struct RecordPage: Sendable {
    let records: [PushRecord]
    let lastId: Int
}

/// The newest records in id order: at least `capacity` of them, older ones trimmed in batches.
struct RecordLog: Sendable {
    let capacity: Int
    private(set) var lastId: Int
    private var records: [PushRecord] = []

    init(capacity: Int, lastId: Int = 0) {
        self.capacity = capacity
        self.lastId = lastId
    }

    /// Appends the record `build` makes for the next id.
    mutating func append(_ build: (Int) -> PushRecord) -> PushRecord {
        lastId += 1
        let record = build(lastId)
        records.append(record)
        if records.count >= capacity + max(capacity / 8, 1) {
            records.removeFirst(records.count - capacity)
        }
        return record
    }

    mutating func removeAll() {
        records.removeAll()
    }

    /// The matching records after `query.after`. `lastId` is the last one returned when `limit`
    /// cut the answer short, else the newest id assigned, so polling with it misses nothing.
    func page(_ query: RecordQuery) -> RecordPage {
        var low = 0
        var high = records.count
        while low < high {
            let middle = (low + high) / 2
            if records[middle].id <= query.after { low = middle + 1 } else { high = middle }
        }
        var selected: [PushRecord] = []
        for record in records[low...] {
            guard query.provider.map({ $0 == record.provider }) ?? true,
                query.deviceToken.map({ $0 == record.deviceToken }) ?? true
            else { continue }
            selected.append(record)
            if let limit = query.limit, selected.count == limit {
                return RecordPage(records: selected, lastId: record.id)
            }
        }
        return RecordPage(records: selected, lastId: max(lastId, query.after))
    }
}

/// Keeps every push the sandbox answered: accepted ones in memory and appended to a JSON-lines
/// file (buffered, written every 100 ms and on shutdown), refused ones in memory only.
final class DeliveryRecorder: Service {
    private struct State {
        var deliveries: RecordLog
        var rejections: RecordLog
        var unwritten: [UInt8]
    }

    private static let flushInterval = Duration.milliseconds(100)

    private let state: Mutex<State>
    private let file: FileHandle

    /// Opens (or creates) `recordFile` for appending; delivery ids continue after its last record.
    init(recordFile: URL, capacity: Int) throws {
        if !FileManager.default.fileExists(atPath: recordFile.path) {
            // A failure surfaces as the error of opening the file below.
            _ = FileManager.default.createFile(atPath: recordFile.path, contents: nil)
        }
        file = try FileHandle(forUpdating: recordFile)
        let (lastId, endsMidLine) = try Self.scanTail(of: file)
        state = Mutex(State(
            deliveries: RecordLog(capacity: capacity, lastId: lastId),
            rejections: RecordLog(capacity: capacity),
            unwritten: endsMidLine ? [UInt8(ascii: "\n")] : []
        ))
    }

    /// Records an accepted push; `payload` is compact JSON text. `authenticatedAs` names who the request authenticated
    /// as, where the provider tells apps apart by it: the FCM service account's email, the WNS client id, the VAPID key.
    func recordDelivery(
        provider: String, deviceToken: String, headers: RecordedHeaders, payload: [UInt8], authenticatedAs: String? = nil
    ) {
        var fields = Self.fields(provider: provider, deviceToken: deviceToken, extraCapacity: payload.count + 256)
        if let authenticatedAs {
            fields.append(contentsOf: #","authenticatedAs":"#.utf8)
            JSONText.appendQuoted(authenticatedAs, to: &fields)
        }
        fields.append(contentsOf: #","headers":"#.utf8)
        headers.appendJSON(to: &fields)
        fields.append(contentsOf: #","payload":"#.utf8)
        fields.append(contentsOf: payload)
        Self.appendReceivedAt(to: &fields)
        state.withLock { state in
            let record = state.deliveries.append { id in
                PushRecord(id: id, provider: provider, deviceToken: deviceToken, json: Self.record(id: id, fields: fields))
            }
            state.unwritten.append(contentsOf: record.json)
            state.unwritten.append(UInt8(ascii: "\n"))
        }
    }

    /// Records a refused push with the status and reason it was answered (status 0: connection dropped).
    func recordRejection(provider: String, deviceToken: String, status: Int, reason: String) {
        var fields = Self.fields(provider: provider, deviceToken: deviceToken, extraCapacity: reason.utf8.count + 64)
        fields.append(contentsOf: #","status":\#(status),"reason":"#.utf8)
        JSONText.appendQuoted(reason, to: &fields)
        Self.appendReceivedAt(to: &fields)
        state.withLock { state in
            _ = state.rejections.append { id in
                PushRecord(id: id, provider: provider, deviceToken: deviceToken, json: Self.record(id: id, fields: fields))
            }
        }
    }

    /// The members every record starts with after its id: `,"provider":…,"deviceToken":…`, with
    /// room for `extraCapacity` more bytes.
    private static func fields(provider: String, deviceToken: String, extraCapacity: Int) -> [UInt8] {
        var fields: [UInt8] = []
        fields.reserveCapacity(provider.utf8.count + deviceToken.utf8.count + 96 + extraCapacity)
        fields.append(contentsOf: #","provider":"#.utf8)
        JSONText.appendQuoted(provider, to: &fields)
        fields.append(contentsOf: #","deviceToken":"#.utf8)
        JSONText.appendQuoted(deviceToken, to: &fields)
        return fields
    }

    /// Ends a record's members with `,"receivedAt":"<now, ISO 8601>"}`.
    private static func appendReceivedAt(to fields: inout [UInt8]) {
        fields.append(contentsOf: #","receivedAt":""#.utf8)
        ISO8601Timestamp.append(.now, to: &fields)
        fields.append(contentsOf: #""}"#.utf8)
    }

    /// The record's JSON object: `{"id":<id>` followed by its members.
    private static func record(id: Int, fields: [UInt8]) -> [UInt8] {
        var json: [UInt8] = []
        json.reserveCapacity(fields.count + 32)
        json.append(contentsOf: #"{"id":"#.utf8)
        json.append(contentsOf: String(id).utf8)
        json.append(contentsOf: fields)
        return json
    }

    func deliveries(_ query: RecordQuery) -> RecordPage {
        state.withLock { $0.deliveries.page(query) }
    }

    func rejections(_ query: RecordQuery) -> RecordPage {
        state.withLock { $0.rejections.page(query) }
    }

    /// Forgets accepted pushes held in memory; ids keep counting and the file is untouched.
    func clearDeliveries() {
        state.withLock { $0.deliveries.removeAll() }
    }

    func clearRejections() {
        state.withLock { $0.rejections.removeAll() }
    }

    /// Writes buffered records every 100 ms until shutdown, then writes the rest and closes the file.
    func run() async throws {
        do {
            try await cancelWhenGracefulShutdown {
                while true {
                    try await Task.sleep(for: Self.flushInterval)
                    try self.flush()
                }
            }
        } catch is CancellationError {}
        try flush()
        try file.close()
    }

    private func flush() throws {
        let bytes = state.withLock { state in
            let bytes = state.unwritten
            state.unwritten = []
            return bytes
        }
        if !bytes.isEmpty {
            try file.write(contentsOf: bytes)
        }
    }

    /// The id of the last complete record in the file, and whether the file ends in a partial line
    /// (a crash mid-write), leaving the handle at the end of the file.
    private static func scanTail(of file: FileHandle) throws -> (lastId: Int, endsMidLine: Bool) {
        let size = try file.seekToEnd()
        try file.seek(toOffset: size > 65_536 ? size - 65_536 : 0)
        let tail = try file.readToEnd() ?? Data()
        let endsMidLine = tail.last.map { $0 != UInt8(ascii: "\n") } ?? false
        for line in tail.split(separator: UInt8(ascii: "\n")).reversed() {
            if let record = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
                let id = record["id"] as? Int
            {
                return (id, endsMidLine)
            }
        }
        return (0, endsMidLine)
    }
}
