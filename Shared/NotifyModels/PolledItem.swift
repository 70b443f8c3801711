/// Where a polled publish came from: the poll source (of the command's app) that served it, the item's
/// `appNotificationId`, and the digest of the item as served. Storage keeps the digest of every item a source served
/// (`poll_items`, by the notification's id) and applies a polled publish only when its digest differs from the one kept.
public struct PolledItem: Codable, Sendable, Equatable {
    /// The poll source's name.
    public var source: String
    public var appNotificationId: String
    /// Lowercase hex of the first 16 bytes of SHA-256 over the item's JSON (keys sorted).
    public var digest: String

    public init(source: String, appNotificationId: String, digest: String) {
        self.source = source
        self.appNotificationId = appNotificationId
        self.digest = digest
    }
}
