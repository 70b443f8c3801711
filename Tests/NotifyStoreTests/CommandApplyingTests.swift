import Foundation
import Logging
import NotifyDatabase
import NotifyModels
import NotifyWire
import PostgresNIO
import Testing

@testable import NotifyStore

/// Storage's command applying in-process, against the test stack's PostgreSQL (`NOTIFY_WRITER_DATABASE_URL`): what a
/// batch writes, the change events it emits, and its outbox.
@Suite(.enabled(if: ProcessInfo.processInfo.environment["NOTIFY_TEST_STACK"] != nil, "needs PostgreSQL: run deploy/local/test.sh"))
struct CommandApplyingTests {
    private func withApplier<Value: Sendable>(_ body: (CommandBatchApplier, PostgresClient) async throws -> Value) async throws -> Value {
        try await NotifyStoreTestDatabase.withDatabase { try await body($1, $0) }
    }

    private static func app(brokerUser: String? = nil) -> StorageCommand {
        StorageCommand(action: .createApp(AppRecord(
            appId: "core_\(UUID().lowercasedString.prefix(12))", name: "core test", apiKeyHash: UUID().lowercasedString,
            clientSigningKey: "key", brokerUser: brokerUser, createdAt: Date())))
    }

    private static func publish(appId: String, userId: String, appNotificationId: String? = nil) -> StorageCommand {
        StorageCommand(action: .publishNotification(PublishedNotification(
            appId: appId, userId: userId, notificationId: UUID(),
            content: NotificationContent(
                appNotificationId: appNotificationId, groupName: nil, priority: .high, expirationDateTime: Date().addingTimeInterval(3600),
                displayTimeToLive: nil, platformTypes: nil, payload: NotificationPayload(visualContent: VisualContent(title: "t")), push: nil),
            receivedAt: Date())))
    }

    @Test("a batch of publishes gives each user a sequence from 1 and emits a created event per notification, with the badge")
    func publishesAreSequenced() async throws {
        try await withApplier { applier, _ in
            let app = Self.app()
            guard case .createApp(let record) = app.action else { return }
            _ = try await applier.apply([app])
            let commands = [Self.publish(appId: record.appId, userId: "a"), Self.publish(appId: record.appId, userId: "a"),
                            Self.publish(appId: record.appId, userId: "b")]
            let fragments = try await applier.apply(commands).map(\.events)
            let events = try ChangeEventBatch(wireBytes: ChangeEventBatch.wireBytes(joining: fragments)).events
            #expect(events.map(\.kind) == [.created, .created, .created])
            #expect(events.map(\.userId) == ["a", "a", "b"])
            #expect(events.map(\.sequence) == [1, 2, 1])
            #expect(events.map(\.badge) == [2, 2, 1], "each event carries its user's unread count after the batch")
        }
    }

    @Test("a command applied again emits the same events from the outbox and writes nothing new")
    func redeliveryReplaysTheOutbox() async throws {
        try await withApplier { applier, client in
            let app = Self.app()
            guard case .createApp(let record) = app.action else { return }
            _ = try await applier.apply([app])
            let command = Self.publish(appId: record.appId, userId: "a")
            let first = try await applier.apply([command])
            let again = try await applier.apply([command])
            #expect(again.map(\.events) == first.map(\.events), "the outbox keeps the bytes it emitted")
            #expect(again.map(\.commandId) == [command.commandId])
            let rows = try await client.query(
                "SELECT count(*)::int8 FROM notifications WHERE app_id = \(record.appId)", logger: Logger(label: "query")
            ).collect()
            #expect(try rows.first?.decode(Int64.self) == 1)
        }
    }

