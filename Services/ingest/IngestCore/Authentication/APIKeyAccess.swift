import NotifyModels

/// What an API key presented for an app may do.
enum APIKeyAccess: Sendable, Equatable {
    /// The app's own key (or the one a rotation replaced, during its overlap): everything.
    case full
    /// One of the app's scoped keys.
    case scoped(keyId: String, scope: APIKeyScope)

    func allows(_ needed: APIKeyScope) -> Bool {
        switch self {
        case .full: return true
        case .scoped(_, let scope): return scope.allows(needed)
        }
    }
}

extension APIKeyScope {
    /// "publish and change notifications", ... as a refusal says what a key may do.
    var inWords: String {
        switch self {
        case .publish: return "publish and change notifications"
        case .read: return "read notifications, delivery logs and settings"
        case .admin: return "administer the app"
        }
    }
}
