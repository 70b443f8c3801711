import Foundation
import NotifyJSON
import NotifyModels

/// One page of the sandbox's `GET /deliveries`, read with `JSONReader` (which accepts what JSONDecoder accepts) and
/// keeping only what the collector matches on: each record's device token, the push's `notify.id` and `notify.seq`,
/// `receivedAt` as text, and the cursor. Headers and the rest of each payload are skipped unread.
struct DeliveryPage {
    struct Record {
        let deviceToken: String
        /// The payload's `notify.id`, if it has one.
        let notificationId: String?
        /// The payload's `notify.seq` (the user's sequence of the change the push announces), if it has one.
        let sequence: Int64?
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
        var deviceToken: String?, marker: (id: String?, sequence: Int64?)?, receivedAt: String?
        try reader.readObject { reader, key in
            switch key {
            case "deviceToken" where deviceToken == nil: deviceToken = try reader.readString()
            case "payload" where marker == nil: marker = try reader.readOptional { try notifyMarker(inPayload: &$0) } ?? (nil, nil)
            case "receivedAt" where receivedAt == nil: receivedAt = try reader.readString()
            default: try reader.skipValue()
            }
        }
        return Record(
            deviceToken: try reader.required(deviceToken, "deviceToken"), notificationId: marker?.id, sequence: marker?.sequence,
            receivedAt: try reader.required(receivedAt, "receivedAt"))
    }

    /// `notify.id` and `notify.seq` of a payload object: nil for what is absent or null. The other members are skipped.
    private static func notifyMarker(inPayload reader: inout JSONReader) throws -> (id: String?, sequence: Int64?) {
        var marker: (id: String?, sequence: Int64?) = (nil, nil)
        try reader.readObject { reader, key in
            guard "notify" ~= key else { return try reader.skipValue() }
            marker = try reader.readOptional { reader in
                var id: String?, sequence: Int64?
                try reader.readObject { reader, key in
                    switch key {
                    case "id" where id == nil: id = try reader.readOptional { try $0.readString() } ?? nil
                    case "seq" where sequence == nil: sequence = try reader.readOptional { try $0.readInt64() } ?? nil
                    default: try reader.skipValue()
                    }
                }
                return (id, sequence)
            } ?? (nil, nil)
        }
        return marker
    }
}
