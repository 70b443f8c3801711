import Foundation
import NotifyModels

/// Messages with every field set and with every optional field absent, at millisecond times (the JSON form's resolution).
enum WireFixtures {
    static let time = Date(timeIntervalSince1970: 1_800_000_000.125)

    static let fullContent = NotificationContent(
        appNotificationId: "order-42 ✓", groupName: "orders", priority: .high, expirationDateTime: time.addingTimeInterval(86_400),
        displayTimeToLive: 600, platformTypes: [.apns, .webpush, .apnsVoip],
        payload: NotificationPayload(rawContent: "{\"k\":\"v\"}\n\u{1}", visualContent: VisualContent(title: "Täst \"q\"", body: "B\\")),
        push: PushOptions(
            sound: "default", category: "ORDER", threadId: "t",
            data: ["n": .number(42.5), "s": .string("x"), "b": .bool(true), "z": .null, "a": .array([.number(1), .object(["k": .string("v")])])]))

    static let bareContent = NotificationContent(
        appNotificationId: nil, groupName: nil, priority: .none, expirationDateTime: time, displayTimeToLive: nil, platformTypes: nil,
        payload: NotificationPayload(), push: nil)

    static let keys = WebPushKeys(p256dh: "BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM", auth: "tBHItJI5svbpez7KI4CCXg")

