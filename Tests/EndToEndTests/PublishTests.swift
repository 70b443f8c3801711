import Foundation
import NotifyModels
import Testing

extension EndToEndTests {
    @Suite("publishing over HTTP")
    struct PublishTests {
        @Test("a publish reaches both of the user's APNs devices once, as an alert; another user's device gets nothing")
        func publishReachesEveryDeviceOfTheUser() async throws {
            let app = try await TestApp.create()
            let alice = "alice-\(uniqueSuffix())"
            let bob = "bob-\(uniqueSuffix())"
            let phone = try await app.registerDevice(of: alice)
            let tablet = try await app.registerDevice(of: alice)
            let bobsPhone = try await app.registerDevice(of: bob)

            let id = try await app.publishAccepted(.alert(to: alice, title: "Order shipped", body: "Your order is on its way"))

            for device in [phone, tablet] {
                let deliveries = try await Sandbox.waitForDeliveries(to: device) { !$0.isEmpty }
                let push = try #require(deliveries.first, "device \(device) received nothing within 20 s")
                #expect(push.headers["apns-push-type"] == "alert")
                #expect(push.headers["apns-priority"] == "10")
                #expect(push.headers["apns-topic"] == app.topic)
                #expect(push.headers["apns-collapse-id"] == id)
                #expect(push.headers["apns-id"].flatMap(UUID.init(uuidString:)) != nil, "apns-id is not a UUID: \(push.headers["apns-id"] ?? "missing")")
                #expect(push.headers["apns-expiration"].flatMap(Int.init) != nil, "apns-expiration is not numeric: \(push.headers["apns-expiration"] ?? "missing")")
                #expect(push.payload["aps"]?["alert"]?["title"]?.stringValue == "Order shipped")
                #expect(push.payload["aps"]?["alert"]?["body"]?.stringValue == "Your order is on its way")
                #expect(push.payload["aps"]?["badge"]?.numberValue == 1)
                #expect(push.payload["notify"]?["id"]?.stringValue == id)
                #expect(push.payload["notify"]?["seq"]?.numberValue == 1)
                #expect(push.payload["notify"]?["kind"]?.stringValue == "created")
            }
            // A second push to a device, or one to Bob, would have gone out with these; give it a moment to show.
            try await Task.sleep(for: .seconds(1))
            #expect(try await Sandbox.deliveries(to: phone).count == 1, "the phone got the notification more than once")
            #expect(try await Sandbox.deliveries(to: tablet).count == 1, "the tablet got the notification more than once")
            #expect(try await Sandbox.deliveries(to: bobsPhone).isEmpty, "another user's device received Alice's notification")
        }

        private struct Batch: Encodable {
            var notifications: [NotificationRequest]
        }

        private struct BatchResults: Decodable {
            struct Item: Decodable {
                var index: Int?
                var status: Int
                var id: String?
                var error: APIErrorBody.Detail?
            }

            var results: [Item]
        }

        @Test("a batch with a valid and an invalid notification answers per item and delivers only the valid one")
        func batchAnswersPerItem() async throws {
            let app = try await TestApp.create()
            let user = "user-\(uniqueSuffix())"
            let device = try await app.registerDevice(of: user)

            let answer = try await app.publish(Batch(notifications: [.alert(to: user, title: "valid"), NotificationRequest(userId: user)]))

            #expect(answer.status == 202, "\(answer.text)")
            let results = try answer.decode(BatchResults.self).results
            try #require(results.count == 2, "expected two results: \(answer.text)")
            #expect(results[0].index == 0)
            #expect(results[0].status == 202)
            let id = try #require(results[0].id, "the valid item has no id: \(answer.text)").lowercased()
            #expect(results[1].index == 1)
            #expect(results[1].status == 400)
            #expect(results[1].id == nil)
            #expect(results[1].error?.field == "notifications[1].payload", "\(answer.text)")

            let missing = try await Sandbox.missingNotifications([id], at: device)
            #expect(missing.isEmpty, "the valid notification did not arrive within 20 s")
            try await Task.sleep(for: .seconds(1))
            let deliveries = try await Sandbox.deliveries(to: device)
            #expect(deliveries.map(\.notificationId) == [id], "the device should have received the valid notification only, once")
        }

        @Test("200 single publishes sent at once (ingest puts them together into shared messages) each reach their user's device once, in sequence")
        func concurrentSinglePublishesAllArrive() async throws {
            let app = try await TestApp.create()
            let users = (0..<10).map { "burst-\($0)-\(uniqueSuffix())" }
            var devices: [String] = []
            for user in users { devices.append(try await app.registerDevice(of: user)) }

            let ids = try await withThrowingTaskGroup(of: (Int, String).self) { group in
                for index in 0..<200 {
                    group.addTask { (index % users.count, try await app.publishAccepted(.alert(to: users[index % users.count], title: "burst \(index)"))) }
                }
                var ids = [Set<String>](repeating: [], count: users.count)
                for try await (user, id) in group { ids[user].insert(id) }
                return ids
            }

            for (user, device) in devices.enumerated() {
                let missing = try await Sandbox.missingNotifications(ids[user], at: device)
                #expect(missing.isEmpty, "\(missing.count) of 20 accepted notifications did not reach \(device) within 20 s")
            }
            try await Task.sleep(for: .seconds(1))
            for (user, device) in devices.enumerated() {
                let pushes = try await Sandbox.deliveries(to: device)
                let sequences = pushes.compactMap { $0.payload["notify"]?["seq"]?.numberValue }.sorted()
                #expect(pushes.count == ids[user].count, "\(device) got \(pushes.count) pushes for \(ids[user].count) notifications")
                #expect(sequences == (1...20).map(Double.init), "\(device)'s change sequences are \(sequences), not 1 to 20")
            }
        }

        @Test("two apps with APNs keys of different teams, publishing at the same time, both reach their devices")
        func appsWithKeysOfDifferentTeams() async throws {
            async let first = TestApp.create()
            async let second = TestApp.create()
            let apps = try await [first, second]
            let user = "user-\(uniqueSuffix())"
            var devices: [String] = []
            for app in apps {
                devices.append(try await app.registerDevice(of: user))
            }

            async let firstId = apps[0].publishAccepted(.alert(to: user, title: "from the first app"))
            async let secondId = apps[1].publishAccepted(.alert(to: user, title: "from the second app"))
            let ids = try await [firstId, secondId]

            for (device, id) in zip(devices, ids) {
                let missing = try await Sandbox.missingNotifications([id], at: device)
                #expect(
                    missing.isEmpty,
                    """
                    a push signed with one of two apps' keys did not arrive within 20 s. If the sandbox's rejections for it \
                    (GET \(Stack.sandboxURL)/rejections?token=\(device)) say 429 TooManyProviderTokenUpdates, push-dispatch sent \
                    pushes signed with different keys over one APNs connection, whose provider token may change only every 20 minutes.
                    """)
            }
        }
    }
}
