import Foundation
import NotifyModels

/// Validates notifications from either edge (HTTP or AMQP), gives each its identity, and builds the
/// storage commands. The same rules and results apply whichever way a notification came in.
struct NotificationIntake: Sendable {
    let validator: NotificationValidator

    /// The result of one notification, as answered to the app server.
    struct ItemResult: Codable, Sendable {
        var index: Int?
        var status: Int
        var id: UUID?
        var error: APIErrorBody.Detail?
    }

    /// Accepted commands and the answer of every item, in order.
    struct Outcome: Sendable {
        var commands: [StorageCommand] = []
        var results: [ItemResult] = []
        var acceptedCount: Int { commands.count }
    }

    /// - Parameter idempotencyKey: when the source names its message (AMQP `message_id`), ids derive from it,
    ///   so a redelivered message produces the same commands and storage applies them once.
    func accept(_ items: [Result<NotificationRequest, ValidationError>], appId: String, idempotencyKey: String?, now: Date = Date()) -> Outcome {
        var outcome = Outcome()
        for (index, item) in items.enumerated() {
            let validated: NotificationValidator.Validated
            do {
                validated = try validator.validate(try item.get(), now: now)
            } catch {
                outcome.results.append(ItemResult(index: index, status: error.code == "payload_too_large" ? 413 : 400, id: nil, error: APIErrorBody(error).error))
                continue
            }
            let scope = validated.userId.map { "user:\($0)" } ?? "source:\(validated.eventSource ?? "")"
            let notificationId: UUID
            if let appNotificationId = validated.content.appNotificationId, let userId = validated.userId {
                notificationId = DeterministicID.notificationID(appId: appId, userId: userId, appNotificationId: appNotificationId)
            } else if let appNotificationId = validated.content.appNotificationId {
                notificationId = DeterministicID.make("notification", appId, scope, appNotificationId)
            } else if let idempotencyKey {
                notificationId = DeterministicID.make("notification", appId, idempotencyKey, String(index))
            } else {
                notificationId = UUID.random()
            }
            let commandId = idempotencyKey.map { DeterministicID.make("command", appId, $0, String(index)) } ?? UUID.random()
            let action: StorageCommand.Action
            if let userId = validated.userId {
                action = .publishNotification(PublishedNotification(
                    appId: appId, userId: userId, notificationId: notificationId, content: validated.content, receivedAt: now))
            } else {
                action = .publishBroadcast(PublishedBroadcast(
                    appId: appId, eventSource: validated.eventSource ?? "", notificationId: notificationId, content: validated.content, receivedAt: now))
            }
            outcome.commands.append(StorageCommand(commandId: commandId, issuedAt: now, action: action))
            outcome.results.append(ItemResult(index: index, status: 202, id: notificationId, error: nil))
        }
        return outcome
    }
}

/// A publish body: one notification, or `{"notifications": [...]}`.
enum PublishBody {
    static let maximumBatch = 500

    private struct Batch: Decodable {
        var notifications: [Failable<NotificationRequest>]
    }

    /// Whether the body is a batch, without decoding the values.
    private struct Probe: Decodable {
        private enum CodingKeys: String, CodingKey { case notifications }
        var isBatch: Bool

        init(from decoder: any Decoder) throws {
            // A body that is not an object is a single notification's problem, reported by its own decoding.
            isBatch = (try? decoder.container(keyedBy: CodingKeys.self).contains(.notifications)) ?? false
        }
    }

    /// The items and whether the body was a batch.
    static func decode(_ data: Data) throws(APIFailure) -> (items: [Result<NotificationRequest, ValidationError>], isBatch: Bool) {
        let probe = try JSONResponse.decode(Probe.self, from: data)
        if probe.isBatch {
            let batch = try JSONResponse.decode(Batch.self, from: data)
            if batch.notifications.isEmpty {
                throw APIFailure(.badRequest, code: "invalid_field", message: "notifications must not be empty", field: "notifications")
            }
            if batch.notifications.count > maximumBatch {
                throw APIFailure(.contentTooLarge, code: "batch_too_large", message: "a batch holds at most \(maximumBatch) notifications", field: "notifications")
            }
            return (batch.notifications.map(\.result), true)
        }
        let single = try JSONResponse.decode(Failable<NotificationRequest>.self, from: data)
        return ([single.result], false)
    }
}