    @Test("once the broker confirmed a command's events they leave the outbox: the command applied again emits nothing")
    func confirmedEventsAreNotEmittedAgain() async throws {
        try await withApplier { applier, _ in
            let app = Self.app()
            guard case .createApp(let record) = app.action else { return }
            _ = try await applier.apply([app])
            let command = Self.publish(appId: record.appId, userId: "a")
            let first = try await applier.apply([command])
            #expect(first.count == 1)
            // The next batch clears the confirmed command in its own record statement.
            _ = try await applier.apply([Self.publish(appId: record.appId, userId: "b")], clearing: [command.commandId])
            #expect(try await applier.apply([command]).isEmpty, "a retry of a confirmed command is not pushed again")
        }
    }

    @Test("broker users: a new one is recorded with its password's hash to be created, a retirement only ever comes sooner, and deleting the app retires them and deletes all it stored")
    func brokerUsersAndAppDeletion() async throws {
        try await withApplier { applier, client in
            // An older ingest's app, whose user it created in RabbitMQ itself.
            let app = Self.app(brokerUser: "bu-\(UUID().lowercasedString.prefix(8))")
            guard case .createApp(let record) = app.action, let first = record.brokerUser else { return }
            _ = try await applier.apply([app])
            let retiresAt = Date().addingTimeInterval(3600)
            let hash = BrokerPasswordHash.sha256(of: "never-stored")
            _ = try await applier.apply([
                StorageCommand(action: .putBrokerUser(BrokerUserRecord(
                    appId: record.appId, user: first + "-2", createdAt: Date(), retiresAt: nil, passwordHash: hash))),
                StorageCommand(action: .putBrokerUser(BrokerUserRecord(appId: record.appId, user: first, createdAt: record.createdAt, retiresAt: retiresAt))),
                Self.publish(appId: record.appId, userId: "a"),
            ])
            // Applied late or again, neither a later retirement nor a current record takes the retirement back.
            _ = try await applier.apply([
                StorageCommand(action: .putBrokerUser(BrokerUserRecord(
                    appId: record.appId, user: first, createdAt: record.createdAt, retiresAt: retiresAt.addingTimeInterval(7200)))),
                StorageCommand(action: .putBrokerUser(BrokerUserRecord(appId: record.appId, user: first, createdAt: record.createdAt, retiresAt: nil))),
            ])
            let logger = Logger(label: "query")
            struct Row { var retiresAt: Date?, passwordHash: String?, provisioned: Bool }
            func users() async throws -> [String: Row] {
                var users: [String: Row] = [:]
                for try await (user, retires, passwordHash, provisioned) in try await client.query(
                    "SELECT user_name, retires_at, password_hash, provisioned_at IS NOT NULL FROM app_broker_users WHERE app_id = \(record.appId)",
                    logger: logger
                ).decode((String, Date?, String?, Bool).self) { users[user] = Row(retiresAt: retires, passwordHash: passwordHash, provisioned: provisioned) }
                return users
            }
            let recorded = try await users()
            #expect(recorded.count == 2)
            let new = recorded[first + "-2"], old = recorded[first]
            // The running stack's storage may have created it already, which clears the hash.
            let waiting = new?.passwordHash == hash && new?.provisioned == false, created = new?.passwordHash == nil && new?.provisioned == true
            #expect(new?.retiresAt == nil && (waiting || created), "the new user is current, to be created from its password's hash")
            #expect(old?.passwordHash == nil && old?.provisioned == true, "the older ingest's user exists in RabbitMQ already")
            #expect(abs(old?.retiresAt?.timeIntervalSince(retiresAt) ?? 99) < 0.01, "the old one retires at the first time given")

            _ = try await applier.apply([StorageCommand(action: .deleteApp(appId: record.appId))])
            for table in ["apps", "notifications", "changes", "user_sequences"] {
                var binds = PostgresBindings()
                binds.append(record.appId)
                let rows = try await client.query(
                    PostgresQuery(unsafeSQL: "SELECT count(*)::int8 FROM \(table) WHERE app_id = $1", binds: binds), logger: logger
                ).collect()
                let count = try rows.first?.decode(Int64.self)
                #expect(count == 0, "\(table) still holds rows of the deleted app")
            }
            // They stay until storage deleted them from RabbitMQ (the running stack's may have done it already).
            let left = try await users()
            #expect(left.values.allSatisfy { ($0.retiresAt ?? .distantFuture) <= Date() }, "the deleted app's users are retired: \(left)")
        }
    }

