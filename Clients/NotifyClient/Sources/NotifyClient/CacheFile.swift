import Foundation
import NotifyAPI

/// Everything the client keeps between launches: the sync cursor, the active notifications,
/// this device's subscription and the outbox of unsent state changes. One JSON file, replaced atomically.
struct CacheState: Codable, Sendable, Equatable {
    /// The sequence of the last change applied (0: nothing synced yet).
    var sequence: Int64 = 0
    /// The last of the app's broadcasts applied (0: none).
    var broadcastSequence: Int64 = 0

    /// Where the sync has reached, as the cursor carries it.
    var position: SyncPosition { SyncPosition(sequence: sequence, broadcastSequence: broadcastSequence) }
    var notifications: [UUID: NotificationView] = [:]
    var subscription: Subscription?
    var outbox: [PendingChange] = []

    private enum CodingKeys: String, CodingKey { case version, sequence, broadcastSequence, notifications, subscription, outbox }
    private static let version = 1

    init() {}

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let version = try container.decode(Int.self, forKey: .version)
        guard version == Self.version else {
            throw DecodingError.dataCorruptedError(forKey: .version, in: container, debugDescription: "unknown cache version \(version)")
        }
        sequence = try container.decode(Int64.self, forKey: .sequence)
        // A cache written before broadcasts were in feeds has none.
        broadcastSequence = try container.decodeIfPresent(Int64.self, forKey: .broadcastSequence) ?? 0
        let views = try container.decode([NotificationView].self, forKey: .notifications)
        notifications = Dictionary(views.map { ($0.id, $0) }, uniquingKeysWith: { $1 })
        subscription = try container.decodeIfPresent(Subscription.self, forKey: .subscription)
        outbox = try container.decode([PendingChange].self, forKey: .outbox)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(Self.version, forKey: .version)
        try container.encode(sequence, forKey: .sequence)
        try container.encode(broadcastSequence, forKey: .broadcastSequence)
        try container.encode(notifications.values.sorted { $0.sequence < $1.sequence }, forKey: .notifications)
        try container.encodeIfPresent(subscription, forKey: .subscription)
        try container.encode(outbox, forKey: .outbox)
    }
}

/// Reads and writes the cache file `notify-<appId>.json` in the storage directory.
struct CacheFile: Sendable {
    let url: URL

    init(directory: URL, appId: String) {
        let safeName = String(appId.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" ? $0 : "_" })
        url = directory.appending(path: "notify-\(safeName).json")
    }

    /// The stored state, or an empty one when there is no file yet.
    func load() throws(NotifyClientError) -> CacheState {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch let error as CocoaError where error.code == .fileReadNoSuchFile {
            return CacheState()
        } catch {
            throw NotifyClientError(.storage, "cannot read \(url.path)", underlying: error)
        }
        do {
            return try WireCoding.makeDecoder().decode(CacheState.self, from: data)
        } catch {
            throw NotifyClientError(.storage, "\(url.path) is not a cache this library wrote", underlying: error)
        }
    }

    /// Writes `state` to a temporary file next to the cache and renames it over the cache
    /// (`Data.WritingOptions.atomic`), so a crash leaves either the old or the new state.
    func save(_ state: CacheState) throws(NotifyClientError) {
        do {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try WireCoding.makeEncoder().encode(state).write(to: url, options: .atomic)
        } catch {
            throw NotifyClientError(.storage, "cannot write \(url.path)", underlying: error)
        }
    }
}
