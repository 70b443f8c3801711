import Foundation
import NotifyModels
import NotifyStoreTesting
import NotifyTestSupport
import PostgresNIO
import Testing

/// Ingest reading the changes feed and history from a streaming replica (`NOTIFY_REPLICA_DATABASE_URL`): each test runs
/// a second ingest of its own, beside the stack's, pointed at the standby `deploy/local/postgres-replica.sh` started.
extension EndToEndTests {
    @Suite("reads from a streaming replica")
    struct ReplicaTests {
        private static let environment = ProcessInfo.processInfo.environment
        /// The standby's read-only URL; test.sh sets it when it started a delayed standby.
        static let standbyURL = environment["NOTIFY_TEST_REPLICA_DATABASE_URL"]
        /// The second ingest's port, and the next one for the ingest whose standby cannot be reached.
        private static let ingestPort = Int(environment["NOTIFY_TEST_REPLICA_INGEST_PORT"] ?? "")
            ?? (Int(environment["NOTIFY_INGEST_PORT"] ?? "") ?? 22080) + 7

        @Test(
            "a delayed standby answers a prefix of the feed, never a gap; its cursor, used again after the lag, gives the rest once; history catches up",
            .enabled(if: standbyURL != nil, "needs a delayed standby: NOTIFY_TEST_REPLICA_DATABASE_URL (deploy/local/postgres-replica.sh start with NOTIFY_POSTGRES_REPLICA_DELAY_MS=1500)"))
        func feedUnderLagIsAPrefix() async throws {
            let standbyURL = try #require(Self.standbyURL)
            let delay = try await Self.applyDelay(of: standbyURL)
            try #require(delay >= .milliseconds(500), "the standby applies commits after \(delay): too little lag to test (NOTIFY_POSTGRES_REPLICA_DELAY_MS)")
            let app = try await TestApp.create()
            let userId = "replica-\(uniqueSuffix())"
            let user = try await app.user(userId)
            let publishes = 20
            let expected = publishes + publishes / 4

            try await Database.inspecting { primary in
                // How many of the user's changes the primary committed.
                func committed() async throws -> Int { try await primary.changeSequences(appId: app.appId, userId: userId).count }
                try await SecondIngest.running(port: Self.ingestPort, replicaURL: standbyURL) { lagging in
                    // The writer publishes a notification every 100 ms, and marks every fourth read (a state change).
                    let writing = WriterState()
                    let writer = Task {
                        do {
                            var ids: [String] = []
                            for index in 0..<publishes {
                                ids.append(try await app.publishAccepted(.alert(to: userId, title: "replicated \(index)")))
                                if index % 4 == 3 { try await user.patchAccepted(ids[index - 2], StateChangeRequest(readState: .read)) }
                                try await Task.sleep(for: .milliseconds(100))
                            }
                        } catch {
                            await writing.finish()
                            throw error
                        }
                        await writing.finish()
                    }
                    // The reader follows the lagging feed with its cursor, a few changes a page: every page continues the last.
                    var read: [Int64] = []
                    var cursor: String?
                    var pagesBehind = 0
                    while true {
                        let committedBefore = try await committed()
                        let page = try await lagging.changes(of: user, after: cursor, limit: 5)
                        read += page.changes.map(\.sequence)
                        cursor = page.cursor
                        try #require(read == Self.firstSequences(read.count), "the standby's feed has a gap or a repeat: \(read)")
                        if page.hasMore { continue }
                        if read.count < committedBefore { pagesBehind += 1 }
                        if await writing.done { break }
                        try await Task.sleep(for: .milliseconds(50))
                    }
                    try await writer.value
                    #expect(pagesBehind >= 3, "the standby was behind the primary at only \(pagesBehind) reads: the test made no lag")

                    // Everything is committed on the primary; the standby, a moment later, still answers a prefix.
                    _ = try await Database.waitFor("the changes committed on the primary") { try await committed() } until: { $0 == expected }
                    let underLag = try await lagging.allChanges(of: user, after: cursor)
                    read += underLag.changes.map(\.sequence)
                    #expect(read == Self.firstSequences(read.count), "under lag: not a prefix: \(read)")
                    #expect(read.count < expected, "the standby showed every change at once, \(delay) of lag notwithstanding")

                    // After the lag, the same cursor gives the rest, each change once.
                    try await Task.sleep(for: delay + .seconds(1))
                    let rest = try await lagging.allChanges(of: user, after: underLag.cursor)
                    #expect(!rest.changes.isEmpty, "nothing came after the cursor taken under lag")
                    read += rest.changes.map(\.sequence)
                    #expect(read == Self.firstSequences(expected), "the union of the standby's pages is not every change once: \(read)")

                    // The whole feed and history, read from the standby, are the primary's.
                    let fromStandby = try await lagging.allChanges(of: user, after: nil).changes
                    let fromPrimary = try await user.allChanges(after: nil).changes
                    #expect(fromStandby.map(Self.summary) == fromPrimary.map(Self.summary))
                    let historyFromPrimary = try await user.history(query: "limit=100").notifications
                    #expect(try await lagging.history(of: user).map(Self.summary) == historyFromPrimary.map(Self.summary))

                    // History lags too, and catches up: a state change made through the primary shows after the delay.
                    let newest = try #require(historyFromPrimary.first)
                    try await user.patchAccepted(newest.id.uuidString.lowercased(), StateChangeRequest(readState: .read))
                    let stale = try await lagging.history(of: user)
                    #expect(stale.first.map(Self.summary) == Self.summary(newest), "the standby showed the state change before its delay")
                    try await Task.sleep(for: delay + .seconds(1))
                    let caughtUp = try await lagging.history(of: user)
                    #expect(caughtUp.first?.readState == .read, "the standby's history does not show the state change after the lag")
                    #expect(caughtUp.map(Self.summary) == (try await user.history(query: "limit=100").notifications.map(Self.summary)))
                }
            }
        }