    @Test("an app's identity provider is stored in its row, replaced by the next and removed by none")
    func identityProviderIsStored() async throws {
        try await withApplier { applier, client in
            let app = Self.app()
            guard case .createApp(let record) = app.action else { return }
            _ = try await applier.apply([app])
            func stored() async throws -> [String?] {
                let rows = try await client.query(
                    """
                    SELECT identity_issuer, identity_jwks_url, identity_audience, identity_user_id_claim FROM apps WHERE app_id = \(record.appId)
                    """, logger: Logger(label: "query")).decode((String?, String?, String?, String?).self)
                for try await (issuer, jwksUrl, audience, claim) in rows { return [issuer, jwksUrl, audience, claim] }
                return []
            }
            _ = try await applier.apply([StorageCommand(action: .setIdentityProvider(appId: record.appId, IdentityProvider(
                issuer: "https://login.example.com/a", jwksUrl: "https://login.example.com/keys", audience: "ios", userIdClaim: "email")))])
            #expect(try await stored() == ["https://login.example.com/a", "https://login.example.com/keys", "ios", "email"])
            _ = try await applier.apply([StorageCommand(action: .setIdentityProvider(
                appId: record.appId, IdentityProvider(issuer: "https://login.example.com/b", audience: "web")))])
            #expect(try await stored() == ["https://login.example.com/b", nil, "web", "sub"])
            _ = try await applier.apply([StorageCommand(action: .setIdentityProvider(appId: record.appId, nil))])
            #expect(try await stored() == [nil, nil, nil, nil])
        }
    }

    @Test("a purge forgets webhook events relayed before the cutoff and their delivery log; an event not yet relayed stays")
    func purgeForgetsOldWebhookEvents() async throws {
        try await withApplier { applier, client in
            let app = Self.app()
            guard case .createApp(let record) = app.action else { return }
            _ = try await applier.apply([app])
            let logger = Logger(label: "query")
            let (relayed, waiting) = (UUID(), UUID())
            let old = Date().addingTimeInterval(-40 * 86400)
            try await client.query(
                """
                INSERT INTO webhook_events (event_id, app_id, type, data, created_at, published_at) VALUES
                    (\(relayed), \(record.appId), 'subscription.created', '{}', \(old), \(old)),
                    (\(waiting), \(record.appId), 'subscription.created', '{}', \(old), NULL)
                """, logger: logger)
            try await client.query(
                "INSERT INTO webhook_deliveries (event_id, attempt, app_id, type, status, result, at) VALUES (\(relayed), 1, \(record.appId), 'subscription.created', 204, 'delivered', \(old))",
                logger: logger)
            _ = try await applier.apply([StorageCommand(action: .purgeTombstones(olderThan: Date().addingTimeInterval(-30 * 86400)))])
            var left: [UUID] = []
            for try await id in try await client.query("SELECT event_id FROM webhook_events WHERE app_id = \(record.appId)", logger: logger).decode(UUID.self) {
                left.append(id)
            }
            #expect(left == [waiting], "the relayed event goes, the waiting one stays")
            let rows = try await client.query("SELECT count(*)::int8 FROM webhook_deliveries WHERE app_id = \(record.appId)", logger: logger).collect()
            #expect(try rows.first?.decode(Int64.self) == 0)
        }
    }

