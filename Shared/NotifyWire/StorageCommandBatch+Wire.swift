import Foundation
import NotifyAMQP
import NotifyModels

extension StorageCommandBatch: WireMessage {
    public func wireBytes() -> Data {
        var batch = WireStorageCommandBatch()
        batch.schemaVersion = WireFormat.schemaVersion
        batch.commands = commands.map(\.wire)
        return serialized(batch)
    }

    public init(wireBytes: Data) throws(WireDecodingError) {
        let batch = try readVersioned(WireStorageCommandBatch.self, from: wireBytes, name: "StorageCommandBatch") { $0.schemaVersion }
        var commands: [StorageCommand] = []
        commands.reserveCapacity(batch.commands.count)
        for (index, command) in batch.commands.enumerated() {
            commands.append(try StorageCommand(wire: command, "StorageCommandBatch.commands[\(index)]"))
        }
        self.init(commands: commands)
    }

    /// The messages to `storage.commands` carrying `commands` in order, at most `maximumCommands` to a message.
    public static func messages(for commands: [StorageCommand]) -> [AMQPOutboundMessage] {
        stride(from: commands.startIndex, to: commands.endIndex, by: maximumCommands).map { start in
            AMQPOutboundMessage(
                routingKey: QueueNames.storageCommands,
                wire: StorageCommandBatch(commands: Array(commands[start..<min(start + maximumCommands, commands.endIndex)])))
        }
    }
}

