import Foundation
import NotifyModels
import NotifyStore
import Testing

extension EndToEndTests {
    @Suite("a notification to several recipients, each with its own push options")
    struct RecipientTests {
        private struct Results: Decodable {
            struct Item: Decodable {
                var index: Int
                var status: Int
                var id: String?
            }
            var results: [Item]
        }

        @Test("each recipient's override reaches only its devices; silent is a background push, none no push; each copy syncs")
        func overridesReachOnlyTheirRecipient() async throws {
            let app = try await TestApp.create()
            let suffix = uniqueSuffix()
            let (ana, ben, cy) = ("ana-\(suffix)", "ben-\(suffix)", "cy-\(suffix)")
            let tokens = [ana: try await app.registerDevice(of: ana), ben: try await app.registerDevice(of: ben), cy: try await app.registerDevice(of: cy)]
            let request = NotificationRequest(
                payload: NotificationPayload(visualContent: VisualContent(title: "Sale", body: "Today only")),
                push: PushOptions(sound: "chime.caf", category: "SALE"),
                recipients: [
                    Recipient(userId: ana, push: PushOptions(sound: "bell.caf")),
                    Recipient(userId: ben, push: PushOptions(delivery: .silent)),
                    Recipient(userId: cy, push: PushOptions(delivery: PushDelivery.none)),
                ])
            let answer = try await app.publish(request)
            #expect(answer.status == 202, "\(answer.text)")
            let results = try answer.decode(Results.self).results
            #expect(results.map(\.status) == [202, 202, 202])
            let ids = results.compactMap(\.id)
            #expect(Set(ids).count == 3, "a copy per recipient")

            let anaPush = try #require(try await Sandbox.waitForDeliveries(to: tokens[ana]!) { !$0.isEmpty }.first)
            #expect(anaPush.payload["aps"]?["sound"]?.stringValue == "bell.caf" && anaPush.payload["aps"]?["category"]?.stringValue == "SALE")
            #expect(anaPush.payload["aps"]?["alert"]?["title"]?.stringValue == "Sale")
            let benPush = try #require(try await Sandbox.waitForDeliveries(to: tokens[ben]!) { !$0.isEmpty }.first)
            #expect(benPush.payload["aps"]?["alert"] == nil && benPush.payload["aps"]?["sound"] == nil, "\(benPush.payload)")
            #expect(benPush.headers["apns-push-type"] == "background")
            // cy's copy is stored and syncs, and nothing was pushed.
            let cyChanges = try await app.user(cy).waitForChanges(after: nil) { !$0.isEmpty }
            #expect(cyChanges.map { $0.notification.id.uuidString.lowercased() } == [ids[2]])
            #expect(try await deliveriesAfterQuietPeriod("apns", to: tokens[cy]!, duration: .seconds(1)).isEmpty, "cy was pushed")
        }

        @Test("a broadcast's members listed in recipients get their own push options, none of them no push; the others the broadcast's")
        func broadcastOverridesReachOnlyTheirMember() async throws {
            let app = try await TestApp.create()
            let suffix = uniqueSuffix()
            let source = "offers-\(suffix)"
            let (ana, ben, cy, dee) = ("ana-\(suffix)", "ben-\(suffix)", "cy-\(suffix)", "dee-\(suffix)")
            let tokens = Dictionary(uniqueKeysWithValues: [ana, ben, cy, dee].map { ($0, randomHex(bytes: 32)) })
            try await app.openEventSource(source, members: tokens.map { MemberDevice(userId: $0.key, pushToken: $0.value) })
            let request = NotificationRequest(
                eventSource: source, payload: NotificationPayload(visualContent: VisualContent(title: "Offer", body: "For members")),
                push: PushOptions(sound: "chime.caf", category: "OFFER", data: ["tier": .string("basic")]),
                recipients: [
                    Recipient(userId: ana, push: PushOptions(sound: "bell.caf", data: ["tier": .string("gold")])),
                    Recipient(userId: ben, push: PushOptions(delivery: .silent)),
                    Recipient(userId: cy, push: PushOptions(delivery: PushDelivery.none)),
                    // Not a member: listed, and nothing reaches them.
                    Recipient(userId: "stranger-\(suffix)", push: PushOptions(sound: "bell.caf")),
                ])
            let id = try await app.publishAccepted(request)

            let anaPush = try #require(try await Sandbox.waitForDeliveries(to: tokens[ana]!) { !$0.isEmpty }.first)
            #expect(anaPush.payload["aps"]?["sound"]?.stringValue == "bell.caf" && anaPush.payload["aps"]?["category"]?.stringValue == "OFFER")
            #expect(anaPush.payload["data"]?["tier"]?.stringValue == "gold", "\(anaPush.payload)")
            let deePush = try #require(try await Sandbox.waitForDeliveries(to: tokens[dee]!) { !$0.isEmpty }.first)
            #expect(deePush.payload["aps"]?["sound"]?.stringValue == "chime.caf" && deePush.payload["data"]?["tier"]?.stringValue == "basic")
            #expect(deePush.payload["aps"]?["alert"]?["title"]?.stringValue == "Offer")
            let benPush = try #require(try await Sandbox.waitForDeliveries(to: tokens[ben]!) { !$0.isEmpty }.first)
            #expect(benPush.payload["aps"]?["alert"] == nil && benPush.headers["apns-push-type"] == "background", "\(benPush.payload)")
            // cy is not pushed, and still has the broadcast in the feed.
            let cyChanges = try await app.user(cy).waitForChanges(after: nil) { !$0.isEmpty }
            #expect(cyChanges.map { $0.notification.id.uuidString.lowercased() } == [id])
            #expect(try await deliveriesAfterQuietPeriod("apns", to: tokens[cy]!, duration: .seconds(1)).isEmpty, "cy was pushed")
            // Stored with the broadcast: the members' options as each member's devices got them.
            let stored = try await Database.inspecting { try await $0.recipientPush(ofBroadcast: UUID(uuidString: id)!) }
            let options = try stored.map(JSONValue.parse)
            #expect(options?[ana]?["sound"]?.stringValue == "bell.caf" && options?[cy]?["delivery"]?.stringValue == "none", "\(stored ?? "none")")
        }

        @Test("recipients with a broadcast: a member named twice, or a member's options a provider would refuse, is a 400 naming the field")
        func broadcastOverridesAreChecked() async throws {
            let app = try await TestApp.create()
            let base = NotificationRequest(eventSource: "any-source", payload: NotificationPayload(visualContent: VisualContent(title: "Hi")))
            var twice = base
            twice.recipients = [Recipient(userId: "ana", push: PushOptions(sound: "a")), Recipient(userId: "ana")]
            expectAPIError(try await app.publish(twice), status: 400, code: "invalid_field", field: "recipients[1].userId", "a member named twice")
            var scripted = base
            scripted.recipients = [Recipient(userId: "ana"), Recipient(userId: "ben", push: PushOptions(url: "javascript:alert(1)"))]
            expectAPIError(try await app.publish(scripted), status: 400, code: "invalid_field", field: "recipients[1].push.url", "a script link")
            var withUser = base
            withUser.userId = "ana"
            withUser.recipients = [Recipient(userId: "ben")]
            expectAPIError(try await app.publish(withUser), status: 400, code: "invalid_field", field: "recipients", "userId with recipients")
        }
    }
}
