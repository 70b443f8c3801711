import Foundation
import NotifyModels

/// One push the sandbox recorded for one of this run's devices.
struct ObservedPush: Sendable {
    let notificationId: UUID
    let deviceToken: String
    /// The user's sequence of the change the push announces (`notify.seq`).
    let sequence: Int64?
    let receivedAt: Date
}

/// Pages through the sandbox's `GET /deliveries?provider=<provider>&after=<lastId>` and keeps the pushes
/// addressed to this run's devices; or, `perToken`, asks for each device's pushes apart (`&token=`), which costs a
/// request per device but reads none of the other pushes the sandbox records meanwhile (a broadcast's million). One
/// caller at a time.
actor DeliveryCollector {
    private struct PairKey: Hashable { let id: UUID; let token: String }

    static let pageSize = 5000

    private let client: JSONClient
    private let sandboxURL: String
    private let tokens: Set<String>
    private let counters: LiveCounters
    private let provider: String
    private let perToken: Bool
    private var lastId = 0
    /// Per device, `perToken`: the id its next page starts after.
    private var cursors: [String: Int] = [:]
    /// The newest delivery id when the collector started (`startAtNewest`), and the newest it was answered since, of any
    /// device and provider.
    private(set) var startId = 0
    private(set) var newestId = 0
    private var uniquePairs = Set<PairKey>()
    private(set) var pushes: [ObservedPush] = []
    /// Our devices' records without a readable notify.id or receivedAt.
    private(set) var unreadable = 0

    init(
        client: JSONClient, sandboxURL: String, tokens: Set<String>, counters: LiveCounters, provider: DeviceKind = .apns, perToken: Bool = false
    ) {
        self.client = client
        self.sandboxURL = sandboxURL
        self.tokens = tokens
        self.counters = counters
        self.provider = provider.rawValue
        self.perToken = perToken
    }

    /// Skips everything recorded before this run: asks for a token nobody has, which answers the newest id.
    func startAtNewest() async throws {
        let page = try await fetch("\(sandboxURL)/deliveries?provider=\(provider)&token=loadgen-none")
        lastId = page.lastId
        startId = page.lastId
        newestId = page.lastId
        cursors = Dictionary(uniqueKeysWithValues: tokens.map { ($0, page.lastId) })
    }

    /// Reads every page recorded since the last call.
    func pollOnce() async throws {
        if perToken {
            for token in tokens { cursors[token] = try await poll(after: cursors[token] ?? lastId, filter: "&token=\(token)") }
        } else {
            lastId = try await poll(after: lastId, filter: "")
        }
        counters.setDelivered(uniquePairs.count)
    }

    /// Reads the pages after `after` that `filter` (query parameters) selects; answers the id to continue after.
    private func poll(after start: Int, filter: String) async throws -> Int {
        var after = start
        while true {
            let page = try await fetch("\(sandboxURL)/deliveries?provider=\(provider)\(filter)&after=\(after)&limit=\(Self.pageSize)")
            for record in page.deliveries where tokens.contains(record.deviceToken) {
                guard let text = record.notificationId, let id = UUID(uuidString: text),
                    let receivedAt = WireCoding.parseTimestamp(record.receivedAt)
                else {
                    unreadable += 1
                    continue
                }
                pushes.append(ObservedPush(notificationId: id, deviceToken: record.deviceToken, sequence: record.sequence, receivedAt: receivedAt))
                uniquePairs.insert(PairKey(id: id, token: record.deviceToken))
            }
            after = max(after, page.lastId)
            newestId = max(newestId, page.lastId)
            if page.deliveries.count < Self.pageSize { return after }
        }
    }

    /// Polls every 250 ms until the calling task is cancelled.
    func pollUntilCancelled() async {
        while !Task.isCancelled {
            do { try await pollOnce() } catch { HTTPLoadCommand.log("polling the sandbox failed: \(error)") }
            try? await Task.sleep(for: .milliseconds(250))
        }
    }

    /// Polls until `expected` distinct pushes arrived (true) or `timeout` passed (false).
    func drain(expected: Int, timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while true {
            do { try await pollOnce() } catch { HTTPLoadCommand.log("polling the sandbox failed: \(error)") }
            if uniquePairs.count >= expected { return true }
            if ContinuousClock.now >= deadline { return false }
            try? await Task.sleep(for: .milliseconds(200))
        }
    }

    /// Polls until a push of each notification in `expected` reached each of its devices (true) or `timeout` passed
    /// (false): what a run whose unanswered publishes may be delivered too waits for, since a count of distinct pushes
    /// would count theirs.
    func drain(expected: [(notificationId: UUID, deviceTokens: [String])], timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        var missing = Set(expected.flatMap { item in item.deviceTokens.map { PairKey(id: item.notificationId, token: $0) } })
        while true {
            do { try await pollOnce() } catch { HTTPLoadCommand.log("polling the sandbox failed: \(error)") }
            missing.subtract(uniquePairs)
            if missing.isEmpty { return true }
            if ContinuousClock.now >= deadline { return false }
            try? await Task.sleep(for: .milliseconds(200))
        }
    }

    private func fetch(_ url: String) async throws -> DeliveryPage {
        let answer = try await client.send(.GET, url)
        return try JSONClient.read(answer, method: .GET, url: url) { try DeliveryPage(decodingJSON: $0) }
    }
}
