import Foundation
import NotifyAMQP
import NotifyModels
import NotifyStore
import NotifyTestSupport
import NotifyWire
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

        private func message(_ command: StorageCommand) -> AMQPOutboundMessage {
            AMQPOutboundMessage(routingKey: QueueNames.storageCommands, wire: StorageCommandBatch(commands: [command]))
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

            try await withPublisher(try Broker.configuration(), logger: testLogger) { publisher in
                try await publisher.publish(message(command))
                #expect(try await Sandbox.missingNotifications([id], at: device).isEmpty, "the notification did not arrive within 20 s")
                // The duplicate, then a command storage applies only after it (one consumer, in order).
                try await publisher.publish(message(command))
                try await publisher.publish(message(later))
            }

            try await Database.inspecting { inspection in
                _ = try await Database.waitFor("the later user's notifications") {
                    try await inspection.notificationCount(appId: app.appId, userId: laterUser)
                } until: { $0 > 0 }
                let notifications = try await inspection.notificationCount(appId: app.appId, userId: user)
                #expect(notifications == 1, "rows in notifications")
                let changes = try await inspection.changeSequences(appId: app.appId, userId: user)
                #expect(changes.count == 1, "rows in changes")
                #expect(changes.max() == 1, "the change's sequence")
            }
            let deliveries = try await Sandbox.deliveries(to: device)
            #expect(!deliveries.isEmpty && deliveries.allSatisfy { $0.notificationId == id && $0.payload["notify"]?["seq"]?.numberValue == 1 })
        }
        @Test("a command in the JSON form written before the protobuf schema (schema version 1) is applied and reaches the device")
        func legacyJSONCommandIsApplied() async throws {
            let app = try await TestApp.create()
            let user = "user-\(uniqueSuffix())"
            let device = try await app.registerDevice(of: user)
            let (command, notificationId) = publishCommand(for: app, userId: user)
            try await withPublisher(try Broker.configuration(), logger: testLogger) { publisher in
                // What an ingest of the release before left in the queue: JSON, content type application/json.
                try await publisher.publish(AMQPOutboundMessage(
                    routingKey: QueueNames.storageCommands, body: try WireCoding.makeEncoder().encode(StorageCommandBatch(commands: [command]))))
            }
            #expect(try await Sandbox.missingNotifications([notificationId.lowercasedString], at: device).isEmpty, "the notification did not arrive within 20 s")
        }

        @Test("one message carrying a command twice and another: each is applied once")
        func commandTwiceInOneMessageIsAppliedOnce() async throws {
            let app = try await TestApp.create()
            let user = "user-\(uniqueSuffix())"
            let (command, _) = publishCommand(for: app, userId: user)
            let (other, _) = publishCommand(for: app, userId: user)
            try await withPublisher(try Broker.configuration(), logger: testLogger) { publisher in
                try await publisher.publish(AMQPOutboundMessage(
                    routingKey: QueueNames.storageCommands, wire: StorageCommandBatch(commands: [command, command, other])))
            }
            try await Database.inspecting { inspection in
                // The message is applied in one transaction: once any change is visible, all of them are.
                let changes = try await Database.waitFor("the user's changes") {
                    try await inspection.changeSequences(appId: app.appId, userId: user)
                } until: { !$0.isEmpty }
                #expect(changes.count == 2, "rows in changes")
                let notifications = try await inspection.notificationCount(appId: app.appId, userId: user)
                #expect(notifications == 2, "rows in notifications")
            }
        }

        @Test("a message carrying a command applied before and a new one: the new one is applied, the old one not again")
        func appliedCommandBesideANewOne() async throws {
            let app = try await TestApp.create()
            let user = "user-\(uniqueSuffix())"
            let device = try await app.registerDevice(of: user)
            let (first, _) = publishCommand(for: app, userId: user)
            let (second, secondId) = publishCommand(for: app, userId: user)
            try await withPublisher(try Broker.configuration(), logger: testLogger) { publisher in
                try await publisher.publish(message(first))
            }
            try await Database.inspecting { inspection in
                func changes() async throws -> [Int64] { try await inspection.changeSequences(appId: app.appId, userId: user) }
                _ = try await Database.waitFor("the user's changes") { try await changes() } until: { !$0.isEmpty }
                try await withPublisher(try Broker.configuration(), logger: testLogger) { publisher in
                    try await publisher.publish(StorageCommandBatch.messages(for: [first, second]))
                }
                let sequences = try await Database.waitFor("the user's changes") { try await changes() } until: { $0.count > 1 }
                #expect(sequences.max() == 2, "the user's last sequence: one per command, none for the repeat")
                let notifications = try await inspection.notificationCount(appId: app.appId, userId: user)
                #expect(notifications == 2, "rows in notifications")
                let recorded = try await inspection.appliedCommandCount(of: [first.commandId, second.commandId])
                #expect(recorded == 2, "rows in applied_commands")
            }
            let missing = try await Sandbox.missingNotifications([secondId.lowercasedString], at: device)
            #expect(missing.isEmpty, "the new notification did not reach the device within 20 s")
        }

        @Test("a command the database refuses: the rest of its message is applied, the message dead-lettered naming that command")
        func refusedCommandDeadLettersItsMessage() async throws {
            let app = try await TestApp.create()
            let user = "user-\(uniqueSuffix())"
            let (good, notificationId) = publishCommand(for: app, userId: user)
            // A subscription of an app that does not exist breaks the foreign key: the database refuses it.
            let refused = StorageCommand(action: .registerSubscription(DeviceSubscription(
                subscriptionId: UUID(), appId: "no-such-app-\(uniqueSuffix())", userId: user, platform: .apns,
                pushToken: String(repeating: "ab", count: 32), appPackage: nil, displayName: nil,
                expirationDateTime: Date().addingTimeInterval(3600), registeredAt: Date())))
            let reason = try await Broker.deadLetters(
                of: QueueNames.storageCommands,
                whilst: {
                    try await withPublisher(try Broker.configuration(), logger: testLogger) { publisher in
                        try await publisher.publish(StorageCommandBatch.messages(for: [good, refused]))
                    }
                },
                matching: { delivery in
                    try StorageCommandBatch(delivery).commands.filter { $0.commandId == refused.commandId }
                }
            ).first?.reason
            #expect(reason?.contains(refused.commandId.lowercasedString) == true, "x-notify-reason: \(reason ?? "none")")
            try await Database.withClient { client in
                let stored = try await PostgresNotificationStore(client: client, logger: testLogger).notification(appId: app.appId, id: notificationId, userId: user)
                #expect(stored != nil, "the other command of the message was applied")
            }
        }
}
}
