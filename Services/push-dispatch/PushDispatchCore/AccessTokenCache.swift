import Synchronization

/// An OAuth 2.0 access token and when to stop using it.
struct AccessToken: Sendable {
    var value: String
    var refreshAt: ContinuousClock.Instant

    /// A token valid `expiresIn` seconds, used until five minutes before it expires (half its life if shorter).
    init(value: String, expiresIn: Int, now: ContinuousClock.Instant = .now) {
        self.value = value
        refreshAt = now + .seconds(max(expiresIn - 300, expiresIn / 2))
    }
}

/// Access tokens per credential, fetched once however many pushes ask at the same time.
final class AccessTokenCache: Sendable {
    private enum Entry {
        case ready(AccessToken)
        case pending(Task<AccessToken, any Error>)
    }

    private enum Lookup {
        case cached(String)
        case wait(Task<AccessToken, any Error>)
    }

    private let entries = Mutex<[String: Entry]>([:])

    /// The cached token for `key`, or the one `fetch` gets (shared with every caller that asks meanwhile).
    func token(for key: String, fetch: @escaping @Sendable () async throws -> AccessToken) async throws -> String {
        let lookup = entries.withLock { entries -> Lookup in
            switch entries[key] {
            case .ready(let token) where ContinuousClock.now < token.refreshAt:
                return .cached(token.value)
            case .pending(let task):
                return .wait(task)
            default:
                let task = Task { try await fetch() }
                entries[key] = .pending(task)
                return .wait(task)
            }
        }
        let task: Task<AccessToken, any Error>
        switch lookup {
        case .cached(let value): return value
        case .wait(let pending): task = pending
        }
        do {
            let token = try await task.value
            entries.withLock { entries in
                if case .pending(let pending) = entries[key], pending == task { entries[key] = .ready(token) }
            }
            return token.value
        } catch {
            entries.withLock { entries in
                if case .pending(let pending) = entries[key], pending == task { entries[key] = nil }
            }
            throw error
        }
    }

    /// Forgets `value` if it is still the cached token of `key` (the provider refused it).
    func invalidate(key: String, value: String) {
        entries.withLock { entries in
            if case .ready(let token) = entries[key], token.value == value { entries[key] = nil }
        }
    }
}
