import AsyncHTTPClient
import NIOCore
import NIOSSL
import Synchronization

/// An HTTP client for the URLs the service calls on a tenant's behalf: each request's host is checked by the
/// `OutboundPolicy` and the connection goes to the address that was checked (AsyncHTTPClient's `dnsOverride`, so TLS
/// still verifies the certificate for the URL's host); redirects are never followed, since a redirect's target was
/// not checked. A refused URL throws `OutboundRefusal` before anything is sent.
///
/// A destination (host and checked address) gets up to `connectionsPerDestination` clients per partition, handed out in
/// turn: an HTTP/2 connection carries a limited number of concurrent streams, and a client waits for a free stream
/// rather than opening another connection, so a busy push service spreads its pushes over several connections. Requests
/// of different partitions (push-dispatch's: one per app) never share a connection: one app's requests that a push
/// service answers late hold only that app's streams, not another app's to the same host. A host's check is kept for
/// `checkLifetime`, then made again (a new address gets clients of its own); the destinations (each partition's apart)
/// unused the longest are retired beyond `maximumDestinations`, their clients closed a minute later (after any request
/// on them).
public final class OutboundHTTPClient: Sendable {
    private struct HostPort: Hashable {
        var host: String
        var port: Int
    }

    private struct Checked {
        var destination: OutboundDestination
        var until: ContinuousClock.Instant
    }

    /// The clients of one partition's requests to one destination.
    private struct SlotKey: Hashable {
        var destination: OutboundDestination
        var partition: String
    }

    private struct Slot {
        var clients: [HTTPClient] = []
        var next = 0
        var lastUsed: ContinuousClock.Instant
    }

    private struct State {
        var checked: [HostPort: Checked] = [:]
        var slots: [SlotKey: Slot] = [:]
        var retired: [(clients: [HTTPClient], at: ContinuousClock.Instant)] = []
    }

    public let policy: OutboundPolicy
    private let configuration: HTTPClient.Configuration
    private let connectionsPerDestination: Int
    private let checkLifetime: Duration
    private let maximumDestinations: Int
    private let state = Mutex(State())

    public init(
        policy: OutboundPolicy, trustedCAFile: String? = nil, connectTimeout: TimeAmount = .seconds(5), readTimeout: TimeAmount = .seconds(30),
        connectionsPerDestination: Int = 1, checkLifetime: Duration = .seconds(30), maximumDestinations: Int = 256
    ) {
        self.policy = policy
        self.connectionsPerDestination = max(connectionsPerDestination, 1)
        self.checkLifetime = checkLifetime
        self.maximumDestinations = max(maximumDestinations, 1)
        var tls = TLSConfiguration.makeClientConfiguration()
        if let trustedCAFile {
            tls.additionalTrustRoots = [.file(trustedCAFile)]
        }
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls, redirectConfiguration: .disallow)
        configuration.httpVersion = .automatic
        configuration.timeout = .init(connect: connectTimeout, read: readTimeout)
        self.configuration = configuration
    }

    /// Sends `request` to the address its URL's host was checked to, on a connection of `partition`'s, answering its
    /// response (a 3xx included: it is not followed). Throws `OutboundRefusal` when the policy refuses the URL, else what
    /// AsyncHTTPClient throws.
    public func execute(_ request: HTTPClientRequest, timeout: TimeAmount, partition: String = "") async throws -> HTTPClientResponse {
        let (host, port, _) = try OutboundPolicy.hostAndPort(of: request.url)
        let destination = try await destination(host: host, port: port)
        return try await client(for: SlotKey(destination: destination, partition: partition)).execute(request, timeout: timeout)
    }

    /// The checked destination of `host` at `port`, checked again once its check is older than `checkLifetime`.
    private func destination(host: String, port: Int) async throws(OutboundRefusal) -> OutboundDestination {
        let key = HostPort(host: host, port: port)
        let now = ContinuousClock.now
        if let cached = state.withLock({ $0.checked[key] }), cached.until > now { return cached.destination }
        let destination = try await policy.destination(host: host, port: port)
        state.withLock { state in
            state.checked[key] = Checked(destination: destination, until: now + checkLifetime)
            if state.checked.count > 4 * maximumDestinations { state.checked = state.checked.filter { $0.value.until > now } }
        }
        return destination
    }

    private func client(for key: SlotKey) -> HTTPClient {
        let now = ContinuousClock.now
        let (client, closing) = state.withLock { state -> (HTTPClient, [HTTPClient]) in
            var slot = state.slots[key] ?? Slot(lastUsed: now)
            if slot.clients.count < connectionsPerDestination && slot.next >= slot.clients.count {
                slot.clients.append(HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration(for: key.destination)))
            }
            let client = slot.clients[slot.next % slot.clients.count]
            slot.next = (slot.next + 1) % connectionsPerDestination
            slot.lastUsed = now
            state.slots[key] = slot
            if state.slots.count > maximumDestinations, let oldest = state.slots.min(by: { $0.value.lastUsed < $1.value.lastUsed }) {
                state.slots[oldest.key] = nil
                state.retired.append((oldest.value.clients, now))
            }
            let due = state.retired.filter { now - $0.at > .seconds(60) }
            state.retired.removeAll { now - $0.at > .seconds(60) }
            return (client, due.flatMap(\.clients))
        }
        for retired in closing { _ = retired.shutdown() }
        return client
    }

    /// The clients' configuration, connecting a host name to the address that was checked for it.
    private func configuration(for destination: OutboundDestination) -> HTTPClient.Configuration {
        var configuration = configuration
        if !destination.hostIsAddress {
            configuration.dnsOverride = [destination.host: destination.address.description]
        }
        return configuration
    }

    /// Closes every connection.
    public func shutdown() async {
        let all = state.withLock { state in
            defer {
                state.slots = [:]
                state.retired = []
            }
            return state.slots.values.flatMap(\.clients) + state.retired.flatMap(\.clients)
        }
        for client in all { try? await client.shutdown() }
    }
}
