import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NotifyModels
import NotifyTestSupport
import Testing

@testable import IngestCore

/// Microsoft Graph's create notification (`POST /v1/apps/{appId}/graph/users/{userId}/notifications`), in-process:
/// Graph's documented bodies published as notify's own publish is, answered 201 with Graph's resource, and every
/// refusal naming Graph's field with nothing sent to storage.
@Suite struct GraphNotificationRouteTests {
    private static let path = "/v1/apps/\(RouteTesting.appId)/graph/users/alice/notifications"

    /// The resource Graph answers, as these tests read it.
    struct Resource: Decodable, Equatable {
        struct Policy: Decodable, Equatable { var platformTypes: [String] }
        var odataType: String
        var id: String
        var targetHostName: String?
        var appNotificationId: String?
        var groupName: String?
        var targetPolicy: Policy?
        var payload: NotificationPayload
        var displayTimeToLive: Int?
        var expirationDateTime: Date
        var priority: String

        enum CodingKeys: String, CodingKey {
            case odataType = "@odata.type"
            case id, targetHostName, appNotificationId, groupName, targetPolicy, payload, displayTimeToLive, expirationDateTime, priority
        }
    }

    @Test("Graph's visual example: 201 with Graph's resource (the id notify gave it, the fields echoed), published to the user as notify's publish is")
    func visualExampleIsCreated() async throws {
        let testing = RouteTesting()
        let expiration = GraphNotificationExamples.expiration()
        try await testing.run { client in
            let response = try await client.execute(
                uri: Self.path, method: .post, headers: RouteTesting.apiKeyHeaders, body: ByteBuffer(string: GraphNotificationExamples.visual(expiring: expiration)))
            #expect(response.status == .created, "\(String(buffer: response.body))")
            let resource = try RouteTesting.decode(Resource.self, response)
            let id = DeterministicID.notificationID(appId: RouteTesting.appId, userId: "alice", appNotificationId: "testDirectToastNotification")
            #expect(resource == Resource(
                odataType: "#microsoft.graph.notification", id: id.uuidString.lowercased(), targetHostName: "graphnotifications.sample.windows.com",
                appNotificationId: "testDirectToastNotification", groupName: "TestGroup", targetPolicy: .init(platformTypes: ["windows", "ios", "android"]),
                payload: NotificationPayload(visualContent: VisualContent(title: "Hello World!", body: "Notifications are Great!")),
                displayTimeToLive: 60, expirationDateTime: expiration, priority: "High"))
            #expect(String(buffer: response.body).contains(#""displayTimeToLive":60"#), "a number, as Graph echoes it")
        }
        guard case .publishNotification(let published) = testing.published.commands.last?.action else {
            Issue.record("no notification was sent to storage")
            return
        }
        #expect(published.appId == RouteTesting.appId && published.userId == "alice")
        #expect(published.pushSubscriptionIds == nil, "every device of the user")
        #expect(published.content == NotificationContent(
            appNotificationId: "testDirectToastNotification", groupName: "TestGroup", priority: .high, expirationDateTime: expiration,
            displayTimeToLive: 60, platformTypes: [.wns, .apns, .fcm],
            payload: NotificationPayload(visualContent: VisualContent(title: "Hello World!", body: "Notifications are Great!")), push: nil))
    }

    @Test("Graph's raw example: 201 with the raw content, Windows only, and notify's default expiration echoed")
    func rawExampleIsCreated() async throws {
        let testing = RouteTesting()
        try await testing.run { client in
            let response = try await client.execute(uri: Self.path, method: .post, headers: RouteTesting.apiKeyHeaders, body: ByteBuffer(string: GraphNotificationExamples.raw))
            #expect(response.status == .created, "\(String(buffer: response.body))")
            let resource = try RouteTesting.decode(Resource.self, response)
            #expect(resource.payload == NotificationPayload(rawContent: "Aren't Notifications the best??!!"))
            #expect(resource.targetPolicy == Resource.Policy(platformTypes: ["windows"]))
            #expect(resource.priority == "High" && resource.groupName == nil)
            #expect(abs(resource.expirationDateTime.timeIntervalSinceNow - 30 * 86_400) < 60, "notify's default lifetime, 30 days as Graph's most")
        }
        guard case .publishNotification(let published) = testing.published.commands.last?.action else {
            Issue.record("no notification was sent to storage")
            return
        }
        #expect(published.content.platformTypes == [.wns])
        #expect(published.content.payload.rawContent == "Aren't Notifications the best??!!")
    }

    @Test("priorities and platform types in any case; Low and None are notify's low and none, echoed in Graph's case; webpush is Web Push; OData annotations pass")
    func priorityAndPlatformMapping() async throws {
        let testing = RouteTesting()
        try await testing.run { client in
            for (priority, expected, echoed) in [("low", NotificationPriority.low, "Low"), ("NONE", .none, "None")] {
                let body = ##"{"@odata.type":"#microsoft.graph.notification","priority":"\##(priority)","targetPolicy":{"platformTypes":["WebPush","iOS"]},"payload":{"rawContent":"x"}}"##
                let response = try await client.execute(uri: Self.path, method: .post, headers: RouteTesting.apiKeyHeaders, body: ByteBuffer(string: body))
                #expect(response.status == .created, "\(String(buffer: response.body))")
                #expect(try RouteTesting.decode(Resource.self, response).priority == echoed)
                guard case .publishNotification(let published) = testing.published.commands.last?.action else {
                    Issue.record("no notification was sent to storage")
                    return
                }
                #expect(published.content.priority == expected)
                #expect(published.content.platformTypes == [.webpush, .apns])
            }
        }
    }

    @Test("a body Graph's resource would not take is a 400 naming Graph's field, and nothing is sent to storage", arguments: [
        (#"{"priority":"Urgent","payload":{"rawContent":"x"}}"#, "priority"),
        (#"{"targetPolicy":{"platformTypes":["windows","blackberry"]},"payload":{"rawContent":"x"}}"#, "targetPolicy.platformTypes[1]"),
        (#"{"targetPolicy":{"platformTypes":[]},"payload":{"rawContent":"x"}}"#, "targetPolicy.platformTypes"),
        (#"{"targetPolicy":{"platformTypes":"windows"},"payload":{"rawContent":"x"}}"#, "targetPolicy.platformTypes"),
        (#"{"targetPolicy":{"endpoints":["windows"]},"payload":{"rawContent":"x"}}"#, "targetPolicy.endpoints"),
        (#"{"displayTimeToLive":"sixty","payload":{"rawContent":"x"}}"#, "displayTimeToLive"),
        (#"{"displayTimeToLive":1.5,"payload":{"rawContent":"x"}}"#, "displayTimeToLive"),
        (#"{"displayTimeToLive":0,"payload":{"rawContent":"x"}}"#, "displayTimeToLive"),
        (#"{"expirationDateTime":"2019-10-30T23:59:00.000Z","payload":{"rawContent":"x"}}"#, "expirationDateTime"),
        (#"{"expirationDateTime":"tomorrow","payload":{"rawContent":"x"}}"#, "expirationDateTime"),
        (#"{"fallbackPolicy":{"platformTypes":["ios"],"fallbackDelayInSeconds":60},"payload":{"rawContent":"x"}}"#, "fallbackPolicy"),
        (#"{"userId":"bob","payload":{"rawContent":"x"}}"#, "userId"),
        (#"{"payload":{"visualContent":{"title":"Hi","subtitle":"There"}}}"#, "payload.visualContent.subtitle"),
        (#"{"payload":{"visualContent":{"title":7}}}"#, "payload.visualContent.title"),
        (#"{"payload":{"visualContent":{}}}"#, "payload.visualContent"),
        (#"{"targetHostName":"","payload":{"rawContent":"x"}}"#, "targetHostName"),
        (#"{"appNotificationId":"","payload":{"rawContent":"x"}}"#, "appNotificationId"),
        (#"{"targetHostName":"contoso.com"}"#, "payload"),
    ])
    func refusalsNameGraphsField(body: String, field: String) async throws {
        let testing = RouteTesting()
        try await testing.run { client in
            let response = try await client.execute(uri: Self.path, method: .post, headers: RouteTesting.apiKeyHeaders, body: ByteBuffer(string: body))
            #expect(response.status == .badRequest, "\(String(buffer: response.body))")
            #expect(try ErrorBody(response).error.field == field)
        }
        #expect(testing.published.all.isEmpty)
    }

    @Test("an array (Graph takes one notification) or a body that is not JSON is a 400 invalid_json; If-Modified-Since and If-Range are refused naming the header")
    func bodyAndHeadersGraphRefuses() async throws {
        let testing = RouteTesting()
        try await testing.run { client in
            for body in [#"[{"payload":{"rawContent":"x"}}]"#, "{nope"] {
                let response = try await client.execute(uri: Self.path, method: .post, headers: RouteTesting.apiKeyHeaders, body: ByteBuffer(string: body))
                #expect(response.status == .badRequest)
                #expect(try ErrorBody(response).error.code == "invalid_json")
            }
            for header in [HTTPField.Name.ifModifiedSince, .ifRange] {
                var headers = RouteTesting.apiKeyHeaders
                headers[header] = "Wed, 21 Oct 2026 07:28:00 GMT"
                let response = try await client.execute(uri: Self.path, method: .post, headers: headers, body: ByteBuffer(string: GraphNotificationExamples.raw))
                #expect(response.status == .badRequest)
                #expect(try ErrorBody(response).error.field == header.rawName)
            }
        }
        #expect(testing.published.all.isEmpty)
    }

    @Test("authenticated as the app's publish: no key 401, a read-only key 403, another app 404 naming appId; a publish key creates")
    func authenticatedAsTheApp() async throws {
        let testing = RouteTesting()
        try await testing.run { client in
            let body = ByteBuffer(string: GraphNotificationExamples.raw)
            #expect(try await client.execute(uri: Self.path, method: .post, body: body).status == .unauthorized)
            let reader = try await client.execute(uri: Self.path, method: .post, headers: [.authorization: "Bearer read-key"], body: body)
            #expect(reader.status == .forbidden)
            let unknown = try await client.execute(
                uri: "/v1/apps/no_such_app/graph/users/alice/notifications", method: .post, headers: RouteTesting.apiKeyHeaders, body: body)
            #expect(unknown.status == .notFound)
            #expect(try ErrorBody(unknown).error.field == "appId")
            let publisher = try await client.execute(uri: Self.path, method: .post, headers: [.authorization: "Bearer publish-key"], body: body)
            #expect(publisher.status == .created)
        }
        #expect(testing.published.commands.count == 1)
    }

    @Test("the same appNotificationId through notify's publish names the same notification: one intake, one id")
    func sameIdAsNotifysPublish() async throws {
        let testing = RouteTesting()
        try await testing.run { client in
            let graph = try await client.execute(uri: Self.path, method: .post, headers: RouteTesting.apiKeyHeaders, body: ByteBuffer(string: GraphNotificationExamples.raw))
            let notify = try await client.execute(
                uri: "/v1/apps/\(RouteTesting.appId)/notifications", method: .post, headers: RouteTesting.apiKeyHeaders,
                body: ByteBuffer(string: #"{"userId":"alice","appNotificationId":"sampleRawNotification","payload":{"rawContent":"x"}}"#))
            let notifyId = try JSONDecoder().decode([String: String].self, from: Data(notify.body.readableBytesView))["id"]
            #expect(try RouteTesting.decode(Resource.self, graph).id == notifyId)
        }
    }
}
