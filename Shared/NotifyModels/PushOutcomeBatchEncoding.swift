import Foundation

extension PushOutcomeBatch {
    /// The batch as wire JSON, what `WireCoding`'s encoder says (UUIDs lowercase, absent optionals left out),
    /// written directly: push-dispatch reports every push through here. The writing side of `init(decodingJSON:)`.
    public func encodedJSON() -> Data {
        var writer = JSONWriter(capacity: 16 + outcomes.count * 400)
        writer.beginObject()
        writer.key("outcomes")
        writer.beginArray()
        for outcome in outcomes { outcome.write(to: &writer) }
        writer.endArray()
        writer.endObject()
        return Data(writer.bytes)
    }
}

extension PushOutcome {
    func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("pushId"); writer.uuid(pushId)
        writer.key("appId"); writer.string(appId)
        writer.key("subscriptionId"); writer.uuid(subscriptionId)
        writer.key("notificationId"); writer.uuid(notificationId)
        writer.key("sequence"); writer.integer(sequence)
        writer.key("platform"); writer.string(platform.rawValue)
        writer.key("result"); writer.string(result.rawValue)
        if let status { writer.key("status"); writer.integer(Int64(status)) }
        if let reason { writer.key("reason"); writer.string(reason) }
        writer.key("attempt"); writer.integer(Int64(attempt))
        if let invalidSince { writer.key("invalidSince"); writer.timestamp(invalidSince) }
        writer.key("at"); writer.timestamp(at)
        writer.endObject()
    }
}
