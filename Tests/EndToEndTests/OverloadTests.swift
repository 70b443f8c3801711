import Foundation
#if canImport(Glibc)
import Glibc
#endif
import NotifyModels
import NotifyTestSupport
import Testing

extension EndToEndTests {
    @Suite("overload at the edge")
    struct OverloadTests {
        private static let environment = ProcessInfo.processInfo.environment
        /// Ports for this suite's second ingests (ReplicaTests use +7 and +8; +10 is the sandbox's).
        private static let ingestPort = (Int(environment["NOTIFY_INGEST_PORT"] ?? "") ?? 22080) + 9
        private static let streamsIngestPort = (Int(environment["NOTIFY_INGEST_PORT"] ?? "") ?? 22080) + 12

        @Test("while a pipeline queue is over NOTIFY_MAX_QUEUE_DEPTH, publishes are answered 503 pipeline_backlogged with Retry-After; once it drains they are taken, and nothing accepted is lost",
              .timeLimit(.minutes(3)))
        func backloggedPipelineRefuses() async throws {
            try await Services.restoringAll {
                let app = try await TestApp.create()
                let user = "user-\(uniqueSuffix())"
                let device = try await app.registerDevice(of: user)
                try await SecondIngest.running(port: Self.ingestPort, environment: ["NOTIFY_MAX_QUEUE_DEPTH": "20"]) { guarded in
                    let url = "\(guarded.baseURL)/v1/apps/\(app.appId)/notifications"
                    func publishToGuarded(_ title: String) async throws -> HTTPAnswer {
                        try await StackClient.send(
                            .POST, url, bearer: app.apiKey, json: StackClient.encode(NotificationRequest.alert(to: user, title: title)), deadline: .zero)
                    }
                    let before = try await publishToGuarded("before the backlog")
                    #expect(before.status == 202, "\(before.text)")
                    var accepted = [try before.decode(PublishedId.self).id]

                    try await Services.control("stop", ["storage"])
                    for index in 0..<30 { accepted.append(try await app.publishAccepted(.alert(to: user, title: "queued \(index)"))) }
                    var refused = try await publishToGuarded("during the backlog")
                    let deadline = ContinuousClock.now + .seconds(15)
                    while refused.status == 202, ContinuousClock.now < deadline {
                        accepted.append(try refused.decode(PublishedId.self).id)
                        try await Task.sleep(for: .milliseconds(300))
                        refused = try await publishToGuarded("during the backlog")
                    }
                    #expect(refused.status == 503 && refused.text.contains("pipeline_backlogged") && refused.text.contains("storage.commands"), "\(refused.text)")
                    #expect(refused.retryAfter.flatMap(Int.init).map { $0 >= 1 } == true, "with Retry-After")

                    try await Services.control("start", ["storage"])
                    var after = try await publishToGuarded("after the backlog")
                    let drained = ContinuousClock.now + .seconds(60)
                    while after.status == 503, ContinuousClock.now < drained {
                        try await Task.sleep(for: .milliseconds(500))
                        after = try await publishToGuarded("after the backlog")
                    }
                    #expect(after.status == 202, "taken again once the queue drained: \(after.text)")
                    if after.status == 202 { accepted.append(try after.decode(PublishedId.self).id) }
                    let missing = try await Sandbox.missingNotifications(Set(accepted.map { $0.lowercased() }), at: device, timeout: .seconds(60))
                    #expect(missing.isEmpty, "every accepted notification reaches the device")
                }
            }
        }

        @Test("ingest paces its publishes by storage's progress but never stops taking them: with storage stopped, bursts of concurrent publishes are still answered 202 within seconds; once storage is back every one reaches the device",
              .timeLimit(.minutes(3)))
        func pacingNeverStopsIntake() async throws {
            try await Services.restoringAll {
                let app = try await TestApp.create()
                let user = "user-\(uniqueSuffix())"
                let device = try await app.registerDevice(of: user)
                /// `count` publishes at once; answers their ids and how long the slowest took.
                func burst(_ count: Int, _ label: String) async throws -> (ids: [String], slowest: Duration) {
                    let start = ContinuousClock.now
                    let ids = try await withThrowingTaskGroup(of: String.self) { group in
                        for index in 0..<count {
                            group.addTask { try await app.publishAccepted(.alert(to: user, title: "\(label) \(index)")) }
                        }
                        return try await group.reduce(into: []) { $0.append($1) }
                    }
                    return (ids, ContinuousClock.now - start)
                }
                // A busy spell while storage runs leaves publishes announced and ahead of storage when it stops.
                var accepted = try await burst(64, "before").ids
                try await Services.control("stop", ["storage"])
                for round in 0..<4 {
                    let (ids, slowest) = try await burst(64, "while storage is stopped, round \(round)")
                    accepted += ids
                    #expect(slowest < .seconds(10), "round \(round): 64 publishes answered in \(slowest); pacing waits at most 1 s, then lets the broker keep them")
                }
                try await Services.control("start", ["storage"])
                accepted += try await burst(64, "after").ids
                let missing = try await Sandbox.missingNotifications(Set(accepted.map { $0.lowercased() }), at: device, timeout: .seconds(60))
                #expect(missing.isEmpty, "every accepted notification reaches the device: \(missing.count) of \(accepted.count) missing")
            }
        }

