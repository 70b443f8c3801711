import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NotifyAMQP
import NotifyModels
import NotifyStore
import NotifyStoreTesting
import Testing

@testable import IngestCore

/// Apps' broker users (`POST /v1/apps` with `brokerAccess`, `POST /v1/apps/{appId}/broker-credentials`), in-process:
/// storage's part (creating the user in RabbitMQ from the password's hash) played by `MemoryStorage`.
@Suite struct BrokerCredentialRouteTests {
    private static let path = "/v1/apps/\(RouteTesting.appId)/broker-credentials"

    /// The broker users storage was told to put, in order.
    private static func brokerUsers(_ testing: RouteTesting) -> [BrokerUserRecord] {
        testing.published.commands.compactMap { command in
            if case .putBrokerUser(let record) = command.action { record } else { nil }
        }
    }

    /// Whether `hash` is RabbitMQ's hash of `password` (`BrokerPasswordHash`: its salt is the first four bytes).
    private static func isHash(_ hash: String?, of password: String) -> Bool {
        guard let hash, let bytes = Data(base64Encoded: hash), bytes.count > 4 else { return false }
        return BrokerPasswordHash.sha256(of: password, salt: Array(bytes.prefix(4))) == hash
    }

    @Test("the operator rotates an app's broker credentials: 201 with a new user, its password and where to publish, once; the current user retires after the overlap; storage is sent the password's hash, never the password")
    func rotation() async throws {
        let testing = RouteTesting()
        try await testing.run { client in
            let started = Date()
            let response = try await client.execute(
                uri: Self.path, method: .post, headers: RouteTesting.operatorHeaders, body: ByteBuffer(string: #"{"overlapSeconds":60}"#))
            let answered = Date()
            #expect(response.status == .created)
            let rotated = try RouteTesting.decode(RotatedBrokerCredentials.self, response)
            let broker = rotated.broker
            #expect(broker.user.hasPrefix("\(RouteTesting.appId).") && broker.user.count == RouteTesting.appId.count + 9)
            #expect(broker.password.count >= 32)
            #expect((broker.host, broker.port, broker.virtualHost) == ("127.0.0.1", 5672, "notify"))
            #expect(broker.url == "amqp://\(broker.user):\(broker.password)@127.0.0.1:5672/notify")
            #expect((broker.exchange, broker.routingKey, broker.replyQueuePrefix) == (QueueNames.ingestExchange, RouteTesting.appId, "\(broker.user).reply."))
            // The current user retires after the overlap; the one whose overlap already ended is not listed.
            #expect(rotated.retiring.map(\.user) == [FixedApp.brokerUser])
            let retiresAt = try #require(rotated.retiring.first?.retiresAt)
            // 60 s after the rotation, which happened while the request was served.
            #expect(retiresAt.timeIntervalSince(started) >= 59 && retiresAt.timeIntervalSince(answered) <= 61)

            let records = Self.brokerUsers(testing)
            #expect(records.map(\.user) == [broker.user, FixedApp.brokerUser])
            #expect(Self.isHash(records.first?.passwordHash, of: broker.password))
            #expect(records.last.map { abs($0.retiresAt?.timeIntervalSince(retiresAt) ?? 99) < 1 && $0.passwordHash == nil } == true)
            #expect(try await testing.storage.apps.isProvisioned(brokerUser: broker.user))
            let sent = testing.published.all.map { String(decoding: $0.body, as: UTF8.self) }
            #expect(!sent.contains { $0.contains(broker.password) }, "the password is in a message to storage")

            // Without a body, the current users retire after NOTIFY_BROKER_USER_OVERLAP_SECONDS (a day here).
            let again = try RouteTesting.decode(
                RotatedBrokerCredentials.self, try await client.execute(uri: Self.path, method: .post, headers: RouteTesting.operatorHeaders))
            #expect(again.broker.user != broker.user && again.broker.password != broker.password)
            #expect(!again.retiring.isEmpty && again.retiring.allSatisfy { abs($0.retiresAt.timeIntervalSinceNow - 86_400) < 5 })
        }
    }

    @Test("an app created with brokerAccess is answered its broker user with the keys; a rotation retires that user, and the app lists both until then")
    func createdAppsUser() async throws {
        let testing = RouteTesting()
        try await testing.run { client in
            let created = try await client.execute(
                uri: "/v1/apps", method: .post, headers: RouteTesting.operatorHeaders, body: ByteBuffer(string: #"{"name":"Shop","brokerAccess":true}"#))
            #expect(created.status == .created)
            let app = try RouteTesting.decode(CreatedApp.self, created)
            let first = try #require(app.broker)
            #expect(first.routingKey == app.appId && first.user.hasPrefix("\(app.appId)."))
            #expect(Self.isHash(Self.brokerUsers(testing).first?.passwordHash, of: first.password))

            let rotated = try await client.execute(
                uri: "/v1/apps/\(app.appId)/broker-credentials", method: .post, headers: RouteTesting.operatorHeaders,
                body: ByteBuffer(string: #"{"overlapSeconds":60}"#))
            #expect(rotated.status == .created)
            let second = try RouteTesting.decode(RotatedBrokerCredentials.self, rotated)
            #expect(second.retiring.map(\.user) == [first.user])
            let shown = try RouteTesting.decode(
                AppView.self, try await client.execute(uri: "/v1/apps/\(app.appId)", method: .get, headers: RouteTesting.operatorHeaders))
            #expect(shown.brokerUsers.map(\.user).sorted() == [first.user, second.broker.user].sorted())
            #expect(shown.brokerUsers.first { $0.user == second.broker.user }?.retiresAt == nil)
            #expect(shown.brokerUsers.first { $0.user == first.user }?.retiresAt != nil)
        }
    }

    @Test("only the operator rotates broker credentials (an API key or none: 401 naming Authorization), of an app that exists (404 naming appId), with an overlap of 0 to 30 days (400 naming overlapSeconds); nothing is sent to storage")
    func refusals() async throws {
        let testing = RouteTesting()
        try await testing.run { client in
            for headers in [HTTPFields(), RouteTesting.apiKeyHeaders, [.authorization: "Bearer admin-key"]] {
                let response = try await client.execute(uri: Self.path, method: .post, headers: headers)
                #expect(response.status == .unauthorized)
                #expect(try ErrorBody(response).error.field == "Authorization")
            }
            let unknown = try await client.execute(uri: "/v1/apps/no_such_app/broker-credentials", method: .post, headers: RouteTesting.operatorHeaders)
            #expect(unknown.status == .notFound)
            #expect(try ErrorBody(unknown).error.code == "app_not_found" && ErrorBody(unknown).error.field == "appId")
            for body in [#"{"overlapSeconds":-1}"#, #"{"overlapSeconds":2592001}"#, #"{"overlapSeconds":"a day"}"#, #"{"overlapSeconds":1.5}"#] {
                let response = try await client.execute(uri: Self.path, method: .post, headers: RouteTesting.operatorHeaders, body: ByteBuffer(string: body))
                #expect(response.status == .badRequest, "\(body)")
                #expect(try ErrorBody(response).error.field == "overlapSeconds", "\(body)")
            }
        }
        #expect(testing.published.all.isEmpty)
    }
}
