import Foundation

/// What an app's scoped API key may do. The app's own key (made with the app, rotated by `POST …/api-key`) may do all.
public enum APIKeyScope: String, Codable, Sendable, CaseIterable {
    /// Deliver and modify notifications: publish, replace, delete and change their state, set external badges.
    case publish
    /// Read notifications, delivery logs, event sources and their members, webhook and poll-source settings and logs.
    case read
    /// Everything the app's own key may do: webhooks, poll sources, event sources and memberships, scoped keys.
    case admin

    /// Whether a key of this scope may do what `needed` names.
    public func allows(_ needed: APIKeyScope) -> Bool {
        self == .admin || self == needed
    }
}

/// A scoped API key to create (`POST /v1/apps/{appId}/api-keys`).
public struct APIKeyRequest: Codable, Sendable, Equatable {
    public var scope: APIKeyScope?
    /// What the key is for, as the listing shows it (1 to 200 bytes).
    public var name: String?

    public init(scope: APIKeyScope? = nil, name: String? = nil) {
        self.scope = scope
        self.name = name
    }

    /// The scope and name, checked; the field named when one is wrong.
    public func validated() throws(ValidationError) -> (scope: APIKeyScope, name: String) {
        guard let scope else { throw .missing("scope") }
        guard let name else { throw .missing("name") }
        guard !name.isEmpty, name.utf8.count <= 200, !name.contains(where: \.isNewline) else {
            throw .invalid("name", "name is 1 to 200 bytes on one line")
        }
        return (scope, name)
    }
}

/// A scoped API key as listed (`GET /v1/apps/{appId}/api-keys`): never its secret, except `apiKey` once, in the answer
/// to its creation.
public struct APIKeyView: Codable, Sendable, Equatable {
    public var keyId: String
    public var scope: APIKeyScope
    public var name: String
    public var createdAt: Date
    /// When a request last used it (recorded within 10 s of the use); nil: never.
    public var lastUsedAt: Date?
    /// When it was revoked; nil: it works.
    public var revokedAt: Date?
    /// The key, only in the answer that created it.
    public var apiKey: String?

    public init(keyId: String, scope: APIKeyScope, name: String, createdAt: Date, lastUsedAt: Date?, revokedAt: Date?, apiKey: String? = nil) {
        self.keyId = keyId
        self.scope = scope
        self.name = name
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
        self.revokedAt = revokedAt
        self.apiKey = apiKey
    }
}
