import Foundation
import NotifyModels
import NotifyStore
import Synchronization

/// Apps and their settings held in memory: an `AppStore` that tests fill with `apply`, given the commands storage would
/// have applied (a broker user counts as created in RabbitMQ at once), or with `addWebhookAttempt`.
public final class MemoryAppStore: AppStore {
    private struct App {
        var record: AppRecord
        var rateLimit = RateLimit()
        var identityProvider: IdentityProvider?
        var previousAPIKey: (hash: String, retiresAt: Date)?
        var previousSigningKey: (sealed: String, retiresAt: Date)?
        var providers: [String: (sealed: String, updatedAt: Date)] = [:]
        var keys: [String: (record: APIKeyRecord, lastUsedAt: Date?, revokedAt: Date?)] = [:]
        var badges: [String: Int] = [:]
        var pollSources: [String: PollSourceRecord] = [:]
        var webhook: WebhookRecord?
        var ledgers: [String: [UUID: String]] = [:]
        var attempts: [WebhookAttempt] = []
    }

    private struct State {
        var apps: [String: App] = [:]
        /// Broker users by name (they outlive a deleted app until RabbitMQ deleted them; here at once).
        var brokerUsers: [String: BrokerUserRecord] = [:]
    }

    private let state = Mutex(State())

    public init() {}

    /// Applies an app command as storage would; other commands are left alone.
    public func apply(_ action: StorageCommand.Action) {
        state.withLock { state in
            switch action {
            case .createApp(let record):
                state.apps[record.appId] = App(record: record)
            case .deleteApp(let appId):
                state.apps[appId] = nil
                state.brokerUsers = state.brokerUsers.filter { $0.value.appId != appId }
            case .putBrokerUser(let record):
                if let retires = record.retiresAt, retires <= Date() {
                    state.brokerUsers[record.user] = nil
                } else {
                    state.brokerUsers[record.user] = record
                }
            case .setProviderCredentials(let appId, let provider, let package, let sealed):
                state.apps[appId]?.providers["\(provider.rawValue)/\(package)"] = (sealed, Date())
            case .setBadgeMode(let appId, let mode):
                state.apps[appId]?.record.badgeMode = mode
            case .setRateLimit(let appId, let limit):
                state.apps[appId]?.rateLimit = limit
            case .setIdentityProvider(let appId, let provider):
                state.apps[appId]?.identityProvider = provider
            case .rotateAppKeys(let rotation):
                guard var app = state.apps[rotation.appId] else { return }
                if let hash = rotation.apiKeyHash {
                    app.previousAPIKey = (app.record.apiKeyHash, rotation.retiresAt)
                    app.record.apiKeyHash = hash
                }
                if let sealed = rotation.clientSigningKey {
                    app.previousSigningKey = (app.record.clientSigningKey, rotation.retiresAt)
                    app.record.clientSigningKey = sealed
                }
                state.apps[rotation.appId] = app
            case .putAPIKey(let record):
                state.apps[record.appId]?.keys[record.keyId] = (record, nil, nil)
            case .revokeAPIKey(let appId, let keyId, let at):
                if state.apps[appId]?.keys[keyId]?.revokedAt == nil { state.apps[appId]?.keys[keyId]?.revokedAt = at }
            case .recordAPIKeyUse(let appId, let keyId, let at):
                state.apps[appId]?.keys[keyId]?.lastUsedAt = at
            case .setExternalBadge(let appId, let userId, let badge, _):
                state.apps[appId]?.badges[userId] = badge
            case .putPollSource(let record):
                state.apps[record.appId]?.pollSources[record.name] = record
            case .deletePollSource(let appId, let name):
                state.apps[appId]?.pollSources[name] = nil
            case .putWebhook(let record):
                state.apps[record.appId]?.webhook = record
            case .deleteWebhook(let appId):
                state.apps[appId]?.webhook = nil
            default:
                break
            }
        }
    }

    /// Logs one webhook attempt, as storage does from push-dispatch's reports.
    public func addWebhookAttempt(_ attempt: WebhookAttempt) {
        state.withLock { $0.apps[attempt.appId]?.attempts.append(attempt) }
    }

    public func credentials(appId: String) async throws -> StoredAppCredentials? {
        state.withLock { state in
            guard let app = state.apps[appId] else { return nil }
            var users: [String: Date?] = [:]
            for user in state.brokerUsers.values where user.appId == appId { users[user.user] = user.retiresAt }
            var scoped: [String: (keyId: String, scope: APIKeyScope)] = [:]
            for key in app.keys.values where key.revokedAt == nil { scoped[key.record.keyHash] = (key.record.keyId, key.record.scope) }
            return StoredAppCredentials(
                apiKeyHash: app.record.apiKeyHash, sealedClientSigningKey: app.record.clientSigningKey, badgeMode: app.record.badgeMode,
                rateLimit: app.rateLimit, previousAPIKeyHash: app.previousAPIKey, previousSealedClientSigningKey: app.previousSigningKey,
                identityProvider: app.identityProvider, brokerUsers: users, scopedKeys: scoped)
        }
    }

