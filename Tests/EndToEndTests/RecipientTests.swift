import Foundation
import NotifyModels
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
    }
}