        @Test("a user holds at most NOTIFY_MAX_STREAMS_PER_USER live streams on an instance: one more is answered 429 too_many_streams; closing one frees its place at once",
              .timeLimit(.minutes(2)))
        func streamsPerUserAreBounded() async throws {
            let app = try await TestApp.create()
            let token = try await app.userToken("user-\(uniqueSuffix())")
            try await SecondIngest.running(port: Self.streamsIngestPort, environment: ["NOTIFY_MAX_STREAMS_PER_USER": "2"]) { ingest in
                let first = try await LiveStream.open(token: token, ingestURL: ingest.baseURL)
                let second = try await LiveStream.open(token: token, ingestURL: ingest.baseURL)
                let third = try await StackClient.send(.GET, "\(ingest.baseURL)/v1/me/stream", bearer: token, deadline: .zero)
                #expect(third.status == 429 && third.text.contains("too_many_streams"), "\(third.text)")
                await first.close()
                var reopened: LiveStream?
                // The server learns that a client left when its connection closes, not at the stream's next keep-alive
                // (15 s apart), which the deadline stays below.
                let deadline = ContinuousClock.now + .seconds(10)
                while reopened == nil, ContinuousClock.now < deadline {
                    reopened = try? await LiveStream.open(token: token, ingestURL: ingest.baseURL)
                    if reopened == nil { try await Task.sleep(for: .seconds(1)) }
                }
                #expect(reopened != nil, "a stream opens again once one closed, before its next keep-alive")
                await second.close()
                await reopened?.close()
            }
        }

        @Test("an instance serves at most NOTIFY_MAX_CONNECTIONS connections at once: one more waits, and is served when one closes")
        func connectionsAreBounded() async throws {
            try await SecondIngest.running(port: Self.streamsIngestPort + 1, environment: ["NOTIFY_MAX_CONNECTIONS": "2"]) { _ in
                let port = Self.streamsIngestPort + 1
                // Connections are counted as accepted, and one wake-up may accept a few at once (the readiness check's pooled
                // connection counts too): open them until one is not served, then close the others.
                var held: [RawConnection] = []
                var waiting: RawConnection?
                while waiting == nil, held.count < 6 {
                    let connection = try RawConnection(port: port)
                    if connection.get("/health", timeout: 2)?.hasPrefix("HTTP/1.1 200") == true {
                        held.append(connection)
                    } else {
                        waiting = connection
                    }
                }
                let unserved = try #require(waiting, "\(held.count) connections were all served with a limit of 2")
                #expect(held.count <= 5)
                held.removeAll()
                #expect(unserved.receive(timeout: 10)?.hasPrefix("HTTP/1.1 200") == true, "served once the others closed")
            }
        }

        private struct PublishedId: Decodable {
            var id: String
        }
    }
}

/// A plain TCP connection to a loopback port, blocking, for tests that count connections.
final class RawConnection {
    private let descriptor: Int32

    init(port: Int) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard descriptor >= 0, connected == 0 else { throw TestFailure("cannot connect to 127.0.0.1:\(port)") }
    }

    /// Sends a GET of `path` and answers the first bytes of the answer, or nil when none came within `timeout` seconds.
    func get(_ path: String, timeout seconds: Int) -> String? {
        sendGet(path)
        return receive(timeout: seconds)
    }

    func sendGet(_ path: String) {
        let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, 0) }
    }

    /// The first bytes that arrive within `timeout` seconds, or nil.
    func receive(timeout seconds: Int) -> String? {
        var limit = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var buffer = [UInt8](repeating: 0, count: 512)
        let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        return count > 0 ? String(decoding: buffer.prefix(count), as: UTF8.self) : nil
    }

    deinit { close(descriptor) }
}