    static let commands: [StorageCommand] = [
        StorageCommand(issuedAt: time, action: .createApp(AppRecord(
            appId: "app", name: "App", apiKeyHash: "ab12", clientSigningKey: "key", brokerUser: "app-user", createdAt: time))),
        StorageCommand(issuedAt: time, action: .createApp(AppRecord(
            appId: "app2", name: "", apiKeyHash: "", clientSigningKey: "", brokerUser: nil, createdAt: time,
            badgeMode: .unreadIncludingBroadcasts))),
        StorageCommand(issuedAt: time, action: .setProviderCredentials(appId: "app", provider: .wns, appPackage: "", sealedCredentials: "sealed:v1:k1:AAAA")),
        StorageCommand(issuedAt: time, action: .setProviderCredentials(appId: "app", provider: .apns, appPackage: "com.example.watch", sealedCredentials: "sealed:v1:k1:BBBB")),
        StorageCommand(issuedAt: time, action: .rotateAppKeys(AppKeyRotation(
            appId: "app", apiKeyHash: "cd34", clientSigningKey: "sealed:v1:k1:BBBB", retiresAt: time))),
        StorageCommand(issuedAt: time, action: .rotateAppKeys(AppKeyRotation(appId: "app", apiKeyHash: nil, clientSigningKey: nil, retiresAt: time))),
        StorageCommand(issuedAt: time, action: .registerSubscription(DeviceSubscription(
            subscriptionId: UUID(), appId: "app", userId: "u", platform: .webpush, pushToken: "https://push.example/x", keys: keys,
            appPackage: "web", displayName: "Firefox", expirationDateTime: time, registeredAt: time, eventSources: ["news", "sport"],
            replacesSubscriptionId: UUID()))),
        StorageCommand(issuedAt: time, action: .registerSubscription(DeviceSubscription(
            subscriptionId: UUID(), appId: "app", userId: "u", platform: .apns, pushToken: String(repeating: "ab", count: 32),
            appPackage: nil, displayName: nil, expirationDateTime: time, registeredAt: time))),
        StorageCommand(issuedAt: time, action: .unregisterSubscription(appId: "app", userId: "u", subscriptionId: UUID())),
        StorageCommand(issuedAt: time, action: .publishNotification(PublishedNotification(
            appId: "app", userId: "u", notificationId: UUID(), content: fullContent, receivedAt: time))),
        StorageCommand(issuedAt: time, action: .publishNotification(PublishedNotification(
            appId: "app", userId: "", notificationId: UUID(), content: bareContent, receivedAt: time))),
        StorageCommand(issuedAt: time, action: .publishBroadcast(PublishedBroadcast(
            appId: "app", eventSource: "news", notificationId: UUID(), content: fullContent, receivedAt: time))),
        StorageCommand(issuedAt: time, action: .publishBroadcast(PublishedBroadcast(
            appId: "app", eventSource: "news", notificationId: UUID(), content: bareContent, receivedAt: time,
            recipientPush: ["ana": fullContent.push!, "ben": PushOptions(delivery: PushDelivery.none)]))),
        StorageCommand(issuedAt: time, action: .changeNotificationState(NotificationStateChange(
            appId: "app", userId: "u", notificationId: UUID(), readState: .read, userActionState: .dismissed, delete: false,
            originSubscriptionId: UUID(), requestedAt: time))),
        StorageCommand(issuedAt: time, action: .changeNotificationState(NotificationStateChange(
            appId: "app", userId: "u", notificationId: UUID(), readState: nil, userActionState: nil, delete: true,
            originSubscriptionId: nil, requestedAt: time))),
        StorageCommand(issuedAt: time, action: .expireDueNotifications(dueBy: time)),
        StorageCommand(issuedAt: time, action: .purgeTombstones(olderThan: time)),
        StorageCommand(issuedAt: time, action: .putBrokerUser(BrokerUserRecord(
            appId: "app", user: "app-user-2", createdAt: time, retiresAt: nil, passwordHash: BrokerPasswordHash.sha256(of: "not-sent")))),
        StorageCommand(issuedAt: time, action: .putBrokerUser(BrokerUserRecord(appId: "app", user: "app-user", createdAt: time, retiresAt: time))),
        StorageCommand(issuedAt: time, action: .deleteApp(appId: "app")),
        StorageCommand(issuedAt: time, action: .putEventSource(EventSourceRecord(
            appId: "app", name: "breaking-news", policy: .appServer, description: "news", createdAt: time))),
        StorageCommand(issuedAt: time, action: .putEventSource(EventSourceRecord(appId: "app", name: "x", policy: .open, description: nil, createdAt: time))),
        StorageCommand(issuedAt: time, action: .deleteEventSource(appId: "app", name: "x")),
        StorageCommand(issuedAt: time, action: .putPollSource(PollSourceRecord(
            appId: "app", name: "legacy", url: "https://legacy.example/feed", intervalSeconds: 60, authorization: "Bearer x", createdAt: time))),
        StorageCommand(issuedAt: time, action: .putPollSource(PollSourceRecord(
            appId: "app", name: "open", url: "http://127.0.0.1/feed", intervalSeconds: 1, authorization: nil, createdAt: time))),
        StorageCommand(issuedAt: time, action: .deletePollSource(appId: "app", name: "legacy")),
        StorageCommand(issuedAt: time, action: .putWebhook(WebhookRecord(
            appId: "app", url: "https://app.example/hooks", events: ["subscription.created", "eventSource.left"], secret: "whsec_x", createdAt: time))),
        StorageCommand(issuedAt: time, action: .deleteWebhook(appId: "app")),
        StorageCommand(issuedAt: time, action: .setBadgeMode(appId: "app", mode: .unreadIncludingBroadcasts)),
        StorageCommand(issuedAt: time, action: .setBadgeMode(appId: "app", mode: .unread)),
        StorageCommand(issuedAt: time, action: .setBadgeMode(appId: "app", mode: .none)),
        StorageCommand(issuedAt: time, action: .setExternalBadge(appId: "app", userId: "alice", badge: 7, at: time)),
        StorageCommand(issuedAt: time, action: .setIdentityProvider(appId: "app", IdentityProvider(
            issuer: "https://login.example.com/tenant", jwksUrl: "https://login.example.com/keys", audience: "ios", userIdClaim: "email"))),
        StorageCommand(issuedAt: time, action: .setIdentityProvider(appId: "app", IdentityProvider(issuer: "https://login.example.com/", audience: "ios"))),
        StorageCommand(issuedAt: time, action: .setIdentityProvider(appId: "app", nil)),
        StorageCommand(issuedAt: time, action: .joinEventSource(appId: "app", name: "breaking-news", subscriptionIds: [UUID(), UUID()])),
        StorageCommand(issuedAt: time, action: .leaveEventSource(appId: "app", name: "breaking-news", subscriptionIds: [UUID()])),
        StorageCommand(issuedAt: time, action: .publishNotification(PublishedNotification(
            appId: "app", userId: "u", notificationId: UUID(), content: bareContent, receivedAt: time, pushSubscriptionIds: [UUID()]))),
        StorageCommand(issuedAt: time, action: .publishNotification(PublishedNotification(
            appId: "app", userId: "u", notificationId: UUID(), content: bareContent, receivedAt: time, pushSubscriptionIds: []))),
    ]

