import Foundation
import NotifyModels
import NotifyStore
import Testing

extension EndToEndTests {
    @Suite("event sources and targets")
    struct EventSourceTests {
        private func define(_ app: TestApp, _ name: String, policy: EventSourcePolicy) async throws -> HTTPAnswer {
            try await StackClient.send(
                .POST, "\(Stack.ingestURL)/v1/apps/\(app.appId)/event-sources", bearer: app.apiKey,
                json: StackClient.encode(EventSourceRequest(name: name, policy: policy, description: "\(name) for the tests")))
        }

        /// A device joining (PUT) or leaving (DELETE) a source with its user's token.
        private func device(
            _ method: StackClient.Method, _ app: TestApp, user: String, subscriptionId: String, source: String
        ) async throws -> HTTPAnswer {
            try await StackClient.send(
                method, "\(Stack.ingestURL)/v1/me/subscriptions/\(subscriptionId)/event-sources/\(source)", bearer: try await app.userToken(user))
        }

        /// The app server enrolling (PUT) or removing (DELETE) every device of a user.
        private func enrol(_ method: StackClient.Method, _ app: TestApp, user: String, source: String) async throws -> HTTPAnswer {
            try await StackClient.send(method, "\(Stack.ingestURL)/v1/apps/\(app.appId)/users/\(user)/event-sources/\(source)", bearer: app.apiKey)
        }

        private struct Listing: Decodable {
            struct Device: Decodable {
                var subscriptionId: String
                var eventSources: [String]
            }
            var subscriptions: [Device]
        }

        @Test("an app defines sources with a policy; devices join open ones themselves, the app server enrols them in appServer ones; both are listed")
        func sourcesAndMembership() async throws {
            let app = try await TestApp.create()
            #expect(try await define(app, "breaking-news", policy: .open).status == 201)
            #expect(try await define(app, "account-alerts", policy: .appServer).status == 201)
            #expect(try await define(app, "account-alerts", policy: .appServer).status == 200, "defining it again changes it")
            expectAPIError(try await define(app, "bad name!", policy: .open), status: 400, field: "name", "a name with a space")

            let user = "user-\(uniqueSuffix())"
            let phone = try await app.registerSubscribedDevice(of: user)
            let tablet = try await app.registerSubscribedDevice(of: user)
            #expect(try await device(.PUT, app, user: user, subscriptionId: phone.subscriptionId, source: "breaking-news").status == 204)
            #expect(try await device(.PUT, app, user: user, subscriptionId: tablet.subscriptionId, source: "breaking-news").status == 204)
            expectAPIError(
                try await device(.PUT, app, user: user, subscriptionId: phone.subscriptionId, source: "account-alerts"), status: 403, field: "eventSource",
                "a device joining an appServer source")
            expectAPIError(
                try await device(.PUT, app, user: user, subscriptionId: phone.subscriptionId, source: "no-such-source"), status: 404, field: "eventSource",
                "a device joining a source that does not exist")

            let enrolled = try await enrol(.PUT, app, user: user, source: "account-alerts")
            #expect(enrolled.status == 200)
            let membership = try enrolled.decode(EventSourceMembership.self)
            #expect(membership.subscribed && membership.subscriptionIds.count == 2)

            let listing = try await StackClient.send(.GET, "\(Stack.ingestURL)/v1/me/subscriptions", bearer: try await app.userToken(user)).decode(Listing.self)
            #expect(listing.subscriptions.map(\.eventSources) == [["account-alerts", "breaking-news"], ["account-alerts", "breaking-news"]])

            let asked = try await StackClient.send(
                .GET, "\(Stack.ingestURL)/v1/apps/\(app.appId)/users/\(user)/event-sources/breaking-news", bearer: app.apiKey)
            #expect(try asked.decode(EventSourceMembership.self).subscribed)
            let nobody = try await StackClient.send(
                .GET, "\(Stack.ingestURL)/v1/apps/\(app.appId)/users/nobody-\(uniqueSuffix())/event-sources/breaking-news", bearer: app.apiKey)
            #expect(try nobody.decode(EventSourceMembership.self).subscribed == false)

            struct Sources: Decodable { var eventSources: [EventSourceView] }
            let sources = try await StackClient.send(.GET, "\(Stack.ingestURL)/v1/apps/\(app.appId)/event-sources", bearer: app.apiKey).decode(Sources.self)
            #expect(sources.eventSources.map(\.name) == ["account-alerts", "breaking-news"])
            #expect(sources.eventSources.map(\.memberDevices) == [2, 2] && sources.eventSources.map(\.memberUsers) == [1, 1])
            #expect(sources.eventSources.map(\.policy) == [.appServer, .open])

            // A user may leave any source; the app server may take a user out.
            #expect(try await device(.DELETE, app, user: user, subscriptionId: tablet.subscriptionId, source: "account-alerts").status == 204)
            #expect(try await enrol(.DELETE, app, user: user, source: "breaking-news").status == 200)
            let after = try await StackClient.send(.GET, "\(Stack.ingestURL)/v1/me/subscriptions", bearer: try await app.userToken(user)).decode(Listing.self)
            #expect(after.subscriptions.map(\.eventSources) == [["account-alerts"], []])

            // Deleting a source removes its memberships; publishing to it is then a 404 naming the field.
            #expect(try await StackClient.send(.DELETE, "\(Stack.ingestURL)/v1/apps/\(app.appId)/event-sources/account-alerts", bearer: app.apiKey).status == 204)
            let gone = try await StackClient.send(.GET, "\(Stack.ingestURL)/v1/me/subscriptions", bearer: try await app.userToken(user)).decode(Listing.self)
            #expect(gone.subscriptions.map(\.eventSources) == [[], []])
            expectAPIError(
                try await app.publish(NotificationRequest(eventSource: "account-alerts", payload: NotificationPayload(rawContent: "x"))),
                status: 404, field: "eventSource", "publishing to a deleted source")
        }

