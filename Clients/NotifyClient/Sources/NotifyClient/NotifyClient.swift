import Foundation
import NotifyAPI

/// The client apps integrate: registers the device, turns pushes into syncs, keeps a local cache of the
/// user's active notifications (and the sync cursor) that survives relaunches, sends state changes
/// (queued while offline), and optionally keeps a live stream open.
///
/// ```swift
/// let client = try NotifyClient(
///     configuration: .init(baseURL: url, appId: appId, storageDirectory: cacheDirectory),
///     tokenProvider: { try await myBackend.freshUserToken() })
/// try await client.subscribe(pushToken: apnsTokenHex)
/// // application(_:didReceiveRemoteNotification:):
/// if case .processed(let changes) = try await client.processPushNotification(userInfo) { ... }
/// ```
///
/// Every change the client applies is emitted once, on every `changes` stream and to `onChange`.
public actor NotifyClient {
    /// Where the service is, which app this is, and where the cache file lives.
    public struct Configuration: Sendable {
        public var baseURL: URL
        public var appId: String
        /// A directory only this client (of this app and user) writes to; created when missing.
        public var storageDirectory: URL

        public init(baseURL: URL, appId: String, storageDirectory: URL) {
            self.baseURL = baseURL
            self.appId = appId
            self.storageDirectory = storageDirectory
        }
    }

    public nonisolated let configuration: Configuration
    let transport: HTTPTransport
    let cacheFile: CacheFile
    let broadcaster: ChangeBroadcaster
    var state: CacheState
    var flushTask: Task<Void, any Error>?
    var liveTask: Task<Void, Never>?

    /// Loads the cache from `configuration.storageDirectory` (no network call).
    /// - Parameters:
    ///   - tokenProvider: answers a valid user token (a JWT the app server minted, or the ID token of the app's
    ///     identity provider when the app names one); called for the first request and again, once, whenever the
    ///     service answers 401.
    ///   - onChange: called with every change applied to the cache, in order.
    ///   - transport: what sends the requests (`URLSessionTransport` unless given).
    /// - Throws: `NotifyClientError` (`.storage`) when an existing cache file cannot be read.
    public init(
        configuration: Configuration,
        tokenProvider: @escaping @Sendable () async throws -> String,
        onChange: (@Sendable (NotificationChange) -> Void)? = nil,
        transport: any NotifyTransport = URLSessionTransport()
    ) throws {
        self.configuration = configuration
        self.transport = HTTPTransport(
            baseURL: configuration.baseURL, appId: configuration.appId, transport: transport, tokenProvider: tokenProvider)
        cacheFile = CacheFile(directory: configuration.storageDirectory, appId: configuration.appId)
        broadcaster = ChangeBroadcaster(callback: onChange)
        state = try cacheFile.load()
    }

    deinit {
        liveTask?.cancel()
        broadcaster.finish()
    }

    /// A new stream of every change applied from now on (by sync, a processed push or the live stream).
    /// Each access makes a separate observer; all observers see every change.
    public nonisolated var changes: AsyncStream<NotificationChange> {
        broadcaster.subscribe()
    }

    /// This device's subscription, if it subscribed.
    public var subscription: Subscription? { state.subscription }

    /// State changes and deletions made here that the service has not acknowledged yet.
    public var pendingChangeCount: Int { state.outbox.count }

    /// Up to `maxSize` notifications of the local cache that match `filter`, newest first
    /// (the Rome SDK's `UserNotificationReader.readBatchAsync`, answered from the cache).
    public func readBatch(maxSize: Int = 100, filter: NotificationFilter = NotificationFilter()) -> [NotificationView] {
        let now = Date()
        return state.notifications.values
            .filter { filter.matches($0, now: now) }
            .sorted { ($0.createdDateTime, $0.id.uuidString) > ($1.createdDateTime, $1.id.uuidString) }
            .prefix(max(0, maxSize))
            .map { $0 }
    }

    /// Visual notifications of the local cache whose `displayTimeToLive` has passed by `now`: remove them from the
    /// system's notification centre (on Apple platforms `removeDeliveredNotifications(withIdentifiers:)` with their ids).
    /// They stay in the cache and the history; only their display ends.
    public func notificationsPastDisplayTime(at now: Date = Date()) -> [NotificationView] {
        state.notifications.values
            .filter { notification in
                guard notification.payload?.visualContent != nil, let end = notification.displayExpiresAt else { return false }
                return end <= now
            }
            .sorted { $0.createdDateTime < $1.createdDateTime }
    }

    /// One notification of the local cache.
    public func notification(id: UUID) -> NotificationView? {
        state.notifications[id]
    }

    func save() throws(NotifyClientError) {
        try cacheFile.save(state)
    }

    func decode<Value: Decodable>(_ type: Value.Type, from data: Data) throws(NotifyClientError) -> Value {
        do {
            return try WireCoding.makeDecoder().decode(type, from: data)
        } catch {
            throw NotifyClientError(.invalidResponse, "unexpected \(Value.self) from the service", underlying: error)
        }
    }

    func encode(_ value: some Encodable) throws(NotifyClientError) -> Data {
        do {
            return try WireCoding.makeEncoder().encode(value)
        } catch {
            throw NotifyClientError(.invalidArgument, "cannot encode \(type(of: value))", underlying: error)
        }
    }
}
