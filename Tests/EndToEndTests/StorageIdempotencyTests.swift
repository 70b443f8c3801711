import Foundation
import NotifyAMQP
import NotifyModels
import PostgresNIO
import Testing

extension EndToEndTests {
    @Suite("storage applies each command once")
    struct StorageIdempotencyTests {
        /// A command publishing a new notification to `userId`, with the notification's id.
        private func publishCommand(for app: TestApp, userId: String) -> (command: StorageCommand, notificationId: UUID) {
            let content = NotificationContent(
                appNotificationId: nil, groupName: nil, priority: .high, expirationDateTime: Date().addingTimeInterval(24 * 3600),
                displayTimeToLive: nil, platformTypes: nil,
                payload: NotificationPayload(visualContent: VisualContent(title: "stored once", body: "sent twice")), push: nil)
            let notificationId = UUID()
            let command = StorageCommand(commandId: UUID(), action: .publishNotification(PublishedNotification(
                appId: app.appId, userId: userId, notificationId: notificationId, content: content, receivedAt: Date())))
            return (command, notificationId)
        }

        private func message(_ command: StorageCommand) throws -> AMQPOutboundMessage {
            AMQPOutboundMessage(routingKey: QueueNames.storageCommands, body: try WireCoding.makeEncoder().encode(command))
        }

        @Test("the same storage command delivered twice is stored once and still reaches the device")
        func duplicateCommandIsAppliedOnce() async throws {
            let app = try await TestApp.create()
            let user = "user-\(uniqueSuffix())"
            let laterUser = "later-\(uniqueSuffix())"
            let device = try await app.registerDevice(of: user)
            let (command, notificationId) = publishCommand(for: app, userId: user)
            let later = publishCommand(for: app, userId: laterUser).command
            let id = notificationId.uuidString.lowercased()

            try await Broker.withPublisher(try Broker.configuration()) { publisher in
                try await publisher.publish(try message(command))
                #expect(try await Sandbox.missingNotifications([id], at: device).isEmpty, "the notification did not arrive within 20 s")
                // The duplicate, then a command storage applies only after it (one consumer, in order).
                try await publisher.publish(try message(command))
                try await publisher.publish(try message(later))
            }

            try await Database.withClient { client in
                let deadline = ContinuousClock.now + .seconds(20)
                while try await Database.integer(
                    "SELECT count(*) FROM notifications WHERE app_id = \(app.appId) AND user_id = \(laterUser)", on: client) == 0 {
                    guard ContinuousClock.now < deadline else { throw TestFailure("storage did not apply the command after the duplicate within 20 s") }
                    try await Task.sleep(for: .milliseconds(100))
                }
                let notifications = try await Database.integer(
                    "SELECT count(*) FROM notifications WHERE app_id = \(app.appId) AND user_id = \(user)", on: client)
                #expect(notifications == 1, "rows in notifications")
                let changes = try await Database.integer(
                    "SELECT count(*) FROM changes WHERE app_id = \(app.appId) AND user_id = \(user)", on: client)
                #expect(changes == 1, "rows in changes")
                let sequence = try await Database.integer(
                    "SELECT max(sequence) FROM changes WHERE app_id = \(app.appId) AND user_id = \(user)", on: client)
                #expect(sequence == 1, "the change's sequence")
            }
            let deliveries = try await Sandbox.deliveries(to: device)
            #expect(!deliveries.isEmpty && deliveries.allSatisfy { $0.notificationId == id && $0.payload["notify"]?["seq"]?.numberValue == 1 })
        }
    }
}