extension StorageCommand {
    var wire: WireStorageCommand {
        var command = WireStorageCommand()
        command.commandID = commandId.wireBytes
        command.issuedAtMicros = issuedAt.wireMicros
        command.announceApplied = announceWhenApplied
        if let polledItem { command.polledItem = polledItem.wire }
        switch action {
        case .createApp(let app):
            command.createApp = app.wire
        case .setProviderCredentials(let appId, let provider, let appPackage, let sealedCredentials):
            command.setProviderCredentials.appID = appId
            command.setProviderCredentials.provider = provider.wire
            command.setProviderCredentials.appPackage = appPackage
            command.setProviderCredentials.sealedCredentials = sealedCredentials
        case .registerSubscription(let subscription):
            command.registerSubscription = subscription.wire
        case .unregisterSubscription(let appId, let userId, let subscriptionId):
            command.unregisterSubscription.appID = appId
            command.unregisterSubscription.userID = userId
            command.unregisterSubscription.subscriptionID = subscriptionId.wireBytes
        case .publishNotification(let notification):
            command.publishNotification.appID = notification.appId
            command.publishNotification.userID = notification.userId
            command.publishNotification.notificationID = notification.notificationId.wireBytes
            command.publishNotification.content = notification.content.wire
            command.publishNotification.receivedAtMicros = notification.receivedAt.wireMicros
            if let ids = notification.pushSubscriptionIds { command.publishNotification.pushSubscriptionIds = ids.wireList }
        case .publishBroadcast(let broadcast):
            command.publishBroadcast.appID = broadcast.appId
            command.publishBroadcast.eventSource = broadcast.eventSource
            command.publishBroadcast.notificationID = broadcast.notificationId.wireBytes
            command.publishBroadcast.content = broadcast.content.wire
            command.publishBroadcast.receivedAtMicros = broadcast.receivedAt.wireMicros
            if let recipientPush = broadcast.recipientPush { command.publishBroadcast.recipientPush = recipientPush.mapValues(\.wire) }
            if let filter = broadcast.memberFilter { command.publishBroadcast.memberFilter = filter.wireStruct }
        case .changeNotificationState(let change):
            command.changeNotificationState = change.wire
        case .expireDueNotifications(let dueBy):
            command.expireDueNotificationsMicros = dueBy.wireMicros
        case .purgeTombstones(let olderThan):
            command.purgeTombstonesMicros = olderThan.wireMicros
        case .putBrokerUser(let record):
            command.putBrokerUser.appID = record.appId
            command.putBrokerUser.user = record.user
            command.putBrokerUser.createdAtMicros = record.createdAt.wireMicros
            if let retiresAt = record.retiresAt { command.putBrokerUser.retiresAtMicros = retiresAt.wireMicros }
            if let passwordHash = record.passwordHash { command.putBrokerUser.passwordHash = passwordHash }
        case .deleteApp(let appId):
            command.deleteApp = appId
        case .putEventSource(let source):
            command.putEventSource.appID = source.appId
            command.putEventSource.name = source.name
            command.putEventSource.policy = source.policy.wire
            if let description = source.description { command.putEventSource.description_p = description }
            command.putEventSource.createdAtMicros = source.createdAt.wireMicros
        case .deleteEventSource(let appId, let name):
            command.deleteEventSource.appID = appId
            command.deleteEventSource.name = name
        case .joinEventSource(let appId, let name, let ids, let parameters):
            command.joinEventSource = .init(appId: appId, name: name, ids: ids)
            if let parameters { command.joinEventSource.parameters = parameters.wireStruct }
        case .leaveEventSource(let appId, let name, let ids):
            command.leaveEventSource = .init(appId: appId, name: name, ids: ids)
        case .putPollSource(let source):
            command.putPollSource.appID = source.appId
            command.putPollSource.name = source.name
            command.putPollSource.url = source.url
            command.putPollSource.intervalSeconds = Int32(clamping: source.intervalSeconds)
            if let authorization = source.authorization { command.putPollSource.authorization = authorization }
            command.putPollSource.createdAtMicros = source.createdAt.wireMicros
        case .deletePollSource(let appId, let name):
            command.deletePollSource.appID = appId
            command.deletePollSource.name = name
        case .putWebhook(let webhook):
            command.putWebhook.appID = webhook.appId
            command.putWebhook.url = webhook.url
            command.putWebhook.events = webhook.events
            command.putWebhook.secret = webhook.secret
            command.putWebhook.createdAtMicros = webhook.createdAt.wireMicros
        case .deleteWebhook(let appId):
            command.deleteWebhook = appId
        case .setBadgeMode(let appId, let mode):
            command.setBadgeMode.appID = appId
            command.setBadgeMode.mode = mode.wire
        case .recordDeviceSync(let appId, let userId, let subscriptionId, let sequence):
            command.recordDeviceSync.appID = appId
            command.recordDeviceSync.userID = userId
            command.recordDeviceSync.subscriptionID = subscriptionId.wireBytes
            command.recordDeviceSync.sequence = sequence
        case .rotateAppKeys(let rotation):
            command.rotateAppKeys.appID = rotation.appId
            if let hash = rotation.apiKeyHash { command.rotateAppKeys.apiKeyHash = hash }
            if let key = rotation.clientSigningKey { command.rotateAppKeys.clientSigningKey = key }
            command.rotateAppKeys.retiresAtMicros = rotation.retiresAt.wireMicros
        case .setRateLimit(let appId, let limit):
            command.setRateLimit.appID = appId
            command.setRateLimit.requestsPerSecond = Int32(clamping: limit.requestsPerSecond ?? 0)
            command.setRateLimit.notificationsPerSecond = Int32(clamping: limit.notificationsPerSecond ?? 0)
        case .setIdentityProvider(let appId, let provider):
            command.setIdentityProvider.appID = appId
            if let provider {
                command.setIdentityProvider.provider.issuer = provider.issuer
                if let jwksUrl = provider.jwksUrl { command.setIdentityProvider.provider.jwksURL = jwksUrl }
                command.setIdentityProvider.provider.audience = provider.audience
                command.setIdentityProvider.provider.userIDClaim = provider.userIdClaim
            }
        case .setExternalBadge(let appId, let userId, let badge, let at):
            command.setExternalBadge.appID = appId
            command.setExternalBadge.userID = userId
            command.setExternalBadge.badge = Int64(badge)
            command.setExternalBadge.atMicros = at.wireMicros
        case .putAPIKey(let key):
            command.putApiKey.appID = key.appId
            command.putApiKey.keyID = key.keyId
            command.putApiKey.keyHash = key.keyHash
            command.putApiKey.scope = key.scope.rawValue
            command.putApiKey.name = key.name
            command.putApiKey.createdAtMicros = key.createdAt.wireMicros
        case .revokeAPIKey(let appId, let keyId, let at):
            command.revokeApiKey.appID = appId
            command.revokeApiKey.keyID = keyId
            command.revokeApiKey.revokedAtMicros = at.wireMicros
        case .recordAPIKeyUse(let appId, let keyId, let at):
            command.recordApiKeyUse.appID = appId
            command.recordApiKeyUse.keyID = keyId
            command.recordApiKeyUse.usedAtMicros = at.wireMicros
        }
        return command
    }