    @Test("a subscription of an app whose webhook takes its event is announced on StoreChannel.webhookEvents (where the webhook relay listens) at commit")
    func webhookEventsAreAnnounced() async throws {
        try await withApplier { applier, client in
            let app = Self.app()
            guard case .createApp(let record) = app.action else { return }
            let webhook = WebhookRecord(
                appId: record.appId, url: "https://127.0.0.1:9/hook", events: ["subscription.created"], secret: "sealed", createdAt: Date())
            _ = try await applier.apply([app, StorageCommand(action: .putWebhook(webhook))])
            try await client.withConnection { connection in
                try await connection.listen(on: StoreChannel.webhookEvents) { announcements in
                    let subscription = DeviceSubscription(
                        subscriptionId: UUID(), appId: record.appId, userId: "webhook-user", platform: .apns, pushToken: "token-\(UUID())",
                        appPackage: nil, displayName: nil, expirationDateTime: Date().addingTimeInterval(86400), registeredAt: Date())
                    _ = try await applier.apply([StorageCommand(action: .registerSubscription(subscription))])
                    var iterator = announcements.makeAsyncIterator()
                    #expect(try await iterator.next() != nil, "the relay, listening there, is woken")
                }
            }
            // The test stack's storage relays the event too; the app goes, with its webhook and outbox.
            _ = try await applier.apply([StorageCommand(action: .deleteApp(appId: record.appId))])
        }
    }

    @Test("a publish whose sender asked is announced on the applied-commands channel at commit; one that did not ask is not",
          .timeLimit(.minutes(1)))
    func requestedAnnouncementsAreMade() async throws {
        try await withApplier { applier, client in
            let app = Self.app()
            guard case .createApp(let record) = app.action else { return }
            _ = try await applier.apply([app])
            let quiet = Self.publish(appId: record.appId, userId: "paced")
            var asked = Self.publish(appId: record.appId, userId: "paced")
            asked.announceWhenApplied = true
            try await client.withConnection { connection in
                try await connection.listen(on: StorageCommand.appliedChannel) { announcements in
                    _ = try await applier.apply([quiet, asked])
                    // The running stack's storage announces on the same channel: read until this batch's announcement,
                    // for at most 10 s (it comes at commit; then the test ends the wait with an announcement of its own).
                    let giveUp = "gave up waiting \(UUID())"
                    let deadline = Task {
                        try await Task.sleep(for: .seconds(10))
                        _ = try await client.query("SELECT pg_notify(\(StorageCommand.appliedChannel), \(giveUp))", logger: Logger(label: "test"))
                    }
                    defer { deadline.cancel() }
                    var payload: String?
                    for try await announcement in announcements {
                        if announcement.payload == giveUp { break }
                        if announcement.payload.contains(asked.commandId.lowercasedString) {
                            payload = announcement.payload
                            break
                        }
                    }
                    #expect(payload?.split(separator: ",").map(String.init) == [asked.commandId.lowercasedString])
                }
            }
        }
    }

    @Test("publishing the same appNotificationId again replaces it: an updated event with a new sequence")
    func replaceIsAnUpdate() async throws {
        try await withApplier { applier, _ in
            let app = Self.app()
            guard case .createApp(let record) = app.action else { return }
            _ = try await applier.apply([app])
            let first = Self.publish(appId: record.appId, userId: "a", appNotificationId: "order-1")
            var second = Self.publish(appId: record.appId, userId: "a", appNotificationId: "order-1")
            if case .publishNotification(var notification) = second.action, case .publishNotification(let original) = first.action {
                notification.notificationId = original.notificationId
                second.action = .publishNotification(notification)
            }
            _ = try await applier.apply([first])
            let events = try ChangeEventBatch(wireBytes: ChangeEventBatch.wireBytes(joining: try await applier.apply([second]).map(\.events))).events
            #expect(events.map(\.kind) == [.updated])
            #expect(events.map(\.sequence) == [2])
        }
    }

