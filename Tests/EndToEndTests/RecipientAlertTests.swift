import Foundation
import NotifyModels
import Testing

extension EndToEndTests {
    @Suite("each recipient's own alert text, and a push to the listed recipients only (Layer's per-recipient push)")
    struct RecipientAlertTests {
        @Test("a broadcast with pushRecipientsOnly: two listed members get their own title and body on APNs and FCM; an unlisted one has it in the feed, unpushed")
        func listedMembersGetTheirOwnText() async throws {
            let app = try await TestApp.create()
            try await app.storeFCMCredentials()
            let suffix = uniqueSuffix()
            let source = "room-\(suffix)"
            let (user1, user2, user3) = ("user1-\(suffix)", "user2-\(suffix)", "user3-\(suffix)")
            let user1Phone = randomHex(bytes: 32), user2Phone = randomHex(bytes: 32), user3Phone = randomHex(bytes: 32)
            let user2Android = "e2e:\(randomHex(bytes: 24))"
            try await app.openEventSource(source, members: [
                MemberDevice(userId: user1, pushToken: user1Phone), MemberDevice(userId: user2, pushToken: user2Phone),
                MemberDevice(userId: user2, platform: .fcm, pushToken: user2Android), MemberDevice(userId: user3, pushToken: user3Phone),
            ])

            let id = try await app.publishAccepted(NotificationRequest(
                eventSource: source, payload: NotificationPayload(visualContent: VisualContent(title: "New message", body: "in the room")),
                push: PushOptions(sound: "chime.caf"),
                recipients: [
                    Recipient(userId: user1, push: PushOptions(title: "hey user1", body: "alert")),
                    Recipient(userId: user2, push: PushOptions(title: "hey user2", body: "alert for 2")),
                ],
                pushRecipientsOnly: true))

            let user1Push = try #require(try await Sandbox.waitForDeliveries(to: user1Phone) { !$0.isEmpty }.first, "user1 was not pushed")
            #expect(user1Push.payload["aps"]?["alert"] == .object(["title": .string("hey user1"), "body": .string("alert")]), "\(user1Push.payload)")
            #expect(user1Push.payload["aps"]?["sound"]?.stringValue == "chime.caf" && user1Push.notificationId == id)
            let user2Push = try #require(try await Sandbox.waitForDeliveries(to: user2Phone) { !$0.isEmpty }.first, "user2's phone was not pushed")
            #expect(user2Push.payload["aps"]?["alert"] == .object(["title": .string("hey user2"), "body": .string("alert for 2")]))
            let android = try #require(try await ProviderSandbox.waitForDeliveries("fcm", to: user2Android).first, "user2's Android was not pushed")
            #expect(android.payload["notification"]?["title"]?.stringValue == "hey user2", "\(android.payload)")
            #expect(android.payload["notification"]?["body"]?.stringValue == "alert for 2")

            // user3 has the broadcast in the feed, as published, and got no push.
            let changes = try await app.user(user3).waitForChanges(after: nil) { !$0.isEmpty }
            #expect(changes.map { $0.notification.id.uuidString.lowercased() } == [id])
            #expect(changes.first?.notification.payload?.visualContent == VisualContent(title: "New message", body: "in the room"))
            #expect(try await deliveriesAfterQuietPeriod("apns", to: user3Phone, duration: .seconds(1)).isEmpty, "user3 was pushed")
            // The listed members' feeds show the broadcast's own text too: the recipient's text is the push's only.
            let user1Changes = try await app.user(user1).waitForChanges(after: nil) { !$0.isEmpty }
            #expect(user1Changes.first?.notification.payload?.visualContent?.title == "New message")
        }

        @Test("recipients with pushRecipientsOnly: each with a push of its own gets its text (raw content made an alert), one without has its copy unpushed")
        func recipientsWithoutOwnPushAreNotPushed() async throws {
            let app = try await TestApp.create()
            let suffix = uniqueSuffix()
            let (user1, user2) = ("user1-\(suffix)", "user2-\(suffix)")
            let tokens = [user1: try await app.registerDevice(of: user1), user2: try await app.registerDevice(of: user2)]
            let answer = try await app.publish(NotificationRequest(
                payload: NotificationPayload(rawContent: #"{"conversation":"7"}"#),
                recipients: [Recipient(userId: user1, push: PushOptions(title: "hey user1", body: "alert")), Recipient(userId: user2)],
                pushRecipientsOnly: true))
            #expect(answer.status == 202, "\(answer.text)")

            // Raw content with an alert to show reaches iOS as a shoulder tap first, the alert following unless the device syncs.
            let user1Pushes = try await Sandbox.waitForDeliveries(to: tokens[user1]!) { $0.contains { $0.payload["aps"]?["alert"] != nil } }
            let user1Push = try #require(user1Pushes.first { $0.payload["aps"]?["alert"] != nil }, "user1 got no alert: \(user1Pushes.map(\.payload))")
            #expect(user1Push.payload["aps"]?["alert"] == .object(["title": .string("hey user1"), "body": .string("alert")]), "\(user1Push.payload)")
            #expect(user1Push.headers["apns-push-type"] == "alert")
            #expect(try await app.user(user2).waitForChanges(after: nil) { !$0.isEmpty }.count == 1, "user2's copy is in the feed")
            #expect(try await deliveriesAfterQuietPeriod("apns", to: tokens[user2]!, duration: .seconds(1)).isEmpty, "user2 was pushed")

            // Without recipients the field means nothing: refused, naming it.
            var alone = NotificationRequest.alert(to: user1)
            alone.pushRecipientsOnly = true
            expectAPIError(try await app.publish(alone), status: 400, code: "invalid_field", field: "pushRecipientsOnly", "without recipients")
        }
    }
}
