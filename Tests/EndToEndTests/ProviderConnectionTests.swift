import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS
import NotifyModels
import NotifyTestSupport
import Testing

extension EndToEndTests {
    @Suite("Provider connections: the sandbox closes idle and half-closed connections as APNs does, push-dispatch loses nothing", .serialized)
    struct ProviderConnectionTests {
        /// Under the 10 s request timeout: a push that arrives within it waited for no timeout.
        private static let promptDelivery: TimeInterval = 8

        @Test("APNs closes idle connections with GOAWAY (IdleTimeout) while pushes keep coming: every push arrives, at once and on its first attempt")
        func idleConnectionsClosedWithGoAway() async throws {
            try await APNsConnectionControl.withIdleTimeout(seconds: 0.5) {
                let app = try await TestApp.create()
                let user = "user-\(uniqueSuffix())"
                let token = try await app.registerDevice(of: user)
                var published: [String: Date] = [:]
                // Pauses just under, around and well past the idle time: some pushes find the connection open, some
                // race its GOAWAY, some find it closed.
                for (round, pause) in [0.7, 0.45, 0.5, 1.2, 0.3, 0.55, 0.9, 0.0].enumerated() {
                    published[try await app.publishAccepted(.alert(to: user, title: "idle \(round)"))] = Date()
                    try await Task.sleep(for: .seconds(pause))
                }
                try await Self.expectDeliveredPromptlyOnFirstAttempt(published, at: token, app: app)

                // Idle now: every connection push-dispatch had is closed at both ends, none left half-open.
                let open = try await APNsConnectionControl.waitForOpenConnections(atMost: 0, timeout: .seconds(5))
                #expect(open == 0, "the sandbox still has \(open) APNs connections open after the idle time")
            }
        }

        @Test("APNs connections dropped with requests in flight, with GOAWAY and with a TCP reset: every push is sent again on a new connection and arrives on its first attempt", arguments: [true, false])
        func droppedConnectionsLoseNothing(goAway: Bool) async throws {
            let app = try await TestApp.create()
            let user = "user-\(uniqueSuffix())"
            let token = try await app.registerDevice(of: user)
            // A first push opens the connection.
            let first = try await app.publishAccepted(.alert(to: user, title: "before the drop"))
            #expect(try await Sandbox.missingNotifications([first], at: token).isEmpty)

            // The next pushes are held 3 s each by the sandbox, so the drop finds them in flight.
            let inFlight = 4
            try await APNsConnectionControl.delay(token: token, milliseconds: 3_000, times: inFlight)
            var published: [String: Date] = [:]
            for round in 0..<inFlight {
                published[try await app.publishAccepted(.alert(to: user, title: "in flight \(round)"))] = Date()
            }
            try await APNsConnectionControl.waitUntilFaultsTaken(token: token)
            let dropped = try await APNsConnectionControl.drop(goAway: goAway)
            #expect(dropped >= 1, "no APNs connection was open to drop")
            // More pushes while the connection is being replaced.
            for round in 0..<3 {
                published[try await app.publishAccepted(.alert(to: user, title: "after the drop \(round)"))] = Date()
            }
            try await Self.expectDeliveredPromptlyOnFirstAttempt(published, at: token, app: app)
        }

        @Test("a client that half-closes its TLS connection (close_notify, or a bare FIN) is closed by the sandbox at once, on the APNs port and the others'", arguments: [
            (ListenerUnderTest.apns, true), (.apns, false), (.providersHTTP2, true), (.providersHTTP2, false), (.providersHTTP1, true), (.providersHTTP1, false),
        ])
        func halfClosedConnectionIsClosed(listener: ListenerUnderTest, closeNotify: Bool) async throws {
            let seconds = try await HalfClosingClient.secondsUntilServerCloses(
                port: listener.port, applicationProtocols: listener.applicationProtocols, closeNotify: closeNotify, patience: .seconds(5))
            let closed = try #require(seconds, "the sandbox left the half-closed connection open for 5 s (CLOSE-WAIT)")
            #expect(closed < 2, "the sandbox took \(closed) s to close the half-closed connection")
        }

