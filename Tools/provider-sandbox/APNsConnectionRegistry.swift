import NIOCore
import Synchronization

/// How the APNs listener treats its connections, and the connections open now: the idle time after which a
/// connection without requests is sent GOAWAY and closed (set on the command line, changed through the control
/// API), and the drops the control API asks for.
final class APNsConnectionRegistry: Sendable {
    /// How a dropped connection ends.
    enum Drop: Sendable {
        /// GOAWAY (NO_ERROR, the last stream taken, reason "Shutdown"), then the connection closes at once: requests
        /// still open get no answer.
        case goAway
        /// A TCP reset: no GOAWAY, no TLS close_notify.
        case reset
    }

    private struct State {
        var idleTimeout: TimeAmount
        var connections: [ObjectIdentifier: any Channel] = [:]
    }

    private let state: Mutex<State>

    init(idleTimeout: TimeAmount) {
        state = Mutex(State(idleTimeout: idleTimeout))
    }

    /// How long a connection may go without a request before it is closed; a change applies to every connection
    /// from its next idle period, and at once to those idle now.
    var idleTimeout: TimeAmount {
        state.withLock { $0.idleTimeout }
    }

    /// Sets the idle time and tells every open connection, so the idle ones restart their wait with it.
    func setIdleTimeout(_ timeout: TimeAmount) {
        let open = state.withLock { state in
            state.idleTimeout = timeout
            return Array(state.connections.values)
        }
        for channel in open {
            channel.pipeline.fireUserInboundEventTriggered(IdleTimeoutChanged())
        }
    }

    var openConnections: Int {
        state.withLock { $0.connections.count }
    }

    /// Remembers `channel` until it closes.
    func add(_ channel: any Channel) {
        let id = ObjectIdentifier(channel)
        state.withLock { $0.connections[id] = channel }
        channel.closeFuture.whenComplete { _ in
            self.state.withLock { _ = $0.connections.removeValue(forKey: id) }
        }
    }

    /// Drops every open connection as `drop` says; answers how many there were.
    func dropAll(_ drop: Drop) -> Int {
        let open = state.withLock { Array($0.connections.values) }
        for channel in open {
            channel.pipeline.fireUserInboundEventTriggered(DropConnection(drop: drop))
        }
        return open.count
    }
}

/// Tells an `APNsServerConnection` to end now, as `drop` says.
struct DropConnection: Sendable {
    let drop: APNsConnectionRegistry.Drop
}

/// Tells an `APNsServerConnection` that the idle time changed.
struct IdleTimeoutChanged: Sendable {}
