import Foundation
import HTTPTypes
import Hummingbird
import Synchronization

/// Opaque OAuth 2.0 bearer tokens a token endpoint handed out, each for one subject until it expires.
/// Kept in memory only: after a restart clients get 401 and fetch a new token, as after a revocation.
final class AccessTokenIssuer: Sendable {
    /// What a presented bearer token turned out to be.
    enum Lookup {
        case valid(subject: String)
        case expired
        case unknown
    }

    private struct Grant {
        let subject: String
        let expiresAt: ContinuousClock.Instant
    }

    /// Above this many tokens, issuing one first forgets the expired ones.
    private static let pruneThreshold = 10_000

    /// Seconds a token is valid, as the token response's `expires_in` says.
    let lifetime: Int
    private let prefix: String
    private let grants = Mutex<[String: Grant]>([:])

    init(prefix: String, lifetime: Int) {
        self.prefix = prefix
        self.lifetime = lifetime
    }

    func issue(for subject: String) -> String {
        let token = prefix + Base64URL.random(byteCount: 32)
        let now = ContinuousClock.now
        grants.withLock { grants in
            if grants.count >= Self.pruneThreshold {
                grants = grants.filter { $0.value.expiresAt > now }
            }
            grants[token] = Grant(subject: subject, expiresAt: now + .seconds(lifetime))
        }
        return token
    }

    /// Looks up the token of an `Authorization: Bearer <token>` header (scheme case-insensitive).
    func lookup(authorization: String?) -> Lookup {
        guard let parts = authorization?.split(separator: " ", maxSplits: 1), parts.count == 2,
            parts[0].lowercased() == "bearer",
            let grant = grants.withLock({ $0[String(parts[1])] })
        else { return .unknown }
        return grant.expiresAt > .now ? .valid(subject: grant.subject) : .expired
    }
}

/// An OAuth 2.0 token endpoint error (RFC 6749 §5.2): `{"error", "error_description"}`.
struct OAuthError: Error {
    let status: HTTPResponse.Status
    let error: String
    let description: String

    init(_ error: String, _ description: String, status: HTTPResponse.Status = .badRequest) {
        self.status = status
        self.error = error
        self.description = description
    }

    var response: Response {
        OAuthTokenResponse.json(
            status,
            "{\"error\":\(JSONText.quoted(error)),\"error_description\":\(JSONText.quoted(description))}"
        )
    }
}

/// Successful token endpoint answers.
enum OAuthTokenResponse {
    /// `{"access_token", "expires_in", "token_type"}` with the token type spelled as the provider spells it.
    static func granted(_ token: String, expiresIn: Int, tokenType: String) -> Response {
        json(
            .ok,
            "{\"access_token\":\(JSONText.quoted(token)),\"expires_in\":\(expiresIn)"
                + ",\"token_type\":\(JSONText.quoted(tokenType))}"
        )
    }

    static func json(_ status: HTTPResponse.Status, _ body: String) -> Response {
        Response(
            status: status,
            headers: [.contentType: "application/json", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: body))
        )
    }
}