        @Test("a third-party HTTP/2 client (Python h2) held idle past the idle time is sent GOAWAY (NO_ERROR, its last stream, IdleTimeout) and closed; half-closed, it is closed at once",
            .enabled("needs the Python package h2 (h2==4.4.1) in NOTIFY_TEST_PYTHON, the venv deploy/local/test.sh fills with notify_pip_install") { await ThirdPartyClient.hasH2() })
        func thirdPartyClient() async throws {
            try await APNsConnectionControl.withIdleTimeout(seconds: 1) {
                let python = try #require(ProcessInfo.processInfo.environment["NOTIFY_TEST_PYTHON"])
                let apnsPort = ListenerUnderTest.apns.port
                let run = try await Scripts.runProgram(
                    python, ["\(Stack.root)/Tests/EndToEndTests/Python/apns_connection.py"],
                    environment: ["NOTIFY_APNS_PORT": String(apnsPort), "NOTIFY_CA_FILE": HalfClosingClient.caFile, "NOTIFY_IDLE_SECONDS": "1"],
                    timeout: .seconds(60))
                #expect(run.status == 0, "apns_connection.py: \(run.output)")
                let results = try JSONValue.parse(run.output)
                let idle = try #require(results["idle"])
                #expect(idle["goAway"] == .bool(true), "no GOAWAY: \(run.output)")
                #expect(idle["errorCode"]?.intValue == 0)
                #expect(idle["lastStreamId"]?.intValue == 1, "the GOAWAY's last stream is the request's")
                #expect(idle["reason"]?.stringValue == "IdleTimeout")
                #expect(idle["requestStatus"]?.intValue == 403, "the request without a provider token is answered 403")
                let afterGoAway = try #require(idle["closedSecondsAfterGoAway"]?.numberValue, "not closed after the GOAWAY: \(run.output)")
                #expect(afterGoAway < 2)
                for mode in ["closeNotify", "fin"] {
                    let closed = try #require(results[mode]?["closedAfterSeconds"]?.numberValue, "\(mode): the connection was not closed: \(run.output)")
                    #expect(closed < 2, "\(mode): closed after \(closed) s")
                }
            }
        }

        /// Every push arrived within `promptDelivery` of its publish, and the delivery log has it accepted on the first
        /// attempt (sent again by push-dispatch on a new connection, not retried through a retry queue).
        private static func expectDeliveredPromptlyOnFirstAttempt(_ published: [String: Date], at token: String, app: TestApp) async throws {
            let missing = try await Sandbox.missingNotifications(Set(published.keys), at: token, timeout: .seconds(20))
            #expect(missing.isEmpty, "lost: \(missing.sorted())")
            let deliveries = try await Sandbox.deliveries(to: token)
            for (id, publishedAt) in published where !missing.contains(id) {
                let firstArrival = deliveries.filter { $0.notificationId == id }.compactMap { delivery in
                    delivery.receivedAt.flatMap { try? Date($0, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) }
                }.min()
                let waited = try #require(firstArrival).timeIntervalSince(publishedAt)
                #expect(waited < promptDelivery, "\(id) arrived \(waited) s after its publish")
                let log = try await app.deliveryLog(of: id) { !$0.isEmpty }
                #expect(log.map(\.result) == ["accepted"], "\(id): \(log.map { "\($0.attempt) \($0.result) \($0.reason ?? "")" })")
            }
        }
    }
}

/// A listener of the sandbox and the ALPN a client offers it.
enum ListenerUnderTest: Sendable, CustomTestStringConvertible {
    case apns, providersHTTP2, providersHTTP1