    @Test("broadcasts are numbered per app (a replace takes a new number); a member's read is its own state, in its sequence, counted in its badge; a non-member's or a repeated change does nothing; the purge forgets an expired broadcast with its states")
    func broadcastsInFeeds() async throws {
        try await withApplier { applier, client in
            let app = Self.app()
            guard case .createApp(var record) = app.action else { return }
            record.badgeMode = .unreadIncludingBroadcasts
            _ = try await applier.apply([StorageCommand(action: .createApp(record))])
            let appId = record.appId
            let logger = Logger(label: "query")
            // Users a and b each have a device in "news" since before the broadcasts; c has a device in no source.
            try await client.query(
                """
                WITH added AS (
                    INSERT INTO subscriptions (subscription_id, app_id, user_id, platform, push_token, expires_at, registered_at)
                    SELECT gen_random_uuid(), \(appId), u, 'apns', md5(\(appId) || u), now() + interval '1 day', now()
                    FROM unnest(ARRAY['a', 'b', 'c']) AS u
                    RETURNING subscription_id, user_id
                )
                INSERT INTO event_source_members (app_id, event_source, subscription_id, joined_at)
                SELECT \(appId), 'news', subscription_id, now() - interval '1 minute' FROM added WHERE user_id <> 'c'
                """, logger: logger)
            func broadcast(_ id: UUID) -> StorageCommand { StoreCommands.broadcast(id, appId: appId) }
            func read(_ id: UUID, by user: String) -> StorageCommand {
                StorageCommand(action: .changeNotificationState(NotificationStateChange(
                    appId: appId, userId: user, notificationId: id, readState: .read, userActionState: nil, delete: false,
                    originSubscriptionId: nil, requestedAt: Date())))
            }
            func integer(_ query: PostgresQuery) async throws -> Int64? {
                try await client.query(query, logger: logger).collect().first?.decode(Int64.self)
            }
            func events(_ commands: [StorageCommand]) async throws -> [ChangeEvent] {
                try ChangeEventBatch(wireBytes: ChangeEventBatch.wireBytes(joining: try await applier.apply(commands).map(\.events))).events
            }
            let (first, second) = (UUID(), UUID())
            _ = try await applier.apply([broadcast(first)])
            _ = try await applier.apply([broadcast(second)])
            #expect(try await integer("SELECT seq FROM broadcasts WHERE notification_id = \(first)") == 1)
            #expect(try await integer("SELECT seq FROM broadcasts WHERE notification_id = \(second)") == 2)
            #expect(try await events([broadcast(first)]).map(\.kind) == [.updated])
            #expect(try await integer("SELECT seq FROM broadcasts WHERE notification_id = \(first)") == 3, "a replace is listed again")

            let readByA = try await events([read(first, by: "a"), read(first, by: "c")])
            #expect(readByA.map(\.userId) == ["a"], "only the member's change applies: \(readByA)")
            #expect(readByA.map(\.kind) == [.stateChanged] && readByA.map(\.sequence) == [1] && readByA.map(\.readState) == [.read])
            #expect(readByA.map(\.badge) == [1], "a's badge: the other broadcast")
            #expect(try await events([read(first, by: "a")]).isEmpty, "reading it again changes nothing")
            #expect(try await integer("SELECT unread_broadcasts(\(appId), 'b')") == 2)
            #expect(try await integer("SELECT count(*)::int8 FROM changes WHERE app_id = \(appId) AND user_id = 'a'") == 1)

            try await client.query("UPDATE broadcasts SET expires_at = now() - interval '40 days' WHERE notification_id = \(first)", logger: logger)
            _ = try await applier.apply([StorageCommand(action: .purgeTombstones(olderThan: Date().addingTimeInterval(-30 * 86400)))])
            #expect(try await integer("SELECT count(*)::int8 FROM broadcasts WHERE app_id = \(appId)") == 1)
            #expect(try await integer("SELECT count(*)::int8 FROM broadcast_states WHERE app_id = \(appId)") == 0)
        }
    }
}
