import Foundation

/// A write for storage, published on `storage.commands`. Storage applies each command id once.
public struct StorageCommand: Codable, Sendable, Equatable {
    public var commandId: UUID
    public var issuedAt: Date
    public var action: Action
    /// Storage announces this command on `appliedChannel` once it is applied, whatever its action: ingest asks for it
    /// to pace its publishes by storage's progress (`StoragePacing`). Not part of the JSON form of schema version 1.
    public var announceWhenApplied: Bool
    /// Set on a publish made from an item a poll source served: storage records the item's digest in its ledger
    /// (`poll_items`) and skips the publish when the ledger holds that digest already. Not part of the JSON form.
    public var polledItem: PolledItem?

    public init(
        commandId: UUID = .random(), issuedAt: Date = Date(), action: Action, announceWhenApplied: Bool = false, polledItem: PolledItem? = nil
    ) {
        self.commandId = commandId
        self.issuedAt = issuedAt
        self.action = action
        self.announceWhenApplied = announceWhenApplied
        self.polledItem = polledItem
    }

    private enum CodingKeys: String, CodingKey {
        case commandId, issuedAt, action
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            commandId: try container.decode(UUID.self, forKey: .commandId), issuedAt: try container.decode(Date.self, forKey: .issuedAt),
            action: try container.decode(Action.self, forKey: .action))
    }

    /// What to change.
    public enum Action: Sendable, Equatable {
        case createApp(AppRecord)
        /// Stores an app's credentials for a provider: their JSON sealed for it (`SecretKeyring`). `appPackage`: the app
        /// identity (say, a watch app) whose devices registered with that `appPackage` use them; "" for every other device.
        case setProviderCredentials(appId: String, provider: Platform, appPackage: String, sealedCredentials: String)
        case registerSubscription(DeviceSubscription)
        case unregisterSubscription(appId: String, userId: String, subscriptionId: UUID)
        case publishNotification(PublishedNotification)
        /// A notification for every device subscribed to an event source.
        case publishBroadcast(PublishedBroadcast)
        case changeNotificationState(NotificationStateChange)
        /// Expires every active notification whose expiration passed by `dueBy` (sent by storage's sweeper).
        case expireDueNotifications(dueBy: Date)
        /// Forgets tombstones and changes older than `olderThan` (sent by storage's sweeper).
        case purgeTombstones(olderThan: Date)
        /// Records one of an app's broker users: a new one (with its password's hash), which storage then creates in
        /// RabbitMQ, or one now retiring, which storage deletes from RabbitMQ once its overlap ended.
        case putBrokerUser(BrokerUserRecord)
        /// Deletes an app and everything stored for it.
        case deleteApp(appId: String)
        /// Defines an event source, or changes its policy and description.
        case putEventSource(EventSourceRecord)
        /// Deletes an event source and its memberships.
        case deleteEventSource(appId: String, name: String)
        /// Puts devices of the app in an existing event source (already members stay); `parameters`, when given, replace
        /// each device's parameters in it.
        case joinEventSource(appId: String, name: String, subscriptionIds: [UUID], parameters: [String: JSONValue]? = nil)
        /// Takes devices out of an event source.
        case leaveEventSource(appId: String, name: String, subscriptionIds: [UUID])
        /// Defines a back end to poll for notifications, or changes it.
        case putPollSource(PollSourceRecord)
        /// Stops polling a back end.
        case deletePollSource(appId: String, name: String)
        /// Registers (or changes) an app's webhook.
        case putWebhook(WebhookRecord)
        /// Removes an app's webhook.
        case deleteWebhook(appId: String)
        /// Sets what the badge of the app's pushes counts.
        case setBadgeMode(appId: String, mode: BadgeMode)
        /// Sets the badge number of a user of an app whose badge mode is external (a later `at` wins).
        case setExternalBadge(appId: String, userId: String, badge: Int, at: Date)
        /// Sets how fast the app may publish (nil fields: the service's defaults).
        case setRateLimit(appId: String, RateLimit)
        /// Names the identity provider whose tokens are user tokens of the app, or (nil) removes it.
        case setIdentityProvider(appId: String, IdentityProvider?)
        /// Replaces an app's API key or client signing key; the replaced one stays accepted until the rotation's end.
        case rotateAppKeys(AppKeyRotation)
        /// A device read its user's changes up to `sequence`, among them a notification with a visual fallback: the
        /// fallback is not sent (ingest, `X-Subscription-Id` on the changes request).
        case recordDeviceSync(appId: String, userId: String, subscriptionId: UUID, sequence: Int64)
        /// Creates one of an app's scoped API keys.
        case putAPIKey(APIKeyRecord)
        /// Revokes one of an app's scoped API keys (a revoked key stays revoked).
        case revokeAPIKey(appId: String, keyId: String, at: Date)
        /// Records when a scoped API key was last used (ingest gathers uses and sends them every 10 s).
        case recordAPIKeyUse(appId: String, keyId: String, at: Date)
    }

    /// The PostgreSQL channel on which storage announces, at commit, the ids of applied commands whose
    /// sender waits to answer with what was stored (comma-separated lowercase UUIDs in the payload).
    public static let appliedChannel = "notify_applied"

    /// Whether storage announces this command on `appliedChannel` once it is applied: every write whose
    /// HTTP answer shows the stored result, and any command whose sender asked (`announceWhenApplied`). Publishes,
    /// broadcasts and the sweeper's commands are not waited for.
    public var isAnnouncedWhenApplied: Bool {
        announceWhenApplied || isWaitedForBySender
    }

    /// Whether the sender of this action waits for its announcement to answer with what was stored.
    private var isWaitedForBySender: Bool {
        switch action {
        case .createApp, .setProviderCredentials, .registerSubscription, .changeNotificationState, .putBrokerUser, .deleteApp, .putEventSource,
            .deleteEventSource, .joinEventSource, .leaveEventSource, .putPollSource, .deletePollSource, .putWebhook, .deleteWebhook, .setBadgeMode, .setExternalBadge, .setRateLimit,
            .setIdentityProvider, .rotateAppKeys, .putAPIKey, .revokeAPIKey:
            true
        case .unregisterSubscription, .publishNotification, .publishBroadcast, .expireDueNotifications, .purgeTombstones, .recordDeviceSync, .recordAPIKeyUse:
            false
        }
    }
}

