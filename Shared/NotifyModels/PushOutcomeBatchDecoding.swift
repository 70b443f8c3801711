import Foundation

// Push outcomes read without JSONDecoder: storage reads every push's outcome through here. The decoder reads
// exactly what `WireCoding.makeDecoder()` reads into the same type (conventions in ChangeEventBatchDecoding.swift).

extension PushOutcomeBatch {
    /// Reads a `push.feedback` message. Throws `JSONReadError`.
    public init(decodingJSON document: some ContiguousBytes) throws {
        self = try JSONReader.read(document) { try PushOutcomeBatch(reading: &$0) }
    }

    init(reading reader: inout JSONReader) throws {
        var outcomes: [PushOutcome]?
        try reader.readObject { reader, key in
            switch key {
            case "outcomes" where outcomes == nil: outcomes = try reader.readArray { try PushOutcome(reading: &$0) }
            default: try reader.skipValue()
            }
        }
        self.init(outcomes: try reader.required(outcomes, "outcomes"))
    }
}

extension PushOutcome {
    init(reading reader: inout JSONReader) throws {
        var pushId: UUID?, appId: String?, subscriptionId: UUID?, notificationId: UUID?, sequence: Int64?, platform: Platform?
        var result: Result?, status: Int??, reason: String??, attempt: Int?, invalidSince: Date??, at: Date?
        try reader.readObject { reader, key in
            switch key {
            case "pushId" where pushId == nil: pushId = try reader.readUUID()
            case "appId" where appId == nil: appId = try reader.readString()
            case "subscriptionId" where subscriptionId == nil: subscriptionId = try reader.readUUID()
            case "notificationId" where notificationId == nil: notificationId = try reader.readUUID()
            case "sequence" where sequence == nil: sequence = try reader.readInt64()
            case "platform" where platform == nil: platform = try reader.readEnum(Platform.self)
            case "result" where result == nil: result = try reader.readEnum(Result.self)
            case "status" where status == nil: status = .some(try reader.readOptional { try $0.readInt() })
            case "reason" where reason == nil: reason = .some(try reader.readOptional { try $0.readString() })
            case "attempt" where attempt == nil: attempt = try reader.readInt()
            case "invalidSince" where invalidSince == nil: invalidSince = .some(try reader.readOptional { try $0.readTimestamp() })
            case "at" where at == nil: at = try reader.readTimestamp()
            default: try reader.skipValue()
            }
        }
        try self.init(
            pushId: reader.required(pushId, "pushId"), appId: reader.required(appId, "appId"),
            subscriptionId: reader.required(subscriptionId, "subscriptionId"), notificationId: reader.required(notificationId, "notificationId"),
            sequence: reader.required(sequence, "sequence"), platform: reader.required(platform, "platform"),
            result: reader.required(result, "result"), status: status ?? nil, reason: reason ?? nil,
            attempt: reader.required(attempt, "attempt"), invalidSince: invalidSince ?? nil, at: reader.required(at, "at"))
    }
}