        @Test("a standby that cannot be reached: the changes feed and history are read from the primary")
        func unreachableStandbyFallsBackToThePrimary() async throws {
            let app = try await TestApp.create()
            let userId = "no-replica-\(uniqueSuffix())"
            let user = try await app.user(userId)
            for index in 0..<3 { _ = try await app.publishAccepted(.alert(to: userId, title: "fallback \(index)")) }
            _ = try await user.waitForChanges(after: nil) { $0.count >= 3 }
            // Nothing listens on port 1: every connection to this "standby" is refused.
            try await SecondIngest.running(port: Self.ingestPort + 1, replicaURL: "postgres://notify_reader:notify_reader@127.0.0.1:1/notify") { ingest in
                let started = ContinuousClock.now
                let changes = try await ingest.allChanges(of: user, after: nil).changes
                #expect(changes.map(\.sequence) == [1, 2, 3])
                #expect(try await ingest.history(of: user).count == 3)
                #expect(ContinuousClock.now - started < .seconds(10), "falling back took \(ContinuousClock.now - started)")
            }
        }

        /// Whether the writer is done (or failed).
        private actor WriterState {
            var done = false
            func finish() { done = true }
        }

        /// 1, 2, ... count: a user's first `count` sequence numbers.
        private static func firstSequences(_ count: Int) -> [Int64] {
            (0..<count).map { Int64($0) + 1 }
        }

        /// What must agree between the standby and the primary: a change's number and kind, a notification's id and state.
        private static func summary(_ change: NotificationChange) -> String {
            "\(change.sequence):\(change.kind.rawValue):\(summary(change.notification))"
        }

        private static func summary(_ view: NotificationView) -> String {
            "\(view.id):\(view.readState.rawValue):\(view.userActionState.rawValue):\(view.status.rawValue)"
        }

        /// The standby's `recovery_min_apply_delay`.
        private static func applyDelay(of url: String) async throws -> Duration {
            guard let components = URLComponents(string: url), let host = components.host, let user = components.user else {
                throw TestFailure("NOTIFY_TEST_REPLICA_DATABASE_URL is not postgres://user:password@host:port/database: \(url)")
            }
            let client = PostgresClient(
                configuration: .init(
                    host: host, port: components.port ?? 5432, username: user, password: components.password,
                    database: String(components.path.dropFirst()), tls: .disable),
                backgroundLogger: testLogger)
            return try await withRunning(client) { try await ServerInspection(client: client, logger: testLogger).recoveryApplyDelay() }
        }
    }
}

extension SecondIngest {
    /// A second ingest reading the changes feed and history from `replicaURL` as its standby.
    static func running(port: Int, replicaURL: String, _ body: (SecondIngest) async throws -> Void) async throws {
        try await running(port: port, environment: ["NOTIFY_REPLICA_DATABASE_URL": replicaURL], body)
    }

    func changes(of user: UserClient, after cursor: String?, limit: Int? = nil) async throws -> ChangePage {
        var items: [String] = []
        if let cursor { items.append("cursor=\(cursor)") }
        if let limit { items.append("limit=\(limit)") }
        let answer = try await StackClient.send(
            .GET, "\(baseURL)/v1/me/notifications/changes\(items.isEmpty ? "" : "?" + items.joined(separator: "&"))", bearer: user.token)
        guard answer.status == 200 else { throw TestFailure("GET changes from the second ingest answered \(answer.status): \(answer.text)") }
        return try answer.decode(ChangePage.self)
    }

    /// Every change after `cursor`, page by page; the changes and the last cursor.
    func allChanges(of user: UserClient, after cursor: String?) async throws -> (changes: [NotificationChange], cursor: String) {
        var cursor = cursor
        var all: [NotificationChange] = []
        while true {
            let page = try await changes(of: user, after: cursor)
            all += page.changes
            cursor = page.cursor
            if !page.hasMore { return (all, page.cursor) }
        }
    }

    /// The first page of history, up to 100.
    func history(of user: UserClient) async throws -> [NotificationView] {
        let answer = try await StackClient.send(.GET, "\(baseURL)/v1/me/notifications?limit=100", bearer: user.token)
        guard answer.status == 200 else { throw TestFailure("GET history from the second ingest answered \(answer.status): \(answer.text)") }
        return try answer.decode(UserClient.HistoryPage.self).notifications
    }
}
