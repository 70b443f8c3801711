import Foundation

/// A back end the service polls for notifications (`PUT /v1/apps/{appId}/poll-sources/{name}`): every
/// `intervalSeconds` it GETs `url` (with `authorization` as the Authorization header) and publishes each item of the
/// answer, `{"notifications": [...]}` in the publish format, each with its `appNotificationId`.
public struct PollSourceRequest: Codable, Sendable, Equatable {
    /// An http or https URL.
    public var url: String?
    /// 1 to 86,400; default 60.
    public var intervalSeconds: Int?
    /// Sent as the Authorization header, e.g. "Bearer …"; never answered back.
    public var authorization: String?

    public init(url: String? = nil, intervalSeconds: Int? = nil, authorization: String? = nil) {
        self.url = url
        self.intervalSeconds = intervalSeconds
        self.authorization = authorization
    }

    /// The URL, interval and header, checked; the field named when one is wrong.
    public func validated() throws(ValidationError) -> (url: String, intervalSeconds: Int, authorization: String?) {
        guard let url else { throw .missing("url") }
        guard let parsed = URL(string: url), ["http", "https"].contains(parsed.scheme ?? ""), parsed.host != nil, url.utf8.count <= 2048 else {
            throw .invalid("url", "url must be an http or https URL of at most 2048 bytes")
        }
        let interval = intervalSeconds ?? 60
        guard (1...86_400).contains(interval) else { throw .invalid("intervalSeconds", "intervalSeconds must be between 1 and 86400") }
        if let authorization, authorization.isEmpty || authorization.utf8.count > 4096 || authorization.contains(where: \.isNewline) {
            throw .invalid("authorization", "authorization is one header value of 1 to 4096 bytes")
        }
        return (url, interval, authorization)
    }
}

/// A poll source as the app server sees it.
public struct PollSourceView: Codable, Sendable, Equatable {
    public var name: String
    public var url: String
    public var intervalSeconds: Int
    public var hasAuthorization: Bool
    public var createdAt: Date

    public init(name: String, url: String, intervalSeconds: Int, hasAuthorization: Bool, createdAt: Date) {
        self.name = name
        self.url = url
        self.intervalSeconds = intervalSeconds
        self.hasAuthorization = hasAuthorization
        self.createdAt = createdAt
    }
}