    var port: Int {
        let url = self == .apns ? Stack.sandboxAPNsURL : Stack.sandboxProvidersURL
        return URLComponents(string: url)?.port ?? 443
    }

    var applicationProtocols: [String] {
        self == .providersHTTP1 ? ["http/1.1"] : ["h2"]
    }

    var testDescription: String {
        switch self {
        case .apns: "APNs (h2)"
        case .providersHTTP2: "FCM/WNS/Web Push (h2)"
        case .providersHTTP1: "FCM/WNS/Web Push (http/1.1)"
        }
    }
}

/// The sandbox's control API for its APNs connections: idle time, drops, and the delay faults that hold pushes.
enum APNsConnectionControl {
    private struct Settings: Codable {
        var idleTimeoutSeconds: Double
    }

    private struct State: Decodable {
        var open: Int
        var idleTimeoutSeconds: Double
    }

    private static func state() async throws -> State {
        let answer = try await StackClient.send(.GET, "\(Stack.sandboxURL)/apns/connections")
        guard answer.status == 200 else { throw TestFailure("GET /apns/connections answered \(answer.status): \(answer.text)") }
        return try answer.decode(State.self)
    }

    private static func setIdleTimeout(seconds: Double) async throws {
        let answer = try await StackClient.send(.PUT, "\(Stack.sandboxURL)/apns/connections", json: StackClient.encode(Settings(idleTimeoutSeconds: seconds)))
        guard answer.status == 200 else { throw TestFailure("PUT /apns/connections answered \(answer.status): \(answer.text)") }
    }

    /// Runs `body` with the APNs idle time set to `seconds`, and sets it back afterwards, whatever happened.
    static func withIdleTimeout(seconds: Double, _ body: () async throws -> Void) async throws {
        let previous = try await state().idleTimeoutSeconds
        try await setIdleTimeout(seconds: seconds)
        do {
            try await body()
        } catch {
            try await setIdleTimeout(seconds: previous)
            throw error
        }
        try await setIdleTimeout(seconds: previous)
    }