    init(wire: WireStorageCommand, _ field: @autoclosure () -> String) throws(WireDecodingError) {
        let action: Action
        switch wire.action {
        case .createApp(let app):
            action = .createApp(try AppRecord(wire: app, "\(field()).create_app"))
        case .setProviderCredentials(let set):
            let platform = try Platform(wire: set.provider, "\(field()).set_provider_credentials.provider")
            action = .setProviderCredentials(
                appId: set.appID, provider: platform, appPackage: set.appPackage,
                sealedCredentials: set.sealedCredentials.isEmpty ? String(decoding: set.credentialsJson, as: UTF8.self) : set.sealedCredentials)
        case .registerSubscription(let subscription):
            action = .registerSubscription(try DeviceSubscription(wire: subscription, "\(field()).register_subscription"))
        case .unregisterSubscription(let unregister):
            action = .unregisterSubscription(
                appId: unregister.appID, userId: unregister.userID,
                subscriptionId: try UUID(wire: unregister.subscriptionID, "\(field()).unregister_subscription.subscription_id"))
        case .publishNotification(let notification):
            action = .publishNotification(
                PublishedNotification(
                    appId: notification.appID, userId: notification.userID,
                    notificationId: try UUID(wire: notification.notificationID, "\(field()).publish_notification.notification_id"),
                    content: try NotificationContent(wire: notification.content, "\(field()).publish_notification.content"),
                    receivedAt: Date(wireMicros: notification.receivedAtMicros),
                    pushSubscriptionIds: notification.hasPushSubscriptionIds
                        ? try [UUID](wire: notification.pushSubscriptionIds, "\(field()).publish_notification.push_subscription_ids") : nil))
        case .publishBroadcast(let broadcast):
            action = .publishBroadcast(
                PublishedBroadcast(
                    appId: broadcast.appID, eventSource: broadcast.eventSource,
                    notificationId: try UUID(wire: broadcast.notificationID, "\(field()).publish_broadcast.notification_id"),
                    content: try NotificationContent(wire: broadcast.content, "\(field()).publish_broadcast.content"),
                    receivedAt: Date(wireMicros: broadcast.receivedAtMicros),
                    recipientPush: try [String: PushOptions](wire: broadcast.recipientPush, "\(field()).publish_broadcast.recipient_push"),
                    memberFilter: broadcast.hasMemberFilter ? [String: JSONValue](wire: broadcast.memberFilter) : nil))
        case .changeNotificationState(let change):
            action = .changeNotificationState(try NotificationStateChange(wire: change, "\(field()).change_notification_state"))
        case .expireDueNotificationsMicros(let micros):
            action = .expireDueNotifications(dueBy: Date(wireMicros: micros))
        case .purgeTombstonesMicros(let micros):
            action = .purgeTombstones(olderThan: Date(wireMicros: micros))
        case .putBrokerUser(let record):
            action = .putBrokerUser(BrokerUserRecord(
                appId: record.appID, user: record.user, createdAt: Date(wireMicros: record.createdAtMicros),
                retiresAt: record.hasRetiresAtMicros ? Date(wireMicros: record.retiresAtMicros) : nil,
                passwordHash: record.hasPasswordHash ? record.passwordHash : nil))
        case .deleteApp(let appId):
            action = .deleteApp(appId: appId)
        case .putEventSource(let source):
            action = .putEventSource(EventSourceRecord(
                appId: source.appID, name: source.name, policy: try EventSourcePolicy(wire: source.policy, "\(field()).put_event_source.policy"),
                description: source.hasDescription_p ? source.description_p : nil, createdAt: Date(wireMicros: source.createdAtMicros)))
        case .deleteEventSource(let source):
            action = .deleteEventSource(appId: source.appID, name: source.name)
        case .joinEventSource(let members):
            action = .joinEventSource(
                appId: members.appID, name: members.name, subscriptionIds: try members.ids("\(field()).join_event_source.subscription_ids"),
                parameters: members.hasParameters ? [String: JSONValue](wire: members.parameters) : nil)
        case .leaveEventSource(let members):
            action = .leaveEventSource(
                appId: members.appID, name: members.name, subscriptionIds: try members.ids("\(field()).leave_event_source.subscription_ids"))
        case .putPollSource(let source):
            action = .putPollSource(PollSourceRecord(
                appId: source.appID, name: source.name, url: source.url, intervalSeconds: Int(source.intervalSeconds),
                authorization: source.hasAuthorization ? source.authorization : nil, createdAt: Date(wireMicros: source.createdAtMicros)))
        case .deletePollSource(let source):
            action = .deletePollSource(appId: source.appID, name: source.name)
        case .putWebhook(let webhook):
            action = .putWebhook(WebhookRecord(
                appId: webhook.appID, url: webhook.url, events: webhook.events, secret: webhook.secret, createdAt: Date(wireMicros: webhook.createdAtMicros)))
        case .deleteWebhook(let appId):
            action = .deleteWebhook(appId: appId)
        case .setBadgeMode(let set):
            action = .setBadgeMode(appId: set.appID, mode: try BadgeMode(wire: set.mode, "\(field()).set_badge_mode.mode"))
        case .setRateLimit(let set):
            action = .setRateLimit(appId: set.appID, RateLimit(
                requestsPerSecond: set.requestsPerSecond > 0 ? Int(set.requestsPerSecond) : nil,
                notificationsPerSecond: set.notificationsPerSecond > 0 ? Int(set.notificationsPerSecond) : nil))
        case .setIdentityProvider(let set):
            action = .setIdentityProvider(appId: set.appID, set.hasProvider ? IdentityProvider(
                issuer: set.provider.issuer, jwksUrl: set.provider.hasJwksURL ? set.provider.jwksURL : nil, audience: set.provider.audience,
                userIdClaim: set.provider.userIDClaim) : nil)
        case .setExternalBadge(let set):
            action = .setExternalBadge(appId: set.appID, userId: set.userID, badge: Int(set.badge), at: Date(wireMicros: set.atMicros))
        case .recordDeviceSync(let sync):
            action = .recordDeviceSync(
                appId: sync.appID, userId: sync.userID,
                subscriptionId: try UUID(wire: sync.subscriptionID, "\(field()).record_device_sync.subscription_id"), sequence: sync.sequence)
        case .rotateAppKeys(let rotation):
            action = .rotateAppKeys(AppKeyRotation(
                appId: rotation.appID, apiKeyHash: rotation.hasApiKeyHash ? rotation.apiKeyHash : nil,
                clientSigningKey: rotation.hasClientSigningKey ? rotation.clientSigningKey : nil, retiresAt: Date(wireMicros: rotation.retiresAtMicros)))
        case .putApiKey(let key):
            guard let scope = APIKeyScope(rawValue: key.scope) else {
                throw WireDecodingError(.malformed, "\(field()).put_api_key.scope is not a scope: \(key.scope)")
            }
            action = .putAPIKey(APIKeyRecord(
                appId: key.appID, keyId: key.keyID, keyHash: key.keyHash, scope: scope, name: key.name, createdAt: Date(wireMicros: key.createdAtMicros)))
        case .revokeApiKey(let revocation):
            action = .revokeAPIKey(appId: revocation.appID, keyId: revocation.keyID, at: Date(wireMicros: revocation.revokedAtMicros))
        case .recordApiKeyUse(let use):
            action = .recordAPIKeyUse(appId: use.appID, keyId: use.keyID, at: Date(wireMicros: use.usedAtMicros))
        case nil:
            throw WireDecodingError(.malformed, "\(field()) has no action this build knows")
        }
        self.init(
            commandId: try UUID(wire: wire.commandID, "\(field()).command_id"), issuedAt: Date(wireMicros: wire.issuedAtMicros), action: action,
            announceWhenApplied: wire.announceApplied, polledItem: wire.hasPolledItem ? PolledItem(wire: wire.polledItem) : nil)
    }
}

