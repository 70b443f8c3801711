import NIOCore
import Synchronization

/// Remembers the provider token each HTTP/2 connection last switched to, so a connection that
/// changes to a token with another `iat` within 20 minutes is answered TooManyProviderTokenUpdates.
final class ConnectionTokenTracker: Sendable {
    /// How long APNs wants a connection to keep one provider token.
    static let minimumTokenAge = Duration.seconds(20 * 60)

    private struct CurrentToken {
        let jwt: String
        let issuedAt: Int
        let since: ContinuousClock.Instant
    }

    private let connections = Mutex<[ObjectIdentifier: CurrentToken]>([:])

    /// Whether `token` may be used on `connection` now; if it may, it becomes the connection's token.
    func accept(_ token: ProviderToken, on connection: any Channel) -> Bool {
        let id = ObjectIdentifier(connection)
        let now = ContinuousClock.now
        let (accepted, firstUse) = connections.withLock { connections -> (Bool, Bool) in
            guard let current = connections[id] else {
                connections[id] = CurrentToken(jwt: token.jwt, issuedAt: token.issuedAt, since: now)
                return (true, true)
            }
            if current.jwt == token.jwt { return (true, false) }
            if current.issuedAt != token.issuedAt && now - current.since < Self.minimumTokenAge {
                return (false, false)
            }
            connections[id] = CurrentToken(jwt: token.jwt, issuedAt: token.issuedAt, since: now)
            return (true, false)
        }
        if firstUse {
            connection.closeFuture.whenComplete { _ in
                self.connections.withLock { $0[id] = nil }
            }
        }
        return accepted
    }
}
