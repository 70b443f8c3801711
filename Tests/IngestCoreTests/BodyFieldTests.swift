import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NotifyModels
import Testing

@testable import IngestCore

/// Every route that reads a JSON body answers a value of the wrong type, or a number that does not fit its field (a
/// fraction where an integer is expected, or one out of range), with 400 `invalid_field` naming the field's path, as
/// publish does; a body that is not JSON stays `invalid_json`.
@Suite struct BodyFieldTests {
    /// Who calls a route: the operator, the app server or a device.
    enum Caller: Sendable {
        case operatorToken, apiKey, user
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var method: HTTPRequest.Method
        var path: String
        var caller: Caller
        var body: String
        var field: String

        var testDescription: String { "\(method) \(path) \(body) names \(field)" }
    }

    private static let app = "/v1/apps/\(RouteTesting.appId)"
    private static let notification = "/v1/me/notifications/6b1f3a52-0c7e-4d8a-9b2e-5f4c3d2a1b09"

    @Test("a number of the wrong kind or range, or a value of the wrong type, is refused with 400 invalid_field naming its path", arguments: [
        Case(method: .put, path: "\(app)/poll-sources/feed", caller: .apiKey, body: #"{"url":"http://127.0.0.1:1/feed","intervalSeconds":1.5}"#, field: "intervalSeconds"),
        Case(method: .put, path: "\(app)/poll-sources/feed", caller: .apiKey, body: #"{"url":"http://127.0.0.1:1/feed","intervalSeconds":1e30}"#, field: "intervalSeconds"),
        Case(method: .put, path: "\(app)/poll-sources/feed", caller: .apiKey, body: #"{"url":"http://127.0.0.1:1/feed","intervalSeconds":"60"}"#, field: "intervalSeconds"),
        Case(method: .put, path: "\(externalBadgeApp)/users/alice/badge", caller: .apiKey, body: #"{"badge":1.5}"#, field: "badge"),
        Case(method: .put, path: "\(externalBadgeApp)/users/alice/badge", caller: .apiKey, body: #"{"badge":-99999999999999999999}"#, field: "badge"),
        Case(method: .patch, path: app, caller: .operatorToken, body: #"{"rateLimit":{"requestsPerSecond":2.5}}"#, field: "rateLimit.requestsPerSecond"),
        Case(method: .patch, path: app, caller: .operatorToken, body: #"{"rateLimit":{"notificationsPerSecond":true}}"#, field: "rateLimit.notificationsPerSecond"),
        Case(method: .post, path: "\(app)/client-signing-key", caller: .operatorToken, body: #"{"overlapSeconds":0.5}"#, field: "overlapSeconds"),
        Case(method: .post, path: "\(app)/api-key", caller: .operatorToken, body: #"{"overlapSeconds":1e19}"#, field: "overlapSeconds"),
        Case(method: .post, path: "/v1/apps", caller: .operatorToken, body: #"{"name":"x","brokerAccess":1}"#, field: "brokerAccess"),
        Case(method: .put, path: "\(app)/providers/apns", caller: .operatorToken, body: #"{"teamId":5}"#, field: "teamId"),
        Case(method: .post, path: "\(app)/event-sources", caller: .apiKey, body: #"{"name":"news","policy":3}"#, field: "policy"),
        Case(method: .put, path: "\(app)/webhook", caller: .apiKey, body: #"{"url":"http://127.0.0.1:1/hook","events":["subscription.created",7]}"#, field: "events[1]"),
        Case(method: .post, path: "/v1/me/subscriptions", caller: .user, body: #"{"platform":"apns","pushToken":5}"#, field: "pushToken"),
        Case(method: .post, path: "/v1/me/subscriptions", caller: .user, body: #"{"platform":"webpush","pushToken":"https://127.0.0.1:1/x","keys":{"p256dh":1.5}}"#, field: "keys.p256dh"),
        Case(method: .patch, path: notification, caller: .user, body: #"{"readState":2}"#, field: "readState"),
    ])
    func wrongValuesAreNamed(_ test: Case) async throws {
        let headers = try await Self.headers(test.caller)
        try await RouteTesting().run { client in
            let response = try await client.execute(uri: test.path, method: test.method, headers: headers, body: ByteBuffer(string: test.body))
            #expect(response.status == .badRequest, "\(String(buffer: response.body))")
            let error = try ErrorBody(response).error
            #expect(error.code == "invalid_field" && error.field == test.field, "\(error)")
            #expect(!error.message.contains("not valid JSON"), "\(error.message)")
        }
    }

    @Test("a body cut short or not JSON at all is still invalid_json, naming nothing")
    func brokenJSONIsNotAField() async throws {
        try await RouteTesting().run { client in
            for body in [#"{"url":"http://127.0.0.1:1/feed","intervalSeconds":1"#, "intervalSeconds=1"] {
                let response = try await client.execute(
                    uri: "\(Self.app)/poll-sources/feed", method: .put, headers: try await Self.headers(.apiKey), body: ByteBuffer(string: body))
                #expect(response.status == .badRequest)
                let error = try ErrorBody(response).error
                #expect(error.code == "invalid_json" && error.field == nil, "\(body): \(error)")
            }
        }
    }

    private static let externalBadgeApp = "/v1/apps/\(FixedApp.externalBadgeAppId)"

    private static func headers(_ caller: Caller) async throws -> HTTPFields {
        switch caller {
        case .operatorToken: [.authorization: "Bearer \(RouteTesting.adminToken)"]
        case .apiKey: [.authorization: "Bearer api-key"]
        case .user: [.authorization: "Bearer \(try await RouteTesting.userToken("alice"))"]
        }
    }
}
