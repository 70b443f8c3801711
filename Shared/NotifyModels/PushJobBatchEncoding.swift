import Foundation

extension PushJobBatch {
    /// The batch as wire JSON, the same document `WireCoding`'s encoder makes (UUIDs lowercase), written
    /// directly: fanout sends every push job through here, and Foundation's encoder was most of its CPU.
    /// A group's shared fields and payload are written once, then a short target per device.
    public func encodedJSON() -> Data {
        let payloadSize = jobs.first?.payload.utf8.count ?? 0
        var writer = JSONWriter(capacity: 64 + jobs.count * 160 + 2 * (payloadSize + 400))
        writer.beginObject()
        writer.key("groups")
        writer.beginArray()
        for range in groupRanges {
            let first = jobs[range.lowerBound]
            writer.beginObject()
            writer.key("appId"); writer.string(first.appId)
            writer.key("platform"); writer.string(first.platform.rawValue)
            writer.key("notificationId"); writer.uuid(first.notificationId)
            writer.key("sequence"); writer.integer(first.sequence)
            writer.key("kind"); writer.string(first.kind.rawValue)
            writer.key("isAlert"); writer.bool(first.isAlert)
            writer.key("priority"); writer.string(first.priority.rawValue)
            writer.key("expiration"); writer.timestamp(first.expiration)
            writer.key("collapseId"); writer.string(first.collapseId)
            writer.key("payload"); writer.string(first.payload)
            writer.key("attempt"); writer.integer(Int64(first.attempt))
            writer.key("targets")
            writer.beginArray()
            for job in jobs[range] {
                writer.beginObject()
                writer.key("pushId"); writer.uuid(job.pushId)
                writer.key("subscriptionId"); writer.uuid(job.subscriptionId)
                writer.key("deviceToken"); writer.string(job.deviceToken)
                if let keys = job.keys {
                    writer.key("keys")
                    writer.beginObject()
                    writer.key("p256dh"); writer.string(keys.p256dh)
                    writer.key("auth"); writer.string(keys.auth)
                    writer.endObject()
                }
                writer.endObject()
            }
            writer.endArray()
            writer.endObject()
        }
        writer.endArray()
        writer.endObject()
        return Data(writer.bytes)
    }
}
