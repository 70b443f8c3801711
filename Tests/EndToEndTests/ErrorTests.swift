import Foundation
import NotifyModels
import Testing

extension EndToEndTests {
    @Suite("authentication and validation errors")
    struct ErrorTests {
        @Test("unknown apps, wrong API keys, forged or expired user tokens and a missing operator token are refused")
        func authenticationErrors() async throws {
            let app = try await TestApp.create()
            let user = "user-\(uniqueSuffix())"
            let notification = try StackClient.encode(NotificationRequest.alert(to: user))

            let unknownApp = try await StackClient.send(
                .POST, "\(Stack.ingestURL)/v1/apps/app_unknown\(uniqueSuffix())/notifications", bearer: app.apiKey, json: notification)
            expectAPIError(unknownApp, status: 404, code: "app_not_found", field: "appId", "publishing to an unknown app")

            let wrongKey = try await app.publish(NotificationRequest.alert(to: user), apiKey: "nk_not-this-apps-key")
            expectAPIError(wrongKey, status: 401, field: "Authorization", "publishing with a wrong API key")

            let device = SubscriptionRequest(platform: .apns, pushToken: randomHex(bytes: 32))
            let forged = try await UserToken.mint(userId: user, appId: app.appId, signingKey: "a key that is not the app's, as long as HS256 asks (32 bytes)")
            expectAPIError(
                try await app.registerDevice(device, token: forged), status: 401, field: "Authorization", "registering with a forged user token")
            let expired = try await UserToken.mint(userId: user, appId: app.appId, signingKey: app.clientSigningKey, lifetime: -3600)
            expectAPIError(
                try await app.registerDevice(device, token: expired), status: 401, field: "Authorization", "registering with an expired user token")

            let noOperator = try await StackClient.send(.POST, "\(Stack.ingestURL)/v1/apps", json: Data(#"{"name":"no operator"}"#.utf8))
            expectAPIError(noOperator, status: 401, field: "Authorization", "creating an app without the operator token")
        }

        @Test("a too distant expiration, a too large APNs payload and an invalid APNs token are refused, naming the field")
        func validationErrors() async throws {
            let app = try await TestApp.create()
            let user = "user-\(uniqueSuffix())"

            var distant = NotificationRequest.alert(to: user)
            distant.expirationDateTime = Date().addingTimeInterval(40 * 24 * 3600)
            expectAPIError(try await app.publish(distant), status: 400, field: "expirationDateTime", "expiring 40 days ahead")

            let large = NotificationRequest.alert(to: user, body: String(repeating: "x", count: 4200))
            expectAPIError(try await app.publish(large), status: 413, field: "payload", "an APNs payload over 4096 bytes")

            let badToken = SubscriptionRequest(platform: .apns, pushToken: "not-an-apns-token")
            expectAPIError(try await app.registerDevice(badToken, token: try await app.userToken(user)), status: 400, field: "pushToken", "an invalid APNs token")
        }

        @Test("publish bodies that are not JSON, or have a field of the wrong type or value, are refused naming the field; in a batch only that notification")
        func malformedPublishBodies() async throws {
            let app = try await TestApp.create()
            let user = "user-\(uniqueSuffix())"
            func publish(_ json: String) async throws -> HTTPAnswer {
                try await StackClient.send(.POST, "\(Stack.ingestURL)/v1/apps/\(app.appId)/notifications", bearer: app.apiKey, json: Data(json.utf8))
            }
            let title = #""payload":{"visualContent":{"title":"t"}}"#
            expectAPIError(try await publish(#"{"userId": "#), status: 400, code: "invalid_json", field: nil, "a body cut short")
            expectAPIError(try await publish(#"{"userId":5,"# + title + "}"), status: 400, code: "invalid_field", field: "userId", "a number as userId")
            expectAPIError(
                try await publish(#"{"userId":"\#(user)","priority":"urgent","# + title + "}"), status: 400, code: "invalid_field", field: "priority",
                "an unknown priority")
            expectAPIError(
                try await publish(#"{"userId":"\#(user)","payload":{"visualContent":{"title":7}}}"#), status: 400, code: "invalid_field",
                field: "payload.visualContent.title", "a number as the title")
            expectAPIError(try await publish(#"{"notifications":5}"#), status: 400, code: "invalid_field", field: "notifications", "notifications not an array")

            let batch = try await publish(
                #"{"notifications":[{"userId":"\#(user)","# + title + #"},{"userId":"\#(user)","displayTimeToLive":"long","# + title + "}]}")
            #expect(batch.status == 202, "\(batch.text)")
            let results = try #require(try JSONSerialization.jsonObject(with: batch.body) as? [String: Any])["results"] as? [[String: Any]]
            #expect(results?.map { $0["status"] as? Int } == [202, 400], "\(batch.text)")
            #expect((results?.last?["error"] as? [String: Any])?["field"] as? String == "notifications[1].displayTimeToLive", "\(batch.text)")
            let id = try #require(results?.first?["id"] as? String, "\(batch.text)")
            #expect(id == id.lowercased(), "ids are written as everywhere else in the API: \(id)")
        }

        @Test("a fraction where an integer is expected is refused naming the field on every kind of call, and so is a user named twice in recipients")
        func wrongNumbersAndRepeatedRecipientsAreNamed() async throws {
            let app = try await TestApp.create()
            let base = "\(Stack.ingestURL)/v1/apps/\(app.appId)"
            func send(_ method: StackClient.Method, _ url: String, bearer: String, _ json: String) async throws -> HTTPAnswer {
                try await StackClient.send(method, url, bearer: bearer, json: Data(json.utf8))
            }
            expectAPIError(
                try await send(.PUT, "\(base)/poll-sources/fractional", bearer: app.apiKey, #"{"url":"\#(Stack.sandboxURL)/feeds/none","intervalSeconds":1.5}"#),
                status: 400, code: "invalid_field", field: "intervalSeconds", "a poll source polled every 1.5 s")
            expectAPIError(
                try await send(.PATCH, base, bearer: Stack.adminToken, #"{"rateLimit":{"requestsPerSecond":10,"notificationsPerSecond":0.5}}"#),
                status: 400, code: "invalid_field", field: "rateLimit.notificationsPerSecond", "half a notification per second")
            let external = try await send(.PATCH, base, bearer: Stack.adminToken, #"{"badgeMode":"external"}"#)
            #expect(external.status == 200 || external.status == 202, "\(external.text)")
            expectAPIError(
                try await send(.PUT, "\(base)/users/alice/badge", bearer: app.apiKey, #"{"badge":1.5}"#),
                status: 400, code: "invalid_field", field: "badge", "a badge of 1.5")
            expectAPIError(
                try await send(.POST, "\(base)/client-signing-key", bearer: Stack.adminToken, #"{"overlapSeconds":1e30}"#),
                status: 400, code: "invalid_field", field: "overlapSeconds", "an overlap no integer holds")

            let user = "user-\(uniqueSuffix())"
            let twice = NotificationRequest(
                payload: NotificationPayload(visualContent: VisualContent(title: "Twice")),
                recipients: [Recipient(userId: user), Recipient(userId: "other-\(user)"), Recipient(userId: user)])
            expectAPIError(try await app.publish(twice), status: 400, code: "invalid_field", field: "recipients[2].userId", "a user named twice")
        }
    }
}
