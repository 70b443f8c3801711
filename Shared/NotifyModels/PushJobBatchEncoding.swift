import Foundation

extension PushJobBatch {
    /// The batch as wire JSON, the same document `WireCoding`'s encoder makes (UUIDs lowercase), written
    /// directly: fanout sends every push job through here, and Foundation's encoder was most of its CPU.
    /// The jobs of one change share their payload, so a payload is escaped once for all of them.
    public func encodedJSON() -> Data {
        var writer = JSONWriter(capacity: 96 + jobs.count * (400 + (jobs.first?.payload.utf8.count ?? 0)))
        var escapedPayload: (text: String, json: [UInt8])?
        writer.beginObject()
        writer.key("jobs")
        writer.beginArray()
        for job in jobs {
            writer.beginObject()
            writer.key("pushId"); writer.uuid(job.pushId)
            writer.key("appId"); writer.string(job.appId)
            writer.key("subscriptionId"); writer.uuid(job.subscriptionId)
            writer.key("platform"); writer.string(job.platform.rawValue)
            writer.key("deviceToken"); writer.string(job.deviceToken)
            writer.key("notificationId"); writer.uuid(job.notificationId)
            writer.key("sequence"); writer.integer(job.sequence)
            writer.key("kind"); writer.string(job.kind.rawValue)
            writer.key("isAlert"); writer.bool(job.isAlert)
            writer.key("priority"); writer.string(job.priority.rawValue)
            writer.key("expiration"); writer.timestamp(job.expiration)
            writer.key("collapseId"); writer.string(job.collapseId)
            writer.key("payload")
            if let escaped = escapedPayload, escaped.text == job.payload {
                writer.rawValue(escaped.json)
            } else {
                var single = JSONWriter(capacity: job.payload.utf8.count + 32)
                single.string(job.payload)
                escapedPayload = (job.payload, single.bytes)
                writer.rawValue(single.bytes)
            }
            writer.key("attempt"); writer.integer(Int64(job.attempt))
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
        return Data(writer.bytes)
    }
}
