/// Splits a `text/event-stream` body into events (the `id:`, `event:` and `data:` fields of each
/// block that ends with an empty line). Comment lines (`: keep-alive`) are skipped. The live stream
/// (`GET /v1/me/stream`) is read with it by the client library and by `notifyctl tail`.
public struct ServerSentEventParser: Sendable {
    public struct Event: Sendable, Equatable {
        public var id: String?
        public var type: String
        public var data: String

        public init(id: String?, type: String, data: String) {
            self.id = id
            self.type = type
            self.data = data
        }
    }

    public init() {}

    private var line: [UInt8] = []
    private var id: String?
    private var type: String?
    private var data: [String] = []

    /// Feeds the next bytes of the body; answers the events they complete.
    public mutating func feed(_ bytes: some Sequence<UInt8>) -> [Event] {
        var events: [Event] = []
        for byte in bytes {
            guard byte == UInt8(ascii: "\n") else {
                line.append(byte)
                continue
            }
            if line.last == UInt8(ascii: "\r") { line.removeLast() }
            if let event = take(String(decoding: line, as: UTF8.self)) { events.append(event) }
            line.removeAll(keepingCapacity: true)
        }
        return events
    }

    private mutating func take(_ text: String) -> Event? {
        if text.isEmpty {
            defer { id = nil; type = nil; data = [] }
            guard !data.isEmpty else { return nil }
            return Event(id: id, type: type ?? "message", data: data.joined(separator: "\n"))
        }
        if text.hasPrefix(":") { return nil }
        let name: Substring
        var value: Substring
        if let colon = text.firstIndex(of: ":") {
            name = text[..<colon]
            value = text[text.index(after: colon)...]
            if value.hasPrefix(" ") { value = value.dropFirst() }
        } else {
            name = Substring(text)
            value = ""
        }
        switch name {
        case "id": id = String(value)
        case "event": type = String(value)
        case "data": data.append(String(value))
        default: break
        }
        return nil
    }
}