/// One message on `storage.commands`: the commands of one request or one ingest batch, under one confirm.
/// Storage applies each command once, whichever message carried it.
public struct StorageCommandBatch: Codable, Sendable, Equatable {
    /// The most commands one message carries (the size of the largest publish batch).
    public static let maximumCommands = 500

    public var commands: [StorageCommand]
    public init(commands: [StorageCommand]) { self.commands = commands }
}

/// A validated notification for an event source's subscribers, with its identity.
public struct PublishedBroadcast: Codable, Sendable, Equatable {
    public var appId: String
    public var eventSource: String
    public var notificationId: UUID
    public var content: NotificationContent
    public var receivedAt: Date
    /// Members with push options of their own (`recipients` of the publish): user id → the notification's options
    /// with the member's over them. The other members get `content.push`.
    public var recipientPush: [String: PushOptions]?
    /// The publish's `where`: only members whose parameters hold every pair get it; nil for every member.
    public var memberFilter: [String: JSONValue]?

    public init(
        appId: String, eventSource: String, notificationId: UUID, content: NotificationContent, receivedAt: Date,
        recipientPush: [String: PushOptions]? = nil, memberFilter: [String: JSONValue]? = nil
    ) {
        self.memberFilter = memberFilter
        self.appId = appId
        self.eventSource = eventSource
        self.notificationId = notificationId
        self.content = content
        self.receivedAt = receivedAt
        self.recipientPush = recipientPush
    }
}

