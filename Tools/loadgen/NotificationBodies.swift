import Foundation
import NotifyJSON
import NotifyModels

/// The JSON loadgen publishes: notification `seq` goes to user `seq % users.count` as `loadgen-<seq>`, with a title
/// and body naming it; a request carries one notification object, or a `{"notifications":[...]}` batch.
struct NotificationBodies: Sendable {
    let users: [String]
    /// Notifications in the run, named in each body.
    let total: Int
    /// Whether requests carry batches (even a last one of a single notification).
    let batched: Bool

    func userIndex(ofSequence seq: Int) -> Int { seq % users.count }

    /// The id notify gives notification `seq` of app `appId` (its `appNotificationId` makes it deterministic).
    func notificationId(ofSequence seq: Int, appId: String) -> UUID {
        DeterministicID.notificationID(appId: appId, userId: users[userIndex(ofSequence: seq)], appNotificationId: "loadgen-\(seq)")
    }

    /// The body of the request carrying notifications `first..<first + count`.
    func body(first: Int, count: Int) -> [UInt8] {
        var writer = JSONWriter(capacity: 40 + count * 200)
        if batched {
            writer.beginObject()
            writer.key("notifications")
            writer.beginArray()
        }
        for seq in first..<first + count {
            writer.beginObject()
            writer.key("userId")
            writer.string(users[userIndex(ofSequence: seq)])
            writer.key("appNotificationId")
            writer.string("loadgen-\(seq)")
            writer.key("payload")
            writer.beginObject()
            writer.key("visualContent")
            writer.beginObject()
            writer.key("title")
            writer.string("loadgen #\(seq)")
            writer.key("body")
            writer.string("Load test notification \(seq) of \(total)")
            writer.endObject()
            writer.endObject()
            writer.endObject()
        }
        if batched {
            writer.endArray()
            writer.endObject()
        }
        return writer.bytes
    }
}