    static let events: [ChangeEvent] = [
        ChangeEvent(
            appId: "app", userId: "u", sequence: 1, kind: .created, notificationId: UUID(), content: fullContent, readState: .unread,
            userActionState: .noInteraction, originSubscriptionId: nil, badge: 3, changedAt: time, devicesVersion: 7),
        ChangeEvent(
            appId: "app", userId: "u", sequence: 2, kind: .created, notificationId: UUID(), content: bareContent, readState: .unread,
            userActionState: .noInteraction, originSubscriptionId: nil, badge: 3, changedAt: time, pushSubscriptionIds: [UUID(), UUID()]),
        ChangeEvent(
            appId: "app", userId: "u", sequence: Int64.max, kind: .stateChanged, notificationId: UUID(), content: nil, readState: .read,
            userActionState: .snoozed, originSubscriptionId: UUID(), badge: nil, changedAt: time),
        ChangeEvent(
            appId: "app", userId: "", sequence: 0, kind: .updated, notificationId: UUID(), content: bareContent, readState: .unread,
            userActionState: .activated, originSubscriptionId: nil, badge: nil, changedAt: time, eventSource: "news"),
        ChangeEvent(
            appId: "app", userId: "", sequence: 0, kind: .created, notificationId: UUID(), content: fullContent, readState: .unread,
            userActionState: .noInteraction, originSubscriptionId: nil, badge: nil, changedAt: time, eventSource: "news",
            recipientPush: ["ana": PushOptions(sound: "bell.caf", badge: 3), "ben": PushOptions(delivery: .silent)]),
    ]

    /// Two groups of two jobs (one change to two devices each) and a job of its own.
    static let jobs: [PushJob] = {
        let notification = UUID()
        func job(_ platform: Platform, _ sequence: Int64, keys: WebPushKeys? = nil) -> PushJob {
            PushJob(
                pushId: UUID(), appId: "app", subscriptionId: UUID(), platform: platform, deviceToken: "token-\(UUID())",
                notificationId: notification, sequence: sequence, kind: .created, isAlert: true, priority: .high, expiration: time,
                collapseId: "c", payload: "{\"aps\":{}}", attempt: 2, keys: keys)
        }
        return [job(.apns, 1), job(.apns, 1), job(.webpush, 2, keys: keys), job(.webpush, 2, keys: keys), job(.fcm, 3)]
    }()

    static let outcomes: [PushOutcome] = [
        PushOutcome(
            pushId: UUID(), appId: "app", subscriptionId: UUID(), notificationId: UUID(), sequence: 4, platform: .apns, result: .tokenInvalid,
            status: 410, reason: "Unregistered", attempt: 1, invalidSince: time, at: time),
        PushOutcome(
            pushId: UUID(), appId: "app", subscriptionId: UUID(), notificationId: UUID(), sequence: 5, platform: .wns, result: .accepted,
            status: nil, reason: nil, attempt: 0, invalidSince: nil, at: time),
    ]
}