/// A validated notification with its identity, ready to store.
public struct PublishedNotification: Codable, Sendable, Equatable {
    public var appId: String
    public var userId: String
    public var notificationId: UUID
    public var content: NotificationContent
    public var receivedAt: Date
    /// Set when the publish named devices (a `subscriptionId`, or a `userId` with an `eventSource`): only these of the
    /// user's devices are pushed its creation (it is in the user's feed on every device all the same).
    public var pushSubscriptionIds: [UUID]?

    public init(
        appId: String, userId: String, notificationId: UUID, content: NotificationContent, receivedAt: Date, pushSubscriptionIds: [UUID]? = nil
    ) {
        self.pushSubscriptionIds = pushSubscriptionIds
        self.appId = appId
        self.userId = userId
        self.notificationId = notificationId
        self.content = content
        self.receivedAt = receivedAt
    }
}

extension StorageCommand.Action: Codable {
    private enum CodingKeys: String, CodingKey {
        case type, app, appId, userId, credentials, subscription, subscriptionId, notification, broadcast, change, date, brokerUser
        case eventSource, name, subscriptionIds, parameters, pollSource, webhook, badgeMode, badge, rateLimit, provider, rotation, appPackage, sequence
        case identityProvider
    }

    private enum Kind: String, Codable {
        case createApp, setProviderCredentials, registerSubscription, unregisterSubscription, publishNotification
        case changeNotificationState, expireDueNotifications, purgeTombstones, publishBroadcast
        case putBrokerUser, deleteApp, putEventSource, deleteEventSource, joinEventSource, leaveEventSource
        case putPollSource, deletePollSource, putWebhook, deleteWebhook, setBadgeMode, setExternalBadge, setRateLimit
        case rotateAppKeys, recordDeviceSync, setIdentityProvider
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let kind = try container.decode(Kind.self, forKey: .type)
        switch kind {
        case .createApp:
            self = .createApp(try container.decode(AppRecord.self, forKey: .app))
        case .setProviderCredentials:
            self = .setProviderCredentials(
                appId: try container.decode(String.self, forKey: .appId), provider: try container.decode(Platform.self, forKey: .provider),
                appPackage: try container.decodeIfPresent(String.self, forKey: .appPackage) ?? "",
                sealedCredentials: try container.decode(String.self, forKey: .credentials))
        case .registerSubscription:
            self = .registerSubscription(try container.decode(DeviceSubscription.self, forKey: .subscription))
        case .unregisterSubscription:
            self = .unregisterSubscription(
                appId: try container.decode(String.self, forKey: .appId),
                userId: try container.decode(String.self, forKey: .userId),
                subscriptionId: try container.decode(UUID.self, forKey: .subscriptionId))
        case .publishNotification:
            self = .publishNotification(try container.decode(PublishedNotification.self, forKey: .notification))
        case .publishBroadcast:
            self = .publishBroadcast(try container.decode(PublishedBroadcast.self, forKey: .broadcast))
        case .changeNotificationState:
            self = .changeNotificationState(try container.decode(NotificationStateChange.self, forKey: .change))
        case .expireDueNotifications:
            self = .expireDueNotifications(dueBy: try container.decode(Date.self, forKey: .date))
        case .purgeTombstones:
            self = .purgeTombstones(olderThan: try container.decode(Date.self, forKey: .date))
        case .putBrokerUser:
            self = .putBrokerUser(try container.decode(BrokerUserRecord.self, forKey: .brokerUser))
        case .deleteApp:
            self = .deleteApp(appId: try container.decode(String.self, forKey: .appId))
        case .putEventSource:
            self = .putEventSource(try container.decode(EventSourceRecord.self, forKey: .eventSource))
        case .deleteEventSource:
            self = .deleteEventSource(appId: try container.decode(String.self, forKey: .appId), name: try container.decode(String.self, forKey: .name))
        case .joinEventSource, .leaveEventSource:
            let (appId, name) = (try container.decode(String.self, forKey: .appId), try container.decode(String.self, forKey: .name))
            let ids = try container.decode([UUID].self, forKey: .subscriptionIds)
            self = kind == .joinEventSource
                ? .joinEventSource(
                    appId: appId, name: name, subscriptionIds: ids,
                    parameters: try container.decodeIfPresent([String: JSONValue].self, forKey: .parameters))
                : .leaveEventSource(appId: appId, name: name, subscriptionIds: ids)
        case .putPollSource:
            self = .putPollSource(try container.decode(PollSourceRecord.self, forKey: .pollSource))
        case .deletePollSource:
            self = .deletePollSource(appId: try container.decode(String.self, forKey: .appId), name: try container.decode(String.self, forKey: .name))
        case .putWebhook:
            self = .putWebhook(try container.decode(WebhookRecord.self, forKey: .webhook))
        case .deleteWebhook:
            self = .deleteWebhook(appId: try container.decode(String.self, forKey: .appId))
        case .setBadgeMode:
            self = .setBadgeMode(appId: try container.decode(String.self, forKey: .appId), mode: try container.decode(BadgeMode.self, forKey: .badgeMode))
        case .setRateLimit:
            self = .setRateLimit(appId: try container.decode(String.self, forKey: .appId), try container.decode(RateLimit.self, forKey: .rateLimit))
        case .setIdentityProvider:
            self = .setIdentityProvider(
                appId: try container.decode(String.self, forKey: .appId),
                try container.decodeIfPresent(IdentityProvider.self, forKey: .identityProvider))
        case .rotateAppKeys:
            self = .rotateAppKeys(try container.decode(AppKeyRotation.self, forKey: .rotation))
        case .recordDeviceSync:
            self = .recordDeviceSync(
                appId: try container.decode(String.self, forKey: .appId), userId: try container.decode(String.self, forKey: .userId),
                subscriptionId: try container.decode(UUID.self, forKey: .subscriptionId), sequence: try container.decode(Int64.self, forKey: .sequence))
        case .setExternalBadge:
            self = .setExternalBadge(
                appId: try container.decode(String.self, forKey: .appId), userId: try container.decode(String.self, forKey: .userId),
                badge: try container.decode(Int.self, forKey: .badge), at: try container.decode(Date.self, forKey: .date))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .createApp(let app):
            try container.encode(Kind.createApp, forKey: .type)
            try container.encode(app, forKey: .app)
        case .setProviderCredentials(let appId, let provider, let appPackage, let sealedCredentials):
            try container.encode(Kind.setProviderCredentials, forKey: .type)
            try container.encode(appId, forKey: .appId)
            try container.encode(provider, forKey: .provider)
            try container.encode(appPackage, forKey: .appPackage)
            try container.encode(sealedCredentials, forKey: .credentials)
        case .registerSubscription(let subscription):
            try container.encode(Kind.registerSubscription, forKey: .type)
            try container.encode(subscription, forKey: .subscription)
        case .unregisterSubscription(let appId, let userId, let subscriptionId):
            try container.encode(Kind.unregisterSubscription, forKey: .type)
            try container.encode(appId, forKey: .appId)
            try container.encode(userId, forKey: .userId)
            try container.encode(subscriptionId, forKey: .subscriptionId)
        case .publishNotification(let notification):
            try container.encode(Kind.publishNotification, forKey: .type)
            try container.encode(notification, forKey: .notification)
        case .publishBroadcast(let broadcast):
            try container.encode(Kind.publishBroadcast, forKey: .type)
            try container.encode(broadcast, forKey: .broadcast)
        case .changeNotificationState(let change):
            try container.encode(Kind.changeNotificationState, forKey: .type)
            try container.encode(change, forKey: .change)
        case .expireDueNotifications(let dueBy):
            try container.encode(Kind.expireDueNotifications, forKey: .type)
            try container.encode(dueBy, forKey: .date)
        case .purgeTombstones(let olderThan):
            try container.encode(Kind.purgeTombstones, forKey: .type)
            try container.encode(olderThan, forKey: .date)
        case .putBrokerUser(let record):
            try container.encode(Kind.putBrokerUser, forKey: .type)
            try container.encode(record, forKey: .brokerUser)
        case .deleteApp(let appId):
            try container.encode(Kind.deleteApp, forKey: .type)
            try container.encode(appId, forKey: .appId)
        case .putEventSource(let record):
            try container.encode(Kind.putEventSource, forKey: .type)
            try container.encode(record, forKey: .eventSource)
        case .deleteEventSource(let appId, let name):
            try container.encode(Kind.deleteEventSource, forKey: .type)
            try container.encode(appId, forKey: .appId)
            try container.encode(name, forKey: .name)
        case .joinEventSource(let appId, let name, let ids, _), .leaveEventSource(let appId, let name, let ids):
            if case .joinEventSource(_, _, _, let parameters) = self {
                try container.encode(Kind.joinEventSource, forKey: .type)
                try container.encodeIfPresent(parameters, forKey: .parameters)
            } else {
                try container.encode(Kind.leaveEventSource, forKey: .type)
            }
            try container.encode(appId, forKey: .appId)
            try container.encode(name, forKey: .name)
            try container.encode(ids, forKey: .subscriptionIds)
        case .putPollSource(let record):
            try container.encode(Kind.putPollSource, forKey: .type)
            try container.encode(record, forKey: .pollSource)
        case .deletePollSource(let appId, let name):
            try container.encode(Kind.deletePollSource, forKey: .type)
            try container.encode(appId, forKey: .appId)
            try container.encode(name, forKey: .name)
        case .putWebhook(let record):
            try container.encode(Kind.putWebhook, forKey: .type)
            try container.encode(record, forKey: .webhook)
        case .deleteWebhook(let appId):
            try container.encode(Kind.deleteWebhook, forKey: .type)
            try container.encode(appId, forKey: .appId)
        case .setBadgeMode(let appId, let mode):
            try container.encode(Kind.setBadgeMode, forKey: .type)
            try container.encode(appId, forKey: .appId)
            try container.encode(mode, forKey: .badgeMode)
        case .setRateLimit(let appId, let limit):
            try container.encode(Kind.setRateLimit, forKey: .type)
            try container.encode(appId, forKey: .appId)
            try container.encode(limit, forKey: .rateLimit)
        case .setIdentityProvider(let appId, let provider):
            try container.encode(Kind.setIdentityProvider, forKey: .type)
            try container.encode(appId, forKey: .appId)
            try container.encodeIfPresent(provider, forKey: .identityProvider)
        case .rotateAppKeys(let rotation):
            try container.encode(Kind.rotateAppKeys, forKey: .type)
            try container.encode(rotation, forKey: .rotation)
        case .recordDeviceSync(let appId, let userId, let subscriptionId, let sequence):
            try container.encode(Kind.recordDeviceSync, forKey: .type)
            try container.encode(appId, forKey: .appId)
            try container.encode(userId, forKey: .userId)
            try container.encode(subscriptionId, forKey: .subscriptionId)
            try container.encode(sequence, forKey: .sequence)
        case .setExternalBadge(let appId, let userId, let badge, let at):
            try container.encode(Kind.setExternalBadge, forKey: .type)
            try container.encode(appId, forKey: .appId)
            try container.encode(userId, forKey: .userId)
            try container.encode(badge, forKey: .badge)
            try container.encode(at, forKey: .date)
        case .putAPIKey, .revokeAPIKey, .recordAPIKeyUse:
            // Actions newer than the JSON form (schema version 1, read from messages written before protobuf) have none.
            throw EncodingError.invalidValue(self, .init(codingPath: encoder.codingPath, debugDescription: "not part of the JSON form"))
        }
    }
}
