import Foundation
import NotifyJSON
import NotifyModels

/// One page of the sandbox's `GET /deliveries`, read with `JSONReader` (which accepts what JSONDecoder accepts) and
/// keeping only what the collector matches on: each record's device token, the push's `notify.id` and `receivedAt`,
/// as text, and the cursor. Headers and the rest of each payload are skipped unread.
struct DeliveryPage {
    struct Record {
        let deviceToken: String
        /// The payload's `notify.id`, if it has one.
        let notificationId: String?
        let receivedAt: String
    }

    let deliveries: [Record]
    let lastId: Int

    /// Throws `JSONReadError` for a page that is not `{"deliveries":[…],"lastId":n}` with records as above.
    init(decodingJSON document: some ContiguousBytes) throws {
        (deliveries, lastId) = try JSONReader.read(document) { reader in
            var deliveries: [Record]?, lastId: Int?
            try reader.readObject { reader, key in
                switch key {
                case "deliveries" where deliveries == nil: deliveries = try reader.readArray { try Self.record(&$0) }
                case "lastId" where lastId == nil: lastId = try reader.readInt()
                default: try reader.skipValue()
                }
            }
            return (try reader.required(deliveries, "deliveries"), try reader.required(lastId, "lastId"))
        }
    }

    private static func record(_ reader: inout JSONReader) throws -> Record {
        var deviceToken: String?, notificationId: String??, receivedAt: String?
        try reader.readObject { reader, key in
            switch key {
            case "deviceToken" where deviceToken == nil: deviceToken = try reader.readString()
            case "payload" where notificationId == nil: notificationId = .some(try reader.readOptional { try notifyId(inPayload: &$0) } ?? nil)
            case "receivedAt" where receivedAt == nil: receivedAt = try reader.readString()
            default: try reader.skipValue()
            }
        }
        return Record(
            deviceToken: try reader.required(deviceToken, "deviceToken"), notificationId: notificationId ?? nil,
            receivedAt: try reader.required(receivedAt, "receivedAt"))
    }

    /// `notify.id` of a payload object: nil when `notify` or its `id` is absent or null.
    private static func notifyId(inPayload reader: inout JSONReader) throws -> String? {
        try member("notify", of: &reader) { try member("id", of: &$0) { try $0.readString() } }
    }

    /// Member `name` of an object, read by `value`: nil when absent or null. The other members are skipped.
    private static func member(
        _ name: StaticString, of reader: inout JSONReader, _ value: (inout JSONReader) throws -> String?
    ) throws -> String? {
        var found: String??
        try reader.readObject { reader, key in
            if found == nil, name ~= key {
                found = .some(try reader.readOptional(value) ?? nil)
            } else {
                try reader.skipValue()
            }
        }
        return found ?? nil
    }
}