        @Test("targets: one device by subscriptionId, a user's devices in a source, every member of a source; wrong ones are refused naming the field")
        func targets() async throws {
            let app = try await TestApp.create()
            let other = try await TestApp.create()
            #expect(try await define(app, "account-alerts", policy: .appServer).status == 201)
            #expect(try await define(app, "breaking-news", policy: .open).status == 201)
            let user = "user-\(uniqueSuffix())"
            let phone = try await app.registerSubscribedDevice(of: user)
            let tablet = try await app.registerSubscribedDevice(of: user)
            let enrolled = try await StackClient.send(
                .PUT, "\(Stack.ingestURL)/v1/apps/\(app.appId)/subscriptions/\(phone.subscriptionId)/event-sources/account-alerts", bearer: app.apiKey)
            #expect(enrolled.status == 200)

            // Exactly one device: the login code goes to the tablet only, and is in the user's feed.
            let code = try await app.publishAccepted(NotificationRequest(
                subscriptionId: tablet.subscriptionId, payload: NotificationPayload(visualContent: VisualContent(title: "Your code: 4711"))))
            #expect(try await Sandbox.missingNotifications([code], at: tablet.pushToken).isEmpty, "the named device got it")
            // Only the user's devices in the source: the phone.
            let alert = try await app.publishAccepted(NotificationRequest(
                userId: user, eventSource: "account-alerts", payload: NotificationPayload(visualContent: VisualContent(title: "Card used"))))
            #expect(try await Sandbox.missingNotifications([alert], at: phone.pushToken).isEmpty, "the member device got it")
            try await Task.sleep(for: .seconds(2))
            let phoneGot = try await Sandbox.deliveries(to: phone.pushToken).compactMap(\.notificationId)
            let tabletGot = try await Sandbox.deliveries(to: tablet.pushToken).compactMap(\.notificationId)
            #expect(!phoneGot.contains(code), "the other device was not pushed the one-device notification")
            #expect(!tabletGot.contains(alert), "a device outside the source was not pushed")
            let feed = try await StackClient.send(.GET, "\(Stack.ingestURL)/v1/me/notifications/\(code)", bearer: try await app.userToken(user))
            #expect(feed.status == 200, "a one-device notification is in the user's feed")

            // Refusals name the field.
            expectAPIError(
                try await app.publish(NotificationRequest(subscriptionId: UUID().uuidString, payload: NotificationPayload(rawContent: "x"))),
                status: 404, field: "subscriptionId", "an unknown subscription")
            let foreign = try await other.registerSubscribedDevice(of: user)
            expectAPIError(
                try await app.publish(NotificationRequest(subscriptionId: foreign.subscriptionId, payload: NotificationPayload(rawContent: "x"))),
                status: 404, field: "subscriptionId", "another app's subscription")
            expectAPIError(
                try await app.publish(NotificationRequest(userId: user, subscriptionId: phone.subscriptionId, payload: NotificationPayload(rawContent: "x"))),
                status: 400, field: "subscriptionId", "a subscriptionId with a userId")
            expectAPIError(
                try await app.publish(NotificationRequest(userId: user, eventSource: "no-such-source", payload: NotificationPayload(rawContent: "x"))),
                status: 404, field: "eventSource", "a user in an unknown source")
        }

