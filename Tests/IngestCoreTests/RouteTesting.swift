import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import NotifyAMQP
import NotifyDatabase
import NotifyModels
import NotifyTestSupport
import Synchronization

@testable import IngestCore

/// Ingest's router, in-process, with an app directory held in memory and a publisher that records what it is given:
/// no broker, no database. Routes that read the database are not exercised here (the end-to-end tests do).
struct RouteTesting {
    static let adminToken = "operator-secret"
    static let appId = "app_test"
    static let clientSigningKey = "c2lnbmluZy1rZXktb2YtdGhlLXRlc3QtYXBw"
    static let keyring = try! SecretKeyring(parsing: SecretKeyring.generateEntry(id: "route-tests"))

    let published = RecordingPublisher()
    /// The identity provider documents ingest reads (none unless a test stores some).
    let documents = FixedDocuments()
    /// The backlog check publishes go through (off unless a test sets one).
    var backlog = PipelineBacklog(maximumDepth: 0)

    func run<Value>(_ test: @Sendable (any TestClientProtocol) async throws -> Value) async throws -> Value {
        let logger = Logger(label: "ingest-route-tests")
        let application = Application(router: buildRouter(try dependencies(logger: logger)), logger: logger)
        return try await application.test(.router, test)
    }

    /// Ingest's dependencies with the fixed app and targets, and a database client that is never run (so never
    /// connected: a route that queried it would wait, and none of these tests does).
    func dependencies(logger: Logger) throws -> IngestDependencies {
        let database = try DatabaseURL.makeClient("postgres://nobody:nothing@127.0.0.1:1/none", logger: logger)
        return IngestDependencies(
            adminToken: Self.adminToken, apps: AppDirectory(source: FixedApp()),
            sender: CommandSender(publisher: published, logger: logger), database: database,
            brokerAddress: .init(host: "127.0.0.1", port: 5672, virtualHost: "notify"), appliedCommands: AppliedCommandWatch(client: database, logger: logger), hub: LiveHub(),
            subscriptionLifetime: 86_400, healthChecks: ["amqp": { true }], logger: logger, keyring: Self.keyring, targets: FixedTargets(),
            backlog: backlog, identityKeys: IdentityProviderKeys(fetcher: documents, logger: logger))
    }

    static func userToken(_ userId: String, lifetime: TimeInterval = 3600) async throws -> String {
        try await UserToken.mint(userId: userId, appId: appId, signingKey: clientSigningKey, lifetime: lifetime)
    }
}

/// The app of these tests, known without a database: API key "api-key", scoped keys "publish-key", "read-key" and
/// "admin-key", broker users "app_test.current" and "app_test.retired" (whose overlap ended); and two more, the same
/// but for their `external` badge mode or their identity provider (`identityProvider`, whose documents a test stores
/// in `RouteTesting.documents`).
struct FixedApp: AppSource {
    static let brokerUser = "app_test.current"
    static let retiredBrokerUser = "app_test.retired"
    static let externalBadgeAppId = "app_external_badge"
    static let identityProviderAppId = "app_identity_provider"
    static let identityProvider = IdentityProvider(issuer: "https://idp.notify.test/tenant", audience: "notify-route-tests")

    func app(_ appId: String) async throws -> AppDirectory.App? {
        guard [RouteTesting.appId, Self.externalBadgeAppId, Self.identityProviderAppId].contains(appId) else { return nil }
        var app = await AppDirectory.App(
            appId: appId, apiKeyHash: AppDirectory.hashAPIKey("api-key"), clientSigningKey: RouteTesting.clientSigningKey,
            brokerUsers: [Self.brokerUser: nil, Self.retiredBrokerUser: Date(timeIntervalSinceNow: -60)],
            badgeMode: appId == Self.externalBadgeAppId ? .external : .unread,
            identityProvider: appId == Self.identityProviderAppId ? Self.identityProvider : nil)
        for scope in APIKeyScope.allCases {
            app.scopedKeys[AppDirectory.hashAPIKey("\(scope.rawValue)-key")] = ("key_\(scope.rawValue)", scope)
        }
        return app
    }
}

/// Identity provider documents served from memory by URL, each read counted.
final class FixedDocuments: IdentityDocumentFetching {
    private struct State {
        var documents: [String: [UInt8]] = [:]
        var reads: [String: Int] = [:]
    }

    private let state = Mutex(State())

    /// Serves `document` (JSON) at `url` from now on.
    func store(_ document: some Encodable, at url: String) throws {
        let bytes = Array(try JSONEncoder().encode(document))
        state.withLock { $0.documents[url] = bytes }
    }

    /// How often `url` was read.
    func reads(of url: String) -> Int {
        state.withLock { $0.reads[url] ?? 0 }
    }

    func fetch(_ url: URL) async throws -> [UInt8] {
        let found = state.withLock { state in
            state.reads[url.absoluteString, default: 0] += 1
            return state.documents[url.absoluteString]
        }
        guard let found else { throw IdentityDocumentFetchError(description: "GET \(url.absoluteString) answered 404") }
        return found
    }
}

/// The test app's one known device (alice's) and one event source ("news", which that device is in).
struct FixedTargets: TargetDirectory {
    static let subscriptionId = UUID(uuidString: "6b1f3a52-0c7e-4d8a-9b2e-5f4c3d2a1b09")!
    static let eventSource = "news"

    func owners(appId: String, of ids: [UUID]) async throws -> [UUID: String] {
        ids.contains(Self.subscriptionId) && appId == RouteTesting.appId ? [Self.subscriptionId: "alice"] : [:]
    }

    func eventSources(appId: String, named names: [String]) async throws -> [String: EventSourcePolicy] {
        names.contains(Self.eventSource) && appId == RouteTesting.appId ? [Self.eventSource: .open] : [:]
    }

    func members(appId: String, source name: String, userIds: [String]) async throws -> [String: [UUID]] {
        name == Self.eventSource && userIds.contains("alice") ? ["alice": [Self.subscriptionId]] : [:]
    }
}

/// An answer's error body.
struct ErrorBody: Decodable {
    struct Detail: Decodable {
        var code: String
        var message: String
        var field: String?
    }

    var error: Detail

    init(_ response: TestResponse) throws {
        self = try JSONDecoder().decode(ErrorBody.self, from: Data(response.body.readableBytesView))
    }
}
