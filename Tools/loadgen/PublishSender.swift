import Foundation

/// A way of getting requests to ingest. It lives on the pump's event loop: `send` is called there, and must call
/// `completion` there, once.
protocol PublishSender: AnyObject {
    /// Sends `request`; the pump never has more requests in flight than the concurrency it was built for.
    func send(_ request: PublishRequest, completion: @escaping (PublishResult) -> Void)
    /// Lets go of connections once every request was answered.
    func close()
}

/// One request's notifications, `first..<first + count`, and the JSON carrying them.
struct PublishRequest: Sendable {
    let first: Int
    let count: Int
    let body: [UInt8]
}

/// What happened to one request.
struct PublishResult: Sendable {
    let first: Int
    let count: Int
    let answeredAt: Date
    /// nil: transport error.
    let status: Int?
    let elapsed: Duration
    /// Per notification, in order.
    let items: [PublishAnswer.Item]
    /// Whether the answer carried Retry-After.
    let retryAfter: Bool
    let transportError: String?

    /// Every notification of `request` failed to reach ingest.
    static func transportError(_ error: any Error, for request: PublishRequest) -> PublishResult {
        PublishResult(
            first: request.first, count: request.count, answeredAt: Date(), status: nil, elapsed: .zero,
            items: Array(repeating: (0, nil), count: request.count), retryAfter: false, transportError: "\(error)")
    }
}