        @Test("a user with devices but none in the source: userId with eventSource is a 404 not_subscribed naming eventSource, and nothing reaches the user's feed")
        func publishToANonMemberIsRefused() async throws {
            let app = try await TestApp.create()
            #expect(try await define(app, "account-alerts", policy: .appServer).status == 201)
            let stranger = "stranger-\(uniqueSuffix())"
            let phone = try await app.registerSubscribedDevice(of: stranger)
            expectAPIError(
                try await app.publish(NotificationRequest(
                    userId: stranger, eventSource: "account-alerts", payload: NotificationPayload(visualContent: VisualContent(title: "Card used")))),
                status: 404, code: "not_subscribed", field: "eventSource", "a user who is not a member")
            // A notification to the user directly, published after the refused one, is the only one in the feed.
            let direct = try await app.publishAccepted(.alert(to: stranger, title: "To the user"))
            #expect(try await Sandbox.missingNotifications([direct], at: phone.pushToken).isEmpty, "the direct notification did not arrive")
            let feed = try await StackClient.send(.GET, "\(Stack.ingestURL)/v1/me/notifications", bearer: try await app.userToken(stranger))
            #expect(try feed.decode(HistoryPage.self).notifications.map { $0.id.uuidString.lowercased() } == [direct], "\(feed.text)")
            #expect(try await Sandbox.deliveries(to: phone.pushToken).compactMap(\.notificationId) == [direct])
        }

        @Test("a device registering a new token in place of its old one keeps its event sources, and the old subscription goes")
        func newTokenKeepsMemberships() async throws {
            let app = try await TestApp.create()
            #expect(try await define(app, "breaking-news", policy: .open).status == 201)
            let user = "user-\(uniqueSuffix())"
            let old = try await app.registerSubscribedDevice(of: user)
            #expect(try await device(.PUT, app, user: user, subscriptionId: old.subscriptionId, source: "breaking-news").status == 204)
            let answer = try await app.registerDevice(
                SubscriptionRequest(platform: .apns, pushToken: randomHex(bytes: 32), replacesSubscriptionId: UUID(uuidString: old.subscriptionId)),
                token: try await app.userToken(user))
            #expect(answer.status == 201, "registering answered \(answer.status): \(answer.text)")
            let listing = try await StackClient.send(.GET, "\(Stack.ingestURL)/v1/me/subscriptions", bearer: try await app.userToken(user)).decode(Listing.self)
            #expect(listing.subscriptions.count == 1)
            #expect(listing.subscriptions.first?.subscriptionId != old.subscriptionId)
            #expect(listing.subscriptions.first?.eventSources == ["breaking-news"])
        }
    }
}
