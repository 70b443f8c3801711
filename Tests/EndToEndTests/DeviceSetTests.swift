import Foundation
import NotifyModels
import PostgresNIO
import Testing

extension EndToEndTests {
    @Suite("a user's devices changing between notifications")
    struct DeviceSetTests {
        @Test("each publish reaches the devices the user has at that moment: one registered since the last is added, one removed is left out")
        func publishesFollowRegistrations() async throws {
            let app = try await TestApp.create()
            let user = "user-\(uniqueSuffix())"
            let phone = try await app.registerSubscribedDevice(of: user)

            let first = try await app.publishAccepted(.alert(to: user, title: "first"))
            #expect(try await Sandbox.missingNotifications([first], at: phone.pushToken).isEmpty, "the phone did not get the first notification")

            let tablet = try await app.registerDevice(of: user)
            let second = try await app.publishAccepted(.alert(to: user, title: "second"))
            for device in [phone.pushToken, tablet] {
                #expect(try await Sandbox.missingNotifications([second], at: device).isEmpty, "\(device) did not get the second notification")
            }

            let removed = try await StackClient.send(
                .DELETE, "\(Stack.ingestURL)/v1/me/subscriptions/\(phone.subscriptionId)", bearer: try await app.userToken(user))
            #expect(removed.status == 204, "\(removed.text)")
            let third = try await app.publishAccepted(.alert(to: user, title: "third"))
            #expect(try await Sandbox.missingNotifications([third], at: tablet).isEmpty, "the tablet did not get the third notification")
            // A push to the removed phone would have gone out with the tablet's; give it a moment to show.
            try await Task.sleep(for: .seconds(1))
            #expect(try await Sandbox.deliveries(to: phone.pushToken).map(\.notificationId) == [first, second])
            #expect(try await Sandbox.deliveries(to: tablet).map(\.notificationId) == [second, third])
        }

        /// Registering looks the push token up as ingest does (app, platform, token). An index scan is what a table
        /// of millions of subscriptions gets; this one is small, so sequential and bitmap scans are ruled out first.
        /// On a small table the planner picks the unique index anyway; on a big one, any other index led by app_id
        /// ties with it for an app the statistics do not know, and won (its tree is a level lower): so no other
        /// index may be led by app_id.
        @Test("registering finds a push token through its unique index, even in an app the planner's statistics do not know yet")
        func tokenLookupUsesTheTokenIndex() async throws {
            let newApp = "app-\(uniqueSuffix())"
            let plan = try await Database.withClient { client in
                try await client.withTransaction(logger: testLogger) { connection in
                    try await connection.query("SET LOCAL enable_seqscan = off", logger: testLogger)
                    try await connection.query("SET LOCAL enable_bitmapscan = off", logger: testLogger)
                    let rows = try await connection.query(
                        "EXPLAIN SELECT subscription_id FROM subscriptions WHERE app_id = \(newApp) AND platform = 'apns' AND push_token = 'ab01'",
                        logger: testLogger)
                    var lines: [String] = []
                    for try await line in rows.decode(String.self) { lines.append(line) }
                    return lines.joined(separator: "\n")
                }
            }
            #expect(plan.contains("Index Scan using subscriptions_app_id_platform_push_token_key"), "\(plan)")

            let ledByApp = try await Database.withClient { client in
                let rows = try await client.query(
                    """
                    SELECT i.relname FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
                    JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = x.indkey[0]
                    WHERE x.indrelid = 'subscriptions'::regclass AND a.attname = 'app_id' ORDER BY 1
                    """, logger: testLogger)
                var names: [String] = []
                for try await name in rows.decode(String.self) { names.append(name) }
                return names
            }
            #expect(ledByApp == ["subscriptions_app_id_platform_push_token_key"])
        }
    }
}
