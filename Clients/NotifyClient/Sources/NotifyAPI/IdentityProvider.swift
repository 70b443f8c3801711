import Foundation

/// The OpenID Connect provider an app's users sign in with (`PATCH /v1/apps/{appId}` `identityProvider`): ID tokens
/// it signs with RS256 or ES256 are user tokens of the app, beside the HS256 ones signed with its client signing key.
/// A device sends such a token with the header `X-Notify-App-Id` naming the app.
public struct IdentityProvider: Codable, Sendable, Equatable {
    /// The header naming the app of a user token that does not name it itself (an identity provider's token).
    public static let appIdHeader = "X-Notify-App-Id"
    /// The claim holding the user id unless the app names another.
    public static let defaultUserIdClaim = "sub"

    /// The issuer, an https URL: a token's `iss` must be exactly this. Unless `jwksUrl` is given, the signing keys are
    /// read from the `jwks_uri` of `<issuer>/.well-known/openid-configuration` (whose `issuer` must be this too).
    public var issuer: String
    /// The provider's key set (JWKS), an https URL read instead of the discovery document.
    public var jwksUrl: String?
    /// What a token's `aud` must contain: the app's client id at the provider.
    public var audience: String
    /// The claim holding the user id (a string); `sub` unless the app names another (say `email`, or Entra ID's `oid`).
    public var userIdClaim: String

    public init(issuer: String, jwksUrl: String? = nil, audience: String, userIdClaim: String = IdentityProvider.defaultUserIdClaim) {
        self.issuer = issuer
        self.jwksUrl = jwksUrl
        self.audience = audience
        self.userIdClaim = userIdClaim
    }

    private enum CodingKeys: String, CodingKey {
        case issuer, jwksUrl, audience, userIdClaim
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            issuer: try container.decode(String.self, forKey: .issuer), jwksUrl: try container.decodeIfPresent(String.self, forKey: .jwksUrl),
            audience: try container.decode(String.self, forKey: .audience),
            userIdClaim: try container.decodeIfPresent(String.self, forKey: .userIdClaim) ?? Self.defaultUserIdClaim)
    }

    /// Checks the setting as `PATCH /v1/apps/{appId}` receives it, naming the wrong field under `identityProvider.`.
    /// URLs must be https, except on the `host:port` addresses of `plainHTTPHosts` (an operator's allowance for local
    /// tests).
    public func validate(plainHTTPHosts: Set<String>) throws(ValidationError) {
        if !Self.isAcceptedURL(issuer, plainHTTPHosts: plainHTTPHosts) || URLComponents(string: issuer)?.query != nil {
            throw .invalid("identityProvider.issuer", "identityProvider.issuer must be an https URL of at most 2048 bytes, without query or fragment")
        }
        if let jwksUrl, !Self.isAcceptedURL(jwksUrl, plainHTTPHosts: plainHTTPHosts) {
            throw .invalid("identityProvider.jwksUrl", "identityProvider.jwksUrl must be an https URL of at most 2048 bytes, without fragment")
        }
        if audience.isEmpty || audience.utf8.count > 256 {
            throw .invalid("identityProvider.audience", "identityProvider.audience is 1 to 256 bytes: the app's client id at the provider")
        }
        if userIdClaim.isEmpty || userIdClaim.utf8.count > 100 {
            throw .invalid("identityProvider.userIdClaim", "identityProvider.userIdClaim is a claim name of 1 to 100 bytes")
        }
    }

    /// Whether the service fetches from `url`: https with a host and no credentials or fragment, or plain http to one of
    /// `plainHTTPHosts` (`host:port`, port 80 when the URL names none).
    public static func isAcceptedURL(_ url: String, plainHTTPHosts: Set<String>) -> Bool {
        guard url.utf8.count <= 2048, let components = URLComponents(string: url), let host = components.host, !host.isEmpty,
              components.user == nil, components.password == nil, components.fragment == nil
        else { return false }
        switch components.scheme?.lowercased() {
        case "https": return true
        case "http": return plainHTTPHosts.contains("\(host.lowercased()):\(components.port ?? 80)")
        default: return false
        }
    }
}
