import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NotifyAMQP
import NotifyDatabase
import NotifyModels
import NotifyStore
import NotifyStoreTesting
import NotifyTestSupport
import NotifyWire
import Synchronization

@testable import IngestCore

/// Ingest's router, in-process, with an app directory and stores held in memory and a publisher that records what it
/// is given (and applies state changes to `notifications`, as storage would): no broker, no database.
struct RouteTesting {
    static let adminToken = "operator-secret"
    static let appId = "app_test"
    static let clientSigningKey = "c2lnbmluZy1rZXktb2YtdGhlLXRlc3QtYXBw"
    static let keyring = try! SecretKeyring(parsing: SecretKeyring.generateEntry(id: "route-tests"))

    /// What the routes read; the commands sent to storage are applied here, as storage would apply them.
    let storage = MemoryStorage()
    var notifications: MemoryNotificationStore { storage.notifications }
    var deliveryLog: MemoryDeliveryLogStore { storage.deliveryLog }
    var devices: MemoryDeviceStore { storage.devices }
    let published: RecordingPublisher
    /// The identity provider documents ingest reads (none unless a test stores some).
    let documents = FixedDocuments()
    /// The backlog check publishes go through (off unless a test sets one).
    var backlog = PipelineBacklog(maximumDepth: 0)
    /// Wakes the live streams (`GET /v1/me/stream`), as the live queue's consumer would.
    var hub = LiveHub()
    /// What the routes read notifications through: `notifications` unless a test watches the reads.
    var notificationReader: (any NotificationStore)?

    init(backlog: PipelineBacklog = PipelineBacklog(maximumDepth: 0)) {
        self.backlog = backlog
        published = RecordingPublisher(applyingTo: storage)
        FixedTargets.fill(storage.devices)
        FixedApp.fill(storage.apps)
    }

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
            adminToken: Self.adminToken, apps: AppDirectory(source: FixedApp(created: storage.apps)), appStore: storage.apps,
            sender: CommandSender(publisher: published, logger: logger), database: database,
            notifications: notificationReader ?? notifications, deliveryLog: deliveryLog, devices: devices,
            brokerAddress: .init(host: "127.0.0.1", port: 5672, virtualHost: "notify"), appliedCommands: AppliedCommandWatch(client: database, logger: logger), hub: hub,
            subscriptionLifetime: 86_400, healthChecks: ["amqp": { true }], logger: logger, keyring: Self.keyring, targets: devices,
            backlog: backlog, identityKeys: IdentityProviderKeys(fetcher: documents, logger: logger))
    }

    /// A user token of `appId`'s user `userId` (the fixed apps share their signing key).
    static func userToken(_ userId: String, of appId: String = RouteTesting.appId, lifetime: TimeInterval = 3600) async throws -> String {
        try await UserToken.mint(userId: userId, appId: appId, signingKey: clientSigningKey, lifetime: lifetime)
    }

    /// The headers of a request by the user `userId` of the test app (or of `appId`), with a fresh user token.
    static func bearerUser(_ userId: String, of appId: String = RouteTesting.appId) async throws -> HTTPFields {
        [.authorization: "Bearer \(try await userToken(userId, of: appId))"]
    }

    /// A notification to `userId` as a test stores it in `notifications` (which numbers it): an alert titled `title`.
    static func notification(
        for userId: String, title: String, createdAt: Date = Date(), expiresIn: TimeInterval = 3600, groupName: String? = nil
    ) -> NotificationView {
        NotificationView(
            id: UUID(), userId: userId,
            content: NotificationContent(
                appNotificationId: nil, groupName: groupName, priority: .high, expirationDateTime: createdAt.addingTimeInterval(expiresIn),
                displayTimeToLive: nil, platformTypes: nil, payload: NotificationPayload(visualContent: VisualContent(title: title)), push: nil),
            readState: .unread, userActionState: .noInteraction, status: .active, sequence: 0, createdDateTime: createdAt,
            lastModifiedDateTime: createdAt)
    }

    /// The headers of a request with the test app's API key, and with the operator's token.
    static let apiKeyHeaders: HTTPFields = [.authorization: "Bearer api-key"]
    static let operatorHeaders: HTTPFields = [.authorization: "Bearer \(adminToken)"]

    /// An answer's body read as `type`, in the wire conventions (lowercase ids, RFC 3339 times).
    static func decode<Value: Decodable>(_ type: Value.Type, _ response: TestResponse) throws -> Value {
        try WireCoding.makeDecoder().decode(type, from: Data(response.body.readableBytesView))
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

    /// Where apps the tests create are found (their keys opened with `RouteTesting.keyring`).
    var created: MemoryAppStore?

    /// Stores rows for these apps, so that what the tests change of them (keys, badges, webhooks) is kept; their
    /// credentials are still this source's own.
    static func fill(_ store: MemoryAppStore) {
        for appId in [RouteTesting.appId, externalBadgeAppId, identityProviderAppId] {
            store.apply(.createApp(AppRecord(
                appId: appId, name: appId, apiKeyHash: AppDirectory.hashAPIKey("api-key"), clientSigningKey: "-", brokerUser: nil, createdAt: Date(),
                badgeMode: appId == externalBadgeAppId ? .external : .unread)))
        }
    }

    func app(_ appId: String) async throws -> AppDirectory.App? {
        guard [RouteTesting.appId, Self.externalBadgeAppId, Self.identityProviderAppId].contains(appId) else {
            guard let created else { return nil }
            return try await StoredAppSource(store: created, keyring: RouteTesting.keyring).app(appId)
        }
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

/// The test app's one known device (alice's) and one event source ("news", open, which that device is in).
enum FixedTargets {
    static let subscriptionId = UUID(uuidString: "6b1f3a52-0c7e-4d8a-9b2e-5f4c3d2a1b09")!
    static let eventSource = "news"

    /// A directory holding them.
    static func directory() -> MemoryDeviceStore {
        let store = MemoryDeviceStore()
        fill(store)
        return store
    }

    static func fill(_ store: MemoryDeviceStore) {
        let appId = RouteTesting.appId
        store.apply(.putEventSource(EventSourceRecord(appId: appId, name: eventSource, policy: .open, description: nil, createdAt: Date())))
        store.apply(.registerSubscription(DeviceSubscription(
            subscriptionId: subscriptionId, appId: appId, userId: "alice", platform: .apns, pushToken: String(repeating: "a1", count: 32),
            appPackage: nil, displayName: "Alice's phone", expirationDateTime: Date().addingTimeInterval(86_400), registeredAt: Date(timeIntervalSinceNow: -60),
            eventSources: [eventSource])))
    }
}

extension RecordingPublisher {
    /// A publisher whose storage commands are applied to `storage` as they are confirmed, as storage would apply them.
    convenience init(applyingTo storage: MemoryStorage) {
        self.init(whenConfirmed: { messages in
            for command in messages.flatMap(StorageCommandBatch.commands(in:)) { storage.apply(command) }
        })
    }

    /// The storage commands published, in order.
    var commands: [StorageCommand] { all.flatMap(StorageCommandBatch.commands(in:)) }
}

extension StorageCommandBatch {
    /// The commands a message carries (none if it is not a batch of them).
    static func commands(in message: AMQPOutboundMessage) -> [StorageCommand] {
        (try? StorageCommandBatch(body: message.body, contentType: message.properties.contentType).commands) ?? []
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