extension PolledItem {
    var wire: WirePolledItem {
        var item = WirePolledItem()
        item.source = source
        item.appNotificationID = appNotificationId
        item.digest = digest
        return item
    }

    init(wire: WirePolledItem) {
        self.init(source: wire.source, appNotificationId: wire.appNotificationID, digest: wire.digest)
    }
}

extension AppRecord {
    var wire: WireAppRecord {
        var app = WireAppRecord()
        app.appID = appId
        app.name = name
        app.apiKeyHash = apiKeyHash
        app.clientSigningKey = clientSigningKey
        if let brokerUser { app.brokerUser = brokerUser }
        app.createdAtMicros = createdAt.wireMicros
        app.badgeMode = badgeMode.wire
        return app
    }

    init(wire: WireAppRecord, _ field: @autoclosure () -> String) throws(WireDecodingError) {
        self.init(
            appId: wire.appID, name: wire.name, apiKeyHash: wire.apiKeyHash, clientSigningKey: wire.clientSigningKey,
            brokerUser: wire.hasBrokerUser ? wire.brokerUser : nil, createdAt: Date(wireMicros: wire.createdAtMicros),
            badgeMode: wire.badgeMode == .unspecified ? .unread : try BadgeMode(wire: wire.badgeMode, "\(field()).badge_mode"))
    }
}