    /// Polls until at most `limit` APNs connections are open, or `timeout` passed; answers the last count.
    static func waitForOpenConnections(atMost limit: Int, timeout: Duration) async throws -> Int {
        let deadline = ContinuousClock.now + timeout
        while true {
            let open = try await state().open
            if open <= limit || ContinuousClock.now >= deadline { return open }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    /// `POST /apns/connections/drop`: answers how many connections were dropped.
    static func drop(goAway: Bool) async throws -> Int {
        let answer = try await StackClient.send(.POST, "\(Stack.sandboxURL)/apns/connections/drop", json: StackClient.encode(["goAway": goAway]))
        guard answer.status == 200 else { throw TestFailure("POST /apns/connections/drop answered \(answer.status): \(answer.text)") }
        return try #require(try answer.decode(JSONValue.self)["dropped"]?.intValue)
    }

    /// `POST /faults`: the next `times` pushes to `token` are answered (normally) only after `milliseconds`.
    static func delay(token: String, milliseconds: Int, times: Int) async throws {
        struct Fault: Encodable {
            var provider = "apns"
            var token: String
            var delayMilliseconds: Int
            var times: Int
        }
        let answer = try await StackClient.send(
            .POST, "\(Stack.sandboxURL)/faults", json: StackClient.encode(Fault(token: token, delayMilliseconds: milliseconds, times: times)))
        guard answer.status == 201 else { throw TestFailure("POST /faults answered \(answer.status): \(answer.text)") }
    }

    /// Waits until no fault for `token` is left: every push it was meant for has reached the sandbox.
    static func waitUntilFaultsTaken(token: String) async throws {
        struct Faults: Decodable {
            struct Fault: Decodable { var token: String }
            var faults: [Fault]
        }
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            let answer = try await StackClient.send(.GET, "\(Stack.sandboxURL)/faults")
            guard answer.status == 200 else { throw TestFailure("GET /faults answered \(answer.status): \(answer.text)") }
            if !(try answer.decode(Faults.self).faults.contains { $0.token == token }) { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw TestFailure("the delayed pushes did not reach the sandbox within 20 s")
    }
}

/// A TLS client that half-closes as soon as its handshake is done and measures how long the server takes to close.
enum HalfClosingClient {
    /// The CA certificate the sandbox wrote (deploy/local/services.sh keeps its state in $NOTIFY_STATE_DIR/sandbox).
    static var caFile: String {
        let stateDirectory = ProcessInfo.processInfo.environment["NOTIFY_STATE_DIR"] ?? "\(Stack.root)/.local/test"
        return "\(stateDirectory)/sandbox/ca.pem"
    }

    /// Connects with TLS, then closes the write side: with close_notify and FIN (`closeNotify`), or with a bare FIN
    /// beneath TLS. Answers the seconds until the server closed the connection, or nil if it did not within `patience`.
    static func secondsUntilServerCloses(
        port: Int, applicationProtocols: [String], closeNotify: Bool, patience: Duration
    ) async throws -> Double? {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.additionalTrustRoots = [.file(caFile)]
        tls.applicationProtocols = applicationProtocols
        let sslContext = try NIOSSLContext(configuration: tls)
        let eventLoop = MultiThreadedEventLoopGroup.singleton.next()
        let handshake = eventLoop.makePromise(of: Void.self)
        let channel = try await ClientBootstrap(group: eventLoop)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandlers([
                        RawHalfCloser(),
                        try NIOSSLClientHandler(context: sslContext, serverHostname: "localhost"),
                        HandshakeWaiter(handshake: handshake),
                    ])
                }
            }
            .connect(host: "127.0.0.1", port: port).get()
        try await handshake.futureResult.get()
        let started = ContinuousClock.now
        if closeNotify {
            try await channel.close(mode: .output)
        } else {
            try await channel.triggerUserOutboundEvent(RawHalfCloser.HalfClose()).get()
        }
        let closed = try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                try? await channel.closeFuture.get()
                return true
            }
            group.addTask {
                try await Task.sleep(for: patience)
                return false
            }
            let first = try await group.next() ?? false
            group.cancelAll()
            return first
        }
        let elapsed = ContinuousClock.now - started
        try? await channel.close()
        guard closed else { return nil }
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    /// Completes `handshake` once TLS is up; fails it if the connection closes first.
    private final class HandshakeWaiter: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        private let handshake: EventLoopPromise<Void>

        init(handshake: EventLoopPromise<Void>) {
            self.handshake = handshake
        }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if case TLSUserEvent.handshakeCompleted = event {
                handshake.succeed()
            }
            context.fireUserInboundEventTriggered(event)
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            // The server's HTTP/2 preface, or nothing: read and forgotten.
        }

        func channelInactive(context: ChannelHandlerContext) {
            handshake.fail(ChannelError.eof)
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            // An unclean end of TLS after our bare FIN is expected; the close is what is measured.
        }
    }

    /// Beneath TLS: on `HalfClose`, shuts down the socket's write side without a close_notify (a bare FIN).
    private final class RawHalfCloser: ChannelOutboundHandler {
        struct HalfClose: Sendable {}
        typealias OutboundIn = ByteBuffer

        func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
            guard event is HalfClose else {
                context.triggerUserOutboundEvent(event, promise: promise)
                return
            }
            context.close(mode: .output, promise: promise)
        }
    }
}

/// The Python HTTP/2 client the third-party test runs.
enum ThirdPartyClient {
    /// Whether NOTIFY_TEST_PYTHON can import h2.
    static func hasH2() async -> Bool {
        guard let python = ProcessInfo.processInfo.environment["NOTIFY_TEST_PYTHON"] else { return false }
        let run = try? await Scripts.runProgram(python, ["-c", "import h2"], timeout: .seconds(30))
        return run?.status == 0
    }
}