    public func apps(after: String?, limit: Int, appId: String?) async throws -> [AppView] {
        let now = Date()
        return state.withLock { state in
            state.apps.values.filter { app in
                (appId == nil || app.record.appId == appId) && (after.map { app.record.appId > $0 } ?? true)
            }.sorted { $0.record.appId < $1.record.appId }.prefix(limit).map { app in
                AppView(
                    appId: app.record.appId, name: app.record.name, createdAt: app.record.createdAt, badgeMode: app.record.badgeMode.rawValue,
                    rateLimit: app.rateLimit,
                    providers: app.providers.keys.sorted().map { key in
                        let parts = key.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
                        return AppView.Provider(
                            provider: parts[0], appPackage: parts[1].isEmpty ? nil : parts[1], updatedAt: app.providers[key]!.updatedAt, rejectedReason: nil)
                    },
                    brokerUsers: state.brokerUsers.values.filter { $0.appId == app.record.appId }.sorted { $0.user < $1.user }.map {
                        AppView.BrokerUser(user: $0.user, retiresAt: $0.retiresAt)
                    },
                    previousApiKeyRetiresAt: app.previousAPIKey.flatMap { $0.retiresAt > now ? $0.retiresAt : nil },
                    previousClientSigningKeyRetiresAt: app.previousSigningKey.flatMap { $0.retiresAt > now ? $0.retiresAt : nil },
                    identityProvider: app.identityProvider)
            }
        }
    }

    public func isGone(appId: String) async throws -> Bool {
        state.withLock { state in state.apps[appId] == nil && !state.brokerUsers.values.contains { $0.appId == appId } }
    }

    public func providerSecret(appId: String, provider: String, appPackage: String) async throws -> String? {
        state.withLock { $0.apps[appId]?.providers["\(provider)/\(appPackage)"]?.sealed }
    }

    public func isProvisioned(brokerUser user: String) async throws -> Bool {
        state.withLock { $0.brokerUsers[user] != nil }
    }

    public func apiKeys(appId: String, keyId: String?) async throws -> [APIKeyView] {
        state.withLock { state in
            (state.apps[appId]?.keys.values ?? [:].values).filter { keyId == nil || $0.record.keyId == keyId }
                .sorted { ($0.record.createdAt, $1.record.keyId) > ($1.record.createdAt, $0.record.keyId) }
                .map { key in
                    APIKeyView(
                        keyId: key.record.keyId, scope: key.record.scope, name: key.record.name, createdAt: key.record.createdAt,
                        lastUsedAt: key.lastUsedAt, revokedAt: key.revokedAt)
                }
        }
    }

    public func externalBadge(appId: String, userId: String) async throws -> Int? {
        state.withLock { $0.apps[appId]?.badges[userId] }
    }

    public func pollSources(appId: String, named name: String?) async throws -> [PollSourceView] {
        state.withLock { state in
            (state.apps[appId]?.pollSources.values ?? [:].values).filter { name == nil || $0.name == name }.sorted { $0.name < $1.name }.map {
                PollSourceView(name: $0.name, url: $0.url, intervalSeconds: $0.intervalSeconds, hasAuthorization: $0.authorization != nil, createdAt: $0.createdAt)
            }
        }
    }

    public func allPollSources() async throws -> [PollSourceRecord] {
        state.withLock { state in state.apps.values.flatMap(\.pollSources.values) }
    }

    /// Records that the source served `digest` for the notification, as storage's ledger does.
    public func recordPolledItem(appId: String, source: String, notificationId: UUID, digest: String) {
        state.withLock { $0.apps[appId]?.ledgers[source, default: [:]][notificationId] = digest }
    }

    public func pollLedger(appId: String, source: String) async throws -> [UUID: String] {
        state.withLock { $0.apps[appId]?.ledgers[source] ?? [:] }
    }

    public func webhook(appId: String) async throws -> StoredWebhook? {
        state.withLock { state in
            state.apps[appId]?.webhook.map {
                StoredWebhook(url: $0.url, events: $0.events.compactMap(WebhookEventType.init(rawValue:)), sealedSecret: $0.secret)
            }
        }
    }

    public func webhookAttempts(appId: String, limit: Int) async throws -> [WebhookAttempt] {
        state.withLock { state in
            Array((state.apps[appId]?.attempts ?? []).sorted { ($0.at, $0.attempt) > ($1.at, $1.attempt) }.prefix(limit))
        }
    }
}