extension DeviceSubscription {
    var wire: WireDeviceSubscription {
        var subscription = WireDeviceSubscription()
        subscription.subscriptionID = subscriptionId.wireBytes
        subscription.appID = appId
        subscription.userID = userId
        subscription.platform = platform.wire
        subscription.pushToken = pushToken
        if let keys { subscription.keys = keys.wire }
        if let appPackage { subscription.appPackage = appPackage }
        if let displayName { subscription.displayName = displayName }
        subscription.expirationMicros = expirationDateTime.wireMicros
        subscription.registeredAtMicros = registeredAt.wireMicros
        if let eventSources { subscription.eventSources.names = eventSources }
        if let replacesSubscriptionId { subscription.replacesSubscriptionID = replacesSubscriptionId.wireBytes }
        return subscription
    }

    init(wire: WireDeviceSubscription, _ field: @autoclosure () -> String) throws(WireDecodingError) {
        self.init(
            subscriptionId: try UUID(wire: wire.subscriptionID, "\(field()).subscription_id"), appId: wire.appID, userId: wire.userID,
            platform: try Platform(wire: wire.platform, "\(field()).platform"), pushToken: wire.pushToken,
            keys: wire.hasKeys ? WebPushKeys(wire: wire.keys) : nil, appPackage: wire.hasAppPackage ? wire.appPackage : nil,
            displayName: wire.hasDisplayName ? wire.displayName : nil, expirationDateTime: Date(wireMicros: wire.expirationMicros),
            registeredAt: Date(wireMicros: wire.registeredAtMicros), eventSources: wire.hasEventSources ? wire.eventSources.names : nil,
            replacesSubscriptionId: wire.hasReplacesSubscriptionID
                ? try UUID(wire: wire.replacesSubscriptionID, "\(field()).replaces_subscription_id") : nil)
    }
}

extension NotificationStateChange {
    var wire: WireNotificationStateChange {
        var change = WireNotificationStateChange()
        change.appID = appId
        change.userID = userId
        change.notificationID = notificationId.wireBytes
        if let readState { change.readState = readState.wire }
        if let userActionState { change.userActionState = userActionState.wire }
        change.delete = delete
        if let originSubscriptionId { change.originSubscriptionID = originSubscriptionId.wireBytes }
        change.requestedAtMicros = requestedAt.wireMicros
        return change
    }

    init(wire: WireNotificationStateChange, _ field: @autoclosure () -> String) throws(WireDecodingError) {
        self.init(
            appId: wire.appID, userId: wire.userID, notificationId: try UUID(wire: wire.notificationID, "\(field()).notification_id"),
            readState: wire.hasReadState ? try ReadState(wire: wire.readState, "\(field()).read_state") : nil,
            userActionState: wire.hasUserActionState ? try UserActionState(wire: wire.userActionState, "\(field()).user_action_state") : nil,
            delete: wire.delete,
            originSubscriptionId: wire.hasOriginSubscriptionID ? try UUID(wire: wire.originSubscriptionID, "\(field()).origin_subscription_id") : nil,
            requestedAt: Date(wireMicros: wire.requestedAtMicros))
    }
}

extension WireEventSourceMembers {
    init(appId: String, name: String, ids: [UUID]) {
        self.init()
        appID = appId
        self.name = name
        subscriptionIds = ids.map(\.wireBytes)
    }

    func ids(_ field: @autoclosure () -> String) throws(WireDecodingError) -> [UUID] {
        var ids: [UUID] = []
        ids.reserveCapacity(subscriptionIds.count)
        for (index, bytes) in subscriptionIds.enumerated() { ids.append(try UUID(wire: bytes, "\(field())[\(index)]")) }
        return ids
    }
}
